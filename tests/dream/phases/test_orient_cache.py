"""Orient's per-file facts in SQLite (``.memoryfs/dream-orient.sqlite``, ``dream.phases.orient``):
the pending sessions are those read from the commit's files, warm or cold, a blob that
changed is read again, and a cache that cannot be read or used is rebuilt or bypassed,
never a wrong answer."""

from __future__ import annotations

import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import pytest
from dream_fixtures import ScriptedEngine, add_sessions, cache_behind_symlink, damage_cache

from dream.errors import DreamError
from dream.landing.staging import Stage
from dream.phases import orient as orient_module
from dream.phases.orient import CACHE_NAME, find_pending
from dream.runner import RunOptions, run_dream
from dream.skills import approve
from memoryfs.pages.page import parse_page
from memoryfs.pages.transcript import parse_transcript
from memoryfs.store.hashing import content_hash
from memoryfs.store.store import Store, init_store

S1 = ("2026-01-05-figures", "2026-01-05", ["I need the figures as PDF for Reefsong.", "Sure."])
S2 = ("2026-01-06-marta", "2026-01-06", ["Marta is a nurse at the UKE in Hamburg.", "Noted."])
S3 = ("2026-01-07-lisbon", "2026-01-07", ["The Lisbon workshop is on 12 March.", "Great."])
Row = tuple[str, str, int, str]  # id, reason, turns, content hash


def _git(store: Store, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=store.root, capture_output=True, check=True).stdout


def _head(store: Store) -> str:
    return _git(store, "rev-parse", "HEAD").decode().strip()


def _transcripts(store: Store, rev: str) -> list[str]:
    listed = _git(store, "ls-tree", "--name-only", rev, "memory/sessions/transcripts/")
    return [rel for rel in listed.decode().split() if rel.endswith(".md") and "/." not in rel]


def _truth(store: Store) -> list[Row]:
    """The pending sessions at HEAD read from the files themselves, without any cache."""
    found: list[tuple[str, Row]] = []
    for rel in _transcripts(store, "HEAD"):
        raw = _git(store, "show", f"HEAD:{rel}")
        t = parse_transcript(raw.decode(), rel)
        summary = f"memory/sessions/summaries/{t.id}.md"
        if _git(store, "ls-tree", "--name-only", "HEAD", summary).strip():
            meta = parse_page(_git(store, "show", f"HEAD:{summary}").decode(), summary).meta
            if meta.get("transcript_hash") == content_hash(raw):
                continue
            reason = "grown"
        else:
            reason = "new"
        found.append((t.started, (t.id, reason, len(t.turns), content_hash(raw))))
    return [row for _, row in sorted(found)]


def _pending(store: Store, commit: str = "HEAD") -> list[Row]:
    rev = _git(store, "rev-parse", commit).decode().strip()
    pending, total = find_pending(store, rev)
    assert total == len(_transcripts(store, rev))
    return [(p.id, p.reason, p.turns, p.content_hash) for p in pending]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """S1 and S2 summarized, S3 new, then S2 grown by a turn."""
    s = init_store(tmp_path / "store", "dana", "atlas")
    approve(s, by="tests")
    add_sessions(s, tmp_path / "in", [S1, S2, S3])
    assert run_dream(s, ScriptedEngine(), RunOptions(max_sessions=2)).pending_after == 1
    add_sessions(s, tmp_path / "in2", [(S2[0], S2[1], [*S2[2], "She also cycles to work."])])
    return s


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Which blobs' facts orient derives from the files (rather than the cache)."""
    read: list[str] = []
    for name in ("_transcript_facts", "_summary_facts"):
        real = getattr(orient_module, name)
        monkeypatch.setattr(
            orient_module, name, lambda data, real=real, name=name: read.append(name) or real(data)
        )
    return read


