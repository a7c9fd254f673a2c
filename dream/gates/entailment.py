"""The deterministic floor of entailment: does a cited turn say what a claim says?

Names, numbers and dates are checked by ``dream.gates.support.check_claim``; this
module checks the rest of the meaning, without a model, in two rules:

- **coverage** (DV105): the claim's content words (not stop words, not the words a
  writer of claims adds to report a turn: "recommended", "prefers", "others") occur in
  the cited turns, compared by stem ("moved" in a claim, "moving" in the turn) and by
  the irregular forms of common verbs ("told" and "tell"). A claim passes when at least
  ``COVERED`` of its content words are in the turns and at most ``MAX_NEW`` of them are
  not: a paraphrase may swap a word or two, an unrelated claim has little of its turn in
  it;
- **polarity** (DV106), clause by clause: where the claim's words sit in the turn (the
  shortest stretch holding the most of them, and the few words before it up to the verb's
  subject, where "don't" and "never" go), the turn is negated exactly when the claim is
  ("not", "n't", "never", "no longer", "rather than", a refusal: "turned down", "declined");
  a word the claim negates is said negated somewhere in the turn; and the turn does not
  like what the claim says is disliked, or the other way round ("loves" against "hates",
  read just before the thing liked);
Who does what (DV107) is ``dream.gates.doers``, which reads turns with this module's words
and stems; the word lists are ``dream.language.lexicon``'s.

Each rule errs towards letting a claim through when it cannot tell (a verb the turn does
not use, a claim that opens with no person). Boundary: claim text and cited turns in,
(code, reason) pairs out; which claims to check is ``dream.gates.verification``'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from dream.language.lexicon import ANYONE_PRONOUNS as ANYONE
from dream.language.lexicon import DISLIKING_WORDS as _DISLIKES
from dream.language.lexicon import FUNCTION_WORDS as STOP
from dream.language.lexicon import IRREGULAR_FORMS as _IRREGULAR
from dream.language.lexicon import LIKING_WORDS as _LIKES
from dream.language.lexicon import LISTENER_PRONOUNS as LISTENER
from dream.language.lexicon import NEGATORS as _NEGATORS
from dream.language.lexicon import REFUSALS as _REFUSALS
from dream.language.lexicon import REPORTING_WORDS as FRAMING
from dream.language.lexicon import SPEAKER_PRONOUNS as SPEAKER

__all__ = [
    "Evidence",
    "TurnView",
    "evidence",
    "entailment_problems",
    "uncovered",
    "content_words",
    "key",
    "COVERED",
    "MAX_NEW",
]

COVERED = 0.6  # share of a claim's content words its turns must hold
MAX_NEW = 3  # content words a claim may add to its turns (a paraphrase's own words)

_WORD_RE = re.compile(r"[^\W\d_][\w'’-]*")
CLAUSE_BREAK = {",", ";", ":", ".", "!", "?", "(", ")", "—", "–"}
TOKEN_RE = re.compile(r"[^\W_][\w'’-]*|[,;:.!?()—–]")
_POSSESSIVE_S_RE = re.compile(r"['’]s$")
_POSSESSIVE_END_RE = re.compile(r"'s$|'$")  # after "’" is read as "'"
_ASIDE_RE = re.compile(r"\([^()]*\)")  # "(re: summer job)"

# Words a claim may use for what a turn says in other words: being employed ("works at
# Tidewater" for "I'm a staff scientist at Tidewater") and living somewhere.
_SAID_OTHERWISE = {
    "work": re.compile(
        r"\b(?:jobs?|employ\w*|hired|joined|staff|colleagues?|boss|manager|office|postdoc|"
        r"intern\w*|role|position|career|work\w*)\b|"
        r"\b(?:i['’]?m|am|is|are|was|were)\s+(?:a|an|the)\s+[\w-]+(?:\s+[\w-]+)?\s+(?:at|for|with|in)\b",
        re.IGNORECASE,
    ),
    "liv": re.compile(
        r"\b(?:liv\w*|home|flat|apartment|house|mov\w*|based|resid\w*|neighbou?rhood)\b",
        re.IGNORECASE,
    ),
}


@dataclass(frozen=True)
class TurnView:
    """What the rules read of one cited turn."""

    text: str  # as written
    speaker: frozenset[str]  # lower-cased words naming whoever spoke it
    listener: frozenset[str]  # lower-cased words naming whom "you" may name


@dataclass(frozen=True)
class Evidence:
    """The cited turns of a claim, read once for every claim citing them."""

    turns: tuple[TurnView, ...]
    stems: frozenset[str]  # ``key`` of every word of the turns


# a word is keyed again for each claim citing a turn that holds it (5 M times in a full
# check of the 2,000-session bench store, a few thousand distinct words): the most
# recently used kept
@lru_cache(maxsize=4096)
def key(word: str) -> str:
    """One form for the inflections of a word: "moved", "moving", "moves" -> "mov";
    "meetings" -> "meet"; "told" -> "tell"."""
    w = word.lower().replace("’", "'")
    w = _POSSESSIVE_END_RE.sub("", w)
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "xes", "zes", "ches", "shes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        w = w[:-1]
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    for suffix in ("ingly", "edly", "ing", "ied", "ed", "ly"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)] + ("y" if suffix == "ied" else "")
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # "planned" -> "plann" -> "plan"
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]  # "move" -> "mov", as "moving"
    return w


def covered(stem: str, stems: frozenset[str]) -> bool:
    if stem in stems:
        return True
    # derivations share a long start: "organis(ation)" and "organis(ed)", "recommend(ation)"
    return len(stem) >= 6 and any(s.startswith(stem[:6]) and len(s) >= 6 for s in stems)


def said_otherwise(stem: str, ev: Evidence) -> bool:
    cue = _SAID_OTHERWISE.get(stem)
    return cue is not None and any(cue.search(t.text) for t in ev.turns)


@lru_cache(maxsize=4096)
def _turn_stems(text: str) -> frozenset[str]:
    return frozenset(key(w) for w in _WORD_RE.findall(text))


def evidence(turns: Iterable[TurnView]) -> Evidence:
    views = tuple(turns)
    stems: frozenset[str] = frozenset().union(*(_turn_stems(t.text) for t in views))
    return Evidence(views, stems)


def _content(words: list[str]) -> list[str]:
    out = []
    for w in words:
        low = w.lower().replace("’", "'")
        if (
            low in STOP
            or low in FRAMING
            or low in _NEGATORS  # polarity words: DV106's
            or len(low) < 3
            or low.endswith("'s")
            and (low[:-2] in STOP)
        ):
            continue
        out.append(low)
    return out


def _claim_words(rest: str, names: Iterable[str]) -> list[str]:
    """The claim's words that are no name (names are checked on their own)."""
    skip = {n.lower() for n in names}
    out = []
    for m in _WORD_RE.finditer(rest):
        word = m.group(0).rstrip("'’-")
        low = _POSSESSIVE_S_RE.sub("", word.lower())
        if low in skip or (word[:1].isupper() and not sentence_start(rest, m.start())):
            continue
        out.append(word)
    return out


