"""Contradictions across pages (DV202): one person, one slot, two current values.

The gate tests write pages by hand over real transcripts and call ``verify_stage``; the
end-to-end test lets a command agent write the clashing claim and checks that the run
leaves it out; the engine tests run the embedded engine twice and check that Dream's own
output supersedes the older copies instead of tripping DV202.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from engine_fixtures import write_session

from dream.engines import load_engine
from dream.engines.command import CommandEngine, CommandSettings
from dream.gates import crosspage
from dream.gates.slots import opening_name, slot_of
from dream.gates.verification import verify_stage
from dream.landing.staging import Change
from dream.runner import RunOptions, run_dream
from dream.skills import approve
from dream.wiki.subject_page import Retired, WikiPage
from dream.wiki.subjects import Subject
from memoryfs.ingest import ingest
from memoryfs.pages.claims import extract_claims
from memoryfs.pages.page import parse_page
from memoryfs.pages.transcript import Transcript, Turn, render_transcript
from memoryfs.store.hashing import turn_hash
from memoryfs.store.store import Store, init_store

OLD = ("2026-01-05-jonas", "Jonas Weber lives in Hamburg with his partner.")
NEW = ("2026-03-02-jonas", "Jonas lives in Berlin now, JW said so himself.")
JONAS = "memory/knowledge/people/jonas-weber.md"
BERLIN = "memory/knowledge/places/berlin.md"


def _transcript(tmp: Path, sid: str, text: str) -> Path:
    day = sid[:10]
    t = Transcript(
        id=sid, started=f"{day}T09:00", participants=("dana", "atlas"),
        scope={"user": "dana", "assistant": "atlas"},
        turns=(Turn(n=1, speaker="user", ts=f"{day}T09:00", text=text),),
    )  # fmt: skip
    path = tmp / f"{sid}.md"
    path.write_text(render_transcript(t), encoding="utf-8")
    return path


def _page(pid: str, title: str, kind: str, body: str, aliases: tuple[str, ...] = ()) -> str:
    """A page citing OLD as [cite:1] and NEW as [cite:2]."""
    sources = "".join(
        f"  - id: {n}\n    ref: sessions/transcripts/{sid}.md#t1\n"
        f"    at: '{sid[:10]}'\n    hash: {turn_hash(text)}\n"
        for n, (sid, text) in enumerate((OLD, NEW), 1)
    )
    listed = "".join(f"  - {a}\n" for a in aliases)
    head = f"---\nid: {pid}\ntitle: {title}\ntype: {kind}\nupdated: '2026-03-02'\n"
    head += f"aliases:\n{listed}" if aliases else ""
    return f"{head}sources:\n{sources}---\n# {title}\n\n{body}\n"


def _write(store: Store, rel: str, text: str) -> None:
    path = store.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """Jonas Weber (alias JW) lives in Hamburg on his page, in the base commit."""
    s = init_store(tmp_path / "store", "dana", "atlas")
    ingest(s, [_transcript(tmp_path, *OLD), _transcript(tmp_path, *NEW)])
    jonas = _page(
        "jonas-weber", "Jonas Weber", "person",
        "## 2026-01-05\n\n- Jonas Weber lives in Hamburg with his partner. [cite:1]", ("JW",),
    )  # fmt: skip
    _write(s, JONAS, jonas)
    s.commit("Jonas's page", [JONAS])
    return s


def _verify(store: Store, *changed: tuple[str, str]) -> list[str]:
    base = store.head()
    for rel, text in changed:
        _write(store, rel, text)
    changes = [Change("M" if _in_base(store, rel) else "A", rel) for rel, _ in changed]
    report = verify_stage(store, store.root, base, changes)
    return [p.format() for p in report.problems if p.code == "DV202"]  # the others: not here


def _in_base(store: Store, rel: str) -> bool:
    return bool(store.repo.git.ls_tree("HEAD", rel))


def _at(store: Store, rel: str, words: str) -> str:
    """``rel:N`` of the line of ``rel`` holding ``words``."""
    lines = (store.root / rel).read_text(encoding="utf-8").split("\n")
    return f"{rel}:{next(i for i, line in enumerate(lines, 1) if words in line)}"


def _berlin(claim: str) -> tuple[str, str]:
    return BERLIN, _page("berlin", "Berlin", "place", f"## 2026-03-02\n\n- {claim} [cite:2]")


@pytest.mark.parametrize(
    "claim",
    [
        "Jonas lives in Berlin now.",  # first name
        "Jonas Weber lives in Berlin now.",  # full name
        "JW lives in Berlin now.",  # alias
        "[[jonas-weber|Jonas]] lives in Berlin now.",  # a link to his page
        "2026-03-02: Jonas is based in Berlin now.",  # a leading date, another verb
    ],
)
def test_a_claim_on_another_page_contradicts_whatever_the_name(store: Store, claim: str) -> None:
    problems = _verify(store, _berlin(claim))
    assert len(problems) == 1, problems
    p = problems[0]
    here, there = _at(store, BERLIN, "Berlin now"), _at(store, JONAS, "in Hamburg")
    assert p.startswith(f"{here}: DV202 contradicts {there} about 'Jonas Weber'")
    assert "slot city: 'berlin' vs 'hamburg'" in p


@pytest.mark.parametrize("perl", [True, False])
def test_git_greps_alike_with_perl_or_extended_regexes(
    store: Store, perl: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git without Perl regexes answers the same (extended ones, slower)."""
    monkeypatch.setattr(crosspage._Grep, "perl", perl)
    note = "memory/notes/jonas-weber/jonas-weber-2026-01-05-lives-hamburg.md"
    old = "- 2026-01-05: He lives in Hamburg. [cite:1]"
    _write(store, note, _page("jonas-weber-2026-01-05-lives-hamburg", "Hamburg", "note", old))
    store.commit("a note on main", [note])
    problems = _verify(store, _berlin("Jonas lives in Berlin now."))
    assert len(problems) == 1 and f"contradicts {JONAS}:" in problems[0], problems
    jonas = (store.root / JONAS).read_text().replace("in Hamburg", "in Berlin")
    problems = _verify(store, (JONAS, jonas))  # the note is the older claim now
    assert len(problems) == 1 and f"contradicts {_at(store, note, 'Hamburg. [')}" in problems[0]


