"""``memoryfs ingest FILE.json`` without ``--format``: the content says the format.

The name ``.json`` says nothing of which JSON format a file holds, so each case goes
through the real command: a LoCoMo conversation, a ChatGPT export, OpenAI messages
and JSON lines in a ``.json`` file are each read as what they are (the transcripts
written are the golden ones of ``tests/fixtures/ingest``); a document of no known
shape, or of several, is refused with one line naming the ``--format`` choices, a
non-zero exit and nothing written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import paths
import pytest
from typer.testing import CliRunner

from cli.memoryfs_app import app
from memoryfs.ingest.formats import FORMATS
from memoryfs.store.store import Store

FIXTURES = paths.FIXTURES / "ingest"
ASK = f"pass --format {'|'.join(FORMATS)}"


def _ingest(store: Store, *args: str) -> Any:
    return CliRunner().invoke(app, ["ingest", "--store", str(store.root), *args])


def _golden(case: str) -> dict[str, str]:
    return {p.stem: p.read_text("utf-8") for p in (FIXTURES / case / "expected").glob("*.md")}


@pytest.mark.parametrize(
    ("case", "name"),
    [
        ("locomo/conversation", "conv-1.json"),
        ("chatgpt/export", "conversations.json"),
        ("openai/flight-search", "flight-search.json"),
        ("openai/jsonl-lines", "marta-dessert.json"),  # JSON lines, named .json
    ],
)
def test_a_json_file_is_read_as_what_it_holds(
    tmp_store: Store, tmp_path: Path, case: str, name: str
) -> None:
    (given,) = [p for p in (FIXTURES / case).iterdir() if p.is_file()]
    src = tmp_path / name
    shutil.copyfile(given, src)
    r = _ingest(tmp_store, str(src))
    assert r.exit_code == 0, r.stderr
    written = {
        p.stem: p.read_text("utf-8")
        for p in (tmp_store.memory / "sessions" / "transcripts").glob("*.md")
    }
    assert written == _golden(case)


CONVERSATION = {"speaker_a": "Ana", "speaker_b": "Ben"}
MESSAGES = [{"role": "user", "content": "Book the table for Friday."}]
NONE = "cannot tell what this JSON holds (not a ChatGPT export, OpenAI messages or LoCoMo)"


@pytest.mark.parametrize(
    ("doc", "why"),
    [
        ({"hello": "world"}, NONE),
        # named like a LoCoMo item, but holding no conversation: not taken for one
        ({"sample_id": "conv-9", "qa": []}, NONE),
        ([{"text": "hi", "speaker": "Ana"}], NONE),
        (
            {"conversation": CONVERSATION, "messages": MESSAGES},
            "this JSON has the shape of several formats (locomo, openai)",
        ),
        (
            [{"role": "user", "mapping": {}}],
            "this JSON has the shape of several formats (openai, chatgpt)",
        ),
    ],
)
def test_a_json_file_of_no_known_shape_or_several_is_refused(
    tmp_store: Store, tmp_path: Path, doc: Any, why: str
) -> None:
    head = tmp_store.head()
    good = tmp_path / "flight-search.json"
    shutil.copyfile(FIXTURES / "openai/flight-search/flight-search.json", good)
    odd = tmp_path / "export.json"
    odd.write_text(json.dumps(doc), encoding="utf-8")
    r = _ingest(tmp_store, str(good), str(odd))  # the first alone would be ingested
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr == f"error: {odd}: {why}; {ASK}\n"
    assert tmp_store.files("sessions/transcripts") == [] and tmp_store.head() == head


def test_format_settles_a_json_file_of_several_shapes(tmp_store: Store, tmp_path: Path) -> None:
    doc = {"conversation": CONVERSATION, "messages": MESSAGES}
    src = tmp_path / "both.json"
    src.write_text(json.dumps(doc), encoding="utf-8")
    r = _ingest(tmp_store, str(src), "--format", "openai", "--session-id", "table")
    assert r.exit_code == 0, r.stderr
    assert tmp_store.files("sessions/transcripts") == ["sessions/transcripts/table.md"]
