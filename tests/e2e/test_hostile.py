"""Hostile input: every input ends in a result or a MemoryFSError, in bounded time,
without executing YAML tags and without reading or writing outside the store.

Property tests (hypothesis) and a bounded, seeded mutation fuzz run cover the
page and transcript parsers, the LoCoMo and JSONL importers and the validator;
an audit hook records every file the code opens or lists, so "never outside the
store" is checked, not assumed.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from forget_fixtures import PHRASE, build_store
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from cli.memoryfs_app import app
from memoryfs.errors import MemoryFSError
from memoryfs.forget.remove import forget
from memoryfs.index.index_md import write_indexes
from memoryfs.ingest import ingest, load_sessions
from memoryfs.ingest.locomo import conversation_from_dict
from memoryfs.pages.listing import iter_pages, load_page
from memoryfs.pages.page import parse_page
from memoryfs.pages.transcript import parse_transcript
from memoryfs.store.store import Store, init_store
from memoryfs.validate.rules import validate_store

LIMIT_S = 2.0  # every single case must finish within this
SCOPE = {"user": "dana", "assistant": "atlas"}
FUZZ = settings(
    max_examples=150,
    deadline=None,  # timing is asserted per case (LIMIT_S), not by hypothesis' 200 ms default
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def bounded(fn: Callable[[], Any]) -> Any:
    """Run ``fn``: it returns, or raises a MemoryFSError; anything else fails the test."""
    start = time.monotonic()
    try:
        return fn()
    except MemoryFSError:
        return None
    finally:
        elapsed = time.monotonic() - start
        assert elapsed < LIMIT_S, f"took {elapsed:.2f}s"


# -- inputs --------------------------------------------------------------------------

MARKER_NAME = "yaml-tag-executed"
YAML_BITS = st.sampled_from(
    [
        "id: x",
        "title: T",
        "type: topic",
        "updated: 2026-01-01",
        "sources:",
        "  - id: 1",
        "    ref: ../../etc/passwd#t1",
        "scope: {user: dana, assistant: atlas}",
        "started: 2026-01-01T10:00",
        "!!python/object/apply:os.system ['true']",
        "&a [*a, *a]",
        "? complex",
        "- - - -",
        "{[",
        "'unterminated",
        '"\\x00"',
        "key: !!binary aGk=",
        "%YAML 1.1",
        "<<: *a",
        "---",
        "\ufeff",
        "\r",
        "\x00",
    ]
)
PAGE_TEXT = st.one_of(
    st.text(),
    st.builds(
        lambda meta, body: "---\n" + "\n".join(meta) + "\n---\n" + body,
        st.lists(YAML_BITS | st.text(max_size=20), max_size=12),
        st.text(),
    ),
)
TURN_BITS = st.sampled_from(
    [
        "## t1 · user · 2026-01-01T10:00",
        "## t2 · atlas · 2026-01-01T10:01",
        "## t9999999 · x · y",
        "\\## t1 · user · 2026-01-01T10:00",
        "## t1 · · ",
        "plain text [cite:1] [[../x]]",
        "",
    ]
)
TRANSCRIPT_TEXT = st.builds(
    lambda meta, lines: "---\n" + meta + "\n---\n" + "\n".join(lines),
    st.sampled_from(
        [
            "id: s1\ntype: session\nstarted: 2026-01-01T10:00\n"
            "scope: {user: dana, assistant: atlas}",
            "id: ../evil\nstarted: 2026-01-01",
            "id: s1\nstarted: not-a-date",
            "id: [1, 2]\nstarted: 2026-01-01",
        ]
    ),
    st.lists(TURN_BITS | st.text(max_size=30), max_size=10),
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
LOCOMO_TURN = st.fixed_dictionaries(
    {},
    optional={
        "speaker": JSON | st.sampled_from(["a", "b", ""]),
        "text": JSON | st.text(),
        "dia_id": JSON | st.sampled_from(["D1:1", "D:1:2", "D0:0", "Dx"]),
        "blip_caption": JSON | st.text(max_size=10),
    },
)
LOCOMO = st.fixed_dictionaries(
    {},
    optional={
        "sample_id": JSON | st.text(max_size=300),
        "qa": JSON,
        "conversation": st.fixed_dictionaries(
            {},
            optional={
                "speaker_a": JSON | st.just("a"),
                "speaker_b": JSON | st.just("b"),
                "session_1": st.lists(LOCOMO_TURN | JSON, max_size=4) | JSON,
                "session_1_date_time": JSON | st.sampled_from(["1:56 pm on 8 May, 2023", "x"]),
                "session_01": st.lists(LOCOMO_TURN, max_size=2),
                "session_99999999999999999999": st.lists(LOCOMO_TURN, max_size=1),
            },
        )
        | JSON,
    },
)

# hand-made nasties, each fed to every parser
NASTY: dict[str, bytes] = {
    "deep-flow-yaml": b"---\nid: " + b"[" * 50_000 + b"\n---\n",
    "deep-block-yaml": b"---\n" + b"".join(b" " * i + b"k:\n" for i in range(3000)) + b"---\n",
    "yaml-tag-exec": (
        b"---\nid: !!python/object/apply:os.system ['touch " + MARKER_NAME.encode() + b"']\n"
        b"title: !!python/object/new:os.system ['touch " + MARKER_NAME.encode() + b"']\n---\n"
    ),
    "billion-laughs": b"---\na: &a [x, x, x, x, x, x, x, x, x]\n"
    + b"".join(
        b"%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n"
        % ((98 + i, 98 + i) + (97 + i,) * 9)
        for i in range(9)
    )
    + b"id: x\ntitle: t\ntype: topic\nupdated: 2026-01-01\n---\nbody\n",
    "huge-line": b"---\nid: x\n---\n" + b"a" * 5_000_000,
    "huge-meta": b"---\nid: '" + b"x" * 1_000_000 + b"'\n---\n",
    "nul": b"---\nid: x\x00\n---\n## t1 \x00 user\n",
    "invalid-utf8": b"---\nid: caf\xe9\n---\n\xff\xfe\n",
    "crlf": b"---\r\nid: s\r\ntype: session\r\nstarted: 2026-01-01T10:00\r\n---\r\n\r\n"
    b"## t1 \xc2\xb7 user \xc2\xb7 2026-01-01T10:00\r\n\r\nhi\r\n",
    "bom": b"\xef\xbb\xbf---\nid: x\n---\n",
    "lone-cr": b"---\rid: x\r---\r",
    "many-turns": b"---\nid: s\nstarted: 2026-01-01\n---\n"
    + b"".join(b"## t%d \xc2\xb7 u \xc2\xb7 t\n\nx\n" % (i + 1) for i in range(5_000)),
    "deep-json": b"[" * 100_000,
    "big-int-json": b"1" * 5000,
    "jsonl-surrogate": b'{"role": "u", "content": "\\ud800", "ts": "2026-01-01T10:00"}\n',
    "jsonl-nul": b'{"role": "u", "content": "a\\u0000b", "ts": "2026-01-01T10:00"}\n',
    "jsonl-deep": b'{"role": ' + b"[" * 100_000 + b"\n",
    "jsonl-ts-huge": b'{"role": "u", "content": "x", "ts": 1e308}\n',
    "locomo-long-id": json.dumps(
        {
            "sample_id": "x" * 400,
            "conversation": {
                "speaker_a": "a",
                "speaker_b": "b",
                "session_1": [{"speaker": "a", "text": "hi", "dia_id": "D1:1"}],
                "session_1_date_time": "1:56 pm on 8 May, 2023",
            },
        }
    ).encode(),
    "empty": b"",
    "random": bytes(random.Random(7).randrange(256) for _ in range(4096)),
}


@pytest.fixture(autouse=True)
def _no_tag_execution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run in a temp cwd: a YAML tag that executed ``touch`` would leave the marker here."""
    monkeypatch.chdir(tmp_path)
    yield
    assert not (tmp_path / MARKER_NAME).exists(), "a YAML tag was executed"


