"""The model judge: do a claim's cited turns entail it? Asked of a chat model.

Job: the second half of the semantic gate's check of a new or changed claim
(``dream.gates.verification``). The deterministic floor checks its names, numbers and
dates; the judge asks an OpenAI-compatible chat model (through
``dream.engines.llm.client``) whether the cited turns, taken together, say what the
claim says. Claims go ``batch`` to a request, each under an id ("c1", "c2", ...); the
reply must be one JSON object with exactly one verdict per id -- ``yes``, ``no`` or
``unclear`` -- and a short reason (``parse_verdicts``), or the whole batch is malformed.
"no" is DV301 and "unclear" DV302: only "yes" passes.

Verdicts are cached in ``.memoryfs/dream-judge.sqlite`` by (digest of the claim and the
page it is on, the cited turns' refs and hashes, the model); a change to the prompt
starts the cache anew. Only definite verdicts are kept: an unchanged claim is never
asked again, and a claim the judge could not answer is asked on the next run.

The judge never fails a run. A timeout, a refused connection, an HTTP error or a
malformed reply leaves that batch's claims to the deterministic floor alone (they pass
when it passes): counted as ``judge_fallback``, logged on stderr, and summed up in the
run's result (``Judge.summary``). After a transport failure the endpoint is not asked
again in that run, so a run waits at most one timeout for a dead endpoint (requests
are not retried); a claim that fell back is not asked again in that run either (the
gates run again after a leave-out and after a rebase).

Configured by ``[verify]`` in ``memory.toml`` (``memoryfs.store.config.VerifySettings``) and,
with ``--engine llm``, by the engine's endpoint (``judge_for``).

Boundary: claims and turns in, verdicts and gate problems out. Which claims are asked
is the gate's; what a rejected claim costs the run is ``dream.landing.leaveout``'s.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dream.errors import DreamError
from dream.gates import Problem
from memoryfs.pages.transcript import Transcript, Turn
from memoryfs.store import cache_db
from memoryfs.store.store import Store

if TYPE_CHECKING:  # imported when a judge is built: ``dream.engines`` imports the gates
    from dream.engines.llm.client import ChatClient, LLMSettings

__all__ = [
    "CODES",
    "STATS",
    "CitedTurn",
    "Item",
    "Verdict",
    "Pending",
    "Malformed",
    "Judge",
    "judge_for",
    "messages_for",
    "parse_verdicts",
]

log = logging.getLogger("dream.judge")

NAME = "dream-judge.sqlite"
VERSION = 1  # the cache's layout; the prompt is part of its version too (``_version``)
DEFAULT_TIMEOUT = 60.0  # seconds per request, unless [verify] or the llm engine says
CODES = {"no": "DV301", "unclear": "DV302"}
VERDICTS = ("yes", "no", "unclear")
STATS = ("claims_judged", "judge_cached", "judge_fallback", "judge_rejected")
_CHUNK = 200  # pending claims resolved to items at a time: memory stays bounded
_MAX_TURN = 6000  # characters of one turn in the prompt
_MAX_REASON = 200

SYSTEM = """\
You check the claims of a memory store against the conversation turns they cite.
For each item, decide whether the cited turns, taken together, entail the claim:
everything the claim states (who did or said what, to or with whom, what, whether or
not, how many, when) is said by the turns or follows directly from them.

- "I" in a turn is its speaker; the speaker is named before the turn's text.
- A claim may leave out its subject when that is the page it is on ("Works as a nurse."
  on the page of Marta says that Marta works as a nurse).
- A claim may give a date that a turn says relatively ("last Saturday"), resolved
  against the turn's date.

Answer "yes" when the turns entail the claim; "no" when they contradict it or say
something else (another person, the opposite, a different thing, place, number or
time, or nothing about it); "unclear" when they neither clearly entail nor contradict it.

Reply with one JSON object and nothing else:
{"verdicts": [{"id": "<item id>", "verdict": "yes" | "no" | "unclear",
               "reason": "<one short sentence>"}]}
