"""Receipts: content-free records, the opaque item id, the append-only log."""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryfs.receipts.log import (
    ReceiptLog,
    ensure_union_merge,
    parse_receipts,
    record_ingested,
    store_receipt_dir,
)
from memoryfs.receipts.records import (
    ITEM_KINDS,
    RECEIPT_VOCABULARY,
    STATUSES,
    TIERS,
    UNION_MERGE,
    Receipt,
    ReceiptError,
    config_hash,
    format_utc,
    guard_content_free,
    opaque_item,
    page_item,
    scope_id,
    scope_ids,
    session_item,
    source_parts,
    source_version,
)
from memoryfs.version import version_info

SV = source_version("3f9a2c1e5b7d9e01", "embedded/1", "0.1.0")


def _r(**changes: str) -> Receipt:
    fields = {
        "run_id": "20260118T231000Z-0a1b",
        "user_scope": scope_id("dana"),
        "assistant_scope": scope_id("atlas"),
        "item": session_item("2026-01-12-lisbon-prep"),
        "tier": "summarized",
        "version": "a1b2c3d4e5f60718",
        "source_version": SV,
        "status": "committed",
        "at_utc": "2026-01-18T23:10:00Z",
    }
    fields.update(changes)
    return Receipt(**fields)


def test_json_is_camel_case_and_omits_empty_optional_keys() -> None:
    r = _r()
    data = json.loads(r.to_line())
    assert list(data) == [
        "runId", "userScope", "assistantScope", "item", "tier", "version",
        "sourceVersion", "status", "atUtc",
    ]  # fmt: skip
    used = _r(tier="used", depends_on_version="c3d4e5f607182930", outcome_receipt="test:pass")
    assert json.loads(used.to_line())["dependsOnVersion"] == "c3d4e5f607182930"
    assert Receipt.from_json(used.to_json()) == used
    left_out = _r(tier="validated", status="failed", reason="DV101")  # a part a run left out
    assert json.loads(left_out.to_line())["reason"] == "DV101"
    assert Receipt.from_json(left_out.to_json()) == left_out


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("run_id", "2026-01-12-lisbon-prep"),  # a session slug: words, not an id
        ("run_id", "ran with Marta"),
        ("item", "session:lisbon-prep"),
        ("item", "2026-01-12-lisbon-prep"),
        ("version", "figures as PDF"),
        ("depends_on_version", "v21 of marta"),
        ("source_version", "memoryfs=0.1.0;skill=none;engine=pottery/1"),
        ("source_version", "the summary said she moved to Lisbon"),
        ("outcome_receipt", "decided to submit the paper"),
        ("outcome_receipt", "file:notahash"),
        ("reason", "name Gunther is not in the cited turn"),  # a code, never the finding
        ("reason", "Gunther"),
        ("at_utc", "yesterday"),
        ("at_utc", "2026-02-30T10:00:00Z"),
        ("tier", "remembered"),
        ("status", "fine"),
        ("user_scope", "Dana Scully"),
        ("user_scope", "dana"),  # a scope goes in as its scope_id, never its name
    ],
)
def test_content_never_fits_in_a_receipt(field: str, value: str) -> None:
    with pytest.raises(ReceiptError) as err:
        _r(**{field: value})
    assert value not in str(err.value)  # the refusal does not echo the content either


def test_guard_rejects_unknown_keys_and_accepts_every_enum() -> None:
    with pytest.raises(ReceiptError, match="unknown receipt key"):
        guard_content_free({**_r().to_json(), "text": "she likes pottery"})
    for tier in TIERS:
        for status in STATUSES:
            guard_content_free(_r(tier=tier, status=status))
    guard_content_free(_r(version="", source_version=""))  # missing: allowed, health says why


def test_opaque_item_hides_the_id_and_depends_on_kind_and_key() -> None:
    a = opaque_item("session", "2026-01-12-lisbon-prep")
    assert a == session_item("2026-01-12-lisbon-prep")
    assert a.startswith("session:") and len(a) == len("session:") + 16
    assert "lisbon" not in a
    assert opaque_item("page", "2026-01-12-lisbon-prep") != a.replace("session", "page")
    keyed = opaque_item("session", "2026-01-12-lisbon-prep", key=b"secret")
    assert keyed != a and keyed == session_item("2026-01-12-lisbon-prep", b"secret")
    assert page_item("/knowledge/people/marta.md") == page_item("knowledge/people/marta.md")
    with pytest.raises(ReceiptError):
        opaque_item("text", "x")
    with pytest.raises(ReceiptError):
        opaque_item("page", "")
    assert set(ITEM_KINDS) <= RECEIPT_VOCABULARY


