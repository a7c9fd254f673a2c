"""The materializer: working set, budget, manifest, incremental re-runs, symlink safety, CLI."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pytest
from read_fixtures import build_store, write_page
from typer.testing import CliRunner

from cli.memoryfs_app import app
from memoryfs.errors import MemoryFSError
from memoryfs.read.materialize import MANIFEST, add_files, blob_hash, materialize, plan_working_set
from memoryfs.read.search import FileRow
from memoryfs.store.store import Store

PREF = "memory/knowledge/preferences/figures.md"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return build_store(tmp_path / "store")


def _manifest(sandbox: Path) -> dict[str, dict]:
    data = json.loads((sandbox / MANIFEST).read_text())
    return {e["path"]: e for e in data["files"]}


def test_grep_finds_the_preference_in_the_sandbox(store: Store, tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    materialize(store, sandbox)
    out = subprocess.run(
        ["grep", "-rl", "PDF, not PNG", "memory"], cwd=sandbox, capture_output=True, text=True
    )
    assert out.returncode == 0
    assert "memory/knowledge/preferences/figures.md" in out.stdout.split()


def test_manifest_records_path_blob_reason_and_same_relative_paths(
    store: Store, tmp_path: Path
) -> None:
    sandbox = tmp_path / "sandbox"
    result = materialize(store, sandbox)
    files = _manifest(sandbox)
    assert files["memory/INDEX.md"]["reason"] == "index"
    assert files["memory/sessions/index.md"]["reason"] == "index"
    assert files[PREF]["reason"] == "preference"
    assert files["memory/knowledge/topics/pottery.md"]["reason"] == "most-linked"
    assert (
        files["memory/sessions/summaries/2023-05-08-friends-s01.md"]["reason"] == "recent-session"
    )
    assert not any("/transcripts/" in p for p in files)  # the full history stays in the store
    for path, entry in files.items():
        data = (sandbox / path).read_bytes()
        assert data == (store.root / path).read_bytes()
        assert entry["blob"] == blob_hash(data) and entry["bytes"] == len(data)
        git_blob = subprocess.run(
            ["git", "hash-object", str(sandbox / path)], capture_output=True, text=True
        ).stdout.strip()
        assert entry["blob"] == git_blob
    assert json.loads((sandbox / MANIFEST).read_text())["commit"] == store.head() == result.commit


def test_budget_is_respected_and_preferences_come_first(store: Store, tmp_path: Path) -> None:
    pref = (store.root / PREF).stat().st_size
    result = materialize(store, tmp_path / "sb", budget_bytes=pref)
    maps = {"memory/INDEX.md", "memory/sessions/index.md"}
    assert {e.path for e in result.files} == maps | {PREF}
    assert result.bytes == pref
    result = materialize(store, tmp_path / "sb2", budget_bytes=0)
    assert {e.path for e in result.files} == maps  # the maps always go
    assert result.bytes == 0


def test_plan_round_robins_linked_recent_and_sessions() -> None:
    def row(
        path: str, kind: str = "page", inbound: int = 0, updated: str = "2023-01-01"
    ) -> FileRow:
        layer = path.split("/")[0] if not path.startswith("sessions") else "sessions"
        return FileRow(path, layer, kind, path, path, "", updated, updated, False, 100, inbound)

    rows = [
        row("knowledge/a.md", inbound=5),
        row("knowledge/b.md", inbound=3),
        row("knowledge/c.md", updated="2023-09-01"),
        row("sessions/summaries/s1.md", kind="summary", updated="2023-08-01"),
        row("sessions/summaries/s2.md", kind="summary", updated="2023-09-01"),
        row("notes/n/x.md"),
    ]
    plan = plan_working_set(rows, budget_bytes=450)
    assert plan == [
        ("knowledge/a.md", "most-linked"),
        ("knowledge/c.md", "recently-updated"),
        ("sessions/summaries/s2.md", "recent-session"),
        ("notes/n/x.md", "note"),
    ]


def test_rerun_copies_only_what_changed_and_removes_deleted(store: Store, tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    first = materialize(store, sandbox)
    assert first.copied and first.unchanged == 0
    again = materialize(store, sandbox)
    assert again.copied == () and again.removed == () and again.unchanged == len(first.files)
    pottery = store.memory / "knowledge/topics/pottery.md"
    pottery.write_text(pottery.read_text().replace("Thursdays", "Fridays"))
    (store.memory / "notes/support/group.md").unlink()
    third = materialize(store, sandbox)
    assert third.copied == ("memory/knowledge/topics/pottery.md",)
    assert third.removed == ("memory/notes/support/group.md",)
    assert not (sandbox / "memory/notes/support").exists()  # emptied folders go too
    assert "Fridays" in (sandbox / "memory/knowledge/topics/pottery.md").read_text()
    assert "memory/notes/support/group.md" not in _manifest(sandbox)


def test_recalled_files_stay_across_reruns_until_deleted(store: Store, tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    transcript = "sessions/transcripts/2023-05-08-friends-s01.md"
    add_files(store, sandbox, [transcript])
    materialize(store, sandbox, budget_bytes=0)
    assert _manifest(sandbox)[f"memory/{transcript}"]["reason"] == "recall"
    (store.memory / transcript).unlink()
    result = materialize(store, sandbox)
    assert f"memory/{transcript}" in result.removed
    assert not (sandbox / "memory" / transcript).exists()


def test_symlinks_in_the_store_are_never_followed(store: Store, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "prefs").mkdir(parents=True)
    secret = "---\nid: secret\ntitle: Secret\ntype: preference\nupdated: 2030-01-01\n---\nsecret\n"
    (outside / "secret.md").write_text(secret)
    (outside / "prefs" / "also.md").write_text(secret)
    os.symlink(outside / "secret.md", store.memory / "knowledge/preferences/secret.md")
    os.symlink(outside / "prefs", store.memory / "knowledge/preferences/linked")
    sandbox = tmp_path / "sandbox"
    add_files(
        store,
        sandbox,
        [
            "knowledge/preferences/secret.md",
            "knowledge/preferences/linked/also.md",
            "../memory.toml",
        ],
    )
    materialize(store, sandbox)
    out = subprocess.run(["grep", "-rl", "secret", str(sandbox)], capture_output=True, text=True)
    assert out.stdout == ""


def test_never_writes_through_a_symlink_in_the_sandbox(store: Store, tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    victim = tmp_path / "victim"
    victim.mkdir()
    sandbox.mkdir()
    (sandbox / "memory").mkdir()
    os.symlink(victim, sandbox / "memory" / "knowledge")  # a folder link pointing out
    (victim / "INDEX.md").write_text("keep me")
    os.symlink(victim / "INDEX.md", sandbox / "memory" / "INDEX.md")  # a file link pointing out
    materialize(store, sandbox)
    assert list(victim.iterdir()) == [victim / "INDEX.md"]
    assert (victim / "INDEX.md").read_text() == "keep me"
    assert not (sandbox / "memory" / "knowledge").is_symlink()
    assert (sandbox / "memory" / "INDEX.md").read_bytes() == (
        store.memory / "INDEX.md"
    ).read_bytes()


def test_tampered_manifest_paths_are_ignored(store: Store, tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    keep = tmp_path / "keep.md"
    keep.write_text("x")
    bad = {
        "files": [
            {"path": "memory/../../keep.md", "blob": "0", "reason": "index", "bytes": 1},
            {"path": "/etc/passwd", "blob": "0", "reason": "recall", "bytes": 1},
            7,
        ]
    }
    (sandbox / MANIFEST).write_text(json.dumps(bad))
    materialize(store, sandbox)
    assert keep.exists()
    (sandbox / MANIFEST).write_text("{not json")
    assert materialize(store, sandbox).files  # a damaged manifest counts as empty


def test_sandbox_inside_the_store_is_refused(store: Store) -> None:
    with pytest.raises(MemoryFSError, match="inside the store"):
        materialize(store, store.memory / "sandbox")
    with pytest.raises(MemoryFSError, match="inside the store"):
        materialize(store, store.root)


def test_two_materializers_at_once_leave_a_consistent_sandbox(store: Store, tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    errors: list[BaseException] = []

    def run() -> None:
        try:
            for _ in range(3):
                materialize(store, sandbox)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for path, entry in _manifest(sandbox).items():
        assert blob_hash((sandbox / path).read_bytes()) == entry["blob"]


def test_cli_materialize(store: Store, tmp_path: Path) -> None:
    runner = CliRunner()
    sandbox = tmp_path / "sb"
    r = runner.invoke(app, ["materialize", "--to", str(sandbox), "--store", str(store.root)])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("materialized ") and "copied" in r.stdout
    r = runner.invoke(
        app, ["materialize", "--to", str(sandbox), "--store", str(store.root), "--json"]
    )
    data = json.loads(r.stdout)
    assert data["copied"] == [] and data["unchanged"] == len(data["files"]) > 0
    assert {"path", "blob", "reason", "bytes"} <= set(data["files"][0])
    r = runner.invoke(
        app,
        ["materialize", "--to", str(sandbox), "--store", str(store.root), "--budget-bytes", "-1"],
    )
    assert r.exit_code == 2
    r = runner.invoke(app, ["materialize", "--to", str(store.memory), "--store", str(store.root)])
    assert r.exit_code == 1 and "inside the store" in r.stderr


def test_new_pages_join_the_working_set(store: Store, tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    materialize(store, sandbox)
    write_page(
        store,
        "knowledge/preferences/citations.md",
        {"id": "citations", "title": "Citations", "type": "preference", "updated": "2023-06-01"},
        "- Author-year citations.\n",
    )
    result = materialize(store, sandbox)
    assert result.copied == ("memory/knowledge/preferences/citations.md",)


def test_a_rerun_copies_in_place_edits_and_picks_new_pages_at_once(
    store: Store, tmp_path: Path
) -> None:
    """The set is chosen after a quick refresh; the bytes are read from the store."""
    sandbox = tmp_path / "sandbox"
    materialize(store, sandbox)
    figures = store.memory / "knowledge/preferences/figures.md"
    with open(figures, "a", encoding="utf-8") as fh:  # in place: same inode, folder untouched
        fh.write("- Caroline wants SVG for diagrams.\n")
    write_page(
        store,
        "knowledge/preferences/tables.md",
        {"id": "tables", "title": "Tables", "type": "preference", "updated": "2023-05-30"},
        "# Tables\n\n- Caroline wants tables as Markdown.\n",
    )
    materialize(store, sandbox)
    copied = sandbox / "memory/knowledge/preferences"
    assert "SVG for diagrams" in (copied / "figures.md").read_text(encoding="utf-8")
    assert "tables as Markdown" in (copied / "tables.md").read_text(encoding="utf-8")
    entry = _manifest(sandbox)["memory/knowledge/preferences/figures.md"]
    assert entry["blob"] == blob_hash(figures.read_bytes())


def test_a_manifest_temp_file_left_by_a_killed_run_is_removed(store: Store, tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    materialize(store, sandbox)
    # A run killed while writing the manifest leaves the atomic write's temp file.
    left = sandbox / f".{MANIFEST}.x1y2z3.tmp"
    left.write_text('{"files": [')
    elsewhere = tmp_path / "not-in-the-sandbox.tmp"
    elsewhere.write_text("keep me")
    linked = sandbox / f".{MANIFEST}.link.tmp"
    linked.symlink_to(elsewhere)
    again = materialize(store, sandbox)
    assert again.copied == () and not left.exists() and not linked.is_symlink()
    assert elsewhere.read_text() == "keep me"  # the link went, not what it pointed to
    assert not list(sandbox.glob("*.tmp"))


def _tree(folder: Path) -> dict[str, bytes]:
    """The files under ``folder`` but caches (a store's ``.memoryfs/``) and the sandbox's
    lock file (taken before the sandbox is looked at)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
        and not p.is_symlink()
        and ".memoryfs" not in p.relative_to(folder).parts
        and p.name != ".materialized.lock"
    }