with exactly one entry for each item id."""


@dataclass(frozen=True)
class CitedTurn:
    """A turn as the judge shows it."""

    ref: str  # sessions/transcripts/<id>.md#t3
    hash: str  # the turn's hash (``memoryfs.store.hashing.turn_hash``)
    speaker: str  # the speaker's name, with the role when the name is not the label
    ts: str  # the turn's time, or its session's date
    text: str


@dataclass(frozen=True)
class Item:
    """One claim for the judge: its text, the page it is on, the turns it cites."""

    claim: str
    turns: tuple[CitedTurn, ...]
    subject: str = ""  # the page: "Marta (person)"

    def key(self) -> tuple[str, str]:
        """(digest of the claim on its page, the cited turns as sorted ref@hash)."""
        text = f"{self.subject}\n{self.claim}".encode("utf-8", "surrogatepass")
        digest = hashlib.blake2b(text, digest_size=16).hexdigest()
        return digest, " ".join(sorted(f"{t.ref}@{t.hash}" for t in self.turns))


@dataclass(frozen=True)
class Verdict:
    """The judge's answer on one item; ``verdict`` "" when it gave none (``why`` says
    why: the deterministic floor alone decides that claim)."""

    verdict: str  # "yes", "no", "unclear" or ""
    reason: str = ""
    cached: bool = False
    why: str = ""

    @property
    def fallback(self) -> bool:
        return not self.verdict


@dataclass(frozen=True)
class Pending:
    """A new or changed claim the floor passed, waiting for the judge."""

    path: str  # the page, relative to the store root
    line: int
    claim: str  # its plain text (``dream.gates.claimtext.plain``)
    subject: str  # the page's title and type: "Marta (person)"
    cites: tuple[tuple[int, str], ...]  # (source id, ref) of each citation


TurnOf = Callable[[str], tuple[Transcript, Turn] | None]  # ref -> its transcript and turn


class Malformed(ValueError):
    """The reply is not the JSON asked for; the message says what is wrong."""


# -- the prompt and the reply ---------------------------------------------------------------


def messages_for(items: Sequence[Item], ids: Sequence[str]) -> list[dict[str, str]]:
    """The conversation asking for the verdicts on ``items`` (under ``ids``)."""
    parts: list[str] = []
    for item_id, item in zip(ids, items, strict=True):
        lines = [f"Item {item_id}"]
        if item.subject:
            lines.append(f"Page: {item.subject}")
        lines += [f"Claim: {item.claim}", "Cited turns:"]
        for t in item.turns:
            text = " ".join(t.text.split())
            if len(text) > _MAX_TURN:
                text = text[:_MAX_TURN] + " [...]"
            lines.append(f"[{t.ref}] {t.speaker}, {t.ts}: {text}")
        parts.append("\n".join(lines))
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


def parse_verdicts(text: str, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """id -> (verdict, reason) from the model's reply; ``Malformed`` unless the reply is
    one JSON object whose ``verdicts`` give exactly one known verdict for each id."""
    # imported here: ``dream.engines`` imports the gates
    from dream.engines.llm.schema import Malformed as Unreadable
    from dream.engines.llm.schema import json_reply

    try:
        data = json_reply(text)
    except Unreadable as exc:
        raise Malformed(str(exc)) from None
    entries = data.get("verdicts") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise Malformed('not an object with a "verdicts" list')
    wanted = set(ids)
    out: dict[str, tuple[str, str]] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise Malformed(f"verdicts[{i}] is not an object")
        item_id = entry.get("id")
        if not isinstance(item_id, str) or item_id not in wanted:
            raise Malformed(f"verdicts[{i}] has an unknown id {item_id!r}")
        if item_id in out:
            raise Malformed(f"two verdicts for {item_id}")
        verdict = entry.get("verdict")
        if not isinstance(verdict, str) or verdict.strip().lower() not in VERDICTS:
            raise Malformed(f"verdict {verdict!r} for {item_id} is not yes, no or unclear")
        reason = entry.get("reason", "")
        if not isinstance(reason, str):
            raise Malformed(f"the reason for {item_id} is not a string")
        reason = " ".join(reason.split())
        if len(reason) > _MAX_REASON:
            reason = reason[: _MAX_REASON - 3].rstrip() + "..."
        out[item_id] = (verdict.strip().lower(), reason)
    missing = [i for i in ids if i not in out]
    if missing:
        raise Malformed(f"no verdict for {', '.join(missing)}")
    return out


# -- the judge --------------------------------------------------------------------------------


@dataclass
class _Totals:
    """What the judge did in a run, per distinct claim (the gates run more than once)."""

    judged: set[tuple[str, str]] = field(default_factory=set)
    cached: set[tuple[str, str]] = field(default_factory=set)
    rejected: set[tuple[str, str]] = field(default_factory=set)
    failed: dict[tuple[str, str], str] = field(default_factory=dict)  # key -> why


class Judge:
    """One model, one cache, for one run; ``judge`` gives a verdict per item."""

    def __init__(
        self,
        settings: LLMSettings,
        cache: Path | None,
        batch: int = 10,
        client: ChatClient | None = None,
        spent: Callable[[], int] | None = None,
    ) -> None:
        from dream.engines.llm.client import ChatClient

        self.settings = settings
        self.batch = max(1, batch)
        self.client = client or ChatClient(settings, log=log.warning)
        self.cache = _Cache(cache)
        self.down = ""  # why the endpoint is not asked again in this run
        # with a token budget (``settings.max_tokens``, the llm engine's), what the run
        # spent besides the judge: the judge stops asking once the budget is spent
        self.spent = spent or (lambda: 0)
        self.requests = 0
        self.tokens = 0
        self._totals = _Totals()

    @property
    def model(self) -> str:
        return self.settings.model

    def judge(self, items: Sequence[Item]) -> list[Verdict]:
        """A verdict for each of ``items``, in order: cached, asked, or none (fallback)."""
        keys = [item.key() for item in items]
        found: dict[tuple[str, str], Verdict] = {}
        ask: dict[tuple[str, str], Item] = {}  # the same claim twice is asked once
        for key, item in zip(keys, items, strict=True):
            if key in found or key in ask:
                continue
            if key in self._totals.failed:
                found[key] = Verdict("", why=self._totals.failed[key])
                continue
            hit = self.cache.get(key, self.model)
            if hit is not None:
                found[key] = Verdict(hit[0], hit[1], cached=True)
                if key not in self._totals.judged:
                    self._totals.cached.add(key)
            else:
                ask[key] = item
        pairs = list(ask.items())
        for start in range(0, len(pairs), self.batch):
            found.update(self._ask(dict(pairs[start : start + self.batch])))
        for key, verdict in found.items():
            if verdict.fallback:
                self._totals.failed.setdefault(key, verdict.why)
            else:
                self._totals.judged.add(key)
                if verdict.verdict != "yes":
                    self._totals.rejected.add(key)
        return [found[key] for key in keys]

    def _ask(self, batch: dict[tuple[str, str], Item]) -> dict[tuple[str, str], Verdict]:
        """Verdicts on one batch from the model; none when it cannot give them."""
        from dream.engines.llm.client import EndpointError

        budget = self.settings.max_tokens
        if not self.down and budget and self.spent() + self.tokens >= budget:
            self.down = f"the run's token budget ({budget}) is spent"
            log.warning("judge: %s; the deterministic checks alone decide the rest", self.down)
        if self.down:
            return {key: Verdict("", why=self.down) for key in batch}
        ids = [f"c{i + 1}" for i in range(len(batch))]
        messages = messages_for(list(batch.values()), ids)
        errors: tuple[type[BaseException], ...] = (EndpointError, DreamError, *_client_errors())
        try:
            done = self.client.complete(messages)
        except errors as exc:
            self.down = f"{_first_line(exc)}"
            log.warning(
                "judge: %s; %d claims checked by the deterministic floor alone, "
                "and the endpoint is not asked again in this run",
                self.down,
                len(batch),
            )
            return {key: Verdict("", why=self.down) for key in batch}
        self.requests += 1
        self.tokens += done.tokens
        try:
            verdicts = parse_verdicts(done.text, ids)
        except Malformed as exc:
            why = f"malformed reply from {self.model} ({exc})"
            log.warning(
                "judge: %s; %d claims checked by the deterministic floor alone", why, len(batch)
            )
            return {key: Verdict("", why=why) for key in batch}
        out: dict[tuple[str, str], Verdict] = {}
        for item_id, key in zip(ids, batch, strict=True):
            verdict, reason = verdicts[item_id]
            self.cache.put(key, self.model, verdict, reason)
            out[key] = Verdict(verdict, reason)
        self.cache.commit()
        return out

    def check(
        self, pending: Sequence[Pending], turn_of: TurnOf, gate: str
    ) -> tuple[list[Problem], dict[str, int]]:
        """The gate's problems (DV301, DV302) and stats for the ``pending`` claims;
        ``turn_of`` finds the transcript and turn a ref names."""
        problems: list[Problem] = []
        stats = dict.fromkeys(STATS, 0)
        for start in range(0, len(pending), _CHUNK):
            asked: list[Pending] = []
            items: list[Item] = []
            for p in pending[start : start + _CHUNK]:
                turns = tuple(t for _, ref in p.cites if (t := _cited(ref, turn_of)) is not None)
                if turns:
                    asked.append(p)
                    items.append(Item(p.claim, turns, p.subject))
            for p, v in zip(asked, self.judge(items), strict=True):
                if v.fallback:
                    stats["judge_fallback"] += 1
                    continue
                stats["claims_judged"] += 1
                stats["judge_cached"] += v.cached
                if v.verdict in CODES:
                    stats["judge_rejected"] += 1
                    problems.append(Problem(gate, p.path, p.line, CODES[v.verdict], _message(p, v)))
        return problems, stats

    def summary(self) -> dict[str, int]:
        """What the judge did in this run (distinct claims), for the run's result."""
        t = self._totals
        return {
            "claims_judged": len(t.judged),
            "judge_cached": len(t.cached),
            "judge_fallback": len(set(t.failed) - t.judged),
            "judge_rejected": len(t.rejected),
            "judge_requests": self.requests,
            "judge_tokens": self.tokens,
        }

    def fallback_note(self) -> str:
        """A clause for the run's message when claims went without a verdict ("" else)."""
        failed = set(self._totals.failed) - self._totals.judged
        if not failed:
            return ""
        reasons = list(dict.fromkeys(self._totals.failed[k] for k in failed))
        return (
            f"model judge gave no verdict on {len(failed)} claims ({reasons[0]}): "
            "the deterministic checks alone passed them"
        )

    def close(self) -> None:
        self.cache.close()


