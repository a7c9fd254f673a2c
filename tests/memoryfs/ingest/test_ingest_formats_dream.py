"""Each importer end to end: ingest a format's golden fixture into a fresh store, run
Dream with the embedded engine, and check that the run commits a summary of every
imported session whose citations point at that session's turns, hashes matching."""

from __future__ import annotations

from pathlib import Path

import paths
import pytest

from dream.engines import load_engine
from dream.runner import RunOptions, run_dream
from dream.skills import approve
from memoryfs.ingest import FORMATS, ingest
from memoryfs.pages.page import parse_page
from memoryfs.pages.transcript import parse_transcript
from memoryfs.store.store import Store
from memoryfs.validate.rules import validate_store

pytest.importorskip("dream.engines.embedded.engine")

FIXTURES = paths.FIXTURES / "ingest"
CASES = sorted(p for p in FIXTURES.glob("*/*") if p.is_dir())


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name}" for c in CASES])
def test_an_imported_session_is_dreamed_and_cited(case: Path, tmp_store: Store) -> None:
    (src,) = [p for p in case.iterdir() if p.is_file()]
    result = ingest(tmp_store, [src])
    sessions = [s.id for s in result.sessions]
    approve(tmp_store, by="tests")
    run = run_dream(tmp_store, load_engine(), RunOptions())
    assert run.status == "committed", (run.message, run.problems)
    assert sorted(run.sessions) == sorted(sessions)
    assert validate_store(tmp_store) == []
    for sid in sessions:
        transcript = parse_transcript(tmp_store.transcript_path(sid).read_text("utf-8"))
        summary = parse_page((tmp_store.memory / f"sessions/summaries/{sid}.md").read_text("utf-8"))
        cited = [
            s
            for s in summary.meta["sources"]
            if s["ref"].startswith(f"sessions/transcripts/{sid}.md#")
        ]
        assert cited, f"the summary of {sid} cites none of its turns"
        for source in cited:
            turn = transcript.turn(source["ref"].rsplit("#", 1)[1])
            assert turn is not None and turn.hash == source["hash"]
            assert turn.speaker != "tool"  # tool traffic is not what anyone said
        assert "[cite:" in summary.body


def test_every_format_is_dreamed() -> None:
    assert sorted({c.parent.name for c in CASES}) == sorted(FORMATS)
