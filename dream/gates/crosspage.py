"""Contradictions across pages (DV202): one person, one slot, two current values.

``dream.gates.slots`` catches two values of one slot on one page (DV201). Here a new or
changed claim of a changed page under ``knowledge/`` or ``notes/`` is compared with the
current claims about the same person anywhere in the staged tree: "Jonas lives in
Berlin" on the Berlin page clashes with "Jonas Weber lives in Hamburg" on his own page.

Whom a claim is about: the page's person when it opens with one of the person's names or
a pronoun (``slot_of``: a person's page, their archives, their preferences page, their
notes under ``notes/<id>/``), else the person it opens with, named any way the staged
tree knows them (title, first name, alias, id, a ``[[link]]``), when that name is
one person's only. A name two people share, a name no person page has, a pronoun away
from its person's pages: no subject, so no check (the gate lets a claim through rather
than blocking a run on a guess).

Which claim the problem is on: the one the run wrote (a claim the base already held on
that page is not checked); of two the run wrote, the one whose evidence is later (both
when neither is). The message names the other claim's file and line, the person, the
slot and both values; the fix is to mark the older one superseded, as the wiki phase
does.

Cost: the store's pages are not read one by one. The changed pages come as the gate
parsed them (``CrossPage.page``, called by ``verify_stage``); the rest of the store is
asked with two ``git grep`` runs (one of the person's names among a cited line's first
words with a slot's cue word; any cue word among the first words of a cited line on the
person's own pages), and a file with such a line is read, not parsed, to tell whether
the line is current.

Boundary: reads the staged tree and the base commit; says what clashes, edits nothing.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from dream.gates import Problem, base_page, staged_page
from dream.gates.claimtext import plain
from dream.gates.slots import clash, opening_name, slot_of
from dream.landing.staging import git_proc
from dream.language.cues import KindOf
from dream.wiki.subjects import FOLDERS
from memoryfs.pages.archives import main_stem
from memoryfs.pages.claims import extract_claims
from memoryfs.pages.links import CITE_RE
from memoryfs.pages.page import Page
from memoryfs.store.slugs import slugify
from memoryfs.store.store import Store

__all__ = ["CODE", "CrossPage", "SlotClaim"]

GATE = "verification"
CODE = "DV202"
_FACT_PREFIXES = ("memory/knowledge/", "memory/notes/")
_PEOPLE = f"memory/knowledge/{FOLDERS['person']}/"
_PREFERENCES = f"memory/knowledge/{FOLDERS['preference']}/"
_NOTES = "memory/notes/"
# a cue word of some slot of ``dream.gates.slots``: what a line must hold to be read
_CUE = (
    r"liv(e|es|ing)|based|resid|moved|relocat|works|working|employ|role|job|position|"
    r"occupation|company|workplace|city|prefer|married|engaged|dating|partner|wife|husband|"
    r"spouse|girlfriend|boyfriend|fianc"
)
# a cue word among a claim's first words, where the slot table looks (after a date, a
# name, "is", "now"): a cheap test most claims fail
_NEAR_START_RE = re.compile(r"(?i)^(?:\S+\s+){0,8}?(?:" + _CUE + ")")
_STATUS_RE = re.compile(r"^status:\s*['\"]?superseded", re.IGNORECASE)
_MARKED_RE = re.compile(r"\(superseded|~~[^~\n]+~~", re.IGNORECASE)
_ATX_RE = re.compile(r"^ {0,3}(#{1,6})\s+(.*)$")
_HISTORY_RE = re.compile(r"history|superseded", re.IGNORECASE)
_NO_WHEN = ("", "", 0)
# the start of a line, then up to {} words (list marker and date included): where a
# claim's subject and the cue word of its slot are
_START_PERL = r"^\W*(?:\S+\s+){{0,{}}}"
_START_ERE = "^[^[:alnum:]]*([^[:space:]]+[[:space:]]+){{0,{}}}"
# a claim with no name before its cue word: a date, a pronoun, "now" at most
_BARE_PERL = (
    r"^\W*(?:(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}\s+\w+\s+\d{{4}})\W*)?"
    r"(?:(?:he|she|they|the\s+user|user)\s+)?(?:(?:now|currently|always)\s+)?(?:{})"
)
_BARE_ERE = (
    "^[^[:alnum:]]*(([0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}|[0-9]{{1,2}}[[:space:]]+[[:alpha:]]+"
    "[[:space:]]+[0-9]{{4}})[^[:alnum:]]*)?((he|she|they|the[[:space:]]+user|user)"
    "[[:space:]]+)?((now|currently|always)[[:space:]]+)?({})"
)
_ERE_SPECIAL = re.compile(r"([.\[\]()*+?{}|^$\\])")
_PREFIX_RE = re.compile(r"^\s*(?:>\s?)*\s*(?:(?:[-*+]|\d{1,9}[.)])\s+)?(?:\[[ xX]\]\s+)?")
_CITE_STRIP_RE = re.compile(r"[ \t]*\[cite:\s*\d+\]")
_OPENING_LINK_RE = re.compile(r"^\W*(?:\d{4}-\d{2}-\d{2}\W*\s*)?\[\[([^\[\]|\n]+)")
_TURN_RE = re.compile(r"#t(\d+)$")
_MAX_GREP_NAMES = 200  # past this many names, the grep asks for cue words alone


@dataclass(frozen=True)
class SlotClaim:
    """A current claim giving a person's slot a value."""

    path: str  # relative to the store root
    line: int
    subject: str  # the person's page id
    slot: str
    value: str
    new: bool  # the run wrote it (the base did not hold it on that page)
    when: tuple[str, str, int] = ("", "", 0)  # a new claim's latest evidence (date, turn)