@pytest.mark.parametrize(
    "target",
    [".git", ".git/objects/new", ".dream", "notes", "."],
    ids=["dot-git", "in-dot-git", "dot-dream", "plain-folder", "root"],
)
def test_a_target_inside_the_store_is_refused_in_one_line(
    store: Store, tmp_path: Path, target: str
) -> None:
    before = _tree(store.root)
    with pytest.raises(MemoryFSError, match="is inside the store; materialize into a separate"):
        materialize(store, store.root / target)
    r = CliRunner().invoke(
        app, ["materialize", "--to", str(store.root / target), "--store", str(store.root)]
    )
    assert r.exit_code == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert _tree(store.root) == before


def test_a_target_inside_another_store_or_a_git_folder_is_refused(
    store: Store, tmp_path: Path
) -> None:
    other = build_store(tmp_path / "other")
    before = _tree(other.root)
    with pytest.raises(MemoryFSError, match=f"inside the store at {other.root}"):
        materialize(store, other.root / "sandbox")
    with pytest.raises(MemoryFSError, match=f"inside the Git folder {other.root / '.git'}"):
        materialize(store, other.root / ".git")
    assert _tree(other.root) == before
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    with pytest.raises(MemoryFSError, match="inside the Git folder"):
        materialize(store, bare / "hooks")
    assert not (bare / "hooks" / "memory").exists()


