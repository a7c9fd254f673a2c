"""memoryfs validate: golden store trees, symlinks, stale citations, the deletion log."""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
import time
from pathlib import Path

import paths
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memoryfs.validate.findings as findings_mod
from memoryfs.pages.transcript import Transcript, Turn, render_transcript
from memoryfs.store.config import load_config
from memoryfs.store.hashing import turn_hash
from memoryfs.store.store import Store
from memoryfs.validate.rules import CODES, Finding, normalize_words, phrase_hash, validate_store

FIXTURES = paths.FIXTURES / "validate"
CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
SYMLINK_CODES = {"MF302", "MF303"}  # symlinks are made by the tests below, not stored in fixtures
# a turn edited after ingest is told by Git history, which a fixture folder has not:
# tests/memoryfs/store/test_transcript_edits.py makes one
HISTORY_CODES = {"MF405"}


def _open_fixture(name: str, tmp_path: Path) -> Store:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root, symlinks=True)
    (root / "expected.txt").unlink()
    return Store(root=root, config=load_config(root / "memory.toml"))


def _lines(findings: list[Finding]) -> list[str]:
    return [f.format() for f in findings]


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str, tmp_path: Path) -> None:
    store = _open_fixture(case, tmp_path)
    expected = (FIXTURES / case / "expected.txt").read_text(encoding="utf-8").splitlines()
    assert _lines(validate_store(store)) == expected


@pytest.mark.parametrize("case", CASES)
def test_golden_by_name(case: str, tmp_path: Path) -> None:
    """``validate_files`` naming every file finds what ``validate_store`` finds: the
    transcripts are read before the pages that cite them whatever their names' order."""
    from memoryfs.validate.rules import validate_files

    store = _open_fixture(case, tmp_path)
    mem = store.root / "memory"
    files = [str(p.relative_to(mem)) for p in mem.rglob("*") if p.is_file()] if mem.is_dir() else []
    expected = (FIXTURES / case / "expected.txt").read_text(encoding="utf-8").splitlines()
    assert _lines(validate_files(store, store.root, files, {})) == expected


@pytest.mark.parametrize("case", [c for c in CASES if c != "clean"])
def test_each_case_exercises_its_rule(case: str) -> None:
    code = case.split("-", 1)[0].upper()
    expected = (FIXTURES / case / "expected.txt").read_text(encoding="utf-8")
    assert f" {code} " in expected


def test_every_code_has_a_case_and_is_documented() -> None:
    covered = {c.split("-", 1)[0].upper() for c in CASES if c != "clean"}
    covered |= SYMLINK_CODES | HISTORY_CODES
    assert covered == set(CODES)
    doc = findings_mod.__doc__ or ""
    for code in CODES:
        assert re.search(rf"^{code}  ", doc, re.M), code


def test_clean_store_has_no_findings(tmp_store: Store) -> None:
    assert validate_store(tmp_store) == []


def test_root_validates_a_staged_tree_with_the_store_config(
    tmp_store: Store, tmp_path: Path
) -> None:
    staged = tmp_path / "staged"
    shutil.copytree(FIXTURES / "mf109-stale-citation", staged)
    expected = (staged / "expected.txt").read_text(encoding="utf-8").splitlines()
    (staged / "memory.toml").write_text("not toml [[[", encoding="utf-8")  # the store's config wins
    assert _lines(validate_store(tmp_store, root=staged)) == expected
    assert validate_store(tmp_store) == []


def test_finding_format() -> None:
    f = Finding("memory/notes/a.md", 3, "MF201", "link [[x]] resolves to no page", "fix it")
    assert f.format() == "memory/notes/a.md:3: MF201 link [[x]] resolves to no page (fix it)"


# -- symlinks ----------------------------------------------------------------


