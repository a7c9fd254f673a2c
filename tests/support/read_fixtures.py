"""Store builders for the read-side tests (search, recall, materialize, prefill).

Files are written directly in the DESIGN.md forms (no ingest, no Dream), so the
tests pin the read side alone: two LoCoMo-like sessions, a person page whose
claims cite turns, a linked topic page, a preference page, a note and a summary.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from memoryfs.index.index_md import write_indexes
from memoryfs.pages.page import render_meta
from memoryfs.pages.transcript import Transcript, Turn, render_transcript
from memoryfs.read.search import Hit, SearchIndex
from memoryfs.store.atomic import atomic_write_text
from memoryfs.store.hashing import turn_hash
from memoryfs.store.store import Store, init_store

S1 = "2023-05-08-friends-s01"
S2 = "2023-05-25-friends-s02"
S1_TURNS = [
    ("Caroline", "Hey Mel! Good to see you! How have you been?"),
    ("Melanie", "Hey Caroline! I'm swamped with the kids and work. What's up with you?"),
    ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
    ("Melanie", "Wow, that's cool! What happened there?"),
    ("Caroline", "The transgender stories were so inspiring. I'm thinking of studying counseling."),
]
S2_TURNS = [
    ("Melanie", "Guess what, I ran a charity race for mental health last Saturday!"),
    ("Caroline", "That's amazing! How did it go?"),
    ("Melanie", "It was tiring but great. Pottery helps me destress after a race too."),
    ("Caroline", "I love that. I'm researching adoption agencies this week."),
]


def write_transcript(store: Store, sid: str, started: str, turns: list[tuple[str, str]]) -> None:
    t = Transcript(
        id=sid,
        started=started,
        participants=tuple(dict.fromkeys(s for s, _ in turns)),
        scope={"user": store.config.user, "assistant": store.config.assistant},
        turns=tuple(
            Turn(n=i, speaker=speaker, ts=started, text=text)
            for i, (speaker, text) in enumerate(turns, start=1)
        ),
    )
    atomic_write_text(store.transcript_path(sid), render_transcript(t))


def write_page(store: Store, rel: str, meta: dict[str, Any], body: str) -> Path:
    path = store.memory / rel
    atomic_write_text(path, f"---\n{render_meta(meta)}---\n{body}")
    return path


def source(n: int, sid: str, turn: int, text: str, at: str) -> dict[str, Any]:
    return {
        "id": n,
        "ref": f"sessions/transcripts/{sid}.md#t{turn}",
        "at": at,
        "hash": turn_hash(text),
    }


def two_sessions(root: Path) -> Store:
    """A store holding the two shared sessions (S1, S2) and no pages yet."""
    store = init_store(root, "caroline", "atlas")
    write_transcript(store, S1, "2023-05-08T13:56", S1_TURNS)
    write_transcript(store, S2, "2023-05-25T13:14", S2_TURNS)
    return store


def build_store(root: Path) -> Store:
    """The small store most read-side tests share."""
    store = two_sessions(root)
    write_page(
        store,
        "knowledge/people/melanie.md",
        {
            "id": "melanie",
            "title": "Melanie",
            "type": "person",
            "aliases": ["Mel"],
            "summary": "Caroline's friend; runner and potter with kids.",
            "updated": "2023-05-25",
            "sources": [
                source(1, S2, 1, S2_TURNS[0][1], "2023-05-25"),
                source(2, S2, 3, S2_TURNS[2][1], "2023-05-25"),
            ],
        },
        "# Melanie\n\n## Facts\n\n"
        '- Melanie ran a charity race on 20 May 2023 ("last Saturday"). [cite:1]\n'
        "- Melanie destresses with [[pottery]]. [cite:2]\n"
        "- Throws at the [[community-studio]].\n\n"
        "## History\n\n"
        "- ~~Melanie trained for a marathon.~~ (superseded) [cite:1]\n",
    )
    write_page(
        store,
        "knowledge/topics/pottery.md",
        {
            "id": "pottery",
            "title": "Pottery",
            "type": "topic",
            "summary": "Clay work; Melanie's way to relax.",
            "updated": "2023-05-25",
        },
        "# Pottery\n\nMelanie throws bowls on a wheel at a community studio on Thursdays.\n\n"
        "```\nglaze recipe: code block text is never indexed zanzibar [[melanie]]\n```\n",
    )
    write_page(
        store,
        "knowledge/places/community-studio.md",
        {
            "id": "community-studio",
            "title": "Community studio",
            "type": "place",
            "summary": "Rented wheel space, open Thursdays.",
            "updated": "2023-05-20",
        },
        "# Community studio\n\nTwo electric kilns.\n",
    )
    write_page(
        store,
        "knowledge/preferences/figures.md",
        {
            "id": "figures",
            "title": "Figures",
            "type": "preference",
            "summary": "Figures as PDF, not PNG.",
            "updated": "2023-05-08",
        },
        "# Figures\n\n- Caroline wants figures as PDF, not PNG.\n",
    )
    write_page(
        store,
        "notes/support/group.md",
        {
            "id": "group",
            "title": "Support group",
            "type": "note",
            "updated": "2023-05-08",
            "sources": [source(1, S1, 3, S1_TURNS[2][1], "2023-05-08")],
        },
        '- Caroline went to a LGBTQ support group on 7 May 2023 ("yesterday"). [cite:1]\n',
    )
    write_page(
        store,
        f"sessions/summaries/{S1}.md",
        {
            "id": S1,
            "title": "Support group and career plans",
            "type": "summary",
            "date": "2023-05-08",
            "updated": "2023-05-08",
            "sources": [source(1, S1, 5, S1_TURNS[4][1], "2023-05-08")],
        },
        "## Key points\n\n- Caroline is thinking of studying counseling. [cite:1]\n",
    )
    write_indexes(store)
    store.commit("test store")
    return store


@contextlib.contextmanager
def searched(
    store: Store, question: str, k: int = 20
) -> Iterator[tuple[list[Hit], Callable[[str], str]]]:
    """The ``k`` best hits for ``question`` and who spoke each turn ref ("" if none), with
    the index open (what ``memoryfs.read.voice`` is given in recall)."""
    with SearchIndex.open(store) as idx:
        idx.refresh_for_read()

        def speaker_of(ref: str) -> str:
            turn = idx.turn(ref)
            return turn.speaker if turn is not None else ""

        yield idx.search(question, k=k), speaker_of