def test_files_materialize_did_not_write_are_never_overwritten(
    store: Store, tmp_path: Path
) -> None:
    sandbox = tmp_path / "theirs"
    (sandbox / "memory").mkdir(parents=True)
    (sandbox / "memory" / "INDEX.md").write_text("their own index\n")
    (sandbox / "notes.txt").write_text("their notes\n")
    before = _tree(sandbox)
    with pytest.raises(MemoryFSError, match="already holds memory/INDEX.md, which materialize"):
        materialize(store, sandbox)
    r = CliRunner().invoke(app, ["materialize", "--to", str(sandbox), "--store", str(store.root)])
    assert r.exit_code == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert _tree(sandbox) == before
    # a file where one of its folders belongs is theirs too (it would be deleted)
    (sandbox / "memory" / "INDEX.md").unlink()
    (sandbox / "memory" / "knowledge").write_text("a file named knowledge\n")
    before = _tree(sandbox)
    with pytest.raises(MemoryFSError, match="already holds memory/knowledge/"):
        materialize(store, sandbox)
    assert _tree(sandbox) == before
    # recall --into keeps the same rule
    (sandbox / "memory" / "knowledge").unlink()
    (sandbox / "memory" / "knowledge" / "preferences").mkdir(parents=True)
    (sandbox / PREF).write_text("their own figures page\n")
    with pytest.raises(MemoryFSError, match=f"already holds {PREF}"):
        add_files(store, sandbox, [PREF.removeprefix("memory/")])
    assert (sandbox / PREF).read_text() == "their own figures page\n"


def test_files_it_wrote_are_updated_and_others_beside_them_kept(
    store: Store, tmp_path: Path
) -> None:
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    (sandbox / "notes.txt").write_text("their notes\n")
    materialize(store, sandbox)
    page = store.memory / PREF.removeprefix("memory/")
    page.write_text(page.read_text() + "\nMore.\n")
    again = materialize(store, sandbox)
    assert PREF in again.copied
    assert (sandbox / "notes.txt").read_text() == "their notes\n"
    (sandbox / MANIFEST).write_text("{not json")  # lost: the same bytes still lose nothing
    assert materialize(store, sandbox).files
