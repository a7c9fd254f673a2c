"""The wiki phase: dated sections, merges, supersession, links, notes, incremental runs."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from engine_fixtures import (
    SAMPLE,
    consolidate,
    copy_store,
    sample_store,
    tree_bytes,
    write_session,
)

from dream.records import Evidence, Fact
from dream.wiki import rollover
from dream.wiki.cited_names import turn_keys
from dream.wiki.render import Outline, parse_claim
from dream.wiki.subject_page import MAX_CITES, WikiPage
from dream.wiki.subjects import Subject
from memoryfs.pages.claims import extract_claims
from memoryfs.pages.page import parse_page
from memoryfs.store.store import Store
from memoryfs.validate.rules import normalize_words, phrase_hash, validate_store

USER, BOT = "user", "assistant"


def _page(store: Store, rel: str) -> str:
    return (store.memory / rel).read_text(encoding="utf-8")


def _claims(store: Store, rel: str) -> list[str]:
    return [c.text for c in extract_claims(parse_page(_page(store, rel), rel))]


def _fact(text: str, day: str, turn: int, slot: str = "", subject: str = "Dana") -> Fact:
    ev = Evidence(f"{day}-s", turn, f"{turn:08x}", day)
    return Fact(subject, "person", "fact", slot, text, (ev,), day)


def test_claims_go_under_dated_sections_with_sources(tmp_store: Store) -> None:
    write_session(
        tmp_store,
        "2026-01-05-a",
        "2026-01-05T09:00",
        [
            (USER, "I'm Dana. My partner Sam teaches music at a school in Hamburg."),
            (BOT, "Noted."),
        ],
    )
    consolidate(tmp_store)
    text = _page(tmp_store, "knowledge/people/sam.md")
    assert "## 2026-01-05" in text
    page = parse_page(text)
    (claim,) = extract_claims(page)
    assert "Sam teaches music at a school in Hamburg" in claim.text
    (source,) = page.sources
    assert source.ref == "sessions/transcripts/2026-01-05-a.md#t1" and source.hash
    assert validate_store(tmp_store) == []


def test_near_duplicate_merges_citations(tmp_store: Store) -> None:
    said = (
        "Please always give me figures as PDF, not PNG.",
        "Please always give me the figures as PDF, not PNG.",
    )
    for day, text in zip(("2026-01-05", "2026-01-12"), said, strict=True):
        write_session(tmp_store, f"{day}-figs", f"{day}T09:00", [(USER, text), (BOT, "Will do.")])
    consolidate(tmp_store)
    text = _page(tmp_store, "knowledge/preferences/dana-preferences.md")
    lines = [ln for ln in text.splitlines() if ln.startswith("- ") and "figures as PDF" in ln]
    assert len(lines) == 1 and lines[0].endswith("[cite:1][cite:2]")


def test_role_change_supersedes_with_history(tmp_store: Store) -> None:
    write_session(
        tmp_store,
        "2026-01-05-job",
        "2026-01-05T09:00",
        [
            (USER, "I'm a postdoc at the Marlow Institute."),
            (BOT, "Noted."),
        ],
    )
    consolidate(tmp_store)
    write_session(
        tmp_store,
        "2026-02-11-job",
        "2026-02-11T09:00",
        [
            (USER, "I started as staff scientist at Tidewater Analytics."),
            (BOT, "Congrats."),
        ],
    )
    report = consolidate(tmp_store)
    assert report.claims_superseded == 1
    page = parse_page(_page(tmp_store, "knowledge/people/dana.md"))
    claims = {c.text: c for c in extract_claims(page)}
    old = next(c for t, c in claims.items() if "postdoc" in t)
    new = next(c for t, c in claims.items() if "staff scientist" in t)
    assert old.superseded and old.section == "History" and "(superseded on 2026-02-11)" in old.text
    assert not new.superseded and old.citations and new.citations
    assert validate_store(tmp_store) == []


def test_a_claim_filling_two_slots_supersedes_the_old_value_of_each(tmp_store: Store) -> None:
    said = [
        ("2026-01-05-a", "I'm a postdoc at the Marlow Institute."),
        ("2026-01-12-b", "I live in Hamburg."),
        ("2026-02-11-c", "I moved to Lisbon, now I work at Tidewater Analytics."),
    ]
    for sid, text in said:
        write_session(tmp_store, sid, f"{sid[:10]}T09:00", [(USER, text), (BOT, "Noted.")])
        consolidate(tmp_store)
    page = parse_page(_page(tmp_store, "knowledge/people/dana.md"))
    claims = extract_claims(page)
    current = [c.text for c in claims if not c.superseded]
    old = [c.text for c in claims if c.superseded]
    assert any("Lisbon" in t and "Tidewater" in t for t in current)
    assert not any("postdoc" in t or "Hamburg" in t for t in current)
    assert any("postdoc" in t and "(superseded on 2026-02-11)" in t for t in old)
    assert any("Hamburg" in t and "(superseded on 2026-02-11)" in t for t in old)
    assert validate_store(tmp_store) == []


def _role_notes(store: Store) -> dict[str, tuple[str, list[bool]]]:
    """Dana's notes: first claim words -> (status, superseded flag of each claim)."""
    out: dict[str, tuple[str, list[bool]]] = {}
    for path in sorted((store.memory / "notes" / "dana").glob("*.md")):
        rel = path.relative_to(store.memory).as_posix()
        page = parse_page(_page(store, rel), rel)
        claims = extract_claims(page)
        key = " ".join(claims[0].text.split()[:6]) if claims else rel
        out[key] = (str(page.meta.get("status", "current")), [c.superseded for c in claims])
    return out


