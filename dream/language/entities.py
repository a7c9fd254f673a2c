"""Named subjects in one session: who and what is talked about, and of which kind.

Job: find capitalized names in sentences ("Priya Natarajan", "Marlow Institute for Ocean
Research", "Lisbon") and type each one as a person, org, place or project from cue words
around its mentions across the session ("my partner Sam", "at the X Institute", "moved to
X", "X is a lively district", "my main project is X"). A name with no cue stays a
``topic`` candidate; the attach phase keeps a topic only when it recurs across sessions.
Cues that fit more than one type ("back at X": a place or an organisation) and a type
guessed from the shape of a name (two capitalized words: a person) are weak
(``weak``, ``guessed``): a preposition of place before a name outweighs its shape
("walked over to Temple Quay"), and the attach phase lets typed evidence of other
sessions, and the pages a short form belongs to, outweigh them. Short forms are folded into the
long name they are part of ("Priya" -> "Priya Natarajan").

Boundary: one session at a time, no store access, no model, no name lists: a word the
session also uses in lower case ("ocean", "data") is a common word, not a name.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass

from dream.language.lexicon import (
    CONNECTORS,
    EVENT_NOUNS,
    NOUN_ENDINGS,
    OPENERS,
    ORG_KINDS,
    ORG_NOUNS_AFTER,
    ORG_PREFIXES,
    ORG_SUFFIXES,
    PERSON_VERBS_AFTER,
    PERSON_WORDS_BEFORE,
    PLACE_KINDS,
    PLACE_NOUNS,
    PLACE_NOUNS_AFTER,
    PLACE_PREFIXES,
    PLACE_SUFFIXES,
    PLURAL_NOUN_ENDINGS,
    PROJECT_NOUNS,
    RELATIONS,
    ROLE_NOUNS,
    STOP_WORDS,
    THING_ACRONYMS,
    TITLES,
)

__all__ = ["Candidate", "EntityTable", "candidates", "SUBJECT_TYPES"]

SUBJECT_TYPES = ("person", "org", "place", "project", "topic")


_WORD_RE = re.compile(r"[^\W\d_][\w'’\-&.]*[\w&]|[^\W\d_]")
_PLACE_VERBS = re.compile(
    r"\b(?:live|lives|living|lived|moved|move|moving|relocated|relocating|trip|travel|travelled|"
    r"traveled|travelling|traveling|flew|fly|flying|flight|visit|visiting|visited|went|go|going|"
    r"back|based|here|there|arrived|arrive|drive|drove|train|holiday|vacation|stay|stayed|"
    r"staying|born|grew\s+up|home|office|workshop|conference|house|flat|apartment|hotel|campus|"
    r"station|airport|harbour|harbor|restaurant|cafe|café|neighbourhood|neighborhood|near|city|"
    r"town|village|country|capital|downtown|weekend|days?|week|ferry|bus|tour|hike|hiking|"
    r"walk|walks|walked|walking|stroll|strolled|cycle|cycled|cycling|biked|head|headed|heading|"
    r"commute|commuted|lunch|dinner|breakfast|brunch|coffee|drinks|picnic|shopping)"
    r"(?:\s+[\w'’-]+){0,2}\s+(?P<prep>in|to|from|at|near|around|of)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
# a plain verb of motion with "to" / "from": "moved to X", "going from X" say where something
# went, and data and releases go to services and organisations too ("moving the data from
# X to Y", "the release went straight to X"), and people walk or drive over to where they
# work: a weak place cue (travel, "flying out to X", "got back from X", and "in X" stay
# strong). So is any cue ending in "at": one is back at, has lunch at or has an office at an
# organisation as much as at a place
_MOVED_TO = re.compile(
    r"\b(?:move|moved|moving|relocated|relocating|go|going|went|walk|walks|walked|walking|"
    r"stroll|strolled|cycle|cycled|cycling|biked|drive|drove|head|headed|heading|commute|"
    r"commuted)(?:\s+[\w'’-]+){0,2}\s+(?:to|from)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
# a name right after a preposition of place ("at X", "in the X", "near X") is where
# something is, rarely who: no person by the shape of the name alone ("Temple Quay")
_LOCATIVE_BEFORE = re.compile(
    r"\b(?P<prep>at|in|near|around|outside|opposite|inside|across|behind)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
# "X is a business district", "X was a small energy company": what the name is (the kind
# noun ends its phrase: "a town planner" is no town)
_IS_A = (
    r"^\s+(?:is|was)\s+(?:a|an|the)\s+(?:[\w'’-]+\s+){{0,3}}?(?:{})"
    r"(?=\s*(?:[,.;:!?)]|$)|\s+(?:in|of|on|near|by|at|to|from|up|down|off|over|across|along|"
    r"around|behind|beside|between|just|right|north|south|east|west|outside|close|with|where|"
    r"that|which|and|but|for|full|famous|known|popular|mostly|mainly|only|not)\b)"
)
_IS_A_PLACE = re.compile(_IS_A.format("|".join(sorted(PLACE_KINDS))), re.IGNORECASE)
_IS_A_ORG = re.compile(_IS_A.format("|".join(sorted(ORG_KINDS))), re.IGNORECASE)
# a name joined to another by a dash before a project noun: "the Marlow–Tidewater project"
# names a joint project, not either side of it
_JOINED_BEFORE = re.compile(r"[^\W\d_][\w'’]*\s*[–—/-]\s*$")
_AFTER_NOUN_RE = re.compile(r"^\s+[\w-]+\s+([a-z][a-z-]*)\b")  # " dataset citations"
_WEAK_PLACE = "place?"  # the vote of a weak place cue (see ``EntityTable.weak``)
_LOCATED = "at?"  # a bare preposition of place before the name: no person by its shape
_ORG_BEFORE = re.compile(
    r"\b(?:work|works|working|worked|job|joined|join|joining|interview|interviewed|employed|"
    r"intern|internship|hired|position|offer|contract|staff|team|postdoc|volunteer|volunteering)"
    r"(?:\s+[\w'’-]+){0,3}\s+(?:at|for|with|by)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
_PROJECT_BEFORE = re.compile(r"\bproject\s+(?:is\s+|called\s+|named\s+)?$", re.IGNORECASE)
_APPOSITIVE = re.compile(
    r"^,\s+(?:a|an|the|our|their|my|his|her|its)\s+((?:[\w'’-]+\s+){0,5}?)"
    r"([\w'’-]+)\b"
)
_IS_MY_RE = re.compile(r"^\s+(?:is|was)\s+(?:my|our|her|his|their)\s+(?:\w+\s+)?([\w-]+)")
_VOCATIVE_BEFORE = re.compile(
    r"^\W*(?:(?:hey|hi|hello|thanks|thank\s+you|wow|oh|congrats|congratulations|yeah|yes|aw+|"
    r"omg|haha|ok|okay|sure|great|good|nice|cool|ah|dear|bye|morning|evening|night|sorry|"
    r"so|well|welcome)\W*\s*)+$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Candidate:
    """A capitalized name in one sentence; ``initial`` when it opens the sentence."""

    surface: str
    start: int
    end: int
    initial: bool


def _clean(word: str) -> str:
    if word.endswith(("'s", "’s")):
        word = word[:-2]
    return word.rstrip(".'’-")


def candidates(sentence: str) -> list[Candidate]:
    """Runs of capitalized words (joined by "of", "for", "de"...), possessives stripped."""
    out: list[Candidate] = []
    if sentence == sentence.lower():
        return out  # no capital letter, no name
    words = []
    for m in _WORD_RE.finditer(sentence):
        w = _clean(m.group())
        words.append((m.start(), m.start() + len(w), w))
    i = 0
    first_word_start = words[0][0] if words else 0
    while i < len(words):
        start, end, word = words[i]
        if not _is_name_word(word) or word.lower() in STOP_WORDS and word.lower() not in TITLES:
            i += 1
            continue
        j = i
        last = i
        while j + 1 < len(words):
            gap = sentence[words[j][1] : words[j + 1][0]]
            nxt = words[j + 1][2]
            if gap not in (" ", " & ") and not (gap == ". " and words[j][2].lower() in TITLES):
                break
            if gap == " & " and not _is_name_word(nxt):
                break
            if _is_name_word(nxt) and nxt.lower() not in STOP_WORDS:
                j += 1
                last = j
            elif (
                nxt.lower() in CONNECTORS
                and j + 2 < len(words)
                and sentence[words[j + 1][1] : words[j + 2][0]] == " "
                and _is_name_word(words[j + 2][2])
                and words[j + 2][2].lower() not in STOP_WORDS
            ):
                j += 2
                last = j
            else:
                break
        surface = sentence[start : words[last][1]]
        if surface.split()[0].lower() in TITLES and last == i:
            i = last + 1
            continue
        out.append(Candidate(surface, start, words[last][1], start == first_word_start))
        i = last + 1
    return out


def _is_name_word(word: str) -> bool:
    """Capitalized, and not a file name, version or code ("CHANGELOG.md", "M1", "SHA-256")."""
    return (
        len(word) > 1
        and word[0].isupper()
        and "." not in word
        and not any(ch.isdigit() for ch in word)
    )


class EntityTable:
    """Names of one session with their types, built from (speaker, sentence) pairs."""

    def __init__(
        self,
        sentences: list[str],
        speakers: tuple[str, ...] = (),
        known: dict[str, str] | None = None,
    ) -> None:
        self.speakers = tuple(s for s in speakers if s)
        lower_vocab: set[str] = set()
        for s in sentences:
            prose = re.sub(r"`[^`]*`", " ", s)  # code spans: "reefsong validate" is a command
            lower_vocab.update(re.findall(r"(?<![\w.-])[a-z][a-z'’]+(?![\w.-])", prose))
        self._common = lower_vocab
        self._cands = {s: candidates(s) for s in sentences}
        self._surfaces = {c.surface for cs in self._cands.values() for c in cs if not c.initial}
        votes: dict[str, Counter[str]] = defaultdict(Counter)
        seen_inside: Counter[str] = Counter()
        initial_only: Counter[str] = Counter()
        for s in sentences:
            cands = [self._trim(c) for c in self._cands[s]]
            for c in cands:
                if c.initial and " " not in c.surface and not _acts(s[c.end :]):
                    initial_only[c.surface] += 1
                else:
                    seen_inside[c.surface] += 1
                for kind, weight in _cues(s, c, self._common):
                    votes[c.surface][kind] += weight
        for name in self.speakers:
            votes[name]["person"] += 10
            seen_inside[name] += 1
        for name, kind in (known or {}).items():
            votes[name][kind] += 3
            seen_inside[name] += 1
        names = set(seen_inside) | set(initial_only)
        # a name that only ever opens a sentence is a name only with a cue ("Sam says ...")
        names = {
            n
            for n in names
            if seen_inside[n] or sum(votes[n].values()) >= 2 and not n.lower().endswith("ing")
        }
        names = {n for n in names if self._plausible(n)}
        self.canonical = _fold_short_forms(names, self.speakers)
        self.types: dict[str, str] = {}
        self.weak: set[str] = set()  # typed a place by weak cues only ("moved to X")
        # typed a person by weak cues only: the shape of the name, one "met X" or "X said"
        self.guessed: set[str] = set()
        merged: dict[str, Counter[str]] = defaultdict(Counter)
        for n in names:
            canon = self.canonical[n]
            if canon != n and not canon.endswith(" " + n):
                # "to Archiva" says nothing of "Archiva Labs"
                votes[n].pop(_WEAK_PLACE, None)
                votes[n].pop(_LOCATED, None)
            merged[canon].update(votes[n])
        for n, v in merged.items():
            located = v.pop(_LOCATED, 0)
            if weak := v.pop(_WEAK_PLACE, 0):
                v["place"] += weak
            kind, guessed = _decide(n, v, self._common, located)
            if kind == "place" and (guessed or weak and v["place"] <= weak):
                self.weak.add(n)
            elif guessed:
                self.guessed.add(n)
            if kind == "topic" and (n.isupper() and len(n) <= 4 or len(n) < 3):
                continue  # "PDF", "UTC": acronyms are words here, not subjects of their own
            self.types[n] = kind
        for n, kind in list(self.types.items()):
            if kind == "person" and (within := _named_within(n, self.types)) is not None:
                self.types[n] = within  # "Berlin Hbf" when Berlin is a place of the session

    def _trim(self, c: Candidate) -> Candidate:
        """Drop a sentence-opening word the session uses in lower case ("Ask Lena" -> "Lena")
        and a closing acronym that names a thing of the name's ("Archiva DOI" -> "Archiva";
        ``THING_ACRONYMS``: "Team USA" stays whole)."""
        head, _, last = c.surface.rpartition(" ")
        if head and _ACRONYM_RE.fullmatch(last) and last.lower() in THING_ACRONYMS:
            head = _clean(head)  # "the Archiva DOI", "Ada's CV"
            c = Candidate(head, c.start, c.start + len(head), c.initial)
        first, _, rest = c.surface.partition(" ")
        low = first.lower()
        if rest and (
            low in OPENERS
            or low.endswith("ing")
            or c.initial
            and (low in self._common or rest in self._surfaces)
        ):
            return Candidate(rest, c.end - len(rest), c.end, False)
        return c

    def _plausible(self, name: str) -> bool:
        words = name.split()
        if len(name) < 2 or all(w.lower() in STOP_WORDS for w in words):
            return False
        if len(words) == 1 and name.lower() in self._common and name not in self.speakers:
            return name.isupper()  # "Ocean" used as a word; "PDF" is still an acronym
        return True

    def mentions(self, sentence: str) -> list[tuple[str, str, int, int]]:
        """(canonical name, type, start, end) of each non-vocative name in ``sentence``."""
        out: list[tuple[str, str, int, int]] = []
        found = self._cands.get(sentence)
        for c in map(self._trim, found if found is not None else candidates(sentence)):
            canon = self.canonical.get(c.surface)
            if canon is None or canon not in self.types or _vocative(sentence, c):
                continue
            out.append((canon, self.types[canon], c.start, c.end))
        return out


_ACTS_RE = re.compile(
    r"^\s+(?:also\s+|just\s+|still\s+|never\s+|always\s+)?(?:is|was|has|had|got|went|did|"
    r"does|will|says|said|told|thinks|wants|lives|works|loves|likes|hates|asked|agreed|sent|"
    r"called|texted|emailed|met|came|took|gave|made|plays|teaches|runs|moved|started|joined)\b"
)


def _acts(after: str) -> bool:
    """A sentence-opening word followed by a verb is someone or something doing it ("Marta
    got a bike", "Tidewater is permanent"), not an interjection ("Morning.")."""
    return bool(_ACTS_RE.match(after))


def _vocative(sentence: str, c: Candidate) -> bool:
    before, after = sentence[: c.start], sentence[c.end :]
    if _VOCATIVE_BEFORE.match(before) and re.match(r"^\s*(?:[!,.?]|$)", after):
        return True
    if not before.strip(" \"'“") and re.match(r"^\s*[!,]", after):
        return True  # "Melanie, that's a great pic."
    return bool(re.match(r"^\s*[!?.]*\s*$", after)) and before.rstrip().endswith(",")


def _fold_short_forms(names: set[str], speakers: tuple[str, ...]) -> dict[str, str]:
    """Map each name to the one longer name containing it as its first or last word(s)."""
    out = {n: n for n in names}
    for n in sorted(names, key=lambda x: (len(x.split()), x)):
        if n in speakers:
            continue
        nick = [s for s in speakers if len(n) >= 3 and " " not in n and s.startswith(n)]
        if len(nick) == 1:
            out[n] = nick[0]  # "Mel" for the speaker Melanie
            continue
        longer = sorted(
            m
            for m in names
            if m != n
            and len(m.split()) > len(n.split())
            and (m.startswith(n + " ") or m.endswith(" " + n))
        )
        if len(longer) == 1:
            out[n] = longer[0]
    return out


_ACRONYM_RE = re.compile(r"[A-Z]{2,}s?")


def _named_within(name: str, types: dict[str, str]) -> str | None:
    """The place or org type of a word of a longer name, when the session types that word
    so on its own: a person's name is not made of a place's ("Berlin Hbf", "Lisbon Airport")."""
    words = name.split()
    if len(words) < 2:
        return None
    for w in (words[0], words[-1]):
        if types.get(w) in ("place", "org"):
            return types[w]
    return None


def _noun_ending(word: str) -> str:
    """The common-noun ending of ``word`` ("instruments" -> "ments", "informatics" -> "ics"),
    after a stem of at least four letters, or ""."""
    return next((e for e in NOUN_ENDINGS if word.endswith(e) and len(word) - len(e) >= 4), "")


def _names_a_project(before: str, after: str) -> bool:
    """The project noun right after a name makes it a project's name ("the Reefsong
    dataset"), unless the name is one side of a joint one ("the Marlow–Tidewater project")
    or the noun modifies a common noun after it ("the Zenodo dataset citations")."""
    if _JOINED_BEFORE.search(before):
        return False
    then = _AFTER_NOUN_RE.match(after)
    return not (then and _noun_ending(then.group(1)))


def _decide(name: str, votes: Counter[str], common: set[str], located: int = 0) -> tuple[str, bool]:
    """The name's type, and whether it rests on the shape of the name alone: a person for
    two capitalized words no one uses in lower case, a place for a name said only after a
    preposition of place ("at Temple Quay"), which wins over that shape."""
    cued = votes["person"]  # before the shape of the name adds its vote
    kind = _decide_kind(name, votes, common, located)
    if kind == "topic" and located and len(name.split()) > 1:
        return "place", True
    return kind, kind == "person" and cued <= 1


def _decide_kind(name: str, votes: Counter[str], common: set[str], located: int) -> str:
    words = name.split()
    low = [w.lower() for w in words]
    if len(words) > 1 and low[-1] in EVENT_NOUNS:
        return "topic"  # "the Bioacoustics Symposium in Bergen": an event, not a place
    if _ACRONYM_RE.fullmatch(name):
        votes["person"] = 0  # "URL lives in ...", "the DOIs said": an acronym names a thing
    ending = _noun_ending(low[-1]) if len(words) > 1 else ""
    if ending in PLURAL_NOUN_ENDINGS:
        votes["org"] += 2  # "Texas Instruments", "United Nations"
    if low[-1] in ORG_SUFFIXES or low[0] in ORG_PREFIXES:
        votes["org"] += 4
    head = next((i for i, w in enumerate(low) if w in CONNECTORS and i > 0), 0)
    if head and low[head - 1] in ORG_SUFFIXES:
        votes["org"] += 4  # "Marlow Institute for Ocean Research", "University of Leeds"
    if len(words) > 1 and (low[-1] in PLACE_SUFFIXES or low[0] in PLACE_PREFIXES):
        votes["place"] += 4
    if (
        len(words) == 2
        and all(w[:1].isupper() and w[1:].islower() for w in words)
        and not any(w in common or w in CONNECTORS for w in low)
        and not votes["org"]
        and not votes["place"]
        and not located
    ):
        votes["person"] += 2  # "Priya Natarajan": two capitalized words no one uses lower case
    if ending:
        votes["person"] = min(votes["person"], 0)  # "Ecological Informatics": no one's name
    if not votes:
        return "topic"
    best = max(SUBJECT_TYPES, key=lambda k: (votes[k], -SUBJECT_TYPES.index(k)))
    return best if votes[best] > 0 else "topic"


def _cues(sentence: str, c: Candidate, common: set[str]) -> list[tuple[str, int]]:
    before = sentence[: c.start]
    after = sentence[c.end :]
    prev = re.findall(r"[\w'’-]+", before.lower())[-2:]
    nxt = re.findall(r"[\w'’-]+", after.lower())[:2]
    out: list[tuple[str, int]] = []
    if prev and prev[-1] in TITLES or c.surface.split()[0].lower() in TITLES:
        out.append(("person", 3))
    if prev and prev[-1] in ("the", "a", "an") and not c.initial:
        out.append(("person", -3))  # "the East Atlantic", "a Florida Keys trip": no one's name
    if prev and prev[-1].rstrip("s") in RELATIONS | {"kid"}:
        out.append(("person", 3))
    rel = _IS_MY_RE.match(after)
    if rel and rel.group(1).lower() in RELATIONS:
        out.append(("person", 4))
    if nxt and nxt[0] in PERSON_VERBS_AFTER and not (nxt[0] == "and" and c.initial is False):
        out.append(("person", 1))
    if prev and prev[-1] in PERSON_WORDS_BEFORE:
        out.append(("person", 1))
    if re.match(r"^\s+and\s+I\b", after) or re.match(
        r"^['’]s\s+(?:" + "|".join(RELATIONS) + r")\b", sentence[c.end : c.end + 20]
    ):
        out.append(("person", 2))
    m = _APPOSITIVE.match(after)
    if m:
        head = m.group(2).lower()
        if head in ROLE_NOUNS or head in RELATIONS or m.group(1).lower().startswith("head"):
            out.append(("person", 3))
        elif head in ORG_SUFFIXES or head in ("company", "hospital", "startup", "nonprofit"):
            out.append(("org", 3))
        elif head in PLACE_NOUNS:
            out.append(("place", 3))
        elif head in PROJECT_NOUNS:
            out.append(("project", 3))
    tight = re.match(r"^\s+([\w-]+)", after)
    if tight and tight.group(1).lower() in ORG_NOUNS_AFTER:
        out.append(("org", 2))
    if tight and tight.group(1) in PLACE_NOUNS_AFTER:
        out.append(("place", 2))  # "from Sal island"
    project_after = tight and tight.group(1).lower() in PROJECT_NOUNS
    if project_after and _names_a_project(before, after) or _PROJECT_BEFORE.search(before):
        out.append(("project", 3))
    if _ORG_BEFORE.search(before):
        out.append(("org", 2))
    if _IS_A_PLACE.match(after):
        out.append(("place", 3))
    elif _IS_A_ORG.match(after):
        out.append(("org", 3))
    if re.match(r"^-based\b", after):
        out.append(("place", 2))
    elif re.match(r"^['’]s\b", after):
        pass  # "at Ravi's", "over to Sam's flat": someone's place, not a place's name
    elif (verb := _PLACE_VERBS.search(before)) is not None:
        weak = _MOVED_TO.search(before) or verb.group("prep").lower() == "at"
        out.append((_WEAK_PLACE if weak else "place", 2))
    elif (prep := _LOCATIVE_BEFORE.search(before)) is not None and not _ORG_BEFORE.search(before):
        out.append((_WEAK_PLACE, 2) if prep.group("prep").lower() == "near" else (_LOCATED, 1))
    return out
