"""Distil what a person says into claims worth keeping.

Job: three small steps between a sentence said in a session and the claim made of it.
- ``glue``: tell conversation glue (thanks, congratulations, compliments to the other
  person, "Let's keep going", "That's so cool") from something worth remembering; a claim
  must name something beyond how the talk feels.
- ``trim``: drop what only costs tokens (the other person's name as a vocative, "Hey
  Maria,", "Since we last chatted,", filler adverbs, emoji) and keep every word that says
  what happened.
- ``asked``/``question_claim``: a short answer ("Three times a week.") means nothing
  without the question it answers, so it becomes a claim together with that question,
  reworded to name the person asked once ("How often does John work out with their
  family? John: three times a week."). A statement with a question tag ("pretty cool,
  huh?") asks nothing, and a remark on what was shown ("That photo's amazing.") answers
  nothing.

Boundary: text in, text out; no store access, no model, English only (like
``dream.language.lexicon``). The gate checks every claim against its cited turns, so nothing here
may add a name, number or date the turns do not hold.
"""

from __future__ import annotations

import re

from dream.language.lexicon import CHAT_WORDS, GENERIC_WORDS, STOP_WORDS

__all__ = [
    "glue",
    "trim",
    "asked",
    "needs_question",
    "question_claim",
    "substantive",
    "topic_of",
    "vague",
]

_GLUE_OPENER_RE = re.compile(
    r"^(?:thanks(?!\s+to\b)|thank\s+you|thx|ty\b|congrats|congratulations|welcome|"
    r"(?:so\s+|really\s+)?sorry\b|glad\s+(?:to\s+hear|you|it)|crossing\s+\w+\s+fingers|"
    r"good\s+luck|best\s+of\s+luck|take\s+care|see\s+you|see\s+ya|catch\s+you|"
    r"talk\s+(?:to\s+you\s+)?soon|bye|goodbye|cheers|no\s+problem|no\s+worries|of\s+course|"
    r"sure\s+thing|you\s+bet|(?:great|good|awesome|amazing|wonderful|fantastic)\s+news\b|(?:that|it|this)\s+(?:sounds|looks|seems)|sounds|looks\s+like|"
    r"what\s+an?\b|how\s+(?:cool|nice|great|awesome|fun|exciting|lovely|sweet|amazing|"
    r"wonderful|neat|sad|awful|scary)|wow|whoa|aw+\b|omg|haha\w*|lol|yay|woo+\w*|hey|hi\b|"
    r"hello|good\s+(?:morning|night|evening|afternoon)|me\s+too|same\s+here|you\s+too|"
    r"(?:i\s+)?(?:totally\s+|completely\s+)?agree|exactly|absolutely|definitely|"
    r"that['’]?s\s+(?:so\s+|really\s+|such\s+|a\s+|an\s+|very\s+|super\s+|pretty\s+|"
    r"totally\s+|absolutely\s+)*(?:great|awesome|amazing|cool|wonderful|fantastic|incredible|"
    r"good|nice|tough|hard|sad|terrible|awful|lovely|sweet|fun|exciting|inspiring|"
    r"impressive|brave|true|right|understandable|okay|ok|fair|smart|wise|huge|big|"
    r"beautiful|cute|adorable|hilarious|funny|crazy|wild|interesting|neat|rough|scary|"
    r"heartwarming|touching|special|powerful|awesome|excellent|perfect|exciting|so)\b)",
    re.IGNORECASE,
)
_LISTENER_SUBJECT_RE = re.compile(
    r"^(?:and\s+|but\s+|so\s+)?(?:you|you['’](?:re|ve|ll|d)|your|yours|yourself)\b", re.IGNORECASE
)
# the speaker reacting to the other person ("I'm so glad you met them", "I hope your
# party goes well", "I appreciate your kind words"): about the talk, not a fact
_REACTION_RE = re.compile(
    r"^(?:I|I['’]m|I\s+am)\s+(?:(?:so|really|very|just|truly|super|totally|also|too)\s+)*"
    r"(?:glad|happy|proud|sorry|thrilled|excited|stoked|hope|hoping|wish|appreciate|"
    r"bet|know|believe|love\s+(?:that|how|it\s+when)|can\s+imagine|can['’]t\s+imagine|"
    r"can['’]t\s+wait|admire|respect|sure|thankful|grateful|rooting|crossing)\b"
    r"(?=[^.!?]*\b(?:you|your|you['’](?:re|ve|ll|d))\b)",
    re.IGNORECASE,
)
_LETS_RE = re.compile(r"^let['’]?s\b", re.IGNORECASE)
_IMPERSONAL_RE = re.compile(
    r"^(?:it|that|this|these|those|there|they|such)(?:['’]s|['’]re|\s)", re.IGNORECASE
)
# the speaker says something about themself after the opener ("Wow, I just got back")
_SPEAKER_CLAUSE_RE = re.compile(
    r"(?:^|[,;:!.-]\s*|\b(?:and|but|so|because)\s+)(?:I|I['’](?:m|ve|d|ll)|my|we|we['’](?:re|ve|ll|d)|"
    r"our)\b",
    re.IGNORECASE,
)
_WORD_RE = re.compile(r"[A-Za-z][\w'’-]*")


