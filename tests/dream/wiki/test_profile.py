"""A person page's cited profile (``dream.wiki.profile``): built from the page's claims, citing
only turns that name each thing, deterministic, kept across rollover and incremental runs."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from engine_fixtures import write_session
from read_fixtures import S2, build_store, write_page

from dream.engines import load_engine
from dream.records import Evidence, Fact
from dream.runner import RunOptions, run_dream
from dream.wiki import rollover
from dream.wiki.cited_names import turn_keys
from dream.wiki.profile import CITES, PROFILE
from dream.wiki.subject_page import WikiPage
from dream.wiki.subjects import Subject
from memoryfs.index.index_md import write_indexes
from memoryfs.pages.claims import extract_claims
from memoryfs.pages.page import parse_page
from memoryfs.read.recall import recall
from memoryfs.store.store import Store
from memoryfs.validate.rules import validate_store

ARTS = "Arts, crafts and music (hobbies, activities)"
OUTDOORS = "Outdoors, nature and travel (trips, places)"
_THING_RE = re.compile(r"\s*([^,\[\]]+?)\s*((?:\[cite:\d+\])+)")


class _Log:
    """A page fed facts with the turns they come from: ``keys_of`` answers from here."""

    def __init__(self, speakers: set[str] | None = None) -> None:
        subject = Subject("mel", "Melanie", "person", "knowledge/people/mel.md")
        self.page = WikiPage(subject, None, speakers if speakers is not None else {"Melanie"})
        self.turns: dict[str, tuple[str, str]] = {}
        self.page.keys_of = self.keys_of
        self.n = 0

    def keys_of(self, ref: str) -> tuple[str, frozenset[str]] | None:
        said = self.turns.get(ref)
        return (said[0], turn_keys(said[1])) if said is not None else None

    def say(self, day: str, claim: str, turn: str, speaker: str = "Melanie", slot: str = "") -> str:
        self.n += 1
        ev = Evidence(f"{day}-s", self.n, f"{self.n:08x}", day)
        self.turns[ev.ref] = (speaker, turn)
        self.page.add(Fact("Melanie", "person", "fact", slot, claim, (ev,), day))
        return ev.ref


def _profile(page: WikiPage) -> dict[str, dict[str, list[str]]]:
    """facet -> thing -> the refs it cites, read back from the rendered page."""
    text = page.render()
    meta = parse_page(text, "knowledge/people/mel.md")
    refs = {s.id: s.ref for s in meta.sources}
    body = page.outline.render()
    out: dict[str, dict[str, list[str]]] = {}
    if f"## {PROFILE}\n" not in body:
        return out
    section = body.split(f"## {PROFILE}\n", 1)[1].split("\n## ", 1)[0]
    for line in section.strip().splitlines():
        head, rest = line[2:].split(": ", 1)
        out[head] = {
            m.group(1): [refs[int(n)] for n in re.findall(r"\d+", m.group(2))]
            for m in _THING_RE.finditer(rest)
        }
    return out


def test_profile_bullets_are_built_from_claims_and_cite_turns_that_name_the_thing() -> None:
    log = _Log()
    a = log.say("2023-05-08", "Melanie painted a lake sunrise.", "I painted a lake sunrise!")
    b = log.say("2023-06-01", "Melanie signed up for a pottery class.", "I signed up for pottery.")
    # the question part names painting; the cited answer does not: no citation for it
    log.say(
        "2023-06-01",
        "Does Melanie like painting animals? Melanie: It's peaceful.",
        "It's peaceful.",
    )
    c = log.say("2023-07-03", "Melanie's pottery bowl came out great.", "My pottery bowl is done")
    d = log.say("2023-07-03", "Melanie went camping with the kids.", "We went camping!")
    profile = _profile(log.page)
    arts = profile[ARTS]
    assert arts["pottery"] == [b, c] and arts["painted"] == [a]
    assert arts["bowl"] == [c]
    assert profile[OUTDOORS]["camping"] == [d]
    body = log.page.outline.render()
    assert body.index(f"## {PROFILE}") < body.index("## 2023-05-08")  # the first section
    # every thing's word is in every turn it cites
    for things in profile.values():
        for thing, refs in things.items():
            for ref in refs:
                assert thing.rstrip("s")[:4] in log.turns[ref][1].lower()


def test_a_profile_cites_the_persons_own_words_and_spans_sessions() -> None:
    log = _Log()
    log.say("2023-05-08", "Melanie and Caroline talked about pottery.", "Pottery?", "Caroline")
    log.say("2023-05-09", "Melanie loves pottery.", "Pottery?", "Caroline")
    assert _profile(log.page) == {}  # Caroline said it: not Melanie's evidence
    log.say("2023-05-10", "Melanie made a pottery vase.", "I made a pottery vase")
    assert _profile(log.page) == {}  # one session of Melanie's own words: no aggregate yet
    log.say("2023-06-10", "Melanie made a pottery mug.", "Another pottery piece: a mug")
    assert list(_profile(log.page)[ARTS]) == ["pottery", "vase"]


def test_citations_per_thing_are_spread_over_sessions_first_and_latest() -> None:
    log = _Log()
    words = [hashlib.sha256(str(d).encode()).hexdigest()[:12] for d in range(10)]  # not merged
    refs = [
        log.say(f"2023-05-{d + 1:02d}", f"Melanie painted {w}.", f"I painted {w}")
        for d, w in enumerate(words)
    ]
    cited = _profile(log.page)[ARTS]["painted"]
    assert len(cited) == CITES and cited[0] == refs[0] and cited[-1] == refs[-1]


def test_the_profile_is_deterministic_and_unchanged_pages_keep_their_bytes() -> None:
    def build() -> str:
        log = _Log()
        for d in range(1, 6):
            log.say(f"2023-05-{d:02d}", f"Melanie went hiking on trail {d}.", f"hiking trail {d}")
            log.say(f"2023-05-{d:02d}", f"Melanie painted tree {d}.", f"I painted tree {d}")
        return log.page.render()

    first = build()
    assert first == build()
    again = WikiPage(Subject("mel", "Melanie", "person", "knowledge/people/mel.md"), first, set())
    assert again.render() == first  # nothing changed: the profile is not rewritten


def test_a_superseded_claims_thing_leaves_the_profile() -> None:
    log = _Log()
    log.say("2023-05-01", "Melanie works as a pottery teacher.", "I teach pottery", slot="role")
    log.say("2023-06-02", "Melanie loves painting.", "Love painting")
    assert list(_profile(log.page)[ARTS]) == ["pottery", "painting"]  # a tie: first said first
    log.say("2023-07-01", "Melanie works as a nurse.", "I'm a nurse now", slot="role")
    assert "pottery teacher" in log.page.outline.render().split("## History")[1]
    assert ARTS not in _profile(log.page)  # painting is left, in one session: no aggregate
    log.say("2023-07-02", "Melanie's painting is of a horse.", "My painting: a horse")
    assert list(_profile(log.page)[ARTS]) == ["painting"]


def test_a_rolled_claims_things_stay_on_the_profile_with_their_sources() -> None:
    log = _Log()
    early = log.say("2023-01-01", "Melanie went swimming in the lake.", "swimming in the lake!")
    log.say("2023-01-02", "Melanie swims every week.", "I swim every week")
    for i in range(rollover.ROLL_AT + 10):
        day = f"2023-{2 + i // 28:02d}-{i % 28 + 1:02d}"
        word = hashlib.sha256(str(i).encode()).hexdigest()[:16]  # distinct, never merged
        log.say(day, f"Melanie wrote {word} down.", f"note {word}")
    archives: dict[str, WikiPage] = {}

    def archive_of(day: str) -> WikiPage:
        subject = Subject(f"mel-archive-{day}", "Melanie", "person", f"x/mel-archive-{day}.md")
        return archives.setdefault(day, WikiPage(subject, None, set()))

    while rollover.needs_roll(log.page):
        log.page.refresh_profile()
        assert rollover.roll(log.page, archive_of)
    assert archives and not any("swim" in e.claim.text for e in log.page.current_entries())
    profile = _profile(log.page)
    swim = profile["Sports, exercise and fitness (hobbies, activities)"]["swimming"]
    assert swim[0] == early  # carried: its claim is archived, its source stays on the page
    for a in archives.values():
        assert PROFILE not in a.outline.render()  # one profile per family, on the page
    # a later run over the stored page keeps the carried citation
    text = log.page.render()
    later = WikiPage(log.page.subject, text, {"Melanie"})
    later.keys_of = log.keys_of
    later.add(
        Fact(
            "Melanie",
            "person",
            "fact",
            "",
            "Melanie went swimming again.",
            (Evidence("2023-09-01-s", 999, "x", "2023-09-01"),),
            "2023-09-01",
        )
    )
    log.turns["sessions/transcripts/2023-09-01-s.md#t999"] = ("Melanie", "Swimming again!")
    swim = _profile(later)["Sports, exercise and fitness (hobbies, activities)"]["swimming"]
    assert swim[0] == early and swim[-1] == "sessions/transcripts/2023-09-01-s.md#t999"


def _dream(store: Store) -> None:
    """A real run: the gates (validation, semantic verification) pass or nothing commits."""
    result = run_dream(store, load_engine(), RunOptions(allow_unapproved=True))
    assert result.status == "committed", result.problems


@pytest.mark.parametrize("user", ["dana", "user"])  # the user's name, or the "user" label
def test_a_store_run_writes_a_valid_profile_and_a_new_session_adds_to_it(
    tmp_store: Store, user: str
) -> None:
    talk = [
        ("2026-01-05", "I'm Dana. I spent the weekend painting by the lake."),
        ("2026-02-02", "Dana here: my painting class starts today, and I went hiking."),
    ]
    for day, text in talk:
        write_session(tmp_store, f"{day}-a", f"{day}T09:00", [(user, text), ("assistant", "Nice")])
    _dream(tmp_store)
    rel = "knowledge/people/dana.md"
    text = (tmp_store.memory / rel).read_text(encoding="utf-8")
    assert f"## {PROFILE}" in text, text
    line = next(ln for ln in text.splitlines() if ln.startswith(f"- {ARTS}"))
    page = parse_page(text, rel)
    refs = {s.id: s.ref for s in page.sources}
    cited = [refs[int(n)] for n in re.findall(r"\[cite:(\d+)\]", line)]
    assert cited == [
        "sessions/transcripts/2026-01-05-a.md#t1",
        "sessions/transcripts/2026-02-02-a.md#t1",
    ]
    assert any(c.section == PROFILE for c in extract_claims(page))
    assert validate_store(tmp_store) == []
    write_session(
        tmp_store,
        "2026-03-02-a",
        "2026-03-02T09:00",
        [(user, "Dana again. Went swimming today, then more painting."), ("assistant", "Good")],
    )
    _dream(tmp_store)
    text = (tmp_store.memory / rel).read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if ln.startswith(f"- {ARTS}"))
    assert len(re.findall(r"\[cite:\d+\]", line)) == 3
    assert "swimming [cite:" in text
    assert validate_store(tmp_store) == []


def test_a_profile_citation_whose_source_is_gone_is_dropped_not_carried() -> None:
    text = (
        "---\nid: mel\ntitle: Melanie\ntype: person\nupdated: 2023-05-02\nsources:\n"
        "- id: 1\n  ref: sessions/transcripts/2023-05-01-s.md#t1\n  at: 2023-05-01\n  hash: a\n"
        "---\n# Melanie\n\n## Profile\n\n"
        f"- {ARTS}: pottery [cite:1][cite:99]\n"
    )
    page = WikiPage(Subject("mel", "Melanie", "person", "knowledge/people/mel.md"), text, set())
    page.keys_of = {
        "sessions/transcripts/2023-06-01-s.md#t2": ("Melanie", turn_keys("More pottery"))
    }.get
    ev = Evidence("2023-06-01-s", 2, "b", "2023-06-01")
    page.add(Fact("Melanie", "person", "fact", "", "Melanie did pottery.", (ev,), "2023-06-01"))
    assert _profile(page)[ARTS]["pottery"] == [
        "sessions/transcripts/2023-05-01-s.md#t1",  # carried: no claim of the page cites it
        "sessions/transcripts/2023-06-01-s.md#t2",
    ]


def test_recall_reads_a_profile_line_as_one_undated_aggregate_with_all_its_citations(
    tmp_path: Path,
) -> None:
    store = build_store(tmp_path / "store")
    rel = "knowledge/people/melanie.md"
    page = parse_page((store.memory / rel).read_text(encoding="utf-8"), rel)
    sports = "Sports, exercise and fitness (hobbies, activities)"
    body = page.body.replace(
        "# Melanie\n\n",
        f"# Melanie\n\n## Profile\n\n- {sports}: race [cite:1], running [cite:2]\n\n",
    )
    write_page(store, rel, dict(page.meta), body)
    write_indexes(store)
    store.commit("a profile")
    r = recall(store, "What activities does Melanie do?", 400)
    (item,) = [i for i in r.items if i.kind == "profile"]
    assert item.text == f"{sports}: race, running"  # no gap left where the citations were
    assert item.citations == (
        f"sessions/transcripts/{S2}.md#t1",
        f"sessions/transcripts/{S2}.md#t3",
    )
    line = next(ln for ln in r.text.splitlines() if sports in ln)
    assert line == f"{sports}: race, running [melanie cites s02#t1,t3]"  # no date
    assert not any(i.kind == "summary" and i.path == rel for i in r.items)  # the head is not
    assert "runner and potter" not in r.text
    lines = r.text.splitlines()
    at = lines.index(line)
    assert at + 1 == len(lines) or not lines[at + 1].startswith("  ↳")  # its turns not followed


def test_a_month_name_is_never_a_thing_of_the_profile() -> None:
    log = _Log()
    for i, day in enumerate(("2026-03-02", "2026-03-09", "2026-03-16")):
        log.say(
            day,
            f"On {i + 1} March 2026 Melanie went to a protest.",
            "I went to a protest in March.",
        )
    things = _profile(log.page)
    assert things and not any("march" in t.lower() for facet in things.values() for t in facet)
    assert any("protest" in t for facet in things.values() for t in facet)
