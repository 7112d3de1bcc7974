"""The journal: every game the referee keeps, in SQLite (WAL, synchronous=FULL).

Stored per game: its event lines in order, exactly as entered (``undo`` lines
included), and the entry flow's position (UI state the events do not hold).
Rules and names are the game's own ``rules``/``players`` lines.  Derived state
(score, dealer, winner) is never stored: it is rebuilt by replaying the lines.

``append`` returns only after the line is committed to disk, so the caller may
acknowledge the entry (screen, serial link) once it returns.

A journal that cannot be read (not a database, corrupt, lines out of
sequence, a schema that is not ours, or a -wal left without its database) is
moved aside with a ``.reason`` file
beside it, never deleted, and a fresh one is started (``moved_aside`` says
where it went, for the notice on the screen).  Errors of the surroundings
rather than of the file (locked, read-only, permission, I/O, disk full) do
not move anything: they raise :class:`JournalError`, so a journal that is
fine but momentarily unreachable is never set aside.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from euchre_core import Game, replay, write_log
from euchre_core.log import HEADER

JOURNAL_NAME = "journal.sqlite3"

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
    PRIMARY KEY (game_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
"""


class JournalError(RuntimeError):
    """A game that does not replay, or a journal that cannot be opened for a
    reason that is not the file's fault (locked, read-only, no space...)."""


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


def _is_unreadable(error: sqlite3.DatabaseError) -> bool:
    """True when ``error`` means the journal file itself is bad (corrupt, not a
    database, not our schema, or one of our own checks failed)."""
    code = getattr(error, "sqlite_errorcode", None)
    return code is None or code & 0xFF not in _NOT_THE_FILE


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


@dataclass(frozen=True)
class GameInfo:
    """One stored game, for listings."""

    id: int
    created: float
    """Unix time (s)."""
    lines: int


