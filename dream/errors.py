"""The one exception root of the dream worker."""

from __future__ import annotations

__all__ = ["DreamError", "GateFailed", "SkillNotApproved", "RunNotFound"]


class DreamError(Exception):
    """Base class of every user-facing dream error; the message says what to do."""


class GateFailed(DreamError):
    """Validation or semantic verification rejected the staged tree; main is untouched."""


class SkillNotApproved(DreamError):
    """The dream skill changed since it was approved."""


class RunNotFound(DreamError):
    """No kept run (staged branch) with that id."""