def _cited(ref: str, turn_of: TurnOf) -> CitedTurn | None:
    found = turn_of(ref)
    if found is None:
        return None
    t, turn = found
    name = t.speakers.name(turn.speaker)
    speaker = name if name == turn.speaker else f"{name} ({turn.speaker})"
    return CitedTurn(ref, turn.hash, speaker, turn.ts or t.date, turn.text)


def _message(p: Pending, v: Verdict) -> str:
    cites = ", ".join(f"[{n}] {ref}" for n, ref in p.cites)
    what = (
        "the model judge finds the claim not entailed by its cited turns"
        if v.verdict == "no"
        else "the model judge cannot tell whether the cited turns entail the claim"
    )
    return f"{what} (cites {cites}): {v.reason or 'no reason given'}"


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:200] if lines else type(exc).__name__


def _client_errors() -> tuple[type[BaseException], ...]:
    """What else a request may raise (the openai client's own errors, transport errors):
    the judge never fails a run."""
    errors: list[type[BaseException]] = [OSError, ValueError]
    with contextlib.suppress(ImportError):
        import openai

        errors.append(openai.OpenAIError)
    return tuple(errors)


# -- the cache ----------------------------------------------------------------------------


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS verdicts(claim TEXT NOT NULL, turns TEXT NOT NULL, "
    "model TEXT NOT NULL, verdict TEXT NOT NULL, reason TEXT NOT NULL, "
    "PRIMARY KEY (claim, turns, model)) WITHOUT ROWID"
)


