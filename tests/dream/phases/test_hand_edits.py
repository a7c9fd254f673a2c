"""Hand edits through a Dream run: a page a person edited keeps the person's text, or the
run leaves it as it is and says why; an edited transcript turn is never cited again.

Regression tests for issue #31 finding 4: a page whose frontmatter a person removed was
rewritten from scratch by the next run (its claims gone, its type changed) and
``validate`` was clean afterwards.
"""

from __future__ import annotations

from pathlib import Path

from dream_fixtures import add_sessions, approved_store, git_out
from typer.testing import CliRunner

import dream
from cli.dream_app import app
from memoryfs.pages.page import parse_page
from memoryfs.store.store import Store
from memoryfs.validate.rules import validate_store

HENRIK = "knowledge/people/henrik-aalto.md"


def _henrik_store(tmp_path: Path) -> Store:
    """A store whose Henrik page Dream wrote, with a ``## Profile`` (two sessions)."""
    store = approved_store(
        tmp_path,
        [
            (
                "2026-03-02-henrik",
                "2026-03-02",
                ["Henrik Aalto is my PI. He goes running every morning.", "Noted."],
            ),
            (
                "2026-03-04-henrik",
                "2026-03-04",
                ["Henrik Aalto ran a half marathon on Sunday.", "Nice."],
            ),
        ],
    )
    assert dream.run(store).status == "committed"
    assert "## Profile" in (store.memory / HENRIK).read_text(encoding="utf-8")
    return store


def _more_about_henrik(store: Store, tmp_path: Path) -> None:
    add_sessions(
        store,
        tmp_path / "more",
        [
            (
                "2026-03-09-henrik",
                "2026-03-09",
                ["Henrik Aalto went running in the rain today.", "Brave."],
            )
        ],
    )


def test_page_without_frontmatter_is_kept_byte_identical_and_reported(tmp_path: Path) -> None:
    store = _henrik_store(tmp_path)
    page = store.memory / HENRIK
    text = page.read_text(encoding="utf-8")
    stripped = text.split("---\n", 2)[2].encode("utf-8")
    page.write_bytes(stripped)
    git_out(store, "commit", "-qam", "my own notes on Henrik")
    _more_about_henrik(store, tmp_path)

    result = CliRunner().invoke(app, ["run", "--store", str(store.root)])

    assert result.exit_code == 0, result.output
    assert page.read_bytes() == stripped
    assert git_out(store, "log", "-1", "--format=%H", "--", f"memory/{HENRIK}") == git_out(
        store, "rev-parse", "HEAD~2"
    )  # the person's commit is still the last to touch it
    reported = [line for line in result.stderr.splitlines() if f"memory/{HENRIK}" in line]
    assert len(reported) == 1 and "DV401" in reported[0] and "no YAML frontmatter" in reported[0]
    status = git_out(store, "log", "-1", "--format=%B")
    assert f"memory/{HENRIK}:0: DV401" in status  # the commit says what was left out, and why
    assert "2026-03-09-henrik" in status  # and the rest of the night landed
    found = [f for f in validate_store(store) if f.path == f"memory/{HENRIK}"]
    assert [f.code for f in found] == ["MF001"]


def test_page_missing_a_required_key_is_left_out(tmp_path: Path) -> None:
    store = _henrik_store(tmp_path)
    page = store.memory / HENRIK
    edited = page.read_text(encoding="utf-8").replace("type: person\n", "")
    page.write_text(edited, encoding="utf-8")
    git_out(store, "commit", "-qam", "drop the type")
    _more_about_henrik(store, tmp_path)

    result = dream.run(store)

    assert page.read_text(encoding="utf-8") == edited
    assert any(f"memory/{HENRIK}:0: DV401" in x and "lacks type" in x for x in result.left_out)
    assert result.status == "committed"