def test_source_version_and_times() -> None:
    assert source_version() == f"memoryfs={version_info().pinned};skill=none;engine=none"
    with pytest.raises(ReceiptError):
        source_version("3f9a2c1e", "lisbon/1")
    assert format_utc(dt.datetime(2026, 1, 18, 23, 10, tzinfo=dt.UTC)) == "2026-01-18T23:10:00Z"
    with pytest.raises(ReceiptError):
        format_utc(dt.datetime(2026, 1, 18))


def test_source_version_pins_the_build_and_a_hash_of_the_configuration() -> None:
    run = {"engine": "embedded/1", "budgets": {"index_tokens": 1500}, "judge": None}
    reordered = {"judge": None, "budgets": {"index_tokens": 1500}, "engine": "embedded/1"}
    assert config_hash(run) == config_hash(reordered) and len(config_hash(run)) == 12
    other = {**run, "budgets": {"index_tokens": 800}}
    a = source_version("3f9a2c1e", "embedded/1", "0.1.0+1320913abcde.dirty", run)
    b = source_version("3f9a2c1e", "embedded/1", "0.1.0+1320913abcde.dirty", other)
    assert a != b and a.endswith(f";config={config_hash(run)}")
    assert source_parts(a) == {
        "memoryfs": "0.1.0+1320913abcde.dirty",
        "skill": "3f9a2c1e",
        "engine": "embedded/1",
        "config": config_hash(run),
    }
    # the settings are hashed, never written: a model named after a person stays out
    named = source_version(config={"engineSettings": {"model": "marta-lisbon-7b"}})
    assert "marta" not in named and "lisbon" not in named
    for value in (a, b, named, "memoryfs=0.1.0;skill=none;engine=none"):  # old logs still read
        guard_content_free({**_r().to_json(), "sourceVersion": value})
    assert source_parts("") == {} and source_parts("the summary said so") == {}
    with pytest.raises(ReceiptError):
        guard_content_free({**_r().to_json(), "sourceVersion": a + "x"})


def test_log_appends_by_day_and_reads_oldest_first(tmp_path: Path) -> None:
    log = ReceiptLog(store_receipt_dir(tmp_path))
    late = _r(at_utc="2026-01-19T01:00:00Z")
    early = _r(at_utc="2026-01-18T22:00:00Z", tier="ingested")
    written = log.append([late, early])
    assert [p.name for p in written] == ["2026-01-18.jsonl", "2026-01-19.jsonl"]
    assert log.read() == [early, late]
    assert log.read(since="2026-01-19T00:00:00Z") == [late]
    assert log.read(since=dt.datetime(2026, 1, 18, 23, tzinfo=dt.UTC)) == [late]
    assert log.problems == []
    assert tmp_path.joinpath(".dream", "receipts", "2026-01-18.jsonl").is_file()


def test_a_full_day_file_is_continued_in_parts_read_in_order(tmp_path: Path) -> None:
    # a day's file past part_bytes is left alone (Git would hash, store and check it out
    # again with every later commit that day): later lines go to <day>.2.jsonl, then .3
    log = ReceiptLog(tmp_path, part_bytes=600)
    first = [_r(at_utc=f"2026-01-18T10:00:0{i}Z", tier="validated") for i in range(3)]
    assert log.append(first) == [tmp_path / "2026-01-18.jsonl"]
    assert log.append([_r(at_utc="2026-01-18T11:00:00Z")]) == [tmp_path / "2026-01-18.2.jsonl"]
    small = ReceiptLog(tmp_path, part_bytes=10_000)  # the last part is not full: appended
    assert small.append([_r(at_utc="2026-01-18T12:00:00Z")]) == [tmp_path / "2026-01-18.2.jsonl"]
    assert log.append([_r(at_utc="2026-01-18T13:00:00Z")]) == [tmp_path / "2026-01-18.3.jsonl"]
    assert log.append([_r(at_utc="2026-01-19T09:00:00Z")]) == [tmp_path / "2026-01-19.jsonl"]
    (tmp_path / "2026-01-18.x.jsonl").write_text("{}\n")  # not a part: never read
    names = [p.name for p in log.files()]
    assert names == [
        "2026-01-18.jsonl",
        "2026-01-18.2.jsonl",
        "2026-01-18.3.jsonl",
        "2026-01-19.jsonl",
    ]
    times = [r.at_utc for r in log.read()]
    assert times == sorted(times) and len(times) == 7 and not log.problems
    assert [r.at_utc for r in log.read(since="2026-01-18T12:30:00Z")] == [
        "2026-01-18T13:00:00Z",
        "2026-01-19T09:00:00Z",
    ]