@pytest.mark.parametrize("order", ["in order", "late session"])
def test_a_superseded_claim_s_note_is_superseded_too(tmp_store: Store, order: str) -> None:
    sessions = [
        ("2026-01-05-job", "2026-01-05T09:00", "I'm a postdoc at the Marlow Institute."),
        (
            "2026-02-11-job",
            "2026-02-11T09:00",
            "I started as staff scientist at Tidewater Analytics.",
        ),
    ]
    if order == "late session":  # the older session is read after the newer one
        sessions.reverse()
    for sid, started, text in sessions:
        write_session(tmp_store, sid, started, [(USER, text), (BOT, "Noted.")])
        consolidate(tmp_store)
    notes = _role_notes(tmp_store)
    old = next(v for k, v in notes.items() if "postdoc" in k)
    new = next(v for k, v in notes.items() if "staff scientist" in k)
    assert old == ("superseded", [True])  # the note no longer states the old role as current
    assert new == ("current", [False])
    assert validate_store(tmp_store) == []


def test_the_note_of_a_superseded_claim_is_found_after_a_rename_on_a_clash(
    tmp_store: Store,
) -> None:
    # a topic page holds the id the postdoc note would get, so the note is named "<id>-2"
    taken = "dana-2026-01-05-postdoc-marlow-institute"
    (tmp_store.memory / "knowledge/topics").mkdir(parents=True, exist_ok=True)
    (tmp_store.memory / f"knowledge/topics/{taken}.md").write_text(
        f"---\nid: {taken}\ntitle: Taken\ntype: topic\nupdated: 2026-01-01\n---\n# Taken\n",
        encoding="utf-8",
    )
    tmp_store.commit("a page that takes the note's name")
    said = [
        ("2026-01-05-job", "I'm a postdoc at the Marlow Institute."),
        ("2026-02-11-job", "I started as staff scientist at Tidewater Analytics."),
    ]
    for sid, text in said:
        write_session(tmp_store, sid, f"{sid[:10]}T09:00", [(USER, text), (BOT, "Noted.")])
        consolidate(tmp_store)
    renamed = tmp_store.memory / f"notes/dana/{taken}-2.md"
    assert renamed.is_file()
    note = parse_page(renamed.read_text(encoding="utf-8"))
    assert note.meta["status"] == "superseded"
    assert "(superseded on 2026-02-11)" in note.body
    assert validate_store(tmp_store) == []


def test_a_late_session_does_not_override_a_newer_value() -> None:
    page = WikiPage(Subject("dana", "Dana", "person", "knowledge/people/dana.md"), None, {"Dana"})
    assert (
        page.add(_fact("Dana is a staff scientist at Tidewater.", "2026-02-11", 1, "role"))
        == "added"
    )
    assert page.add(_fact("Dana is a postdoc at Marlow.", "2026-01-05", 2, "role")) == "superseded"
    body = page.outline.render()
    history = body.split("## History", 1)[1]
    assert "postdoc" in history and "(superseded on 2026-02-11)" in history
    assert "staff scientist" not in history


def test_same_evidence_is_never_filed_twice() -> None:
    page = WikiPage(Subject("dana", "Dana", "person", "knowledge/people/dana.md"), None, set())
    fact = _fact('Dana ran a charity race on 20 May 2023 ("last Saturday").', "2023-05-25", 3)
    assert page.add(fact) == "added"
    assert page.add(fact) == "duplicate"
    assert page.outline.render().count("charity race") == 1


