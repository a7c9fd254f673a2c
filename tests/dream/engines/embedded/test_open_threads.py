"""Open threads: what someone asked to be reminded of, a stated to-do, a promised reminder.

Regression: a session whose user said "remind me to ..." and "I still need to ..." was
summarized with "Open threads: none recorded" (the request was read as a key point in
the imperative, and "has to" / "needs to" in the claim escaped the open-thread cue).
"""

from __future__ import annotations

import re

from engine_fixtures import consolidate, write_session

from dream.engines.embedded.todos import as_request, open_item
from memoryfs.pages.page import parse_page
from memoryfs.store.store import Store

USER, BOT = "user", "assistant"


def test_requests_to_be_reminded_and_to_dos_are_open_items() -> None:
    assert as_request("Could you remind me to water Ilse's ferns on Sunday?") == (
        "I asked to be reminded to water Ilse's ferns on Sunday."
    )
    assert as_request("Please, don't let me forget about the parking permit.") == (
        "I asked to be reminded about the parking permit."
    )
    assert as_request("Remind me, what was the venue called?") == ""
    assert as_request("I reminded him about the deadline.") == ""
    for said in (
        "I've got to return the rental bike tomorrow.",
        "We still need to choose a caterer.",
        "I haven't booked the ferry yet.",
        "Note to self: cancel the gym trial.",
    ):
        assert open_item(said), said
    for said in (
        "I have to admit the talk was good.",
        "I got to see the northern lights.",
        "I needed to sleep after that.",
        "I don't need to bring anything.",
    ):
        assert not open_item(said), said
    assert open_item("I'll remind you about the ferry on Friday.", by_assistant=True)
    assert not open_item("I can remind you if you want.", by_assistant=True)
    assert not open_item("I'll draft the email now.", by_assistant=True)


def _section(text: str, heading: str) -> list[str]:
    body = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in body.splitlines() if line.startswith("- ")]


def test_a_summary_lists_reminders_and_to_dos_as_cited_open_threads(tmp_store: Store) -> None:
    write_session(
        tmp_store,
        "2026-06-02-errands",
        "2026-06-02T18:00",
        [
            (USER, "Long day. The Kestrel audit finally closed this afternoon."),
            (BOT, "Congratulations, that took months."),
            (USER, "Could you remind me to renew the van insurance before it lapses?"),
            (BOT, "Of course."),
            (USER, "Oh, and don't let me forget to send Ilse the signed lease."),
            (USER, "I've got to finish the grant budget for Hallam Trust by Thursday."),
            (USER, "I have to admit the new office coffee is excellent."),
            (BOT, "I'll remind you about the van insurance on Friday."),
        ],
    )
    consolidate(tmp_store)
    path = tmp_store.memory / "sessions" / "summaries" / "2026-06-02-errands.md"
    text = path.read_text(encoding="utf-8")
    page = parse_page(text, path.name)
    threads = _section(text, "Open threads")
    refs = {s.id: s.ref.rsplit("#", 1)[1] for s in page.sources}

    def cited(fragment: str) -> str:
        line = next((t for t in threads if fragment in t), "")
        assert line, f"{fragment!r} not an open thread: {threads}"
        m = re.search(r"\[cite:(\d+)\]", line)
        assert m, line
        return refs[int(m.group(1))]

    assert cited("asked to be reminded to renew the van insurance") == "t3"
    assert cited("asked to be reminded to send Ilse the signed lease") == "t5"
    # a deadline and a promise, dated as they point: ahead
    assert cited('finish the grant budget for Hallam Trust by 4 June 2026 ("by Thursday")') == "t6"
    assert cited('will remind Dana about the van insurance on 5 June 2026 ("on Friday")') == "t8"
    assert not any("coffee" in t for t in threads)  # a figure of speech, not a to-do
    key_points = _section(text, "Key points")
    assert not any("reminded" in k for k in key_points)  # listed once, as a thread
