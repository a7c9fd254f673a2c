"""The documented Python API: what a program calls on an opened store.

Open a store and call it; every method is one call into the module that does the
work (``memoryfs.read.search``, ``memoryfs.read.recall``, ``memoryfs.ingest``, ...),
the same call the ``memoryfs`` command and the MCP server (``memoryfs mcp``) make,
with the same budgets (``memory.toml`` ``[budgets]`` when not given) and receipts.
Every error a caller can cause is a ``memoryfs.MemoryFSError`` with a one-line message.
Dream, the worker that consolidates what was ingested, is ``dream.run(store)``.

>>> import tempfile, memoryfs
>>> store = memoryfs.init_store(tempfile.mkdtemp() + "/store", "dana", "atlas", "Dana Reyes")
>>> chat = [
...     {"role": "user", "content": "I moved to Porto last month.", "ts": "2026-03-02T09:00"},
...     {"role": "assistant", "content": "Noted: you live in Porto now."},
... ]
>>> added = store.ingest(chat, session_id="2026-03-02-moving")
>>> added.changed, added.turns_added
(1, 2)
>>> [hit.ref for hit in store.search("Porto", k=2)]
['sessions/transcripts/2026-03-02-moving.md#t1', 'sessions/transcripts/2026-03-02-moving.md#t2']
>>> memoryfs.open_store(store.root).root == store.root
True

The methods and their CLI twins: ``search`` (``memoryfs search``), ``recall``
(``memoryfs recall``), ``read`` (one file or turn), ``show`` (``memoryfs show``: one file by
name, a section, a token budget), ``prompt_index`` (``memoryfs index
--prompt``), ``ingest`` (``memoryfs ingest``), ``materialize`` (``memoryfs
materialize``) and ``record_use`` (``memoryfs used``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from memoryfs.ingest.commit import IngestResult
    from memoryfs.ingest.source import Source
    from memoryfs.read.file_text import FileText
    from memoryfs.read.materialize import MaterializeResult
    from memoryfs.read.recall import RecallResult
    from memoryfs.read.search import Hit
    from memoryfs.receipts.records import Receipt
    from memoryfs.store.store import Store

    Inputs = Path | str | Source | Sequence[Path | str | Source] | Sequence[Mapping[str, Any]]

__all__ = ["StoreAPI", "open_store", "MAX_HITS"]

MAX_HITS = 1000  # the most hits one search returns (``memoryfs search -k``)


def open_store(path: Path | str | None = None) -> Store:
    """The store at ``path``, else ``$MEMORYFS_STORE``, else the nearest folder up from the
    current one that holds ``memory.toml`` (the ``--store`` rule of every command)."""
    from memoryfs.store.store import find_store

    return find_store(path)


def _layers(layer: str | Sequence[str] | None) -> tuple[str, ...]:
    from memoryfs.errors import MemoryFSError
    from memoryfs.store.store import LAYERS

    chosen = (layer,) if isinstance(layer, str) else tuple(layer or ())
    bad = sorted(set(chosen) - set(LAYERS))
    if bad:
        raise MemoryFSError(f"unknown layer(s) {', '.join(bad)} (use {', '.join(LAYERS)})")
    return chosen


def _store(api: StoreAPI) -> Store:
    """``Store`` is the one class with these calls (a mixin cannot name its subclass as
    ``self``'s type, so the type checker is told here)."""
    return cast("Store", api)


class StoreAPI:
    """The calls a program makes on a ``memoryfs.Store`` (which inherits them)."""

    def search(
        self,
        query: str,
        k: int = 10,
        layer: str | Sequence[str] | None = None,
        mode: str | None = None,
    ) -> list[Hit]:
        """Search over every layer (or the ``layer`` named: ``knowledge``, ``notes``,
        ``sessions``), best hits first; the search cache is brought up to date first. A
        hit's ``ref`` is ``path:line``, or ``path#tN`` for a turn. ``mode``: ``lexical``
        (full text), ``dense`` (by meaning) or ``hybrid`` (both fused); the default is
        hybrid when ``[embed]`` is configured in ``memory.toml``, else lexical.

        >>> hit = store.search("moved Porto", k=1)[0]
        >>> hit.ref, hit.layer, hit.date
        ('sessions/transcripts/2026-03-02-moving.md#t1', 'sessions', '2026-03-02')
        >>> store.search("Porto", layer="knowledge")
        []
        """
        from memoryfs.errors import MemoryFSError
        from memoryfs.read.dense import Dense, hybrid_search, search_mode
        from memoryfs.read.search import SearchIndex

        layers = _layers(layer) or None
        if not 1 <= k <= MAX_HITS:
            raise MemoryFSError(f"k must be between 1 and {MAX_HITS}, got {k}")
        store = _store(self)
        mode = search_mode(store, mode)
        with SearchIndex.open(store) as idx:
            idx.refresh_for_read()
            if mode == "lexical":
                return idx.search(query, k=k, layers=layers)
            dense = Dense.open(store, idx)
            assert dense is not None  # search_mode checked [embed]
            with dense:
                if mode == "dense":
                    return dense.search(query, k, layers)
                return hybrid_search(idx, dense, query, k, layers)

    def recall(
        self,
        question: str,
        budget_tokens: int | None = None,
        *,
        exclude_layers: Sequence[str] = (),
        into: Path | str | None = None,
        mode: str | None = None,
    ) -> RecallResult:
        """The Memory Agent: a short synthesis of what the store knows about
        ``question``, one cited line per item, within ``budget_tokens`` (default:
        ``memory.toml``'s ``recall_tokens``). With ``into`` the supporting files are
        materialized into that sandbox. Pages drawn on get ``recalled`` receipts.
        ``mode``: how candidates are first found, as ``search``'s.

        >>> result = store.recall("Where does Dana live?", budget_tokens=200)
        >>> print(result.text)
        2 March 2026 · Dana Reyes: I moved to Porto last month. [moving#t1]
        2 March 2026 · Atlas: Noted: you live in Porto now. [moving#t2]
        >>> result.files
        ('sessions/transcripts/2026-03-02-moving.md',)
        >>> sorted(result.to_json())  # what ``memoryfs recall --json`` prints
        ['budgetTokens', 'files', 'into', 'items', 'question', 'text', 'tokens']
        """
        from memoryfs.read.recall import recall

        store = _store(self)
        budget = store.config.budgets.recall_tokens if budget_tokens is None else budget_tokens
        target = Path(into) if into is not None else None
        return recall(
            store, question, budget, exclude_layers=_layers(exclude_layers), into=target, mode=mode
        )

    def read(self, path: str, lines: str | None = None) -> FileText:
        """One Markdown file under ``memory/`` by its path (a page, a note, a summary or a
        transcript), ``path#tN`` for one turn, ``lines`` ("12", "12-30", "12-") for a
        slice. Paths that leave ``memory/`` (``..``, absolute, a symlink out) are refused.

        >>> print(store.read("sessions/transcripts/2026-03-02-moving.md#t2").text, end="")
        ## t2 · assistant · 2026-03-02T09:00
        <BLANKLINE>
        Noted: you live in Porto now.
        >>> store.read("../memory.toml")
        Traceback (most recent call last):
        memoryfs.errors.MemoryFSError: path '../memory.toml' is not a path inside memory/ ...
        """
        from memoryfs.read.file_text import read_file

        return read_file(_store(self), path, lines)

    def show(
        self,
        name: str,
        section: str | None = None,
        max_tokens: int | None = None,
        lines: str | None = None,
    ) -> FileText:
        """One file by name: a path under ``memory/`` (``.md`` optional, ``#tN`` for a
        turn), a page id, an alias or title (any case) or a session id; a ``section``
        of a page (headings equal to it, else starting with it), cut at a line to
        ``max_tokens``. A cut page lists only the sources its shown lines cite.

        >>> print(store.show("2026-03-02-moving#t1").text, end="")
        ## t1 · user · 2026-03-02T09:00
        <BLANKLINE>
        I moved to Porto last month.
        >>> got = store.show("2026-03-02-moving", max_tokens=50)
        >>> print(got.text, end="")
        ## t1 · user · 2026-03-02T09:00
        <BLANKLINE>
        I moved to Porto last month.
        <!-- cut to 50 tokens; not shown: the frontmatter, lines 18-20 -->
        """
        from memoryfs.read.show import show

        return show(_store(self), name, section, max_tokens, lines)

    def prompt_index(self, max_tokens: int | None = None) -> str:
        """``INDEX.md`` cut to ``max_tokens`` (default: ``memory.toml``'s ``index_tokens``),
        most useful entries first: the prefill for an agent's first message.

        >>> print(store.prompt_index(60))  # doctest: +ELLIPSIS
        # Memory index
        ...
        """
        from memoryfs.errors import MemoryFSError
        from memoryfs.index.index_md import prompt_index

        store = _store(self)
        budget = store.config.budgets.index_tokens if max_tokens is None else max_tokens
        if budget < 1:
            raise MemoryFSError("the index budget must be at least 1 token")
        return prompt_index(store, budget)

    def ingest(
        self,
        inputs: Inputs,
        fmt: str | None = None,
        session_id: str | None = None,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> IngestResult:
        """Append sessions to ``memory/sessions/transcripts/`` and commit, for the next
        Dream run. ``inputs``: a path, a list of paths (chat logs, transcripts, exports:
        ``fmt`` names the format when the name and content do not), or a list of
        messages ``{"role", "content", "ts"}`` (``ts`` optional). ``session_id`` names
        the one session the input holds. Transcripts only grow: the same input again
        changes nothing. ``progress(phase, done, total)``: inputs read, transcripts
        written. A store with a remote fetches first and pushes the commit
        (``memoryfs.remote``).

        >>> again = store.ingest(chat, session_id="2026-03-02-moving")
        >>> again.changed, again.commit
        (0, '')
        """
        from memoryfs.ingest.commit import ingest
        from memoryfs.ingest.source import Source
        from memoryfs.remote import remote_writes

        items: list[Path | str | Source]
        if isinstance(inputs, Path | str | Source):
            items = [inputs]
        elif inputs and all(isinstance(m, Mapping) for m in inputs):
            items = [Source.from_messages(inputs)]  # type: ignore[arg-type]
            fmt = fmt or "openai"
        else:
            items = list(inputs)  # type: ignore[arg-type]
        store = _store(self)
        with remote_writes(store):  # a clone of a remote: pull first, push what it commits
            return ingest(store, items, fmt, session_id, progress)

    def materialize(self, to: Path | str, budget_bytes: int | None = None) -> MaterializeResult:
        """Lay ``INDEX.md`` and the most useful pages within ``budget_bytes`` (default:
        ``memory.toml``'s ``materialize_bytes``) into the sandbox ``to``, at their paths
        in the store, with a manifest; a second call copies only what changed.

        >>> sandbox = tempfile.mkdtemp()
        >>> done = store.materialize(sandbox)
        >>> [e.path for e in done.files]  # no pages before Dream's first run: the maps
        ['memory/INDEX.md', 'memory/sessions/index.md']
        >>> store.materialize(sandbox).copied
        ()
        """
        from memoryfs.read.materialize import materialize

        return materialize(_store(self), Path(to), budget_bytes)

    def record_use(
        self, paths: Sequence[str], outcome: str = "", sandbox: Path | str | None = None
    ) -> list[Receipt]:
        """``used`` receipts: the agent relied on these pages (paths relative to
        ``memory/``) as read from ``sandbox``, or from the store itself when no sandbox
        is given. ``outcome``: ``test:pass``, ``test:fail``, ``file:<hex>``,
        ``commit:<hex>`` or "" (see ``memoryfs used``). Only pages have a lineage:

        >>> store.record_use(["sessions/transcripts/2026-03-02-moving.md"])
        Traceback (most recent call last):
        memoryfs.errors.MemoryFSError: sessions/transcripts/2026-03-02-moving.md is not a page ...
        """
        from memoryfs.receipts.reads import record_use

        folder = Path(sandbox) if sandbox is not None else None
        return record_use(_store(self), folder, paths, outcome)