def test_citations_per_claim_are_capped() -> None:
    page = WikiPage(Subject("dana", "Dana", "person", "knowledge/people/dana.md"), None, set())
    for i in range(MAX_CITES + 3):
        page.add(_fact("Dana drinks green tea.", f"2026-01-{i + 1:02d}", i + 1))
    (line,) = [ln for ln in page.outline.render().splitlines() if "green tea" in ln]
    claim = parse_claim(line)
    assert claim is not None and len(claim.cites) == MAX_CITES


def _hub(days: int, per_day: int = 1, start: int = 0) -> list[Fact]:
    out = []
    for i in range(start, start + days * per_day):
        d = i // per_day
        day = f"{2023 + d // 336}-{(d // 28) % 12 + 1:02d}-{d % 28 + 1:02d}"
        word = hashlib.sha256(str(i).encode()).hexdigest()[:16]  # distinct, never merged
        out.append(_fact(f"Dana wrote {word} down.", day, 1000 + i))
    return out


def _archives() -> tuple[dict[str, WikiPage], Callable[[str], WikiPage]]:
    archives: dict[str, WikiPage] = {}

    def archive_of(day: str) -> WikiPage:
        sid = f"dana-archive-{day}"
        subject = Subject(sid, f"Dana ({day} archive)", "person", f"x/{sid}.md")
        return archives.setdefault(day, WikiPage(subject, None, set()))

    return archives, archive_of


def test_rollover_keeps_a_hub_page_bounded() -> None:
    subject = Subject("dana", "Dana", "person", "knowledge/people/dana.md")
    page = WikiPage(subject, None, {"Dana"})
    page.add(_fact("Dana is a postdoc at Marlow.", "2023-01-01", 1, "role"))
    for fact in _hub(rollover.ROLL_AT + 20):
        page.add(fact)
    archives, archive_of = _archives()
    assert rollover.needs_roll(page)
    aid = rollover.roll(page, archive_of)
    assert aid == "dana-archive-2023-01-01" and list(archives) == ["2023-01-01"]
    assert "postdoc" in page.outline.render()  # a slot claim stays for supersession
    moved = sum(a.current_count() for a in archives.values())
    assert moved == rollover.VOLUME  # one claim a day: exactly one volume
    assert page.current_count() == rollover.ROLL_AT + 21 - rollover.VOLUME
    assert not rollover.needs_roll(page)
    cited = {n for _, _, c in page.outline.claims() for n in c.cites}
    assert set(page.sources.ids()) == cited
    for a in archives.values():
        refs = {e["ref"] for e in a.sources.as_meta()}
        assert all(c.cites for _, _, c in a.outline.claims()) and refs


def test_rollover_moves_whole_days_and_a_later_roll_makes_a_new_archive() -> None:
    page = WikiPage(Subject("dana", "Dana", "person", "knowledge/people/dana.md"), None, set())
    first_days = (rollover.ROLL_AT + 30) // 3
    for fact in _hub(first_days, per_day=3):  # 30 claims too many, three a day
        page.add(fact)
    archives, archive_of = _archives()
    first = rollover.roll(page, archive_of)
    days = {sec.title for sec in page.outline.sections}
    archived = {sec.title for sec in archives[first.rsplit("-archive-", 1)[1]].outline.sections}
    assert not days & archived  # no day is split between the page and its archive
    assert page.current_count() <= rollover.ROLL_AT
    frozen = archives[first.rsplit("-archive-", 1)[1]].render()
    for fact in _hub(40, per_day=3, start=3 * first_days):
        page.add(fact)
    second = rollover.roll(page, archive_of)
    assert second and second != first and len(archives) == 2
    assert archives[first.rsplit("-archive-", 1)[1]].render() == frozen  # written once


def test_outline_leaves_foreign_text_alone() -> None:
    body = "# Dana\n\nA paragraph a human wrote.\n\n## Notes by hand\n\nkeep  me\n"
    outline = Outline(body)
    assert outline.render() == body
    outline.append("2026-01-05", "- A claim. [cite:1]")
    out = outline.render()
    assert out.startswith(body.rstrip("\n"))  # a dated log goes after what was there
    assert out.endswith("## 2026-01-05\n\n- A claim. [cite:1]\n")
    outline.append("History", "- Old. [cite:1] (superseded on 2026-01-05)")
    outline.append("2025-12-01", "- Earlier. [cite:2]")
    titles = [s.title for s in outline.sections]
    assert titles == ["Notes by hand", "2025-12-01", "2026-01-05", "History"]


