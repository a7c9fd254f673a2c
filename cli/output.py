"""Shared CLI plumbing: the ``--store``/``--json`` options, output and error handling.

Every ``cli`` module imports the library inside the commands, not at the top: building
the command tree (``--help``, or any one command) then loads only ``typer`` and ``cli``,
and a command loads only what it runs (``tests/cli/test_cli_startup.py`` holds both CLIs
to that).
"""

from __future__ import annotations

import errno
import functools
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from typer.core import TyperGroup

try:  # Typer vendors Click from 0.2x on; the exceptions a parse raises are that copy's
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - an older Typer on the installed Click
    from click import exceptions as click_errors  # type: ignore[no-redef]

from memoryfs.errors import MemoryFSError, StoreNotFoundError

if TYPE_CHECKING:
    from memoryfs.store.store import Store

__all__ = [
    "StoreOpt",
    "JsonOpt",
    "QuietOpt",
    "ProgressBar",
    "VersionOpt",
    "open_store",
    "emit",
    "fail",
    "handle_errors",
    "log",
    "print_version",
    "HELP_SETTINGS",
    "CliGroup",
    "usage_check",
    "non_blank",
]

# ``-h`` is ``--help`` on both apps and every sub-command (a Click context passes it down)
HELP_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"]}

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

QuietOpt = Annotated[
    bool, typer.Option("-q", "--quiet", help="No progress on stderr (only errors).")
]

F = TypeVar("F", bound=Callable[..., Any])


class ProgressBar:
    """A one-line progress bar on stderr for long work (``phase done/total``), drawn only
    when stderr is a terminal and the command is not ``--quiet``: piped or logged stderr
    gets no control characters. Called as a library ``progress(phase, done, total)``."""

    WIDTH = 24

    def __init__(self, quiet: bool = False) -> None:
        self.enabled = not quiet and sys.stderr.isatty()
        self.drawn = False

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        if total > 0:
            filled = min(self.WIDTH, self.WIDTH * done // total)
            bar = "#" * filled + "." * (self.WIDTH - filled)
            line = f"{phase:<12} [{bar}] {done}/{total}"
        else:
            line = f"{phase:<12}"
        sys.stderr.write("\r\x1b[2K" + line)
        sys.stderr.flush()
        self.drawn = True

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()


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


_DISK_FIXES = {
    errno.ENOSPC: "free some space, then run the command again",
    errno.EDQUOT: "free some space, then run the command again",
    errno.EROFS: "make it writable, then run the command again",
}


def _os_message(exc: OSError) -> str:
    """``path: reason`` for a file system error ("demo/x: Not a directory"); a full or
    read-only disk says the way out."""
    reason = exc.strerror or str(exc)
    fix = _DISK_FIXES.get(exc.errno or 0)
    reason = f"{reason}; {fix}" if fix else reason
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


def usage_check(check: Callable[[Any], object]) -> Callable[[Any], Any]:
    """An option callback: ``check(value)`` raising a library error is a usage error.

    The library says what is wrong with a value ("bad duration 'soon' (use e.g. 20m)");
    raised from a callback it becomes ``typer.BadParameter``, reported by ``CliGroup`` as
    one line with exit 2, before the store is opened. ``None`` (option not given) passes."""

    def callback(value: Any) -> Any:
        if value is None:
            return value
        try:
            check(value)
        except _error_roots() as exc:
            raise typer.BadParameter(str(exc)) from None
        return value

    return callback


def non_blank(value: str) -> str:
    """An argument callback: an empty or blank query is a usage error."""
    if not value.strip():
        raise typer.BadParameter("must not be empty")
    return value


def _usage_line(exc: click_errors.UsageError) -> str:
    """Click's usage error as one line, naming the command's help."""
    message = " ".join(exc.format_message().split()).rstrip(".")
    if exc.ctx is not None:
        message += f"; see '{exc.ctx.command_path} --help'"
    return message


# "no arguments: show the help" is a usage error in Click 8.2+; older ones print it themselves
class _NotRaised(click_errors.UsageError):
    """Stands in for an exception class the installed Click does not have."""


_NO_ARGS_IS_HELP: type[click_errors.UsageError] = getattr(
    click_errors, "NoArgsIsHelpError", _NotRaised
)


class CliGroup(TyperGroup):
    """The root command of both apps; a usage error is one line on stderr and exit 2.

    Click's own reporting (the usage, a hint and a boxed message on several lines) is
    replaced here, once for both apps and whoever calls them (the console entries,
    ``typer.testing.CliRunner``): an unknown option or command, a bad value from a type
    or from a ``usage_check``/``BadParameter`` callback, a missing argument."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        run = functools.partial(
            super().main, args, prog_name, complete_var, False, windows_expand_args, **extra
        )
        if not standalone_mode:
            return run()
        try:
            code = run()
        except _NO_ARGS_IS_HELP as exc:
            text = exc.format_message()  # Typer's help printed itself as the error was made
            if text:
                sys.stdout.write(text + "\n")
            code = 2
        except click_errors.UsageError as exc:
            print(f"error: {_usage_line(exc)}", file=sys.stderr, flush=True)
            code = 2
        except click_errors.ClickException as exc:
            print(f"error: {' '.join(exc.format_message().split())}", file=sys.stderr, flush=True)
            code = exc.exit_code
        except typer.Abort:
            print("error: interrupted", file=sys.stderr, flush=True)
            code = 130
        sys.exit(code if isinstance(code, int) else 0)
