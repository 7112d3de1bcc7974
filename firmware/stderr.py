"""Standard error that never stops the referee.

The referee's log is its standard error: the journal under systemd, a file
under ``2>>file``, a terminal.  A write there that fails — the card full under
``2>>file`` (ENOSPC), a pipe whose reader has gone (EPIPE), a stream closed
or never opened — must neither stop the referee nor become a traceback:
whatever the log says is said on the screen or in ``status`` too.

:func:`guard` makes it so for the whole process, in one place, at the start
of ``run`` and ``emulate``: ``sys.stderr`` becomes a :class:`GuardedStream`,
whose writes and flushes drop what cannot be written (every ``print`` to it,
the warnings, a thread's traceback), and logging never raises
(``logging.raiseExceptions = False``: a handler that cannot write drops the
record).
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO


class GuardedStream:
    """A text stream whose ``write`` and ``flush`` never raise: what cannot
    be written (OSError, or ValueError for a closed stream) is dropped.
    Everything else is the wrapped stream's (None: nothing is written)."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.dropped = 0
        """Writes that could not be made."""

    def write(self, text: str) -> int:
        if self.stream is not None:
            try:
                return self.stream.write(text)
            except (OSError, ValueError):
                pass
        self.dropped += 1
        return len(text)

    def flush(self) -> None:
        if self.stream is None:
            return
        try:
            self.stream.flush()
        except (OSError, ValueError):
            self.dropped += 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def guard() -> None:
    """From now on, nothing written to standard error can raise (see above).
    Done once; again does nothing."""
    logging.raiseExceptions = False
    if not isinstance(sys.stderr, GuardedStream):
        sys.stderr = GuardedStream(sys.stderr)