def test_dated_sections_say_the_day_as_people_write_it() -> None:
    page = WikiPage(Subject("dana", "Dana", "person", "knowledge/people/dana.md"), None, set())
    page.add(_fact("Dana ran a charity race.", "2023-05-25", 3))
    assert "## 2023-05-25 (25 May 2023)\n" in page.outline.render()
    # a page written with plain ISO headings keeps them: the same day is the same section
    text = "---\nid: dana\ntitle: Dana\ntype: person\nupdated: 2023-05-25\n---\n# Dana\n\n"
    old = WikiPage(
        Subject("dana", "Dana", "person", "knowledge/people/dana.md"),
        text + "## 2023-05-25\n\n- Dana ran a race. [cite:1]\n",
        set(),
    )
    old.add(_fact("Dana baked bread for the neighbours.", "2023-05-25", 4))
    body = old.outline.render()
    assert body.count("## 2023-05-25") == 1 and "baked bread" in body


def test_a_person_summary_says_what_their_claims_come_back_to() -> None:
    """In the words of the page's cited profile, so every word of it is in a claim (the
    frontmatter gate, DV110): the facet's name is its profile bullet's."""
    page = WikiPage(Subject("mel", "Melanie", "person", "knowledge/people/mel.md"), None, set())
    turns: dict[str, str] = {}
    page.keys_of = lambda ref: ("Melanie", turn_keys(turns[ref])) if ref in turns else None
    said = [
        "Melanie signed up for a pottery class.",
        "Melanie made a bowl in pottery class.",
        "Melanie painted a sunset.",
        "Melanie's painting of a lake won a prize.",
        "Melanie took the kids camping.",
    ]
    for i, text in enumerate(said, 1):
        fact = _fact(text, f"2023-07-{i:02d}", i, subject="Melanie")
        turns[fact.evidence[0].ref] = text
        page.add(fact)
    rendered = parse_page(page.render(), "knowledge/people/mel.md")
    summary = rendered.summary
    assert "arts, crafts and music: pottery, painted" in summary
    assert "camping" not in summary  # said once: not yet what she keeps coming back to
    claims = " ".join(c.text for c in extract_claims(rendered)).lower()
    assert all(w in claims for w in re.findall(r"\w+", summary.lower()))


needs_sample = pytest.mark.skipif(
    not (SAMPLE / "transcripts").is_dir(), reason="sample_memory is not there"
)


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Store:
    if not (SAMPLE / "transcripts").is_dir():
        pytest.skip("sample_memory is not there")
    store = sample_store(tmp_path_factory.mktemp("wiki"))
    consolidate(store)
    return store


def test_sample_has_preferences_notes_links_and_index(sample: Store) -> None:
    prefs = _page(sample, "knowledge/preferences/dana-preferences.md")
    assert "figures as PDF" in prefs and "[[dana|Dana]]" in prefs
    assert "[[dana-preferences|" in _page(sample, "knowledge/people/dana.md")
    assert "[[sam|Sam]]" in _page(sample, "knowledge/people/dana.md")
    notes = sorted((sample.memory / "notes").rglob("*.md"))
    assert notes
    note = parse_page(notes[0].read_text(encoding="utf-8"))
    assert note.meta["type"] == "note" and note.sources and note.meta["id"] == notes[0].stem
    index = _page(sample, "INDEX.md")
    assert "## Preferences" in index and "dana-preferences.md" in index
    assert "summaries/2026-03-13-reefsong-1-0.md" in _page(sample, "sessions/index.md")
    people = parse_page(_page(sample, "knowledge/people/tiago-ferreira.md"))
    assert people.summary and "Tiago" in people.summary


def test_summary_pages(sample: Store) -> None:
    page = parse_page(_page(sample, "sessions/summaries/2026-01-23-tidewater-interview.md"))
    meta = page.meta
    assert meta["id"] == "2026-01-23-tidewater-interview" and meta["type"] == "summary"
    assert str(meta["updated"]) == "2026-01-23" and meta["participants"] == ["dana", "atlas"]
    assert meta["turns"] == 15 and len(meta["transcript_hash"]) == 16
    points = page.body.split("## Key points", 1)[1].split("## Outcome", 1)[0]
    n = sum(1 for ln in points.splitlines() if ln.startswith("- ") and "[cite:" in ln)
    assert 3 <= n <= 8
    assert "\nOutcome: " in page.body and "## Open threads" in page.body
    assert all(s.hash and s.at for s in page.sources)


