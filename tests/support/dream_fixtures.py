"""Helpers for the Dream orchestration tests: a scripted engine and store builders.

``ScriptedEngine`` stands in for a real engine where a test needs exact control:
for each pending session it writes a summary whose one key point is a sentence of
the first turn (cited with its hash), and optionally a knowledge page, then
regenerates the indexes. ``claim`` and ``page`` hooks let a test write a bad claim
on purpose.
"""

from __future__ import annotations

import sqlite3
import subprocess
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from dream.engines.base import Engine, EngineContext
from dream.records import ConsolidationReport, Fact, SummaryDraft
from dream.skills import approve
from memoryfs.index.index_md import write_indexes
from memoryfs.ingest import ingest
from memoryfs.pages.page import Page, render_page
from memoryfs.pages.transcript import Transcript, Turn, parse_transcript, render_transcript
from memoryfs.store.atomic import atomic_write_text
from memoryfs.store.hashing import content_hash
from memoryfs.store.store import Store, init_store

ClaimFn = Callable[[Transcript, Turn], str]


def first_sentence(t: Transcript, turn: Turn) -> str:
    return turn.text.split(". ")[0].rstrip(".") + "."


class ScriptedEngine(Engine):
    name = "scripted"
    version = "1"

    def __init__(
        self,
        claim: ClaimFn = first_sentence,
        page: Callable[[EngineContext, Transcript], None] | None = None,
        delay: float = 0.0,
    ) -> None:
        self.claim = claim
        self.page = page
        self.delay = delay

    def summarize(self, session: Transcript) -> SummaryDraft:  # pragma: no cover - unused
        raise NotImplementedError

    def extract(self, session: Transcript) -> list[Fact]:  # pragma: no cover - unused
        return []

    def consolidate(self, ctx: EngineContext) -> ConsolidationReport:
        report = ConsolidationReport()
        for i, pending in enumerate(ctx.pending):
            if i and ctx.out_of_time():
                report.stopped_early = "deadline"
                break
            time.sleep(self.delay)
            raw = (ctx.memory / pending.path).read_text(encoding="utf-8")
            t = parse_transcript(raw, pending.path)
            turn = t.turns[0]
            meta = {
                "id": t.id,
                "title": f"Session {t.id}",
                "type": "summary",
                "updated": t.date,
                "transcript_hash": content_hash(raw),
                "turns": len(t.turns),
                "sources": [
                    {
                        "id": 1,
                        "ref": f"sessions/transcripts/{t.id}.md#{turn.anchor}",
                        "at": t.date,
                        "hash": turn.hash,
                    }
                ],
            }
            point = self.claim(t, turn)
            body = f"\n## Key points\n\n- {point} [cite:1]\n\n## Outcome\n\nnone recorded\n"
            atomic_write_text(
                ctx.memory / f"sessions/summaries/{t.id}.md", render_page(Page(meta, body))
            )
            if self.page is not None:
                self.page(ctx, t)
            report.sessions_summarized.append(t.id)
            ctx.progress("summarize", i + 1, len(ctx.pending))
        write_indexes(Store(root=ctx.stage_root, config=ctx.store.config))
        return report


def session_file(
    folder: Path,
    sid: str,
    date: str,
    texts: list[str],
    speakers: tuple[str, ...] = ("user", "assistant"),
) -> Path:
    turns = tuple(
        Turn(n=i + 1, speaker=speakers[i % len(speakers)], ts=f"{date}T10:{i:02d}", text=text)
        for i, text in enumerate(texts)
    )
    t = Transcript(
        id=sid,
        started=f"{date}T10:00",
        participants=("dana", "atlas"),
        scope={"user": "dana", "assistant": "atlas"},
        turns=turns,
    )
    path = folder / f"{sid}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_transcript(t), encoding="utf-8")
    return path


def add_sessions(store: Store, folder: Path, sessions: list[tuple[str, str, list[str]]]) -> str:
    paths = [session_file(folder, sid, date, texts) for sid, date, texts in sessions]
    return ingest(store, paths).commit


def approved_store(tmp_path: Path, sessions: list[tuple[str, str, list[str]]]) -> Store:
    """Dana's store at ``tmp_path / "store"``, its Dream skill approved, ``sessions`` ingested."""
    s = init_store(tmp_path / "store", "dana", "atlas")
    approve(s, by="tests")
    add_sessions(s, tmp_path / "in", sessions)
    return s


def cache_behind_symlink(store: Store, tmp_path: Path) -> Path:
    """Move ``store``'s cache folder to a new folder and leave a symlink in its place;
    the folder it now lives in (a cache must never be written through the link)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cache = store.cache_dir
    for child in cache.iterdir():
        child.rename(elsewhere / child.name)
    cache.rmdir()
    cache.symlink_to(elsewhere)
    return elsewhere


def damage_cache(path: Path, damage: str) -> None:
    """Damage the SQLite cache file at ``path``: "garbage", "empty", "truncated",
    "other-version" (a user_version this code never wrote), or remove it (anything else)."""
    if damage == "garbage":
        path.write_bytes(b"this is not a database" * 100)
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:1500])
    elif damage == "other-version":
        with closing(sqlite3.connect(path)) as db:
            db.execute("PRAGMA user_version = 99")
    else:
        path.unlink()


def git_out(store: Store, *args: str) -> str:
    """Run git in ``store``'s repository (as a test user); its stripped stdout."""
    proc = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@x", *args],
        cwd=store.root,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()
