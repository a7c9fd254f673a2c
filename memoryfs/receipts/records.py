"""Content-free lineage receipts: one JSON line per tier transition.

A receipt proves that an item moved from one tier to the next (transcript
ingested -> summarized -> attached -> validated -> committed -> materialized ->
recalled -> used) without saying anything about what the item contains. Every
value is an id, a hash, an enum or a timestamp; ``guard_content_free`` enforces
that on every receipt built, read or appended, so text can never slip in:

- ``item`` is ``<kind>:<16 hex>`` made by ``opaque_item`` (a hash of the session
  id, page path or claim location, never the text itself);
- ``runId`` is a slug whose alphabetic runs of 4+ letters are hex or words of
  ``ID_WORDS`` (so a session slug like ``2026-01-12-lisbon-prep`` is refused);
- ``sourceVersion`` is ``memoryfs=<pkg>;skill=<hash|none>;engine=<name/ver|none>``
  and, on receipts written since it was added, ``;config=<12 hex>``, made by
  ``source_version``: ``<pkg>`` is the version with the commit it was built from when
  known (``0.1.0+1320913abcde``, ``.dirty`` for uncommitted changes: ``memoryfs.version``),
  ``config`` a hash of the effective configuration (``config_hash``: for a Dream run the
  engine and its settings, the store's budgets and the model judge), so two differently
  configured runs of one build stay apart;
- ``version`` / ``dependsOnVersion`` are hex (a content hash or a commit);
- ``outcomeReceipt`` is ``file:<hex>``, ``commit:<hex>`` or ``test:pass|fail``;
- ``reason`` (optional) is the stable code of the gate finding that made a step
  fail (``MF201``, ``DV101``): what a Dream run left out and why, never the text.

- ``userScope`` / ``assistantScope`` are ``scope_id`` hashes (16 hex) of the
  scope names, never the names: a user scope is often a person's first name.

So besides hex, digits and punctuation a receipt holds only the words of
``RECEIPT_VOCABULARY`` (its keys, the enums and ``ID_WORDS``); a test searches
receipts for the words of the transcripts minus that vocabulary.

Files: ``<folder>/<yyyy-mm-dd>.jsonl`` by the receipt's UTC date (continued in
``<yyyy-mm-dd>.<n>.jsonl`` parts once a day's file is 1 MiB). Appends are one
``os.write`` per line on an ``O_APPEND`` descriptor, so concurrent appenders
interleave whole lines; a reader skips and reports a torn or malformed line and
never raises on file content. Where logs live: the store's generation-side log
in ``.dream/receipts/`` (committed with the commit it describes), a sandbox's read
log in ``<sandbox>/.receipts/`` and a store's own read log (recalls without a
sandbox) in ``.memoryfs/receipts/`` (git-ignored: reading never dirties a store).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from memoryfs.errors import MemoryFSError
from memoryfs.version import version_info

__all__ = [
    "ID_WORDS",
    "ITEM_KINDS",
    "READ_TIERS",
    "RECEIPT_VOCABULARY",
    "STATUSES",
    "SUCCESS_STATUSES",
    "TIERS",
    "UNION_MERGE",
    "Receipt",
    "ReceiptError",
    "OUTCOME_FORMS",
    "check_outcome",
    "config_hash",
    "format_utc",
    "guard_content_free",
    "opaque_item",
    "page_item",
    "parse_utc",
    "scope_id",
    "scope_ids",
    "session_item",
    "source_parts",
    "source_version",
    "utc_now",
]

TIERS = (  # pipeline order
    "ingested", "summarized", "attached", "validated", "committed",
    "materialized", "recalled", "used",
)  # fmt: skip
READ_TIERS = ("materialized", "recalled")  # tiers that return a version to a reader
# "forgotten": a forget removed the item on purpose (``memoryfs.forget.remove``)
STATUSES = ("started", "waiting", "committed", "verified", "failed", "forgotten")
SUCCESS_STATUSES = ("committed", "verified")
ITEM_KINDS = ("session", "page", "claim")
# Words (4+ letters) allowed in run ids and engine names besides hex runs.
ID_WORDS = frozenset(
    {
        "dream", "canary", "ingest", "forget", "recall", "materialize", "manual", "test", "fixture",
        "local", "none", "memoryfs", "skill", "engine", "embedded", "extractive", "default",
        "openai", "agent", "external", "endpoint", "command", "chat", "model", "stub", "fake",
        "mock", "noop", "config", "dirty",
    }
)  # fmt: skip
_KEYS = (  # JSON names, in the order of Receipt's fields
    "runId", "userScope", "assistantScope", "item", "tier", "version", "sourceVersion", "status",
    "atUtc", "dependsOnVersion", "outcomeReceipt", "reason",
)  # fmt: skip
RECEIPT_VOCABULARY = frozenset(
    {k.lower() for k in _KEYS} | set(TIERS) | set(STATUSES) | set(ITEM_KINDS) | ID_WORDS
    | {"file", "commit", "pass", "fail"}
)  # fmt: skip

# Two writers appending to one day's log on diverging branches (an ingest on main,
# a Dream run on its stage) merge by keeping both sides' lines: no rebase conflict.
UNION_MERGE = ".dream/receipts/*.jsonl merge=union"
_RUN_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")
_SCOPE_RE = re.compile(r"^[0-9a-f]{16}$")
_ITEM_RE = re.compile(r"^(session|page|claim):[0-9a-f]{16}$")
_HEX_RE = re.compile(r"^[0-9a-f]{7,64}$")
_TIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$")
_ENGINE = r"(none|[a-z][a-z0-9_-]{0,31}/[0-9A-Za-z][0-9A-Za-z.+-]{0,31})"
_SOURCE_RE = re.compile(
    r"^memoryfs=[0-9][0-9A-Za-z.+!-]{0,31};skill=(none|[0-9a-f]{8,64});engine="
    + _ENGINE
    + r"(;config=[0-9a-f]{8,64})?$"
)
_CONFIG_HASH_LEN = 12
_OUTCOME_RE = re.compile(r"^((file|commit):[0-9a-f]{7,64}|test:(pass|fail))$")
_REASON_RE = re.compile(
    r"^[A-Z]{2}[0-9]{3}$"
)  # a finding code (memoryfs.validate.findings, Dream's gates)
_ALPHA_RUN_RE = re.compile(r"[A-Za-z]{4,}")
_HEX_LETTERS = frozenset("abcdefABCDEF")


class ReceiptError(MemoryFSError):
    """A receipt field is not an id, hash, enum or timestamp (or is malformed)."""


@dataclass(frozen=True)
class Receipt:
    """One tier transition of one item. Built only from ids, hashes, enums and times."""

    run_id: str
    user_scope: str  # scope_id(user name)
    assistant_scope: str  # scope_id(assistant name)
    item: str  # opaque_item(...): "<kind>:<16 hex>"
    tier: str  # one of TIERS
    version: str  # content hash (or commit) of the item at this tier; "" if none yet
    source_version: str  # source_version(...); "" means unknown (health: uncertain)
    status: str  # one of STATUSES
    at_utc: str  # format_utc(...): "2026-01-12T02:15:00Z"
    depends_on_version: str = ""  # retrieval/use: the version it relied on
    outcome_receipt: str = ""  # "file:<hex>", "commit:<hex>" or "test:pass|fail"
    reason: str = ""  # the code of the gate finding behind a failed step ("DV101")

    def __post_init__(self) -> None:
        guard_content_free(self)

    @property
    def kind(self) -> str:
        return self.item.split(":", 1)[0]

    @property
    def at(self) -> dt.datetime:
        return parse_utc(self.at_utc)

    @property
    def succeeded(self) -> bool:
        return self.status in SUCCESS_STATUSES

    def to_json(self) -> dict[str, str]:
        values = [getattr(self, f.name) for f in fields(self)]
        out = dict(zip(_KEYS, values, strict=True))
        for optional in ("dependsOnVersion", "outcomeReceipt", "reason"):
            if not out[optional]:
                del out[optional]
        return out

    def to_line(self) -> str:
        return json.dumps(self.to_json(), separators=(",", ":"), sort_keys=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Receipt:
        """Parse one receipt object; raises ``ReceiptError`` naming the bad key."""
        if set(data) - set(_KEYS):
            raise ReceiptError("unknown receipt key")
        values: list[str] = []
        for key in _KEYS:
            value = data.get(key, "")
            if not isinstance(value, str):
                raise ReceiptError(f"receipt key {key!r} must be a string")
            values.append(value)
        return cls(*values)


def _words_ok(value: str) -> bool:
    """Every run of 4+ letters is hex-only or an allowed id word."""
    for m in _ALPHA_RUN_RE.finditer(value):
        word = m.group(0)
        if not (set(word) <= _HEX_LETTERS or word.lower() in ID_WORDS):
            return False
    return True


def guard_content_free(receipt: Receipt | Mapping[str, Any]) -> None:
    """Raise ``ReceiptError`` unless every field is an id, hash, enum or timestamp."""
    if isinstance(receipt, Receipt):
        data = receipt.to_json()
    else:
        if set(receipt) - set(_KEYS):
            raise ReceiptError("unknown receipt key (receipts carry only the listed fields)")
        data = dict(receipt)
    for key in _KEYS:
        value = data.get(key, "")
        if not isinstance(value, str):
            raise ReceiptError(f"receipt {key} must be a string")
        if not _field_ok(key, value):
            raise ReceiptError(
                f"receipt {key} {_preview(value)} is not an id, hash, enum or timestamp "
                "(receipts carry no content; see memoryfs.receipts.records)"
            )


def _field_ok(key: str, value: str) -> bool:
    if key == "runId":
        return bool(_RUN_RE.match(value)) and _words_ok(value)
    if key in ("userScope", "assistantScope"):
        return bool(_SCOPE_RE.match(value))
    if key == "item":
        return bool(_ITEM_RE.match(value))
    if key == "tier":
        return value in TIERS
    if key == "status":
        return value in STATUSES
    if key in ("version", "dependsOnVersion"):
        return not value or bool(_HEX_RE.match(value))
    if key == "sourceVersion":
        return not value or (bool(_SOURCE_RE.match(value)) and _words_ok(value))
    if key == "atUtc":
        if not _TIME_RE.match(value):
            return False
        try:
            parse_utc(value)
        except ValueError:
            return False
        return True
    if key == "outcomeReceipt":
        return not value or bool(_OUTCOME_RE.match(value))
    if key == "reason":
        return not value or bool(_REASON_RE.match(value))
    return False


def _preview(value: str) -> str:
    # The refused value may be content: show only its shape, never its text.
    return f"(a {len(value)}-character value)"


# -- constructors --------------------------------------------------------------


def opaque_item(kind: str, ident: str, key: bytes = b"") -> str:
    """``<kind>:<16 hex>`` naming an item without its text.

    ``ident`` is a session id, a page path relative to ``memory/`` or a claim
    location (``<page path>#cite-N``). With ``key`` the hash is an HMAC, so
    someone holding receipts but not the key cannot confirm a guessed id.
    """
    if kind not in ITEM_KINDS:
        raise ReceiptError(f"item kind {kind!r} is not one of {', '.join(ITEM_KINDS)}")
    if not ident:
        raise ReceiptError("an item needs a non-empty id")
    msg = f"{kind}\0{ident}".encode()
    if key:
        digest = hmac.new(key, msg, hashlib.sha256).hexdigest()
    else:
        digest = hashlib.sha256(b"memoryfs-receipt\0" + msg).hexdigest()
    return f"{kind}:{digest[:16]}"


def scope_id(name: str, key: bytes = b"") -> str:
    """16 hex digits naming a user or assistant scope (``key``: as for ``opaque_item``)."""
    if not name:
        raise ReceiptError("a scope needs a non-empty name")
    msg = f"scope\0{name}".encode()
    if key:
        return hmac.new(key, msg, hashlib.sha256).hexdigest()[:16]
    return hashlib.sha256(b"memoryfs-receipt\0" + msg).hexdigest()[:16]


def scope_ids(user: str, assistant: str, key: bytes = b"") -> tuple[str, str]:
    """``(scope_id(user), scope_id(assistant))``: the two scope fields of a receipt."""
    return scope_id(user, key), scope_id(assistant, key)


def session_item(session_id: str, key: bytes = b"") -> str:
    return opaque_item("session", session_id, key)


OUTCOME_FORMS = "file:<hex>, commit:<hex> (7-64 hex digits), test:pass or test:fail"


def check_outcome(outcome: str) -> None:
    """A ``used`` receipt's outcome: one of ``OUTCOME_FORMS`` or "" (none); a
    ``ReceiptError`` naming the valid forms otherwise."""
    if outcome and not _OUTCOME_RE.match(outcome):
        raise ReceiptError(f"outcome {outcome[:40]!r} is not one of {OUTCOME_FORMS}")


def page_item(path: str, key: bytes = b"") -> str:
    """A page (knowledge, note or summary) by its path relative to ``memory/``."""
    return opaque_item("page", path.lstrip("/"), key)


def source_version(
    skill: str = "none",
    engine: str = "none",
    package: str | None = None,
    config: Mapping[str, Any] | None = None,
) -> str:
    """The implementation version: package version (``None``: this build's, with its
    commit), skill content hash, engine label and, given ``config``, its ``config_hash``."""
    package = version_info().pinned if package is None else package
    value = f"memoryfs={package};skill={skill or 'none'};engine={engine or 'none'}"
    if config is not None:
        value += f";config={config_hash(config)}"
    if not (_SOURCE_RE.match(value) and _words_ok(value)):
        raise ReceiptError(
            f"source version {value!r} is malformed (skill: hex or 'none'; engine: "
            "'name/version' with a name from memoryfs.receipts.records.ID_WORDS, or 'none')"
        )
    return value


def config_hash(config: Mapping[str, Any]) -> str:
    """12 hex digits naming a configuration: the hash of its canonical JSON (keys sorted),
    so equal settings give equal hashes in any order and nothing of them is readable."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(b"memoryfs-config\0" + text.encode()).hexdigest()[:_CONFIG_HASH_LEN]


def source_parts(value: str) -> dict[str, str]:
    """``{"memoryfs": ..., "skill": ..., "engine": ..., "config": ...}`` of a source version
    (the keys it has); empty for "" or a malformed value."""
    if not value or not _SOURCE_RE.match(value):
        return {}
    return dict(part.split("=", 1) for part in value.split(";"))


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def format_utc(when: dt.datetime | None = None) -> str:
    when = utc_now() if when is None else when
    if when.tzinfo is None:
        raise ReceiptError("receipt times must be timezone-aware")
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_utc(value: str) -> dt.datetime:
    """Parse ``...Z`` (or any aware ISO time) into an aware UTC datetime."""
    parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        raise ValueError(f"time {value!r} has no timezone")
    return parsed.astimezone(dt.UTC)
