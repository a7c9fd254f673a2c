"""Every factual line is a claim or is rejected: MF110 (an uncited line), DV110 / DV111 (a
frontmatter summary or title its page's claims do not support), what a run leaves out for
them, and lines marked (unsupported) that recall never serves."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from dream_fixtures import add_sessions

from dream.engines.command import CommandEngine, CommandSettings
from dream.gates.frontmatter import claims_support, frontmatter_problems
from dream.landing.staging import kept_runs
from dream.runner import run_dream
from dream.skills import approve
from memoryfs.pages.claims import extract_claims
from memoryfs.pages.factlines import uncited_lines
from memoryfs.pages.page import parse_page
from memoryfs.read.recall import recall
from memoryfs.read.search import SearchIndex
from memoryfs.store.hashing import turn_hash
from memoryfs.store.store import Store, init_store
from memoryfs.validate.rules import validate_store

S1 = ("2026-01-05-figures", "2026-01-05", ["I need the figures as PDF for Reefsong.", "Sure."])
S2 = ("2026-01-06-marta", "2026-01-06", ["Marta is a nurse at the UKE in Hamburg.", "Noted."])
S3 = ("2026-01-07-lisbon", "2026-01-07", ["I fly to Lisbon for the workshop.", "Good trip."])
HEAD = "---\nid: p\ntitle: P\ntype: topic\nupdated: 2026-01-05\n---\n"


def _page(body: str, head: str = HEAD) -> list[tuple[int, str, int]]:
    page = parse_page(head + body, "knowledge/topics/p.md")
    return [(f.line, f.text, f.claim_line) for f in uncited_lines(page)]


# -- MF110: which lines are structure --------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "# Title\n\n## 2026-01-05 (5 January 2026)\n",
        "A setext heading\n================\n",
        "---\n\n* * *\n\n___\n",
        "| page | why |\n|---|:--:|\n| [[a]] | [[b|B]] |\n",
        "```\nDana was born in Paris\n```\n",
        "    an indented code block\n",
        "`a line of code`\n",
        "<!-- a comment -->\n",
        "- [[a]]\n- [[a|A]], [[b]] · [[c]] and [[d]]\n",
        "See also: [[a]], [[b]]\nRelated: [[a]]\nAbout: [[a|A]]\nSee [[a]] and [[b]].\n",
        "About: Marlow Institute for Ocean Research\n",  # a link whose page went: its label
        "## Related\n\n- [[a|A]]\n- Gunther\n- bad-page\n",
        "- none recorded\n\nOutcome: none recorded\n\n- none\n",
        "Open threads:\n\n**Key points:**\n",
        "- Dana lives in Porto (unsupported)\n",
        "- The turn went. (unsupported)\n",
        "- Dana needs PDF figures [cite:1]\n- Arts: painting [cite:1][cite:2], pottery [cite:3]\n",
    ],
)
def test_structure_and_claims_are_not_uncited_lines(body: str) -> None:
    assert _page(body) == []


@pytest.mark.parametrize(
    ("body", "found"),
    [
        ("- Dana wants figures as PDF.\n", [(1, "- Dana wants figures as PDF.", 0)]),
        (
            "# P\n\nDana lives in Hamburg. She cycles.\n",
            [(3, "Dana lives in Hamburg. She cycles.", 0)],
        ),
        ("Lives in: [[hamburg]]\n", [(1, "Lives in: [[hamburg]]", 0)]),  # a relation, said
        ("| [[dana]] | lives in Hamburg |\n", [(1, "| [[dana]] | lives in Hamburg |", 0)]),
        ("- Gunther\n", [(1, "- Gunther", 0)]),  # a bare name says something outside Related
        (
            "About: [[a|Dana was born in Paris in the year of nineteen seventy]]\n",
            [(1, "About: [[a|Dana was born in Paris in the year of nineteen seventy]]", 0)],
        ),  # noqa: E501
        (
            "- Dana moved to Porto and\n  works at Tidewater [cite:1]\n",
            [(1, "- Dana moved to Porto and", 2)],
        ),  # noqa: E501
        (
            "Dana moved to Porto and\nworks at Tidewater [cite:1]\n",
            [(1, "Dana moved to Porto and", 2)],
        ),
        ("## Related\n\n### People\n\n- Dana lives in Porto\n", [(5, "- Dana lives in Porto", 0)]),
    ],
)
def test_a_line_that_states_something_without_a_citation_is_found(
    body: str, found: list[tuple[int, str, int]]
) -> None:
    assert _page(body) == found


def _store_with_page(tmp_path: Path, rel: str, text: str) -> Store:
    store = init_store(tmp_path / "store", "dana", "atlas")
    add_sessions(store, tmp_path / "in", [S1])
    path = store.memory / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return store


def _sources(*turns: tuple[str, int, str]) -> str:
    lines = ["sources:"]
    for i, (sid, n, text) in enumerate(turns, 1):
        lines += [
            f"- id: {i}",
            f"  ref: sessions/transcripts/{sid}.md#t{n}",
            f"  at: {sid[:10]}",
            f"  hash: {turn_hash(text)}",
        ]
    return "\n".join(lines) + "\n"


def test_validate_reports_the_file_line_of_an_uncited_bullet_and_sentence(tmp_path: Path) -> None:
    meta = "---\nid: dana\ntitle: Dana\ntype: person\nupdated: 2026-01-05\n"
    meta += _sources((S1[0], 1, S1[2][0]))
    body = (
        "---\n# Dana\n\n"
        "- Dana needs the figures as PDF for Reefsong. [cite:1]\n"
        "- Dana wants figures as PDF.\n"
        "\n"
        "Dana needs figures for Reefsong [cite:1]. More text.\n"
        "Dana was born in Paris in 1970.\n"
    )
    store = _store_with_page(tmp_path, "knowledge/people/dana.md", meta + body)
    lines = (store.memory / "knowledge/people/dana.md").read_text().splitlines()
    bullet = lines.index("- Dana wants figures as PDF.") + 1
    sentence = lines.index("Dana was born in Paris in 1970.") + 1
    found = validate_store(store)
    assert [(f.path, f.line, f.code) for f in found] == [
        ("memory/knowledge/people/dana.md", bullet, "MF110"),
        ("memory/knowledge/people/dana.md", sentence, "MF110"),
    ]
    assert bullet == len(meta.splitlines()) + 5  # after '---', the heading, a blank, a claim
    assert f"wraps the claim on line {sentence - 1}" in found[1].message  # one paragraph
    assert "uncited factual line: '- Dana wants figures as PDF.'" in found[0].message
    assert "[cite:N]" in found[0].hint


def test_only_pages_of_knowledge_notes_and_summaries_are_read(tmp_path: Path) -> None:
    store = _store_with_page(tmp_path, "knowledge/topics/t.md", HEAD.replace("id: p", "id: t"))
    (store.memory / "knowledge/topics/t.md").write_text(HEAD.replace("id: p", "id: t") + "Text.\n")
    assert [f.code for f in validate_store(store)] == ["MF110"]
    summary = store.memory / "sessions/summaries" / f"{S1[0]}.md"
    summary.write_text(
        f"---\nid: {S1[0]}\ntitle: Figures\ntype: summary\nupdated: 2026-01-05\n---\n"
        "## Key points\n\n- Dana wants figures as PDF.\n\n## Outcome\n\nOutcome: none recorded\n"
    )
    assert [(f.path.rsplit("/", 2)[1], f.line, f.code) for f in validate_store(store)] == [
        ("topics", 7, "MF110"),
        ("summaries", 9, "MF110"),
    ]


# -- recall never serves an (unsupported) line -----------------------------------------


def test_recall_and_search_do_not_serve_a_line_marked_unsupported(tmp_path: Path) -> None:
    meta = "---\nid: dana\ntitle: Dana\ntype: person\nupdated: 2026-01-05\n"
    meta += _sources((S1[0], 1, S1[2][0]))
    body = (
        "---\n# Dana\n\n"
        "- Dana needs the figures as PDF for Reefsong. [cite:1]\n"
        "- Dana keeps a houseboat called Quokka on the Elbe. (unsupported)\n"
        "- none recorded\n"
    )
    store = _store_with_page(tmp_path, "knowledge/people/dana.md", meta + body)
    store.commit("a page with a claim whose evidence went")
    assert validate_store(store) == []
    r = recall(store, "What is Dana's houseboat called on the Elbe? Quokka?", 1500)
    assert "Quokka" not in r.text and "houseboat" not in r.text
    assert all("Quokka" not in i.text for i in r.items)
    with SearchIndex.open(store) as idx:
        idx.refresh_for_read()
        assert [h for h in idx.search("Quokka houseboat Elbe") if "Quokka" in h.text] == []
    assert "figures as PDF" in recall(store, "Which figure format does Dana need?", 1500).text


# -- DV110 / DV111: frontmatter held to the page's claims --------------------------------


def test_a_summary_or_title_no_current_claim_supports_is_found(tmp_path: Path) -> None:
    meta = "---\nid: n\ntitle: Dana was born in Paris\ntype: note\n"
    meta += "summary: Dana was born in Paris in 1970.\nupdated: 2026-01-05\n"
    meta += _sources((S1[0], 1, S1[2][0]))
    text = meta + "---\n# Dana needs the figures\n\n- Dana needs the figures as PDF. [cite:1]\n"
    store = _store_with_page(tmp_path, "notes/dana/n.md", text)
    page = parse_page(text, "notes/dana/n.md")
    found = frontmatter_problems(store, store.root, "", "memory/notes/dana/n.md", page, True)
    assert sorted((p.code, p.line) for p in found) == [
        ("DV110", 5),  # "Paris" and "1970"
        ("DV110", 5),
        ("DV111", 3),  # "Paris"
    ]
    assert all("is not supported" in p.message for p in found)
    good = text.replace("Dana was born in Paris in 1970.", "Dana needs the figures as PDF.")
    good = good.replace("title: Dana was born in Paris", "title: Dana needs the figures …")
    page = parse_page(good, "notes/dana/n.md")
    assert frontmatter_problems(store, store.root, "", "memory/notes/dana/n.md", page, True) == []
    # a subject page's title is its subject's name: not a claim
    subject = good.replace("id: n", "id: paris").replace("title: Dana", "title: Paris Dana")
    page = parse_page(subject, "knowledge/places/paris.md")
    rel = "memory/knowledge/places/paris.md"
    assert frontmatter_problems(store, store.root, "", rel, page, True) == []


def test_the_support_holds_current_claims_and_their_days() -> None:
    body = (
        "# Dana\n\n## 2026-02-09 (9 February 2026)\n\n"
        "- Dana started at Tidewater Analytics. [cite:1]\n\n## History\n\n"
        "- Dana worked at Marlow. [cite:2] (superseded on 2026-02-09)\n"
    )
    page = parse_page(HEAD + body, "knowledge/people/dana.md")
    current = [c for c in extract_claims(page) if not c.superseded]
    support = claims_support(current, ("Dana",))
    assert "tidewater" in support.text and "marlow" not in support.text
    assert any(str(d) == "2026-02-09" for d, _ in support.dates)


# -- a run: what the gates reject is left out, the rest lands ----------------------------

AGENT = """
import sys
from pathlib import Path
from memoryfs.pages.page import Page, render_page
from memoryfs.store.hashing import content_hash
from memoryfs.pages.transcript import parse_transcript
import json, os