def sentence_start(text: str, start: int) -> bool:
    before = text[:start].rstrip()
    return not before or before[-1] in ".!?:;("


def content_words(text: str) -> list[str]:
    """The content words of ``text``, names included (lower-cased)."""
    return _content(_WORD_RE.findall(text))


def uncovered(rest: str, ev: Evidence, names: Iterable[str] = ()) -> list[str]:
    """The content words of the claim text ``rest`` that the turns ``ev`` do not hold."""
    words = _content(_claim_words(rest, names))
    return [
        w
        for w in dict.fromkeys(words)
        if not covered(key(w), ev.stems) and not said_otherwise(key(w), ev)
    ]


def entailment_problems(
    rest: str, ev: Evidence, names: Iterable[str] = ()
) -> list[tuple[str, str]]:
    """(code, reason) for each rule the cited turns ``ev`` do not satisfy for the claim
    text ``rest`` (its dates taken out); ``names``: the claim's names, checked elsewhere."""
    if not ev.turns:
        return []
    words = _content(_claim_words(rest, names))
    problems: list[tuple[str, str]] = []
    missing = uncovered(rest, ev, names)
    distinct = len(set(words))
    if missing and (len(missing) > MAX_NEW or (distinct - len(missing)) < COVERED * distinct):
        shown = ", ".join(repr(w) for w in missing[:5])
        problems.append(
            (
                "DV105",
                f"{len(missing)} of {distinct} content words are not in the cited turn: {shown}",
            )
        )
        return problems  # what the turn does not say, it does not say negated either
    # the people who speak are "I" and "you" in the turn: not where to find the claim
    people = {w for t in ev.turns for w in t.speaker | t.listener}
    polarity = _polarity_problem(rest, words, ev, {n.lower() for n in names} - people)
    if polarity:
        problems.append(("DV106", polarity))
    return problems


# -- polarity -------------------------------------------------------------------------