def test_a_pronoun_in_the_persons_own_note_is_the_person(store: Store) -> None:
    note = "memory/notes/jonas-weber/jonas-weber-2026-03-02-lives-berlin.md"
    text = _page(
        "jonas-weber-2026-03-02-lives-berlin",
        "Berlin",
        "note",
        "- He lives in Berlin now. [cite:2]",
    )
    problems = _verify(store, (note, text))
    assert [p.split(" contradicts ")[0] for p in problems] == [f"{_at(store, note, 'He ')}: DV202"]


def test_a_pronoun_away_from_the_persons_pages_is_nobody(store: Store) -> None:
    assert _verify(store, _berlin("He lives in Berlin now.")) == []


def test_the_same_value_in_other_words_is_no_contradiction(store: Store) -> None:
    assert _verify(store, _berlin("Jonas is based in Hamburg, Germany.")) == []
    assert _verify(store, _berlin("JW lives in the Hamburg area and commutes by train.")) == []


def test_a_superseded_older_claim_is_no_contradiction(store: Store) -> None:
    jonas = _page(
        "jonas-weber", "Jonas Weber", "person",
        "## 2026-03-02\n\n- Jonas lives in Berlin now. [cite:2]\n\n## History\n\n"
        "- Jonas Weber lives in Hamburg with his partner. [cite:1] (superseded on 2026-03-02)",
    )  # fmt: skip
    assert _verify(store, (JONAS, jonas), _berlin("Jonas lives in Berlin now.")) == []


def test_a_first_name_two_people_share_names_nobody(store: Store) -> None:
    other = _page("jonas-schmidt", "Jonas Schmidt", "person", "## 2026-01-05\n\nA colleague.")
    _write(store, "memory/knowledge/people/jonas-schmidt.md", other)
    store.commit("another Jonas", ["memory/knowledge/people/jonas-schmidt.md"])
    assert _verify(store, _berlin("Jonas lives in Berlin now.")) == []
    problems = _verify(store, _berlin("Jonas Weber lives in Berlin now."))  # unambiguous
    assert len(problems) == 1 and "DV202" in problems[0]


def test_a_claim_the_base_already_held_is_not_checked_again(store: Store) -> None:
    _write(store, *_berlin("Jonas lives in Berlin now."))
    store.commit("both on main already (before the check)", [BERLIN])
    berlin = _berlin("Jonas lives in Berlin now.")[1].replace(
        "Berlin\n\n##", "Berlin\n\nA city.\n\n##"
    )
    assert _verify(store, (BERLIN, berlin)) == []


def test_of_two_new_claims_the_later_one_is_reported(store: Store) -> None:
    jonas = _page(
        "jonas-weber", "Jonas Weber", "person",
        "## 2026-01-05\n\n- Jonas Weber lives in Hamburg with his partner. [cite:1]\n"
        "- Jonas Weber works as a nurse. [cite:1]",
    )  # fmt: skip
    berlin = _page(
        "berlin", "Berlin", "place", "## 2026-03-02\n\n- Jonas now works as a teacher. [cite:2]"
    )
    problems = _verify(store, (JONAS, jonas), (BERLIN, berlin))
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{_at(store, BERLIN, 'teacher')}: DV202"), problems
    assert "slot role: 'teacher' vs 'nurse'" in problems[0]


