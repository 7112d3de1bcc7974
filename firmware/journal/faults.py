"""What can go wrong with the journal, and how it is said to the table.

The errors the journal raises; which SQLite errors are the file's own fault
(it cannot be read: set aside) and which are of its surroundings (locked,
read-only, permission, I/O, disk full: never a reason to set a journal aside,
so one that is fine but momentarily unreachable stays where it is); and the
cause of a failed write in words for the table.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from .files import JOURNAL_NAME

NOTHING_KEPT = "nothing new can be kept"


class JournalError(RuntimeError):
    """A game that does not replay, or a journal that cannot be opened for a
    reason that is not the file's fault (locked, read-only, no space...)."""


class JournalWriteError(JournalError):
    """A write the journal could not keep; nothing of it was kept.  ``str()``
    is the cause in words for the table ("the card is full: nothing new can be
    kept"); ``detail`` is SQLite's or the OS's own message."""

    def __init__(self, words: str, detail: str = "") -> None:
        super().__init__(words)
        self.detail = detail


class JournalInUse(JournalError):
    """Another referee holds the state directory."""


class JournalTextError(JournalError, ValueError):
    """A line (or flow, or setting) that is not UTF-8 text, a lone surrogate
    such as ``"\\ud800"``: it can never be kept; nothing of its write was.
    Not a :class:`JournalWriteError`: the card is fine, and a retry would
    fail the same way."""


# SQLite result codes (low byte of the extended code) that say the file is
# fine but cannot be used right now: never a reason to move a journal aside.
_NOT_THE_FILE = {
    3,  # SQLITE_PERM
    5,  # SQLITE_BUSY
    6,  # SQLITE_LOCKED
    7,  # SQLITE_NOMEM
    8,  # SQLITE_READONLY
    9,  # SQLITE_INTERRUPT
    10,  # SQLITE_IOERR
    13,  # SQLITE_FULL
    14,  # SQLITE_CANTOPEN
    15,  # SQLITE_PROTOCOL
    22,  # SQLITE_NOLFS
    23,  # SQLITE_AUTH
}
_BUSY, _LOCKED, _READONLY, _FULL, _PERM, _IOERR = 5, 6, 8, 13, 3, 10


def is_unreadable(error: sqlite3.DatabaseError) -> bool:
    """True when ``error`` means the journal file itself is bad (corrupt, not a
    database, not our schema, or one of our own checks failed)."""
    code = getattr(error, "sqlite_errorcode", None)
    return code is None or code & 0xFF not in _NOT_THE_FILE


def _read_only_mount(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _no_space(path: Path) -> bool:
    try:
        stats = os.statvfs(path)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < 64 * 1024


def _try_writing(directory: Path) -> int | None:
    """The errno of making (and removing) a small file in ``directory``, or None."""
    probe = directory / f".write-test-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as error:
        return error.errno
    try:
        os.write(fd, b"x")
        os.fsync(fd)
    except OSError as error:
        return error.errno
    finally:
        os.close(fd)
        try:
            os.unlink(probe)
        except OSError:
            pass
    return None


def fault_words(state_dir: Path, error: BaseException) -> str:
    """Why the journal in ``state_dir`` cannot be written, in words for the table.

    SQLite's own codes say little (a read-only card is an I/O error to it), so
    the card is asked too: mounted read-only?  space left?  may we write?
    "Read-only" is said only of a card that is (EROFS, or mounted so)."""
    code = getattr(error, "sqlite_errorcode", None)
    primary = None if code is None else code & 0xFF
    where = state_dir if state_dir.exists() else state_dir.parent
    number = getattr(error, "errno", None)
    if number is None and primary not in (_BUSY, _LOCKED):
        number = _try_writing(where)
    if primary in (_BUSY, _LOCKED):
        return "the journal is locked by another program"
    if number == errno.EROFS or _read_only_mount(where):
        return "the card is read-only"
    if primary == _FULL or number in (errno.ENOSPC, errno.EDQUOT) or _no_space(where):
        return "the card is full"
    if number in (errno.EACCES, errno.EPERM) or primary == _PERM or not os.access(
            where, os.W_OK):
        return f"no permission to write in {where}"
    if primary == _READONLY:
        # Not the card (asked above): a file of the journal this user may
        # not write (made by another user), or SQLite's own refusal.
        for suffix in ("", "-wal", "-shm"):
            path = Path(str(state_dir / JOURNAL_NAME) + suffix)
            if path.exists() and not os.access(path, os.W_OK):
                return f"no permission to write {path}"
        return f"the journal cannot be written ({error})"
    if (state_dir / JOURNAL_NAME).is_dir():
        return f"{state_dir / JOURNAL_NAME} is a directory, not a journal"
    if primary == _IOERR or number == errno.EIO:
        return "the card gives read/write errors"
    return f"the journal failed ({error})"


def write_refused(state_dir: Path, error: BaseException) -> JournalWriteError:
    """The refusal of a write that failed with ``error``: its cause in words."""
    return JournalWriteError(f"{fault_words(state_dir, error)}: {NOTHING_KEPT}", str(error))


def refused(state_dir: Path, error: BaseException) -> JournalError | None:
    """What a write that raised ``error`` in ``state_dir`` is refused with:
    the cause in words (SQLite's or the OS's error, :func:`write_refused`),
    a text that is not UTF-8 named with its reason (:class:`JournalTextError`);
    None: ``error`` goes on as it is (a JournalError, a bug, an interrupt)."""
    if isinstance(error, (sqlite3.Error, OSError)):
        return write_refused(state_dir, error)
    if isinstance(error, UnicodeEncodeError) and isinstance(error.object, str):
        text = error.object if len(error.object) <= 60 else error.object[:57] + "..."
        return JournalTextError(f"{text!r} is not UTF-8 text ({error.reason}, "
                                f"character {error.start + 1}): not kept")
    return None


def not_opened(state_dir: Path, error: BaseException) -> JournalError:
    """The journal in ``state_dir`` could not be opened, for a reason not its own."""
    return JournalError(f"{fault_words(state_dir, error)}: {state_dir / JOURNAL_NAME} "
                        f"not opened ({error})")