# -- parsers: property tests -------------------------------------------------------


@FUZZ
@given(PAGE_TEXT)
def test_parse_page_never_raises_anything_else(text: str) -> None:
    bounded(lambda: parse_page(text, "knowledge/topics/x.md"))


@FUZZ
@given(TRANSCRIPT_TEXT | PAGE_TEXT)
def test_parse_transcript_never_raises_anything_else(text: str) -> None:
    bounded(lambda: parse_transcript(text, "sessions/transcripts/s1.md"))


@FUZZ
@given(LOCOMO | JSON)
def test_locomo_importer_never_raises_anything_else(data: Any) -> None:
    def run() -> None:
        if not isinstance(data, dict):
            raise MemoryFSError("not a conversation")  # load_locomo's own check
        conv = conversation_from_dict(data, "conv", SCOPE)
        for t in conv.sessions:
            assert len(t.turns) >= 1

    bounded(run)


@FUZZ
@given(data=st.binary(max_size=2000) | PAGE_TEXT.map(lambda s: s.encode("utf-8", "surrogatepass")))
def test_importers_on_arbitrary_files(tmp_store: Store, tmp_path: Path, data: bytes) -> None:
    for name in ("in.md", "in.jsonl", "in.json"):
        path = tmp_path / name
        path.write_bytes(data)
        bounded(partial(load_sessions, tmp_store, path))


