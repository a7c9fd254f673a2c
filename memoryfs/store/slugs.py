"""Slugs: the lower-case ASCII ids that pages, notes and sessions are named by.

Job: turn a name into words of ``a-z0-9`` joined by "-" that a person can still read,
so a page id can be its file name on any file system and a ``[[link]]`` to it is
plain to type. Latin letters lose their marks ("Eimsbüttel" -> "eimsbuttel"), letters
with no mark to drop are spelt out ("Straße" -> "strasse", "Ærø" -> "aero", "Łódź" ->
"lodz"), and Greek and Cyrillic are spelt letter by letter (ELOT 743 and ICAO 9303
style: "Αθήνα" -> "athina", "Москва" -> "moskva").

Other scripts are not guessed at: Chinese characters and Japanese kanji need a
dictionary (and often context) to be read, Arabic and Hebrew leave vowels unwritten,
and a wrong spelling would be worse than an opaque one. A word holding such letters
becomes a short hash of itself ("東京" -> "130016b2"): stable (the same word always
gives the same hash), different for different words, and never empty. A slug with no
Latin letter at all starts with the caller's ``empty`` word ("place-130016b2"), so a
reader still sees what it names; the title keeps the name as written.

Boundary: text in, slug out; no store access.
"""

from __future__ import annotations

import re
import unicodedata

from memoryfs.store.hashing import short_hash

__all__ = ["ascii_words", "slugify"]


def _letters(script: str, spelt: str) -> dict[str, str]:
    """Each letter of ``script`` -> its spelling, the spellings separated by spaces."""
    return dict(zip(script, spelt.split(), strict=True))


# Latin letters that NFKD does not split into a base letter and a mark
_LATIN = {
    "ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ð": "d", "þ": "th", "ł": "l",
    "ı": "i", "ħ": "h", "ŋ": "ng", "ĸ": "k", "ſ": "s", "ŧ": "t", "ƒ": "f", "ɐ": "a",
    "ə": "e", "ɛ": "e", "ɔ": "o", "ʃ": "sh", "ʒ": "zh", "ƿ": "w", "ȝ": "gh",
}  # fmt: skip
# Greek, letter by letter (ELOT 743; "ου" is "ou", below); accents are marks NFKD splits off
_GREEK = _letters(
    "αβγδεζηθικλμνξοπρσςτυφχψω", "a v g d e z i th i k l m n x o p r s s t y f ch ps o"
)
# Cyrillic (ICAO 9303, as on passports), with the letters of Ukrainian, Belarusian,
# Serbian and Macedonian; the hard and soft signs are not spelt
_CYRILLIC = _letters(
    "абвгдежзийклмнопрстуфхцчшщыэюяєіїґўђјљњћџѓќѕ",
    "a b v g d e zh z i i k l m n o p r s t u f kh ts ch sh shch y e iu ia ie i i g u d j lj "
    "nj c dz g k dz",
)
_SPELT = {**_LATIN, **_GREEK, **_CYRILLIC, "ъ": "", "ь": ""}
_TOKEN_RE = re.compile(r"[^\W_]+")
_HASH_LEN = 8


def _spell(text: str) -> str:
    """``text`` lower-cased with every letter that can be spelt in ASCII spelt so; other
    letters stay as they are (without their marks), everything else becomes a space."""
    out: list[str] = []
    decomposed = unicodedata.normalize("NFKD", text.lower()).replace("ου", "ou")
    for ch in decomposed:
        if ch.isascii():
            out.append(ch if ch.isalnum() else " ")
        elif unicodedata.combining(ch):
            continue
        elif ch in _SPELT:
            out.append(_SPELT[ch])
        elif ch.isdigit():
            out.append(str(unicodedata.digit(ch, 0)))
        elif ch.isalpha():
            out.append(ch)
        else:
            out.append(" ")
    return "".join(out)


def _words(text: str) -> list[tuple[str, bool]]:
    """(slug word, spelt) for each word of ``text``; an unspelt word is its short hash."""
    return [
        (w, True) if w.isascii() else (short_hash(w.encode("utf-8"), _HASH_LEN), False)
        for w in _TOKEN_RE.findall(_spell(text))
    ]


def ascii_words(text: str) -> list[str]:
    """The words of ``text`` as slug words, in order: "Eimsbüttel, Straße!" ->
    ["eimsbuttel", "strasse"]; a word of letters no ASCII spelling exists for is its
    short hash."""
    return [w for w, _ in _words(text)]


def slugify(text: str, max_len: int = 60, empty: str = "item") -> str:
    """ASCII slug of ``text`` at most ``max_len`` characters: "Priya Natarajan" ->
    "priya-natarajan", "Eimsbüttel" -> "eimsbuttel", "Москва" -> "moskva", "東京" ->
    "item-130016b2" (``empty`` first when a word could not be spelt and no Latin word is
    left; ``empty`` alone when ``text`` has no letter or digit at all)."""
    words = _words(text)
    slug = "-".join(w for w, _ in words)
    if not all(spelt for _, spelt in words) and not any(
        spelt and not w.isdigit() for w, spelt in words
    ):
        slug = f"{empty}-{slug}"
    return slug[:max_len].rstrip("-") or empty
