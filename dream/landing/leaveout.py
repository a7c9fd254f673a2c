"""Leaving out what the gates reject, so one bad claim never costs the night.

When the gates report problems on a staged tree, a run leaves those parts out of the
tree and commits the rest (``dream.runner``). What goes, by problem:

- a verification problem on a claim the run wrote (a line the base did not hold, with
  a text no claim of the base has, outside ``## Profile``, whose lines mix committed
  things with new ones): that claim. Its line goes (``dream.wiki.render.Outline``: a
  dated section left without text goes too; an emptied section of a summary says
  "none recorded", as ``render_summary`` writes it), and so do the ``sources`` entries
  no citation names any more (as ``dream.phases.recheck`` drops them);
- an uncited factual line the run wrote (validation's MF110 on a line the base did not
  hold, ``memoryfs.pages.factlines``): that line, as a claim goes; a line wrapped from a
  cited one goes with the cited line, when the run wrote that too (its claim would be
  read from the half left);
- a frontmatter ``summary`` (DV110) or a changed ``title`` (DV111) the page's claims do
  not support (``dream.gates.frontmatter``): that key goes back to the base's value (or,
  for a summary the base did not have, goes); the page's claims stay. A new page whose
  title fails goes whole (a page has a title);
- a page, note or summary that would hold no claim then (a new page all of whose claims
  failed, say): the whole file;
- anything else on a file the run wrote (a validation problem, a problem on no claim
  line or on a claim the base had): the whole file stays as on the base (restored when
  changed or deleted, removed when new). A summary left out keeps its session pending
  (pending is derived from the files: ``dream.phases.orient``);
- a ``[[link]]`` that names no page because the page it named was left out: the link;
  its label stays as text (``memoryfs.forget.scrub.unlink_pages``; a forget also drops a
  list item that is only the link, a run leaving a page out keeps it);
- a problem on a file the run did not change (a cross-page rule: an unchanged page's
  link broke, an id or alias now clashes): the changed pages whose names (id, file
  name, aliases, before or after the run) meet that file's names or link targets.

Leaving out can break something else (a link to a page left out, INDEX.md listing it),
so after each pass the generated indexes are rendered again and both gates run again,
at most ``MAX_PASSES`` times. A problem pinned to nothing (on a generated index, on the
store's layout), or a tree with nothing of the run left in it, makes the reduction
unlandable: the run then fails as a gate failure always did.

Once the rest landed, ``put_back`` commits on the run's branch, on top of what landed,
what was left out as the engine wrote it: ``dream review`` shows just that, and ``dream
apply`` lands it once a human fixed it.

Boundary: edits the staged worktree, says what it left out and puts it back after a
landing; the run's commit, its receipts and moving ``main`` are ``dream.runner``'s and
``dream.landing.sync``'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from dream.gates import GENERATED, Problem, base_page, staged_page
from dream.gates.both import problems_of, run_gates
from dream.gates.claimtext import plain
from dream.gates.frontmatter import heading
from dream.gates.judge import Judge
from dream.landing.staging import (
    Change,
    Stage,
    commit_stage,
    git_proc,
    run_git,
    stage_changes,
    stage_tree,
)
from dream.landing.sync import left_out_section
from dream.wiki.profile import PROFILE
from dream.wiki.render import Outline, Section, load_page_text, page_text
from dream.wiki.sources import Sources
from memoryfs.errors import PageError
from memoryfs.forget.scrub import unlink_pages
from memoryfs.pages.claims import extract_claims
from memoryfs.pages.factlines import uncited_lines
from memoryfs.pages.links import CITE_RE, WIKILINK_RE, extract_links
from memoryfs.pages.page import Page, render_page
from memoryfs.receipts.records import opaque_item, page_item
from memoryfs.store.atomic import atomic_write_text
from memoryfs.store.hashing import content_hash
from memoryfs.store.store import Store

__all__ = ["MAX_PASSES", "LeftOut", "Reduction", "reduce_stage", "put_back"]

MAX_PASSES = 5
_PAGE_DIRS = ("memory/knowledge/", "memory/notes/")
_WRITTEN = (*_PAGE_DIRS, "memory/sessions/summaries/")  # pages a claim can be left out of
_SUMMARIES = "memory/sessions/summaries/"
_FRONTMATTER = {"DV110": "summary", "DV111": "title"}  # ``dream.gates.frontmatter``


@dataclass(frozen=True)
class LeftOut:
    """One part of the staged tree a run left out, and the gate problem that decided it."""

    path: str  # relative to the store root (memory/...)
    line: int  # the problem's line in the staged file (0: none)
    code: str  # the problem's code (MF201, DV101, ...)
    message: str  # the problem's message
    # "claim" (its line), "line" (an uncited line), "link" (the link, its label kept),
    # "summary" or "title" (the frontmatter key, put back as on the base) or "file" (whole)
    kind: str
    version: str = ""  # content hash of the line, or of the staged file ("" when deleted)

    def format(self) -> str:
        return f"{self.path}:{self.line}: {self.code} {self.message} ({self.kind} left out)"

    @property
    def item(self) -> str:
        """The opaque receipt item: the page for a file, else the line in its page."""
        rel = self.path.removeprefix("memory/")
        if self.kind == "file":
            return page_item(rel)
        return opaque_item("claim", f"{rel}#{self.version}")


@dataclass(frozen=True)
class Reduction:
    """What leaving out came to."""

    full_tree: str  # the staged tree as the engine left it (``stage_tree``)
    left_out: tuple[LeftOut, ...]
    problems: tuple[Problem, ...]  # every problem the gates reported, first pass first
    changes: Sequence[Change]  # what is left to commit (when landable)
    superseded: int = 0  # claims the reduced tree marks superseded
    why: str = ""  # why nothing can land, a clause ("" when the rest can)
    touched: tuple[str, ...] = ()  # the files left out or edited (root-relative)

    @property
    def landable(self) -> bool:
        return not self.why


def reduce_stage(
    store: Store,
    stage: Stage,
    changes: Sequence[Change],
    problems: Sequence[Problem],
    full_validation: bool = False,
    judge: Judge | None = None,
) -> Reduction:
    """Leave out what ``problems`` (the gates' verdict on ``changes``) name, render the
    indexes, gate again; until the gates pass, nothing can be pinned, or ``MAX_PASSES``.
    The worktree holds the reduced tree afterwards (``full_tree`` puts the engine's back)."""
    tree = stage_tree(stage)
    found: dict[Problem, None] = dict.fromkeys(problems)
    left: list[LeftOut] = []
    touched: dict[str, None] = {}
    gone: set[str] = set()  # names of pages left out whole: links to them may go
    current: Sequence[Problem] = problems
    for _ in range(MAX_PASSES):
        items, unpinned = _pass(store, stage, changes, current, gone)
        if not items:
            why = f"{len(unpinned or current)} of them on nothing the run can leave out"
            return _unlandable(tree, left, found, touched, why)
        left.extend(_as_written(stage, tree, items))
        touched.update((i.path, None) for i in items)
        stage.write_indexes(store)
        changes = stage_changes(stage)
        if not any(_of_the_run(c) for c in changes):
            return _unlandable(tree, left, found, touched, "nothing valid left to commit")
        validation, verification = run_gates(store, stage, changes, full_validation, judge)
        current = problems_of(validation, verification)
        found.update(dict.fromkeys(current))
        if not current:
            return Reduction(
                full_tree=tree,
                left_out=tuple(left),
                problems=tuple(found),
                changes=changes,
                superseded=verification.stats.get("claims_superseded", 0),
                touched=tuple(touched),
            )
    why = f"{len(current)} still after leaving out {MAX_PASSES} times"
    return _unlandable(tree, left, found, touched, why)


def _unlandable(
    tree: str, left: list[LeftOut], found: dict[Problem, None], touched: dict[str, None], why: str
) -> Reduction:
    return Reduction(tree, tuple(left), tuple(found), (), why=why, touched=tuple(touched))


def _as_written(stage: Stage, tree: str, left: list[LeftOut]) -> list[LeftOut]:
    """``left`` with each line (claim, link) numbered as in the file the engine wrote: a
    later pass finds it in a file an earlier pass shortened."""
    texts: dict[str, list[str]] = {}
    out: list[LeftOut] = []
    for item in left:
        if item.kind != "file":
            if item.path not in texts:
                proc = git_proc(stage.path, "cat-file", "blob", f"{tree}:{item.path}")
                texts[item.path] = proc.stdout.split("\n") if proc.returncode == 0 else []
            hashes = [
                n for n, x in enumerate(texts[item.path], 1) if content_hash(x) == item.version
            ]
            if hashes and item.line not in hashes:
                item = replace(item, line=min(hashes, key=lambda n: abs(n - item.line)))
        out.append(item)
    return out


def _of_the_run(change: Change) -> bool:
    """A change that is the run's work (not a rendered index, not bookkeeping)."""
    return change.path.startswith("memory/") and change.path not in GENERATED


# -- one pass ---------------------------------------------------------------------------


@dataclass
class _Plan:
    """What one pass leaves out of one changed file."""

    status: str  # the file's change: A, M or D
    whole: Problem | None = None
    claims: dict[int, Problem] = field(default_factory=dict)  # file line -> problem
    lines: dict[int, Problem] = field(default_factory=dict)  # uncited lines, likewise
    keys: dict[str, Problem] = field(default_factory=dict)  # frontmatter keys put back
    links: dict[int, tuple[Problem, set[str]]] = field(default_factory=dict)  # + gone targets


def _pass(
    store: Store,
    stage: Stage,
    changes: Sequence[Change],
    problems: Sequence[Problem],
    gone: set[str],
) -> tuple[list[LeftOut], list[Problem]]:
    """Leave out what ``problems`` name; what was left out, and the problems pinned to
    nothing."""
    by_path: dict[str, list[Problem]] = {}
    for p in problems:
        by_path.setdefault(p.path, []).append(p)
    status = {c.path: c.status for c in changes if c.path in by_path}
    plans: dict[str, _Plan] = {}
    unpinned: list[Problem] = []
    elsewhere: list[Problem] = []  # on files the run did not change
    for path, found in by_path.items():
        if path in GENERATED:
            unpinned.extend(found)  # rendered from the rest each pass: nothing to leave out
        elif path not in status:
            elsewhere.extend(found)
        else:
            plans[path] = _plan(store, stage, path, status[path], found, gone)
    if elsewhere:
        culprits = _culprits(store, stage, changes, elsewhere)
        pinned = set(culprits.values())
        unpinned.extend(p for p in elsewhere if p not in pinned)
        for path, (change, problem) in culprits.items():
            plan = plans.setdefault(path, _Plan(change.status))
            plan.whole = plan.whole or problem
    left: list[LeftOut] = []
    for path, plan in sorted(plans.items()):
        left.extend(_leave_out(store, stage, path, plan, gone))
    return left, unpinned


def _plan(
    store: Store, stage: Stage, path: str, status: str, problems: list[Problem], gone: set[str]
) -> _Plan:
    plan = _Plan(status)
    page = _read(stage, path) if status != "D" and path.startswith(_WRITTEN) else None
    if page is None:
        plan.whole = problems[0]
        return plan
    claims = {c.line: c for c in extract_claims(page)}
    old = base_page(store, stage.base, path) if status == "M" else None
    old_lines = set(old.body.split("\n")) if old is not None else set()
    old_cores = {plain(c.text).lower() for c in extract_claims(old)} if old is not None else set()
    lines = page.body.split("\n")
    wraps: dict[int, int] | None = None  # uncited line -> the cited line it wraps (file lines)
    for p in problems:
        at = p.line - page.body_line
        raw = lines[at] if p.line > 0 and 0 <= at < len(lines) else None
        claim = claims.get(p.line)
        if p.code == "MF110" and raw is not None and raw not in old_lines:
            if wraps is None:
                off = page.body_line - 1
                wraps = {
                    off + f.line: off + f.claim_line for f in uncited_lines(page) if f.claim_line
                }
            plan.lines.setdefault(p.line, p)
            cited = wraps.get(p.line, 0)
            if cited in claims and lines[cited - page.body_line] not in old_lines:
                plan.claims.setdefault(cited, p)
            continue
        # only what the run added: a line or a claim the base held is not the run's to drop
        if (
            p.gate == "verification"
            and claim is not None
            and raw is not None
            and claim.section != PROFILE
            and raw not in old_lines
            and plain(claim.text).lower() not in old_cores
        ):
            plan.claims.setdefault(p.line, p)
            continue
        key = _FRONTMATTER.get(p.code) if p.gate == "verification" else None
        if key is not None and (key == "summary" or status == "M"):
            plan.keys.setdefault(key, p)
            continue
        if p.code == "MF201" and raw is not None:
            targets = {_key(link) for link in _links(raw)} & gone
            if targets:
                plan.links.setdefault(p.line, (p, targets))
                continue
        plan.whole = plan.whole or p
    if plan.whole is None and (plan.claims or plan.lines) and not set(claims) - set(plan.claims):
        plan.whole = next(iter({**plan.claims, **plan.lines}.values()))  # no claim would be left
    return plan


def _leave_out(store: Store, stage: Stage, path: str, plan: _Plan, gone: set[str]) -> list[LeftOut]:
    """Carry out ``plan`` on the staged file; what it left out. Pages left out whole add
    the names they took with them to ``gone``."""
    if plan.whole is None:
        page = _read(stage, path)
        keys: list[LeftOut] = []
        if page is not None and plan.keys:
            lines = render_page(page).split("\n")
            for key, p in plan.keys.items():
                raw = lines[p.line - 1] if 0 < p.line <= len(lines) else key
                keys.append(LeftOut(path, p.line, p.code, p.message, key, content_hash(raw)))
            old = base_page(store, stage.base, path) if plan.status == "M" else None
            page = _put_back_keys(page, old, plan.keys)
        return ([] if page is None else _edit(stage, path, page, plan)) + keys
    p, target = plan.whole, stage.path / path
    page = _read(stage, path) if plan.status != "D" else None
    old = base_page(store, stage.base, path) if plan.status != "A" else None
    if page is not None:
        gone |= _names(page, path) - (_names(old, path) if old is not None else set())
    version = ""
    if plan.status != "D" and target.is_file() and not target.is_symlink():
        version = content_hash(target.read_bytes())
    if plan.status == "A":
        target.unlink(missing_ok=True)
    else:
        run_git(stage.path, "checkout", stage.base, "--", path)
    return [LeftOut(path, p.line, p.code, p.message, "file", version)]


def _edit(stage: Stage, path: str, page: Page, plan: _Plan) -> list[LeftOut]:
    """Drop the plan's claims from ``page``, turn its links to pages left out into their
    labels (``forget.scrub.unlink_pages``, as ``forget`` does), write it back; what went."""
    outline = Outline(page.body)
    lines = page.body.split("\n")
    left: list[LeftOut] = []
    drops: list[tuple[Section, int]] = []
    dropped = [(n, p, "claim") for n, p in plan.claims.items()]
    dropped += [(n, p, "line") for n, p in plan.lines.items() if n not in plan.claims]
    for line_no, p, kind in sorted(dropped, key=lambda d: d[0]):
        found = outline.locate(line_no - page.body_line)
        if found is None:
            continue
        drops.append(found)
        raw = lines[line_no - page.body_line]
        left.append(LeftOut(path, line_no, p.code, p.message, kind, content_hash(raw)))
    emptied: dict[int, Section] = {}
    for sec, at in sorted(drops, key=lambda d: -d[1]):  # from the bottom: positions hold
        outline.remove_at(sec, at)
        emptied[id(sec)] = sec
    if path.startswith(_SUMMARIES):  # an emptied section says so, as render_summary writes it
        for sec in emptied.values():
            if sec in outline.sections and not any(x.strip() for x in sec.lines):
                none = "Outcome: none recorded" if sec.title.lower() == "outcome" else ""
                sec.lines[:] = ["", none or "- none recorded", ""]
    text = _with_sources(page, outline.render()) if drops else render_page(page)
    targets: set[str] = set()
    for line_no, (p, gone) in sorted(plan.links.items()):
        if line_no not in plan.claims and line_no not in plan.lines:
            targets |= gone
            raw = lines[line_no - page.body_line]
            left.append(LeftOut(path, line_no, p.code, p.message, "link", content_hash(raw)))
    text, _ = unlink_pages(text, path.removeprefix("memory/"), frozenset(targets))
    atomic_write_text(stage.path / path, text)
    return left


def _put_back_keys(page: Page, old: Page | None, keys: dict[str, Problem]) -> Page:
    """``page`` with each of ``keys`` as ``old`` has it (dropped when ``old`` has none)."""
    meta = dict(page.meta)
    for key in keys:
        if old is not None and key in old.meta:
            meta[key] = old.meta[key]
        else:
            meta.pop(key, None)
    body = page.body
    mine, theirs = heading(page), heading(old) if old is not None else None
    if "title" in keys and mine is not None and theirs is not None:
        # the "# heading" says the title: it goes back with it
        lines = body.split("\n")
        lines[mine[0] - page.body_line] = f"# {theirs[1]}"
        body = "\n".join(lines)
    return replace(page, meta=meta, raw_meta=None, body=body)


def _with_sources(page: Page, body: str) -> str:
    """``page`` with ``body``, less the ``sources`` entries only the dropped lines cited."""
    dropped = {int(n) for n in CITE_RE.findall(page.body)} - {int(n) for n in CITE_RE.findall(body)}
    sources = Sources(page.meta.get("sources"))
    if dropped:
        sources.keep_only({n for n in sources.ids() if isinstance(n, int)} - dropped)
    if not sources.changed:
        return render_page(page.with_body(body))
    meta = {k: v for k, v in page.meta.items() if k != "sources"}
    return page_text(None, meta, body, sources)


# -- names and culprits -----------------------------------------------------------------


def _read(stage: Stage, path: str) -> Page | None:
    try:
        text = (stage.path / path).read_text(encoding="utf-8")
        return load_page_text(text, path.removeprefix("memory/"), memo=False)
    except (OSError, UnicodeDecodeError, PageError, ValueError):
        return None


def _key(target: str) -> str:
    return target.split("#", 1)[0].strip().lower()


def _links(text: str) -> Iterable[str]:
    return (m.group(1) for m in WIKILINK_RE.finditer(text))


def _names(page: Page, path: str) -> set[str]:
    """What a ``[[link]]`` may name this page by: id, file name, aliases (lower case)."""
    names = {page.id.lower(), PurePosixPath(path).stem.lower()}
    names |= {a.lower() for a in page.aliases}
    return names - {""}


def _culprits(
    store: Store, stage: Stage, changes: Sequence[Change], problems: list[Problem]
) -> dict[str, tuple[Change, Problem]]:
    """The changed pages behind problems on files the run did not change: those whose
    names, before or after the run, meet the file's names or link targets."""
    wanted: dict[str, set[str]] = {}
    for p in problems:
        if p.path not in wanted:
            page = staged_page(stage.path, p.path) if p.path.startswith(_PAGE_DIRS) else None
            keys = set() if page is None else _names(page, p.path)
            keys |= {_key(link.target) for link in extract_links(page.body)} if page else set()
            wanted[p.path] = keys
    out: dict[str, tuple[Change, Problem]] = {}
    for change in changes:
        if not change.path.startswith(_PAGE_DIRS):
            continue
        names: set[str] = set()
        for page in (
            base_page(store, stage.base, change.path) if change.status != "A" else None,
            staged_page(stage.path, change.path) if change.status != "D" else None,
        ):
            if page is not None:
                names |= _names(page, change.path)
        for p in problems:
            if wanted[p.path] & names:
                out.setdefault(change.path, (change, p))
    return out


# -- after the landing ------------------------------------------------------------------


def put_back(
    store: Store,
    stage: Stage,
    reduction: Reduction,
    reduced: str,
    landed: str,
    left_out: Sequence[str],
) -> str:
    """Commit on the stage's branch (at ``landed``, the tip the run's ``reduced`` commit
    landed as) the files ``reduction`` touched as the engine wrote them, the indexes
    rendered again; ``left_out``: the items, for the message. Returns the commit ("" when
    nothing differs). A file the moved tip changed (a rebase carried the run onto it)
    keeps what landed: the branch never undoes someone else's edit."""
    touched, tree = list(reduction.touched), reduction.full_tree
    moved: set[str] = set()
    if landed != reduced:
        out = run_git(stage.path, "diff", "--name-only", "-z", reduced, landed, "--", *touched)
        moved = set(out.split("\0"))
    listed = run_git(stage.path, "ls-tree", "-r", "-z", "--name-only", tree, "--", *touched)
    present = set(listed.split("\0"))
    for path in touched:
        if path in moved:
            continue
        if path in present:
            run_git(stage.path, "checkout", tree, "--", path)
        else:
            run_git(stage.path, "rm", "-q", "--ignore-unmatch", "--", path)
    stage.write_indexes(store)
    if not stage_changes(stage, against="HEAD"):
        return ""
    lines = [
        f"dream: what run {stage.run_id} left out, put back for review",
        "",
        "On top of what landed, for 'dream review' (and 'dream apply' once fixed).",
        "",
        *left_out_section(left_out),
        f"Dream-Run: {stage.run_id}",
    ]
    return commit_stage(store, stage, "\n".join(lines) + "\n")
