"""What keeps the profile's cost to what a run changed: the gate checks a profile line's
new (thing, citation) pairs only (``dream.gates.profilecheck``), and the turns' thing keys
are remembered across runs (``dream.wiki.cited_names``). Neither may change what is accepted
wrongly or what is written."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from engine_fixtures import write_session
from gate_fixtures import JOB, JOB_TURNS, PATH, one_session_store, write_job_page

from dream.engines import load_engine
from dream.gates.verification import verify_stage
from dream.landing.staging import Change
from dream.runner import RunOptions, run_dream
from dream.wiki.cited_names import CitedNames
from memoryfs.pages.transcript import Transcript, Turn, render_transcript
from memoryfs.store.store import Store

WORK = "Work and career (job)"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return one_session_store(tmp_path, JOB, JOB_TURNS)


def _verify(store: Store, base: str, things: str) -> list[str]:
    """Problems of the page whose profile is one bullet of ``things``, against ``base``."""
    write_job_page(
        store, things if things.startswith("\n") else f"\n## Profile\n\n- {WORK}: {things}\n"
    )
    report = verify_stage(store, store.root, base, [Change("M", PATH)])
    return [f"{p.code} {p.message}" for p in report.problems]


def test_a_profile_pair_whose_turn_does_not_name_the_thing_is_rejected(store: Store) -> None:
    base = store.head()
    write_job_page(store, "\n- Works at Tidewater [cite:2]\n")
    report = verify_stage(store, store.root, base, [Change("A", PATH)])
    assert report.ok
    base = store.commit("a page", [PATH])
    # turn 2 says "I work as staff scientist"; turn 1 says nothing of work
    assert _verify(store, base, "work [cite:2]") == []
    assert _verify(store, base, "work [cite:1][cite:2]") == [
        "DV104 thing 'work' is not named in the cited turn [1]"
    ]
    # a thing's words are checked as a claim's are, against its own turn
    assert _verify(store, base, "5k [cite:1]") == [
        "DV104 thing '5k' is not named in the cited turn [1]",
        "DV102 number '5' is not in the cited turn [1]",
    ]
    # not a well-formed profile bullet: checked as any claim is, over all its turns
    assert _verify(store, base, "\n## Profile\n\n- Work with Gunther: work [cite:2]\n") == [
        "DV101 name 'Gunther' is not in the cited turn in 'Work with Gunther: work' "
        "(cites [2] sessions/transcripts/2026-02-10-job.md#t2)"
    ]


def test_only_the_pairs_the_base_did_not_hold_are_checked(store: Store) -> None:
    write_job_page(store, f"\n## Profile\n\n- {WORK}: work [cite:1]\n")  # hand-written, in the base
    base = store.commit("a hand-written profile", [PATH])
    # the line changed: its old pair stands, its new pairs are checked
    assert _verify(store, base, "work [cite:1][cite:2]") == []
    assert _verify(store, base, "works [cite:1], postdoc [cite:2]") == [
        "DV104 thing 'postdoc' is not named in the cited turn [2]"
    ]
    # a thing moved to a turn that names it
    assert _verify(store, base, "postdoc [cite:1], work [cite:2]") == []
    write_job_page(store, f"\n## Profile\n\n- {WORK}: work [cite:1][cite:2]\n")
    text = (store.root / PATH).read_text().replace("hash: ", "hash: x", 1)
    (store.root / PATH).write_text(text)  # source 1 names another turn text now: a new pair
    report = verify_stage(store, store.root, base, [Change("M", PATH)])
    assert [p.code for p in report.problems] == ["DV104"]


def _transcript(text: str) -> str:
    turns = (
        Turn(n=1, speaker="user", ts="2026-02-10T09:00", text=text),
        Turn(n=2, speaker="atlas", ts="2026-02-10T09:01", text="Lovely paintings."),
    )
    return render_transcript(
        Transcript(
            id="2026-02-10-a",
            started="2026-02-10T09:00",
            participants=("dana", "atlas"),
            scope={"user": "dana", "assistant": "atlas"},
            turns=turns,
        )
    )


def test_turn_keys_are_remembered_by_the_transcripts_text(tmp_path: Path) -> None:
    rel = "sessions/transcripts/2026-02-10-a.md"
    texts = {rel: _transcript("I painted and went hiking.")}
    db = tmp_path / "cache" / "turnkeys.sqlite"
    first = CitedNames(texts.get, db)
    got = first.named(f"{rel}#t1")
    assert got == ("Dana", frozenset({"i", "paint", "and", "went", "hik"}))
    assert first.named(f"{rel}#t2") == ("", frozenset({"lovely", "paint"}))
    assert first.named(f"{rel}#t3") is None and first.named(f"{rel}#x1") is None
    assert first.named("sessions/transcripts/gone.md#t1") is None
    assert first.parsed == 1
    first.close()
    again = CitedNames(texts.get, db)
    assert again.named(f"{rel}#t1") == got and again.parsed == 0
    again.close()
    texts[rel] = _transcript("I went swimming.")  # edited: another text, read anew
    edited = CitedNames(texts.get, db)
    assert edited.named(f"{rel}#t1") == ("Dana", frozenset({"i", "went", "swim"}))
    assert edited.parsed == 1
    edited.close()
    with contextlib.closing(sqlite3.connect(db)) as c:  # the older text's row is gone
        assert c.execute("SELECT COUNT(*) FROM turns WHERE rel = ?", (rel,)).fetchone() == (1,)
    with contextlib.closing(sqlite3.connect(db)) as c:  # written by other code: not read
        c.execute("UPDATE turns SET data = '{}'")
        c.execute("PRAGMA user_version = 7")
        c.commit()
    other = CitedNames(texts.get, db)
    assert other.named(f"{rel}#t1") == ("Dana", frozenset({"i", "went", "swim"}))
    assert other.parsed == 1
    other.close()
    db.write_bytes(b"not a database" * 100)  # only a cache: the run parses as before
    broken = CitedNames(texts.get, db)
    assert broken.named(f"{rel}#t1") == ("Dana", frozenset({"i", "went", "swim"}))
    broken.close()


def _tree(s: Store) -> str:
    out = subprocess.run(
        ["git", "rev-parse", "HEAD:memory"], cwd=s.root, capture_output=True, text=True
    )
    return out.stdout.strip()


def test_a_run_writes_the_same_bytes_with_or_without_remembered_turns(tmp_store: Store) -> None:
    talk = [
        ("2026-01-05", "I'm Dana. I spent the weekend painting by the lake."),
        ("2026-02-02", "Dana here: my painting class starts today, and I went hiking."),
    ]
    for day, text in talk:
        write_session(tmp_store, f"{day}-a", f"{day}T09:00", [("dana", text), ("atlas", "Nice")])
    engine, options = load_engine(), RunOptions(allow_unapproved=True)
    assert run_dream(tmp_store, engine, options).status == "committed"
    assert (tmp_store.cache_dir / "dream-turnkeys.sqlite").is_file()
    write_session(
        tmp_store,
        "2026-03-02-a",
        "2026-03-02T09:00",
        [("dana", "Dana again. Went swimming today, then more painting."), ("atlas", "Good")],
    )
    fresh = Store.open(shutil.copytree(tmp_store.root, tmp_store.root.parent / "copy"))
    (fresh.cache_dir / "dream-turnkeys.sqlite").unlink()
    for s in (tmp_store, fresh):
        assert run_dream(s, engine, options).status == "committed"
    assert _tree(tmp_store) == _tree(fresh)
    assert "swimming [cite:" in (tmp_store.memory / "knowledge/people/dana.md").read_text()
