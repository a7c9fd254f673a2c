"""The deterministic floor of entailment: does a cited turn say what a claim says?

Names, numbers and dates are checked by ``dream.gates.verification.check_claim``; this
module checks the rest of the meaning, without a model, in three rules:

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
- **who does what** (DV107): the person a claim opens with speaks in the turn or is named
  in it; and when a verb follows ("Jonas hired Dana", or a light verb with a person after
  it: "got Marta into"), someone the turn has doing that verb: for each time the turn uses
  the verb, the person before it in its clause ("I" is the speaker, "you" the one spoken
  to, a name shaped like a doer that name, "he", "she" or "who" the last such name before
  it; "it" or "they" could be anyone). A claim is rejected only when every use of its verb
  in the turns has a known doer and none is the claim's subject.

Each rule errs towards letting a claim through when it cannot tell (a verb the turn does
not use, a claim that opens with no person). Boundary: claim text and cited turns in,
(code, reason) pairs out; which claims to check is ``dream.gates.verification``'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

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
_CLAUSE_BREAK = {",", ";", ":", ".", "!", "?", "(", ")", "—", "–"}
_TOKEN_RE = re.compile(r"[^\W_][\w'’-]*|[,;:.!?()—–]")
_NAME_WORD_RE = re.compile(r"[\w'’-]+")
_POSSESSIVE_S_RE = re.compile(r"['’]s$")
_POSSESSIVE_END_RE = re.compile(r"'s$|'$")  # after "’" is read as "'"
_ASIDE_RE = re.compile(r"\([^()]*\)")  # "(re: summer job)"
_CAPITALIZED_RE = re.compile(r"\b[A-Z][\w-]+")

# English function words, and the words a claim writer adds around what a turn said.
_STOP = frozenset(
    (
        "a", "about", "above", "after", "again", "against", "all", "almost", "along", "already",
        "also", "although", "always", "am", "among", "an", "and", "another", "any", "anyone",
        "anything", "are", "aren't", "around", "as", "at", "back", "be", "because", "been",
        "before", "being", "below", "between", "both", "but", "by", "can", "can't", "cannot",
        "could", "couldn't", "did", "didn't", "do", "does", "doesn't", "doing", "don't", "done",
        "down", "during", "each", "either", "else", "enough", "even", "ever", "every", "few",
        "for", "from", "further", "get", "gets", "getting", "got", "had", "hadn't", "has",
        "hasn't", "have", "haven't", "having", "he", "he'd", "he'll", "he's", "her", "here",
        "hers", "herself", "him", "himself", "his", "how", "i", "i'd", "i'll", "i'm", "i've", "if",
        "in", "into", "is", "isn't", "it", "it's", "its", "itself", "just", "least", "less", "let",
        "let's", "like", "lot", "lots", "made", "make", "many", "may", "me", "might", "more",
        "most", "much", "must", "my", "myself", "near", "need", "neither", "never", "no", "nor",
        "not", "now", "of", "off", "often", "on", "once", "one", "only", "or", "other", "others",
        "otherwise", "our", "ours", "ourselves", "out", "over", "own", "per", "perhaps", "quite",
        "rather", "really", "same", "several", "shall", "she", "she'd", "she'll", "she's",
        "should", "shouldn't", "since", "so", "some", "something", "sometimes", "soon", "still",
        "such", "than", "that", "that's", "the", "their", "theirs", "them", "themselves",
        "themself", "then", "there", "there's", "these", "they", "they'd", "they'll", "they're",
        "they've", "thing", "things", "this", "those", "though", "through", "thus", "till", "to",
        "too", "toward", "towards", "under", "until", "up", "upon", "us", "very", "via", "was",
        "wasn't", "way", "we", "we'd", "we'll", "we're", "we've", "well", "were", "weren't",
        "what", "what's", "when", "where", "whether", "which", "while", "who", "who's", "whom",
        "whose", "why", "will", "with", "within", "without", "won't", "would", "wouldn't", "yes",
        "yet", "you", "you'd", "you'll", "you're", "you've", "your", "yours", "yourself",
        "yourselves", "actually", "maybe", "probably", "pretty", "definitely", "anyway", "okay",
        "ok", "oh", "hey", "hi", "hello", "thanks", "thank", "please", "sure", "right", "going",
        "gonna", "want", "wants", "wanted",
    )
)  # fmt: skip
_FRAMING = frozenset(
    (
        "said", "says", "told", "tells", "mentioned", "mentions", "noted", "notes", "asked",
        "asks", "answered", "answers", "replied", "replies", "recommended", "recommends",
        "suggested", "suggests", "advised", "advises", "offered", "offers", "promised", "promises",
        "shared", "shares", "reported", "reports", "explained", "explains", "agreed", "agrees",
        "decided", "decides", "prefers", "preferred", "prefer", "likes", "liked", "plans",
        "planned", "planning", "plan", "intends", "intended", "hopes", "hoped", "thinks",
        "thought", "wondered", "wonders", "feels", "felt", "believes", "believed", "remembered",
        "reminded", "reminder", "remind", "user", "assistant", "person", "people", "someone",
        "outcome", "session", "according", "apparently", "currently", "recently", "later",
        "earlier", "today",
        "yesterday", "tomorrow", "week", "weeks", "month", "months", "year", "years", "day",
        "days", "weekend", "morning", "evening", "afternoon", "night", "also",
    )
)  # fmt: skip
_IRREGULAR = {
    "told": "tell", "said": "say", "went": "go", "gone": "go", "goes": "go", "bought": "buy",
    "brought": "bring", "thought": "think", "ran": "run", "made": "make", "took": "take",
    "taken": "take", "gave": "give", "given": "give", "got": "get", "gotten": "get",
    "left": "leave", "met": "meet", "saw": "see", "seen": "see", "felt": "feel",
    "kept": "keep", "wrote": "write", "written": "write", "began": "begin", "begun": "begin",
    "won": "win", "lost": "lose", "paid": "pay", "sent": "send", "spent": "spend",
    "built": "build", "taught": "teach", "caught": "catch", "found": "find", "held": "hold",
    "heard": "hear", "knew": "know", "known": "know", "came": "come", "became": "become",
    "sold": "sell", "ate": "eat", "eaten": "eat", "drove": "drive", "driven": "drive",
    "flew": "fly", "flown": "fly", "flight": "fly", "chose": "choose", "chosen": "choose",
    "fell": "fall", "fallen": "fall", "forgot": "forget", "forgotten": "forget",
    "grew": "grow", "grown": "grow", "led": "lead", "rode": "ride", "ridden": "ride",
    "sang": "sing", "sung": "sing", "sat": "sit", "slept": "sleep", "spoke": "speak",
    "spoken": "speak", "stood": "stand", "swam": "swim", "threw": "throw",
    "thrown": "throw", "understood": "understand", "woke": "wake", "wore": "wear",
    "worn": "wear", "broke": "break", "broken": "break", "drew": "draw", "drawn": "draw",
    "drank": "drink", "drunk": "drink", "fought": "fight", "hid": "hide", "hidden": "hide",
    "hurt": "hurt", "lent": "lend", "lit": "light", "meant": "mean", "rang": "ring",
    "rose": "rise", "risen": "rise", "shook": "shake", "shot": "shoot", "shut": "shut",
    "sought": "seek", "stole": "steal", "stolen": "steal", "struck": "strike",
    "swore": "swear", "tore": "tear", "torn": "tear", "wept": "weep", "wound": "wind",
    "did": "do", "done": "do", "does": "do", "had": "have", "has": "have", "was": "be",
    "were": "be", "been": "be", "is": "be", "are": "be", "am": "be", "children": "child",
    "men": "man", "women": "woman", "people": "person", "mice": "mouse", "feet": "foot",
    "teeth": "tooth", "better": "good", "best": "good", "worse": "bad", "worst": "bad",
}  # fmt: skip
_NEGATORS = frozenset(
    (
        "not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot", "can't",
        "don't", "doesn't", "didn't", "won't", "wouldn't", "isn't", "aren't", "wasn't", "weren't",
        "haven't", "hasn't", "hadn't", "shouldn't", "couldn't", "mustn't", "without", "instead",
        "anymore", "longer",
    )
)  # fmt: skip
_LIKES = frozenset(
    (
        "love", "loves", "loved", "loving", "like", "likes", "liked", "enjoy", "enjoys", "enjoyed",
        "adore", "adores", "adored", "fond", "favourite", "favorite", "prefer", "prefers",
        "preferred", "keen",
    )
)  # fmt: skip
_DISLIKES = frozenset(
    (
        "hate", "hates", "hated", "hating", "dislike", "dislikes", "disliked", "loathe", "loathes",
        "loathed", "detest", "detests", "detested", "despise", "despises", "despised",
        "can't-stand",
    )
)  # fmt: skip
_AUX = frozenset(
    (
        "is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "will", "would",
        "shall", "should", "can", "could", "may", "might", "must", "do", "does", "did", "also",
        "still", "now", "then", "just", "really", "already", "always", "never", "often", "usually",
        "finally", "recently", "once", "soon", "only", "even", "both", "actually", "has", "to",
        "had", "to", "going", "gonna",
    )
)  # fmt: skip
_BE = frozenset(
    (
        "is", "are", "was", "were", "be", "been", "being", "get", "gets", "got", "getting",
    )
)  # fmt: skip
_SPEAKER = frozenset(
    (
        "i", "i'm", "i'll", "i've", "i'd", "we", "we're", "we'll", "we've", "we'd",
    )
)  # fmt: skip
_LISTENER = frozenset(
    (
        "you", "you're", "you'll", "you've", "you'd",
    )
)  # fmt: skip
_ANYONE = frozenset(
    (
        "he", "she", "they", "it", "this", "that", "who", "which", "he's", "she's", "they're",
        "it's", "he'd", "she'd", "they'd", "there", "someone", "everyone",
    )
)  # fmt: skip


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


def _covered(stem: str, stems: frozenset[str]) -> bool:
    if stem in stems:
        return True
    # derivations share a long start: "organis(ation)" and "organis(ed)", "recommend(ation)"
    return len(stem) >= 6 and any(s.startswith(stem[:6]) and len(s) >= 6 for s in stems)


def _said_otherwise(stem: str, ev: Evidence) -> bool:
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
            low in _STOP
            or low in _FRAMING
            or low in _NEGATORS  # polarity words: DV106's
            or len(low) < 3
            or low.endswith("'s")
            and (low[:-2] in _STOP)
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
        if low in skip or (word[:1].isupper() and not _sentence_start(rest, m.start())):
            continue
        out.append(word)
    return out


def _sentence_start(text: str, start: int) -> bool:
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
        if not _covered(key(w), ev.stems) and not _said_otherwise(key(w), ev)
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
    known = {n.lower() for n in names} | {w for t in ev.turns for w in t.speaker | t.listener}
    # the people who speak are "I" and "you" in the turn: not where to find the claim
    people = {w for t in ev.turns for w in t.speaker | t.listener}
    polarity = _polarity_problem(rest, words, ev, {n.lower() for n in names} - people)
    if polarity:
        problems.append(("DV106", polarity))
    actor = _actor_problem(rest, ev, known)
    if actor:
        problems.append(("DV107", actor))
    return problems


# -- polarity -------------------------------------------------------------------------


def _tokens(text: str) -> list[str]:
    return [t.lower().replace("’", "'") for t in _TOKEN_RE.findall(text)]


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


_REFUSALS = frozenset(
    (
        "refuse", "refuses", "refused", "refusing", "decline", "declines", "declined",
        "declining", "reject", "rejects", "rejected", "rejecting",
    )
)  # fmt: skip


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
        tokens = tuple(_tokens(part))
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
    while lead > 0 and start - lead < 4 and tokens[lead - 1] not in _CLAUSE_BREAK:
        t = tokens[lead - 1]
        if t not in _STOP and t not in _NEGATORS and not t.endswith(("n't", "'s")):
            break  # another verb's words: "I won't quit, your words motivate me"
        # (a possessive stands where the turn has "my" or "our": "not Dana's cooking")
        lead -= 1
        if t in _SPEAKER or t in _LISTENER or t in _ANYONE:
            break  # the verb's subject: "not" before it is another verb's ("not sure I'll")
    return tokens[lead : end + 1]


def _clause_polarity(clause: str, content: set[str], ev: Evidence) -> str:
    if clause.rstrip().endswith("?"):
        return ""  # a question asserts nothing ("Did Tim dress up?")
    claim_tokens = _tokens(clause)
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
        if not target or target in _STOP or target in _NEGATORS or not target[:1].isalpha():
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


# -- who does what --------------------------------------------------------------------

_LEAD_RE = re.compile(
    r"^(?P<who>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*(?:\s+and\s+[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)?)"
    r"(?P<rest>(?:['’]s)?(?:\s|[,.;:!?)]).*)$",  # the name whole: "Ingrid Berg, Oskar Lind"
    re.DOTALL,
)
_NUMBER_WORDS = frozenset(
    (
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "twenty", "thirty", "forty", "fifty", "hundred", "thousand",
        "first", "second", "third", "last", "next", "both", "all", "most", "some", "many",
    )
)  # fmt: skip
_RELATIVE = frozenset(("he", "she", "who", "he's", "she's", "he'd", "she'd", "he'll", "she'll"))


def _lead(rest: str) -> tuple[set[str], str] | None:
    """The person a claim opens with (lower-cased name words) and the rest of it, or None
    when it opens with no name ("The team ...", "Moved to ...", "Three figures ...")."""
    m = _LEAD_RE.match(rest.strip())
    if not m:
        return None
    words = [w.lower() for w in _NAME_WORD_RE.findall(m["who"]) if w.lower() != "and"]
    who = {_POSSESSIVE_S_RE.sub("", w) for w in words}
    if not who or any(
        w in _STOP or w in _FRAMING or w in _AUX or w in _NUMBER_WORDS
        or len(w) > 4 and w.endswith(("ed", "ing"))  # "Moved to Porto": no one named
        for w in who
    ):  # fmt: skip
        return None
    return who, m["rest"]


def _verb(rest: str) -> str | None:
    """The stem of the verb after a claim's subject, None in the passive ("Dana was hired
    by ...": the doer is after) or when a possessive or a label follows ("Dana's ...")."""
    passive = False
    tokens = _tokens(rest)[:7]
    for i, t in enumerate(tokens):
        if t in _CLAUSE_BREAK or t.startswith("'"):
            return None
        # a light verb with a person after it does something to them: "got Marta into"
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        if t in _LIGHT and not passive and after[:1].isalpha() and after not in _STOP:
            return key(t)
        if t in _AUX or t in ("to", "others"):
            passive = passive or t in _BE
            continue
        if passive or t in _STOP:
            return None
        return key(t)
    return None