def substantive(text: str, generic: frozenset[str] = GENERIC_WORDS) -> list[str]:
    """The words of ``text`` that name something (not chat, not how the talk feels)."""
    out = []
    for w in _WORD_RE.findall(text):
        low = w.lower().rstrip("'’")
        if len(low) > 2 and low not in CHAT_WORDS and low not in STOP_WORDS and low not in generic:
            out.append(w)
    return out


def glue(said: str, listener: str = "", anchored: bool = False) -> bool:
    """``said`` (a tidied sentence) is conversation glue rather than something to remember.

    ``listener``: the other person of a two-person talk ("" with an assistant, where "you"
    opens instructions). ``anchored``: the sentence carries a date, a number or a name
    besides the listener's, which keeps an exhortation ("Let's meet on 5 May") a plan.
    """
    text = said.strip()
    content = substantive(_without(text, listener))
    if not content:
        return True
    if _GLUE_OPENER_RE.match(text) and not _SPEAKER_CLAUSE_RE.search(text):
        return True
    if listener and (_LISTENER_SUBJECT_RE.match(text) or _REACTION_RE.match(text)):
        return True
    if _LETS_RE.match(text) and not anchored:
        return True
    # "It's one of my favorites.", "They're a real support.": says little without context
    return bool(
        _IMPERSONAL_RE.match(text)
        and not anchored
        and len(content) < 2
        and not _SPEAKER_CLAUSE_RE.search(text)
    )


def _without(text: str, name: str) -> str:
    if not name:
        return text
    return re.sub(rf"\b{re.escape(name)}\b", " ", text)


# --- trimming ------------------------------------------------------------------------------

_FILLER_RE = re.compile(
    r"(?<![\w'’-])(?:really|just|actually|honestly|totally|kinda|literally|basically|"
    r"definitely|truly|super(?=\s+[a-z])|(?<!far,\s)so(?=\s+(?:much|many|excited|happy|proud|glad|"
    r"grateful|thankful|good|great|cool|nice|fun|hard|tough|busy|lucky|amazing|awesome|"
    r"special|important|rewarding|inspiring|beautiful|cute|worth)\b))\s+",
    re.IGNORECASE,
)
_CHATTED_RE = re.compile(
    r"(?:,\s*)?\b(?:(?:ever\s+)?since\s+(?:we|our)\s+(?:last\s+)?(?:chatted|talked|spoke|"
    r"chat|talk|caught\s+up)(?:\s+last(?:\s+time)?)?|since\s+(?:our|the)\s+last\s+(?:chat|"
    r"talk|conversation))\b(?:\s*[,-–—]\s*)?",
    re.IGNORECASE,
)
_EMOJI_RE = re.compile(
    "[\U0001f000-\U0001faff\U00002600-\U000027bf\U0000fe0f\U0001f900-\U0001f9ff"
    "\u200d\u2b50\u2b55\u2764\u263a]+"
)
_INTERJECTION_RE = re.compile(
    r"^(?:(?:hey|hi|hello|yeah|yes|yep|wow|woah|whoa|oh|aw+|haha\w*|lol|omg|well|so(?!\s+far\b)|ok|okay|um+|"
    r"hmm+|ah+|totally|absolutely|definitely|sure|right|true|indeed|honestly"
    r"|yay|woo+\w*|cool|great|awesome|nice|sweet|congrats|thanks|yup)\b"
    r"(?:\s+[A-Z][\w'’-]*)?\s*(?:[,!.:;-]+\s*|$))+",
    re.IGNORECASE,
)


