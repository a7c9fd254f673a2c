"""A deterministic synthetic store for benchmarks: one user's sessions over years.

Session ``i`` is built from its own ``random.Random(seed, i)``, so a store of N
sessions is a prefix of a store of N + 20 and "20 new sessions" are the same bytes
however large the store is. Turns mix what real sessions hold: people met, jobs and
moves (the slot facts that get superseded), dated events told with relative dates
("last Saturday", "two weeks ago"), preferences, project numbers, plans, and
assistant replies of varying length. Not a benchmark of quality, only of cost.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator

from memoryfs.pages.transcript import Transcript, Turn, render_transcript
from memoryfs.store.store import Store

__all__ = ["session", "sessions", "write_sessions"]

FIRST_DAY = dt.date(2023, 1, 2)
PEOPLE = (
    "Marta Silva", "Tiago Ferreira", "Priya Natarajan", "Henrik Aalto", "Lena Hoffmann",
    "Amara Osei", "Sam Keller", "Jonas Brandt", "Aiko Tanaka", "Rafael Costa", "Nadia Rahman",
    "Oskar Lind", "Chloe Martin", "Mateo Rossi", "Ingrid Berg", "Yusuf Demir", "Clara Weiss",
    "Diego Alvarez", "Hana Novak", "Felix Wagner", "Sofia Greco", "Kwame Mensah", "Elif Kaya",
    "Lucas Moreau", "Maya Cohen", "Noah Fischer", "Zara Ahmed", "Emil Sorensen",
)  # fmt: skip
CITIES = (
    "Hamburg", "Lisbon", "Berlin", "Copenhagen", "Vienna", "Porto", "Munich", "Oslo",
    "Rotterdam", "Ghent", "Bologna", "Krakow", "Bergen", "Lyon", "Tallinn",
)  # fmt: skip
ORGS = (
    "Marlow Institute", "Tidewater Analytics", "Tagus Marine Lab", "Archiva Foundation",
    "Blue Horizon Fund", "Northwind Robotics", "Kelp & Co", "Harbor Health", "Quayside Labs",
)  # fmt: skip
ROLES = (
    "postdoc", "staff scientist", "data engineer", "nurse", "product manager", "teacher",
    "research software engineer", "team lead", "designer", "consultant",
)  # fmt: skip
PROJECTS = ("Reefsong", "Tidemark", "Kelpwatch", "Sounding Board", "Harbor Map", "Driftnet")
HOBBIES = ("bouldering", "cello", "pottery", "running", "sailing", "chess", "baking", "cycling")
PREFS = (
    ("figures", "as PDF"), ("citations", "in author-year style"), ("tea", "green"),
    ("meetings", "after 10:00"), ("trips", "by train"), ("notes", "in Markdown"),
    ("emails", "short and direct"), ("code reviews", "in the afternoon"),
)  # fmt: skip
WHEN_PAST = (
    "yesterday", "last Saturday", "two weeks ago", "last month", "on Monday", "last weekend",
    "three days ago", "last week", "this morning",
)  # fmt: skip
WHEN_NEXT = ("next Friday", "in three weeks", "next month", "tomorrow", "next weekend")
FILLER = (
    "It was a long day, honestly.", "Anyway, that's the context.", "Not sure it matters much.",
    "I keep forgetting to write these things down.", "The weather was grey the whole time.",
    "We talked for ages about nothing in particular.", "I should have asked more questions.",
    "It took longer than I expected.", "There were a lot of people there.",
)  # fmt: skip
REPLIES = (
    "Noted.", "Got it, I'll keep that in mind.", "That sounds like a good plan.",
    "Do you want me to draft something for that?", "Thanks for the context.",
    "Shall I add it to your list for the week?",
    "A few options: keep it as is, split it into two steps, or postpone it until the data is in. "
    "The second one is usually the least painful, because each step can be checked on its own.",
    "Here is a short checklist: confirm the date, book the travel, tell the people involved, "
    "and block an hour the day before to prepare.",
)  # fmt: skip


TEMPLATES = (
    "I had lunch with {person} {past}. {first} told me {other} is moving to {city}.",
    "{person} started a new job as {role} at {org}.",
    "We released {project} {major}.{minor} {past}; it now has {big} recordings from {small} sites.",
    "For the record, I prefer {pref}. Please remember that.",
    "I'm going to {city} {future} for a workshop with {person}.",
    "I went {hobby} with {first} {past}; we stayed {hours} hours.",
    "I moved to {city} {past}, so my commute is {minutes} minutes now.",
    "I work as {role} at {org} since {month}.",
    "Can you help me plan the {project} meeting with {person} and {other}?",
)


def _user_turn(rng: random.Random, day: dt.date) -> str:
    person, other = rng.sample(PEOPLE, 2)
    topic, value = rng.choice(PREFS)
    values = {
        "person": person,
        "other": other,
        "first": person.split()[0],
        "city": rng.choice(CITIES),
        "role": rng.choice(ROLES),
        "org": rng.choice(ORGS),
        "project": rng.choice(PROJECTS),
        "hobby": rng.choice(HOBBIES),
        "pref": f"{topic} {value}",
        "past": rng.choice(WHEN_PAST),
        "future": rng.choice(WHEN_NEXT),
        "major": rng.randint(0, 3),
        "minor": rng.randint(0, 20),
        "big": rng.randint(100, 9000),
        "small": rng.randint(3, 60),
        "hours": rng.randint(2, 5),
        "minutes": rng.randint(10, 70),
        "month": day.strftime("%B"),
    }
    text = rng.choice(TEMPLATES).format(**values)
    extra = " ".join(rng.sample(FILLER, rng.randint(0, 3)))
    return f"{text} {extra}".strip()


def session(i: int, seed: int = 7) -> Transcript:
    """Session number ``i`` (0-based) of the synthetic user."""
    rng = random.Random(seed * 1_000_003 + i)
    day = FIRST_DAY + dt.timedelta(days=i * 3 // 5)  # about five sessions every three days
    start = dt.datetime.combine(day, dt.time(8 + rng.randrange(12), rng.randrange(60)))
    turns: list[Turn] = []
    for n in range(rng.randint(6, 16)):
        when = start + dt.timedelta(minutes=2 * n)
        speaker = "user" if n % 2 == 0 else "assistant"
        text = _user_turn(rng, day) if speaker == "user" else rng.choice(REPLIES)
        turns.append(
            Turn(n=n + 1, speaker=speaker, ts=when.isoformat(timespec="minutes"), text=text)
        )
    slug = rng.choice(PROJECTS + HOBBIES).lower().replace(" ", "-")
    return Transcript(
        id=f"{day.isoformat()}-{slug}-{i:05d}",
        started=start.isoformat(timespec="minutes"),
        participants=("dana", "atlas"),
        scope={"user": "dana", "assistant": "atlas"},
        turns=tuple(turns),
    )


def sessions(start: int, stop: int, seed: int = 7) -> Iterator[Transcript]:
    for i in range(start, stop):
        yield session(i, seed)


def write_sessions(store: Store, start: int, stop: int, seed: int = 7) -> str:
    """Write sessions ``start..stop`` into the store as transcripts and commit them."""
    paths = []
    for t in sessions(start, stop, seed):
        path = store.transcript_path(t.id)
        path.write_text(render_transcript(t), encoding="utf-8")
        paths.append(path.relative_to(store.root).as_posix())
    with store.lock("write"):
        return store.commit(f"ingest: {len(paths)} sessions (synthetic)", paths)


def _main() -> None:  # pragma: no cover - a look at a few generated turns
    for t in sessions(0, 2):
        print(render_transcript(t))


if __name__ == "__main__":  # pragma: no cover
    _main()
