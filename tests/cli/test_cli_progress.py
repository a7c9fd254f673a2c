"""Progress on a terminal: drawn on stderr when it is a TTY, never with ``--quiet`` or in a pipe.

Each case runs the installed console entry with its stderr on a real pseudo-terminal (or a
pipe) and reads what was drawn there; stdout is a pipe either way and carries the result only.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import paths
import pytest

from memoryfs.store.store import Store

SAMPLE = sorted(paths.SAMPLE.glob("*.md"))


def _run(store: Store, *argv: str, tty: bool) -> tuple[int, str, str]:
    """Exit code, stdout and what reached stderr (a pseudo-terminal when ``tty``)."""
    exe = Path(sys.executable).with_name(argv[0])
    env = {k: v for k, v in os.environ.items() if k != "MEMORYFS_STORE"}
    if not tty:
        done = subprocess.run(
            [str(exe), *argv[1:]], capture_output=True, text=True, cwd=store.root, env=env
        )
        return done.returncode, done.stdout, done.stderr
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [str(exe), *argv[1:]],
        stdout=subprocess.PIPE,
        stderr=secondary,
        stdin=subprocess.DEVNULL,
        cwd=store.root,
        env=env,
    )
    os.close(secondary)
    drawn = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        drawn += chunk
    out = proc.stdout.read().decode() if proc.stdout else ""
    code = proc.wait(timeout=120)
    os.close(primary)
    return code, out, drawn.decode(errors="replace")


@pytest.fixture
def many() -> list[str]:
    assert len(SAMPLE) >= 20  # enough inputs for ingest to show progress
    return [str(p) for p in SAMPLE]


def test_ingest_of_many_files_draws_progress_on_a_terminal_only(
    tmp_path: Path, many: list[str]
) -> None:
    from memoryfs.store.store import init_store

    on_tty = init_store(tmp_path / "a", "dana", "atlas")
    code, out, err = _run(on_tty, "memoryfs", "ingest", *many, tty=True)
    assert code == 0, err
    assert f"read         [{'#' * 24}] {len(many)}/{len(many)}" in err
    assert "write" in err and "\x1b[2K" in err  # redrawn in place, cleared at the end
    assert out.startswith(f"ingest: {len(many)} sessions")  # stdout: the result only

    quiet = init_store(tmp_path / "b", "dana", "atlas")
    code, out, err = _run(quiet, "memoryfs", "ingest", "-q", *many, tty=True)
    assert code == 0 and err == "" and out.startswith("ingest: ")

    piped = init_store(tmp_path / "c", "dana", "atlas")
    code, out, err = _run(piped, "memoryfs", "ingest", *many, tty=False)
    assert code == 0 and err == "" and out.startswith("ingest: ")


def test_dream_run_draws_its_phases_with_counts_on_a_terminal(
    tmp_path: Path, many: list[str]
) -> None:
    from memoryfs.store.store import init_store

    store = init_store(tmp_path / "s", "dana", "atlas")
    store.ingest(many[:3])
    code, out, err = _run(store, "dream", "run", "--dry-run", "-q", tty=True)
    assert code == 0 and err == "", err
    code, out, err = _run(store, "dream", "run", "--dry-run", tty=True)
    assert code == 0, err
    assert "/3" in err and "[" in err and "\x1b[2K" in err
    assert "dry run" in out and "\x1b" not in out


CONVERSATION = {
    "sample_id": "conv-p",
    "conversation": {
        "speaker_a": "Ann",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I made a blue bowl at pottery class."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "I started learning the violin."},
        ],
        "session_2_date_time": "10:00 am on 20 June, 2023",
        "session_2": [
            {"speaker": "Ann", "dia_id": "D2:1", "text": "I adopted a puppy named Biscuit."},
            {"speaker": "Ben", "dia_id": "D2:2", "text": "I played the violin at a wedding."},
        ],
    },
    "qa": [
        {
            "question": "What did Ann make?",
            "answer": "a blue bowl",
            "evidence": ["D1:1"],
            "category": 4,
        },
        {
            "question": "What is Ann's puppy called?",
            "answer": "Biscuit",
            "evidence": ["D2:1"],
            "category": 4,
        },
        {
            "question": "What instrument does Ben play?",
            "answer": "violin",
            "evidence": ["D1:2"],
            "category": 4,
        },
    ],
}


def test_dream_eval_draws_progress_on_a_terminal_only(tmp_path: Path) -> None:
    import json

    from memoryfs.store.store import init_store

    conv = tmp_path / "conv-p.json"
    conv.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    here = init_store(tmp_path / "s", "dana", "atlas")  # only a folder to run in
    argv = ("dream", "eval", "locomo", str(conv), "--budget", "500", "--arms", "wiki")
    code, out, err = _run(here, *argv, tty=True)
    assert code == 0, err
    assert "conv-p dream" in err and f"conv-p questions [{'#' * 24}] 3/3" in err
    assert "\x1b[2K" in err and out.startswith("# LoCoMo evaluation") and "\x1b" not in out
    for quiet in (("-q",), ()):
        code, out, err = _run(here, *argv, *quiet, tty=bool(quiet))  # -q on a terminal; a pipe
        assert code == 0 and err == "" and out.startswith("# LoCoMo evaluation")