def test_new_session_touches_only_its_pages(sample: Store, tmp_path: Path) -> None:
    store = copy_store(sample, tmp_path / "copy")
    before = tree_bytes(store)
    write_session(
        store,
        "2026-03-20-marta",
        "2026-03-20T18:00",
        [
            (USER, "Marta got a new bike for her commute across Altona."),
            (BOT, "Nice."),
        ],
    )
    report = consolidate(store)
    after = tree_bytes(store)
    changed = {rel for rel in before if before[rel] != after.get(rel)}
    touched = set(report.pages_updated) | {"INDEX.md", "sessions/index.md"}
    assert changed <= touched
    assert "knowledge/people/marta.md" in changed
    assert len(changed) <= 6
    assert validate_store(store) == []


def test_grown_session_is_resummarized_without_duplicates(sample: Store, tmp_path: Path) -> None:
    store = copy_store(sample, tmp_path / "grown")
    path = store.transcript_path("2026-01-26-dinner-for-marta")
    path.write_text(
        path.read_text(encoding="utf-8")
        + "\n## t14 · user · 2026-01-26T19:40\n\nMarta also plays the drums in a punk band.\n",
        encoding="utf-8",
    )
    store.commit("grow")
    before = _claims(store, "knowledge/people/marta.md")
    report = consolidate(store)
    assert report.sessions_summarized == ["2026-01-26-dinner-for-marta"]
    after = _claims(store, "knowledge/people/marta.md")
    assert len(after) == len(before) + 1 and any("drums" in c for c in after)
    assert len(set(after)) == len(after)
    summary = parse_page(_page(store, "sessions/summaries/2026-01-26-dinner-for-marta.md"))
    assert summary.meta["turns"] == 14
    assert validate_store(store) == []


def test_nothing_pending_changes_nothing(sample: Store, tmp_path: Path) -> None:
    store = copy_store(sample, tmp_path / "idle")
    before = tree_bytes(store)
    report = consolidate(store)
    assert report.sessions_summarized == [] and tree_bytes(store) == before


@needs_sample
def test_same_input_gives_same_bytes(tmp_path: Path) -> None:
    one, two = sample_store(tmp_path / "one"), sample_store(tmp_path / "two")
    consolidate(one)
    consolidate(two)
    assert tree_bytes(one) == tree_bytes(two)


def test_forgotten_pages_and_phrases_do_not_come_back(tmp_store: Store) -> None:
    words = normalize_words("cardiology ward")
    log = [
        {"kind": "page", "id": "sam", "reason": "asked", "at": "2026-01-01"},
        {"kind": "phrase", "words": len(words), "hash": phrase_hash(words), "reason": "asked",
         "at": "2026-01-01"},
    ]  # fmt: skip
    (tmp_store.memory / "deletions.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for e in log), encoding="utf-8"
    )
    tmp_store.commit("forget")
    write_session(tmp_store, "2026-01-26-marta", "2026-01-26T19:00", [
        (USER, "My partner Sam teaches music. Marta is a nurse on the cardiology ward."),
        (USER, "Marta lives in Altona and cycles everywhere."),
    ])  # fmt: skip
    consolidate(tmp_store)
    assert not list(tmp_store.memory.rglob("sam.md"))
    written = [p for p in tmp_store.memory.rglob("*.md") if "transcripts" not in p.parts]
    assert written and not any("cardiology ward" in p.read_text(encoding="utf-8") for p in written)
    assert "Altona" in _page(tmp_store, "knowledge/people/marta.md")


def test_a_words_facet_is_the_first_whose_cues_have_it() -> None:
    """``facets.facet_of`` (a lookup table) against the rule it stands for: the first
    facet, in ``_CUES`` order, whose cues hold the word or the word without trailing "s"."""
    from dream.language import facets

    words = {w for cues in facets._WORDS.values() for w in cues}
    words |= {w + "s" for w in words} | {w + "ss" for w in words} | {"s", "", "the", "runs"}
    for w in sorted(words):
        linear = next(
            (f for f, cues in facets._WORDS.items() if w in cues or w.rstrip("s") in cues), None
        )
        assert facets.facet_of(w) == linear, w