def _ere(text: str) -> str:
    return _ERE_SPECIAL.sub(r"\\\1", text)


def _line_text(raw: str) -> str:
    return " ".join(_CITE_STRIP_RE.sub("", _PREFIX_RE.sub("", raw, count=1)).split())


class _People:
    """The person pages of the staged tree, asked by name: whose is "Jonas"?"""

    def __init__(self, root: Path) -> None:
        self.root = root
        folder = root / _PEOPLE
        try:
            names = [p.name for p in folder.iterdir() if p.name.endswith(".md")]
        except OSError:
            names = []
        self.ids = sorted(n[:-3] for n in names if main_stem(n) is None)
        self._known = set(self.ids)
        self._pages: dict[str, Page | None] = {}
        self._aliased: dict[str, set[str]] = {}  # lower-cased name -> ids whose aliases may hold it
        self._resolved: dict[str, str | None] = {}

    def page(self, pid: str) -> Page | None:
        if pid not in self._pages:
            self._pages[pid] = staged_page(self.root, f"{_PEOPLE}{pid}.md")
        return self._pages[pid]

    def is_person(self, pid: str) -> bool:
        return pid in self._known

    def forms(self, pid: str) -> tuple[str, ...]:
        """The names a claim about ``pid`` may open with: title, id, aliases, first name."""
        page = self.page(pid)
        if page is None:
            return (pid,)
        title = page.title or pid
        first = title.split()[0] if " " in title else ""
        return tuple(dict.fromkeys(n for n in (title, pid, *page.aliases, first) if n))

    def learn_aliases(self, names: Iterable[str]) -> None:
        """Find, with one ``git grep``, the person pages whose frontmatter may list one of
        ``names`` as an alias (a YAML list item or an inline ``aliases:`` value)."""
        wanted = sorted({n.lower() for n in names if n} - set(self._aliased))
        if not wanted:
            return
        for n in wanted:
            self._aliased[n] = set()
        alternatives = "|".join(_ere(n) for n in wanted)
        item = rf"^[[:space:]]*-[[:space:]]+[\"']?({alternatives})[\"']?[[:space:]]*$"
        inline = rf"^aliases:.*({alternatives})"
        proc = git_proc(
            self.root,
            *("grep", "--untracked", "-i", "-I", "-E", "-n", "--no-color"),
            *("-e", item, "-e", inline, "--", _PEOPLE.rstrip("/")),
        )
        for out in proc.stdout.splitlines():
            rel = out.split(":", 1)[0]
            pid = rel.removeprefix(_PEOPLE).removesuffix(".md")
            if pid not in self._known:
                continue
            page = self.page(pid)
            for alias in page.aliases if page is not None else ():
                if alias.lower() in self._aliased:
                    self._aliased[alias.lower()].add(pid)

    def resolve(self, name: str) -> str | None:
        """The one person page ``name`` names (title, id, alias or first name); None when
        none does or several do."""
        key = name.lower().strip()
        if key not in self._resolved:
            self._resolved[key] = self._resolve(key)
        return self._resolved[key]

    def _resolve(self, key: str) -> str | None:
        if not key:
            return None
        self.learn_aliases([key])
        slug = slugify(key, empty="")
        found: set[str] = set()
        if slug in self._known:
            found.add(slug)
        candidates = set(self._aliased.get(key, ()))
        if slug and " " not in key and "-" not in key:  # a first name: "jonas" -> jonas-*
            at = bisect.bisect_left(self.ids, slug + "-")
            while at < len(self.ids) and self.ids[at].startswith(slug + "-"):
                candidates.add(self.ids[at])
                at += 1
        for pid in candidates - found:
            if key in (f.lower() for f in self.forms(pid)):
                found.add(pid)
        return found.pop() if len(found) == 1 else None


