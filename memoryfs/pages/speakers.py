"""Who speaks in a store's transcripts: roles, scope ids and display names.

A turn's speaker is a role (``user``, ``assistant``, ``tool``, ``system``), a scope id
(``alex``) or, in imported multi-party data, a name (``Caroline``). The store knows who the
roles are (``memory.toml`` ``[scope]``: ``user``/``assistant`` ids and their display names),
so a claim Dream writes from a ``user`` turn names the store's user, and a check of that
claim knows the user spoke it. Boundary: names only; nothing here reads turns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ASSISTANT_ROLES", "Roster", "asked_in_third_person", "display_name"]

# labels that are the assistant side of a chat (a tool's output is not a person either)
ASSISTANT_ROLES = frozenset({"assistant", "system", "tool", "bot", "ai", "developer", "model"})
_PART_RE = re.compile(r"[-_.\s]+")


def display_name(scope_id: str) -> str:
    """A readable name for a scope id: ``john-zhang`` -> "John Zhang", ``kim_lee`` ->
    "Kim Lee", ``j.smith`` -> "J. Smith", ``alex`` -> "Alex"; a part already capitalized
    keeps its case ("McKay"). Never the id with its separators ("John-zhang")."""
    parts = [p for p in _PART_RE.split(scope_id.strip()) if p]
    if not parts:
        return scope_id
    out: list[str] = []
    for i, part in enumerate(parts):
        word = part if part[:1].isupper() else part[:1].upper() + part[1:]
        if len(word) == 1 and word.isalpha() and i < len(parts) - 1:
            word += "."  # an initial
        out.append(word)
    return " ".join(out)


@dataclass(frozen=True)
class Roster:
    """The store's two sides: scope ids and the names claims are written with."""

    user: str
    assistant: str
    user_name: str = ""
    assistant_name: str = ""

    def __post_init__(self) -> None:
        if not self.user_name:
            object.__setattr__(self, "user_name", display_name(self.user) if self.user else "")
        if not self.assistant_name:
            name = display_name(self.assistant) if self.assistant else "Assistant"
            object.__setattr__(self, "assistant_name", name)

    def role(self, label: str) -> str:
        """``user``, ``assistant`` (tools and system prompts included) or ``""`` for a
        named speaker of imported multi-party data."""
        low = label.strip().lower()
        if low == "user" or (self.user and low == self.user.lower()):
            return "user"
        if low in ASSISTANT_ROLES or (self.assistant and low == self.assistant.lower()):
            return "assistant"
        return ""

    def person(self, label: str) -> str:
        """The display name of a person speaking as ``label``; "" for the assistant side."""
        role = self.role(label)
        if role == "user":
            return self.user_name or label
        if role == "assistant":
            return ""
        return label

    def name(self, label: str) -> str:
        """The display name of whoever speaks as ``label``, the assistant included."""
        return self.assistant_name if self.role(label) == "assistant" else self.person(label)


_FIRST_PERSON_RE = re.compile(
    r"\b(?:I(?:['’](?:m|ve|d|ll))?|me|myself|my|mine|we|us|our|ours)\b", re.IGNORECASE
)
_SECOND_PERSON_RE = re.compile(r"\b(?:you(?:['’](?:re|ve|d|ll))?|your|yours|yourself)\b", re.I)


def asked_in_third_person(question: str, roster: Roster) -> str:
    """``question`` as the store would say it: the asker's "I"/"my"/"we" is the user,
    "you"/"your" the assistant ("What did you recommend to me?" -> "What did Helper
    recommend to Alex?"), so a search finds the claims that name them. For search
    terms, not for display: no verb is conjugated."""
    if not roster.user_name:
        return question
    text = _FIRST_PERSON_RE.sub(roster.user_name, question)
    return _SECOND_PERSON_RE.sub(roster.assistant_name, text)