def test_symlink_out_of_the_store_is_reported_and_not_followed(
    tmp_store: Store, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("no frontmatter, would be MF001 if followed\n")
    (tmp_store.memory / "knowledge" / "topics" / "secret.md").symlink_to(outside / "secret.md")
    (tmp_store.memory / "notes" / "elsewhere").symlink_to(outside, target_is_directory=True)
    assert _lines(validate_store(tmp_store)) == [
        f"memory/knowledge/topics/secret.md:0: MF302 symlink points outside the store "
        f"({outside / 'secret.md'}) ({CODES['MF302']})",
        f"memory/notes/elsewhere:0: MF302 symlink points outside the store ({outside}) "
        f"({CODES['MF302']})",
    ]


def test_broken_symlink(tmp_store: Store) -> None:
    (tmp_store.memory / "notes" / "gone.md").symlink_to("missing.md")
    assert [(f.path, f.code) for f in validate_store(tmp_store)] == [
        ("memory/notes/gone.md", "MF303")
    ]


def test_symlink_inside_the_store_is_allowed_and_not_read(tmp_store: Store) -> None:
    page = "---\nid: p\ntitle: P\ntype: topic\nupdated: 2026-01-12\n---\n# Body\n"
    (tmp_store.memory / "knowledge" / "topics" / "p.md").write_text(page, encoding="utf-8")
    (tmp_store.memory / "notes" / "p.md").symlink_to("../knowledge/topics/p.md")
    assert validate_store(tmp_store) == []  # not read twice, so no duplicate id


def test_memory_folder_symlink(tmp_store: Store, tmp_path: Path) -> None:
    staged = tmp_path / "staged"
    staged.mkdir()
    (staged / "memory").symlink_to(tmp_store.memory, target_is_directory=True)
    assert [f.code for f in validate_store(tmp_store, root=staged)] == ["MF302"]


# -- citations against a real transcript ---------------------------------------


def _write_session(store: Store, texts: list[str]) -> None:
    turns = tuple(
        Turn(n=i, speaker="user", ts=f"2026-01-12T10:{i:02d}", text=t)
        for i, t in enumerate(texts, 1)
    )
    t = Transcript(
        id="2026-01-12-lisbon",
        started="2026-01-12T10:00",
        participants=("dana", "atlas"),
        scope={"user": "dana", "assistant": "atlas"},
        turns=turns,
    )
    store.transcript_path(t.id).write_text(render_transcript(t), encoding="utf-8")


def _write_page(store: Store, rel: str, body: str, hash_: str) -> None:
    pid = rel.rsplit("/", 1)[1][:-3]
    text = (
        f"---\nid: {pid}\ntitle: {pid}\ntype: topic\nupdated: 2026-01-12\nsources:\n"
        f"  - id: 1\n    ref: sessions/transcripts/2026-01-12-lisbon.md#t2\n"
        f"    at: 2026-01-12\n" + (f"    hash: '{hash_}'\n" if hash_ else "") + f"---\n{body}"
    )
    (store.memory / rel).parent.mkdir(parents=True, exist_ok=True)
    (store.memory / rel).write_text(text, encoding="utf-8")


def test_stale_citation_hash(tmp_store: Store) -> None:
    _write_session(tmp_store, ["Hi.", "The conference is in Lisbon in May."])
    good = turn_hash("The conference is in Lisbon in May.")
    _write_page(tmp_store, "knowledge/topics/conference.md", "In Lisbon, May [cite:1].\n", good)
    assert validate_store(tmp_store) == []
    _write_session(tmp_store, ["Hi.", "The conference is in Porto in June."])
    findings = validate_store(tmp_store)
    assert [(f.path, f.line, f.code) for f in findings] == [
        ("memory/knowledge/topics/conference.md", 7, "MF109")
    ]
    assert good in findings[0].message


def test_unread_refs_are_checked_but_for_their_transcript(tmp_store: Store) -> None:
    """``validate_files(unread_refs=...)``: a source whose transcript the caller left out on
    purpose is not reported missing (MF107); its entry's other rules still hold."""
    from memoryfs.validate.rules import validate_files

    rel = "knowledge/topics/conference.md"
    ref = "sessions/transcripts/2026-01-12-lisbon.md#t2"
    _write_page(tmp_store, rel, "In Lisbon [cite:1].\n", "NOT-HEX")  # no transcript at all

    def codes(unread: tuple[str, ...]) -> list[tuple[int, str]]:
        found = validate_files(tmp_store, tmp_store.root, [rel], {}, unread_refs=unread)
        return [(f.line, f.code) for f in found]

    assert codes(()) == [(7, "MF105"), (7, "MF107")]
    assert codes((ref,)) == [(7, "MF105")]
    assert codes(("sessions/transcripts/other.md#t1",)) == [(7, "MF105"), (7, "MF107")]


def test_citation_without_hash_is_not_stale(tmp_store: Store) -> None:
    _write_session(tmp_store, ["Hi.", "Lisbon."])
    _write_page(tmp_store, "notes/trips/lisbon.md", "Lisbon [cite:1].\n", "")
    assert validate_store(tmp_store) == []
    _write_session(tmp_store, ["Hi.", "Porto."])  # without a hash, nothing pins the evidence
    assert validate_store(tmp_store) == []


# -- the deletion log ------------------------------------------------------------


def test_normalize_words_and_phrase_hash() -> None:
    assert normalize_words("Project NIGHTJAR, phase-2: it's") == [
        "project",
        "nightjar",
        "phase",
        "2",
        "it",
        "s",
    ]
    assert phrase_hash(["project", "nightjar"]) == hashlib.sha256(b"project nightjar").hexdigest()


def _forget_phrase(store: Store, phrase: str) -> None:
    words = normalize_words(phrase)
    entry = f'{{"kind": "phrase", "hash": "{phrase_hash(words)}", "words": {len(words)}}}\n'
    with (store.memory / "deletions.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(entry)


def test_reintroduced_phrase(tmp_store: Store) -> None:
    _forget_phrase(tmp_store, "Project Nightjar")
    page = "---\nid: plans\ntitle: Plans\ntype: topic\nupdated: 2026-01-12\n---\n"
    path = tmp_store.memory / "knowledge" / "topics" / "plans.md"
    path.write_text(page + "Dana's night jar walk and nightjar photos.\n", encoding="utf-8")
    assert [f for f in validate_store(tmp_store) if f.code != "MF110"] == []  # uncited prose
    path.write_text(page + "Intro.\n\nThe *project*\n**NIGHTJAR** budget.\n", encoding="utf-8")
    findings = [f for f in validate_store(tmp_store) if f.code != "MF110"]
    assert [(f.path, f.line, f.code) for f in findings] == [
        ("memory/knowledge/topics/plans.md", 9, "MF503")
    ]
    assert "nightjar" not in findings[0].format().lower()  # the finding never repeats the phrase


def test_phrase_in_frontmatter_summary(tmp_store: Store) -> None:
    _forget_phrase(tmp_store, "Project Nightjar")
    text = (
        "---\nid: p\ntitle: P\ntype: topic\nsummary: about project nightjar\n"
        "updated: 2026-01-12\n---\n"
    )
    (tmp_store.memory / "notes" / "p.md").write_text(text, encoding="utf-8")
    assert [(f.line, f.code) for f in validate_store(tmp_store)] == [(5, "MF503")]


# -- robustness and speed ----------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    page=st.binary(max_size=300) | st.text(max_size=300).map(lambda s: ("---\n" + s).encode()),
    transcript=st.binary(max_size=300) | st.text(max_size=300).map(lambda s: s.encode()),
    log=st.text(max_size=200),
)
def test_any_bytes_give_findings_never_a_traceback(
    page: bytes, transcript: bytes, log: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "memory" / "knowledge").mkdir(parents=True)
        (root / "memory" / "sessions" / "transcripts").mkdir(parents=True)
        (root / "memory" / "sessions" / "summaries").mkdir(parents=True)
        (root / "memory" / "knowledge" / "x.md").write_bytes(page)
        (root / "memory" / "sessions" / "summaries" / "s.md").write_bytes(page)
        (root / "memory" / "sessions" / "transcripts" / "s.md").write_bytes(transcript)
        (root / "memory" / "deletions.jsonl").write_text(log, encoding="utf-8")
        from memoryfs.store.config import StoreConfig

        findings = validate_store(
            Store(root=root, config=StoreConfig(user="dana", assistant="atlas"))
        )
        assert all(f.code in CODES for f in findings)
        assert findings == sorted(findings, key=lambda f: (f.path, f.line, f.code, f.message))


def _generate_store(root: Path, sessions: int, pages: int) -> Store:
    from memoryfs.store.config import StoreConfig

    mem = root / "memory"
    (mem / "sessions" / "transcripts").mkdir(parents=True)
    (mem / "knowledge" / "topics").mkdir(parents=True)
    hashes = []
    for i in range(sessions):
        texts = [
            f"Session {i} turn {k}: the sample {i * 7 + k} was logged at site {k}."
            for k in (1, 2, 3, 4)
        ]
        turns = "".join(
            f"\n## t{k} · user · 2026-01-01T10:0{k}\n\n{text}\n" for k, text in enumerate(texts, 1)
        )
        (mem / "sessions" / "transcripts" / f"s{i:05d}.md").write_text(
            f"---\nid: s{i:05d}\ntype: session\nstarted: 2026-01-01T10:00\nparticipants: [dana]\n"
            f"scope:\n  user: dana\n  assistant: atlas\n---\n{turns}",
            encoding="utf-8",
        )
        hashes.append(turn_hash(texts[1]))
    for j in range(pages):
        s = j % sessions
        (mem / "knowledge" / "topics" / f"p{j:05d}.md").write_text(
            f"---\nid: p{j:05d}\ntitle: Page {j}\ntype: topic\naliases: [Topic {j}]\n"
            f"updated: 2026-01-02\nsources:\n  - id: 1\n"
            f"    ref: sessions/transcripts/s{s:05d}.md#t2\n    at: 2026-01-01\n"
            f"    hash: '{hashes[s]}'\n---\n# Page {j}\n\n"
            f"- A fact about [[p{(j + 1) % pages:05d}]] [cite:1]\n"
            f"- Related: [[Topic {(j + 2) % pages}]]\n\nSome prose with `code [[x]]`. [cite:1]\n",
            encoding="utf-8",
        )
    (mem / "deletions.jsonl").write_text(
        '{"kind": "page", "id": "gone"}\n'
        f'{{"kind": "phrase", "hash": "{phrase_hash(["secret", "words"])}", "words": 2}}\n',
        encoding="utf-8",
    )
    return Store(root=root, config=StoreConfig(user="dana", assistant="atlas"))


@pytest.mark.slow
def test_speed_on_a_generated_store(tmp_path: Path) -> None:
    store = _generate_store(tmp_path / "big", sessions=200, pages=500)
    start = time.perf_counter()
    findings = validate_store(store)
    elapsed = time.perf_counter() - start
    assert findings == []
    assert elapsed < 5.0  # about 0.3 s here; 2,000 sessions + 5,000 pages take a few seconds


def test_regression_deeply_nested_json_in_the_log_is_a_finding(tmp_store: Store) -> None:
    (tmp_store.memory / "deletions.jsonl").write_text("[" * 100_000 + "\n", encoding="utf-8")
    assert [(f.line, f.code) for f in validate_store(tmp_store)] == [(1, "MF501")]


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    numbers=st.lists(st.integers(min_value=0, max_value=9), max_size=8),
    texts=st.lists(st.text(max_size=12), min_size=8, max_size=8),
    sequential=st.booleans(),
)
def test_turn_hashes_name_the_turns_transcript_turn_gives(
    numbers: list[int], texts: list[str], sequential: bool
) -> None:
    """What validation keeps of a transcript (``TurnHashes``, packed small) answers every
    anchor as ``Transcript.turn`` does: numbered 1..n, or out of order and repeated."""
    from memoryfs.validate.read import TurnHashes

    if sequential:
        numbers = list(range(1, len(numbers) + 1))
    turns = tuple(
        Turn(n=n, speaker="dana", ts="", text=texts[i], line=i + 1) for i, n in enumerate(numbers)
    )
    t = Transcript(id="s1", started="2026-01-01", participants=("dana",), scope={}, turns=turns)
    kept = TurnHashes(t)
    for anchor in [f"t{n}" for n in range(-1, 12)] + ["t", "x1", "t01", "t1a"]:
        turn = t.turn(anchor)
        assert kept.hash_of(anchor) == (turn.hash if turn is not None else None), anchor
    if sequential and turns:
        assert isinstance(kept.numbers, int) and isinstance(kept.hashes, bytes)