def _version() -> int:
    """``VERSION`` and the prompt: another prompt asks another question."""
    h = hashlib.blake2b(f"{VERSION}\n{SYSTEM}".encode(), digest_size=3)
    return 1 + int.from_bytes(h.digest(), "big")


class _Cache:
    """Verdicts by (claim key, model) in SQLite: the file at ``path`` when it can be
    used (never through a symlink; rebuilt when SQLite cannot read it), else in memory
    for the run. Opened when first used; ``close`` keeps what was written, and a later
    use opens it again. Only a cache: any trouble with it costs requests, never the run."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._memory: sqlite3.Connection | None = None  # when the file cannot be used

    def _conn(self) -> sqlite3.Connection | None:
        if self._db is not None:
            return self._db
        if self._memory is not None:
            return self._memory
        path = self.path
        places: list[str] = []
        if path is not None and not (path.is_symlink() or path.parent.is_symlink()):
            places = [str(path), str(path)]  # a second try after removing an unreadable one
        for place in places:
            try:
                self._db = _open(place)
                return self._db
            except sqlite3.DatabaseError as exc:
                if not isinstance(exc, sqlite3.OperationalError):
                    _remove(Path(place))
                    continue
                break  # locked or unwritable now: not ours to delete
            except OSError:
                break
        with contextlib.suppress(sqlite3.Error):
            self._memory = _open(":memory:")
        return self._memory

    def get(self, key: tuple[str, str], model: str) -> tuple[str, str] | None:
        db = self._conn()
        if db is None:
            return None
        try:
            row = db.execute(
                "SELECT verdict, reason FROM verdicts WHERE claim = ? AND turns = ? AND model = ?",
                (*key, model),
            ).fetchone()
        except sqlite3.Error:
            return None
        return (row[0], row[1]) if row and row[0] in VERDICTS else None

    def put(self, key: tuple[str, str], model: str, verdict: str, reason: str) -> None:
        db = self._conn()
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.execute(
                    "INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?)",
                    (*key, model, verdict, reason),
                )

    def commit(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.commit()

    def close(self) -> None:
        """Close the file (what is in memory stays for the run)."""
        db, self._db = self._db, None
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.commit()
            db.close()


def _open(place: str) -> sqlite3.Connection:
    if place != ":memory:":
        Path(place).parent.mkdir(parents=True, exist_ok=True)
    db = cache_db.connect(place)
    try:
        version = _version()
        found = db.execute("PRAGMA user_version").fetchone()[0]
        if found not in (0, version):
            db.execute("DROP TABLE IF EXISTS verdicts")
        db.execute(_SCHEMA)
        if found != version:
            db.execute(f"PRAGMA user_version = {version}")
        db.commit()
    except BaseException:
        db.close()
        raise
    return db


def _remove(path: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            Path(str(path) + suffix).unlink()


# -- configuration ------------------------------------------------------------------------


def judge_for(
    store: Store, engine: Any = None, env: Mapping[str, str] | None = None
) -> Judge | None:
    """The judge ``store``'s ``[verify]`` and the run's ``engine`` call for; None when
    there is none. A judge that is on but cannot be built (no model, no endpoint, an
    unset key variable, no openai package) is a ``DreamError``, before the run starts."""
    from dream.engines.llm.client import LLMSettings

    v = store.config.verify
    settings = getattr(engine, "settings", None)
    llm = (
        settings
        if getattr(engine, "name", "") == "llm" and isinstance(settings, LLMSettings)
        else None
    )
    if v.judge is False or not (v.judge or v.endpoint or v.model or llm is not None):
        return None
    where = f"{store.root / 'memory.toml'} [verify]"
    model = v.model or (llm.model if llm is not None else "")
    if not model and llm is not None and not (v.judge or v.endpoint):
        return None  # the llm engine says itself that it needs a model
    if not model:
        raise DreamError(f'{where}: the model judge needs a model (model = "NAME")')
    if not v.endpoint and llm is None:
        raise DreamError(
            f"{where}: the model judge needs an endpoint "
            '(endpoint = "http://HOST:PORT/v1", an OpenAI-compatible base URL)'
        )
    env = os.environ if env is None else env
    key = ""
    if v.api_key_env:
        key = env.get(v.api_key_env, "").strip()
        if not key:
            raise DreamError(f"{where}: api_key_env names {v.api_key_env}, which is not set")
    elif llm is not None and not v.endpoint:
        key = llm.api_key  # the engine's key goes only to the engine's endpoint
    timeout = v.timeout or (llm.timeout if llm is not None and not v.endpoint else DEFAULT_TIMEOUT)
    try:
        import openai  # noqa: F401 - the judge's requests need it
    except ImportError:
        raise DreamError(
            "the model judge ([verify] in memory.toml, or --engine llm) needs the openai "
            "package: pip install 'memoryfs[llm]' (or, in a checkout, pip install '.[llm]'); "
            "or set judge = false under [verify]"
        ) from None
    base = llm if llm is not None else LLMSettings()
    settings = replace(
        base,
        model=model,
        base_url=v.endpoint or base.base_url,
        api_key=key,
        timeout=timeout,
        retries=0,  # one timeout at most: the floor still checks every claim
        temperature=0.0,
        json_mode=True,
    )
    if llm is None or v.endpoint:
        settings = replace(settings, max_tokens=None)  # the llm engine's budget is its own

    def spent() -> int:
        return int(getattr(engine, "tokens", 0) or 0)

    return Judge(settings, store.cache_dir / NAME, batch=v.batch, spent=spent)