mode = sys.argv[1]

def source(n, sid, turn):
    t = parse_transcript(Path("memory/sessions/transcripts", sid + ".md").read_text())
    return {"id": n, "ref": f"sessions/transcripts/{sid}.md#t{turn}", "at": t.date,
            "hash": t.turn(f"t{turn}").hash}

for p in json.loads(Path(os.environ["DREAM_PENDING_FILE"]).read_text()):
    raw = Path("memory", p["path"]).read_text()
    t = parse_transcript(raw, p["path"])
    meta = {"id": t.id, "title": f"Session {t.id}", "type": "summary", "updated": t.date,
            "transcript_hash": content_hash(raw), "turns": len(t.turns),
            "sources": [source(1, t.id, 1)]}
    body = (f"\\n## Key points\\n\\n- {t.turns[0].text} [cite:1]\\n\\n"
            "## Outcome\\n\\nnone recorded\\n")
    Path("memory/sessions/summaries", f"{t.id}.md").write_text(render_page(Page(meta, body)))

dana = Path("memory/knowledge/people/dana.md")
if mode == "new":
    meta = {"id": "dana", "title": "Dana", "type": "person", "updated": "2026-01-05",
            "summary": "Dana was born in Paris in 1970.", "sources": [source(1, SID1, 1)]}
    body = ("# Dana\\n\\n- Dana needs the figures as PDF for Reefsong. [cite:1]\\n"
            "- Dana wants figures as PDF.\\n")
    dana.parent.mkdir(parents=True, exist_ok=True)
    dana.write_text(render_page(Page(meta, body)))
    note = Path("memory/notes/dana/dana-paris.md")
    note.parent.mkdir(parents=True, exist_ok=True)
    meta = {"id": "dana-paris", "title": "Dana was born in Paris", "type": "note",
            "updated": "2026-01-05", "sources": [source(1, SID1, 1)]}
    body = ("# Dana was born in Paris\\n\\n- Dana needs the figures as PDF for Reefsong. "
            "[cite:1]\\n\\nAbout: [[dana|Dana]]\\n")
    note.write_text(render_page(Page(meta, body)))
