"""Pages: Markdown with YAML frontmatter, read and written without diff noise.

A page keeps the exact frontmatter text it was read from; rendering a page whose
metadata did not change gives back the very same bytes, so reviewers never see
reformatting in a diff. Changed metadata is dumped in one canonical key order.
(``frontmatter.loads`` strips the body's whitespace, which would break byte-exact
rewrites, so the split is done here and ``memoryfs.pages.bounded_yaml`` parses the
metadata with YAML's safe loader within a size, node and alias budget: YAML tags like
``!!python/object`` are never executed, and an alias bomb is refused before it is built.)

Parsing is memoized by (the text's digest, path) in a byte-bounded memo
(``memoryfs.pages.parse_cache``): in one Dream run the wiki phase, the index facts and both gates
read the same changed pages, and a hub page's frontmatter holds hundreds of sources;
``clear_parse_cache`` empties it. A parsed ``Page`` may therefore be shared: treat ``meta`` as
read-only (``with_meta`` or ``dict(page.meta)`` to change it).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from memoryfs.errors import PageError
from memoryfs.pages.bounded_yaml import DEFAULT_YAML_LIMITS, YamlLimits, check_size, load_yaml
from memoryfs.pages.parse_cache import TextMemo
from memoryfs.pages.sources_yaml import dump_meta, load_meta

__all__ = [
    "REQUIRED_KEYS",
    "KEY_ORDER",
    "Page",
    "Source",
    "parse_page",
    "render_page",
    "render_meta",
    "split_frontmatter",
    "clear_parse_cache",
]

REQUIRED_KEYS = ("id", "title", "type", "updated")
KEY_ORDER = (
    "id",
    "title",
    "type",
    "aliases",
    "summary",
    "scope",
    "status",
    "created",
    "updated",
    "sources",
)
_SOURCE_ORDER = ("id", "ref", "at", "hash")
# the closing ``---`` line of frontmatter (trailing carriage returns allowed)
_CLOSE_RE = re.compile(r"^---\r*$", re.MULTILINE)
# Page texts kept parsed, by the text's digest (a key holding the text would keep every
# text alive beside its ``Page``): 200 K characters, about 1.2 MB parsed (a hub page's
# sources are dicts). A nightly run's changed pages (about 1 MB of text at 500 synthetic
# sessions, more in larger stores) are read by the wiki phase, the index facts and both
# gates; the bound keeps the memo's memory the same whatever the store's size, at the
# cost of parsing the rest again.
_memo: TextMemo[tuple[bytes, int, str], Page] = TextMemo(200_000)


class _Dumper(yaml.SafeDumper):
    """SafeDumper that double-quotes strings holding U+0085 (NEL).

    PyYAML writes NEL raw inside single quotes, where a YAML reader folds it to
    a space, so the value would silently change on the next read.
    """


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\x85" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')
    return dumper.represent_str(data)


_Dumper.add_representer(str, _represent_str)


@dataclass(frozen=True)
class Source:
    """One entry of a page's ``sources`` list: the evidence a ``[cite:N]`` names."""

    id: int
    ref: str  # path relative to memory/ plus a turn anchor, e.g. sessions/transcripts/x.md#t12
    at: str = ""
    hash: str = ""

    @property
    def path(self) -> str:
        return self.ref.split("#", 1)[0]

    @property
    def anchor(self) -> str:
        return self.ref.split("#", 1)[1] if "#" in self.ref else ""

    def to_meta(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "ref": self.ref}
        if self.at:
            out["at"] = self.at
        if self.hash:
            out["hash"] = self.hash
        return out


@dataclass(frozen=True)
class Page:
    """A parsed page. ``path`` is relative to ``memory/`` (posix)."""

    meta: dict[str, Any]
    body: str
    path: str = ""
    raw_meta: str | None = field(default=None, compare=False, repr=False)
    body_line: int = 1  # 1-based line number of the body's first line in the file

    @property
    def id(self) -> str:
        return str(self.meta.get("id", ""))

    @property
    def title(self) -> str:
        return str(self.meta.get("title", ""))

    @property
    def type(self) -> str:
        return str(self.meta.get("type", ""))

    @property
    def summary(self) -> str:
        return str(self.meta.get("summary", "") or "")

    @property
    def updated(self) -> str:
        return _scalar(self.meta.get("updated", ""))

    @property
    def aliases(self) -> list[str]:
        raw = self.meta.get("aliases") or []
        if isinstance(raw, str):
            return [raw]
        if isinstance(raw, list):
            return [str(a) for a in raw if isinstance(a, str | int | float)]
        return []

    @property
    def sources(self) -> list[Source]:
        """The well-formed entries of ``sources`` (malformed ones are validation findings)."""
        return [
            Source(
                id=sid, ref=ref, at=_scalar(item.get("at", "")), hash=_scalar(item.get("hash", ""))
            )
            for sid, ref, item in self.source_items()
        ]

    def source_items(self) -> Iterator[tuple[int, str, dict[str, Any]]]:
        """(id, ref, raw entry) of each well-formed entry of ``sources``, without a ``Source``
        each (a hub page lists hundreds)."""
        raw = self.meta.get("sources") or []
        if not isinstance(raw, list):
            return
        for item in raw:
            if not isinstance(item, dict):
                continue
            sid, ref = item.get("id"), item.get("ref")
            if isinstance(sid, bool) or not isinstance(sid, int) or not isinstance(ref, str):
                continue
            yield sid, ref, item

    def with_meta(self, **changes: Any) -> Page:
        meta = dict(self.meta)
        meta.update(changes)
        return replace(self, meta=meta, raw_meta=None)

    def with_body(self, body: str) -> Page:
        return replace(self, body=body)


