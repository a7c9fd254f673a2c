"""Turns changed after ingest: found in the working tree and in history; an append, an
ingest and a forget's redaction are no edit."""

from __future__ import annotations

from pathlib import Path

from dream_fixtures import add_sessions, git_out

from memoryfs.forget.remove import forget
from memoryfs.store.store import Store
from memoryfs.store.transcript_edits import edited_turns, transcript_edits
from memoryfs.validate.rules import validate_store

SID = "2026-03-02-henrik"
REL = f"sessions/transcripts/{SID}.md"
TURNS = ["Henrik Aalto lives in Hamburg.", "Noted.", "He prefers tea over coffee.", "OK."]


def _store(tmp_store: Store, tmp_path: Path) -> Path:
    add_sessions(tmp_store, tmp_path / "in", [(SID, "2026-03-02", TURNS)])
    return tmp_store.memory / REL


def test_working_tree_edit_of_an_earlier_turn(tmp_store: Store, tmp_path: Path) -> None:
    path = _store(tmp_store, tmp_path)
    path.write_text(path.read_text().replace("tea over coffee", "coffee over tea"), "utf-8")

    assert transcript_edits(tmp_store.root) == []  # history holds no edit
    (edit,) = transcript_edits(tmp_store.root, worktree=True)
    assert (edit.path, edit.turns, edit.commit) == (REL, (3,), "")
    assert path.read_text().split("\n")[edit.line - 1].startswith("## t3 ")
    codes = [(f.path, f.code) for f in validate_store(tmp_store)]
    assert (f"memory/{REL}", "MF405") in codes


def test_committed_edit_and_removed_turns(tmp_store: Store, tmp_path: Path) -> None:
    path = _store(tmp_store, tmp_path)
    text = path.read_text()
    path.write_text(text.replace("Hamburg", "Bergen").split("\n## t3 ")[0] + "\n", "utf-8")
    git_out(tmp_store, "commit", "-qam", "tidy up")
    sha = git_out(tmp_store, "rev-parse", "HEAD")

    (edit,) = transcript_edits(tmp_store.root, worktree=True)
    assert (edit.turns, edit.commit) == ((1, 3, 4), sha)
    assert edited_turns(tmp_store.root) == {REL: frozenset({1, 3, 4})}
    assert "in commit" in edit.describe()


def test_append_ingest_and_forget_are_no_edit(tmp_store: Store, tmp_path: Path) -> None:
    path = _store(tmp_store, tmp_path)
    add_sessions(tmp_store, tmp_path / "grow", [(SID, "2026-03-02", [*TURNS, "Anything else?"])])
    path.write_text(path.read_text() + "\n## t6 · user · 2026-03-02T10:05\n\nBy hand.\n", "utf-8")
    git_out(tmp_store, "commit", "-qam", "a turn appended by hand")
    forget(tmp_store, "phrase", "tea over coffee", reason="private")

    assert "tea over coffee" not in path.read_text()  # the forget redacted a turn
    assert transcript_edits(tmp_store.root, worktree=True) == []
    assert not [f for f in validate_store(tmp_store) if f.code == "MF405"]


def test_no_repository_no_edit(tmp_path: Path) -> None:
    assert transcript_edits(tmp_path, worktree=True) == []
