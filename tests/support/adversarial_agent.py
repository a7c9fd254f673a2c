"""A hand-written Dream agent for the adversarial suite (``test_adversarial_claims.py``).

``dream run --engine command`` runs it in the staged tree (its working folder). It reads
a JSON plan (``argv[1]``) and carries out each step on ``memory/``, writing what a
careful agent would write as far as FORMAT goes: every claim cites a real turn with
``[cite:N]``, every ``sources`` entry has the turn's ref, its session date and the
turn's CURRENT hash, new pages and notes have the required keys. Only what the words
mean is the plan's to get wrong.

Steps (``op``):

- ``summary``: write the summary page of a pending session (id, title, date,
  participants, ``transcript_hash`` and ``turns`` of its transcript as it is now), or
  refresh those keys on the one that exists;
- ``claim``: add a line to a page (``style``: ``bullet``, ``paragraph`` or
  ``numbered``), citing ``cite`` (``<session>#tN``; none: an uncited line), under the
  page's section for that date (a summary: ``## Key points``; a note: above its
  ``About:`` line); ``create`` makes the page first (title, type, summary, about);
- ``meta``: set a frontmatter key (``title`` also renames the page's ``#`` heading);
- ``rehash``: set the hash of the entries citing ``cite`` to the turn's current hash.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from pathlib import Path
from typing import Any

from memoryfs.pages.page import Page, parse_page, render_page
from memoryfs.pages.transcript import Transcript, Turn, parse_transcript
from memoryfs.store.hashing import content_hash

MEMORY = Path("memory")


def transcript(sid: str) -> tuple[str, Transcript]:
    rel = f"sessions/transcripts/{sid}.md"
    raw = (MEMORY / rel).read_text(encoding="utf-8")
    return raw, parse_transcript(raw, rel)


def turn_of(cite: str) -> tuple[Transcript, Turn]:
    sid, anchor = cite.split("#")
    t = transcript(sid)[1]
    turn = t.turn(anchor)
    if turn is None:
        raise SystemExit(f"no turn {cite}")
    return t, turn


def human(date: str) -> str:
    d = dt.date.fromisoformat(date)
    return f"{d.day} {d.strftime('%B')} {d.year}"


def load(path: str) -> Page | None:
    file = MEMORY / path
    return parse_page(file.read_text(encoding="utf-8"), path) if file.exists() else None


def save(path: str, page: Page) -> None:
    file = MEMORY / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(render_page(page), encoding="utf-8")


def summary(step: dict[str, Any]) -> None:
    sid = step["session"]
    raw, t = transcript(sid)
    path = f"sessions/summaries/{sid}.md"
    fresh = {"transcript_hash": content_hash(raw), "turns": len(t.turns)}
    page = load(path)
    if page is None:
        day = dt.date.fromisoformat(t.date)
        meta = {"id": sid, "title": step["title"], "type": "summary", "updated": day}
        meta |= {"date": day, "participants": list(t.participants), **fresh}
        body = f"# {step['title']}\n\n## Key points\n\n## Outcome\n\nOutcome: none recorded\n"
        page = Page(meta, body)
    save(path, page.with_meta(**fresh))


def _end_of_section(lines: list[str], start: int) -> int:
    """Where a line goes at the end of the section whose heading is ``lines[start]``."""
    level = len(lines[start]) - len(lines[start].lstrip("#"))
    end = len(lines)
    for j in range(start + 1, len(lines)):
        if lines[j].startswith("#") and len(lines[j]) - len(lines[j].lstrip("#")) <= level:
            end = j
            break
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return end


def _insert(path: str, lines: list[str], date: str, new: list[str]) -> None:
    if path.startswith("notes/"):
        about = next((i for i, x in enumerate(lines) if x.startswith("About:")), None)
        at = _end_of_section(lines, 0) if about is None else about
        while about is not None and at > 0 and not lines[at - 1].strip():
            at -= 1
        lines[at:at] = new
        return
    heading = "## Key points" if path.startswith("sessions/") else f"## {date} ("
    start = next((i for i, x in enumerate(lines) if x.startswith(heading)), None)
    if start is not None:
        at = _end_of_section(lines, start)
        lines[at:at] = new
        return
    related = next((i for i, x in enumerate(lines) if x.strip() == "## Related"), None)
    at = len(lines) if related is None else related
    lines[at:at] = [f"## {date} ({human(date)})", "", *[x for x in new if x], ""]


def claim(step: dict[str, Any]) -> None:
    path, cite = step["path"], step.get("cite")
    # the section's date: given, else the cited session's, else the one in the file name
    date = step.get("date") or (cite or "")[:10] or re.findall(r"\d{4}-\d\d-\d\d", path)[-1]
    page = load(path)
    if page is None:
        made = step["create"]
        meta = {"id": Path(path).stem, "title": made["title"], "type": made["type"]}
        if made.get("summary"):
            meta["summary"] = made["summary"]
        day = dt.date.fromisoformat(date)
        meta |= {"created": day, "updated": day}
        about = f"\nAbout: [[{made['about']}]]\n" if made.get("about") else ""
        page = Page(meta, f"# {made['title']}\n{about}")
    marker = ""
    if cite:
        t, turn = turn_of(cite)
        sources = list(page.meta.get("sources") or [])
        sid, anchor = cite.split("#")
        ref = f"sessions/transcripts/{sid}.md#{anchor}"
        # the page's entry for that turn when it has one, else a new entry
        same = [s["id"] for s in sources if s.get("ref") == ref and s.get("hash") == turn.hash]
        n = same[0] if same else max((s["id"] for s in sources), default=0) + 1
        if not same:
            at = dt.date.fromisoformat(t.date)
            sources.append({"id": n, "ref": ref, "at": at, "hash": turn.hash})
            page = page.with_meta(sources=sources)
        marker = f" [cite:{n}]"
    style = step.get("style", "bullet")
    text = {"bullet": "- {}", "paragraph": "{}", "numbered": "1. {}"}[style].format(
        step["text"] + marker
    )
    # a paragraph or a numbered list stands apart from the bullets above it
    new = [text] if style == "bullet" else ["", text, ""]
    lines = page.body.rstrip("\n").split("\n")
    _insert(path, lines, date, new)
    save(path, page.with_body("\n".join(lines).rstrip("\n") + "\n"))


def meta(step: dict[str, Any]) -> None:
    path, key, value = step["path"], step["key"], step["value"]
    page = load(path)
    assert page is not None, path
    if key == "title":
        lines = page.body.split("\n")
        lines = [f"# {value}" if x.startswith("# ") else x for x in lines]
        page = page.with_body("\n".join(lines))
    save(path, page.with_meta(**{key: value}))


def rehash(step: dict[str, Any]) -> None:
    path, cite = step["path"], step["cite"]
    page = load(path)
    assert page is not None, path
    sid, anchor = cite.split("#")
    ref = f"sessions/transcripts/{sid}.md#{anchor}"
    now = turn_of(cite)[1].hash
    sources = [{**s, "hash": now} if s.get("ref") == ref else s for s in page.meta["sources"]]
    save(path, page.with_meta(sources=sources))


STEPS = {"summary": summary, "claim": claim, "meta": meta, "rehash": rehash}


def main() -> None:
    plan = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    for step in plan:
        STEPS[step["op"]](step)
    print(f"adversarial agent: {len(plan)} steps done")


if __name__ == "__main__":
    main()
