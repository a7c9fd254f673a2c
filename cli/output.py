"""Shared CLI plumbing: the ``--store``/``--json`` options, output and error handling.

Every ``cli`` module imports the library inside the commands, not at the top: building
the command tree (``--help``, or any one command) then loads only ``typer`` and ``cli``,
and a command loads only what it runs (``tests/cli/test_cli_startup.py`` holds both CLIs
to that).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from memoryfs.errors import MemoryFSError, StoreNotFoundError

if TYPE_CHECKING:
    from memoryfs.store.store import Store

__all__ = [
    "StoreOpt",
    "JsonOpt",
    "VersionOpt",
    "open_store",
    "emit",
    "fail",
    "handle_errors",
    "log",
    "print_version",
]

StoreOpt = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help="Store folder (default: $MEMORYFS_STORE, else the nearest one up with memory.toml).",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print results as JSON on stdout.")]


def print_version(as_json: bool = False) -> None:
    """The package version and the commit it was built from, when known."""
    from memoryfs.version import version_info

    info = version_info()
    emit(info.to_json(), info.describe(), as_json)


def _version_flag(value: bool) -> None:
    if value:
        print_version()
        raise typer.Exit()


VersionOpt = Annotated[
    bool,
    typer.Option(
        "--version",
        callback=_version_flag,
        is_eager=True,
        help="Print the version and the commit it was built from, then exit.",
    ),
]

F = TypeVar("F", bound=Callable[..., Any])


def open_store(path: Path | None) -> Store:
    from memoryfs.store.store import find_store

    return find_store(path)


def log(message: str) -> None:
    """Progress and logs go to stderr; stdout carries results only."""
    print(message, file=sys.stderr, flush=True)


def emit(data: Any, human: str, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
    elif human:
        sys.stdout.write(human if human.endswith("\n") else human + "\n")
    sys.stdout.flush()


def fail(message: str, code: int = 1) -> typer.Exit:
    print(f"error: {message}", file=sys.stderr, flush=True)
    return typer.Exit(code)


def _error_roots() -> tuple[type[Exception], ...]:
    """The library roots whose errors are one line: ``DreamError`` too once ``dream`` runs.

    A ``DreamError`` can only have been raised if ``dream.errors`` is loaded, so the
    ``memoryfs`` command never imports ``dream`` to catch it."""
    dream_errors = sys.modules.get("dream.errors")
    if dream_errors is None:
        return (MemoryFSError,)
    return (MemoryFSError, dream_errors.DreamError)


def _os_message(exc: OSError) -> str:
    """``path: reason`` for a file system error ("demo/x: Not a directory")."""
    reason = exc.strerror or str(exc)
    return f"{exc.filename}: {reason}" if exc.filename else reason


def handle_errors(func: F) -> F:
    """Turn library errors into one stderr line: exit 2 for a missing store, else 1.

    An ``OSError`` the library did not turn into its own error (a folder that cannot
    be created, a full disk) is one line too, with the path it was about."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except StoreNotFoundError as exc:
            raise fail(str(exc), 2) from None
        except _error_roots() as exc:
            raise fail(str(exc), 1) from None
        except KeyboardInterrupt:
            raise fail("interrupted", 130) from None
        except BrokenPipeError:
            raise typer.Exit(1) from None
        except OSError as exc:  # the file system said no: a folder that cannot be made, a full disk
            raise fail(_os_message(exc), 1) from None

    return wrapper  # type: ignore[return-value]