def test_a_claim_said_again_after_it_was_superseded_keeps_both_lines_and_the_dates() -> None:
    """One text on the page twice (History and current), sessions filed out of date order:
    the lookups by text and the page's first and last day give the page they always gave."""
    page = WikiPage(Subject("dana", "Dana", "person", "knowledge/people/dana.md"), None, set())
    lisbon = _fact("Dana lives in Lisbon.", "2023-03-10", 1, "city")
    assert page.add(lisbon) == "added"
    assert page.add(_fact("Dana lives in Porto.", "2023-04-02", 2, "city")) == "superseded"
    assert page.add(_fact("Dana lives in Lisbon.", "2023-05-20", 3, "city")) == "superseded"
    assert page.add(lisbon) == "duplicate"  # its evidence is on the History line
    assert page.add(_fact("Dana lives in Lisbon.", "2023-01-15", 4, "city")) == "merged"
    assert page.add(_fact("Dana drinks green tea.", "2022-12-01", 5)) == "added"
    body = page.outline.render()
    assert body.count("Dana lives in Lisbon.") == 2
    history = body.split("## History", 1)[1]
    assert "- Dana lives in Lisbon. [cite:1] (superseded on 2023-04-02)" in history
    assert "- Dana lives in Porto. [cite:2] (superseded on 2023-05-20)" in history
    assert "- Dana lives in Lisbon. [cite:3][cite:4]\n" in body.split("## History", 1)[0]
    meta = parse_page(page.render(), "knowledge/people/dana.md").meta
    assert str(meta["created"]) == "2022-12-01" and str(meta["updated"]) == "2023-05-20"
    assert [s["ref"] for s in meta["sources"]] == [
        f"sessions/transcripts/{d}-s.md#t{n}"
        for n, d in enumerate(["2023-03-10", "2023-04-02", "2023-05-20", "2023-01-15"], 1)
    ] + ["sessions/transcripts/2022-12-01-s.md#t5"]


def test_a_repeated_claim_merges_into_the_first_of_its_lines() -> None:
    text = (
        "---\nid: dana\ntitle: Dana\ntype: person\nsources:\n"
        "- id: 1\n  ref: sessions/transcripts/a.md#t1\n  at: 2023-01-01\n  hash: '00000001'\n"
        "- id: 2\n  ref: sessions/transcripts/b.md#t1\n  at: 2023-02-01\n  hash: '00000002'\n"
        "---\n# Dana\n\n## 2023-01-01 (1 January 2023)\n\n- Dana drinks tea. [cite:1]\n\n"
        "## 2023-02-01 (1 February 2023)\n\n- Dana drinks tea. [cite:2]\n"
    )
    page = WikiPage(Subject("dana", "Dana", "person", "knowledge/people/dana.md"), text, set())
    assert page.add(_fact("Dana drinks tea.", "2023-03-01", 3)) == "merged"
    first, second = page.outline.render().split("## 2023-02-01", 1)
    assert "- Dana drinks tea. [cite:1][cite:3]" in first
    assert "- Dana drinks tea. [cite:2]\n" in second


@pytest.mark.parametrize("runs", ["one run", "two runs"])
def test_a_superseded_claim_is_superseded_on_the_other_pages_it_was_filed_on(
    tmp_store: Store, runs: str
) -> None:
    said = [
        ("2026-01-05-a", "I live in Cascais now, near the beach."),
        ("2026-03-02-b", "I moved to Porto last week."),
    ]
    for sid, text in said:
        write_session(tmp_store, sid, f"{sid[:10]}T09:00", [(USER, text), (BOT, "Noted.")])
        if runs == "two runs":
            consolidate(tmp_store)
    consolidate(tmp_store)
    place = parse_page(_page(tmp_store, "knowledge/places/cascais.md"))
    (claim,) = [c for c in extract_claims(place) if "Cascais" in c.text]
    assert claim.superseded and claim.section == "History"
    assert "(superseded on 2026-03-02)" in claim.text and claim.citations
    dana = parse_page(_page(tmp_store, "knowledge/people/dana.md"))
    assert [c.superseded for c in extract_claims(dana) if "Cascais" in c.text] == [True]
    assert validate_store(tmp_store) == []


_HEAD_PIECES = [
    "sources:\n",
    "sources: []\n",
    "- id: 1\n",
    "  ref: sessions/transcripts/a.md#t1\n",
    "title: Ana\n",
    "aliases:\n",
    "- Ana B\n",
    "id: ana\n",
    "x_y-z: 1\n",
    "é: 2\n",
    "  sources: nested\n",
    "\n",
    "sources:",
]


