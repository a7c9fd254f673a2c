"""``memoryfs forget``: tombstones without content, removal, redaction, re-ingest, purge."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from forget_fixtures import (
    PHRASE,
    S1,
    S2,
    SESSIONS,
    build_store,
    findings,
    session_file,
    turn_hash_of,
)
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from cli.memoryfs_app import app
from memoryfs.errors import MemoryFSError
from memoryfs.forget.deletions import (
    REDACTED,
    decode_traces,
    has_phrase,
    load_deletions,
    parse_entries,
    redact,
    word_spans,
)
from memoryfs.forget.purge import purge_history
from memoryfs.forget.remove import forget
from memoryfs.forget.verify import verify_forgotten
from memoryfs.ingest import ingest
from memoryfs.pages.page import parse_page
from memoryfs.pages.transcript import parse_transcript
from memoryfs.store.store import Store
from memoryfs.validate.rules import normalize_words, phrase_hash, validate_store

REASON = "asked to forget an address"


@pytest.fixture
def store(tmp_store: Store, tmp_path: Path) -> Store:
    return build_store(tmp_store, tmp_path)


def git(store: Store, *args: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(store.root), *args], capture_output=True, check=True
    ).stdout
    return out.decode("utf-8", errors="replace")


def memory_text(store: Store) -> str:
    """Every file under memory/ (what grep -r would see), lower-cased."""
    return "\n".join(
        p.read_text(encoding="utf-8").lower() for p in store.memory.rglob("*") if p.is_file()
    )


def page(store: Store, rel: str) -> str:
    return (store.memory / rel).read_text(encoding="utf-8")


def test_phrase_is_redacted_in_transcripts_and_its_claims_removed(store: Store) -> None:
    before = {sid: parse_transcript(store.transcript_path(sid).read_text()) for sid in SESSIONS}
    head = store.head()
    result = forget(store, "phrase", PHRASE, REASON)

    assert "heron" not in memory_text(store)
    assert validate_store(store) == []
    # one commit on top, named after the kind and the reason, touching only what changed
    assert git(store, "rev-parse", "HEAD~1").strip() == head
    assert git(store, "log", "-1", "--format=%s").strip() == f"forget: phrase ({REASON})"
    assert git(store, "status", "--porcelain").strip() == ""
    changed = set(git(store, "show", "--name-only", "--format=", "HEAD").split())
    receipts = {f for f in changed if f.startswith(".dream/receipts/")}
    assert len(receipts) == 1  # an ingested receipt per redacted transcript (their new version)
    assert changed - receipts == {
        "memory/deletions.jsonl",
        "memory/INDEX.md",
        "memory/knowledge/people/lena.md",
        "memory/notes/travel/lisbon-trip.md",
        f"memory/sessions/summaries/{S2}.md",
        f"memory/sessions/transcripts/{S1}.md",
        f"memory/sessions/transcripts/{S2}.md",
    }
    # transcripts: only the turns holding the phrase changed, and only by the marker
    for sid, old in before.items():
        new = parse_transcript(store.transcript_path(sid).read_text())
        assert [(t.n, t.speaker, t.ts) for t in new.turns] == [
            (t.n, t.speaker, t.ts) for t in old.turns
        ]
        for a, b in zip(old.turns, new.turns, strict=True):
            assert b.text == a.text or "heron" in a.text.lower()
    assert parse_transcript(store.transcript_path(S1).read_text()).turns[1].text == (
        f"My sister Lena lives at 12 {REDACTED} in Kiel."
    )
    assert parse_transcript(store.transcript_path(S2).read_text()).turns[1].text == (
        f"Lena will pick me up; her address is 12 {REDACTED}."
    )
    # pages: the claim lines went with the sources only they used; a multi-line item went whole
    lena = parse_page(page(store, "knowledge/people/lena.md"))
    assert [s.id for s in lena.sources] == [2]
    assert "Picks Dana up from trips. [cite:2]" in lena.body
    note = page(store, "notes/travel/lisbon-trip.md")
    assert "Pickup" not in note and "Lane." not in note
    assert "Conference in Lisbon" in note
    assert result.lines_removed == 4 and result.turns_redacted == 2
    assert result.removed == ()


def test_surviving_citation_of_a_redacted_turn_gets_the_new_hash(store: Store) -> None:
    old_hash = turn_hash_of(store, S2, 2)
    result = forget(store, "phrase", PHRASE, REASON)
    new_hash = turn_hash_of(store, S2, 2)
    assert new_hash != old_hash
    lena = parse_page(page(store, "knowledge/people/lena.md"))
    assert [s.hash for s in lena.sources] == [new_hash]
    assert result.citations_rehashed == 1
    # the frontmatter edit touches only the changed lines (no re-rendering noise)
    diff = git(store, "show", "HEAD", "--", "memory/knowledge/people/lena.md")
    assert "-  - Lena K" not in diff and f"+    hash: '{new_hash}'" in diff


def test_stale_citation_is_not_laundered_by_a_redaction(store: Store) -> None:
    path = store.memory / "knowledge/people/lena.md"
    stale = path.read_text().replace(turn_hash_of(store, S2, 2), "deadbeef")
    path.write_text(stale)
    store.commit("stale citation")
    forget(store, "phrase", PHRASE, REASON)
    assert [s.hash for s in parse_page(path.read_text()).sources] == ["deadbeef"]


def test_tombstone_keeps_no_forgotten_content(store: Store) -> None:
    forget(store, "phrase", PHRASE, REASON)
    log = page(store, "deletions.jsonl")
    assert "heron" not in log.lower()
    entry = json.loads(log.splitlines()[-1])
    words = normalize_words(PHRASE)
    assert entry == {
        "kind": "phrase",
        "hash": phrase_hash(words),
        "words": len(words),
        "reason": REASON,
        "at": entry["at"],
    }
    assert len(entry["at"]) == 10  # ISO date


def test_forget_page_removes_it_and_unlinks_it(store: Store) -> None:
    result = forget(store, "page", "lena", "no longer relevant")
    assert result.removed == ("knowledge/people/lena.md",)
    assert not (store.memory / "knowledge/people/lena.md").exists()
    # a "Related" entry that was only the link goes, and its heading with it
    assert page(store, "knowledge/people/dana.md").endswith("12 February 2026. [cite:3]\n")
    assert "[[lena]]" not in page(store, "notes/travel/lisbon-trip.md")
    assert "lena.md" not in page(store, "INDEX.md")
    assert json.loads(page(store, "deletions.jsonl").splitlines()[-1])["id"] == "lena"
    assert findings(store) == []


def test_forget_session_removes_transcript_summary_and_claims(store: Store) -> None:
    result = forget(store, "session", S2, "wrong person")
    assert set(result.removed) == {
        f"sessions/transcripts/{S2}.md",
        f"sessions/summaries/{S2}.md",
        # every source of the note was that session: its id and title were made of it
        "notes/travel/lisbon-trip.md",
    }
    dana = parse_page(page(store, "knowledge/people/dana.md"))
    assert "Lisbon" not in dana.body and [s.id for s in dana.sources] == [1, 2]
    assert S2 not in memory_text(store).replace(json.dumps(S2).lower(), "").replace(
        f'"id": "{S2}"', ""
    )
    assert S2 not in page(store, "sessions/index.md")
    assert validate_store(store) == []


@pytest.mark.parametrize(
    ("kind", "target", "reason", "message"),
    [
        ("phrase", PHRASE, "the blue-heron LANE thing", "repeats the phrase"),
        ("phrase", "...", REASON, "no words"),
        ("phrase", "Forgotten", REASON, "redaction marker"),
        ("page", "../etc/passwd", REASON, "not a page id"),
        ("page", "nobody", REASON, "no page 'nobody'"),
        ("session", "../x", REASON, "not a session id"),
        ("session", "2020-01-01-none", REASON, "no session"),
        ("page", "lena", "  ", "give a --reason"),
        ("page", "lena", "two\nlines", "one line"),
        ("kind", "x", REASON, "unknown kind"),
    ],
)
def test_bad_requests_are_refused_and_change_nothing(
    store: Store, kind: str, target: str, reason: str, message: str
) -> None:
    head = store.head()
    with pytest.raises(MemoryFSError, match=message):
        forget(store, kind, target, reason)
    assert store.head() == head and git(store, "status", "--porcelain") == ""


def test_forgetting_twice_says_so(store: Store) -> None:
    forget(store, "page", "lena", "gone")
    with pytest.raises(MemoryFSError, match="already forgotten"):
        forget(store, "page", "lena", "gone")
    forget(store, "phrase", PHRASE, REASON)
    with pytest.raises(MemoryFSError, match="already forgotten"):
        forget(store, "phrase", PHRASE.upper(), REASON)


def test_phrase_in_a_session_id_is_refused(store: Store, tmp_path: Path) -> None:
    ingest(store, [session_file(tmp_path / "in", "2026-02-01-kiel-visit", [("user", "hi")])])
    with pytest.raises(MemoryFSError, match="--session 2026-02-01-kiel-visit"):
        forget(store, "phrase", "kiel visit", REASON)


def test_unknown_phrase_is_still_recorded_as_a_guard(store: Store) -> None:
    result = forget(store, "phrase", "my passport number", "never store it")
    assert result.logged and result.commit and result.turns_redacted == 0
    assert len(load_deletions(store).phrases) == 1


def test_reingesting_forgotten_content_does_not_bring_it_back(store: Store, tmp_path: Path) -> None:
    forget(store, "phrase", PHRASE, REASON)
    forget(store, "session", S2, "wrong person")
    grown = [*SESSIONS[S1], ("user", "Send the parcel to blue heron lane please.")]
    result = ingest(store, [session_file(tmp_path / "again", S1, grown)])
    result2 = ingest(store, [session_file(tmp_path / "again", S2)])
    assert [(s.id, s.status, s.turns_added) for s in result.sessions] == [(S1, "grown", 1)]
    assert [(s.id, s.status) for s in result2.sessions] == [(S2, "forgotten")]
    assert not store.transcript_path(S2).exists()
    last = parse_transcript(store.transcript_path(S1).read_text()).turns[-1]
    assert last.text == f"Send the parcel to {REDACTED} please."
    assert "heron" not in memory_text(store)


def test_interrupted_forget_is_finished_by_running_it_again(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(self: Store, message: str, paths: list[str] | None = None) -> str:
        raise KeyboardInterrupt  # as if killed after writing, before committing

    with monkeypatch.context() as m:
        m.setattr(Store, "commit", crash)
        with pytest.raises(KeyboardInterrupt):
            forget(store, "page", "lena", "gone")
    assert git(store, "status", "--porcelain") != ""
    forget(store, "page", "lena", "gone")
    assert git(store, "status", "--porcelain") == ""
    assert "lena.md" not in git(store, "ls-files")
    assert findings(store) == []


def test_caches_are_dropped_but_locks_kept(store: Store) -> None:
    (store.cache_dir / "search").mkdir(parents=True)
    (store.cache_dir / "search" / "fts.sqlite").write_text("blue heron lane")
    forget(store, "phrase", PHRASE, REASON)
    assert not (store.cache_dir / "search").exists()
    assert (store.cache_dir / "locks").is_dir()


def test_forget_session_takes_derived_summary_and_empty_headings(store: Store) -> None:
    lena = store.memory / "knowledge/people/lena.md"
    lena.write_text(
        lena.read_text().replace("- Picks Dana up", "## 2026-01-09\n\n- Picks Dana up"),
        encoding="utf-8",
    )
    store.commit("a dated section")
    forget(store, "session", S2, "wrong person")
    kept = parse_page(page(store, "knowledge/people/lena.md"))
    # the summary was made of the claims, one of them from the session: it goes
    assert "summary" not in kept.meta
    # the dated section lost its only claim: its heading would still say when
    assert "2026-01-09" not in kept.body and "Picks Dana up" not in kept.body
    assert "Blue Heron Lane in Kiel. [cite:1]" in kept.body  # S1's claim stays


def test_forget_session_takes_the_first_date_and_aliases_only_it_gave(store: Store) -> None:
    lena = store.memory / "knowledge/people/lena.md"
    text = lena.read_text().replace("  - Lena K\n", "  - Lena K\n  - Kiel\n")
    lena.write_text(text.replace("updated: 2026-01-09", "created: 2026-01-05\nupdated: 2026-01-09"))
    store.commit("an alias and a first date")
    forget(store, "session", S1, "wrong person")
    kept = parse_page(page(store, "knowledge/people/lena.md"))
    # "Kiel" was said only in the forgotten session; "Lena K" never came from it
    assert list(kept.aliases) == ["Lena K"]
    assert str(kept.meta["created"]) == "2026-01-09"  # the first date of what is left
    assert findings(store) == []


def test_session_tombstone_keeps_traces_not_text(store: Store) -> None:
    forget(store, "session", S2, "wrong person")
    entry = json.loads(page(store, "deletions.jsonl").splitlines()[-1])
    assert set(entry) == {"kind", "id", "reason", "at", "traces"}
    traces = decode_traces(entry["traces"])
    assert traces  # windows no other transcript holds
    assert re.fullmatch(r"[A-Za-z0-9+/]+=*", entry["traces"])  # hashes, base64
    rest = normalize_words(json.dumps({k: v for k, v in entry.items() if k != "traces"}))
    assert not (
        set(rest)
        - set(normalize_words(S2))
        - {"kind", "session", "id", "reason"}
        - {"wrong", "person", "at"}
        - set(normalize_words(entry["at"]))
    )
    # a derived line that repeats the session's words, with no citation, is found
    d = load_deletions(store)
    assert has_phrase("I'm flying to Lisbon on 12 February for the talk", d, traces=True)
    assert not has_phrase("I'm flying to Lisbon on 12 February for the talk", d)


def test_validation_finds_a_forgotten_sessions_words_back_without_a_citation(
    store: Store,
) -> None:
    forget(store, "session", S2, "wrong person")
    assert findings(store) == []
    note = store.memory / "notes/travel/again.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text(
        "---\nid: again\ntitle: Again\ntype: note\nupdated: 2026-01-10\n---\n"
        "Flying to Lisbon on 12 February for the conference, they said.\n",
        encoding="utf-8",
    )
    assert ("memory/notes/travel/again.md", "MF503") in {(f.path, f.code) for f in findings(store)}


def test_forget_scrubs_dream_run_logs_worktrees_and_kept_runs(store: Store) -> None:
    runs = store.dream_dir / "runs"
    runs.mkdir(parents=True)
    log = {
        "run_id": "r1",
        "message": "dream: 1 session, about Blue Heron Lane",
        "sessions": [S1, S2],
        "pages_created": ["notes/travel/lisbon-trip.md", "knowledge/people/dana.md"],
        "left_out": [{"path": "notes/lena/12-blue-heron-lane.md", "why": "MF110"}],
    }
    (runs / "r1.json").write_text(json.dumps(log), encoding="utf-8")
    staged = store.dream_dir / "worktrees" / ".spare"
    git(store, "worktree", "add", "-q", "--detach", str(staged))
    git(store, "branch", "dream/kept")  # holds the phrase in its tree
    result = forget(store, "phrase", PHRASE, REASON)
    after = json.loads((runs / "r1.json").read_text(encoding="utf-8"))
    assert "heron" not in json.dumps(after).lower()
    assert after["left_out"] == [] and after["sessions"] == [S1, S2]
    assert after["pages_created"] == ["notes/travel/lisbon-trip.md", "knowledge/people/dana.md"]
    assert not staged.exists() and "dream/kept" not in git(store, "branch", "--list")
    assert result.derived.branches == ("refs/heads/dream/kept",)
    assert result.verify.ok and not result.verify.history


def test_verify_names_each_place_that_still_holds_it(store: Store) -> None:
    forget(store, "phrase", PHRASE, REASON)
    (store.cache_dir / "search.sqlite").write_bytes(b"\x00 blue heron lane \x00")
    (store.dream_dir / "runs").mkdir(parents=True)
    (store.dream_dir / "runs" / "x.json").write_text('{"m": "Blue-Heron lane"}')
    report = verify_forgotten(store, history=True)
    assert [r.place for r in report.remains] == ["caches", "dream logs", "git objects"]
    assert all("heron" not in r.line().lower() for r in report.remains)


def test_purge_history_leaves_no_commit_with_the_phrase(store: Store) -> None:
    git(store, "branch", "dream/kept-run")
    git(store, "tag", "-a", "v1", "-m", "tagged before Blue Heron Lane was forgotten")
    git(store, "commit", "--allow-empty", "-q", "-m", "a message naming blue heron lane")
    forget(store, "phrase", PHRASE, REASON)
    # a kept Dream run whose tree holds the phrase would bring it back on review: it goes
    assert "dream/kept-run" not in git(store, "branch", "--list")
    tree = git(store, "rev-parse", "HEAD^{tree}")
    assert "heron" in git(store, "log", "-p", "--all").lower()  # a forget alone keeps history

    result = purge_history(store)

    assert "heron" not in git(store, "log", "-p", "--all").lower()
    objects = subprocess.run(
        ["git", "-C", str(store.root), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    ).stdout
    assert b"heron" not in objects.lower()  # not even unreachable leftovers
    assert git(store, "rev-parse", "HEAD^{tree}") == tree  # the live tree was clean already
    assert set(result.refs) >= {"refs/heads/main", "refs/tags/v1"}
    assert result.verify.ok and result.verify.history
    assert result.rewritten >= 3 and result.commits >= result.rewritten
    assert git(store, "status", "--porcelain") == "" and validate_store(store) == []
    subprocess.run(["git", "-C", str(store.root), "fsck", "--strict"], check=True)


def test_purge_history_of_a_session(store: Store) -> None:
    forget(store, "session", S2, "wrong person")
    purge_history(store)
    log = git(store, "log", "-p", "--all", "--", "memory/sessions", "memory/knowledge")
    assert "flying to Lisbon" not in log and "Flies to Lisbon" not in log
    assert f"transcripts/{S2}.md" not in git(store, "log", "--all", "--name-only")


def test_purge_removes_dream_worktrees_and_refuses_foreign_ones(
    store: Store, tmp_path: Path
) -> None:
    staged = store.dream_dir / "worktrees" / "run-1"
    git(store, "worktree", "add", "-q", "-b", "dream/run-1", str(staged))
    forgot = forget(store, "phrase", PHRASE, REASON)
    assert forgot.derived.worktrees == (str(staged),) and not staged.exists()  # the forget's
    # a kept run holding the phrase, from before the forget: the purge rewrites it
    git(store, "worktree", "add", "-q", "-b", "dream/run-1", str(staged), "HEAD~1")
    foreign = tmp_path / "elsewhere"
    git(store, "worktree", "add", "-q", "--detach", str(foreign))
    with pytest.raises(MemoryFSError, match="worktrees outside .dream"):
        purge_history(store)
    git(store, "worktree", "remove", "--force", str(foreign))
    result = purge_history(store)
    assert result.worktrees_removed == (str(staged),) and not staged.exists()
    assert "refs/heads/dream/run-1" in result.refs
    assert "heron" not in git(store, "log", "-p", "--all").lower()


def test_purge_needs_a_deletion_log(tmp_store: Store) -> None:
    with pytest.raises(MemoryFSError, match="nothing to purge"):
        purge_history(tmp_store)


# -- CLI -------------------------------------------------------------------------


def test_cli_forget_json(store: Store) -> None:
    result = CliRunner().invoke(
        app,
        ["forget", "--phrase", PHRASE, "--reason", REASON, "--store", str(store.root), "--json"],
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["forget"]["turnsRedacted"] == 2 and data["forget"]["entry"]["words"] == 3


@pytest.mark.parametrize(
    "args",
    [
        ["--page", "lena", "--session", S2, "--reason", "x"],
        ["--reason", "x"],
        ["--page", "lena"],
        ["--phrase", PHRASE, "--reason", "about the blue heron lane"],
    ],
)
def test_cli_forget_bad_usage(store: Store, args: list[str]) -> None:
    head = store.head()
    result = CliRunner().invoke(app, ["forget", *args, "--store", str(store.root)])
    assert result.exit_code != 0
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("error:")
    assert store.head() == head


def test_cli_purge_asks_first(store: Store) -> None:
    head = store.head()
    no = CliRunner().invoke(
        app,
        ["forget", "--page", "lena", "--reason", "gone", "--purge-history"]
        + ["--store", str(store.root)],
        input="n\n",
    )
    assert no.exit_code == 1 and "aborted" in no.stderr and store.head() == head
    yes = CliRunner().invoke(
        app,
        ["forget", "--page", "lena", "--reason", "gone", "--purge-history"]
        + ["--store", str(store.root)],
        input="y\n",
    )
    assert yes.exit_code == 0, yes.stderr
    assert "purged history" in yes.stdout
    assert "Blue Heron Lane in Kiel. [cite:1]" not in git(store, "log", "-p", "--all")


# -- matching ----------------------------------------------------------------------


@given(st.text())
def test_word_spans_agree_with_the_validator(text: str) -> None:
    spans = word_spans(text)
    assert [w for w, _, _ in spans] == normalize_words(text)
    for _, start, end in spans:
        assert 0 <= start < end <= len(text)


@given(st.text(), st.text())
def test_redaction_leaves_no_match(prefix: str, suffix: str) -> None:
    d = parse_entries([{"kind": "phrase", "hash": phrase_hash(["blue", "heron"]), "words": 2}])
    out = redact(f"{prefix} Blue  HERON {suffix}", d)
    assert "blue heron" not in " ".join(normalize_words(out))


def test_matching_is_on_normalized_words() -> None:
    d = parse_entries([{"kind": "phrase", "hash": phrase_hash(["blue", "heron"]), "words": 2}])
    assert redact("at BLUE-heron, and blue\nheron; not blueheron", d) == (
        f"at {REDACTED}, and {REDACTED}; not blueheron"
    )
    d2 = parse_entries(
        [{"kind": "phrase", "hash": phrase_hash(normalize_words("İzmir")), "words": 2}]
    )
    assert redact("in İzmir today", d2) == f"in {REDACTED} today"


# -- crash safety --------------------------------------------------------------------


@pytest.mark.slow
def test_forget_killed_at_random_points_is_finished_by_running_it_again(
    store: Store, tmp_path: Path
) -> None:
    """SIGKILL a real ``memoryfs forget`` (forked child) at 8 random moments; each time
    ``git fsck`` is clean and running the same forget again gives the uninterrupted tree."""
    import random
    import shutil
    import signal
    import time

    from forkrun import fork_cli, wait_exit, wait_group_gone

    def run(root: Path) -> int:
        args = ["forget", "--phrase", PHRASE, "--reason", REASON, "--store", str(root)]
        return fork_cli(args)

    reference = tmp_path / "reference"
    shutil.copytree(store.root, reference, symlinks=True)
    start = time.monotonic()
    assert wait_exit(run(reference)) == 0
    duration = time.monotonic() - start
    tree = git(Store.open(reference), "rev-parse", "HEAD:memory")  # receipts differ in time
    rng = random.Random(3)
    killed = 0
    for i in range(8):
        root = tmp_path / f"run-{i}"
        shutil.copytree(store.root, root, symlinks=True)
        pid = run(root)
        time.sleep(rng.uniform(0.2, 1.0) * duration)
        (os_killpg if i % 2 else os_kill)(pid, signal.SIGKILL)
        killed += wait_exit(pid) == -signal.SIGKILL
        wait_group_gone(pid)
        victim = Store.open(root)
        subprocess.run(["git", "-C", str(root), "fsck", "--no-progress"], check=True)
        git(victim, "rev-parse", "--verify", "main^{commit}")
        try:
            forget(victim, "phrase", PHRASE, REASON)
        except MemoryFSError as exc:  # the killed run had committed already
            assert "already forgotten" in str(exc)
        assert git(victim, "rev-parse", "HEAD:memory") == tree
        assert git(victim, "status", "--porcelain") == "" and validate_store(victim) == []
    assert killed >= 4


def os_kill(pid: int, sig: int) -> None:
    import contextlib
    import os

    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def os_killpg(pid: int, sig: int) -> None:
    import contextlib
    import os

    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, sig)


def test_forgetting_a_session_a_killed_ingest_left_uncommitted(
    store: Store, tmp_path: Path
) -> None:
    from memoryfs.ingest import load_sessions, plan_ingest
    from memoryfs.store.atomic import atomic_write_text

    src = session_file(tmp_path / "late", "2026-02-02-late", [("user", "a late session")])
    for change, text in plan_ingest(store, load_sessions(store, src)):
        assert text is not None
        atomic_write_text(store.transcript_path(change.id), text)  # written, never committed
    result = forget(store, "session", "2026-02-02-late", "not wanted")
    assert result.commit and not store.transcript_path("2026-02-02-late").exists()
    assert git(store, "status", "--porcelain") == ""
