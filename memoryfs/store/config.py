"""``memory.toml``: the store's format version, scope and budgets.

Read with ``tomllib``; written by ``render_config`` in one fixed key order so the
file is stable in diffs.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryfs.errors import MemoryFSError
from memoryfs.pages.bounded_yaml import DEFAULT_YAML_LIMITS, YamlLimits
from memoryfs.pages.speakers import Roster

__all__ = [
    "FORMAT_VERSION",
    "Budgets",
    "DreamSettings",
    "EMBED_BACKENDS",
    "EmbedSettings",
    "Limits",
    "StoreConfig",
    "VerifySettings",
    "load_config",
    "render_config",
    "valid_display_name",
]

FORMAT_VERSION = 1
_SCOPE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_VERIFY_KEYS = ("judge", "endpoint", "model", "api_key_env", "timeout", "batch")
_EMBED_KEYS = ("backend", "model", "endpoint", "api_key_env", "timeout", "batch")
EMBED_BACKENDS = ("local", "endpoint")
MAX_JUDGE_BATCH = 50


@dataclass(frozen=True)
class Budgets:
    index_tokens: int = 1500
    recall_tokens: int = 1500
    materialize_bytes: int = 262144
    max_file_bytes: int = 2_000_000


@dataclass(frozen=True)
class Limits:
    """``[limits]``: how large an input may be, checked before it is parsed.

    Ingest refuses an input file over ``input_bytes`` before reading it, and a session
    whose transcript would be over ``transcript_bytes`` (or ``budgets.max_file_bytes``,
    what validation accepts), with a turn over ``turn_bytes`` or more than ``turns``
    turns, before writing anything. ``frontmatter_bytes``, ``yaml_nodes`` and
    ``yaml_aliases`` bound the YAML frontmatter of every page and transcript
    (``memoryfs.pages.bounded_yaml``); ingest and validation apply the store's values,
    other readers the defaults, so these three may only be lowered. A search query or
    recall question over ``query_chars`` characters is refused.
    """

    input_bytes: int = 200_000_000
    transcript_bytes: int = 2_000_000
    turn_bytes: int = 500_000
    turns: int = 10_000
    frontmatter_bytes: int = DEFAULT_YAML_LIMITS.max_bytes
    yaml_nodes: int = DEFAULT_YAML_LIMITS.max_nodes
    yaml_aliases: int = DEFAULT_YAML_LIMITS.max_aliases
    query_chars: int = 10_000

    @property
    def yaml(self) -> YamlLimits:
        return YamlLimits(self.frontmatter_bytes, self.yaml_nodes, self.yaml_aliases)


_LIMIT_KEYS = tuple(Limits.__dataclass_fields__)
# the frontmatter limits every reader applies: a store may set them lower, never higher
_LIMIT_CEILINGS = {
    "frontmatter_bytes": DEFAULT_YAML_LIMITS.max_bytes,
    "yaml_nodes": DEFAULT_YAML_LIMITS.max_nodes,
    "yaml_aliases": DEFAULT_YAML_LIMITS.max_aliases,
}


@dataclass(frozen=True)
class DreamSettings:
    max_sessions: int = 0  # 0: no limit
    deadline: str = ""  # e.g. "20m"; empty: none
    approved_skill: str = ""  # content hash of the approved skills/dream/SKILL.md
    approved_by: str = ""  # who approved it (``dream skills approve``)
    approved_at: str = ""  # when, UTC ISO time


@dataclass(frozen=True)
class VerifySettings:
    """``[verify]``: the semantic gate's model judge (``dream.gates.judge``).

    The judge is on when ``judge = true``, when an ``endpoint`` or ``model`` is set here,
    or with ``dream run --engine llm`` (whose endpoint, model and key it then uses for
    what is not set here); ``judge = false`` turns it off for every engine.
    """

    judge: bool | None = None  # None: on when configured (see above)
    endpoint: str = ""  # OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1
    model: str = ""
    api_key_env: str = ""  # name of the environment variable holding the API key
    timeout: float | None = None  # seconds per request; None: the judge's default
    batch: int = 10  # claims per request


@dataclass(frozen=True)
class EmbedSettings:
    """``[embed]``: the sentence embedder of hybrid recall (``memoryfs.embed``).

    Off unless ``backend`` is set: ``local`` loads a sentence-transformers model from the
    folder ``model`` names (never downloaded by memoryfs), ``endpoint`` asks an
    OpenAI-compatible ``/v1/embeddings`` at ``endpoint`` for ``model``.
    """

    backend: str = ""  # "", "local" or "endpoint"
    model: str = ""  # local: a model folder; endpoint: the model's name
    endpoint: str = ""  # OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1
    api_key_env: str = ""  # name of the environment variable holding the API key
    timeout: float = 60.0  # seconds per request (endpoint)
    batch: int = 64  # texts per model call or request

    @property
    def on(self) -> bool:
        return bool(self.backend)


@dataclass(frozen=True)
class StoreConfig:
    user: str
    assistant: str
    format: int = FORMAT_VERSION
    budgets: Budgets = field(default_factory=Budgets)
    dream: DreamSettings = field(default_factory=DreamSettings)
    # the names claims are written with; "" derives one from the id (``display_name``)
    user_name: str = ""
    assistant_name: str = ""
    verify: VerifySettings = field(default_factory=VerifySettings)
    embed: EmbedSettings = field(default_factory=EmbedSettings)
    limits: Limits = field(default_factory=Limits)
    # the Git remote the store pushes to and fetches from ("": a local store); a clone's
    # own ``memoryfs.remote`` Git setting wins (``memoryfs.remote``)
    remote: str = ""

    @property
    def roster(self) -> Roster:
        return Roster(self.user, self.assistant, self.user_name, self.assistant_name)


def validate_scope_name(kind: str, value: str) -> str:
    if not _SCOPE_RE.match(value):
        raise MemoryFSError(
            f"invalid {kind} scope {value!r} "
            "(use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit)"
        )
    return value


def valid_display_name(value: str, empty_ok: bool = False) -> bool:
    """A display name is one line of at most 80 characters with a letter in it."""
    value = value.strip()
    if not value:
        return empty_ok
    return len(value) <= 80 and value.isprintable() and any(c.isalpha() for c in value)


def load_config(path: Path) -> StoreConfig:
    """Parse ``memory.toml``; a malformed file is a ``MemoryFSError``."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise MemoryFSError(f"{path}: cannot read store config: {exc}") from None
    scope = data.get("scope")
    if (
        not isinstance(scope, dict)
        or not isinstance(scope.get("user"), str)
        or not isinstance(scope.get("assistant"), str)
    ):
        raise MemoryFSError(f"{path}: [scope] needs string keys 'user' and 'assistant'")
    names = {k: scope.get(k, "") for k in ("user_name", "assistant_name")}
    for key, value in names.items():
        if not isinstance(value, str) or not valid_display_name(value, empty_ok=True):
            raise MemoryFSError(
                f"{path}: [scope] {key} must be a name on one line, at most 80 characters"
            )
    fmt = data.get("format", FORMAT_VERSION)
    if not isinstance(fmt, int) or fmt > FORMAT_VERSION:
        raise MemoryFSError(
            f"{path}: store format {fmt!r} is newer than this memoryfs understands "
            f"({FORMAT_VERSION}); upgrade memoryfs"
        )
    remote = data.get("remote", "")
    if not isinstance(remote, str) or not remote.isprintable() or remote != remote.strip():
        raise MemoryFSError(f"{path}: remote must be a Git URL on one line")
    b = data.get("budgets", {}) or {}
    d = data.get("dream", {}) or {}
    try:
        budgets = Budgets(
            index_tokens=int(b.get("index_tokens", Budgets.index_tokens)),
            recall_tokens=int(b.get("recall_tokens", Budgets.recall_tokens)),
            materialize_bytes=int(b.get("materialize_bytes", Budgets.materialize_bytes)),
            max_file_bytes=int(b.get("max_file_bytes", Budgets.max_file_bytes)),
        )
        dream = DreamSettings(
            max_sessions=int(d.get("max_sessions", 0)),
            deadline=str(d.get("deadline", "")),
            approved_skill=str(d.get("approved_skill", "")),
            approved_by=str(d.get("approved_by", "")),
            approved_at=str(d.get("approved_at", "")),
        )
    except (TypeError, ValueError) as exc:
        raise MemoryFSError(f"{path}: bad budget or dream setting: {exc}") from None
    return StoreConfig(
        user=scope["user"],
        assistant=scope["assistant"],
        format=fmt,
        budgets=budgets,
        dream=dream,
        user_name=names["user_name"].strip(),
        assistant_name=names["assistant_name"].strip(),
        verify=_verify(path, data.get("verify", {})),
        embed=_embed(path, data.get("embed", {})),
        limits=_limits(path, data.get("limits", {})),
        remote=remote,
    )


