"""A page's ``sources`` list in the one YAML shape Dream writes, read and written directly.

A hub page's frontmatter holds hundreds of entries like::

    - id: 12
      ref: sessions/transcripts/2025-06-03-kyoto.md#t12
      at: 2025-06-03
      hash: 3f9a2c1e

and PyYAML builds and writes each value through Python-level constructors and
representers: most of what reading and rewriting such a page cost. When the block has
exactly this shape and every value is what YAML itself makes of it (an int, a date,
strings of safe characters, plain or single-quoted as PyYAML's own resolver decides),
the block is read and written here and only the other keys go through PyYAML. Anything
else (other quoting or characters, comments, flow style, other keys in an entry,
document markers) returns None and the caller uses PyYAML for the whole frontmatter.
tests/memoryfs/pages/test_sources_yaml.py checks that both give the same values and the same bytes.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable
from typing import Any

import yaml

__all__ = ["load_meta", "dump_meta"]

_ENTRY_RE = re.compile(
    r"- id: (0|[1-9][0-9]{0,8})\n  ref: ([^\n]*)\n  at: (\d{4})-(\d{2})-(\d{2})\n  hash: ([^\n]*)\n"
)
# characters a plain scalar may hold here: no ': ', ' #', quotes, flow or block indicators
_PLAIN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/#-]*")
_SOURCES_LINE_RE = re.compile(r"^sources:\n", re.MULTILINE)
_MARKER_RE = re.compile(r"^(?:---|\.\.\.|%)", re.MULTILINE)
_STR = "tag:yaml.org,2002:str"
_RESOLVER = yaml.resolver.Resolver()
_KEYS = ["id", "ref", "at", "hash"]


def _plain_str(value: str) -> bool:
    """``value`` is written plain and read back as this very string."""
    return (
        _PLAIN_RE.fullmatch(value) is not None
        and _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) == _STR
    )


def _read_str(written: str) -> str | None:
    """The string a plain or single-quoted scalar of safe characters stands for."""
    if len(written) > 2 and written[0] == written[-1] == "'":
        inner = written[1:-1]
        return inner if _PLAIN_RE.fullmatch(inner) else None
    return written if _plain_str(written) else None


def _write_str(value: str) -> str | None:
    """How PyYAML writes ``value`` (plain, or single-quoted when plain would read as a
    number, date, bool or null); None when it might do anything else."""
    if _PLAIN_RE.fullmatch(value) is None:
        return None
    return value if _plain_str(value) else f"'{value}'"


def load_meta(raw: str, load: Callable[[str], Any]) -> dict[str, Any] | None:
    """The frontmatter ``raw`` as a mapping, its sources block read here and the rest with
    ``load`` (PyYAML); None when the block is not in Dream's shape."""
    m = _SOURCES_LINE_RE.search(raw)
    if m is None or _MARKER_RE.search(raw):
        return None
    entries: list[dict[str, Any]] = []
    pos = m.end()
    while (e := _ENTRY_RE.match(raw, pos)) is not None:
        ref, digest = _read_str(e.group(2)), _read_str(e.group(6))
        if ref is None or digest is None:
            return None
        try:
            at = _dt.date(int(e.group(3)), int(e.group(4)), int(e.group(5)))
        except ValueError:
            return None
        entries.append({"id": int(e.group(1)), "ref": ref, "at": at, "hash": digest})
        pos = e.end()
    if not entries or (pos < len(raw) and raw[pos] in " \t-#\n"):
        return None  # an entry of another shape, or the block goes on some other way
    try:
        head = load(raw[: m.start()]) if raw[: m.start()].strip() else {}
        tail = load(raw[pos:]) if raw[pos:].strip() else {}
    except yaml.YAMLError:
        return None
    if not isinstance(head, dict) or not isinstance(tail, dict) or "sources" in head:
        return None
    if "sources" in tail:
        return None
    meta = dict(head)
    meta["sources"] = entries
    meta.update(tail)
    return meta


def dump_meta(ordered: dict[str, Any], dump: Callable[[dict[str, Any]], str]) -> str | None:
    """``ordered`` as YAML, its sources written here and the other keys with ``dump``
    (PyYAML, the same options as for the whole); None when a source is not in Dream's shape."""
    sources = ordered.get("sources")
    if not isinstance(sources, list) or not sources:
        return None
    seen: set[int] = set()
    lines = []
    for e in sources:
        if not isinstance(e, dict) or list(e) != _KEYS:
            return None
        sid, ref, at, digest = e["id"], e["ref"], e["at"], e["hash"]
        if type(sid) is not int or sid < 0 or type(at) is not _dt.date or id(at) in seen:
            return None  # a date object used twice would be written as an anchor and alias
        seen.add(id(at))
        if not (isinstance(ref, str) and isinstance(digest, str)):
            return None
        ref_text, digest_text = _write_str(ref), _write_str(digest)
        if ref_text is None or digest_text is None:
            return None
        lines.append(
            f"- id: {sid}\n  ref: {ref_text}\n  at: {at.isoformat()}\n  hash: {digest_text}\n"
        )
    keys = list(ordered)
    at_sources = keys.index("sources")
    head = {k: ordered[k] for k in keys[:at_sources]}
    tail = {k: ordered[k] for k in keys[at_sources + 1 :]}
    if _shares_dates(head, seen) or _shares_dates(tail, seen):
        return None
    text = dump(head) if head else ""
    rest = dump(tail) if tail else ""
    if "&id" in text or "&id" in rest:
        return None  # anchors: the pieces would not read as the whole did
    return text + "sources:\n" + "".join(lines) + rest


def _shares_dates(value: Any, ids: set[int]) -> bool:
    if isinstance(value, _dt.date):
        return id(value) in ids
    if isinstance(value, dict):
        return any(_shares_dates(v, ids) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_shares_dates(v, ids) for v in value)
    return False