# "You won't believe it - I got mentored ...": an opener that only asks for attention
_ATTENTION_RE = re.compile(
    r"^(?:you\s+(?:won['’]?t|will\s+not|wouldn['’]?t)\s+believe\s+(?:it|this|what\s+happened)|"
    r"guess\s+what|believe\s+it\s+or\s+not|you\s+know\s+what)\s*(?:[-–—:,!?.]+\s*|$)",
    re.IGNORECASE,
)


def trim(said: str, listener: str = "") -> str:
    """``said`` without vocatives, openers, filler adverbs and emoji; its words otherwise."""
    s = _INTERJECTION_RE.sub("", _EMOJI_RE.sub("", said))
    if listener:
        # the name or a short form of it ("Mel" for Melanie)
        first = listener.split()[0]
        shorts = [re.escape(first[:k]) for k in range(len(first), 2, -1)]
        name = "(?:" + "|".join([re.escape(listener), *shorts]) + r")\b"
        s = re.sub(
            rf"^(?:(?:hey|hi|hello|oh|wow|yeah|yes|thanks|so)\s+)?{name}\s*(?:[,!:.]\s*|$)", "", s
        )
        s = re.sub(rf"\s*,\s*{name}\s*(?=[.!?,;:]|$)", "", s)
        s = _INTERJECTION_RE.sub("", s)
    s = _ATTENTION_RE.sub("", s)
    s = _CHATTED_RE.sub(" ", s)
    s = _FILLER_RE.sub("", s)
    s = re.sub(r"\s+([,.;:!?])", r"\1", s)
    s = re.sub(r"^[\s,;:–—-]+", "", s)
    s = re.sub(r"\s{2,}", " ", s).strip()
    s = re.sub(r"([!?.])\1+$", r"\1", s)
    if s and s[0].islower():
        s = s[0].upper() + s[1:]
    return s if re.search(r"\w", s) else ""


# --- questions and the answers to them -----------------------------------------------------