def _table(
    path: Path, name: str, v: object, known: tuple[str, ...], strings: tuple[str, ...]
) -> tuple[Callable[[str], MemoryFSError], dict[str, Any], dict[str, str]]:
    """An optional table checked for its keys: how to say what is wrong with it, the
    table, and the one-line text values of ``strings`` (stripped; "" when absent)."""

    def bad(what: str) -> MemoryFSError:
        return MemoryFSError(f"{path}: [{name}] {what}")

    if not isinstance(v, dict):
        raise bad("must be a table")
    unknown = sorted(set(v) - set(known))
    if unknown:
        raise bad(f"has unknown key {unknown[0]!r} (known: {', '.join(known)})")
    text = {}
    for key in strings:
        value = v.get(key, "")
        if not isinstance(value, str) or not value.isprintable():
            raise bad(f"{key} must be a string on one line")
        text[key] = value.strip()
    return bad, v, text


def _limits(path: Path, v: object) -> Limits:
    """``[limits]``, every key checked: a typo must not leave a limit at its default."""
    if not isinstance(v, dict):
        raise MemoryFSError(f"{path}: [limits] must be a table")
    unknown = sorted(set(v) - set(_LIMIT_KEYS))
    if unknown:
        raise MemoryFSError(
            f"{path}: [limits] has unknown key {unknown[0]!r} (known: {', '.join(_LIMIT_KEYS)})"
        )
    values: dict[str, int] = {}
    for key, value in v.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise MemoryFSError(f"{path}: [limits] {key} must be a whole number above 0")
        ceiling = _LIMIT_CEILINGS.get(key)
        if ceiling is not None and value > ceiling:
            raise MemoryFSError(
                f"{path}: [limits] {key} may be at most {ceiling} "
                "(every reader of the store applies it)"
            )
        values[key] = value
    return Limits(**values)


