"""Setting a journal's files aside: kept byte for byte, never deleted.

A journal that cannot be read at all (not a database, corrupt pages, lines
out of sequence, a schema that is not ours) goes to
``journal.sqlite3.unreadable-STAMP``; one found damaged to
``journal.sqlite3.damaged-STAMP`` (with the ``-shm`` as it was found); a
``-wal`` or record left without its journal to ``journal.sqlite3.orphan-STAMP``.
Each with its ``-wal``, ``-shm`` and ``.acks``, and a ``.reason`` file saying why.
Lines left out of a journal (never acknowledged) are written, each with its
game and number, in ``journal.sqlite3.unconfirmed-STAMP.reason``; a damaged
record of acknowledged lines alone (the journal fine) is kept as
``journal.sqlite3.record-damaged-STAMP.acks``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

from .acks import read_acks
from .files import ACKS_NAME, JOURNAL_FILES, JOURNAL_NAME, fsync_dir


def _aside_name(state_dir: Path, kind: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = state_dir / f"{JOURNAL_NAME}.{kind}-{stamp}"
    index = 1
    while any(Path(str(target) + s).exists()
              for s in (*JOURNAL_FILES, ".acks", ".reason")):
        target = state_dir / f"{JOURNAL_NAME}.{kind}-{stamp}-{index}"
        index += 1
    return target


def _write_reason(state_dir: Path, target: Path, text: str) -> None:
    reason = state_dir / (target.name + ".reason")
    with open(reason, "w", encoding="utf-8") as handle:
        handle.write(f"{text}\n")
        handle.flush()
        os.fsync(handle.fileno())


def _rename_aside(state_dir: Path, target: Path, suffixes: Sequence[str]) -> None:
    """Rename the journal's files (main file first) and the record to ``target*``."""
    path = state_dir / JOURNAL_NAME
    for suffix in suffixes:
        source = Path(str(path) + suffix)
        if source.exists():
            os.replace(source, Path(str(target) + suffix))
    acks = state_dir / ACKS_NAME
    if acks.exists():
        os.replace(acks, Path(str(target) + ".acks"))
    fsync_dir(state_dir)


def move_aside(state_dir: Path, error: Exception) -> Path:
    """Rename the journal (and its -wal/-shm, and the record) to
    ``*.unreadable-STAMP``.

    The main file goes first: if power fails before its -wal follows, the
    -wal is left without a database and :func:`set_aside_orphans` moves it
    at the next start, so it is never replayed into a fresh journal.
    """
    target = _aside_name(state_dir, "unreadable")
    _rename_aside(state_dir, target, JOURNAL_FILES)
    _write_reason(state_dir, target, str(error))
    fsync_dir(state_dir)
    return target


def keep_damaged(state_dir: Path, reason: str, shm_found: bytes | None) -> Path:
    """Move the damaged files aside as they are (the -shm as ``shm_found``,
    read before anything opened the journal), to ``*.damaged-STAMP``."""
    target = _aside_name(state_dir, "damaged")
    _rename_aside(state_dir, target, JOURNAL_FILES)
    if shm_found is not None:
        with open(str(target) + "-shm", "wb") as handle:
            handle.write(shm_found)
            handle.flush()
            os.fsync(handle.fileno())
    _write_reason(state_dir, target, reason)
    fsync_dir(state_dir)
    return target


def keep_unconfirmed(state_dir: Path, listing: str) -> Path:
    """Write ``listing`` (the lines about to be left out of the journal, and
    why) to ``journal.sqlite3.unconfirmed-STAMP.reason``, flushed; returns
    that file's path."""
    target = _aside_name(state_dir, "unconfirmed")
    _write_reason(state_dir, target, listing)
    fsync_dir(state_dir)
    return state_dir / (target.name + ".reason")


def keep_record(state_dir: Path, problem: str) -> Path:
    """Copy a damaged ``journal.acks`` (the journal itself fine) to
    ``journal.sqlite3.record-damaged-STAMP.acks`` with a ``.reason``, before
    the store writes a fresh record; returns the copy's path."""
    target = _aside_name(state_dir, "record-damaged")
    copy = Path(str(target) + ".acks")
    data = (state_dir / ACKS_NAME).read_bytes()
    with open(copy, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    _write_reason(state_dir, target, problem)
    fsync_dir(state_dir)
    return copy


def set_aside_orphans(state_dir: Path) -> Path | None:
    """A -wal with no journal beside it (a move aside cut short, or a
    journal deleted by hand) is moved aside too: SQLite would otherwise
    replay that old WAL into the new, empty journal.  So is a record of
    acknowledged lines left without its journal (a journal deleted)."""
    path = state_dir / JOURNAL_NAME
    if path.exists():
        return None
    acked = read_acks(state_dir / ACKS_NAME)
    lost = acked is not None and acked.lines > 0
    if not Path(str(path) + "-wal").exists() and not lost:
        return None  # (a lone -shm is only an index: SQLite rebuilds it)
    orphans = [s for s in ("-wal", "-shm") if Path(str(path) + s).exists()]
    target = _aside_name(state_dir, "orphan")
    _rename_aside(state_dir, target, orphans)
    found = [*orphans, *([ACKS_NAME] if acked is not None else [])]
    _write_reason(state_dir, target, f"{' and '.join(found)} found without {JOURNAL_NAME}")
    fsync_dir(state_dir)
    return target