_PHATIC_RE = re.compile(
    r"^(?:(?:and\s+)?(?:how|what)\s+about\s+you|and\s+you|how\s+are\s+(?:you|things)|"
    r"how['’]?s\s+(?:it\s+going|everything|life|things|your\s+day|your\s+week)|"
    r"how\s+(?:have|are)\s+you\s+been|how\s+you\s+doing|what['’]?s\s+up|what['’]?s\s+new|"
    r"right|you\s+know|isn['’]?t\s+it|don['’]?t\s+you\s+think|wanna\s+see|want\s+to\s+see|"
    r"can\s+you\s+believe|guess\s+what|remember|ready|really|seriously|huh|yeah|no|ok|okay|"
    r"what\s+do\s+you\s+think|any\s+(?:tips|advice|ideas|thoughts))\b",
    re.IGNORECASE,
)
# a statement with a question tag ("I opened my own store - pretty cool, huh?", "Nature
# sure refreshes us, right?", "I made a bowl - want to see a pic?"): it asks nothing the
# next turn answers
_TAG_RE = re.compile(
    r"(?:,|\s[-–—])\s*(?:(?:pretty|so|really)\s+\w+\s*,\s*)?(?:huh|eh|right|yeah|no|ok|okay|"
    r"isn['’]?t\s+it|wasn['’]?t\s+it|aren['’]?t\s+they|don['’]?t\s+you\s+think|you\s+know|"
    r"(?:wanna|want\s+to)\s+see(?:\s+\w+){0,3})\?$",
    re.IGNORECASE,
)
# an assistant's offer to do more ("Can I assist you in any way?", "Would you like more
# options?", "Anything you want me to remember?"): what follows it is no answer to it
_OFFER_RE = re.compile(
    r"^(?:(?:can|could|may|shall|should)\s+I\s+(?:help|assist|do|add|make|suggest|draft|"
    r"send|put|set|create|give|find|look|share|offer|recommend|also)|"
    r"(?:would|do)\s+you\s+(?:like|want|need)\s+(?:me\s+to|more|any|some|another|other|"
    r"a\s+few|help|further|additional|anything)|(?:want|need)\s+me\s+to|"
    r"how\s+(?:else\s+)?(?:can|may|could)\s+I|is\s+there\s+anything|anything\s+(?:else|you|I)|"
    r"what\s+else|does\s+(?:that|this)\s+(?:help|work|sound)|need\s+(?:any|more)\s+help)\b",
    re.IGNORECASE,
)
_QUESTION_SPLIT_RE = re.compile(r"(?<=[.!?])\s+")
_MAX_QUESTION_WORDS = 24
_SHORT_ANSWER_WORDS = 30
_SUBJECT_OPEN_RE = re.compile(
    r"^(?:I|I['’](?:m|ve|d|ll)|My|We|We['’](?:re|ve|ll|d)|Our|[A-Z][a-z]+\s+(?:is|was|has|had|"
    r"went|got|made|did|will|said))\b"
)


def asked(turn_text: str) -> str:
    """The last real question in ``turn_text`` ("" when it asks none or only small talk)."""
    text = re.sub(r"\[shared a photo:[^\]]*\]", " ", turn_text)
    text = re.sub(r"\*\*|__", "", text)  # "**Did anything change recently?**"
    # a list item is a line of its own ("- Start date: permanent or fixed-term?")
    text = re.sub(r"(?m)^\s*(?:[-*+•]|\d{1,2}[.)])\s+(.*?)\s*$", "\0\\1\0", text)
    parts = [
        p.strip()
        for chunk in text.split("\0")
        for p in _QUESTION_SPLIT_RE.split(" ".join(chunk.split()))
        if p.strip()
    ]
    for part in reversed(parts):
        if not part.endswith("?"):
            continue
        words = part.split()
        if len(words) < 4 or len(words) > _MAX_QUESTION_WORDS:
            continue
        core = _INTERJECTION_RE.sub("", part)
        core = re.sub(r"^[A-Z][\w'’-]*\s*,\s*", "", core) if core == part else core
        if (
            _PHATIC_RE.match(core)
            or _OFFER_RE.match(core)
            or _TAG_RE.search(core)
            or not substantive(core, frozenset())
        ):
            continue
        return core
    return ""


# a remark on what the other person just showed or said ("That photo's amazing.", "That's
# stunning.", "Great to hear from you."): it answers no question
_REMARK_RE = re.compile(
    r"^(?:(?:that|this)(?:\s+(?:photo|pic|picture|painting|one|shot|song|view))?"
    r"(?:['’]s|\s+is|\s+was|\s+looks)(?:\s+(?:so|really|just|very|super|pretty))?\s+(?!(?:mine|yours|ours|his|hers|theirs)\b)(?-i:[a-z][\w-]*)"
    r"|(?:great|good|nice|lovely)\s+to\s+(?:hear|see)\b[^.!?]*)[.!]?$",
    re.IGNORECASE,
)


def needs_question(said: str, listener: str = "") -> bool:
    """A short answer or a fragment that says something: it reads right only with the
    question before it ("Three times a week.", "Yup, we did it yesterday.")."""
    if len(said.split()) > _SHORT_ANSWER_WORDS:
        return False
    if _GLUE_OPENER_RE.match(said) or (listener and _LISTENER_SUBJECT_RE.match(said)):
        return False
    if _REMARK_RE.match(said):
        return False
    words = [w.lower() for w in _WORD_RE.findall(said)]
    return any(len(w) > 2 and w not in CHAT_WORDS for w in words) or bool(re.search(r"\d", said))