def _scalar(value: Any) -> str:
    if isinstance(value, _dt.datetime):
        return value.isoformat(timespec="minutes")
    if isinstance(value, _dt.date):
        return value.isoformat()
    return "" if value is None else str(value)


def split_frontmatter(text: str) -> tuple[str, str, int] | None:
    """Split ``text`` into (yaml, body, body_line) or None if there is no frontmatter."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        return None
    pos = text.index("\n") + 1
    close = _CLOSE_RE.search(text, pos)  # the first line after the opening one that is "---"
    if close is None:
        return None
    body_start = min(close.end() + 1, len(text))
    line = 2 + text.count("\n", pos, close.start())  # the closing line's number
    return text[4 if text[3] == "\n" else 5 : close.start()], text[body_start:], line + 1


def parse_page(
    text: str, path: str = "", *, memo: bool = True, limits: YamlLimits = DEFAULT_YAML_LIMITS
) -> Page:
    """Parse a page; raises ``PageError`` (with the reason) on malformed input.

    The result may be shared with other callers that parsed the same text: do not
    mutate its ``meta``. ``memo=False``: a text no one will parse again (a page being
    edited) is parsed without taking room in the memo. ``limits``: what the frontmatter
    may hold (a store's ``StoreConfig.limits.yaml``; the defaults are the most any store
    allows)."""
    if not memo or limits != DEFAULT_YAML_LIMITS:
        return _parse_page(text, path, limits)
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    return _memo.get((digest, len(text), path), len(text), lambda: _parse_page(text, path, limits))


def clear_parse_cache() -> None:
    """Forget every parsed page (Dream calls it as a run starts: a run's pages first)."""
    _memo.clear()


def _parse_page(text: str, path: str, limits: YamlLimits) -> Page:
    parts = split_frontmatter(text)
    if parts is None:
        raise PageError(f"{path or 'page'}: no YAML frontmatter (start the file with '---')")
    raw, body, body_line = parts

    def load(part: str) -> Any:
        return load_yaml(part, limits, path or "page")

    try:
        check_size(raw, limits, path or "page")  # the whole, before any part is parsed
        meta = load_meta(raw, load)
        if meta is None:
            meta = load(raw) if raw.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at frontmatter line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise PageError(f"{path or 'page'}: malformed YAML{where}: {problem}") from None
    except (RecursionError, ValueError, TypeError, OverflowError) as exc:
        raise PageError(f"{path or 'page'}: unreadable YAML: {type(exc).__name__}") from None
    if not isinstance(meta, dict):
        raise PageError(f"{path or 'page'}: frontmatter must be a mapping of keys to values")
    return Page(meta=meta, body=body, path=path, raw_meta=raw, body_line=body_line)


def _ordered(meta: dict[str, Any], order: tuple[str, ...] = KEY_ORDER) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in order:
        if key in meta:
            out[key] = meta[key]
    for key in sorted((k for k in meta if k not in out), key=str):  # YAML keys may be ints
        out[key] = meta[key]
    sources = out.get("sources")
    if isinstance(sources, list):
        out["sources"] = [
            {k: s[k] for k in (*_SOURCE_ORDER, *sorted(set(s) - set(_SOURCE_ORDER))) if k in s}
            if isinstance(s, dict)
            else s
            for s in sources
        ]
    return out


def _dump(data: dict[str, Any]) -> str:
    return yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=10_000,
    )


def render_meta(meta: dict[str, Any], order: tuple[str, ...] = KEY_ORDER) -> str:
    """Canonical YAML for page metadata (``order`` first, then the other keys sorted)."""
    try:
        ordered = _ordered(meta, order)
        return dump_meta(ordered, _dump) or _dump(ordered)
    except (RecursionError, yaml.YAMLError) as exc:
        raise PageError(f"cannot write page metadata: {type(exc).__name__}") from None


def render_page(page: Page) -> str:
    """Render a page; unchanged metadata keeps its original bytes."""
    raw = page.raw_meta
    if raw is None:
        raw = render_meta(page.meta)
    if raw and not raw.endswith("\n"):
        raw += "\n"
    return f"---\n{raw}---\n{page.body}"