def test_a_registry_reads_frontmatter_without_its_sources_as_the_pattern_did() -> None:
    """``without_sources`` (a search for each block's end) removes what the pattern it
    replaced removed, on every arrangement of keys, nested keys and repeated blocks."""
    import itertools
    import re

    from dream.wiki.subjects import without_sources

    pattern = re.compile(r"^sources:.*?(?=^[A-Za-z_][\w-]*:|\Z)", re.MULTILINE | re.DOTALL)
    for n in range(1, 4):
        for combo in itertools.product(_HEAD_PIECES, repeat=n):
            head = "".join(combo)
            assert without_sources(head) == pattern.sub("", head), repr(head)


def test_a_near_duplicate_with_other_numbers_is_another_claim() -> None:
    """ "Tidemark 0.8 has 2465 recordings" is not "Tidemark 0.8 has 2459 recordings", however
    alike the words: it is added, not merged into the other's citations."""
    page = WikiPage(Subject("tidemark", "Tidemark", "project", "x/tidemark.md"), None, set())
    first = "Dana released Tidemark 0.8 on Monday; it now has 2459 recordings from 18 sites."
    later = "Dana released Tidemark 0.8 on Monday; it now has 2465 recordings from 18 sites."
    assert page.add(_fact(first, "2023-01-02", 1)) == "added"
    assert page.add(_fact(later, "2023-02-06", 2)) == "added"
    assert page.add(_fact(first, "2023-03-06", 3)) == "merged"  # the same numbers: merged
    text = page.render()
    assert first in text and later in text


def test_a_near_duplicate_merges_into_the_most_alike_claim_whatever_the_filing_order() -> None:
    """Which claim takes the citations depends on the page, not on the order claims were
    filed in: a page let go and read back (``dream.phases.open_pages``) must choose the same."""
    a = "Dana and Sam walked the long coastal trail near Cascais with the dog on Sunday."
    b = "Dana and Sam walked the long coastal trail near Sintra with the kids on Sunday."
    new = "Dana and Sam walked the long coastal trail near Cascais with the kids on Sunday."
    texts = []
    for order in ((a, b), (b, a)):
        page = WikiPage(Subject("dana", "Dana", "person", "x/dana.md"), None, set())
        for n, text in enumerate(order, 1):
            assert page.add(_fact(text, "2023-01-02", n)) == "added"
        assert page.add(_fact(new, "2023-01-09", 9)) == "merged"
        rendered = page.render()
        merged = next(line for line in rendered.splitlines() if line.count("[cite:") == 2)
        texts.append(merged.split(" [cite:")[0])
    assert texts == [f"- {a}", f"- {a}"]


def test_the_short_form_of_a_place_files_on_the_place(tmp_store: Store) -> None:
    """The Keys in a later session is the "Florida Keys" of an earlier one, as "Priya"
    is "Priya Natarajan": no topic page of its own, and the place answers to it."""
    write_session(tmp_store, "2026-01-27-a", "2026-01-27T09:00", [
        (USER, "The Florida Keys sheets cross the March switch, so I'll check the clocks."),
        (BOT, "Noted."),
    ])  # fmt: skip
    write_session(tmp_store, "2026-02-13-b", "2026-02-13T09:00", [
        (USER, "Felix uploaded the January recordings from the Keys, so the release is big."),
        (BOT, "Noted."),
    ])  # fmt: skip
    consolidate(tmp_store)
    assert not list(tmp_store.memory.rglob("keys.md"))
    page = parse_page(_page(tmp_store, "knowledge/places/florida-keys.md"))
    assert page.aliases == ["Keys"]
    assert [s.ref.split("#")[0] for s in page.sources] == [
        "sessions/transcripts/2026-01-27-a.md",
        "sessions/transcripts/2026-02-13-b.md",
    ]
    assert validate_store(tmp_store) == []


def test_a_place_s_short_form_must_be_its_head_and_name_one_place() -> None:
    from dream.wiki.subjects import Registry
    from memoryfs.forget.deletions import Deletions

    def place(title: str) -> Subject:
        sid = title.lower().replace(" ", "-")
        return Subject(sid, title, "place", f"knowledge/places/{sid}.md")

    one = Registry([place("Florida Keys"), place("Berlin Hbf")], set(), Deletions())
    found = one.resolve("Keys")
    assert found is not None and found.id == "florida-keys"
    assert one.resolve("Keys", "place") is found
    assert one.resolve("Keys", "person") is None  # typed otherwise in its session
    assert one.resolve("Berlin") is None  # a place named after Berlin is not Berlin
    two = Registry([place("Florida Keys"), place("Marquesas Keys")], set(), Deletions())
    assert two.resolve("Keys") is None  # which Keys?
    assert two.resolve("Marquesas Keys") is not None