def test_warm_and_cold_give_what_the_files_say(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _truth(store)
    assert [(sid, reason, turns) for sid, reason, turns, _ in expected] == [
        (S2[0], "grown", 3),
        (S3[0], "new", 2),
    ]
    (store.cache_dir / CACHE_NAME).unlink()
    read = _reads(monkeypatch)
    assert _pending(store) == expected  # cold: every blob read
    assert sorted(read) == ["_summary_facts"] * 2 + ["_transcript_facts"] * 3
    read.clear()
    assert _pending(store) == expected  # warm: none read
    assert read == []


def test_a_transcript_that_gained_turns_is_read_again(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _pending(store)  # warm
    read = _reads(monkeypatch)
    longer = (S3[0], S3[1], [*S3[2], "Tiago is coming too.", "Noted."])
    add_sessions(store, tmp_path / "in3", [longer])
    assert _pending(store) == _truth(store)
    assert _pending(store)[1][:3] == (S3[0], "new", 4)
    assert read == ["_transcript_facts"]  # only the new blob
    assert _pending(store, "HEAD~1") == _truth_at_parent(store)
    # a summarized session that gains turns after its run is pending again
    result = run_dream(store, ScriptedEngine())
    assert result.status == "committed" and result.pending_after == 0
    assert _pending(store) == []
    again = (S1[0], S1[1], [*S1[2], "Make it four figures."])
    add_sessions(store, tmp_path / "in4", [again])
    assert _pending(store) == _truth(store)
    assert [row[:3] for row in _pending(store)] == [(S1[0], "grown", 3)]


def _truth_at_parent(store: Store) -> list[Row]:
    """S2 grown and S3 with its two turns: what HEAD~1 held."""
    raw = {
        sid: _git(store, "show", f"HEAD~1:memory/sessions/transcripts/{sid}.md")
        for sid in (S2[0], S3[0])
    }
    return [
        (S2[0], "grown", 3, content_hash(raw[S2[0]])),
        (S3[0], "new", 2, content_hash(raw[S3[0]])),
    ]


@pytest.mark.parametrize("damage", ["garbage", "empty", "truncated", "other-version", "gone"])
def test_a_cache_that_cannot_be_read_is_rebuilt(store: Store, damage: str) -> None:
    expected = _truth(store)
    assert _pending(store) == expected
    path = store.cache_dir / CACHE_NAME
    damage_cache(path, damage)
    assert _pending(store) == expected
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1
        assert db.execute("SELECT count(*) FROM transcripts").fetchone()[0] == 3


def test_a_locked_cache_is_bypassed_not_deleted(store: Store) -> None:
    expected = _truth(store)
    (store.cache_dir / CACHE_NAME).unlink()
    with closing(sqlite3.connect(store.cache_dir / CACHE_NAME)) as other:
        other.execute("CREATE TABLE mine(x)")
        other.execute("BEGIN EXCLUSIVE")  # another process writing it
        other.execute("INSERT INTO mine VALUES (1)")
        assert _pending(store) == expected  # worked in memory
        other.commit()
    with closing(sqlite3.connect(store.cache_dir / CACHE_NAME)) as db:  # not deleted
        assert db.execute("SELECT count(*) FROM mine").fetchone()[0] == 1


def test_a_symlinked_cache_folder_is_never_written_through(store: Store, tmp_path: Path) -> None:
    expected = _truth(store)
    elsewhere = cache_behind_symlink(store, tmp_path)
    (elsewhere / CACHE_NAME).unlink()
    assert _pending(store) == expected
    assert not (elsewhere / CACHE_NAME).exists()


def test_the_json_cache_of_the_earlier_design_is_deleted_unread(store: Store) -> None:
    old = store.cache_dir / "dream-orient.json"
    old.write_text('{"version": 1, "transcripts": {}, "summaries": {}}')
    assert _pending(store) == _truth(store)
    assert not old.exists()


def test_superseded_blobs_are_dropped_once_they_outnumber_the_tree(store: Store) -> None:
    _pending(store)
    path = store.cache_dir / CACHE_NAME
    with closing(sqlite3.connect(path)) as db:
        rows = [(f"{i:040x}", "0" * 16, 1, "") for i in range(100)]
        db.executemany("INSERT INTO transcripts VALUES (?, ?, ?, ?)", rows)
        db.commit()
    assert _pending(store) == _truth(store)
    with closing(sqlite3.connect(path)) as db:
        blobs = {b for (b,) in db.execute("SELECT blob FROM transcripts")}
    live = _git(store, "rev-parse", f"HEAD:memory/sessions/transcripts/{S2[0]}.md")
    assert blobs and live.decode().strip() in blobs
    assert not any(b.startswith("0000000000") for b in blobs)


def test_an_unknown_commit_is_an_error(store: Store) -> None:
    with pytest.raises(DreamError, match="ls-tree"):
        find_pending(store, "0" * 40)


def test_a_session_that_grows_while_its_run_lands_is_still_pending(
    store: Store, tmp_path: Path
) -> None:
    """pending_after counts what ``main`` holds after the sync, not what the run read."""

    def grow_meanwhile(stage: Stage) -> None:
        longer = (S3[0], S3[1], [*S3[2], "Tiago is coming too."])
        add_sessions(store, tmp_path / "late", [longer])

    result = run_dream(store, ScriptedEngine(), before_sync=grow_meanwhile)
    assert result.status == "committed" and result.rebased == 1
    assert set(result.sessions) == {S2[0], S3[0]}
    assert result.pending_after == 1 == len(_truth(store))
    assert [row[:3] for row in _pending(store)] == [(S3[0], "grown", 3)]
