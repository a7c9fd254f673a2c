"""Procedural memory: the dream skill, its content hash and the store's approval.

Which skill is active: the file named by ``$DREAM_SKILL``, else the
``skills/dream/SKILL.md`` shipped inside the ``dream`` package (``dream.packaged``:
``dream/data/skills/dream/SKILL.md`` in a checkout, the same file in an installed
wheel). A ``skills/dream/SKILL.md`` copy inside a store is never active: the store
holds memory, and letting memory rewrite the procedure that writes memory would
defeat the approval. If no skill file is found, the active
skill is ``"none"``.

Where approval lives: ``memory.toml`` ``[dream]`` keys ``approved_skill`` (the
content hash), ``approved_by`` and ``approved_at`` (UTC), written through
``memoryfs.store.config`` and committed, so an approval is reviewed and reverted like
any other change and travels with the store.

``check_skill`` is what ``dream run`` calls before it starts: an active skill that
was never approved, changed since its approval, or is missing raises
``SkillNotApproved`` unless the operator allows it.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from dream.errors import DreamError, SkillNotApproved
from dream.packaged import skill_file
from memoryfs.receipts.records import format_utc
from memoryfs.store.config import load_config
from memoryfs.store.hashing import content_hash
from memoryfs.store.store import CONFIG_NAME, Store

__all__ = [
    "NO_SKILL",
    "SKILL_ENV",
    "Approval",
    "SkillStatus",
    "active_skill_path",
    "approve",
    "check_skill",
    "skill_hash",
    "skill_status",
]

NO_SKILL = "none"
SKILL_ENV = "DREAM_SKILL"
_MAX_BY = 100


@dataclass(frozen=True)
class Approval:
    hash: str
    by: str
    at: str  # UTC, "2026-01-12T02:15:00Z"
    commit: str  # "" when the same approval was already committed


@dataclass(frozen=True)
class SkillStatus:
    """The active skill against the store's approval."""

    path: str  # the active skill file, "" when none was found
    active: str  # content hash, or "none"
    approved: str  # the approved hash, "" when nothing was ever approved
    approved_by: str
    approved_at: str

    @property
    def state(self) -> str:
        """``approved``, ``unapproved`` (never approved), ``changed`` or ``missing``."""
        if self.active == NO_SKILL:
            return "missing"
        if not self.approved:
            return "unapproved"
        return "approved" if self.active == self.approved else "changed"

    @property
    def ok(self) -> bool:
        return self.state == "approved"

    def to_json(self) -> dict[str, str | bool]:
        return {
            "path": self.path,
            "active": self.active,
            "approved": self.approved,
            "approvedBy": self.approved_by,
            "approvedAt": self.approved_at,
            "state": self.state,
            "ok": self.ok,
        }


def active_skill_path() -> Path | None:
    """``$DREAM_SKILL``, else the packaged ``skills/dream/SKILL.md``; None if absent."""
    candidate = _wanted_skill_path()
    return candidate if candidate.is_file() else None


def _wanted_skill_path() -> Path:
    """Where the active skill should be, whether or not it is there."""
    env = os.environ.get(SKILL_ENV)
    return Path(env).expanduser() if env else skill_file("dream")


def skill_hash(path: Path | None) -> str:
    """Content hash of the skill file (the same hash the ``Dream-Skill`` trailer names)."""
    if path is None:
        return NO_SKILL
    try:
        return content_hash(path.read_bytes())
    except OSError:
        return NO_SKILL


def skill_status(store: Store, skill_path: Path | None = None) -> SkillStatus:
    """Compare the active skill (``skill_path`` or ``active_skill_path()``) with the approval.

    Reads ``memory.toml`` afresh, so an approval made by another process counts.
    """
    path = skill_path if skill_path is not None else active_skill_path()
    cfg = load_config(store.root / CONFIG_NAME).dream
    active = skill_hash(path)
    return SkillStatus(
        path=str(path) if path is not None and active != NO_SKILL else "",
        active=active,
        approved=cfg.approved_skill,
        approved_by=cfg.approved_by,
        approved_at=cfg.approved_at,
    )


def check_skill(
    store: Store, skill_path: Path | None = None, allow_unapproved: bool = False
) -> SkillStatus:
    """The skill status; raises ``SkillNotApproved`` unless approved or allowed."""
    status = skill_status(store, skill_path)
    if status.ok or allow_unapproved:
        return status
    how = "review it, then run 'dream skills approve' (or pass --allow-unapproved to run anyway)"
    if status.state == "missing":
        where = skill_path if skill_path is not None else _wanted_skill_path()
        raise SkillNotApproved(
            f"no dream skill found at {where} (set ${SKILL_ENV} to its path, "
            "or pass --allow-unapproved to run without one)"
        )
    if status.state == "unapproved":
        raise SkillNotApproved(
            f"the dream skill {status.path} (version {status.active}) was never approved "
            f"for this store; {how}"
        )
    who = f" by {status.approved_by}" if status.approved_by else ""
    when = f" at {status.approved_at}" if status.approved_at else ""
    raise SkillNotApproved(
        f"the dream skill {status.path} changed since it was approved: approved version "
        f"{status.approved}{who}{when}, active version {status.active}; {how}"
    )


def approve(store: Store, skill_path: Path | None = None, by: str = "") -> Approval:
    """Record the active skill's hash, ``by`` and the time in ``memory.toml`` and commit."""
    path = skill_path if skill_path is not None else active_skill_path()
    digest = skill_hash(path)
    if digest == NO_SKILL:
        raise DreamError(
            f"no dream skill to approve at {path or _wanted_skill_path()} "
            f"(set ${SKILL_ENV} to its path)"
        )
    by = by.strip() or _default_approver(store)
    if len(by) > _MAX_BY or any(ord(c) < 32 or c in '"\\' for c in by):
        raise DreamError(
            f"approver name must be one line of at most {_MAX_BY} characters "
            "without quotes or backslashes"
        )
    cfg_path = store.root / CONFIG_NAME
    with store.lock():
        cfg = load_config(cfg_path)
        if cfg.dream.approved_skill == digest and cfg.dream.approved_by == by:
            return Approval(digest, by, cfg.dream.approved_at, "")
        at = format_utc()
        dream_cfg = dataclasses.replace(
            cfg.dream, approved_skill=digest, approved_by=by, approved_at=at
        )
        commit = store.configure(
            dataclasses.replace(cfg, dream=dream_cfg), f"dream: approve skill {digest} (by {by})"
        )
    return Approval(digest, by, at, commit)


def _default_approver(store: Store) -> str:
    actor = store.author()
    name = (actor.name or "").strip()
    return name or os.environ.get("USER", "") or "unknown"
