"""Hostile inputs to each importer, through ``memoryfs ingest``: every one ends in one
clear error line (non-zero exit, no traceback, nothing written) or in a faithful
transcript, in bounded time. Property tests feed each loader random structures of
its format's shape."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import paths
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from cli.memoryfs_app import app
from memoryfs.errors import MemoryFSError
from memoryfs.ingest.formats import loader
from memoryfs.ingest.source import Source
from memoryfs.store.store import Store

FIXTURES = paths.FIXTURES / "ingest"
# A guard against a hang or a quadratic blow-up on hostile input (minutes), not a speed
# measure: generous enough for a loaded 2-core machine.
LIMIT_S = 60.0
SCOPE = {"user": "dana", "assistant": "atlas"}
BIG = "0123456789abcdef\n" * 300_000  # a 5 MB tool output


def _fixture(case: str) -> bytes:
    (path,) = [p for p in (FIXTURES / case).iterdir() if p.is_file()]
    return path.read_bytes()


def _node(nid: str, parent: str | None, message: Any, children: list[str] | None = None) -> Any:
    return {"id": nid, "parent": parent, "children": children or [], "message": message}


def _msg(role: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {
        "author": {"role": role, "name": extra.pop("name", None)},
        "create_time": 1767225600.0,
        "content": content,
        **extra,
    }


def _chatgpt(mapping: dict[str, Any], current: Any = "n2", title: str = "Trip") -> bytes:
    conv = {"title": title, "create_time": 1767225600.0, "mapping": mapping}
    if current is not None:
        conv["current_node"] = current
    return json.dumps([conv]).encode()


def _chain(*messages: Any) -> dict[str, Any]:
    mapping = {"root": _node("root", None, None)}
    prev = "root"
    for i, m in enumerate(messages, start=1):
        mapping[f"n{i}"] = _node(f"n{i}", prev, m)
        prev = f"n{i}"
    return mapping


USER_HI = _msg("user", {"content_type": "text", "parts": ["Hi, I'm planning a trip."]})
ANSWER = _msg("assistant", {"content_type": "text", "parts": ["Where to?"]})


def _deep(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"k": value}
    return value


def _jsonl(*rows: Any) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def _cc(content: Any, typ: str = "user", **extra: Any) -> dict[str, Any]:
    return {
        "type": typ,
        "sessionId": "9b2d0c1e-0000-4000-8000-000000000000",
        "uuid": f"u-{typ}",
        "timestamp": "2026-01-05T09:30:00.000Z",
        "message": {"role": typ, "content": content},
        **extra,
    }


CC_CALL = _cc(
    [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "log.txt"}}],
    "assistant",
)
OPENAI_CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    ],
}

# (label, --format or None, file name, bytes, expected): expected is a part of the error
# line, or "ok" (the ingest succeeds), or "ok, small" (and the 5 MB output is elided)
CASES: list[tuple[str, str | None, str, bytes, str]] = [
    # chatgpt
    ("chatgpt truncated", None, "c.json", _fixture("chatgpt/export")[:5000], "not valid JSON"),
    (
        "chatgpt parts not a list",
        None,
        "conversations.json",
        _chatgpt(_chain(_msg("user", {"content_type": "text", "parts": "hi"}), ANSWER)),
        "conversation 1 ('Trip'), node n1: message.content.parts is not a list",
    ),
    (
        "chatgpt mapping list",
        "chatgpt",
        "c.json",
        b'[{"mapping": []}]',
        "'mapping' is not an object",
    ),
    (
        "chatgpt cycle",
        None,
        "c.json",
        _chatgpt({"n1": _node("n1", "n2", USER_HI), "n2": _node("n2", "n1", ANSWER)}),
        "the parent chain is a cycle",
    ),
    (
        "chatgpt self parent",
        None,
        "c.json",
        _chatgpt({"n2": _node("n2", "n2", USER_HI)}),
        "the parent chain is a cycle",
    ),
    (
        "chatgpt parent pointing nowhere",
        None,
        "c.json",
        _chatgpt({"n1": _node("n1", "gone", USER_HI), "n2": _node("n2", "n1", ANSWER)}),
        "ok",
    ),
    ("chatgpt current nowhere", None, "c.json", _chatgpt(_chain(USER_HI), "zz"), "current_node"),
    (
        "chatgpt node not an object",
        None,
        "c.json",
        _chatgpt({"n1": 5, "n2": _node("n2", "n1", ANSWER)}),
        "node n1: not an object",
    ),
    (
        "chatgpt parent not a string",
        None,
        "c.json",
        _chatgpt({"n2": _node("n2", 7, USER_HI)}),  # type: ignore[arg-type]
        "'parent' is not a string",
    ),
    (
        "chatgpt unknown role",
        None,
        "c.json",
        _chatgpt(_chain(_msg("critic", {"content_type": "text", "parts": ["x"]}), ANSWER)),
        "unknown author role 'critic'",
    ),
    (
        "chatgpt bad create_time",
        None,
        "c.json",
        _chatgpt(_chain(USER_HI, {**ANSWER, "create_time": "yesterday"})),
        "node n2: 'create_time' 'yesterday'",
    ),
    (
        "chatgpt huge tool output",
        None,
        "c.json",
        _chatgpt(
            _chain(
                USER_HI,
                _msg("tool", {"content_type": "execution_output", "text": BIG}, name="python"),
                ANSWER,
            ),
            "n3",
        ),
        "ok, small",
    ),
    ("chatgpt not conversations", "chatgpt", "c.json", b"[5, 6]", "not a ChatGPT export"),
    ("chatgpt non-utf8", None, "c.json", b'[{"title": "caf\xe9"}]', "not UTF-8"),
    ("chatgpt deep nesting", None, "c.json", b"[" * 100_000, "nested too deeply"),
    (
        "chatgpt surrogate in user text",
        None,
        "c.json",
        _chatgpt(_chain(_msg("user", {"content_type": "text", "parts": ["\ud800"]}), ANSWER)),
        "invalid Unicode",
    ),
    (
        "chatgpt long chain",
        None,
        "c.json",
        _chatgpt(_chain(*[USER_HI, ANSWER] * 25_000), "n50000"),
        # walked without recursion, then refused by limits.turns (2.5 MB as a transcript:
        # more than validation accepts of a file)
        "has 50000 turns, over the limit of 10000",
    ),
    # openai
    ("openai truncated", None, "o.json", _fixture("openai/flight-search")[:700], "not valid JSON"),
    (
        "openai truncated jsonl",
        "openai",
        "o.jsonl",
        _fixture("openai/jsonl-lines")[:500],
        ":4: not a JSON object (Unterminated string starting at, column",
    ),
    ("openai content number", "openai", "o.json", b'[{"role": "user", "content": 5}]', "message 1"),
    (
        "openai tool_calls string",
        "openai",
        "o.json",
        b'[{"role": "assistant", "tool_calls": "x"}]',
        "'tool_calls' is not a list",
    ),
    (
        "openai huge tool output",
        None,
        "o.json",
        json.dumps(
            [
                {"role": "user", "content": "read the log", "ts": 1767225600},
                OPENAI_CALL,
                {"role": "tool", "tool_call_id": "c1", "content": BIG},
            ]
        ).encode(),
        "ok, small",
    ),
    ("openai non-utf8", "openai", "o.json", b'[{"role": "user", "content": "\xff"}]', "not UTF-8"),
    (
        "openai deep arguments",
        None,
        "o.json",
        b'[{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": '
        + b'{"k": ' * 5000
        + b"1"
        + b"}" * 5000
        + b"}}]}]",
        "nested too deeply",
    ),
    (
        "openai NUL in tool output",
        None,
        "o.json",
        json.dumps(
            [{"role": "user", "content": "x", "ts": 1}, {"role": "tool", "content": "a\x00b"}]
        ).encode(),
        "ok",
    ),
    (
        "openai NUL in user text",
        None,
        "o.json",
        json.dumps([{"role": "user", "content": "a\x00b", "ts": 1}]).encode(),
        "NUL characters",
    ),
    # claude-code
    (
        "claude-code unterminated last line",
        None,
        "s.jsonl",
        _fixture("claude-code/session")[:-200],
        "ok",
    ),
    (
        "claude-code bad line in the middle",
        None,
        "s.jsonl",
        _jsonl(_cc("hi")) + b'{"type": "user", "mess\n' + _jsonl(_cc("again")),
        "s.jsonl:2: not a JSON object",
    ),
    (
        "claude-code message string",
        "claude-code",
        "s.jsonl",
        _jsonl({**_cc("x"), "message": "hi"}),
        "'message' is not an object",
    ),
    (
        "claude-code content number",
        None,
        "s.jsonl",
        _jsonl(_cc(5)),
        "message.content is neither a string nor a list",
    ),
    ("claude-code block string", None, "s.jsonl", _jsonl(_cc(["hi"])), "block 1 is not an object"),
    (
        "claude-code bad timestamp",
        None,
        "s.jsonl",
        _jsonl({**_cc("hi"), "timestamp": "noon"}),
        "'timestamp' 'noon'",
    ),
    (
        "claude-code huge tool result",
        None,
        "s.jsonl",
        _jsonl(
            _cc("read the log"),
            CC_CALL,
            _cc([{"type": "tool_result", "tool_use_id": "t1", "content": BIG}]),
        ),
        "ok, small",
    ),
    (
        "claude-code deep input",
        None,
        "s.jsonl",
        _jsonl(_cc("hi")) + b'{"type": "assistant", "message": ' + b"[" * 5000 + b"\n",
        "nested too deeply",
    ),
    (
        "claude-code deep but readable input",
        None,
        "s.jsonl",
        _jsonl(
            _cc("hi"),
            _cc([{"type": "tool_use", "id": "t", "name": "f", "input": _deep(400)}], "assistant"),
        ),
        "ok",
    ),
    ("claude-code non-utf8", "claude-code", "s.jsonl", b'{"type": "user\xc3"}\n', "not UTF-8"),
    (
        "claude-code snapshots only",
        None,
        "s.jsonl",
        _jsonl({"type": "file-history-snapshot", "messageId": "m", "snapshot": {}}),
        "ok",
    ),
    # the formats that were there before
    ("jsonl truncated", None, "l.jsonl", _fixture("jsonl/chat-log")[:90], ":2: not a JSON object"),
    (
        "locomo truncated",
        None,
        "conv.json",
        _fixture("locomo/conversation")[:300],
        "not valid JSON",
    ),
    ("md non-utf8", None, "t.md", _fixture("md/transcript").replace(b"PDF", b"\xff"), "not UTF-8"),
]


def _snapshot(store: Store) -> dict[str, bytes]:
    return {
        str(p.relative_to(store.root)): p.read_bytes()
        for p in store.root.rglob("*")
        if p.is_file() and ".git" not in p.parts and ".memoryfs" not in p.parts
    }


@pytest.mark.parametrize(
    ("label", "fmt", "name", "data", "expected"), CASES, ids=[c[0] for c in CASES]
)
def test_hostile_input_ends_in_a_transcript_or_one_clear_error(
    tmp_store: Store,
    tmp_path: Path,
    label: str,
    fmt: str | None,
    name: str,
    data: bytes,
    expected: str,
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    before, head = _snapshot(tmp_store), tmp_store.head()
    args = ["ingest", "--store", str(tmp_store.root), str(path)]
    start = time.monotonic()
    r = CliRunner().invoke(app, [*args, *(["--format", fmt] if fmt else [])])
    assert time.monotonic() - start < LIMIT_S
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    if expected.startswith("ok"):
        assert r.exit_code == 0, r.stderr
        if expected == "ok, small":
            (transcript,) = (tmp_store.memory / "sessions" / "transcripts").glob("*.md")
            assert transcript.stat().st_size < 3_000  # the 5 MB output is elided, not copied
        return
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 1 and len(lines) == 1, r.stderr
    assert lines[0].startswith(f"error: {path}") and expected in lines[0], lines[0]
    assert tmp_store.head() == head and _snapshot(tmp_store) == before
    status = subprocess.run(
        ["git", "-C", str(tmp_store.root), "status", "--porcelain"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert status == ""


def test_parent_pointing_nowhere_starts_the_path_there(tmp_store: Store, tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(
        _chatgpt({"n1": _node("n1", "gone", USER_HI), "n2": _node("n2", "n1", ANSWER)})
    )
    r = CliRunner().invoke(app, ["ingest", "--store", str(tmp_store.root), str(path)])
    assert r.exit_code == 0, r.stderr
    text = tmp_store.transcript_path("2026-01-01-trip").read_text(encoding="utf-8")
    assert "## t1 · user" in text and "## t2 · assistant" in text and "## t3" not in text


# -- property tests: random structures of each format's shape ----------------------------

FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
TEXTISH = st.text(max_size=30) | JSON
TIME = st.sampled_from([1767225600.0, "2026-01-01T10:00:00Z", "noon", -1e30, None]) | JSON
PART = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["text", "image_url", "input_audio", "file", "refusal", "odd"]),
        "text": TEXTISH,
        "refusal": TEXTISH,
        "file": JSON,
        "content_type": st.sampled_from(["image_asset_pointer", "audio_transcription"]) | JSON,
    },
)
CONTENT = TEXTISH | st.lists(PART | JSON, max_size=3)
OPENAI_MESSAGE = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["user", "assistant", "tool", "system", "function", "x"]) | JSON,
        "content": CONTENT,
        "ts": TIME,
        "tool_call_id": st.sampled_from(["c1", "c2"]) | JSON,
        "name": TEXTISH,
        "refusal": TEXTISH,
        "tool_calls": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "id": st.sampled_from(["c1", "c2"]) | JSON,
                    "type": st.sampled_from(["function", "custom"]) | JSON,
                    "function": st.fixed_dictionaries(
                        {}, optional={"name": TEXTISH, "arguments": TEXTISH}
                    )
                    | JSON,
                },
            )
            | JSON,
            max_size=2,
        )
        | JSON,
    },
)
CHATGPT_MESSAGE = st.fixed_dictionaries(
    {},
    optional={
        "author": st.fixed_dictionaries(
            {},
            optional={
                "role": st.sampled_from(["user", "assistant", "tool", "system"]) | JSON,
                "name": TEXTISH,
            },
        )
        | JSON,
        "create_time": TIME,
        "recipient": st.sampled_from(["all", "python", ""]) | JSON,
        "channel": st.sampled_from(["analysis", "final"]) | JSON,
        "metadata": st.fixed_dictionaries(
            {},
            optional={
                "is_visually_hidden_from_conversation": st.booleans() | JSON,
                "attachments": JSON,
            },
        )
        | JSON,
        "content": st.fixed_dictionaries(
            {},
            optional={
                "content_type": st.sampled_from(
                    [
                        "text",
                        "multimodal_text",
                        "code",
                        "execution_output",
                        "tether_quote",
                        "tether_browsing_display",
                        "system_error",
                        "thoughts",
                        "odd",
                    ]
                )
                | JSON,
                "parts": st.lists(TEXTISH | PART, max_size=3) | JSON,
                "text": TEXTISH,
                "result": TEXTISH,
                "title": TEXTISH,
                "url": TEXTISH,
                "language": TEXTISH,
            },
        )
        | JSON,
    },
)
NODE_IDS = st.sampled_from(["a", "b", "c", "d"])
CHATGPT = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "title": TEXTISH,
            "id": TEXTISH,
            "create_time": TIME,
            "current_node": NODE_IDS | JSON,
            "mapping": st.dictionaries(
                NODE_IDS,
                st.fixed_dictionaries(
                    {},
                    optional={
                        "parent": NODE_IDS | JSON,
                        "children": st.lists(NODE_IDS, max_size=2) | JSON,
                        "message": CHATGPT_MESSAGE | JSON,
                    },
                )
                | JSON,
                max_size=4,
            )
            | JSON,
        },
    )
    | JSON,
    max_size=3,
)
BLOCK = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(
            ["text", "thinking", "tool_use", "tool_result", "image", "document", "odd"]
        )
        | JSON,
        "text": TEXTISH,
        "id": st.sampled_from(["t1", "t2"]) | JSON,
        "tool_use_id": st.sampled_from(["t1", "t2"]) | JSON,
        "name": TEXTISH,
        "input": JSON,
        "content": TEXTISH | st.lists(PART | JSON, max_size=2),
        "is_error": st.booleans() | JSON,
    },
)
CC_ENTRY = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["user", "assistant", "summary", "system", "ai-title"]) | JSON,
        "sessionId": st.sampled_from(["4f35e220-c435", "", "Ü"]) | JSON,
        "timestamp": TIME,
        "isSidechain": st.booleans() | JSON,
        "isMeta": st.booleans() | JSON,
        "summary": TEXTISH,
        "message": st.fixed_dictionaries(
            {},
            optional={
                "id": st.sampled_from(["m1", "m2"]) | JSON,
                "content": TEXTISH | st.lists(BLOCK | JSON, max_size=3),
            },
        )
        | JSON,
    },
)


def _bounded(fmt: str, data: bytes, stem: str = "in") -> None:
    src = Source(f"{stem}.x", data, stem=stem, suffix=".x")
    start = time.monotonic()
    try:
        for imported in loader(fmt)(src, SCOPE):
            assert imported.transcript.turns
    except MemoryFSError:
        pass
    assert time.monotonic() - start < 2.0


@FUZZ
@given(st.lists(OPENAI_MESSAGE | JSON, max_size=5))
def test_openai_loader_on_random_messages(messages: list[Any]) -> None:
    _bounded("openai", json.dumps(messages).encode())
    _bounded("openai", b"".join(json.dumps(m).encode() + b"\n" for m in messages))


@FUZZ
@given(CHATGPT)
def test_chatgpt_loader_on_random_exports(conversations: Any) -> None:
    _bounded("chatgpt", json.dumps(conversations).encode())


@FUZZ
@given(st.lists(CC_ENTRY | JSON, max_size=6))
def test_claude_code_loader_on_random_logs(entries: list[Any]) -> None:
    _bounded("claude-code", b"".join(json.dumps(e).encode() + b"\n" for e in entries))