def test_line_added_by_hand_survives_a_run_that_adds_claims(tmp_path: Path) -> None:
    store = _henrik_store(tmp_path)
    page = store.memory / HENRIK
    mine = "- Henrik is allergic to peanuts (he told me at lunch)."
    page.write_text(
        page.read_text(encoding="utf-8").replace("## Profile\n\n", f"## Profile\n\n{mine}\n"),
        encoding="utf-8",
    )
    git_out(store, "commit", "-qam", "a line by hand")
    _more_about_henrik(store, tmp_path)

    result = dream.run(store)

    assert result.status == "committed"
    assert "knowledge/people/henrik-aalto.md" in result.pages_updated
    after = page.read_text(encoding="utf-8")
    assert mine in after.split("\n")
    assert "went running in the rain" in after  # Dream's new claim landed beside it
    assert any(HENRIK in h and "kept" in h for h in result.hand_edits)
    # the run's commit is now the page's last: the next run keeps the line all the same
    add_sessions(
        store,
        tmp_path / "again",
        [("2026-03-12-henrik", "2026-03-12", ["Henrik Aalto ran a marathon in Oslo.", "Wow."])],
    )
    assert dream.run(store).status == "committed"
    after = page.read_text(encoding="utf-8")
    assert mine in after.split("\n") and "marathon in Oslo" in after


def test_summary_written_by_hand_keeps_its_value(tmp_path: Path) -> None:
    store = _henrik_store(tmp_path)
    page = store.memory / HENRIK
    parsed = parse_page(page.read_text(encoding="utf-8"), HENRIK)
    mine = "Dana's PI and a morning runner"
    text = page.read_text(encoding="utf-8")
    old = f"summary: {parsed.summary}\n" if parsed.summary else "type: person\n"
    new = f"summary: {mine}\n" if parsed.summary else f"type: person\nsummary: {mine}\n"
    page.write_text(text.replace(old, new, 1), encoding="utf-8")
    git_out(store, "commit", "-qam", "my summary")
    _more_about_henrik(store, tmp_path)

    assert dream.run(store).status == "committed"
    assert parse_page(page.read_text(encoding="utf-8"), HENRIK).summary == mine


def test_page_dream_wrote_last_is_not_a_hand_edit(tmp_path: Path) -> None:
    store = _henrik_store(tmp_path)
    _more_about_henrik(store, tmp_path)

    result = dream.run(store)

    assert result.status == "committed" and result.hand_edits == ()


def test_turn_edited_by_hand_is_reported_and_never_cited(tmp_path: Path) -> None:
    store = _henrik_store(tmp_path)
    transcript = store.memory / "sessions/transcripts/2026-03-04-henrik.md"
    raw = transcript.read_text(encoding="utf-8")
    transcript.write_text(raw.replace("a half marathon", "a full marathon in Oslo"), "utf-8")
    git_out(store, "commit", "-qam", "fix what he ran")

    found = [f for f in validate_store(store) if f.code == "MF405"]
    heading = raw.split("\n").index(next(x for x in raw.split("\n") if x.startswith("## t1 ")))
    assert [(f.path, f.line) for f in found] == [
        ("memory/sessions/transcripts/2026-03-04-henrik.md", heading + 1)
    ]
    assert "t1" in found[0].message

    result = dream.run(store)

    assert result.status in ("committed", "no-change")
    edited_hash = _turn_hash(transcript, 1)
    for path in store.memory.rglob("*.md"):
        if "transcripts" in path.parts:
            continue
        try:
            cited = parse_page(path.read_text(encoding="utf-8"), str(path)).sources
        except Exception:  # noqa: BLE001 - only pages with sources matter here
            continue
        assert all(s.hash != edited_hash for s in cited), path
    for path in (store.memory / "knowledge").rglob("*.md"):
        for line in path.read_text(encoding="utf-8").split("\n"):
            if "full marathon" in line:  # what only the edited turn says is proof of nothing
                assert "[cite:" not in line and line.endswith("(unsupported)"), (path, line)

    health = CliRunner().invoke(app, ["health", "--store", str(store.root), "--json"])
    assert "transcript edited by hand after ingest" in health.output


def test_appended_turn_is_no_edit(tmp_path: Path) -> None:
    store = _henrik_store(tmp_path)
    add_sessions(
        store,
        tmp_path / "grow",
        [
            (
                "2026-03-04-henrik",
                "2026-03-04",
                ["Henrik Aalto ran a half marathon on Sunday.", "Nice.", "He wants a rematch."],
            )
        ],
    )
    assert not [f for f in validate_store(store) if f.code == "MF405"]


def _turn_hash(path: Path, n: int) -> str:
    from memoryfs.pages.transcript import parse_transcript

    turn = parse_transcript(path.read_text(encoding="utf-8"), path.name).turns[n - 1]
    return turn.hash