@pytest.mark.parametrize("name", sorted(NASTY))
def test_nasty_inputs_end_in_a_result_or_a_clear_error(
    tmp_store: Store, tmp_path: Path, name: str
) -> None:
    data = NASTY[name]
    text = data.decode("utf-8", errors="surrogateescape")
    bounded(lambda: parse_page(text, "x.md"))
    bounded(lambda: parse_transcript(text, "x.md"))
    for suffix in (".md", ".jsonl", ".json"):
        path = tmp_path / f"{name}{suffix}"
        path.write_bytes(data)
        bounded(partial(load_sessions, tmp_store, path))
    head = tmp_store.head()
    bounded(lambda: ingest(tmp_store, [tmp_path / f"{name}.md"]))
    # ... and as files inside a store, for the validator and the index
    for rel in ("knowledge/topics/nasty.md", "sessions/transcripts/nasty.md", "deletions.jsonl"):
        (tmp_store.memory / rel).write_bytes(data)
    findings = bounded(lambda: validate_store(tmp_store))
    assert isinstance(findings, list)
    bounded(lambda: write_indexes(tmp_store))
    bounded(lambda: list(iter_pages(tmp_store, "knowledge")))
    assert tmp_store.head() == head or name in ("crlf", "many-turns")


def _mutations(seed: bytes, rng: random.Random) -> bytes:
    data = bytearray(seed)
    tokens = [
        b"---\n",
        b"\n## t1 \xc2\xb7 u \xc2\xb7 t\n",
        b"[cite:1]",
        b"[[..",
        b"\x00",
        b"\xff",
        b"\r\n",
        b"!!python/object:os.system",
        b"&a",
        b"*a",
        b"{",
        b"[",
        b'"',
        b"\\u0000",
    ]
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(5)
        pos = rng.randrange(len(data) + 1)
        if op == 0 and data:
            data[min(pos, len(data) - 1)] = rng.randrange(256)
        elif op == 1:
            data[pos:pos] = rng.choice(tokens)
        elif op == 2:
            del data[pos : pos + rng.randint(1, 40)]
        elif op == 3:
            chunk = data[pos : pos + rng.randint(1, 200)]
            data[pos:pos] = chunk * rng.randint(1, 20)
        else:
            data = data[:pos]
    return bytes(data)