_LIGHT = frozenset(("got", "gets", "get", "made", "makes", "took", "takes", "let", "lets"))


def _antecedent(
    text: str, at: int, speaker: frozenset[str], known: frozenset[str] | set[str]
) -> frozenset[str] | None:
    """The person "he", "she" or "who" at character ``at`` most likely names: the last
    name before it in the turn, shaped like a doer, that is not the speaker's ("Jonas and
    I had the beer. He ran ..."); None when there is none."""
    for m in reversed(list(_NAME_BEFORE_RE.finditer(text[:at]))):
        word = m.group(2).split()[-1].lower()
        if word not in speaker and _doer_shaped(text, m, known):
            return frozenset({word})
    return None


# a name (the words of one, "Blue Horizon Fund") and the word before it
_NAME_BEFORE_RE = re.compile(r"(\S+\s+)?\b((?:[A-Z][\w-]*\s+)*[A-Z][\w-]+)")
_INTERJECTIONS = frozenset(
    ("yeah", "aww", "wow", "haha", "lol", "omg", "congrats", "cool", "nice", "great", "sorry")
)


def _doer_shaped(text: str, m: re.Match[str], known: frozenset[str] | set[str]) -> bool:
    """The name ``m`` (group 2, the word before it group 1) may do a verb: no function
    word, month or weekday, not after a preposition or an article ("in Berlin", "the
    Finals"), and a known person's name where a sentence starts ("Yeah, ...")."""
    word, prior = m.group(2).split()[-1].lower(), (m.group(1) or "").strip().lower()
    opens = _sentence_start(text, m.start(2))
    return (
        word not in _STOP
        and word not in _AUX
        and word not in _NUMBER_WORDS
        and word not in _INTERJECTIONS
        and word.capitalize() not in _CALENDAR
        and prior not in _NOT_BEFORE_A_DOER
        and not prior.strip("'’,.").isdigit()
        # where a sentence starts, a capital is a name when it is one known, or when it
        # opens a pair ("Jonas and I", not "Yeah, ..." or "Remember that ...")
        and (word in known or not opens or text[m.end(2) :].startswith((" and ", " & ")))
    )


