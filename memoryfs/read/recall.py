"""The Memory Agent: answer a question from the whole store within a token budget.

``recall`` searches every layer (the question, then the question expanded from
its best items: ``memoryfs.read.expand``), follows one hop of ``[[links]]`` from the
best pages, weighs what the speakers a question names said above what others
said (``memoryfs.read.voice``) and, for a question asking when, items stating a date
above others (``memoryfs.read.when``), and for a question asking where someone works or
lives now, the newest current item saying so (``memoryfs.read.situation``), follows the
citations of the best claims to the
transcript turns they cite, and writes a compact synthesis: one line per item,
best first, dated, with where it lives and what it cites, each line adding
evidence or words to those above it (``memoryfs.read.packing``). Locations are short
names resolved by file name (``s01#t3`` for a transcript turn, ``caroline:14``
for a page line; see ``memoryfs.read.locations``), so the budget goes to evidence rather than
repeated paths. With ``into`` the supporting files are materialized into a
sandbox (``memoryfs.read.materialize``; for a sandbox materialized from a Git server,
fetched from that server at the sandbox's commit: ``memoryfs.remote.sandbox``).
Each page drawn on gets a ``recalled`` receipt at the version the index served it
from (``memoryfs.receipts.reads``), in the sandbox or the store's ``.memoryfs/receipts/``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

from memoryfs.errors import MemoryFSError
from memoryfs.index.units import human_date
from memoryfs.pages.archives import Families, main_stem
from memoryfs.pages.speakers import asked_in_third_person
from memoryfs.read.dense import Dense, hybrid_search, search_mode
from memoryfs.read.expand import feedback_terms, fuse
from memoryfs.read.locations import FileNames
from memoryfs.read.packing import Packer, content_words, covered, elide
from memoryfs.read.ranking import excerpt, query_terms
from memoryfs.read.search import SUPERSEDED_WEIGHT, Hit, SearchIndex, check_query
from memoryfs.read.situation import SLOT_WORDS, asked_names, asked_slot, situation_weights
from memoryfs.read.voice import voice_weights
from memoryfs.read.when import when_weights
from memoryfs.receipts.log import local_receipt_dir, sandbox_receipt_dir
from memoryfs.receipts.reads import record_reads
from memoryfs.store.store import LAYERS, Store
from memoryfs.store.tokens import count_tokens

__all__ = ["RecallItem", "RecallResult", "recall", "KIND_WEIGHTS"]

# Distilled, dated claims are worth a little more per token than raw turns when
# they match as well; prose passages a little less, and page heads (a page's
# summary: what it is about, not evidence) least. A profile line (a person's things
# in one facet, each with its citations: ``memoryfs.index.units``) answers "what does X
# do" across sessions but names a dozen sessions: ranked below them, the claims a
# question names come first. LoCoMo tuning conversations (conv-26/30), wiki arm,
# 1,000 tokens, S@5 / EvC / multi-hop EvC: no profile .893/.852/.647; a profile of two
# citations a thing read as a claim (1.1) .852/.861/.684 (its sessions crowd the top five),
# five citations at 0.9 .854/.863/.694; the profile as built (four citations a thing, the
# page's head dropped when a profile line shows) at 0.7 .890/.862/.688, at 0.6
# .892/.861/.684 (bench/QUALITY_LOG.md, "Cited profile").
PROFILE_WEIGHT = 0.6
KIND_WEIGHTS = {
    "claim": 1.1,
    "summary": 1.1,
    "turn": 1.0,
    "head": 0.5,
    "passage": 0.9,
    "profile": PROFILE_WEIGHT,
}
FEEDBACK_WEIGHT = 0.5  # the feedback search's weight in the fusion (the question's own: 1)
SITUATION_WEIGHT = 1.0  # the weight of the search for a slot's words (memoryfs.read.situation)
LINK_DECAY = 0.6  # items found one [[link]] hop away from the best pages
FOLLOW_PAGES = 3  # best pages whose links are followed
FOLLOW_CLAIMS = 1  # best claims whose cited turns are shown under them
# A superseded claim among the best brings up what superseded it (``_replaced_first``):
# the current claims its page holds of the day it was superseded, at most this many each,
# for the best this many superseded claims.
REPLACING = 3
FOLLOW_SUPERSEDED = 5
_SUPERSEDED_ON_RE = re.compile(r"\(superseded on (\d{4}-\d{2}-\d{2})\)")
CITES_PER_CLAIM = 2
MAX_MISSES = 40  # stop filling after this many items in a row did not fit
_TRANSCRIPTS = "sessions/transcripts/"
_NORM_RE = re.compile(r"\W+")
_MARKED_RE = re.compile(r"\(superseded[^()]*\)$")  # "(superseded)", "(superseded on 2026-01-20)"


@dataclass(frozen=True)
class RecallItem:
    """One line of a recall synthesis."""

    path: str  # relative to memory/
    line: int
    layer: str  # knowledge | notes | sessions
    kind: str  # claim | passage | turn | summary
    text: str  # as shown (a turn is "Speaker: text")
    citations: tuple[str, ...]  # transcript refs "sessions/transcripts/<id>.md#tN"
    date: str  # ISO date when known
    score: float


@dataclass(frozen=True)
class RecallResult:
    question: str
    items: tuple[RecallItem, ...]  # best first, exactly what ``text`` shows
    text: str  # the synthesis, within the budget (memoryfs.store.tokens.count_tokens)
    tokens: int
    files: tuple[str, ...]  # supporting files, relative to memory/
    budget_tokens: int = 0  # the budget ``text`` was packed within
    into: str | None = None  # the sandbox the files were materialized into (absolute)

    def to_json(self) -> dict[str, object]:
        """The result as ``memoryfs recall --json`` prints it."""
        return {
            "question": self.question,
            "budgetTokens": self.budget_tokens,
            "tokens": self.tokens,
            "text": self.text,
            "items": [asdict(item) for item in self.items],
            "files": list(self.files),
            "into": self.into,
        }


@dataclass
class _Entry:
    hit: Hit
    score: float
    follower: bool = False  # a cited turn shown under its claim
    parent_date: str = ""  # a follower's claim date (not repeated when the same)


def recall(
    store: Store,
    question: str,
    budget_tokens: int = 1500,
    *,
    exclude_layers: Sequence[str] = (),
    into: Path | None = None,
    mode: str | None = None,
) -> RecallResult:
    """Search, expand and compress what the store knows about ``question``. ``mode``:
    ``lexical``, ``dense`` or ``hybrid`` first-stage retrieval (``memoryfs.read.dense``;
    default: hybrid when ``[embed]`` is configured, else lexical)."""
    check_query(store, question, "question")
    unknown = set(exclude_layers) - set(LAYERS)
    if unknown:
        raise MemoryFSError(
            f"unknown layer(s) {', '.join(sorted(unknown))} (use {', '.join(LAYERS)})"
        )
    if budget_tokens < 1:
        raise MemoryFSError("the recall budget must be at least 1 token")
    layers = tuple(layer for layer in LAYERS if layer not in exclude_layers)
    # "Where do I live?" asks about the store's user: search for them by name
    asked = asked_in_third_person(question, store.config.roster)
    terms = query_terms(asked)
    mode = search_mode(store, mode)
    with SearchIndex.open(store) as idx:
        idx.refresh_for_read()
        dense = Dense.open(store, idx) if mode != "lexical" else None
        try:
            families = _families(idx)
            user = store.config.roster.user_name
            entries = _gather(idx, asked, layers, budget_tokens, families, user, dense, mode)
        finally:
            if dense is not None:
                dense.close()
        served = idx.versions([e.hit.path for e in entries])
        max_item = min(150, max(40, budget_tokens // 5))
        names = FileNames(idx, families)
        items, text = _fit(entries, terms, budget_tokens, max_item, names, store.config.roster.name)
    # Supporting files: where each item lives, then the transcripts its claims cite.
    files = tuple(
        dict.fromkeys(
            [item.path for item in items]
            + [ref.split("#", 1)[0] for item in items for ref in item.citations]
        )
    )
    if into is not None and files:
        from memoryfs.read.sandbox import manifest_head

        if manifest_head(Path(into).expanduser().resolve()).url:
            # a sandbox from a Git server grows from there, at its own commit
            from memoryfs.remote.sandbox import add_files as add_from_url

            add_from_url(into, list(files), reason="recall")
        else:
            from memoryfs.read.materialize import add_files

            add_files(store, into, list(files), reason="recall")
    sandbox = Path(into).expanduser().resolve() if into is not None else None
    log = sandbox_receipt_dir(sandbox) if sandbox is not None else local_receipt_dir(store.root)
    config = {"budgetTokens": budget_tokens, "layers": list(layers)}
    record_reads(store, log, "recalled", {p: served[p] for p in files if p in served}, config)
    return RecallResult(
        question=question,
        items=tuple(items),
        text=text,
        tokens=count_tokens(text),
        files=files,
        budget_tokens=budget_tokens,
        into=str(sandbox) if sandbox is not None else None,
    )


def _gather(
    idx: SearchIndex,
    question: str,
    layers: tuple[str, ...],
    budget: int,
    families: Families,
    user: str = "",
    dense: Dense | None = None,
    mode: str = "lexical",
) -> list[_Entry]:
    """Candidates best first, each claim followed by the turns it cites."""
    k = max(40, budget // 12)
    terms = query_terms(question)
    # A page and its archives say what they are about once, in the page's head (an
    # archive's head would cost a line and make feedback take the words it shares).
    # With vectors, the first stage also ranks units by meaning (memoryfs.read.dense).
    if dense is None or mode == "lexical":
        first = idx.search(question, k=k, layers=layers)
    elif mode == "dense":
        first = dense.search(question, k, layers)
    else:
        first = hybrid_search(idx, dense, question, k, layers, depth=k)
    hits = _one_head(first, families)
    # Pseudo-relevance feedback: the question plus words of its best distilled
    # items finds what the question names in other words (memoryfs.read.expand).
    extra = feedback_terms(hits, terms)
    rankings, fusion = [hits], [1.0]
    if extra:
        rankings.append(
            _one_head(idx.search(" ".join([question, *extra]), k=k, layers=layers), families)
        )
        fusion.append(FEEDBACK_WEIGHT)
    # A question asking where someone works or lives, or whom they report to, also
    # searches the words the claims stating it use (memoryfs.read.situation).
    slot = asked_slot(question)
    if slot:
        words = [*asked_names(question), *SLOT_WORDS[slot]]
        rankings.append(_one_head(idx.search(" ".join(words), k=k, layers=layers), families))
        fusion.append(SITUATION_WEIGHT)
    if len(rankings) > 1:
        hits = fuse(rankings, fusion, k)
    scored = [_Entry(h, h.score * KIND_WEIGHTS.get(h.kind, 1.0)) for h in hits]
    # A page and its archives count as one page (memoryfs.pages.archives): the best pages
    # are the best families, their links are the main page's, and a linked page is
    # searched with its archives.
    best_pages = list(
        dict.fromkeys(families.main_of(h.path) for h in hits if h.layer in ("knowledge", "notes"))
    )[:FOLLOW_PAGES]
    if best_pages:
        own = {p for page in best_pages for p in families.members(page)}
        linked = [
            p
            for p in families.with_archives(idx.linked(best_pages))
            if p not in own and p.split("/")[0] in layers
        ]
        for h in _one_head(idx.search_in(question, linked, k=12), families):
            scored.append(_Entry(h, h.score * KIND_WEIGHTS.get(h.kind, 1.0) * LINK_DECAY))
        # A linked page that matches no query word still says what it is.
        floor = min((e.score for e in scored), default=0.0) * LINK_DECAY
        pages = [p for p in linked if not families.is_archive(p)]
        for path in pages[: FOLLOW_PAGES * 2]:
            head = idx.head(path)
            if head is not None:
                scored.append(_Entry(head, floor))
    # A question naming speakers is answered by what they said (memoryfs.read.voice).
    # Cited turns are looked up once, for their speaker here and to show under a claim below.
    turns: dict[str, Hit | None] = {e.hit.ref: e.hit for e in scored if e.hit.kind == "turn"}

    def turn_of(ref: str) -> Hit | None:
        if ref not in turns:
            turns[ref] = idx.turn(ref)
        return turns[ref]

    def speaker_of(ref: str) -> str:
        turn = turn_of(ref)
        return turn.speaker if turn is not None else ""

    weights = voice_weights(question, [e.hit for e in scored], speaker_of)
    for entry, w in zip(scored, weights, strict=True):
        entry.score *= w
    # A question asking when is answered by an item that states a date (memoryfs.read.when).
    for entry, w in zip(scored, when_weights(question, [e.hit.text for e in scored]), strict=True):
        entry.score *= w
    # ... and one asking where someone works (lives, reports) now, by the newest current
    # item that says so (memoryfs.read.situation).
    situation = situation_weights(question, [e.hit for e in scored], user)
    for entry, w in zip(scored, situation, strict=True):
        entry.score *= w
    # A page head whose summary repeats a claim says less than the claim (which
    # is dated and cited): keep the claim.
    claims = [content_words(e.hit.text) for e in scored if e.hit.kind in ("claim", "summary")]
    # Nor does the head of a page whose cited profile (``PROFILE_SECTION``) is here.
    profiled = {families.main_of(e.hit.path) for e in scored if e.hit.kind == "profile"}
    scored = [
        e
        for e in scored
        if e.hit.kind != "head"
        or (
            families.main_of(e.hit.path) not in profiled
            and not any(covered(content_words(e.hit.text), c) for c in claims)
        )
    ]
    scored = _replaced_first(idx, scored)
    out: list[_Entry] = []
    followed = 0
    follow_turns = "sessions" in layers
    for entry in scored:
        out.append(entry)
        hit = entry.hit
        if not follow_turns or hit.kind in ("turn", "profile") or not hit.citations:
            continue  # a profile's citations are its things' first mentions, not its answer
        if followed >= FOLLOW_CLAIMS:
            continue
        followed += 1
        for ref in hit.citations[:CITES_PER_CLAIM]:
            if not ref.startswith(_TRANSCRIPTS):
                continue
            turn = turn_of(ref)
            if turn is not None:
                out.append(_Entry(turn, entry.score * 0.95, True, hit.date))
    return out


def _replaced_first(idx: SearchIndex, scored: list[_Entry]) -> list[_Entry]:
    """``scored`` best first, each superseded claim among the best preceded by the claims
    that superseded it: a claim marked ``(superseded on <day>)`` was replaced by a current
    claim its page holds of that day, which takes the rank the old one would have had were
    it current. "Who is my manager now?" finds the old manager by the word "manager"; the
    claim that replaced it ("Since the reorg Dana reports to Marco Bellini") may share no
    word with the question, and it is the answer."""
    scored.sort(key=lambda e: (-e.score, e.hit.path, e.hit.line))
    old = [
        (e, m.group(1))
        for e in scored
        if e.hit.superseded
        and e.hit.kind == "claim"
        and (m := _SUPERSEDED_ON_RE.search(e.hit.text))
    ][:FOLLOW_SUPERSEDED]
    if not old:
        return scored
    by_ref = {e.hit.ref: e for e in scored}
    for entry, day in old:
        rank = entry.score / SUPERSEDED_WEIGHT
        for hit in idx.current_claims(entry.hit.path, day, REPLACING):
            found = by_ref.get(hit.ref)
            if found is None:
                by_ref[hit.ref] = found = _Entry(hit, rank)
                scored.append(found)
            found.score = max(found.score, rank)
    scored.sort(key=lambda e: (-e.score, e.hit.path, e.hit.line))
    return scored


def _one_head(hits: list[Hit], families: Families) -> list[Hit]:
    """``hits`` without archives' heads: a page says what it is about in its own head."""
    return [h for h in hits if h.kind != "head" or not families.is_archive(h.path)]