def test_partners_are_a_slot_but_ordinary_text_is_not() -> None:
    names = ("Jonas",)
    assert slot_of("Jonas is married to Mia Koch.", names) == ("partner", "mia koch")
    assert slot_of("Jonas's partner is Lea, a nurse.", names) == ("partner", "lea")
    assert slot_of("Jonas is dating Lea Brandt since May.", names) == ("partner", "lea brandt")
    for text in (
        "Jonas is married to his work.",
        "Jonas is dating someone new.",
        "Jonas talked about his partner at work.",
        "Jonas and his wife went to Lyon.",
        "Sam is Jonas's partner in the project.",
    ):
        assert slot_of(text, names) is None, text
    assert opening_name("Jonas Weber's partner is Lea.") == "Jonas Weber"
    assert opening_name("She lives in Porto.") == ""


def test_partners_on_two_pages_contradict(store: Store) -> None:
    lea = _page("lea", "Lea", "person", "## 2026-03-02\n\n- Jonas is married to Mia Koch. [cite:2]")
    jonas = _page(
        "jonas-weber", "Jonas Weber", "person",
        "## 2026-01-05\n\n- Jonas Weber's partner is Lea. [cite:1]",
    )  # fmt: skip
    problems = _verify(store, (JONAS, jonas), ("memory/knowledge/people/lea.md", lea))
    assert len(problems) == 1 and "slot partner: 'mia koch' vs 'lea'" in problems[0], problems


# -- end to end: an agent writes the clashing claim --------------------------------------

AGENT = """
import sys
from pathlib import Path
from memoryfs.pages.page import Page, render_page
from memoryfs.store.hashing import content_hash
from memoryfs.pages.transcript import parse_transcript

for rel in sorted(Path("memory/sessions/transcripts").glob("*.md")):
    raw = rel.read_text()
    t = parse_transcript(raw, str(rel))
    turn = t.turns[0]
    src = [{"id": 1, "ref": f"sessions/transcripts/{t.id}.md#t1", "at": t.date, "hash": turn.hash}]
    meta = {"id": t.id, "title": f"Session {t.id}", "type": "summary", "updated": t.date,
            "transcript_hash": content_hash(raw), "turns": len(t.turns), "sources": src}
    body = f"\\n## Key points\\n\\n- {turn.text} [cite:1]\\n\\n## Outcome\\n\\nnone recorded\\n"
    Path("memory/sessions/summaries", f"{t.id}.md").write_text(render_page(Page(meta, body)))
    if t.id == sys.argv[1]:  # the Berlin page, from the newer session
        meta = {"id": "berlin", "title": "Berlin", "type": "place", "updated": t.date,
                "sources": src}
        body = "\\n# Berlin\\n\\n- Jonas lives in Berlin now. [cite:1]\\n"
        path = Path("memory/knowledge/places/berlin.md")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_page(Page(meta, body)))
"""


def test_an_agents_clashing_claim_is_left_out_and_the_rest_lands(
    store: Store, tmp_path: Path
) -> None:
    approve(store, by="tests")
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    engine = CommandEngine(CommandSettings(cmd=shlex.join([sys.executable, str(agent), NEW[0]])))
    result = run_dream(store, engine)
    assert result.status == "committed", result.problems
    assert any(
        f"{BERLIN}:" in x
        and "DV202" in x
        and f"contradicts {_at(store, JONAS, 'Hamburg')}" in x
        and "slot city: 'berlin' vs 'hamburg'" in x
        and "(file left out)" in x
        for x in result.left_out
    ), result.left_out
    assert not (store.root / BERLIN).exists()  # main has no Berlin page
    for sid, _ in (OLD, NEW):  # the summaries landed
        assert (store.memory / f"sessions/summaries/{sid}.md").is_file()
    message = store.repo.git.log("-1", "--format=%B")
    assert "DV202" in message and "berlin.md" in message


# -- the embedded engine: its own output supersedes across pages ------------------------


def _say(s: Store, sid: str, *said: str) -> None:
    turns: list[tuple[str, str]] = []
    for text in said:
        turns += [("user", text), ("assistant", "Noted.")]
    write_session(s, sid, f"{sid[:10]}T09:00", turns)