def tokens_of(text: str) -> list[str]:
    return [t.lower().replace("’", "'") for t in TOKEN_RE.findall(text)]


def _negated(tokens: Sequence[str]) -> bool:
    for i, t in enumerate(tokens):
        if t in _NEGATORS:
            if t == "longer" and (i == 0 or tokens[i - 1] != "no"):
                continue
            if t == "instead" and (i + 1 >= len(tokens) or tokens[i + 1] != "of"):
                continue
            if t == "no" and i + 1 < len(tokens) and tokens[i + 1] in ("longer", "doubt"):
                continue
            return True
        if t.endswith("n't") or t == "rather" and tuple(tokens[i + 1 : i + 2]) == ("than",):
            return True
        # a refusal negates what it refuses: "turned down hosting", "declined the offer"
        if t in _REFUSALS or key(t) == "turn" and tuple(tokens[i + 1 : i + 2]) == ("down",):
            return True
    return False


def _attitude(tokens: Sequence[str]) -> str:
    if any(t in _DISLIKES for t in tokens) or "can't stand" in " ".join(tokens):
        return "dislike"
    if any(t in _LIKES for t in tokens):
        return "like"
    return ""


def _window(keys: Sequence[str], wanted: set[str]) -> tuple[int, int, int] | None:
    """(hits, start, end) of the shortest stretch of a sentence (the ``key`` of each of its
    tokens) holding the most of ``wanted`` (stems), or None when it holds none."""
    hits = [(i, k) for i, k in enumerate(keys) if k in wanted]
    if not hits:
        return None
    best: tuple[int, int, int] | None = None
    for a in range(len(hits)):
        seen: set[str] = set()
        for b in range(a, len(hits)):
            seen.add(hits[b][1])
            cand = (len(seen), hits[a][0], hits[b][0])
            if best is None or (cand[0], best[2] - best[1]) > (best[0], cand[2] - cand[1]):
                best = cand
    return best


# A claim is compared clause by clause; a turn's clauses keep their commas, so that "as
# PDF, not PNG" stays one stretch to find "PNG" in.
_CLAUSE_SPLIT_RE = re.compile(r"(?<=[.!?;:,])\s+|\s+(?:but|while|whereas)\s+|\s[-–—]\s|\n+")
_TURN_SPLIT_RE = re.compile(r"(?<=[.!?;:])\s+|\s+(?:but|while|whereas)\s+|\s[-–—]\s|\n+")


# a turn is read this way once for all the claims citing it, not once per claim: the
# claims citing a turn (its page's, its note's, its summary's) mostly come close together
@lru_cache(maxsize=256)
def _turn_parts(text: str) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """The turn's stretches (``_TURN_SPLIT_RE``), each as its tokens and their keys."""
    parts = []
    for part in _TURN_SPLIT_RE.split(text):
        tokens = tuple(tokens_of(part))
        parts.append((tokens, tuple(key(t) for t in tokens)))
    return tuple(parts)


def _polarity_problem(rest: str, words: list[str], ev: Evidence, names: set[str]) -> str:
    """The first clause of the claim whose polarity differs from where the turn says it."""
    content = {w.lower() for w in words} | names
    # an aside is no assertion: "(re: summer job)", '("by Friday")'
    rest = _ASIDE_RE.sub(" ", rest)
    for clause in _CLAUSE_SPLIT_RE.split(rest):
        found = _clause_polarity(clause, content, ev)
        if found:
            return found
    return ""


def _span(tokens: Sequence[str], start: int, end: int) -> Sequence[str]:
    """``tokens[start:end+1]`` and the few words before it in its clause, where "don't"
    and "never" go ("I don't [really] want ...")."""
    lead = start
    while lead > 0 and start - lead < 4 and tokens[lead - 1] not in CLAUSE_BREAK:
        t = tokens[lead - 1]
        if t not in STOP and t not in _NEGATORS and not t.endswith(("n't", "'s")):
            break  # another verb's words: "I won't quit, your words motivate me"
        # (a possessive stands where the turn has "my" or "our": "not Dana's cooking")
        lead -= 1
        if t in SPEAKER or t in LISTENER or t in ANYONE:
            break  # the verb's subject: "not" before it is another verb's ("not sure I'll")
    return tokens[lead : end + 1]


