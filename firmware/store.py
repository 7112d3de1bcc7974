"""The journal: every game the referee keeps, in SQLite (WAL, synchronous=FULL).

Stored per game: its event lines in order, exactly as entered (``undo`` lines
included), and the entry flow's position (UI state the events do not hold).
Rules and names are the game's own ``rules``/``players`` lines.  Derived state
(score, dealer, winner) is never stored: it is rebuilt by replaying the lines.

``append`` returns only after the line is committed to disk, so the caller may
acknowledge the entry (screen, serial link) once it returns.  A write that
fails (a full or read-only card, the journal locked by another program)
raises :class:`JournalWriteError`, whose text says the cause in words; nothing
of it was kept.

Damage is detected, never resumed from silently (etcd's write-ahead log is the
model):

- every line carries a CRC-32 chained to the line before it (all games' lines
  in ``(game_id, seq)`` order), so an altered or missing line breaks the chain;
- a second, independent record outside SQLite, ``journal.acks``, knows how
  many lines were acknowledged and the chain's CRC at the last of them: a
  small preallocated file of 16-byte records, each written and fsynced after
  its commit and before the acknowledgement.  A journal shorter than that (a
  damaged -wal that SQLite silently stops reading at, a truncated file) or
  whose chain does not end on that CRC is found at open.

A journal found damaged is first kept aside byte for byte
(``journal.sqlite3.damaged-STAMP`` with its ``-wal``, ``-shm``, ``.acks`` and
a ``.reason``), checked with a read-only connection so that SQLite has not
checkpointed or deleted anything yet; then a fresh journal is written with
what could be trusted (each game up to its first damaged line) and
``damage`` says what was recovered, for the screen and the serial link.

A journal that cannot be read at all (not a database, corrupt pages, lines out
of sequence, a schema that is not ours, or a -wal left without its database)
is moved aside with a ``.reason`` file beside it, never deleted, and a fresh
one is started (``moved_aside`` says where it went).  Errors of the
surroundings rather than of the file (locked, read-only, permission, I/O,
disk full) do not move anything: they raise :class:`JournalError` naming the
cause, so a journal that is fine but momentarily unreachable is never set
aside.

One referee per state directory: a writing ``Store`` holds an exclusive
``flock`` on ``referee.lock`` (which holds its pid) for as long as it is open;
a second one raises :class:`JournalInUse` naming the other process.
``Store(dir, readonly=True)`` takes no lock and never writes (``games``).
"""

from __future__ import annotations

import errno
import fcntl
import os
import sqlite3
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple, TypeVar

from euchre_core import Game, Phase, replay, write_log
from euchre_core.events import NewGame, Players, SetRules
from euchre_core.log import HEADER
from euchre_core.rules import Rules