_CALENDAR = frozenset(
    (
        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
        "January", "February", "March", "April", "May", "June", "July", "August",
        "September", "October", "November", "December",
    )
)  # fmt: skip
_NOT_BEFORE_A_DOER = frozenset(
    (
        "in", "at", "on", "from", "to", "by", "of", "for", "with", "into", "the", "a", "an",
        "this", "that", "my", "your", "his", "her", "their", "our", "its", "about", "near",
    )
)  # fmt: skip


def _doers(
    text: str, at: int, turn: TurnView, known: frozenset[str] | set[str] = frozenset()
) -> frozenset[str] | None:
    """Who does the verb at character ``at`` of ``text``: name words; None when it could
    be anyone."""
    before = text[:at].rstrip()
    m = re.search(
        r"(\S+\s+)?((?:[A-Z][\w-]*\s+)*[A-Z][\w-]+)(?:\s+(?:also|just|really|then|finally))?$",
        before,
    )
    if m and _doer_shaped(text, m, known):  # a name right before the verb: "Henrik asked"
        return frozenset({m.group(2).split()[-1].lower()})
    tokens = _tokens(before)
    spans = [mm.start() for mm in _TOKEN_RE.finditer(before)]
    i = len(tokens) - 1
    saw_be = False
    while i >= 0 and len(tokens) - i <= 5 and tokens[i] not in _CLAUSE_BREAK:
        t = tokens[i]
        if t in _BE:
            saw_be = True
        elif t in _SPEAKER:
            return None if saw_be else turn.speaker
        elif t in _LISTENER:
            return None if saw_be or not turn.listener else turn.listener
        elif t in _RELATIVE:
            return None if saw_be else _antecedent(text, spans[i], turn.speaker, known)
        elif t in _ANYONE:
            return None
        elif t in ("and", "or", "but", "then", "so", "because", "that", "if", "when"):
            return None  # another clause's doer, or more than one
        i -= 1
    return None


