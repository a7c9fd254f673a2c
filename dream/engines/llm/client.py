"""The chat endpoint behind the LLM engine: settings, one request, retries, token count.

Job: send one chat completion to an OpenAI-compatible endpoint (OpenAI, Ollama, vLLM,
llama.cpp's server) through the official ``openai`` client, which is an optional extra
(``pip install '.[llm]'``) imported only when a request is made. Transport trouble --
a timeout, a refused connection, 429 and 5xx -- is retried a bounded number of times
with exponential backoff; a 429 or 503 that says ``Retry-After`` waits that long
(capped). Anything else (401, 404, 400) fails at once: retrying cannot fix it.

Boundary: knows nothing of sessions, prompts or JSON; it returns the answer's text and
its token usage, or raises ``EndpointError``.
"""

from __future__ import annotations

import email.utils
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from dream.errors import DreamError

__all__ = ["ENV", "Completion", "EndpointError", "ChatClient", "LLMSettings"]

ENV = {
    "base_url": "MEMORYFS_LLM_BASE_URL",
    "model": "MEMORYFS_LLM_MODEL",
    "api_key": "MEMORYFS_LLM_API_KEY",
    "timeout": "MEMORYFS_LLM_TIMEOUT",
    "max_tokens": "MEMORYFS_LLM_MAX_TOKENS",
    "price_per_1k": "MEMORYFS_LLM_PRICE_PER_1K",
}
_RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class EndpointError(DreamError):
    """The endpoint did not answer usefully, after the retries it deserved."""


@dataclass(frozen=True)
class LLMSettings:
    """How to reach the model and what a run may spend. ``from_env`` fills the gaps."""

    model: str = ""
    base_url: str | None = None  # None: the openai client's default (api.openai.com)
    api_key: str = field(default="", repr=False)
    timeout: float = 120.0  # seconds per request
    retries: int = 3  # extra attempts after a timeout, 429 or 5xx
    backoff: float = 1.0  # first wait in seconds; doubles per attempt
    max_backoff: float = 60.0  # cap on any single wait, Retry-After included
    json_retries: int = 2  # extra attempts when the answer is not the JSON asked for
    max_tokens: int | None = None  # run budget (prompt + completion); None: no limit
    price_per_1k: float = 0.0  # cost of 1000 tokens, for the run report
    temperature: float = 0.0
    json_mode: bool = True  # ask for response_format json_object

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> LLMSettings:
        """Settings from ``MEMORYFS_LLM_*``; non-None ``overrides`` (the CLI's) win."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for key, var in ENV.items():
            raw = env.get(var, "").strip()
            if raw:
                values[key] = _parse(key, var, raw)
        if "api_key" not in values and env.get("OPENAI_API_KEY"):
            values["api_key"] = env["OPENAI_API_KEY"]
        values.update({k: v for k, v in overrides.items() if v is not None})
        return replace(cls(), **values)

    def require_model(self) -> str:
        if not self.model:
            raise DreamError(
                "the llm engine needs a model: pass --model NAME or set MEMORYFS_LLM_MODEL"
            )
        return self.model


def _parse(key: str, var: str, raw: str) -> Any:
    try:
        if key == "max_tokens":
            return int(raw)
        if key in ("timeout", "price_per_1k"):
            return float(raw)
    except ValueError:
        raise DreamError(f"{var}={raw!r} is not a number") from None
    return raw


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def _import_openai() -> Any:
    try:
        import openai
    except ImportError:
        raise DreamError(
            "the llm engine needs the openai package: pip install 'memoryfs[llm]' "
            "(or, in a checkout, pip install '.[llm]')"
        ) from None
    return openai


def _retry_after(exc: Any) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    raw = headers.get("retry-after") if headers is not None else None
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class ChatClient:
    """One endpoint; ``complete`` sends a conversation and returns the answer."""

    def __init__(
        self,
        settings: LLMSettings,
        sleep: Callable[[float], None] = time.sleep,
        log: Callable[[str], None] = lambda message: None,
    ) -> None:
        self.settings = settings
        self.sleep = sleep
        self.log = log
        self._client: Any = None

    def _openai(self) -> Any:
        if self._client is None:
            openai = _import_openai()
            self._client = openai.OpenAI(
                base_url=self.settings.base_url,
                api_key=self.settings.api_key or "not-needed",  # local servers take any key
                timeout=self.settings.timeout,
                max_retries=0,  # retries are ours: bounded, logged, Retry-After honoured
            )
        return self._client

    def complete(self, messages: list[dict[str, str]]) -> Completion:
        s = self.settings
        openai = _import_openai()
        client = self._openai()
        kwargs: dict[str, Any] = {
            "model": s.require_model(),
            "messages": messages,
            "temperature": s.temperature,
        }
        if s.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        wait = s.backoff
        for attempt in range(s.retries + 1):
            try:
                response = client.chat.completions.create(**kwargs)
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                kind = "timed out" if isinstance(exc, openai.APITimeoutError) else "unreachable"
                problem, pause = f"{s.base_url or 'endpoint'} {kind}", None
            except openai.APIStatusError as exc:
                status = exc.status_code
                problem, pause = f"HTTP {status} from {s.base_url or 'endpoint'}", None
                if status not in _RETRY_STATUS:
                    hint = " (check MEMORYFS_LLM_API_KEY)" if status in (401, 403) else ""
                    raise EndpointError(f"{problem}: {_first_line(exc)}{hint}") from None
                pause = _retry_after(exc)
            else:
                return _completion(response)
            if attempt == s.retries:
                raise EndpointError(f"{problem} after {s.retries + 1} attempts") from None
            delay = min(s.max_backoff, wait if pause is None else pause)
            self.log(f"llm: {problem}; retrying in {delay:.2f}s")
            self.sleep(delay)
            wait *= 2
        raise AssertionError("unreachable")  # pragma: no cover


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def _completion(response: Any) -> Completion:
    try:
        text = response.choices[0].message.content or ""
    except (AttributeError, IndexError, TypeError):
        text = ""
    usage = getattr(response, "usage", None)
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    done = int(getattr(usage, "completion_tokens", 0) or 0)
    if usage is None:  # some servers omit usage: count roughly, 4 characters a token
        done = max(1, len(text) // 4)
    return Completion(text=text, prompt_tokens=prompt, completion_tokens=done)