if mode == "edit":
    page = dana.read_text()
    head, body = page.split("\\n---\\n", 1)
    head = head.replace("summary: ", "summary: Dana moved to Paris in 1970, and ")
    head += "\\n" + "\\n".join(["- id: 2", "  ref: " + source(2, SID3, 1)["ref"],
                              "  at: 2026-01-07", "  hash: " + source(2, SID3, 1)["hash"]])
    body += ("- Dana flies to Lisbon for the workshop. [cite:2]\\n"
             "- Dana likes Lisbon best.\\n")
    dana.write_text(head + "\\n---\\n" + body)
"""


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    path = tmp_path / "agent.py"
    path.write_text(f"SID1 = {S1[0]!r}\nSID3 = {S3[0]!r}\n" + AGENT)
    return path


def _run(store: Store, agent: Path, mode: str) -> tuple[str, list[str], str]:
    engine = CommandEngine(CommandSettings(cmd=shlex.join([sys.executable, str(agent), mode])))
    result = run_dream(store, engine)
    assert result.status == "committed", result.problems
    return result.run_id, list(result.left_out), result.commit


def _git(store: Store, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=store.root, capture_output=True, text=True, check=True
    ).stdout


def test_a_run_leaves_out_an_uncited_line_and_unsupported_frontmatter_and_lands_the_rest(
    tmp_path: Path, agent: Path
) -> None:
    store = init_store(tmp_path / "store", "dana", "atlas")
    approve(store, by="tests")
    add_sessions(store, tmp_path / "in", [S1, S2])
    run_id, left, _ = _run(store, agent, "new")
    kinds = sorted((x.split(": ", 1)[1].split()[0], x.rsplit("(", 1)[1]) for x in left)
    assert kinds == [
        ("DV110", "summary left out)"),
        ("DV111", "file left out)"),
        ("MF110", "line left out)"),
    ], left
    dana = (store.memory / "knowledge/people/dana.md").read_text()
    assert "- Dana needs the figures as PDF for Reefsong. [cite:1]" in dana  # the claim landed
    assert "wants figures" not in dana and "Paris" not in dana and "summary:" not in dana
    assert not (store.memory / "notes/dana/dana-paris.md").exists()
    assert (store.memory / "sessions/summaries" / f"{S2[0]}.md").is_file()
    assert validate_store(store) == []
    assert "Paris" not in (store.memory / "INDEX.md").read_text()
    # what was left out waits on the run's branch for review, as the agent wrote it
    assert kept_runs(store) == [run_id]
    kept = _git(store, "show", f"dream/{run_id}:memory/knowledge/people/dana.md")
    assert "- Dana wants figures as PDF." in kept and "born in Paris" in kept

    # the next night edits the page that landed: its new claim lands, the uncited line and
    # the made-up summary do not (the summary stays what the page said: a person wrote it,
    # so the run keeps it before the gates see the agent's, dream.phases.hand_edits)
    page = store.memory / "knowledge/people/dana.md"
    summary = "summary: Dana needs the figures as PDF for Reefsong.\n"
    page.write_text(page.read_text().replace("type: person\n", "type: person\n" + summary))
    store.commit("a summary by hand")
    add_sessions(store, tmp_path / "in2", [S3])
    _, left, _ = _run(store, agent, "edit")
    kinds = sorted((x.split(": ", 1)[1].split()[0], x.rsplit("(", 1)[1]) for x in left)
    assert kinds == [("MF110", "line left out)")], left
    dana = page.read_text()
    assert "- Dana flies to Lisbon for the workshop. [cite:2]" in dana
    assert summary in dana and "likes Lisbon" not in dana and "Paris" not in dana
    assert validate_store(store) == []


def test_an_uncited_line_the_base_held_does_not_cost_the_page(tmp_path: Path, agent: Path) -> None:
    """A line that landed before MF110 (or by hand) is ``memoryfs validate``'s to report:
    a run that changes its page still lands the page."""
    store = init_store(tmp_path / "store", "dana", "atlas")
    approve(store, by="tests")
    add_sessions(store, tmp_path / "in", [S1])
    meta = "---\nid: dana\ntitle: Dana\ntype: person\nupdated: 2026-01-05\n"
    meta += _sources((S1[0], 1, S1[2][0]))
    page = store.memory / "knowledge/people/dana.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(meta + "---\n# Dana\n\n- Dana has an old uncited line.\n")
    store.commit("a page by hand")
    add_sessions(store, tmp_path / "in2", [S3])
    _, left, _ = _run(store, agent, "edit")
    assert [x.split(": ", 1)[1].split()[0] for x in left] == ["MF110"]  # its own line only
    text = page.read_text()
    assert "- Dana has an old uncited line." in text
    assert "- Dana flies to Lisbon for the workshop. [cite:2]" in text
    assert [f.code for f in validate_store(store)] == ["MF110"]


def test_dream_review_lists_the_codes(tmp_path: Path, agent: Path) -> None:
    store = init_store(tmp_path / "store", "dana", "atlas")
    approve(store, by="tests")
    add_sessions(store, tmp_path / "in", [S1])
    run_id, _, commit = _run(store, agent, "new")
    message = _git(store, "log", "-1", "--format=%B", commit)
    assert "MF110" in message and "DV110" in message and "DV111" in message
    assert run_id in message