class Store:
    """A crash-safe journal of games in ``state_dir/journal.sqlite3``."""

    def __init__(self, state_dir: Path, *, busy_timeout: float = 5.0) -> None:
        self.state_dir = Path(state_dir)
        self.busy_timeout = busy_timeout
        """Seconds to wait for another process that holds the journal."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.state_dir / JOURNAL_NAME
        self.moved_aside: Path | None = self._set_aside_orphans()
        """Where an unreadable journal was moved at open, if it was."""
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as error:
            if not _is_unreadable(error):
                raise JournalError(f"{self.path}: {error}") from error
            self.moved_aside = self._move_aside(error)
            try:
                self._db = self._open()
            except sqlite3.DatabaseError as again:
                raise JournalError(f"{self.path}: {again}") from again

    def _open(self) -> sqlite3.Connection:
        if self.path.exists():
            self._check_file()
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

    def _check_file(self) -> None:
        """Check the journal through a read-only connection (SQLite's
        ``quick_check``, our schema, the types, the line numbering); raise
        ``sqlite3.DatabaseError`` if it is not a journal that can be read.

        Read-only, so that a bad journal reaches :meth:`_move_aside` exactly as
        it was: a read-write connection that fails to read the database
        still checkpoints its -wal into the file when it is closed, and
        deletes the -wal.
        """
        ro = sqlite3.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True,
                             timeout=self.busy_timeout)
        try:
            check = ro.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {check}")
            tables = {name for (name,) in ro.execute(
                "SELECT name FROM sqlite_master WHERE type='table'")}
            # Our schema (any table may be missing yet: the schema script
            # commits one table at a time), every value of the type we wrote,
            # and each game's lines numbered 0, 1, 2... with no gap.  All in
            # SQL: a journal of months of games opens in milliseconds.
            if "games" in tables:
                ro.execute("SELECT id, created, flow FROM games LIMIT 0")
                self._check_type(ro, "games", "flow")
            if "lines" in tables:
                ro.execute("SELECT game_id, seq, text FROM lines LIMIT 0")
                self._check_type(ro, "lines", "text")
                (gaps,) = ro.execute(
                    "SELECT COUNT(*) FROM (SELECT COUNT(*) AS n, MIN(seq) AS lo, "
                    "MAX(seq) AS hi FROM lines GROUP BY game_id) "
                    "WHERE lo != 0 OR hi != n - 1").fetchone()
                if gaps:
                    raise sqlite3.DatabaseError(f"{gaps} games with lines out of sequence")
            if "settings" in tables:
                ro.execute("SELECT key, value FROM settings LIMIT 0")
                self._check_type(ro, "settings", "value")
        finally:
            ro.close()

    @staticmethod
    def _check_type(db: sqlite3.Connection, table: str, column: str) -> None:
        (wrong,) = db.execute(
            f"SELECT COUNT(*) FROM {table} WHERE typeof({column}) != 'text'").fetchone()
        if wrong:
            raise sqlite3.DatabaseError(f"{table}.{column}: {wrong} values that are not text")

    def _aside_name(self, kind: str) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self.state_dir / f"{JOURNAL_NAME}.{kind}-{stamp}"
        index = 1
        while any(Path(str(target) + s).exists() for s in ("", "-wal", "-shm", ".reason")):
            target = self.state_dir / f"{JOURNAL_NAME}.{kind}-{stamp}-{index}"
            index += 1
        return target

    def _write_reason(self, target: Path, text: str) -> None:
        reason = self.state_dir / (target.name + ".reason")
        with open(reason, "w", encoding="utf-8") as handle:
            handle.write(f"{text}\n")
            handle.flush()
            os.fsync(handle.fileno())

    def _move_aside(self, error: Exception) -> Path:
        """Rename the journal (and its -wal/-shm) to ``*.unreadable-STAMP``.

        The main file goes first: if power fails before its -wal follows, the
        -wal is left without a database and :meth:`_set_aside_orphans` moves it
        at the next start, so it is never replayed into a fresh journal.
        """
        target = self._aside_name("unreadable")
        for suffix in ("", "-wal", "-shm"):
            source = Path(str(self.path) + suffix)
            if source.exists():
                os.replace(source, Path(str(target) + suffix))
        _fsync_dir(self.state_dir)
        self._write_reason(target, str(error))
        _fsync_dir(self.state_dir)
        return target

    def _set_aside_orphans(self) -> Path | None:
        """A -wal or -shm with no journal beside it (a move aside cut short, or
        a journal deleted by hand) is moved aside too: SQLite would otherwise
        replay that old WAL into the new, empty journal."""
        if self.path.exists() or not Path(str(self.path) + "-wal").exists():
            return None  # (a lone -shm is only an index: SQLite rebuilds it)
        orphans = [s for s in ("-wal", "-shm") if Path(str(self.path) + s).exists()]
        target = self._aside_name("orphan")
        for suffix in orphans:
            os.replace(Path(str(self.path) + suffix), Path(str(target) + suffix))
        _fsync_dir(self.state_dir)
        self._write_reason(target, f"{' and '.join(orphans)} found without {JOURNAL_NAME}")
        _fsync_dir(self.state_dir)
        return target

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()

    # --- games ---------------------------------------------------------------

    def new_game(self, lines: Sequence[str] = ()) -> int:
        """Start a stored game with its first lines; returns its id (durable)."""
        with self._transaction() as db:
            cursor = db.execute("INSERT INTO games (created) VALUES (?)", (time.time(),))
            game_id = cursor.lastrowid
            assert game_id is not None
            db.executemany(
                "INSERT INTO lines (game_id, seq, text) VALUES (?, ?, ?)",
                [(game_id, seq, line) for seq, line in enumerate(lines)],
            )
        return game_id

    def append(self, game_id: int, line: str, flow: str | None = None) -> None:
        """Add one line to a game, durably (and the flow position, if given)."""
        with self._transaction() as db:
            (count,) = db.execute(
                "SELECT COUNT(*) FROM lines WHERE game_id=?", (game_id,)
            ).fetchone()
            db.execute(
                "INSERT INTO lines (game_id, seq, text) VALUES (?, ?, ?)", (game_id, count, line)
            )
            if flow is not None:
                db.execute("UPDATE games SET flow=? WHERE id=?", (flow, game_id))

    def save_flow(self, game_id: int, flow: str) -> None:
        """Remember the entry flow's position (a half-made selection, a cursor).

        Committed without waiting for the disk (``synchronous=NORMAL`` for this
        one commit): it is no entry, so a power cut may lose the last few
        cursor moves, never a line; the next entry's commit syncs it too.
        """
        self._db.execute("PRAGMA synchronous=NORMAL")
        try:
            with self._transaction() as db:
                db.execute("UPDATE games SET flow=? WHERE id=?", (flow, game_id))
        finally:
            self._db.execute("PRAGMA synchronous=FULL")

    def set_setting(self, key: str, value: str) -> None:
        """Keep a setting for the games to come, durably (``players``, ``rules``)."""
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", (key, value))

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
