"""Importers for the transcripts people have: golden fixtures per format, what each
format keeps and skips, ids and times against the store, detection, and stdin.

Golden fixtures: ``tests/fixtures/ingest/<format>/<case>/`` holds one input file
and ``expected/<session-id>.md`` per session it must give. Run with
``MEMORYFS_WRITE_GOLDEN=1`` to rewrite the expected files (then read the diff).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import paths
import pytest
from typer.testing import CliRunner

from cli.memoryfs_app import app
from memoryfs.errors import IngestError
from memoryfs.ingest import FORMATS, Source, ingest, load_sessions
from memoryfs.ingest.detect import detect
from memoryfs.ingest.formats.naming import title_slug
from memoryfs.ingest.formats.tooltext import LIMIT, elide
from memoryfs.pages.transcript import parse_transcript, render_transcript
from memoryfs.store.store import Store
from memoryfs.validate.rules import validate_store

FIXTURES = paths.FIXTURES / "ingest"
CASES = sorted(p for p in FIXTURES.glob("*/*") if p.is_dir())
WRITE = os.environ.get("MEMORYFS_WRITE_GOLDEN") == "1"


def _input(case: Path) -> Path:
    (found,) = [p for p in case.iterdir() if p.is_file()]
    return found


def _expected(case: Path) -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(case.glob("expected/*.md"))}


def test_every_format_has_a_golden_case() -> None:
    assert sorted({c.parent.name for c in CASES}) == sorted(FORMATS)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name}" for c in CASES])
def test_golden(case: Path, tmp_store: Store) -> None:
    fmt, src = case.parent.name, _input(case)
    assert detect(Source.from_path(src), None) == fmt  # named or sniffed, it is this format
    got = {t.id: render_transcript(t) for t in load_sessions(tmp_store, src, fmt)}
    if WRITE:
        shutil.rmtree(case / "expected", ignore_errors=True)
        (case / "expected").mkdir()
        for sid, text in got.items():
            (case / "expected" / f"{sid}.md").write_text(text, encoding="utf-8")
    assert got == _expected(case)
    # ingested, the files are the golden ones, they validate, and a second ingest adds nothing
    result = ingest(tmp_store, [src])
    assert {s.id for s in result.sessions} == set(got) and result.commit
    for sid, text in got.items():
        assert tmp_store.transcript_path(sid).read_text(encoding="utf-8") == text
    assert validate_store(tmp_store) == []
    again = ingest(tmp_store, [src])
    assert again.commit == "" and {s.status for s in again.sessions} == {"unchanged"}


# -- what each format keeps, skips and elides ----------------------------------------


def _all_text(store: Store) -> str:
    folder = store.memory / "sessions" / "transcripts"
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.md")))


def test_chatgpt_keeps_the_current_branch_and_skips_what_the_user_never_saw(
    tmp_store: Store,
) -> None:
    ingest(tmp_store, [FIXTURES / "chatgpt/export/conversations.json"])
    text = _all_text(tmp_store)
    assert "Skip the fado" not in text  # an edited-away question on another branch
    assert "I live in Hamburg" not in text  # hidden custom instructions
    assert "The user wants evenings planned" not in text  # reasoning
    assert "Thought for 4 seconds" not in text
    t = parse_transcript(
        tmp_store.transcript_path("2025-02-27-lisbon-evenings-cafe-fado").read_text("utf-8")
    )
    assert [turn.speaker for turn in t.turns][:2] == ["user", "tool"]
    assert t.turns[0].text.startswith("[image]\nThis is the café in Alfama")
    assert t.meta["source_id"] == "67c5a1f0-3b2e-8008-9f1d-6b0e4a2c7d11"
    # a message without create_time takes the conversation's
    assert t.turns[4].ts == "2025-02-27T09:39:59+00:00" == t.started


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Trip to Lisbon", "trip-to-lisbon"),
        ("Große Straße", "grosse-strasse"),
        ("ẞ Café Crème Brûlée", "ss-cafe-creme-brulee"),
        ("  --Hello,   World!!--  ", "hello-world"),
        ("", "chat"),
        ("你好 ✈️", "chat"),
        ("one two three four five six seven eight nine", "one-two-three-four-five-six-seven-eight"),
        ("abcdefghij-abcdefghij-abcdefghij-abcdefg-xy", "abcdefghij-abcdefghij-abcdefghij-abcdefg"),
        ("abcdefghij-abcdefghij-abcdefghij-abcdefgh-x", "abcdefghij-abcdefghij-abcdefghij"),
        ("x" * 50, "x" * 40),
        ("ﬁnal ﬂight", "final-flight"),
    ],
)
def test_chatgpt_title_slug(title: str, slug: str) -> None:
    assert title_slug(title) == slug


def _conversation(cid: str | None, title: str, created: float, texts: list[str]) -> dict[str, Any]:
    mapping: dict[str, Any] = {
        "root": {"id": "root", "message": None, "parent": None, "children": []}
    }
    prev = "root"
    for i, text in enumerate(texts):
        nid = f"n{i}"
        mapping[prev]["children"].append(nid)
        role = "user" if i % 2 == 0 else "assistant"
        mapping[nid] = {
            "id": nid,
            "parent": prev,
            "children": [],
            "message": {
                "id": nid,
                "author": {"role": role, "name": None, "metadata": {}},
                "create_time": created + i,
                "content": {"content_type": "text", "parts": [text]},
                "metadata": {},
                "recipient": "all",
            },
        }
        prev = nid
    conv: dict[str, Any] = {
        "title": title,
        "create_time": created,
        "mapping": mapping,
        "current_node": prev,
    }
    if cid:
        conv["id"] = conv["conversation_id"] = cid
    return conv


def _write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_chatgpt_same_title_same_day_is_numbered_in_file_order(
    tmp_store: Store, tmp_path: Path
) -> None:
    day = 1767225600.0  # 2026-01-01T00:00Z
    convs = [
        _conversation(None, "Groceries", day + 10, ["milk"]),
        _conversation(None, "Groceries", day + 20, ["eggs"]),
        _conversation(None, "Groceries!", day + 30, ["bread"]),
        _conversation(None, "Groceries", day + 86400, ["next day"]),
    ]
    src = _write_json(tmp_path / "conversations.json", convs)
    ids = [t.id for t in load_sessions(tmp_store, src)]
    assert ids == [
        "2026-01-01-groceries",
        "2026-01-01-groceries-2",
        "2026-01-01-groceries-3",
        "2026-01-02-groceries",
    ]


def test_chatgpt_updated_export_appends_to_the_same_session_even_renamed(
    tmp_store: Store, tmp_path: Path
) -> None:
    day = 1767225600.0
    first = [_conversation("c-1", "Kitchen", day, ["The new oven arrives Monday.", "Noted."])]
    ingest(tmp_store, [_write_json(tmp_path / "conversations.json", first)])
    before = tmp_store.transcript_path("2026-01-01-kitchen").read_bytes()
    # the user renamed the chat and went on; another chat took the old title and date
    later = [
        _conversation(
            "c-1",
            "Kitchen renovation",
            day,
            ["The new oven arrives Monday.", "Noted.", "It came on Tuesday.", "Good."],
        ),
        _conversation("c-2", "Kitchen", day + 60, ["Different chat, same title."]),
    ]
    result = ingest(tmp_store, [_write_json(tmp_path / "conversations.json", later)])
    assert [(s.id, s.status, s.turns_added) for s in result.sessions] == [
        ("2026-01-01-kitchen", "grown", 2),
        ("2026-01-01-kitchen-2", "new", 1),
    ]
    after = tmp_store.transcript_path("2026-01-01-kitchen").read_bytes()
    assert after.startswith(before) and b"It came on Tuesday." in after
    again = ingest(tmp_store, [_write_json(tmp_path / "conversations.json", later)])
    assert again.commit == ""


def test_claude_code_grown_log_appends_and_a_half_written_line_waits(
    tmp_store: Store, tmp_path: Path
) -> None:
    log = _input(FIXTURES / "claude-code/session").read_text(encoding="utf-8")
    src = tmp_path / "4f35e220-c435-4cf7-b9b9-f40426042847.jsonl"
    src.write_text(log, encoding="utf-8")
    ingest(tmp_store, [src])
    sid = "2026-01-05-4f35e220"
    before = tmp_store.transcript_path(sid).read_bytes()
    entry = {
        "parentUuid": "x",
        "isSidechain": False,
        "sessionId": "4f35e220-c435-4cf7-b9b9-f40426042847",
        "type": "user",
        "message": {"role": "user", "content": "Thanks! Also push the branch."},
        "uuid": "e2",
        "timestamp": "2026-01-05T10:02:00.000Z",
    }
    line = json.dumps(entry)
    src.write_text(log + line[:40], encoding="utf-8")  # Claude Code is writing it now
    assert ingest(tmp_store, [src]).commit == ""
    src.write_text(log + line + "\n", encoding="utf-8")
    result = ingest(tmp_store, [src])
    assert [(s.status, s.turns_added) for s in result.sessions] == [("grown", 1)]
    after = tmp_store.transcript_path(sid).read_bytes()
    assert after.startswith(before) and after.endswith(b"Thanks! Also push the branch.\n")


def test_claude_code_skips_thinking_meta_sidechains_and_compaction(tmp_store: Store) -> None:
    ingest(tmp_store, [_input(FIXTURES / "claude-code/session")])
    text = _all_text(tmp_store)
    for hidden in ("List the figures first.", "Warmup", "init is analyzing", "being continued"):
        assert hidden not in text
    t = parse_transcript(tmp_store.transcript_path("2026-01-05-4f35e220").read_text("utf-8"))
    tool_turns = [turn for turn in t.turns if turn.speaker == "tool"]
    assert (
        tool_turns[0].text.splitlines()[0].startswith('[tool call] Bash({"command": "ls figures/"')
    )
    assert (
        tool_turns[1].text.splitlines()[1]
        == "[tool error] Write: Error: permission denied: convert.py"
    )


def test_openai_undated_file_gets_its_modified_time_and_keeps_it_when_grown(
    tmp_store: Store, tmp_path: Path
) -> None:
    src = tmp_path / "planning.json"
    messages = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Book the dentist for Thursday."},
        {"role": "assistant", "content": "Booked for Thursday at 9."},
    ]
    _write_json(src, messages)
    os.utime(src, (1767265200, 1767265200))  # 2026-01-01T11:00Z
    (t,) = load_sessions(tmp_store, src)
    assert t.meta["undated"] is True and [x.ts for x in t.turns] == ["2026-01-01T11:00+00:00"] * 2
    ingest(tmp_store, [src])
    before = tmp_store.transcript_path("planning").read_bytes()
    _write_json(src, [*messages, {"role": "user", "content": "Make it 10 instead."}])
    os.utime(src, (1767351600, 1767351600))  # a day later
    result = ingest(tmp_store, [src])
    assert [(s.status, s.turns_added) for s in result.sessions] == [("grown", 1)]
    after = tmp_store.transcript_path("planning").read_bytes()
    assert after.startswith(before) and after.endswith(
        b"## t3 \xc2\xb7 user \xc2\xb7 2026-01-02T11:00+00:00\n\nMake it 10 instead.\n"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[]", "no messages"),
        ('[{"role": "critic", "content": "x"}]', "unknown role 'critic'"),
        ('[{"role": "user", "content": 5}]', "'content' must be a string, a list"),
        ('[{"role": "user", "content": [{"text": "x"}]}]', "content part 1 is not an object"),
        ('[{"role": "assistant", "tool_calls": {"id": 1}}]', "'tool_calls' is not a list"),
        ('[{"role": "assistant", "tool_calls": [{"type": "function"}]}]', "tool call 1"),
        ('{"model": "gpt-4o"}', "'messages' list"),
        ('[{"role": "system", "content": "only a prompt"}]', "no message of the user"),
        ('[{"role": "user", "content": "hi", "ts": "soon"}]', "message 1: 'ts' 'soon'"),
        ('{"messages": [1]}\n{"messages": [2]}\n', "a whole conversation"),
    ],
)
def test_openai_bad_shapes_are_one_clear_error(
    tmp_store: Store, tmp_path: Path, text: str, message: str
) -> None:
    src = tmp_path / "chat.json"
    src.write_text(text, encoding="utf-8")
    with pytest.raises(IngestError, match=message):
        ingest(tmp_store, [src], "openai")
    assert tmp_store.files("sessions/transcripts") == []


# -- tool lines -------------------------------------------------------------------------


def test_tool_text_is_kept_whole_up_to_the_limit_and_elided_past_it() -> None:
    short = "x" * LIMIT
    assert elide(short) == short
    long = "word " * 1000
    line = elide(long)
    digest = hashlib.sha256(long.encode()).hexdigest()[:8]
    assert line.endswith(f" … (4,700 chars elided, sha256 {digest}…)")
    assert len(line) < LIMIT + 60 and line.startswith("word word")
    assert elide("a\x00b\ud800c\n\n  d") == "a\ufffdb\ufffdc d"


# -- detection --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "fmt"),
    [
        ("c.json", '[{"title": "t", "mapping": {}}]', "chatgpt"),
        ("c.json", '{"title": "t", "mapping": {}}', "chatgpt"),
        ("c.json", '{"conversations": [{"mapping": {}}]}', "chatgpt"),
        ("c.json", '{"model": "m", "messages": []}', "openai"),
        ("c.json", '[{"role": "user", "content": "hi"}]', "openai"),
        ("c.json", '{"sample_id": "x", "conversation": {}}', "locomo"),
        ("c.jsonl", '{"role": "user", "content": "hi", "ts": 1}\n', "jsonl"),
        ("c.jsonl", '{"role": "system", "content": "be brief"}\n', "openai"),
        ("c.jsonl", '{"role": "user", "content": [{"type": "text", "text": "hi"}]}\n', "openai"),
        ("c.jsonl", '{"type": "summary", "summary": "s", "leafUuid": "u"}\n', "claude-code"),
        ("c.jsonl", "not json\n", "jsonl"),
        ("notes.md", "anything", "md"),
        ("chat.txt", '{"role": "user", "content": "hi", "ts": 1}\n', "jsonl"),
        ("conversations", '[{"title": "t", "mapping": {}}]', "chatgpt"),
        ("-", "---\nid: s\n---\n", "md"),
        ("-", '{"type": "user", "message": {"role": "user", "content": "hi"}}\n', "claude-code"),
        ("-", '{"role": "user", "content": "hi", "ts": 1}\n', "jsonl"),
        ("-", '[{"mapping": {}}]', "chatgpt"),
        ("-", '{\n  "messages": [\n    {"role": "user", "content": "hi"}\n  ]\n}\n', "openai"),
    ],
)
def test_detection(tmp_path: Path, name: str, text: str, fmt: str) -> None:
    if name == "-":
        src = Source.from_stdin(text.encode())
    else:
        (tmp_path / name).write_text(text, encoding="utf-8")
        src = Source.from_path(tmp_path / name)
    assert detect(src, None) == fmt


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("c.json", '{"hello": "world"}', "cannot tell what this JSON holds .*; pass --format"),
        ("c.json", "[]", "an empty list"),
        ("c.json", "{ nope", "not valid JSON \\(line 1, column 3"),
        ("c.txt", "hello", r"cannot tell the format \(not Markdown, JSON or JSONL\); pass"),
        ("-", "hello", "<stdin>: cannot tell the format"),
    ],
)
def test_detection_asks_for_format_when_unsure(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    if name == "-":
        src = Source.from_stdin(text.encode())
    else:
        (tmp_path / name).write_text(text, encoding="utf-8")
        src = Source.from_path(tmp_path / name)
    with pytest.raises(IngestError, match=message):
        detect(src, None)


# -- stdin through the CLI --------------------------------------------------------------


def _cli(store: Store, *args: str, stdin: bytes | str | None = None) -> Any:
    return CliRunner().invoke(app, ["ingest", "--store", str(store.root), *args], input=stdin)


def test_stdin_ingest_names_the_session_after_its_first_time(tmp_store: Store) -> None:
    log = _input(FIXTURES / "openai/jsonl-lines").read_bytes()
    r = _cli(tmp_store, "-", "--json", stdin=log)
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["sessions"][0]["id"] == "2026-04-10-chat-1902" and data["turnsAdded"] == 4
    r = _cli(tmp_store, "-", stdin=log)  # the same again: nothing new
    assert r.exit_code == 0 and r.stdout.strip() == "ingest: nothing new"


def test_stdin_formats_that_name_themselves_keep_their_ids(tmp_store: Store) -> None:
    for case, sid in (
        ("claude-code/session", "2026-01-05-4f35e220"),
        ("chatgpt/export", "2025-02-27-lisbon-evenings-cafe-fado"),
        ("md/transcript", "2026-01-05-figures"),
    ):
        r = _cli(tmp_store, "-", stdin=_input(FIXTURES / case).read_bytes())
        assert r.exit_code == 0, r.stderr
        assert tmp_store.transcript_path(sid).read_text("utf-8") == _expected(FIXTURES / case)[sid]


def test_stdin_with_session_id_and_format(tmp_store: Store) -> None:
    body = json.dumps([{"role": "user", "content": "Call Jonas about the flat."}])
    r = _cli(tmp_store, "-", "--format", "openai", stdin=body)
    assert r.exit_code == 1 and "pass --session-id" in r.stderr
    assert r.stderr.count("\n") == 1 and tmp_store.files("sessions/transcripts") == []
    r = _cli(tmp_store, "-", "--format", "openai", "--session-id", "call-jonas", stdin=body)
    assert r.exit_code == 0, r.stderr
    t = parse_transcript(tmp_store.transcript_path("call-jonas").read_text("utf-8"))
    assert t.turns[0].text == "Call Jonas about the flat." and t.meta["undated"] is True


_NO_ID_MD = """---
type: session
started: 2026-03-01T09:00:00
participants: [dana, atlas]
scope: {user: dana, assistant: atlas}
---