class CrossPage:
    """One gate run's check: ``page`` each changed page as the gate reads it, then ask
    for the ``problems``."""

    def __init__(self, store: Store, root: Path, base: str, kind_of: KindOf) -> None:
        self.store = store
        self.root = root
        self.base = base
        self.kind_of = kind_of
        self.people = _People(root)
        # (path, added, text, line, its evidence) of changed pages' claims that may fill a slot
        self._candidates: list[tuple[str, bool, str, int, tuple[str, str, int]]] = []
        self._read: dict[tuple[str, str | None], tuple[str, str, str] | None] = {}

    def page(self, path: str, page: Page, status: str) -> None:
        """Note the current claims of a changed page that may fill a slot, read line by
        line as ``_Lines`` reads them (most lines are no claim of a slot: they are not
        parsed)."""
        if status == "D" or not path.startswith(_FACT_PREFIXES) or not self.people.ids:
            return
        superseded = str(page.meta.get("status", "")).strip().lower() == "superseded"
        lines = _Lines(page.body.split("\n"), superseded)
        evidence: dict[int, tuple[str, str, int]] | None = None
        for n, raw in lines.claims():
            text = _line_text(raw)
            if not _NEAR_START_RE.match(text):
                continue
            if evidence is None:
                evidence = _evidence(page)
            cited = [evidence.get(int(c), _NO_WHEN) for c in CITE_RE.findall(raw)]
            when = max(cited, default=_NO_WHEN)
            self._candidates.append((path, status == "A", text, page.body_line + n - 1, when))

    def problems(self) -> list[Problem]:
        """DV202 for each new slot claim that a current claim of another page contradicts."""
        new = self._new_claims()
        if not new:
            return []
        return self._problems(new, self._gather({c.subject for c in new}, new))

    # -- whom a claim is about -----------------------------------------------------

    def context(self, path: str) -> str | None:
        """The person whose own page ``path`` is (a page, an archive, a preferences
        page, a note under ``notes/<id>/``); None for any other page."""
        if path.startswith(_PEOPLE):
            name = path[len(_PEOPLE) :]
            name = (main_stem(name) or name).removesuffix(".md")
        elif path.startswith(_PREFERENCES):
            name = path[len(_PREFERENCES) :].removesuffix(".md").removesuffix("-preferences")
        elif path.startswith(_NOTES):
            name = path[len(_NOTES) :].split("/", 1)[0]
        else:
            return None
        return name if self.people.is_person(name) else None

    def read(self, text: str, context: str | None) -> tuple[str, str, str] | None:
        """(person, slot, value) a claim's text gives, or None."""
        if not _NEAR_START_RE.match(text):
            return None
        key = (text, context)
        if key not in self._read:  # a claim is on each page it names, in the same words
            self._read[key] = self._read_claim(text, context)
        return self._read[key]

    def _read_claim(self, text: str, context: str | None) -> tuple[str, str, str] | None:
        if context is not None:
            found = slot_of(text, self.people.forms(context), self.kind_of)
            if found is not None:
                return context, *found
        name = opening_name(text)
        if not name:
            return None
        link = _OPENING_LINK_RE.match(text)
        who = self.people.resolve(link.group(1)) if link else None
        who = who or self.people.resolve(name)
        if who is None or who == context:
            return None
        found = slot_of(text, (name,), self.kind_of)
        return (who, *found) if found is not None else None

    # -- the claims --------------------------------------------------------------

    def _new_claims(self) -> list[SlotClaim]:
        self.people.learn_aliases(opening_name(c[2]) for c in self._candidates)
        out: list[SlotClaim] = []
        old: dict[str, set[str]] = {}
        for path, added, text, line, when in self._candidates:
            found = self.read(text, self.context(path))
            if found is None:
                continue
            if path not in old:
                old[path] = set() if added else self._base_texts(path)
            if plain(text).lower() not in old[path]:
                out.append(SlotClaim(path, line, *found, True, when))
        self._candidates.clear()
        return out

    def _base_texts(self, path: str) -> set[str]:
        """The claim texts the base commit holds on ``path``, current or not."""
        old = base_page(self.store, self.base, path)
        return {plain(c.text).lower() for c in extract_claims(old)} if old is not None else set()

    def _gather(self, subjects: set[str], new: list[SlotClaim]) -> list[SlotClaim]:
        """The current slot claims about ``subjects`` in the staged tree (``new`` too)."""
        hits: dict[tuple[str, int], str] = {}
        forms = sorted({f for s in subjects for f in self.people.forms(s)}, key=str.lower)
        self._grep(forms if len(forms) <= _MAX_GREP_NAMES else [], hits)
        texts = {k: _line_text(raw) for k, raw in hits.items() if not _MARKED_RE.search(raw)}
        self.people.learn_aliases(opening_name(t) for t in texts.values())
        out = list(new)
        seen = {(c.path, c.line) for c in new}
        files: dict[str, _Lines] = {}
        for (path, line), text in sorted(texts.items()):
            if (path, line) in seen:
                continue
            found = self.read(text, self.context(path))
            if found is None or found[0] not in subjects:
                continue
            if path not in files:
                files[path] = _Lines.of(self.root / path)
            if files[path].current(line):
                out.append(SlotClaim(path, line, *found, False))
        return out

    def _grep(self, names: list[str], hits: dict[tuple[str, int], str]) -> None:
        """The current cited lines of ``knowledge/`` and ``notes/`` with a cue word among
        their first words, and one of ``names`` among them or no name at all ("She lives
        in ...", "Role: ...": their person is the page's); all such lines when ``names``
        is empty. One ``git grep``, with Perl regexes where Git has them (several times
        faster than its extended ones here), else with extended ones."""
        for perl in (True, False) if _Grep.perl else (False,):
            start, bare = (_START_PERL, _BARE_PERL) if perl else (_START_ERE, _BARE_ERE)
            cue = start.format(9) + f"({_CUE})"
            which: tuple[str, ...] = ("-e", cue)
            if names:
                alternatives = "|".join(re.escape(n) if perl else _ere(n) for n in names)
                near = r"(?:\[\[)?(?:{})\b" if perl else "(\\[\\[)?({})([^[:alnum:]_]|$)"
                named = start.format(5) + near.format(alternatives)
                which = ("(", "-e", named, "--or", "-e", bare.format(_CUE), ")", "--and", *which)
            proc = git_proc(
                self.root, "grep", "--untracked", "-I", "-i", "-n", "--no-color",
                "-P" if perl else "-E", *which, "--and", "-e", r"\[cite:",
                "--and", "--not", "-e", r"\(superseded|~~",
                "--", "memory/knowledge", "memory/notes",
            )  # fmt: skip
            if proc.returncode in (0, 1):
                break
            _Grep.perl = False  # this Git has no Perl regexes
        for out in proc.stdout.splitlines():
            path, _, rest = out.partition(":")
            number, _, raw = rest.partition(":")
            if path.startswith(_FACT_PREFIXES) and path.endswith(".md") and number.isdigit():
                hits[(path, int(number))] = raw

    # -- the clashes --------------------------------------------------------------

    def _problems(self, new: list[SlotClaim], known: list[SlotClaim]) -> list[Problem]:
        by_slot: dict[tuple[str, str], list[SlotClaim]] = {}
        for c in known:
            by_slot.setdefault((c.subject, c.slot), []).append(c)
        out: list[Problem] = []
        for c in new:
            for other in by_slot.get((c.subject, c.slot), ()):
                if other.path == c.path or not clash(c.value, other.value):
                    continue  # one page's own clashes are DV201's
                if other.new and other.when > c.when:
                    continue  # the problem is on the later one
                out.append(self._problem(c, other))
                break
        return out

    def _problem(self, c: SlotClaim, other: SlotClaim) -> Problem:
        page = self.people.page(c.subject)
        who = (page.title if page is not None else "") or c.subject
        return Problem(
            GATE,
            c.path,
            c.line,
            CODE,
            f"contradicts {other.path}:{other.line} about {who!r}, slot {c.slot}: "
            f"{c.value!r} vs {other.value!r} (mark the older one superseded, citing both)",
        )