def _clause_polarity(clause: str, content: set[str], ev: Evidence) -> str:
    if clause.rstrip().endswith("?"):
        return ""  # a question asserts nothing ("Did Tim dress up?")
    claim_tokens = tokens_of(clause)
    liking = _liking_problem(claim_tokens, content, ev) or _negated_problem(claim_tokens, ev)
    if liking:
        return liking
    wanted = {
        key(t)
        for t in claim_tokens
        if (t in content or t.isdigit()) and t not in _LIKES and t not in _DISLIKES
    }
    # a liking needs only what is liked to be found ("hates coriander"), the rest two words
    least = 1 if _attitude(claim_tokens) else 2
    if len(wanted) < least:
        return ""  # too little of the turn to find where it says this
    mine = _window([key(t) for t in claim_tokens], wanted)
    if mine is None:
        return ""
    # where the turn says it: the most of the claim's words in the shortest stretch, and
    # not much longer than the claim says it
    longest = max(12, 3 * (mine[2] - mine[1] + 1))
    best: tuple[int, int, Sequence[str], Sequence[str]] | None = None
    for turn in ev.turns:
        for tokens, keys in _turn_parts(turn.text):
            found = _window(keys, wanted)
            if found is None or found[2] - found[1] + 1 > longest:
                continue
            size = found[2] - found[1]
            if best is None or (found[0], -size) > (best[0], -best[1]):
                near = tokens[max(0, found[1] - 3) : found[2] + 1]  # "and loves coriander"
                best = (found[0], size, _span(tokens, found[1], found[2]), near)
    if best is None or best[0] < max(least, (len(wanted) + 1) // 2):
        return ""  # the claim's words are spread over the turn: no one place to compare
    span, claim_span = best[2], _span(claim_tokens, mine[1], mine[2])
    claim_neg, turn_neg = _negated(claim_span), _negated(span)
    quoted = " ".join(span)
    if claim_neg != turn_neg:
        side = "negates" if claim_neg else "drops the negation of"
        return f"polarity: the claim {side} what the cited turn says ({quoted!r})"
    return ""


def _negated_problem(claim_tokens: list[str], ev: Evidence) -> str:
    """The claim negates a word ("turned down hosting", "no longer lives") that the turn
    says, and says nowhere negated."""
    for i, t in enumerate(claim_tokens[:-1]):
        if not _negated([t]) and not (key(t) == "turn" and claim_tokens[i + 1] == "down"):
            continue
        if t == "no" and claim_tokens[i + 1] == "doubt":
            continue  # "no doubt" affirms
        target = claim_tokens[i + 1]
        if target in ("longer", "than", "of", "down"):  # "no longer lives", "turned down X"
            target = claim_tokens[i + 2] if i + 2 < len(claim_tokens) else ""
        if not target or target in STOP or target in _NEGATORS or not target[:1].isalpha():
            return ""  # "not sure", "doesn't want": what is negated is further on
        said = []
        for turn in ev.turns:
            tokens = _turn_tokens(turn.text)
            said += [
                _negated(_span(tokens, j, j)) for j, x in enumerate(tokens) if key(x) == key(target)
            ]
        if said and not any(said):
            return f"polarity: the claim negates {target!r}, which the cited turn says unnegated"
        return ""
    return ""


def _liking(tokens: Sequence[str], i: int) -> str:
    """ "like" or "dislike" when ``tokens[i]`` says one ("loves", "can't stand"); "like"
    alone is not read ("tastes like soap", "would like something")."""
    t = tokens[i]
    if t in _DISLIKES or t == "stand" and i > 0 and tokens[i - 1] in ("can't", "cannot"):
        return "dislike"
    return "like" if t in _LIKES and t != "like" else ""


def _liking_problem(claim_tokens: list[str], content: set[str], ev: Evidence) -> str:
    """The claim likes what the turn dislikes, or the other way round: the turn's words
    just before the thing ("hates coriander") against the claim's ("loves coriander")."""
    at = next((i for i, t in enumerate(claim_tokens) if _liking(claim_tokens, i)), -1)
    if at < 0:
        return ""
    mine = _liking(claim_tokens, at)
    thing = next((t for t in claim_tokens[at + 1 :] if t in content), "")
    if not thing:
        return ""
    found: set[str] = set()
    for turn in ev.turns:
        tokens = _turn_tokens(turn.text)
        for i, t in enumerate(tokens):
            if key(t) == key(thing):
                near = (_liking(tokens, j) for j in range(max(0, i - 3), i))
                found.add(next((x for x in near if x), ""))
    found.discard("")
    if found and mine not in found:
        other = found.pop()
        return f"polarity: the claim says {mine}s {thing!r} where the cited turn says {other}s"
    return ""


@lru_cache(maxsize=512)
def _turn_tokens(text: str) -> tuple[str, ...]:
    return tuple(tokens_of(text))