JOURNAL_NAME = "journal.sqlite3"
ACKS_NAME = "journal.acks"
"""The record of acknowledged lines, beside the journal."""
LOCK_NAME = "referee.lock"
"""Held (flock) by the referee that owns the state directory; holds its pid."""
JOURNAL_FILES = ("", "-wal", "-shm")
"""SQLite's files of the journal: ``journal.sqlite3`` and its -wal and -shm."""
NOTHING_KEPT = "nothing new can be kept"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    created REAL NOT NULL,
    flow TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS lines (
    game_id INTEGER NOT NULL REFERENCES games(id),
    seq INTEGER NOT NULL,
    text TEXT NOT NULL,
    crc INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (game_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    crc INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
"""

T = TypeVar("T")


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


def _is_unreadable(error: sqlite3.DatabaseError) -> bool:
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
    the card is asked too: mounted read-only?  space left?  may we write?"""
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
        return "the journal is read-only"
    if (state_dir / JOURNAL_NAME).is_dir():
        return f"{state_dir / JOURNAL_NAME} is a directory, not a journal"
    if primary == _IOERR or number == errno.EIO:
        return "the card gives read/write errors"
    return f"the journal failed ({error})"


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _fsync_dir(path: Path) -> None:
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


def chain_crc(previous: int, game_id: int, seq: int, text: bytes) -> int:
    """The CRC-32 a stored line carries: its game, number and UTF-8 text,
    chained to the CRC of the line before it (0 before the first)."""
    return zlib.crc32(b"%d %d " % (game_id, seq) + text, previous)


def setting_crc(key: str, value: bytes) -> int:
    """The CRC-32 a kept setting carries (its own, not chained)."""
    return zlib.crc32(key.encode("utf-8") + b"=" + value)


# --- the record of acknowledged lines ----------------------------------------------


_RECORD = struct.Struct("<QII")
"""count of lines (u64), the chain's CRC at the last of them (u32), the
record's own CRC-32 over those 12 bytes (u32): 16 bytes."""
_ACKS_CHUNK = 4096
"""Bytes the record file is extended by (zeros), before a commit that needs room."""


class Acked(NamedTuple):
    """What ``journal.acks`` says: ``lines`` acknowledged, the last with chain
    CRC ``crc``; ``problem`` if the file itself is damaged."""

    lines: int
    crc: int
    problem: str | None = None


def read_acks(path: Path) -> Acked | None:
    """The last good record in ``path`` (None: no such file)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    best = Acked(0, 0)
    ended = False
    for offset in range(0, len(data) - len(data) % _RECORD.size, _RECORD.size):
        chunk = data[offset:offset + _RECORD.size]
        if chunk == bytes(_RECORD.size):
            ended = True
            continue
        count, crc, check = _RECORD.unpack(chunk)
        if check != zlib.crc32(chunk[:12]) or ended or count < best.lines:
            # A torn last record (never fsynced, so never acknowledged) is
            # followed by zeros only; anything after it means damage.
            rest = data[offset + _RECORD.size:]
            if rest.strip(b"\0"):
                return Acked(best.lines, best.crc, f"{ACKS_NAME} damaged at byte {offset}")
            return best
        best = Acked(count, crc)
    return best


def reset_acks(path: Path, count: int, crc: int) -> None:
    """Write ``path`` afresh saying ``count`` lines were acknowledged, the
    last with chain CRC ``crc`` (tests and repair tools; the Store keeps its own)."""
    _AckFile(path, count, crc).close()


class _AckFile:
    """``journal.acks`` open for writing: records go into preallocated zeros
    (so a full card cannot fail one after its commit), fsynced each."""

    def __init__(self, path: Path, count: int, crc: int) -> None:
        """Start it afresh with one record (write a temporary, fsync, rename)."""
        self.path = path
        temp = path.with_name(path.name + ".new")
        with open(temp, "wb") as handle:
            handle.write(self._pack(count, crc) + bytes(_ACKS_CHUNK - _RECORD.size))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
        _fsync_dir(path.parent)
        self.fd = os.open(path, os.O_RDWR)
        self.next = _RECORD.size
        self.size = _ACKS_CHUNK

    @staticmethod
    def _pack(count: int, crc: int) -> bytes:
        head = struct.pack("<QI", count, crc)
        return head + struct.pack("<I", zlib.crc32(head))

    def reserve(self) -> None:
        """Room for the next record, made before the commit (OSError: no room)."""
        if self.next + _RECORD.size <= self.size:
            return
        os.pwrite(self.fd, bytes(_ACKS_CHUNK), self.size)
        os.fsync(self.fd)
        self.size += _ACKS_CHUNK

    def record(self, count: int, crc: int) -> None:
        os.pwrite(self.fd, self._pack(count, crc), self.next)
        os.fdatasync(self.fd)
        self.next += _RECORD.size

    def close(self) -> None:
        os.close(self.fd)


# --- one referee per state directory ----------------------------------------------


def _describe_process(pid_text: str) -> str:
    pid = pid_text.strip().split("\n")[0]
    if not pid.isdigit():
        return "another process"
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return f"pid {pid}"
    command = " ".join(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)
    return f"pid {pid}: {command}" if command else f"pid {pid}"


def _lock_state_dir(state_dir: Path) -> int | None:
    """Hold ``referee.lock`` (flock, exclusive); returns its fd.  None when it
    cannot even be made (a read-only card: the journal says why next)."""
    path = state_dir / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        try:
            holder = os.pread(fd, 4096, 0).decode("utf-8", "replace")
        except OSError:
            holder = ""
        os.close(fd)
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise JournalInUse(
                f"{state_dir} is in use by another referee ({_describe_process(holder)}): "
                "one referee per state directory") from None
        return None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError:
        pass  # a read-only card: the lock holds all the same
    return fd


# --- what an audit of the files found ----------------------------------------------


class _Audit:
    """The journal as the read-only check found it: ``legacy`` when written
    before lines carried CRCs (nothing to check them against); ``good`` each
    game's lines up to its first damaged one."""

    def __init__(self) -> None:
        self.rows = 0
        self.tail_crc = 0
        self.legacy = False
        self.damage: list[str] = []
        self.unchecked: str | None = None
        self.good: dict[int, list[bytes]] = {}
        self.games: list[tuple[int, float, str]] = []
        self.settings: list[tuple[str, str]] = []
        self.acknowledged = 0


class Damage(NamedTuple):
    """A damaged journal found at open: kept aside, and what was recovered."""

    kept_as: Path
    reason: str
    recovered: int
    """Lines recovered into the fresh journal."""
    acknowledged: int
    """Lines the record said were acknowledged (or found, if it said fewer)."""

    def sentence(self) -> str:
        return (f"journal damaged ({self.reason}): kept aside as {self.kept_as.name}; "
                f"recovered {self.recovered} of {self.acknowledged} lines")


class GameInfo(NamedTuple):
    """One stored game, for listings."""

    id: int
    created: float
    """Unix time (s)."""
    lines: int


class Store:
    """A crash-safe journal of games in ``state_dir/journal.sqlite3``."""

    def __init__(self, state_dir: Path, *, busy_timeout: float = 2.0,
                 readonly: bool = False) -> None:
        self.state_dir = Path(state_dir)
        self.busy_timeout = busy_timeout
        """Seconds to wait for another program that holds the journal."""
        self.readonly = readonly
        self.path = self.state_dir / JOURNAL_NAME
        self.moved_aside: Path | None = None
        """Where an unreadable journal was moved at open, if it was."""
        self.damage: Damage | None = None
        """A damaged journal found at open: kept aside, what was recovered."""
        self.unchecked: str | None = None
        """Why the journal could not be checked against the record (no record)."""
        self._lock_fd: int | None = None
        self._shm_found: bytes | None = None
        self._acks: _AckFile | None = None
        self._rows = 0
        self._tail_crc = 0
        self._write_lock = threading.Lock()
        if readonly:
            self._db = self._open_readonly()
            return
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise JournalError(f"{fault_words(self.state_dir, error)} "
                               f"(cannot make {self.state_dir})") from error
        self._lock_fd = _lock_state_dir(self.state_dir)
        try:
            self._db = self._open_checked()
        except BaseException:
            self._unlock()
            raise

    # --- opening -------------------------------------------------------------

    def _open_checked(self) -> sqlite3.Connection:
        shm = Path(str(self.path) + "-shm")
        try:
            self.moved_aside = self._set_aside_orphans()
            # The -shm as it was: reading the journal may rebuild that index.
            self._shm_found = shm.read_bytes() if shm.exists() else None
            audit = self._audit() if self.path.exists() else _Audit()
        except sqlite3.DatabaseError as error:
            if not _is_unreadable(error):
                raise self._open_error(error) from error
            self.moved_aside = self._move_aside(error)
            audit = _Audit()
        except OSError as error:
            raise self._open_error(error) from error
        try:
            if audit.damage:
                self.damage = self._keep_damaged(audit)
            db = self._db = self._open()
            if audit.legacy:
                self._upgrade()
            self._read_tail(db)
            if audit.unchecked and self._rows:
                self.unchecked = audit.unchecked
            self._acks = _AckFile(self.state_dir / ACKS_NAME, self._rows, self._tail_crc)
        except sqlite3.DatabaseError as error:
            raise self._open_error(error) from error
        except OSError as error:
            raise self._open_error(error) from error
        return db

    def _open_error(self, error: BaseException) -> JournalError:
        return JournalError(f"{fault_words(self.state_dir, error)}: {self.path} "
                            f"not opened ({error})")

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None,
                             check_same_thread=False)
        try:
            # Bytes that are not UTF-8 (a damaged line) read as U+FFFD: such a
            # line then fails to replay like any bad line, instead of raising.
            db.text_factory = _decode
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(_SCHEMA)
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def _read_only_uri(self) -> str:
        """The journal opened read-only.  ``games`` (readonly) with no -wal
        there opens it immutable too: SQLite then makes no -wal or -shm
        either (nothing else has the journal open: a running referee keeps its
        -wal until it stops)."""
        uri = self.path.resolve().as_uri() + "?mode=ro"
        if self.readonly and not Path(str(self.path) + "-wal").exists():
            uri += "&immutable=1"
        return uri

    def _open_readonly(self) -> sqlite3.Connection:
        """A connection that never writes the journal (``games``): read-only,
        so it neither checkpoints nor deletes the -wal."""
        if not self.path.is_file():
            raise JournalError(f"no journal in {self.state_dir}")
        try:
            audit = self._audit()
            db = sqlite3.connect(self._read_only_uri(), uri=True,
                                 timeout=self.busy_timeout, check_same_thread=False)
            db.text_factory = _decode
        except sqlite3.DatabaseError as error:
            raise JournalError(f"{self.path}: cannot be read ({error})") from error
        if audit.damage:
            self.damage = Damage(self.path, "; ".join(audit.damage),
                                 sum(len(v) for v in audit.good.values()), audit.acknowledged)
        self.unchecked = audit.unchecked if audit.rows else None
        return db

    def _audit(self) -> _Audit:
        """Check the journal through a read-only connection: SQLite's
        ``quick_check``, our schema, the types, the line numbering (raise
        ``sqlite3.DatabaseError`` if it is not a journal that can be read),
        then each line's CRC and the record of acknowledged lines (damage,
        in the audit).

        Read-only, so that a bad journal is found exactly as it was: a
        read-write connection that fails to read the database still
        checkpoints its -wal into the file when it is closed, and deletes
        the -wal.
        """
        audit = _Audit()
        # The record first: a referee writing meanwhile (``games`` reads while
        # it runs) only adds lines after it, never the other way round.
        acked = read_acks(self.state_dir / ACKS_NAME)
        ro = sqlite3.connect(self._read_only_uri(), uri=True,
                             timeout=self.busy_timeout)
        ro.text_factory = bytes
        try:
            check = ro.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != b"ok":
                raise sqlite3.DatabaseError(f"quick_check: {check}")
            tables = {name.decode() for (name,) in ro.execute(
                "SELECT name FROM sqlite_master WHERE type='table'")}
            # Our schema (any table may be missing yet: the schema script
            # commits one table at a time), every value of the type we wrote,
            # and each game's lines numbered 0, 1, 2... with no gap.
            columns = {}
            for table in tables & {"games", "lines", "settings"}:
                columns[table] = {row[1].decode() for row in ro.execute(
                    f"PRAGMA table_info({table})")}
            if "games" in tables:
                ro.execute("SELECT id, created, flow FROM games LIMIT 0")
                self._check_type(ro, "games", "flow")
                audit.games = [(gid, created, _decode(flow)) for gid, created, flow in
                               ro.execute("SELECT id, created, flow FROM games ORDER BY id")]
            audit.legacy = bool(tables) and "crc" not in columns.get("lines", {"crc"})
            if "lines" in tables:
                ro.execute("SELECT game_id, seq, text FROM lines LIMIT 0")
                self._check_type(ro, "lines", "text")
                (gaps,) = ro.execute(
                    "SELECT COUNT(*) FROM (SELECT COUNT(*) AS n, MIN(seq) AS lo, "
                    "MAX(seq) AS hi FROM lines GROUP BY game_id) "
                    "WHERE lo != 0 OR hi != n - 1").fetchone()
                if gaps:
                    raise sqlite3.DatabaseError(f"{gaps} games with lines out of sequence")
                self._check_lines(ro, audit)
            if "settings" in tables:
                ro.execute("SELECT key, value FROM settings LIMIT 0")
                self._check_type(ro, "settings", "value")
                self._check_settings(ro, audit, "crc" in columns["settings"])
        finally:
            ro.close()
        self._check_acks(audit, acked)
        return audit

    @staticmethod
    def _check_lines(ro: sqlite3.Connection, audit: _Audit) -> None:
        """Each line's CRC against its text and the line before it."""
        query = ("SELECT game_id, seq, text, crc FROM lines ORDER BY game_id, seq"
                 if not audit.legacy else
                 "SELECT game_id, seq, text, 0 FROM lines ORDER BY game_id, seq")
        previous = 0
        bad_games: set[int] = set()
        for game_id, seq, text, crc in ro.execute(query):
            audit.rows += 1
            if not audit.legacy and crc != chain_crc(previous, game_id, seq, text):
                if game_id not in bad_games:
                    audit.damage.append(f"game {game_id} line {seq + 1} altered")
                bad_games.add(game_id)
            elif game_id not in bad_games:
                audit.good.setdefault(game_id, []).append(text)
            previous = crc
            audit.tail_crc = crc

    @staticmethod
    def _check_settings(ro: sqlite3.Connection, audit: _Audit, has_crc: bool) -> None:
        rows = ro.execute("SELECT key, value, crc FROM settings" if has_crc
                          else "SELECT key, value, 0 FROM settings")
        for key, value, crc in rows:
            name = _decode(key)
            if has_crc and crc != setting_crc(name, value):
                audit.damage.append(f"setting {name} altered")
                continue
            audit.settings.append((name, _decode(value)))

    def _check_acks(self, audit: _Audit, acked: Acked | None) -> None:
        """The journal against ``journal.acks``: at least as many lines, and
        the chain's CRC where the record ends."""
        audit.acknowledged = audit.rows
        if audit.legacy:
            return
        if acked is None:
            audit.unchecked = f"no {ACKS_NAME}: the journal's length could not be checked"
            return
        if acked.problem is not None:
            audit.damage.append(acked.problem)
        audit.acknowledged = max(acked.lines, audit.rows)
        if audit.rows < acked.lines:
            audit.damage.append(f"{acked.lines - audit.rows} acknowledged lines missing")
        elif acked.lines and not audit.damage:
            crc = self._crc_at(acked.lines)
            if crc != acked.crc:
                audit.damage.append("the lines do not match the record of acknowledged lines")

    def _crc_at(self, count: int) -> int | None:
        ro = sqlite3.connect(self._read_only_uri(), uri=True,
                             timeout=self.busy_timeout)
        try:
            row = ro.execute("SELECT crc FROM lines ORDER BY game_id, seq LIMIT 1 OFFSET ?",
                             (count - 1,)).fetchone()
        finally:
            ro.close()
        return None if row is None else int(row[0])

    @staticmethod
    def _check_type(db: sqlite3.Connection, table: str, column: str) -> None:
        (wrong,) = db.execute(
            f"SELECT COUNT(*) FROM {table} WHERE typeof({column}) != 'text'").fetchone()
        if wrong:
            raise sqlite3.DatabaseError(f"{table}.{column}: {wrong} values that are not text")

    def _upgrade(self) -> None:
        """A journal written before lines carried CRCs: add them (trusted as is)."""
        with self._transaction() as tx:
            for table in ("lines", "settings"):
                names = {row[1] for row in tx.execute(f"PRAGMA table_info({table})")}
                if "crc" not in names:
                    tx.execute(f"ALTER TABLE {table} ADD COLUMN crc INTEGER NOT NULL DEFAULT 0")
            previous = 0
            rows = tx.execute("SELECT game_id, seq, CAST(text AS BLOB) FROM lines "
                              "ORDER BY game_id, seq").fetchall()
            for game_id, seq, text in rows:
                previous = chain_crc(previous, game_id, seq, bytes(text))
                tx.execute("UPDATE lines SET crc=? WHERE game_id=? AND seq=?",
                           (previous, game_id, seq))
            for key, value in tx.execute(
                    "SELECT key, CAST(value AS BLOB) FROM settings").fetchall():
                tx.execute("UPDATE settings SET crc=? WHERE key=?",
                           (setting_crc(key, bytes(value)), key))

    def _read_tail(self, db: sqlite3.Connection) -> None:
        (self._rows,) = db.execute("SELECT COUNT(*) FROM lines").fetchone()
        row = db.execute("SELECT crc FROM lines ORDER BY game_id DESC, seq DESC LIMIT 1"
                         ).fetchone()
        self._tail_crc = 0 if row is None else int(row[0])

    def _aside_name(self, kind: str) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self.state_dir / f"{JOURNAL_NAME}.{kind}-{stamp}"
        index = 1
        while any(Path(str(target) + s).exists()
                  for s in (*JOURNAL_FILES, ".acks", ".reason")):
            target = self.state_dir / f"{JOURNAL_NAME}.{kind}-{stamp}-{index}"
            index += 1
        return target

    def _write_reason(self, target: Path, text: str) -> None:
        reason = self.state_dir / (target.name + ".reason")
        with open(reason, "w", encoding="utf-8") as handle:
            handle.write(f"{text}\n")
            handle.flush()
            os.fsync(handle.fileno())

    def _rename_aside(self, target: Path, suffixes: Sequence[str]) -> None:
        """Rename the journal's files (main file first) and the record to ``target*``."""
        for suffix in suffixes:
            source = Path(str(self.path) + suffix)
            if source.exists():
                os.replace(source, Path(str(target) + suffix))
        acks = self.state_dir / ACKS_NAME
        if acks.exists():
            os.replace(acks, Path(str(target) + ".acks"))
        _fsync_dir(self.state_dir)

    def _move_aside(self, error: Exception) -> Path:
        """Rename the journal (and its -wal/-shm, and the record) to
        ``*.unreadable-STAMP``.

        The main file goes first: if power fails before its -wal follows, the
        -wal is left without a database and :meth:`_set_aside_orphans` moves it
        at the next start, so it is never replayed into a fresh journal.
        """
        target = self._aside_name("unreadable")
        self._rename_aside(target, JOURNAL_FILES)
        self._write_reason(target, str(error))
        _fsync_dir(self.state_dir)
        return target

    def _keep_damaged(self, audit: _Audit) -> Damage:
        """Move the damaged files aside as they are, then write a fresh
        journal with what could be trusted, in one transaction."""
        target = self._aside_name("damaged")
        reason = "; ".join(audit.damage)
        self._rename_aside(target, JOURNAL_FILES)
        if self._shm_found is not None:
            with open(str(target) + "-shm", "wb") as handle:
                handle.write(self._shm_found)
                handle.flush()
                os.fsync(handle.fileno())
        self._write_reason(target, reason)
        _fsync_dir(self.state_dir)
        db = self._open()
        try:
            db.execute("BEGIN IMMEDIATE")
            previous = 0
            known = {gid for gid, _, _ in audit.games}
            games = audit.games + [(gid, time.time(), "") for gid in audit.good
                                   if gid not in known]
            for game_id, created, flow in sorted(games):
                db.execute("INSERT INTO games (id, created, flow) VALUES (?, ?, ?)",
                           (game_id, created, flow))
                for seq, text in enumerate(audit.good.get(game_id, [])):
                    previous = chain_crc(previous, game_id, seq, text)
                    db.execute("INSERT INTO lines (game_id, seq, text, crc) VALUES (?, ?, ?, ?)",
                               (game_id, seq, _decode(text), previous))
            for key, value in audit.settings:
                db.execute("INSERT INTO settings (key, value, crc) VALUES (?, ?, ?)",
                           (key, value, setting_crc(key, value.encode())))
            db.execute("COMMIT")
        finally:
            db.close()
        recovered = sum(len(lines) for lines in audit.good.values())
        return Damage(target, reason, recovered, audit.acknowledged)

    def _set_aside_orphans(self) -> Path | None:
        """A -wal with no journal beside it (a move aside cut short, or a
        journal deleted by hand) is moved aside too: SQLite would otherwise
        replay that old WAL into the new, empty journal.  So is a record of
        acknowledged lines left without its journal (a journal deleted)."""
        if self.path.exists():
            return None
        acked = read_acks(self.state_dir / ACKS_NAME)
        lost = acked is not None and acked.lines > 0
        if not Path(str(self.path) + "-wal").exists() and not lost:
            return None  # (a lone -shm is only an index: SQLite rebuilds it)
        orphans = [s for s in ("-wal", "-shm") if Path(str(self.path) + s).exists()]
        target = self._aside_name("orphan")
        self._rename_aside(target, orphans)
        found = [*orphans, *([ACKS_NAME] if acked is not None else [])]
        self._write_reason(target, f"{' and '.join(found)} found without {JOURNAL_NAME}")
        _fsync_dir(self.state_dir)
        return target

    # --- writing -------------------------------------------------------------

    @contextmanager
    def _transaction(self, db: sqlite3.Connection | None = None
                     ) -> Iterator[sqlite3.Connection]:
        db = self._db if db is None else db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _write(self, work: Callable[[sqlite3.Connection], T], *,
               db: sqlite3.Connection | None = None, wait: float = 0.0) -> T:
        """Run ``work`` in one committed write transaction (on ``db``, else the
        store's connection); any failure raises :class:`JournalWriteError`
        with the cause in words (nothing was kept).  Another write of this
        store under way (a game stored off the main loop) is waited for up
        to ``wait`` seconds, then refused as busy."""
        if self.readonly:
            raise JournalWriteError(f"the journal is open read-only: {NOTHING_KEPT}")
        locked = (self._write_lock.acquire(timeout=wait) if wait > 0
                  else self._write_lock.acquire(blocking=False))
        if not locked:
            raise JournalWriteError(
                f"the journal is busy storing a game: {NOTHING_KEPT} yet, try again")
        try:
            try:
                assert self._acks is not None
                self._acks.reserve()
                with self._transaction(db) as tx:
                    result = work(tx)
            except (sqlite3.Error, OSError) as error:
                self._rollback_quietly(db)
                raise JournalWriteError(f"{fault_words(self.state_dir, error)}: {NOTHING_KEPT}",
                                        str(error)) from error
            try:
                self._acks.record(self._rows, self._tail_crc)
            except OSError:
                # Committed (synchronous=FULL): the entry is durable.  The
                # record only lags behind: it is a lower bound, never a lie.
                pass
            return result
        finally:
            self._write_lock.release()

    def _rollback_quietly(self, db: sqlite3.Connection | None = None) -> None:
        db = self._db if db is None else db
        try:
            if db.in_transaction:
                db.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        self._read_tail_quietly()

    def _read_tail_quietly(self) -> None:
        try:
            self._read_tail(self._db)
        except sqlite3.Error:
            pass

    def _add_lines(self, db: sqlite3.Connection, game_id: int, lines: Sequence[str]) -> None:
        """Insert ``lines`` after the game's last, each with its chained CRC."""
        tail = db.execute("SELECT game_id, seq, crc FROM lines "
                          "ORDER BY game_id DESC, seq DESC LIMIT 1").fetchone()
        previous = 0 if tail is None else int(tail[2])
        if previous != self._tail_crc:
            raise sqlite3.DatabaseError("the journal changed outside this referee")
        if tail is not None and tail[0] > game_id:
            raise JournalError(f"game {game_id} is not the newest game: it takes no lines")
        seq = tail[1] + 1 if tail is not None and tail[0] == game_id else 0
        rows = []
        for line in lines:
            previous = chain_crc(previous, game_id, seq, line.encode("utf-8"))
            rows.append((game_id, seq, line, previous))
            seq += 1
        db.executemany("INSERT INTO lines (game_id, seq, text, crc) VALUES (?, ?, ?, ?)", rows)
        self._rows += len(rows)
        self._tail_crc = previous

    def close(self) -> None:
        self._db.close()
        if self._acks is not None:
            self._acks.close()
            self._acks = None
        self._unlock()

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    # --- games ---------------------------------------------------------------

    def new_game(self, lines: Sequence[str] = (), *, off_loop: bool = False) -> int:
        """Start a stored game with its first lines; returns its id (durable).

        ``off_loop``: called from another thread than the main loop's (a long
        game loaded over the serial link), on a connection of its own, so the
        main loop keeps running meanwhile; its writes are refused as busy
        until this one is done."""

        def work(db: sqlite3.Connection) -> int:
            cursor = db.execute("INSERT INTO games (created) VALUES (?)", (time.time(),))
            game_id = cursor.lastrowid
            assert game_id is not None
            self._add_lines(db, game_id, lines)
            return game_id

        if not off_loop:
            return self._write(work)
        try:
            own = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None)
            own.execute("PRAGMA synchronous=FULL")
        except sqlite3.Error as error:
            raise JournalWriteError(f"{fault_words(self.state_dir, error)}: {NOTHING_KEPT}",
                                    str(error)) from error
        try:
            return self._write(work, db=own, wait=30.0)
        finally:
            own.close()

    def append(self, game_id: int, line: str, flow: str | None = None) -> None:
        """Add one line to a game, durably (and the flow position, if given)."""

        def work(db: sqlite3.Connection) -> None:
            self._add_lines(db, game_id, [line])
            if flow is not None:
                db.execute("UPDATE games SET flow=? WHERE id=?", (flow, game_id))

        self._write(work)

    def save_flow(self, game_id: int, flow: str) -> None:
        """Remember the entry flow's position (a half-made selection, a cursor).

        Committed without waiting for the disk (``synchronous=NORMAL`` for this
        one commit): it is no entry, so a power cut may lose the last few
        cursor moves, never a line; the next entry's commit syncs it too.
        """
        try:
            self._db.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as error:
            raise JournalWriteError(f"{fault_words(self.state_dir, error)}: {NOTHING_KEPT}",
                                    str(error)) from error
        try:
            self._write(lambda db: db.execute("UPDATE games SET flow=? WHERE id=?",
                                              (flow, game_id)))
        finally:
            try:
                self._db.execute("PRAGMA synchronous=FULL")
            except sqlite3.Error:
                pass

    def probe(self, game_id: int, flow: str) -> None:
        """Does the journal take writes again?  One small durable write (the
        flow position) that waits at most 0.1 s for a lock; JournalWriteError
        if not."""
        try:
            self._db.execute("PRAGMA busy_timeout=100")
        except sqlite3.Error as error:
            raise JournalWriteError(f"{fault_words(self.state_dir, error)}: {NOTHING_KEPT}",
                                    str(error)) from error
        # A changed value (SQLite skips writing a row that stays the same): the
        # flow with or without one trailing space, which its JSON ignores;
        # synchronous=FULL, so a card that takes writes but not fsyncs fails.
        stored = self.flow(game_id)
        changed = flow if stored != flow else flow + " "
        try:
            self._write(lambda db: db.execute("UPDATE games SET flow=? WHERE id=?",
                                              (changed, game_id)))
        finally:
            try:
                self._db.execute(f"PRAGMA busy_timeout={int(self.busy_timeout * 1000)}")
            except sqlite3.Error:
                pass

    def set_setting(self, key: str, value: str) -> None:
        """Keep a setting for the games to come, durably (``players``, ``rules``)."""
        self._write(lambda db: db.execute(
            "INSERT OR REPLACE INTO settings (key, value, crc) VALUES (?, ?, ?)",
            (key, value, setting_crc(key, value.encode("utf-8")))))

    # --- reading -------------------------------------------------------------

    def settings(self) -> dict[str, str]:
        """Every kept setting."""
        return {str(key): str(value)
                for key, value in self._db.execute("SELECT key, value FROM settings ORDER BY key")}

    def flow(self, game_id: int) -> str:
        row = self._db.execute("SELECT flow FROM games WHERE id=?", (game_id,)).fetchone()
        return "" if row is None else str(row[0])

    def lines(self, game_id: int) -> list[str]:
        """The game's lines as entered, undos included."""
        rows = self._db.execute(
            "SELECT text FROM lines WHERE game_id=? ORDER BY seq", (game_id,)
        ).fetchall()
        return [text for (text,) in rows]

    def games(self) -> list[GameInfo]:
        rows = self._db.execute(
            "SELECT g.id, g.created, COUNT(l.seq) FROM games g "
            "LEFT JOIN lines l ON l.game_id = g.id GROUP BY g.id ORDER BY g.id"
        ).fetchall()
        return [GameInfo(game_id, created, count) for game_id, created, count in rows]

    def latest(self) -> int | None:
        """The id of the newest game (the one the referee resumes), or None."""
        row = self._db.execute("SELECT MAX(id) FROM games").fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def journal_text(self, game_id: int) -> str:
        """The game as a log with its undos, exactly as entered."""
        return "\n".join([HEADER, *self.lines(game_id)]) + "\n"

    def load(self, game_id: int, base: Game | None = None) -> Game:
        """Replay a stored game; raises JournalError if its lines do not replay."""
        result = replay(self.journal_text(game_id), base)
        if result.error is not None:
            raise JournalError(f"game {game_id}: {result.error}")
        return result.game

    def export(self, game_id: int, *, checksums: bool = False) -> str:
        """The game as a clean log: undos applied, score lines after each hand."""
        return write_log(self.load(game_id), checksums=checksums)

    def backup(self, target: Path) -> int:
        """Copy the journal, consistently, to the single file ``target`` with
        SQLite's backup API (written to a temporary beside it, fsynced, then
        renamed); returns the number of lines in it."""
        target = Path(target)
        temp = target.with_name(target.name + ".part")
        temp.unlink(missing_ok=True)
        out = sqlite3.connect(temp)
        try:
            self._db.backup(out)
            out.execute("PRAGMA journal_mode=DELETE")
            (count,) = out.execute("SELECT COUNT(*) FROM lines").fetchone()
        finally:
            out.close()
        with open(temp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(temp, target)
        _fsync_dir(target.parent)
        return int(count)


def games_of(game: Game) -> list[list[str]]:
    """A replayed log's games, each as the lines the referee stores for one
    game.  The first is the log's entries up to the second ``game`` line; each
    next one opens with its setup (``rules`` when not standard, ``players``),
    which takes in the ``players``/``rules`` lines between the two games."""
    shadow = Game()
    chunks: list[list[str]] = [[]]
    between: list[str] = []
    for entry in game.entries:
        if isinstance(entry, NewGame) and shadow.game_number > 0:
            chunks.append(_setup_of(shadow))
            between = []
        line = entry.line()
        if shadow.phase is Phase.GAME_OVER and isinstance(entry, (Players, SetRules)):
            between.append(line)
        else:
            chunks[-1].append(line)
        shadow.push(entry)
    chunks[-1].extend(between)
    return chunks


def _setup_of(game: Game) -> list[str]:
    lines = [SetRules(game.rules).line()] if game.rules != Rules() else []
    return [*lines, Players.from_names(game.names).line()]