@pytest.mark.slow
def test_bounded_fuzz_run(tmp_store: Store, tmp_path: Path) -> None:
    """Seeded mutations of valid inputs through every parser and the validator (~10 s)."""
    page = (
        b"---\nid: x\ntitle: X\ntype: topic\nupdated: 2026-01-01\nsources:\n  - id: 1\n"
        b"    ref: sessions/transcripts/s.md#t1\n    hash: 'abcd1234'\n---\n- Fact [cite:1] [[y]]\n"
    )
    transcript = (
        b"---\nid: s\ntype: session\nstarted: 2026-01-01T10:00\nparticipants: [u]\n"
        b"scope: {user: dana, assistant: atlas}\n---\n\n## t1 \xc2\xb7 u \xc2\xb7 "
        b"2026-01-01T10:00\n\nhello\n"
    )
    jsonl = b'{"role": "user", "content": "hi", "ts": "2026-01-01T10:00"}\n' * 3
    locomo = json.dumps(
        {
            "sample_id": "c",
            "conversation": {
                "speaker_a": "a",
                "speaker_b": "b",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [{"speaker": "a", "text": "hi", "dia_id": "D1:1"}],
            },
        }
    ).encode()
    seeds = [(page, ".md"), (transcript, ".md"), (jsonl, ".jsonl"), (locomo, ".json")]
    rng = random.Random(20260105)
    deadline = time.monotonic() + 10
    runs = 0
    while time.monotonic() < deadline:
        seed, suffix = rng.choice(seeds)
        data = _mutations(seed, rng)
        text = data.decode("utf-8", errors="replace")
        bounded(partial(parse_page, text))
        bounded(partial(parse_transcript, text))
        path = tmp_path / f"fuzz{suffix}"
        path.write_bytes(data)
        bounded(partial(load_sessions, tmp_store, path))
        if runs % 10 == 0:
            (tmp_store.memory / "knowledge/topics/fuzz.md").write_bytes(data)
            (tmp_store.memory / "sessions/transcripts/fuzz.md").write_bytes(data)
            assert isinstance(bounded(lambda: validate_store(tmp_store)), list)
        runs += 1
    assert runs > 200


# -- paths -----------------------------------------------------------------------------

_WATCHED: list[tuple[str, str]] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _WATCHED is None or event not in (
        "open",
        "os.listdir",
        "os.scandir",
        "os.rename",
        "os.remove",
        "os.rmdir",
        "os.mkdir",
        "shutil.rmtree",
        "os.symlink",
        "os.truncate",
    ):
        return
    target = args[0] if args else None
    if isinstance(target, bytes):
        target = os.fsdecode(target)
    if isinstance(target, os.PathLike):
        target = os.fspath(target)
    if isinstance(target, str):
        _WATCHED.append((event, target))
        if event == "os.rename" and len(args) > 1:
            _WATCHED.append((event, os.fspath(args[1])))


sys.addaudithook(_audit)


@contextmanager
def watch_files() -> Iterator[list[tuple[str, str]]]:
    """Every path opened, listed, renamed, removed or created inside the block."""
    global _WATCHED
    seen: list[tuple[str, str]] = []
    _WATCHED = seen
    try:
        yield seen
    finally:
        _WATCHED = None