def _verify(path: Path, v: object) -> VerifySettings:
    """``[verify]``, every key checked: a typo must not leave the judge silently off."""

    bad, v, text = _table(path, "verify", v, _VERIFY_KEYS, ("endpoint", "model", "api_key_env"))
    judge = v.get("judge")
    if judge is not None and not isinstance(judge, bool):
        raise bad("judge must be true or false")
    if text["endpoint"] and not re.match(r"^https?://[^\s/]+", text["endpoint"]):
        raise bad(f"endpoint {text['endpoint']!r} is not an http:// or https:// URL")
    if text["api_key_env"] and not _ENV_NAME_RE.match(text["api_key_env"]):
        raise bad(
            f"api_key_env must name an environment variable (such as OPENAI_API_KEY), "
            f"not {text['api_key_env']!r}"
        )
    timeout = v.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 3600
    ):
        raise bad("timeout must be a number of seconds above 0, at most 3600")
    batch = v.get("batch", VerifySettings.batch)
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= MAX_JUDGE_BATCH:
        raise bad(f"batch must be a whole number of claims from 1 to {MAX_JUDGE_BATCH}")
    return VerifySettings(
        judge=judge,
        timeout=None if timeout is None else float(timeout),
        batch=batch,
        **text,
    )


def _embed(path: Path, v: object) -> EmbedSettings:
    """``[embed]``, every key checked: a typo must not leave recall silently lexical."""

    keys = ("backend", "model", "endpoint", "api_key_env")
    bad, v, text = _table(path, "embed", v, _EMBED_KEYS, keys)
    if text["backend"] and text["backend"] not in EMBED_BACKENDS:
        raise bad(f"backend {text['backend']!r} is not one of {', '.join(EMBED_BACKENDS)}")
    if text["backend"] and not text["model"]:
        raise bad(f"backend {text['backend']!r} needs a model")
    if text["backend"] == "endpoint" and not re.match(r"^https?://[^\s/]+", text["endpoint"]):
        raise bad("backend 'endpoint' needs an http:// or https:// endpoint")
    if text["api_key_env"] and not _ENV_NAME_RE.match(text["api_key_env"]):
        raise bad(f"api_key_env must name an environment variable, not {text['api_key_env']!r}")
    timeout = v.get("timeout", EmbedSettings.timeout)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 3600:
        raise bad("timeout must be a number of seconds above 0, at most 3600")
    batch = v.get("batch", EmbedSettings.batch)
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= 2048:
        raise bad("batch must be a whole number of texts from 1 to 2048")
    return EmbedSettings(timeout=float(timeout), batch=batch, **text)