def _norm(text: str) -> str:
    return _NORM_RE.sub(" ", text.lower()).strip()[:240]


def _families(idx: SearchIndex) -> Families:
    """Archives and their pages among the indexed files, asked of the index by name."""
    archives = idx.paths_named_like("-archive-")
    mains = sorted({m for m in map(main_stem, archives) if m is not None})
    return Families([*archives, *idx.versions(mains)])


def _fit(
    entries: list[_Entry],
    terms: list[str],
    budget: int,
    max_item: int,
    name: FileNames,
    speaker_name: Callable[[str], str] = str,
) -> tuple[list[RecallItem], str]:
    """Greedy, best first: every line that fits and adds something goes in (memoryfs.read.packing).
    ``speaker_name``: how a turn's speaker is shown (the store's names for its roles)."""
    pack = Packer(budget)
    seen_texts: set[str] = set()
    misses = 0
    for entry in entries:
        hit = entry.hit
        body = hit.text
        if hit.kind == "head":
            if not body or body == hit.title:
                continue  # a bare title says nothing the path does not
            body = f"{hit.title}: {body}"
        shown = excerpt(body, terms, max_item)
        if hit.kind == "turn":  # the sentences a claim shown above does not say
            cut = elide(shown, pack.said_on(hit))
            if not cut:
                continue
            body = shown = cut
        if hit.speaker:
            shown = f"{speaker_name(hit.speaker)}: {shown}"
        key = _norm(shown)
        if key in seen_texts:
            continue
        done = pack.offer(
            hit,
            shown,
            content_words(body),
            entry.score,
            partial(_render, shown=shown, entry=entry, name=name),
            entry.follower,
        )
        if done is False:
            misses += 1
            if misses >= MAX_MISSES:
                break
            continue
        if done:
            misses = 0
            seen_texts.add(key)
    items = [
        RecallItem(
            path=p.hit.path,
            line=p.hit.line,
            layer=p.hit.layer,
            kind="summary" if p.hit.kind == "head" else p.hit.kind,
            text=p.shown,
            citations=p.hit.citations,
            date=p.hit.date,
            score=round(p.score, 6),
        )
        for p in pack.lines
    ]
    return items, "\n".join(p.line for p in pack.lines)