def test_ids_are_minted_against_the_ids_in_use(tmp_path: Path) -> None:
    """``Registry`` mints ids against the ids in use: the store's pages and notes, then
    what it minted."""
    from dream.wiki.subjects import Registry
    from memoryfs.forget.deletions import Deletions
    from memoryfs.store.store import init_store

    store = init_store(tmp_path / "s", "dana", "atlas")
    note = store.memory / "notes" / "lisbon" / "2026-01-12-the-conference.md"
    note.parent.mkdir(parents=True)
    note.write_text("---\nid: 2026-01-12-the-conference\n---\nIn May.\n")
    registry = Registry.load(store, Deletions())
    assert "2026-01-12-the-conference" in registry.taken and "lisbon" not in registry.taken
    assert registry.new_id("2026-01-12-the-conference") == "2026-01-12-the-conference-2"
    assert registry.new_id("2026-01-12-the-conference") == "2026-01-12-the-conference-3"
    assert registry.new_id("lisbon") == "lisbon" and "lisbon" in registry.taken


def test_archives_are_no_names_page(tmp_path: Path) -> None:
    """No name resolves to an archive page: the registry gives an existing one, asked for
    by its page and period, as it was read, and mints a new one on first use."""
    from dream.wiki.subjects import Registry
    from memoryfs.forget.deletions import Deletions
    from memoryfs.store.store import init_store

    store = init_store(tmp_path / "s", "dana", "atlas")
    people = store.memory / "knowledge" / "people"
    people.mkdir(parents=True, exist_ok=True)
    (people / "ana.md").write_text("---\nid: ana\ntitle: Ana Ruiz\ntype: person\n---\n")
    (people / "ana-archive-2026-01-05.md").write_text(
        "---\nid: ana-archive-2026-01-05\ntitle: Ana (old name)\ntype: person\n---\n"
    )
    registry = Registry.load(store, Deletions())
    assert set(registry.subjects) == {"ana"}
    ana = registry.subjects["ana"]
    assert registry.resolve("Ana (old name)") is None  # an archive is never a name's page
    old = registry.archive_of(ana, "2026-01-05")
    assert (old.title, old.path, old.new) == (
        "Ana (old name)",
        "knowledge/people/ana-archive-2026-01-05.md",
        False,
    )
    fresh = registry.archive_of(ana, "2026-02")
    assert (fresh.id, fresh.title, fresh.new) == (
        "ana-archive-2026-02",
        "Ana Ruiz (2026-02 archive)",
        True,
    )
    assert registry.archive_of(ana, "2026-02") == fresh and "ana-archive-2026-02" in registry.taken
    assert set(registry.subjects) == {"ana"}


def test_a_page_keeps_its_frontmatter_bytes_until_its_sources_change() -> None:
    """A page whose sources did not change keeps its frontmatter as written (quoting, key
    order); once a claim cites a new turn, the old text is let go and the frontmatter is
    written anew with every source, old and new (issue 3: open pages held both)."""
    text = (
        "---\nid: kelp\ntitle: 'Kelp'\ntype: org\nsummary: Kelp hired Dana.\n"
        "updated: 2026-01-05\nsources:\n"
        "- id: 1\n  ref: sessions/transcripts/2026-01-05-s.md#t1\n  at: 2026-01-05\n"
        "  hash: '00000001'\n---\n# Kelp\n\n## 2026-01-05 (5 January 2026)\n\n"
        "- Kelp hired Dana. [cite:1]\n"
    )
    subject = Subject("kelp", "Kelp", "org", "knowledge/orgs/kelp.md")
    page = WikiPage(subject, text, set())
    page.link([("dana", "Dana")])  # the body changes, the sources do not
    assert page.render(profile=False).startswith(text[: text.index("---\n#") + 4])
    assert page.page is not None and page.page.raw_meta is not None
    assert page.add(_fact("Kelp opened an office in Porto.", "2026-02-01", 4)) == "added"
    assert page.page.raw_meta is None  # no longer needed: the frontmatter changes
    rendered = parse_page(page.render(profile=False))
    assert [e["id"] for e in rendered.meta["sources"]] == [1, 2]
    assert rendered.meta["title"] == "Kelp" and "[[dana|Dana]]" in rendered.body
