"""``memory.toml``: the store's format version, scope and budgets.

Read with ``tomllib``; written by ``render_config`` in one fixed key order so the
file is stable in diffs.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from memoryfs.errors import MemoryFSError
from memoryfs.speakers import Roster

__all__ = [
    "FORMAT_VERSION",
    "Budgets",
    "DreamSettings",
    "StoreConfig",
    "load_config",
    "render_config",
    "valid_display_name",
]

FORMAT_VERSION = 1
_SCOPE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class Budgets:
    index_tokens: int = 1500
    recall_tokens: int = 1500
    materialize_bytes: int = 262144
    max_file_bytes: int = 2_000_000


@dataclass(frozen=True)
class DreamSettings:
    max_sessions: int = 0  # 0: no limit
    deadline: str = ""  # e.g. "20m"; empty: none
    approved_skill: str = ""  # content hash of the approved skills/dream/SKILL.md
    approved_by: str = ""  # who approved it (``dream skills approve``)
    approved_at: str = ""  # when, UTC ISO time


@dataclass(frozen=True)
class StoreConfig:
    user: str
    assistant: str
    format: int = FORMAT_VERSION
    budgets: Budgets = field(default_factory=Budgets)
    dream: DreamSettings = field(default_factory=DreamSettings)
    # the names claims are written with; "" derives one from the id (``display_name``)
    user_name: str = ""
    assistant_name: str = ""

    @property
    def roster(self) -> Roster:
        return Roster(self.user, self.assistant, self.user_name, self.assistant_name)


def validate_scope_name(kind: str, value: str) -> str:
    if not _SCOPE_RE.match(value):
        raise MemoryFSError(
            f"invalid {kind} scope {value!r} "
            "(use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit)"
        )
    return value


def valid_display_name(value: str, empty_ok: bool = False) -> bool:
    """A display name is one line of at most 80 characters with a letter in it."""
    value = value.strip()
    if not value:
        return empty_ok
    return len(value) <= 80 and value.isprintable() and any(c.isalpha() for c in value)


def load_config(path: Path) -> StoreConfig:
    """Parse ``memory.toml``; a malformed file is a ``MemoryFSError``."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise MemoryFSError(f"{path}: cannot read store config: {exc}") from None
    scope = data.get("scope")
    if (
        not isinstance(scope, dict)
        or not isinstance(scope.get("user"), str)
        or not isinstance(scope.get("assistant"), str)
    ):
        raise MemoryFSError(f"{path}: [scope] needs string keys 'user' and 'assistant'")
    names = {k: scope.get(k, "") for k in ("user_name", "assistant_name")}
    for key, value in names.items():
        if not isinstance(value, str) or not valid_display_name(value, empty_ok=True):
            raise MemoryFSError(
                f"{path}: [scope] {key} must be a name on one line, at most 80 characters"
            )
    fmt = data.get("format", FORMAT_VERSION)
    if not isinstance(fmt, int) or fmt > FORMAT_VERSION:
        raise MemoryFSError(
            f"{path}: store format {fmt!r} is newer than this memoryfs understands "
            f"({FORMAT_VERSION}); upgrade memoryfs"
        )
    b = data.get("budgets", {}) or {}
    d = data.get("dream", {}) or {}
    try:
        budgets = Budgets(
            index_tokens=int(b.get("index_tokens", Budgets.index_tokens)),
            recall_tokens=int(b.get("recall_tokens", Budgets.recall_tokens)),
            materialize_bytes=int(b.get("materialize_bytes", Budgets.materialize_bytes)),
            max_file_bytes=int(b.get("max_file_bytes", Budgets.max_file_bytes)),
        )
        dream = DreamSettings(
            max_sessions=int(d.get("max_sessions", 0)),
            deadline=str(d.get("deadline", "")),
            approved_skill=str(d.get("approved_skill", "")),
            approved_by=str(d.get("approved_by", "")),
            approved_at=str(d.get("approved_at", "")),
        )
    except (TypeError, ValueError) as exc:
        raise MemoryFSError(f"{path}: bad budget or dream setting: {exc}") from None
    return StoreConfig(
        user=scope["user"],
        assistant=scope["assistant"],
        format=fmt,
        budgets=budgets,
        dream=dream,
        user_name=names["user_name"].strip(),
        assistant_name=names["assistant_name"].strip(),
    )


def _q(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_config(cfg: StoreConfig) -> str:
    return (
        "# memoryfs store configuration\n"
        f"format = {cfg.format}\n\n"
        "[scope]\n"
        f"user = {_q(cfg.user)}\n"
        f"assistant = {_q(cfg.assistant)}\n"
        '# the names claims are written with ("I moved" by the user -> "<user_name> moved")\n'
        f"user_name = {_q(cfg.roster.user_name)}\n"
        f"assistant_name = {_q(cfg.roster.assistant_name)}\n\n"
        "[budgets]\n"
        f"index_tokens = {cfg.budgets.index_tokens}\n"
        f"recall_tokens = {cfg.budgets.recall_tokens}\n"
        f"materialize_bytes = {cfg.budgets.materialize_bytes}\n"
        f"max_file_bytes = {cfg.budgets.max_file_bytes}\n\n"
        "[dream]\n"
        f"max_sessions = {cfg.dream.max_sessions}\n"
        f"deadline = {_q(cfg.dream.deadline)}\n"
        f"approved_skill = {_q(cfg.dream.approved_skill)}\n"
        + (f"approved_by = {_q(cfg.dream.approved_by)}\n" if cfg.dream.approved_by else "")
        + (f"approved_at = {_q(cfg.dream.approved_at)}\n" if cfg.dream.approved_at else "")
    )