def _render(hit: Hit, shown: str, entry: _Entry, name: FileNames) -> str:
    if hit.anchor:
        where = f"{name(hit.path)}#{hit.anchor}"
    else:
        # turns of one transcript are named once: "s11#t4,t5", not "s11#t4, s11#t5"
        turns: dict[str, list[str]] = {}
        for ref in hit.citations:
            if "#" in ref:
                path, anchor = ref.split("#", 1)
                turns.setdefault(name(path), []).append(anchor)
        cites = [f"{file}#{','.join(anchors)}" for file, anchors in turns.items()]
        # A cited claim is found by its page and its evidence; its line number would
        # only cost tokens (``--json`` has it), and so would the name of the archive
        # it was rolled into (the page links its archives).
        where = (
            f"{name.page(hit.path)} cites {', '.join(cites)}"
            if cites
            else f"{name(hit.path)}:{hit.line}"
        )
    # A head is a page's summary: its "updated" date is about the file, not the fact.
    quiet = hit.kind in ("head", "profile") or (entry.follower and hit.date == entry.parent_date)
    date = "" if quiet else human_date(hit.date)
    prefix = "  ↳ " if entry.follower else ""
    # said once: a superseded claim's own text often ends with the marker already
    stale = " (superseded)" if hit.superseded and not _MARKED_RE.search(shown) else ""
    return f"{prefix}{date + ' · ' if date else ''}{shown}{stale} [{where}]"
