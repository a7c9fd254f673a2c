"""``memoryfs show``: one file by name, a section of a page, a cut to a token budget."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from read_fixtures import S1, S2, build_store, write_page
from typer.testing import CliRunner

from cli.memoryfs_app import app
from memoryfs.errors import MemoryFSError
from memoryfs.read.show import resolve_name, show
from memoryfs.store.store import Store
from memoryfs.store.tokens import count_tokens

PAGE = "knowledge/people/melanie.md"
CUT = re.compile(
    r"^<!-- cut to (\d+) tokens; not shown: (the frontmatter)?(?:, )?(?:lines (\d+)-(\d+))? -->$"
)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = build_store(tmp_path_factory.mktemp("show") / "store")
    # a second page titled like another one, in another folder: a title names both
    write_page(
        store,
        "notes/studios/studio-visit.md",
        {
            "id": "studio-visit",
            "title": "Community studio",
            "type": "note",
            "updated": "2023-05-21",
        },
        "- Visited the studio.\n",
    )
    # a long page: many dated sections, each claim citing its own turn
    sections = []
    sources = []
    for day in range(1, 29):
        sources.append({"id": day, "ref": f"sessions/transcripts/{S2}.md#t{1 + day % 4}"})
        sections.append(
            f"## 2023-06-{day:02d}\n\n- On day {day} Melanie glazed {day} bowls at the studio "
            f"and talked about the kiln. [cite:{day}]\n"
        )
    write_page(
        store,
        "knowledge/topics/glazing.md",
        {
            "id": "glazing",
            "title": "Glazing",
            "type": "topic",
            "summary": "What Melanie glazed, day by day.",
            "updated": "2023-06-28",
            "sources": sources,
        },
        "# Glazing\n\n" + "\n".join(sections) + "\n## Related\n\n- [[melanie]]\n",
    )
    store.commit("more pages")
    return store


def test_a_name_is_a_path_an_id_an_alias_a_title_or_a_session(shared: Store) -> None:
    assert resolve_name(shared, PAGE) == PAGE
    assert resolve_name(shared, "memory/knowledge/people/melanie") == PAGE  # .md optional
    assert resolve_name(shared, "melanie") == PAGE  # id
    assert resolve_name(shared, "MEL") == PAGE  # alias, any case
    assert resolve_name(shared, "figures") == "knowledge/preferences/figures.md"
    assert resolve_name(shared, "support group") == "notes/support/group.md"  # title, any case
    # a session: its summary, else its transcript; a turn is always in the transcript
    assert resolve_name(shared, S1) == f"sessions/summaries/{S1}.md"
    assert resolve_name(shared, S2) == f"sessions/transcripts/{S2}.md"
    assert resolve_name(shared, f"{S1}#t2") == f"sessions/transcripts/{S1}.md#t2"


def test_a_name_that_fits_no_file_or_several_is_refused(shared: Store) -> None:
    with pytest.raises(MemoryFSError, match="no page, alias, title or session named 'zebra'"):
        resolve_name(shared, "zebra")
    with pytest.raises(
        MemoryFSError,
        match="names 2 files: knowledge/places/community-studio.md, notes/studios/studio-visit.md",
    ):
        resolve_name(shared, "community STUDIO")
    assert resolve_name(shared, "community-studio") == "knowledge/places/community-studio.md"
    with pytest.raises(MemoryFSError, match="not a path inside memory/"):
        show(shared, "../memory.toml")


def test_a_page_shown_whole_is_the_file(shared: Store) -> None:
    got = show(shared, "mel")
    assert got.text == (shared.memory / PAGE).read_text() and not got.cut and got.path == PAGE
    turn = show(shared, f"{S1}#t3")
    assert turn.turn == "t3" and "LGBTQ support group" in turn.text


def test_a_section_keeps_its_lines_and_the_sources_they_cite(shared: Store) -> None:
    got = show(shared, "melanie", section="facts")
    lines = got.text.splitlines()
    assert lines[0] == "## Facts" and got.section == "Facts"
    assert "## History" not in got.text and "marathon" not in got.text
    assert not got.text.startswith("---")  # no frontmatter: the part asked for
    # each cited source once, under the lines, by a name show takes
    assert lines[-2:] == [
        f"[cite:1]: {S2}#t1",  # a name show takes; the session id holds its date
        f"[cite:2]: {S2}#t3",
    ]
    file_lines = (shared.memory / PAGE).read_text().splitlines()
    assert (
        file_lines[got.start - 1] == "## Facts"
        and "[[community-studio]]" in file_lines[got.end - 1]
    )
    history = show(shared, "melanie", section="History")
    assert history.text.splitlines()[-1] == f"[cite:1]: {S2}#t1"
    assert "[cite:2]" not in history.text
    # the name under the lines is the turn the page's source names
    listed = show(shared, lines[-1].split(": ", 1)[1])
    assert (listed.path, listed.turn) == (f"sessions/transcripts/{S2}.md", "t3")


def test_a_source_keeps_its_date_unless_its_session_id_begins_with_it() -> None:
    from memoryfs.pages.page import Source
    from memoryfs.read.show import _source_line

    dated = Source(4, "sessions/transcripts/lisbon-trip.md#t2", at="2026-01-19")
    assert _source_line(dated) == "[cite:4]: lisbon-trip#t2 (2026-01-19)"
    named = Source(5, f"sessions/transcripts/{S1}.md#t3", at="2023-05-08")
    assert _source_line(named) == f"[cite:5]: {S1}#t3"
    other = Source(6, "notes/x/y.md", at="2023-05-08")  # not a turn: the ref as written
    assert _source_line(other) == "[cite:6]: notes/x/y.md (2023-05-08)"


def test_a_section_by_its_start_takes_every_heading_that_starts_so(shared: Store) -> None:
    got = show(shared, "glazing", section="2023-06-1")
    heads = [line for line in got.text.splitlines() if line.startswith("## ")]
    assert heads == [f"## 2023-06-{d}" for d in range(10, 20)]
    cites = [line for line in got.text.splitlines() if line.startswith("[cite:")]
    assert [c.split("]")[0] for c in cites] == [f"[cite:{d}" for d in range(10, 20)]
    assert show(shared, "glazing", section="2023-06-01").text.count("## ") == 1  # equal wins


def test_a_missing_section_names_the_sections_there_are(shared: Store) -> None:
    with pytest.raises(
        MemoryFSError, match=r"no section 'Hobbies' \(sections: Melanie; Facts; History\)"
    ):
        show(shared, "melanie", section="Hobbies")
    with pytest.raises(MemoryFSError, match="a transcript's parts are its turns"):
        show(shared, f"{S2}", section="t1")
    with pytest.raises(MemoryFSError, match="not more than one"):
        show(shared, "melanie", section="Facts", lines="1-3")


@pytest.mark.parametrize("budget", [5, 20, 40, 60, 100, 150, 300, 600])
def test_a_cut_fits_the_budget_in_whole_lines_and_says_what_it_left_out(
    shared: Store, budget: int
) -> None:
    path = "knowledge/topics/glazing.md"
    file_lines = (shared.memory / path).read_text().splitlines()
    got = show(shared, "glazing", max_tokens=budget)
    assert got.cut
    lines = got.text.splitlines()
    note = CUT.match(lines[-1])
    assert note, lines[-1]
    assert int(note.group(1)) == budget
    if budget >= 25:  # below that, the note alone is more than the budget
        assert count_tokens(got.text) <= budget
    # the body lines shown are the file's lines start..end, in order and whole
    body = [line for line in lines[:-1] if not line.startswith("[cite:")]
    if body and body[0] == "---":
        body = body[body.index("---", 1) + 1 :]
        assert "sources:" not in got.text and "summary: What Melanie glazed" in got.text
    else:
        assert note.group(2) == "the frontmatter"
    while body and not body[-1]:
        body.pop()
    shown = [line for line in file_lines[got.start - 1 : got.end]]
    while shown and not shown[0]:
        shown.pop(0)
    while shown and not shown[-1]:
        shown.pop()
    assert body == shown
    # the note names the lines left out: from the first not shown to the last
    assert (int(note.group(3)), int(note.group(4))) == (got.end + 1, len(file_lines))
    # every citation shown has its source under the lines, and no other source is listed
    cited = {int(n) for n in re.findall(r"\[cite:(\d+)\]", "\n".join(body))}
    listed = {int(line[6 : line.index("]")]) for line in lines if line.startswith("[cite:")}
    assert cited == listed


def test_a_file_within_the_budget_is_not_cut(shared: Store) -> None:
    whole = (shared.memory / "knowledge/places/community-studio.md").read_text()
    got = show(shared, "knowledge/places/community-studio.md", max_tokens=count_tokens(whole))
    assert got.text == whole and not got.cut


def test_a_transcript_cut_keeps_whole_turn_lines(shared: Store) -> None:
    got = show(shared, S2, max_tokens=60)
    assert got.cut and count_tokens(got.text) <= 60
    file_lines = (shared.memory / f"sessions/transcripts/{S2}.md").read_text().splitlines()
    for line in got.text.splitlines()[:-1]:
        assert line in file_lines


def test_memoryfs_show_prints_the_text_and_one_line_errors(shared: Store, tmp_path: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["show", "Mel", "--section", "Facts", "--store", str(shared.root)])
    assert done.exit_code == 0 and done.stdout.startswith("## Facts\n")
    as_json = runner.invoke(
        app, ["show", "glazing", "--max-tokens", "80", "--json", "--store", str(shared.root)]
    )
    assert as_json.exit_code == 0 and '"cut": true' in as_json.stdout
    missing = runner.invoke(app, ["show", "zebra", "--store", str(shared.root)])
    assert missing.exit_code == 1 and missing.stdout == ""
    assert missing.stderr.count("\n") == 1 and missing.stderr.startswith("error: no page")