def _q(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_config(cfg: StoreConfig) -> str:
    return (
        "# memoryfs store configuration\n"
        f"format = {cfg.format}\n" + (f"remote = {_q(cfg.remote)}\n" if cfg.remote else "") + "\n"
        "[scope]\n"
        f"user = {_q(cfg.user)}\n"
        f"assistant = {_q(cfg.assistant)}\n"
        '# the names claims are written with ("I moved" by the user -> "<user_name> moved")\n'
        f"user_name = {_q(cfg.roster.user_name)}\n"
        f"assistant_name = {_q(cfg.roster.assistant_name)}\n\n"
        "[budgets]\n"
        f"index_tokens = {cfg.budgets.index_tokens}\n"
        f"recall_tokens = {cfg.budgets.recall_tokens}\n"
        f"materialize_bytes = {cfg.budgets.materialize_bytes}\n"
        f"max_file_bytes = {cfg.budgets.max_file_bytes}\n\n"
        "[dream]\n"
        f"max_sessions = {cfg.dream.max_sessions}\n"
        f"deadline = {_q(cfg.dream.deadline)}\n"
        f"approved_skill = {_q(cfg.dream.approved_skill)}\n"
        + (f"approved_by = {_q(cfg.dream.approved_by)}\n" if cfg.dream.approved_by else "")
        + (f"approved_at = {_q(cfg.dream.approved_at)}\n" if cfg.dream.approved_at else "")
        + _render_verify(cfg.verify)
        + _render_embed(cfg.embed)
        + _render_limits(cfg.limits)
    )


def _render_limits(limits: Limits) -> str:
    """``[limits]`` with the keys that differ from the defaults; "" when none does."""
    changed = [
        f"{k} = {getattr(limits, k)}"
        for k in _LIMIT_KEYS
        if getattr(limits, k) != getattr(Limits(), k)
    ]
    return "\n".join(["", "[limits]", *changed]) + "\n" if changed else ""


def _render_verify(v: VerifySettings) -> str:
    """``[verify]`` with the keys that differ from the defaults; "" when none does."""
    if v == VerifySettings():
        return ""
    lines = ["", "[verify]"]
    if v.judge is not None:
        lines.append(f"judge = {'true' if v.judge else 'false'}")
    lines += [
        f"{k} = {_q(getattr(v, k))}" for k in ("endpoint", "model", "api_key_env") if getattr(v, k)
    ]
    if v.timeout is not None:
        lines.append(f"timeout = {v.timeout:g}")
    if v.batch != VerifySettings.batch:
        lines.append(f"batch = {v.batch}")
    return "\n".join(lines) + "\n"


def _render_embed(e: EmbedSettings) -> str:
    """``[embed]`` with the keys that differ from the defaults; "" when none does."""
    if e == EmbedSettings():
        return ""
    keys = ("backend", "model", "endpoint", "api_key_env")
    lines = ["", "[embed]", *(f"{k} = {_q(getattr(e, k))}" for k in keys if getattr(e, k))]
    if e.timeout != EmbedSettings.timeout:
        lines.append(f"timeout = {e.timeout:g}")
    if e.batch != EmbedSettings.batch:
        lines.append(f"batch = {e.batch}")
    return "\n".join(lines) + "\n"