_YOU_FORMS = [
    (
        re.compile(r"\b(?:do|does)\s+(?:you\s+all|you\s+guys|y['’]all)\b", re.IGNORECASE),
        "do {n} and others",
    ),
    (
        re.compile(r"\b(?:have)\s+(?:you\s+all|you\s+guys|y['’]all)\b", re.IGNORECASE),
        "have {n} and others",
    ),
    (
        re.compile(r"\b(?:are)\s+(?:you\s+all|you\s+guys|y['’]all)\b", re.IGNORECASE),
        "are {n} and others",
    ),
    (re.compile(r"\b(?:you\s+all|you\s+guys|y['’]all)\b", re.IGNORECASE), "{n} and others"),
    (re.compile(r"\b(do|does)\s+you\b", re.IGNORECASE), "does {n}"),
    (re.compile(r"\bhave\s+you\b", re.IGNORECASE), "has {n}"),
    (re.compile(r"\bare\s+you\b", re.IGNORECASE), "is {n}"),
    (re.compile(r"\bwere\s+you\b", re.IGNORECASE), "was {n}"),
    (re.compile(r"\byou['’]re\b", re.IGNORECASE), "{n} is"),
    (re.compile(r"\byou['’]ve\b", re.IGNORECASE), "{n} has"),
    (re.compile(r"\byou['’]ll\b", re.IGNORECASE), "{n} will"),
    (re.compile(r"\byou['’]d\b", re.IGNORECASE), "{n} would"),
    (re.compile(r"\byour(?:s)?\b", re.IGNORECASE), "{n}'s"),
    (re.compile(r"\byourself\b", re.IGNORECASE), "themself"),
    (re.compile(r"\byou\b", re.IGNORECASE), "{n}"),
]


def question_claim(question: str, answer: str, answerer: str, topic: str = "") -> str:
    """One claim of a question and its short answer: ``<question about answerer>
    <answerer>: <answer>``. Both parts are already in third person for the asker.
    ``topic``: what a vague question ("How did they react?") refers to, from the talk
    before it; written as ``(re: <topic>)`` after the question.

    Nothing is said twice: the question names the answerer once (later "you" is "them",
    "your" is "their", unless the question already speaks of others as "they"), the topic
    keeps only words neither part says, and the ``<answerer>:`` label is left out when the
    answer opens with the answerer's name ("What type of guitar? Dana started playing
    ..."), where it would only repeat it."""
    q = _name_once(question, answerer) if answerer else question
    q = q[:1].upper() + q[1:]
    topic = _new_words(topic, f"{q} {answer}") if topic else ""
    if topic:
        q = f"{q} (re: {topic})"
    if not answerer or re.match(rf"{re.escape(answerer)}(?![\w-])", answer):
        return f"{q} {answer}"
    return f"{q} {answerer}: {answer}"


# later mentions of the person asked, once the question has named them
_LATER_FORMS = {
    "does {n}": "do they",
    "has {n}": "have they",
    "is {n}": "are they",
    "was {n}": "were they",
    "{n} is": "they are",
    "{n} has": "they have",
    "{n} will": "they will",
    "{n} would": "they would",
    "{n}'s": "their",
}
_SUBJECT_AFTER_RE = re.compile(
    r"\b(?:did|do|does|can|could|will|would|should|shall|might|may|must|have|has|had|"
    r"are|were|when|if|that|what|how|where|why|who|and|or|but|so|while|since|because|before|"
    r"after|as|until|once)\s*$",
    re.IGNORECASE,
)
_VERB_AFTER_RE = re.compile(
    r"^\s*(?:were|are|was|have|had|do|did|can|could|will|would|should|might|must|may|"
    r"['’](?:re|ve|d|ll))\b",
    re.IGNORECASE,
)
_THEY_WORDS_RE = re.compile(r"\b(?:they|them|their|theirs|themselves)\b", re.IGNORECASE)