def _touched(seen: list[tuple[str, str]], outside: Path) -> list[tuple[str, str]]:
    real = os.path.realpath(outside)
    return [
        (event, path)
        for event, path in seen
        if os.path.realpath(os.path.abspath(path)).startswith(real + os.sep)
        or os.path.realpath(os.path.abspath(path)) == real
    ]


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Store, Path]:
    """A store full of ways out: refs and links with '..', absolute paths, schemes,
    symlinks to a folder outside, odd file names. Returns (store, outside)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = "SECRET outside the store"
    (outside / "secret.md").write_text(
        f"---\nid: secret\ntitle: {secret}\ntype: topic\nupdated: 2026-01-01\n---\n{secret}\n"
    )
    (outside / "t.md").write_text(
        "---\nid: t\ntype: session\nstarted: 2026-01-01T10:00\n"
        "scope: {user: dana, assistant: atlas}\n---\n\n## t1 · u · 2026-01-01T10:00\n\nsecret\n"
    )
    store = build_store(init_store(tmp_path / "store", "dana", "atlas"), tmp_path)
    refs = [
        "../../outside/secret.md#t1",
        "sessions/transcripts/../../../outside/t.md#t1",
        str(outside / "t.md") + "#t1",
        "file://" + str(outside / "t.md") + "#t1",
        "sessions/transcripts/evil.md#t1",
        "sessions/transcripts/\x00.md#t1",
        "sessions/transcripts/a\nb.md#t1",
    ]
    sources = "".join(
        f"  - id: {i}\n    ref: {json.dumps(ref)}\n" for i, ref in enumerate(refs, start=1)
    )
    cites = " ".join(f"[cite:{i}]" for i in range(1, len(refs) + 1))
    links = "[[../../outside/secret]] [[/etc/passwd]] [[file:///etc/passwd]] [[evil]] [[secret]]"
    (store.memory / "knowledge/topics/hostile.md").write_text(
        "---\nid: hostile\ntitle: Hostile\ntype: topic\nupdated: 2026-01-01\nsources:\n"
        f"{sources}---\n- Blue Heron Lane claims {cites}\n- {links}\n"
    )
    (store.memory / "knowledge/topics/evil.md").symlink_to(outside / "secret.md")
    (store.memory / "notes/outside").symlink_to(outside, target_is_directory=True)
    (store.memory / "sessions/transcripts/evil.md").symlink_to(outside / "t.md")
    (store.memory / "knowledge/topics/new\nline.md").write_text(
        "---\nid: odd\ntitle: Odd\ntype: topic\nupdated: 2026-01-01\n---\nBlue Heron Lane\n"
    )
    return store, outside


def test_resolve_refuses_every_way_out(hostile: tuple[Store, Path]) -> None:
    store, outside = hostile
    for rel in [
        "../memory.toml/../../outside/secret.md",
        "../../outside/secret.md",
        str(outside / "secret.md"),
        "file:///etc/passwd",
        "a\x00b",
        "a\nb",
        "knowledge/topics/evil.md",  # symlink out
        "notes/outside/secret.md",  # through a symlinked folder
    ]:
        with pytest.raises(MemoryFSError):
            store.resolve(rel)


def test_library_never_touches_files_outside_the_store(hostile: tuple[Store, Path]) -> None:
    store, outside = hostile
    with watch_files() as seen:
        findings = validate_store(store)
        write_indexes(store)
        pages = list(iter_pages(store, "knowledge")) + list(iter_pages(store, "notes"))
        assert load_page(store, "knowledge/topics/evil.md") is None
        forget(store, "phrase", PHRASE, "privacy")
        forget(store, "page", "secret", "privacy") if any(p.id == "secret" for p in pages) else None
    assert _touched(seen, outside) == []
    codes = {f.code for f in findings}
    assert {"MF301", "MF302"} <= codes
    assert all(p.id != "secret" for p in pages)
    assert "SECRET" not in (store.memory / "INDEX.md").read_text()
    assert (outside / "secret.md").read_text().count("SECRET") == 2  # untouched
    # the file with a newline in its name was reached by forget too
    assert "Blue Heron" not in "".join(
        p.read_text() for p in (store.memory / "knowledge/topics").iterdir() if not p.is_symlink()
    )


def test_read_side_never_touches_files_outside_the_store(
    hostile: tuple[Store, Path], tmp_path: Path
) -> None:
    recall_mod = pytest.importorskip("memoryfs.read.recall")
    materialize_mod = pytest.importorskip("memoryfs.read.materialize")
    store, outside = hostile
    sandbox = tmp_path / "sandbox"
    with watch_files() as seen:
        for run in (
            lambda: materialize_mod.materialize(store, sandbox),
            lambda: recall_mod.recall(store, "secret outside heron", into=sandbox),
            lambda: recall_mod.recall(store, "evil passwd", into=sandbox),
        ):
            with suppress(MemoryFSError):
                run()
    assert _touched(seen, outside) == []
    copied = [p for p in sandbox.rglob("*") if p.is_file()]
    assert all(os.path.realpath(p).startswith(os.path.realpath(sandbox)) for p in copied)
    assert not any("SECRET" in p.read_text(errors="replace") for p in copied)


def test_ingest_refuses_to_write_through_symlinks(tmp_store: Store, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    src = tmp_path / "in.jsonl"
    src.write_text('{"role": "user", "content": "hi", "ts": "2026-01-01T10:00"}\n')
    # a transcript file that is a symlink out of the store
    link = tmp_store.memory / "sessions/transcripts/in.md"
    link.symlink_to(outside / "target.md")
    with watch_files() as seen, pytest.raises(MemoryFSError, match="symlink|escapes"):
        ingest(tmp_store, [src])
    assert _touched(seen, outside) == [] and not (outside / "target.md").exists()
    link.unlink()
    # the transcripts folder itself symlinked out
    folder = tmp_store.memory / "sessions/transcripts"
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()
    folder.symlink_to(outside, target_is_directory=True)
    with watch_files() as seen, pytest.raises(MemoryFSError):
        ingest(tmp_store, [src])
    assert list(outside.iterdir()) == []


def test_symlinked_cache_folder_is_never_followed(tmp_store: Store, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "keep").mkdir(parents=True)
    (outside / "keep" / "precious.txt").write_text("mine")
    import shutil

    shutil.rmtree(tmp_store.cache_dir, ignore_errors=True)
    tmp_store.cache_dir.symlink_to(outside, target_is_directory=True)
    with pytest.raises(MemoryFSError, match="symlink"):
        forget(tmp_store, "phrase", "anything at all", "test")
    assert (outside / "keep" / "precious.txt").read_text() == "mine"
    assert sorted(p.name for p in outside.iterdir()) == ["keep"]


def test_memory_folder_symlinked_out_is_refused(tmp_store: Store, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    import shutil

    shutil.copytree(tmp_store.memory, outside)
    (outside / ".INDEX.md.abc.tmp").write_text("not ours to delete")
    shutil.rmtree(tmp_store.memory)
    tmp_store.memory.symlink_to(outside, target_is_directory=True)
    before = {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()}
    with watch_files() as seen:
        findings = validate_store(tmp_store)
        with pytest.raises(MemoryFSError):
            write_indexes(tmp_store)
        with pytest.raises(MemoryFSError):
            forget(tmp_store, "phrase", "anything at all", "test")
    assert [f.code for f in findings] == ["MF302"]
    assert {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()} == before
    assert not [e for e, _ in _touched(seen, outside) if e != "os.scandir"]


# -- CLI: one line on stderr, non-zero exit, nothing written ------------------------------


def _bad_cli_inputs(tmp_path: Path) -> list[tuple[str, list[str]]]:
    files = {}
    for name, data in NASTY.items():
        if name in ("crlf", "many-turns"):  # valid transcripts: they ingest fine
            continue
        for suffix in (".md", ".jsonl", ".json"):
            path = tmp_path / "bad" / f"{name}{suffix}"
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(data)
            files[f"ingest {name}{suffix}"] = ["ingest", str(path)]
    files["ingest missing"] = ["ingest", str(tmp_path / "nope.md")]
    files["ingest folder"] = ["ingest", str(tmp_path / "bad"), "--format", "md"]
    files["ingest format"] = ["ingest", str(tmp_path / "bad" / "empty.md"), "--format", "csv"]
    files["ingest txt"] = ["ingest", str(tmp_path / "x.txt")]
    files["forget two"] = ["forget", "--page", "a", "--session", "b", "--reason", "r"]
    files["forget none"] = ["forget", "--reason", "r"]
    files["forget id"] = ["forget", "--page", "../../x", "--reason", "r"]
    files["forget nl"] = ["forget", "--session", "a\nb", "--reason", "r"]
    files["forget reason"] = ["forget", "--phrase", "pin 1234", "--reason", "my PIN 1234!"]
    files["index budget"] = ["index", "--max-tokens", "5"]
    return list(files.items())


def test_cli_bad_input_is_one_line_nonzero_and_writes_nothing(
    tmp_store: Store, tmp_path: Path
) -> None:
    (tmp_path / "x.txt").write_text("hello")

    def snapshot() -> dict[str, bytes]:
        return {
            str(p.relative_to(tmp_store.root)): p.read_bytes()
            for p in tmp_store.root.rglob("*")
            if p.is_file() and ".git" not in p.parts and ".memoryfs" not in p.parts
        }

    before, head = snapshot(), tmp_store.head()
    runner = CliRunner()
    failures = []
    for label, args in _bad_cli_inputs(tmp_path):
        result = runner.invoke(app, [*args, "--store", str(tmp_store.root)])
        lines = result.stderr.strip().splitlines()
        ok = result.exit_code not in (0, None) and len(lines) == 1 and result.exception is None
        ok = ok or isinstance(result.exception, SystemExit)
        if not (ok and len(lines) == 1 and result.exit_code != 0):
            failures.append((label, result.exit_code, result.stderr[-300:], repr(result.exception)))
    assert failures == []
    assert tmp_store.head() == head and snapshot() == before
    status = subprocess.run(
        ["git", "-C", str(tmp_store.root), "status", "--porcelain"], capture_output=True, text=True
    ).stdout
    assert status == ""