def _actor_problem(rest: str, ev: Evidence, names: set[str]) -> str:
    found = _lead(rest)
    if found is None:
        return ""
    who, after = found
    people = names | {w for t in ev.turns for w in t.speaker | t.listener}
    # "Works as a nurse." names no one: its first word is what the turn says otherwise
    if not who & people and not any(
        _covered(key(w), ev.stems) or _said_otherwise(key(w), ev) for w in who
    ):
        return (
            f"who does what: {' '.join(sorted(who))} neither speaks in the cited turn nor is "
            "named in it"
        )
    capitals = set().union(*(_capitals(t.text) for t in ev.turns))
    if not who <= people | capitals:
        return ""  # "Goes bouldering with Marta": no person does it
    if after.startswith(("'", "’")):
        return ""  # "Lena's collection ...": the claim's subject is the thing, not Lena
    verb = _verb(after)
    if verb is None:
        return ""
    doers: list[frozenset[str]] = []
    for turn in ev.turns:
        for at in _keyed_at(turn.text).get(verb, ()):
            doer = _doers(turn.text, at, turn, people)
            if doer is None:
                return ""  # a use of the verb whose doer could be the claim's subject
            doers.append(doer)
    if not doers or any(who & d for d in doers):
        return ""
    shown = sorted({w for d in doers for w in d})
    return (
        f"who does what: the cited turn has {', '.join(shown)} do {verb!r}, "
        f"not {' '.join(sorted(who))}"
    )


# what the rules read of a turn, read once for all the claims citing it
@lru_cache(maxsize=512)
def _capitals(text: str) -> frozenset[str]:
    """The capitalised words of a turn that may be names (not "The", not "Three")."""
    words = (m.group(0).lower() for m in _CAPITALIZED_RE.finditer(text))
    return frozenset(w for w in words if w not in _STOP and w not in _NUMBER_WORDS)


@lru_cache(maxsize=512)
def _keyed_at(text: str) -> dict[str, tuple[int, ...]]:
    """Each ``key`` of a turn's tokens -> where the tokens with it start."""
    out: dict[str, list[int]] = {}
    for m in _TOKEN_RE.finditer(text):
        out.setdefault(key(m.group(0)), []).append(m.start())
    return {k: tuple(v) for k, v in out.items()}


@lru_cache(maxsize=512)
def _turn_tokens(text: str) -> tuple[str, ...]:
    return tuple(_tokens(text))


def _word_in(word: str, haystack: str) -> bool:
    return re.search(r"(?<![\w])" + re.escape(word) + r"(?![\w])", haystack) is not None