def _run(s: Store) -> None:
    result = run_dream(s, load_engine("embedded"), RunOptions(allow_unapproved=True))
    assert result.status == "committed" and not result.left_out, result.left_out
    assert not [p for p in result.problems if "DV20" in p], result.problems


def _lines(s: Store, words: str) -> dict[str, list[tuple[str, bool]]]:
    """rel -> (claim, superseded) of every claim holding ``words``."""
    out: dict[str, list[tuple[str, bool]]] = {}
    for path in sorted((s.memory / "knowledge").rglob("*.md")) + sorted(
        (s.memory / "notes").rglob("*.md")
    ):
        rel = path.relative_to(s.memory).as_posix()
        for c in extract_claims(parse_page(path.read_text(encoding="utf-8"), rel)):
            if words in c.text:
                out.setdefault(rel, []).append((c.text, c.superseded))
    return out


def test_a_session_read_late_supersedes_its_copies_on_other_pages(tmp_path: Path) -> None:
    s = init_store(tmp_path / "late", "dana", "atlas")
    _say(
        s,
        "2026-03-05-jonas",
        "Jonas Weber is my colleague at Tidewater.",
        "Jonas lives in Berlin now.",
    )
    _run(s)
    _say(s, "2026-01-05-jonas", "Jonas lives in Hamburg with his partner.")
    _run(s)  # the older session, read later: its claim is history everywhere
    found = _lines(s, "lives in Hamburg")
    assert "knowledge/places/hamburg.md" in found and "knowledge/people/jonas-weber.md" in found
    assert all(superseded for lines in found.values() for _, superseded in lines), found


def test_a_new_partner_supersedes_the_old_one_on_every_page(tmp_path: Path) -> None:
    s = init_store(tmp_path / "partner", "dana", "atlas")
    _say(
        s,
        "2026-01-05-jonas",
        "Jonas Weber is my colleague at Tidewater.",
        "Jonas is dating Lea Brandt.",
    )
    _run(s)
    _say(s, "2026-03-05-jonas", "Jonas is married to Mia Koch since last week.")
    _run(s)
    old = _lines(s, "dating Lea Brandt")
    assert {"knowledge/people/jonas-weber.md", "knowledge/people/lea-brandt.md"} <= set(old)
    assert all(superseded for lines in old.values() for _, superseded in lines), old
    new = _lines(s, "married to Mia Koch")
    assert new and not any(superseded for lines in new.values() for _, superseded in lines)


def test_the_notes_of_a_claim_said_again_are_superseded_with_it(tmp_path: Path) -> None:
    s = init_store(tmp_path / "notes", "dana", "atlas")
    _say(s, "2026-01-05-role", "I work as a nurse at Harbor Health since January.")
    _say(s, "2026-01-09-role", "I work as a nurse at Harbor Health since January.")
    _say(s, "2026-01-12-role", "I work as a designer at Harbor Health since January.")
    _run(s)
    _say(s, "2026-02-02-role", "I work as a teacher at Quayside Labs now.")
    _run(s)
    notes = {k: v for k, v in _lines(s, "Harbor Health").items() if k.startswith("notes/")}
    assert len(notes) == 3, notes  # one note a session: all three history now
    assert all(superseded for lines in notes.values() for _, superseded in lines), notes


def test_a_copy_filed_in_more_words_is_superseded_with_the_claim() -> None:
    """The claim filed on an organisation's page may be the fact as said there, with more
    after it: it goes to History too, citing the same turn (a synthetic store kept one
    current, and every later role of Dana's tripped DV202 on it)."""
    text = (
        "---\nid: archiva\ntitle: Archiva\ntype: org\nsources:\n"
        "- id: 1\n  ref: sessions/transcripts/s.md#t3\n  at: 2023-11-06\n  hash: abc\n---\n"
        "# Archiva\n\n## 2023-11-06 (6 November 2023)\n\n"
        "- Dana works as data engineer at Archiva since November. Dana asked. [cite:1]\n"
    )
    page = WikiPage(Subject("archiva", "Archiva", "org", "knowledge/orgs/archiva.md"), text, set())
    old = Retired(
        "Dana works as data engineer at Archiva since November.",
        "2023-11-06",
        "2023-11-20",
        frozenset({"sessions/transcripts/s.md#t3"}),
    )
    assert page.retire_copy(old)
    claims = extract_claims(parse_page(page.render(), "knowledge/orgs/archiva.md"))
    assert [(c.section, c.superseded) for c in claims] == [("History", True)], claims
    other = Retired(old.text, old.said, old.on, frozenset({"sessions/transcripts/s.md#t9"}))
    assert not WikiPage(page.subject, text, set()).retire_copy(other)  # another turn's