## t1 · dana · 2026-03-01T09:00:00

The boat leaves at noon.
"""


def test_markdown_without_an_id_is_named_by_session_id_or_file_name(
    tmp_store: Store, tmp_path: Path
) -> None:
    r = _cli(tmp_store, "-", "--format", "md", stdin=_NO_ID_MD)
    assert r.exit_code == 1 and r.stderr.count("\n") == 1
    assert "<stdin>" in r.stderr and "pass --session-id" in r.stderr
    assert tmp_store.files("sessions/transcripts") == []
    r = _cli(tmp_store, "-", "--session-id", "boat-trip", "--json", stdin=_NO_ID_MD)
    assert r.exit_code == 0, r.stderr
    assert [s["id"] for s in json.loads(r.stdout)["sessions"]] == ["boat-trip"]
    named = tmp_path / "Harbour Notes.md"
    named.write_text(_NO_ID_MD, "utf-8")
    r = _cli(tmp_store, str(named), "--json")
    assert r.exit_code == 0, r.stderr
    assert [s["id"] for s in json.loads(r.stdout)["sessions"]] == ["harbour-notes"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-", "-"], "stdin ('-') can be read once"),
        (["-", "--session-id", "Bad Id"], "is not a lowercase slug"),
        (["{chatgpt}", "--session-id", "one"], "names one session, but the input holds 4"),
        (["-", "--format", "csv"], "unknown format 'csv'"),
    ],
)
def test_stdin_and_session_id_misuse_is_one_line(
    tmp_store: Store, args: list[str], message: str
) -> None:
    chatgpt = str(_input(FIXTURES / "chatgpt/export"))
    args = [a.replace("{chatgpt}", chatgpt) for a in args]
    r = _cli(tmp_store, *args, stdin='[{"role": "user", "content": "hi", "ts": 1}]')
    assert r.exit_code != 0 and message in r.stderr and r.stderr.count("\n") == 1
    assert tmp_store.files("sessions/transcripts") == []
