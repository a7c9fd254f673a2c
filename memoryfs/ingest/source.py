"""One input to ingest: a file, the bytes of standard input, or messages given as data.

``Source`` reads its bytes once and decodes and parses them on demand, so format
detection and the format's loader share one parse of a large export. Every problem
is an ``IngestError`` that names the input (its path, or ``<stdin>``) and, for
JSON, the line and column.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from memoryfs.errors import IngestError

__all__ = ["MAX_INPUT_BYTES", "MESSAGES_LABEL", "STDIN_LABEL", "Source"]

MAX_INPUT_BYTES = 200_000_000
STDIN_LABEL = "<stdin>"
MESSAGES_LABEL = "<messages>"


class Source:
    """An input's bytes, its name for messages, and what its name says (stem, suffix).

    ``modified`` is the file's modification time (for stdin: the time it was read);
    it is the time given to turns of an input that carries no times at all.
    """

    def __init__(
        self,
        label: str,
        data: bytes,
        *,
        stem: str = "",
        suffix: str = "",
        modified: dt.datetime | None = None,
    ) -> None:
        self.label = label
        self.data = data
        self.stem = stem
        self.suffix = suffix.lower()
        self.modified = modified or dt.datetime.now(dt.UTC)
        self._text: str | None = None
        self._json: tuple[Any] | None = None

    @classmethod
    def from_path(cls, path: Path, max_bytes: int = MAX_INPUT_BYTES) -> Source:
        """The regular file ``path`` (a link to one is followed), at most ``max_bytes``
        long: a FIFO, a device (``/dev/zero``) or a folder is refused before a byte is
        read, a larger file by its size."""
        try:
            # O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below)
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            raise IngestError(f"{path}: cannot read: {exc.strerror or exc}") from None
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise IngestError(
                    f"{path}: not a regular file ({_file_kind(st.st_mode)}); "
                    "ingest reads files, or '-' for standard input"
                )
            if st.st_size > max_bytes:
                raise IngestError(
                    f"{path}: {st.st_size} bytes, over the {max_bytes}-byte limit "
                    "(limits.input_bytes in memory.toml); split it first"
                )
            try:
                data = fh.read(max_bytes + 1)
            except OSError as exc:
                raise IngestError(f"{path}: cannot read: {exc.strerror or exc}") from None
        if len(data) > max_bytes:  # it grew while it was read
            raise IngestError(f"{path}: larger than {max_bytes} bytes; split it first")
        modified = dt.datetime.fromtimestamp(st.st_mtime, tz=dt.UTC)
        return cls(str(path), data, stem=path.stem, suffix=path.suffix, modified=modified)

    @classmethod
    def from_stdin(cls, data: bytes, label: str = STDIN_LABEL) -> Source:
        """Bytes read from a stream (no file name: the session id comes from the content
        or from ``session_id``); ``label`` names it in messages."""
        if len(data) > MAX_INPUT_BYTES:
            raise IngestError(f"{label}: larger than {MAX_INPUT_BYTES} bytes; split it first")
        return cls(label, data)

    @classmethod
    def from_messages(cls, messages: Sequence[Mapping[str, Any]]) -> Source:
        """Chat messages given as data, ``{"role", "content", "ts"}`` each (``ts``
        optional), as one input in the ``openai`` form: a JSON list of messages."""
        if isinstance(messages, str | bytes) or not all(isinstance(m, Mapping) for m in messages):
            raise IngestError(f"{MESSAGES_LABEL}: expected a list of message objects")
        try:
            data = json.dumps([dict(m) for m in messages], ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise IngestError(f"{MESSAGES_LABEL}: not JSON data ({exc})") from None
        return cls.from_stdin(data, MESSAGES_LABEL)

    @property
    def is_stdin(self) -> bool:
        return not self.stem

    @property
    def text(self) -> str:
        """The input as text: UTF-8 (a BOM is dropped), line endings normalized to LF."""
        if self._text is None:
            if b"\x00" in self.data:
                raise IngestError(f"{self.label}: contains NUL bytes; not a text transcript")
            try:
                text = self.data.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise IngestError(
                    f"{self.label}: not UTF-8 (byte {exc.start}); convert it to UTF-8"
                ) from None
            self._text = text.replace("\r\n", "\n").replace("\r", "\n")
        return self._text

    def json(self) -> Any:
        """The whole input parsed as one JSON document."""
        if self._json is None:
            self._json = (parse_json(self.text, self.label),)
        return self._json[0]

    def json_lines(self) -> Iterator[tuple[int, Any]]:
        """``(line number, value)`` for each non-blank line, each parsed as JSON."""
        for lineno, line in enumerate(self.text.split("\n"), start=1):
            if line.strip():
                yield lineno, parse_json(line, f"{self.label}:{lineno}", line_of_file=True)


def _file_kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return "not a plain file"


def parse_json(text: str, where: str, *, line_of_file: bool = False) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if line_of_file:
            raise IngestError(
                f"{where}: not a JSON object ({exc.msg}, column {exc.colno})"
            ) from None
        raise IngestError(
            f"{where}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise IngestError(f"{where}: JSON nested too deeply to read") from None
    except ValueError as exc:  # integers over the digit limit
        raise IngestError(f"{where}: not valid JSON ({exc})") from None