class _Grep:
    perl = True  # whether this Git greps with Perl regexes (until it says it cannot)


class _Lines:
    """A page's lines, asked which claim lines are current: not marked superseded or
    struck through, under no History heading, on no page of ``status: superseded`` (how
    ``memoryfs.pages.claims`` reads them, without parsing the page)."""

    def __init__(self, lines: list[str], superseded: bool = False) -> None:
        self.lines = lines
        self.superseded = superseded

    @classmethod
    def of(cls, path: Path) -> _Lines:
        """The file at ``path``, frontmatter and all (its line numbers are the file's)."""
        try:
            lines = path.read_text(encoding="utf-8").split("\n")
        except (OSError, UnicodeDecodeError):
            lines = []
        fenced = bool(lines) and lines[0] == "---" and "---" in lines[1:]
        head = lines[1 : lines.index("---", 1)] if fenced else []
        return cls(lines, any(_STATUS_RE.match(x) for x in head))

    def current(self, n: int) -> bool:
        """Whether line ``n`` (1-based) is a current claim's."""
        if self.superseded or not 0 < n <= len(self.lines) or _MARKED_RE.search(self.lines[n - 1]):
            return False
        level = 7  # the headings above the line that hold it: each one less deep
        for line in reversed(self.lines[: n - 1]):
            m = _ATX_RE.match(line)
            if m and len(m.group(1)) < level:
                if _HISTORY_RE.search(m.group(2)):
                    return False
                level = len(m.group(1))
        return True

    def claims(self) -> Iterator[tuple[int, str]]:
        """(line number, line) of each current cited line, in one pass."""
        if self.superseded:
            return
        stack: list[tuple[int, bool]] = []  # (level, a history heading) of the open headings
        for n, line in enumerate(self.lines, 1):
            m = _ATX_RE.match(line)
            if m:
                level = len(m.group(1))
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, bool(_HISTORY_RE.search(m.group(2)))))
            elif "[cite:" in line and not any(h for _, h in stack) and not _MARKED_RE.search(line):
                yield n, line


def _evidence(page: Page) -> dict[int, tuple[str, str, int]]:
    """Source id -> (date, transcript, turn number) of what it cites."""
    out: dict[int, tuple[str, str, int]] = {}
    for sid, ref, item in page.source_items():
        path, _, anchor = ref.partition("#")
        turn = _TURN_RE.search("#" + anchor)
        out[sid] = (str(item.get("at", "")), path, int(turn.group(1)) if turn else 0)
    return out