def test_reader_skips_and_reports_malformed_lines(tmp_path: Path) -> None:
    log = ReceiptLog(tmp_path)
    good = _r()
    path = tmp_path / "2026-01-18.jsonl"
    lines = [
        good.to_line(),
        '{"runId": "20260118T231000Z-0a1b", "userSc',  # torn
        "[1, 2]",
        json.dumps({**good.to_json(), "tier": "remembered"}),
        json.dumps({**good.to_json(), "note": "Marta moved to Lisbon"}),
    ]
    path.write_bytes(("\n".join(lines) + "\n").encode() + b"\xff\xfe\n")
    assert log.read() == [good]
    assert [p.line for p in log.problems] == [2, 3, 4, 5, 6]
    assert not any("Lisbon" in p.format() or "userSc" in p.format() for p in log.problems)


def test_append_after_a_torn_line_starts_a_fresh_line(tmp_path: Path) -> None:
    log = ReceiptLog(tmp_path)
    (tmp_path / "2026-01-18.jsonl").write_text('{"runId": "torn')
    log.append([_r()])
    assert log.read() == [_r()]
    assert len(log.problems) == 1


def test_append_checks_every_receipt_before_writing(tmp_path: Path) -> None:
    bad = _r()
    object.__setattr__(bad, "version", "figures as PDF")  # forged past __post_init__
    with pytest.raises(ReceiptError):
        ReceiptLog(tmp_path).append([_r(), bad])
    assert list(tmp_path.iterdir()) == []


def _append_many(folder: str, worker: int) -> None:
    log = ReceiptLog(folder)
    for i in range(150):
        log.append([_r(version=f"{worker:04x}{i:012x}")])


def test_concurrent_appenders_never_tear_lines(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_append_many, args=(str(tmp_path), w)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    log = ReceiptLog(tmp_path)
    assert len(log.read()) == 600
    assert log.problems == []


_hex = st.text("0123456789abcdef", min_size=7, max_size=64)
_receipts = st.builds(
    Receipt,
    run_id=st.from_regex(r"\A[0-9]{8}T[0-9]{6}Z-[0-9a-f]{4}\Z"),
    user_scope=st.text(min_size=1).map(scope_id),
    assistant_scope=st.just(scope_id("atlas")),
    item=st.builds(opaque_item, st.sampled_from(ITEM_KINDS), st.text(min_size=1)),
    tier=st.sampled_from(TIERS),
    version=_hex | st.just(""),
    source_version=st.just(SV) | st.just(""),
    status=st.sampled_from(STATUSES),
    at_utc=st.datetimes(
        min_value=dt.datetime(2000, 1, 1),
        max_value=dt.datetime(2100, 1, 1),
        timezones=st.just(dt.UTC),
    ).map(format_utc),
    depends_on_version=_hex | st.just(""),
    outcome_receipt=st.sampled_from(["", "test:pass", "test:fail"]) | _hex.map("commit:{}".format),
)


@settings(max_examples=200, deadline=None)
@given(_receipts)
def test_every_valid_receipt_round_trips(r: Receipt) -> None:
    got, problems = parse_receipts(r.to_line().encode())
    assert got == [r] and problems == []


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600))
def test_reader_never_raises_on_any_bytes(data: bytes) -> None:
    receipts, problems = parse_receipts(data, "x.jsonl")
    assert all(isinstance(r, Receipt) for r in receipts)
    assert all(p.file == "x.jsonl" for p in problems)


def test_scopes_are_hashed_and_keyed() -> None:
    a, b = scope_ids("dana", "atlas")
    assert a == scope_id("dana") and b == scope_id("atlas") and a != b
    assert len(a) == 16 and set(a) <= set("0123456789abcdef")
    assert scope_id("dana", key=b"k") != a
    with pytest.raises(ReceiptError):
        scope_id("")


def test_union_merge_attribute_is_added_once(tmp_path: Path) -> None:
    (tmp_path / ".gitattributes").write_text("*.png binary")  # no final newline
    assert ensure_union_merge(tmp_path) is True
    assert ensure_union_merge(tmp_path) is False
    assert (tmp_path / ".gitattributes").read_text() == f"*.png binary\n{UNION_MERGE}\n"


def test_record_ingested_appends_and_names_what_to_commit(tmp_path: Path) -> None:
    paths = record_ingested(
        tmp_path, "dana", "atlas", {"2026-01-05-a": "a1b2c3d4e5f60718"}, "ingest-0a1b"
    )
    assert paths == [".dream/receipts", ".gitattributes"]
    [r] = ReceiptLog(store_receipt_dir(tmp_path)).read()
    assert (r.tier, r.status, r.item) == ("ingested", "committed", session_item("2026-01-05-a"))
    assert (r.user_scope, r.assistant_scope) == scope_ids("dana", "atlas")
    assert record_ingested(tmp_path / "none", "dana", "atlas", {}, "ingest-0a1b") == [
        ".gitattributes"
    ]
