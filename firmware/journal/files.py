"""The journal's files in a state directory, and two small helpers for them.

``journal.sqlite3`` (SQLite, with its ``-wal`` and ``-shm``), ``journal.acks``
(the record of acknowledged lines) and ``referee.lock`` (who owns the
directory).  Files set aside keep these names with a suffix (see ``aside``).
"""

from __future__ import annotations

import os
from pathlib import Path

JOURNAL_NAME = "journal.sqlite3"
ACKS_NAME = "journal.acks"
"""The record of acknowledged lines, beside the journal."""
LOCK_NAME = "referee.lock"
"""Held (flock) by the referee that owns the state directory; holds its pid."""
JOURNAL_FILES = ("", "-wal", "-shm")
"""SQLite's files of the journal: ``journal.sqlite3`` and its -wal and -shm."""


def decode(data: bytes) -> str:
    """Stored bytes as text; bytes that are not UTF-8 (a damaged line) read as U+FFFD."""
    return data.decode("utf-8", "replace")


def fsync_dir(path: Path) -> None:
    """Make renames and new files in ``path`` durable (best effort)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
