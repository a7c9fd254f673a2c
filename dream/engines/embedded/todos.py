"""Open items: what a session leaves for later, in the words of whoever said it.

Job: tell the sentences that leave something open (a request to be reminded: "remind me
to book a table", "don't let me forget to call the landlord"; a to-do the speaker
states: "I still need to renew my passport", "I have to send the report by Friday";
the assistant's promise to remind or follow up: "I'll remind you on Thursday") and
write a request to be reminded as a statement ("Remind me to X" -> "I asked to be
reminded to X"), which ``dream.engines.embedded.phrasing.third_person`` then gives the speaker's
name. The summary lists them as open threads (``dream.engines.embedded.digest``).

Boundary: text in, a label or a sentence out; English cue words, no model.
"""

from __future__ import annotations

import re

__all__ = ["as_request", "open_item"]

_A = r"['’]"
# "remind me ...", "can you remind me ...", "don't let me forget ...", "make sure I
# remember ...", at the head of a sentence (after "please", "and", "oh", "also")
_REQUEST_RE = re.compile(
    r"^(?:(?:please|pls|and|also|oh|ok|okay|so|btw|one more thing)[,:!]?\s+)*"
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|please\s+)?"
    rf"(?:remind\s+me|(?:don{_A}t|do\s+not|never)\s+let\s+me\s+forget|"
    rf"make\s+sure\s+I\s+(?:remember|don{_A}t\s+forget|do\s+not\s+forget))"
    r"(?:,\s*please,?)?\s+(?P<rest>\S.*?)[\s?.!]*$",
    re.IGNORECASE,
)
# the speaker's own to-do: "I (still) need to", "I have to", "I've got to", "I must",
# "I mustn't forget to", "I still haven't ...", "note to self", "on my to-do list";
# not a figure of speech ("I have to say", "I must admit") nor a chance taken ("I got to
# meet her")
_SAYING = r"(?!\s*(?:say|admit|confess|agree|laugh|wonder|tell\s+you|be\s+honest)\b)"
_TODO_RE = re.compile(
    rf"\b(?:I|we)\s+(?:still\s+|really\s+|also\s+|just\s+|definitely\s+|absolutely\s+|"
    rf"first\s+)?(?:need\s+to|have\s+to|must|(?:must\s+not|mustn{_A}t)\s+forget){_SAYING}\b|"
    rf"\b(?:I|we){_A}ve\s+(?:still\s+)?got\s+to{_SAYING}\b|\b(?:I|we)\s+gotta{_SAYING}\b|"
    rf"\bI\s+(?:still\s+)?(?:haven{_A}t|have\s+not)\s+(?:\w+\s+){{0,4}}?yet\b|"
    rf"\bI\s+still\s+(?:haven{_A}t|have\s+not)\b|"
    r"\bnote\s+to\s+self\b|\bto-?do\s+list\b|\bremind\s+myself\b",
    re.IGNORECASE,
)
# the assistant's promise to come back to it: "I'll remind you", "I will follow up"
_PROMISE_RE = re.compile(
    rf"\bI(?:{_A}ll|\s+will|{_A}m\s+going\s+to|\s+am\s+going\s+to)\s+(?:\w+\s+)?"
    r"(?:remind\s+you|follow\s+up|check\s+(?:back|in)\s+(?:with\s+you|on)|"
    r"get\s+back\s+to\s+you|ping\s+you|nudge\s+you)\b",
    re.IGNORECASE,
)


def as_request(said: str) -> str:
    """A request to be reminded written as what the speaker asked ("Remind me to book a
    table." -> "I asked to be reminded to book a table."), or "" for any other sentence."""
    m = _REQUEST_RE.match(said.strip())
    if m is None:
        return ""
    rest = m.group("rest")
    if not rest[:1].islower() and not rest.startswith("I "):
        return ""  # "Remind me, Sam ...": a name, not what to remember
    return f"I asked to be reminded {rest}."


def open_item(said: str, by_assistant: bool = False) -> bool:
    """``said`` leaves something open: the speaker's to-do or request to be reminded, or
    (``by_assistant``) the assistant's promise to remind or follow up."""
    if by_assistant:
        return bool(_PROMISE_RE.search(said))
    return bool(as_request(said) or _TODO_RE.search(said))
