"""Checking a game log a line at a time, as it arrives: :class:`LogCheck`.

The serial link's ``replay`` feeds it the lines as they come over the wire,
and ``euchre-referee replay FILE`` feeds it a file's lines, so both give the
same verdict for the same bytes.  Only the lines not yet checked are kept
(a chunk of :data:`CHUNK_LINES`), never the whole text: memory stays flat
whatever the size of the log.  The verdict is :func:`euchre_core.replay`'s.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from euchre_core import Game, LogError, LogSyntaxError, Replay, replay
from euchre_core.lines import strip_line
from euchre_core.log import HEADER

from .link.protocol import not_utf8_reason, too_many_lines_reason

CHUNK_LINES: Final = 1000
"""Lines checked at a time (the most of a log's text kept at once)."""


class LogCheck:
    """A log, line by line: ``add(text)`` for each line, ``verdict()`` at the end.

    A line that cannot even be read (not UTF-8, too long for the link, one past
    ``max_lines``) ends the log as if the log reader had stopped there; an
    error the engine finds on an earlier line wins.
    """

    def __init__(self, *, max_lines: int | None = None, chunk_lines: int = CHUNK_LINES) -> None:
        self.max_lines = max_lines
        self.chunk_lines = chunk_lines
        self.received = 0
        self.game = Game()
        self.error: LogError | None = None
        """The verdict's error, once one is found (later lines are only counted)."""
        self._header_seen = False
        self._pending: list[str] = []
        self._pending_from = 1
        """The line number of ``_pending[0]``."""

    def add(self, text: str | None, problem: str | None = None) -> None:
        """The next line (None with ``problem``: a line that could not be read)."""
        self.received += 1
        number = self.received
        if self.error is not None:
            return
        if problem is None and self.max_lines is not None and number > self.max_lines:
            problem = too_many_lines_reason()
        if problem is not None:
            self._flush()
            if self.error is None:
                self.error = LogError(number, problem)
            return
        assert text is not None
        if not self._header_seen:
            self._before_header(number, text)
            return
        if not self._pending:
            self._pending_from = number
        self._pending.append(text)
        if len(self._pending) >= self.chunk_lines:
            self._flush()

    def add_bytes(self, raw: bytes) -> None:
        """The next line as bytes (not UTF-8: a problem of this line)."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            self.add(None, not_utf8_reason(raw, error))
        else:
            self.add(text)

    def _before_header(self, number: int, text: str) -> None:
        """Blank and comment lines before the header are skipped; the first
        other line must be the header (checked by the log reader itself)."""
        try:
            if not strip_line(text):
                return
        except LogSyntaxError as error:
            self.error = LogError(number, str(error))
            return
        # Line `number` of a text whose earlier lines are blank: the reader's
        # own header check, with the line number it would give.
        result = replay("\n" * (number - 1) + text + "\n", self.game)
        self.error = result.error
        self._header_seen = True

    def _flush(self) -> None:
        """Check the pending lines on the game (numbered as in the log)."""
        if not self._pending or self.error is not None:
            self._pending.clear()
            return
        text = HEADER + "\n" + "\n".join(self._pending) + "\n"
        self._pending.clear()
        result = replay(text, self.game)
        if result.error is not None:  # line 2 of `text` is line _pending_from of the log
            self.error = LogError(result.error.line + self._pending_from - 2,
                                  result.error.reason)

    def verdict(self) -> Replay:
        """What :func:`euchre_core.replay` gives for the lines so far."""
        self._flush()
        if self.error is None and not self._header_seen:
            self.error = LogError(1, f"empty log: the first line must be '{HEADER}'")
        if self.error is not None:
            return Replay(self.game, self.error, self.error.line)
        return Replay(self.game, None, self.received)


class LogFileError(Exception):
    """A log file that cannot be read; the message names it: ``PATH: no such file``."""


def read_log(path: str) -> bytes:
    """The bytes of the log at ``path`` (``-``: standard input)."""
    try:
        return sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except FileNotFoundError:
        raise LogFileError(f"{path}: no such file") from None
    except OSError as error:
        raise LogFileError(f"{path}: {error.strerror}") from None


def file_lines(data: bytes) -> Iterable[bytes]:
    """A file's lines as the log reader sees them: split at LF, the LF of the
    last line optional."""
    start = 0
    size = len(data)
    while start < size:
        end = data.find(b"\n", start)
        if end < 0:
            yield data[start:]
            return
        yield data[start:end]
        start = end + 1


def check_bytes(data: bytes) -> Replay:
    """The verdict on a whole file's bytes (``euchre-referee replay FILE``).

    A file that is all UTF-8 and valid is replayed as one text; any other goes
    line by line through :class:`LogCheck`, whose verdict names the bad line.
    """
    try:
        result = replay(data.decode("utf-8"))
    except UnicodeDecodeError:
        pass
    else:
        if result.error is None:
            return result
    check = LogCheck()
    for line in file_lines(data):
        check.add_bytes(line)
    return check.verdict()