def _name_once(question: str, answerer: str) -> str:
    """``question`` with "you" forms written for ``answerer``: the name first, then
    pronouns (the name again when the question already says "they" of others)."""
    keep_name = bool(_THEY_WORDS_RE.search(question))
    pieces: list[str] = []
    named = False
    pos = 0
    for start, end, repl in _you_spans(question):
        first = repl.format(n=answerer)
        word = first
        if named and not keep_name:
            if repl in _LATER_FORMS:
                word = _LATER_FORMS[repl]
            elif repl == "{n}":
                subject = _SUBJECT_AFTER_RE.search(question[:start]) or _VERB_AFTER_RE.match(
                    question[end:]
                )
                word = "they" if subject else "them"
        if re.search(r"(?:^|[.!?]\s+)$", question[:start]):
            word = word[:1].upper() + word[1:]
        pieces.append(question[pos:start] + word)
        pos = end
        named = named or answerer in word
    pieces.append(question[pos:])
    return "".join(pieces)


def _you_spans(text: str) -> list[tuple[int, int, str]]:
    """Each "you" form of ``text`` once, in order: (start, end, replacement pattern)."""
    spans: list[tuple[int, int, str]] = []
    for regex, repl in _YOU_FORMS:
        for m in regex.finditer(text):
            if not any(m.start() < e and s < m.end() for s, e, _ in spans):
                spans.append((m.start(), m.end(), repl))
    return sorted(spans)


def _new_words(topic: str, said: str) -> str:
    """The parts of ``topic`` (comma-separated phrases) with the words ``said`` lacks."""
    known = {_stem(w) for w in _WORD_RE.findall(said.lower())}
    out: list[str] = []
    for phrase in topic.split(","):
        kept = [w for w in phrase.split() if _stem(w.lower()) not in known]
        if kept:
            out.append(" ".join(kept))
    return ", ".join(out)


def _stem(word: str) -> str:
    w = word.strip("'’")
    for suffix in ("ing", "es", "ed", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


_VAGUE_RE = re.compile(r"\b(?:it|they|them|that|this|those|these|he|she|him|her|there|one)\b", re.I)
_TOPIC_WORDS = 4


def vague(question: str) -> bool:
    """The question points back ("How did they react when they saw it?") and names little."""
    return bool(_VAGUE_RE.search(question)) and len(substantive(question)) < 2


def topic_of(texts: list[str], names: set[str]) -> str:
    """The last few things named in ``texts`` (lower-case content words, adjacent ones kept
    together as a phrase): what a vague question that follows them is about."""
    phrases: list[list[str]] = []
    for text in texts:
        # a photo's caption is what it shows, often what "them" points at
        text = re.sub(r"\[shared a photo:\s*([^\]]*)\]", r" \1.", text)
        text = re.sub(r"\ba\s+(?:photo|photography|picture)\s+of\s+", " ", text)
        for sentence in _QUESTION_SPLIT_RE.split(text):
            if sentence.strip().endswith("?") or _GLUE_OPENER_RE.match(trim(sentence)):
                continue
            run: list[str] = []
            for m in re.finditer(r"[A-Za-z][\w'’-]*|[^\w\s]", sentence):
                w = m.group(0)
                keep = w[:1].islower() and bool(substantive(w)) and w.lower() not in names
                if keep:
                    run.append(w)
                elif run:
                    phrases.append(run)
                    run = []
            if run:
                phrases.append(run)
    picked: list[str] = []
    count = 0
    for phrase in reversed(phrases):
        text = " ".join(phrase[-_TOPIC_WORDS:])
        if text in picked:
            continue
        if count + len(phrase[-_TOPIC_WORDS:]) > _TOPIC_WORDS:
            break
        picked.insert(0, text)
        count += len(phrase[-_TOPIC_WORDS:])
    return ", ".join(picked)
