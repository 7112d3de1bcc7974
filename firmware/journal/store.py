"""The journal: every game the referee keeps, in SQLite (WAL, synchronous=FULL).

Stored per game: its event lines in order, exactly as entered (``undo`` lines
included), and the entry flow's position (UI state the events do not hold).
Rules and names are the game's own ``rules``/``players`` lines.  Derived state
(score, dealer, winner) is never stored: it is rebuilt by replaying the lines.

``append`` returns only after the line is committed to disk and recorded as
acknowledged in ``journal.acks`` (both flushed), so the caller may acknowledge
the entry (screen, serial link) once it returns.  A write that fails (a full
or read-only card, the journal locked by another program, a flush the card
refuses) raises :class:`JournalWriteError`, whose text says the cause in
words; nothing of it is part of the journal:

- a commit whose flush failed may still have left its frames in the -wal,
  whole (SQLite does not count them, but would read them back after a
  restart): they are beyond the record of acknowledged lines, so the next
  start leaves them out (below);
- a commit that was made but whose record could not be flushed is refused
  too, and taken back by a compensating write (at once, else in the same
  transaction as the next write: nothing is ever written on top of it, and
  it is never read meanwhile).

Each line carries a CRC chained to the one before (``chain``), and
``journal.acks`` records how many lines were acknowledged (``acks``).  At open
the files are checked first with a read-only connection, so that SQLite has
checkpointed or deleted nothing yet (``audit``): lines beyond the record were
never acknowledged (refused, or the power went before their record was kept)
and are left out, written aside first (``unconfirmed`` says which); a damaged
record alone, every line's CRC holding, keeps every line (``record_damaged``);
a journal found damaged is kept aside byte for byte (``aside``), then a fresh
journal is written with what could be trusted (each game up to its first
damaged line) and ``damage`` says what was recovered, for the screen and the
serial link.  A journal that cannot be read at all (not a database, tables
that are not ours, anything the check cannot read) is moved aside and a fresh
one started (``moved_aside`` says where it went).  A write of SQLite's cut
short by a power cut (a hot rollback journal) is rolled back first
(``rolled_back``).  Errors of the surroundings rather than of the file
(locked, read-only, permission, I/O, disk full) do not move anything: they
raise :class:`JournalError` naming the cause (``faults``).  A fresh journal is
made whole or not at all (``schema``).

One referee per state directory (``lock``); ``Store(dir, readonly=True)``
takes no lock and never writes (the ``games`` command).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple, TypeVar

from euchre_core import Game

from .acks import AckFile
from .aside import keep_damaged, keep_record, keep_unconfirmed, move_aside, set_aside_orphans
from .audit import Audit, Damage, Unconfirmed, audit_journal
from .chain import add_crcs, chain_crc, setting_crc
from .faults import (
    NOTHING_KEPT,
    JournalError,
    JournalWriteError,
    fault_words,
    is_unreadable,
    not_opened,
    refused,
    write_refused,
)
from .files import ACKS_NAME, JOURNAL_NAME, decode
from .games import (
    GameInfo,
    backup_journal,
    clean_log,
    latest_game,
    list_games,
    log_text,
    replayed,
)
from .lock import lock_state_dir, unlock
from .salvage import salvage_into
from .schema import SCHEMA, hot_journal, make_journal, remove_unfinished

T = TypeVar("T")


class _Tail(NamedTuple):
    """Where the journal's lines end: how many, the chain's CRC at the last,
    that line's (game, seq), and the newest game's id."""

    rows: int = 0
    crc: int = 0
    last: tuple[int, int] | None = None
    top: int = 0


class _Hidden(NamedTuple):
    """Lines the journal holds but that are not the game's (refused, never
    confirmed): every line after ``last`` (all of them when None), and the
    ``games`` made by them."""

    last: tuple[int, int] | None
    games: frozenset[int]

    def shows(self, game_id: int, seq: int) -> bool:
        return (game_id not in self.games and self.last is not None
                and (game_id, seq) <= self.last)


class _Unreadable(Exception):
    """The journal's files cannot be read as a journal (``error`` says why)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


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
        self.unconfirmed: Unconfirmed | None = None
        """Lines found beyond the record of acknowledged lines at open (never
        acknowledged): left out, written aside first (read-only: not shown)."""
        self.record_damaged: str | None = None
        """The record of acknowledged lines was found damaged at open, every
        line's CRC holding: every line kept; the sentence that says so."""
        self.rolled_back: str | None = None
        """A write of SQLite's cut short (a hot rollback journal) was rolled
        back at open: the sentence that says so."""
        self._lock_fd: int | None = None
        self._shm_found: bytes | None = None
        self._acks: AckFile | None = None
        self._tail = _Tail()
        self._hidden: _Hidden | None = None
        """Lines the journal may hold that are not the game's: not shown.
        Writable: a refused commit SQLite kept (taken back by the next write)."""
        self._write_lock = threading.Lock()
        if readonly:
            self._db = self._open_readonly()
            return
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise JournalError(f"{fault_words(self.state_dir, error)} "
                               f"(cannot make {self.state_dir})") from error
        self._lock_fd = lock_state_dir(self.state_dir)
        try:
            self._db = self._open_checked()
        except BaseException:
            self._unlock()
            raise

    # --- opening -------------------------------------------------------------

    def _open_checked(self) -> sqlite3.Connection:
        shm = Path(str(self.path) + "-shm")
        kept: Path | None = None
        try:
            self.moved_aside = set_aside_orphans(self.state_dir)
            remove_unfinished(self.path)
            # The -shm as it was: reading the journal may rebuild that index.
            self._shm_found = shm.read_bytes() if shm.exists() else None
            audit = self._checked_audit()
        except _Unreadable as bad:
            self.moved_aside = move_aside(self.state_dir, bad.error)
            audit = Audit()
            if salvage_into(audit, self.moved_aside, unreadable=bad.error):
                kept, self.moved_aside = self.moved_aside, None  # lines recovered: damage
        except (sqlite3.DatabaseError, OSError, MemoryError) as error:
            raise not_opened(self.state_dir, error) from error
        try:
            if audit.damage:
                self.damage = self._keep_damaged(audit, kept)
            db = self._db = self._open()
            if audit.legacy:
                self._upgrade()
            if audit.unconfirmed is not None and not audit.damage:
                self.unconfirmed = self._leave_out(db, audit.unconfirmed, audit.acknowledged)
            self._tail = self._read_tail(db)
            if audit.unchecked and self._tail.rows:
                self.unchecked = audit.unchecked
            if audit.record_damaged is not None and not audit.damage:
                copy = keep_record(self.state_dir, audit.record_damaged)
                self.record_damaged = (
                    f"the record of acknowledged lines was damaged ({audit.record_damaged}): "
                    f"every line checked and kept; the record kept aside as {copy.name}")
            self._acks = AckFile(self.state_dir / ACKS_NAME, self._tail.rows, self._tail.crc)
        except (sqlite3.DatabaseError, OSError) as error:
            raise not_opened(self.state_dir, error) from error
        return db

    def _checked_audit(self) -> Audit:
        """The journal's files checked (read-only), a write cut short rolled
        back first.  Raises :class:`_Unreadable` when they cannot be read as
        a journal: any error of SQLite's that is the file's, and any other
        exception the check raises (bytes no journal of ours holds, that
        SQLite still hands over); OSError and SQLite's errors of the
        surroundings (locked, read-only, I/O) as they are."""
        if not self.path.exists():
            return Audit()
        try:
            if hot_journal(self.path):
                self._roll_back()
            return self._audit()
        except (OSError, MemoryError):
            raise
        except sqlite3.DatabaseError as error:
            if is_unreadable(error):
                raise _Unreadable(error) from error
            raise
        except Exception as error:  # noqa: BLE001 - whatever the bytes made the check raise
            raise _Unreadable(sqlite3.DatabaseError(
                f"the check could not read it ({type(error).__name__}: {error})")) from error

    def _roll_back(self) -> None:
        """Roll back a write of SQLite's cut short (a hot rollback journal):
        the first read of a read-write connection does it.  Beside a -wal
        holding frames (no state of the referee's), neither can be trusted:
        unreadable."""
        name = f"{JOURNAL_NAME}-journal"
        wal = Path(str(self.path) + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise sqlite3.DatabaseError(f"{name}, a write cut short, beside a -wal")
        db = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None)
        try:
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        finally:
            db.close()
        if hot_journal(self.path):
            raise sqlite3.DatabaseError(f"{name}, a write cut short, could not be rolled back")
        self.rolled_back = (f"a write cut short by a power cut ({name}) was rolled back: "
                            "nothing acknowledged was in it")

    def _open(self) -> sqlite3.Connection:
        """The journal, read-write (made whole first where there is none)."""
        wal = Path(str(self.path) + "-wal")
        if not self.path.exists() or (self.path.stat().st_size == 0 and not (
                wal.exists() and wal.stat().st_size > 0)):
            make_journal(self.path)
        db = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None,
                             check_same_thread=False)
        try:
            # Bytes that are not UTF-8 (a damaged line) read as U+FFFD: such a
            # line then fails to replay like any bad line, instead of raising.
            db.text_factory = decode
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(SCHEMA)
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
        so it neither checkpoints nor deletes the -wal.  Lines beyond the
        record of acknowledged lines are not shown (never acknowledged)."""
        if not self.path.is_file():
            raise JournalError(f"no journal in {self.state_dir}")
        if hot_journal(self.path):
            raise JournalError(
                f"{self.path}: a write was cut short by a power cut ({JOURNAL_NAME}-journal): "
                "the referee rolls it back when it next starts; until then it cannot be read")
        try:
            audit = self._audit()
            db = sqlite3.connect(self._read_only_uri(), uri=True,
                                 timeout=self.busy_timeout, check_same_thread=False)
            db.text_factory = decode
        except MemoryError as error:
            raise JournalError(f"{self.path}: cannot be read ({error})") from error
        except Exception as error:  # noqa: BLE001 - SQLite's, or whatever the bytes made the check raise
            raise JournalError(f"{self.path}: cannot be read ({error})") from error
        if not {"games", "lines"} <= audit.tables:
            db.close()
            raise JournalError(f"{self.path}: holds no games (its tables were never made)")
        if audit.damage:
            self.damage = audit.damage_found(self.path)
        elif audit.unconfirmed is not None:
            self.unconfirmed = audit.unconfirmed
            self._hidden = _Hidden(audit.unconfirmed.last, audit.unconfirmed.games)
        self.unchecked = audit.unchecked if audit.rows else None
        if audit.record_damaged is not None and not audit.damage:
            self.record_damaged = (f"the record of acknowledged lines is damaged "
                                   f"({audit.record_damaged}): every line checked and shown")
        return db

    def _audit(self) -> Audit:
        """The journal's files as :func:`audit_journal` finds them (read-only)."""
        return audit_journal(self._connect_read_only, self.state_dir / ACKS_NAME)

    def _connect_read_only(self) -> sqlite3.Connection:
        return sqlite3.connect(self._read_only_uri(), uri=True, timeout=self.busy_timeout)

    def _upgrade(self) -> None:
        """A journal written before lines carried CRCs: add them (trusted as is)."""
        with self._transaction() as tx:
            add_crcs(tx)

    @staticmethod
    def _read_tail(db: sqlite3.Connection) -> _Tail:
        (rows,) = db.execute("SELECT COUNT(*) FROM lines").fetchone()
        row = db.execute("SELECT game_id, seq, crc FROM lines "
                         "ORDER BY game_id DESC, seq DESC LIMIT 1").fetchone()
        (top,) = db.execute("SELECT COALESCE(MAX(id), 0) FROM games").fetchone()
        if row is None:
            return _Tail(0, 0, None, int(top))
        return _Tail(int(rows), int(row[2]), (int(row[0]), int(row[1])), int(top))

    def _keep_damaged(self, audit: Audit, kept: Path | None = None) -> Damage:
        """Move the damaged files aside as they are (unless already ``kept``
        aside, salvaged), salvage them, then write a fresh journal with what
        could be trusted, in one transaction."""
        target = kept or keep_damaged(self.state_dir, "; ".join(audit.damage), self._shm_found)
        if kept is None:
            salvage_into(audit, target)
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
                               (game_id, seq, decode(text), previous))
            for key, value in audit.settings:
                db.execute("INSERT INTO settings (key, value, crc) VALUES (?, ?, ?)",
                           (key, value, setting_crc(key, value.encode())))
            db.execute("COMMIT")
        finally:
            db.close()
        return audit.damage_found(target)

    def _leave_out(self, db: sqlite3.Connection, unconfirmed: Unconfirmed,
                   acknowledged: int) -> Unconfirmed:
        """Leave out the lines beyond the record of acknowledged lines: written
        aside first (a ``.reason`` file naming each), then deleted in one
        transaction that must end exactly where the record does."""
        kept = keep_unconfirmed(self.state_dir, unconfirmed.listing(acknowledged))
        with self._transaction(db) as tx:
            self._take_back(tx, _Hidden(unconfirmed.last, unconfirmed.games))
            tail = self._read_tail(tx)
            if tail.rows != acknowledged:
                raise sqlite3.DatabaseError(
                    f"the journal changed while it was opened ({tail.rows} lines, "
                    f"{acknowledged} acknowledged)")
        return unconfirmed._replace(kept_as=kept)

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
        store's connection), then record its lines as acknowledged.  Another
        write of this store under way (a game stored off the main loop) is
        waited for up to ``wait`` seconds, then refused as busy.

        Any failure, whatever it raises, takes one path: nothing of the write
        is part of the journal (rolled back; a commit not recorded as
        acknowledged is hidden and taken back, see the module's doc) and the
        store's memory is what it was before: the tail (``work`` moves it as
        it adds lines and games: their count, the chain's CRC, the last line,
        the newest game) and the lines hidden; ``journal.acks`` holds what
        it did (a record that failed is zeroed again, ``AckFile.record``;
        room reserved before the commit is zeros, which it may hold).  Raises
        :class:`JournalWriteError` with the cause in words (SQLite's and the
        OS's errors), :class:`JournalTextError` for a text that is not UTF-8,
        anything else as it was raised (a :class:`JournalError` of ``work``'s)."""
        if self.readonly:
            raise JournalWriteError(f"the journal is open read-only: {NOTHING_KEPT}")
        locked = (self._write_lock.acquire(timeout=wait) if wait > 0
                  else self._write_lock.acquire(blocking=False))
        if not locked:
            raise JournalWriteError(
                f"the journal is busy storing a game: {NOTHING_KEPT} yet, try again")
        before = self._tail
        committed = False
        try:
            assert self._acks is not None
            self._acks.reserve()
            with self._transaction(db) as tx:
                if self._hidden is not None:
                    self._take_back(tx, self._hidden)  # a refused commit: gone first
                result = work(tx)
            committed = True
            self._acks.record(self._tail.rows, self._tail.crc)
        except BaseException as error:
            # Committed but never recorded as acknowledged: refused, and taken
            # back (else the next write takes it back first).
            self._refused(before, db, committed=committed)
            if committed:
                self._take_back_now(db)
            refusal = refused(self.state_dir, error)
            if refusal is None:
                raise
            raise refusal from error
        else:
            self._hidden = None
            return result
        finally:
            self._write_lock.release()

    def _refused(self, before: _Tail, db: sqlite3.Connection | None = None, *,
                 committed: bool = False) -> None:
        """A write was refused: the store's tail is what it was before, and
        whatever the journal holds beyond it (a commit whose record failed;
        SQLite keeps nothing of a commit that failed, but that is checked
        too) is hidden until the next write takes it back."""
        db = self._db if db is None else db
        try:
            if db.in_transaction:
                db.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        self._tail = before
        try:
            now = self._read_tail(self._db)
            beyond = frozenset(gid for (gid,) in self._db.execute(
                "SELECT id FROM games WHERE id > ?", (before.top,)))
        except sqlite3.Error:
            now, beyond = None, frozenset()
        if committed or (now is not None and now != before):
            self._hidden = _Hidden(before.last, beyond | (self._hidden or _Hidden(
                None, frozenset())).games)

    def _take_back_now(self, db: sqlite3.Connection | None = None) -> None:
        """Take a refused commit back at once, if the journal takes the write."""
        if self._hidden is None:
            return
        try:
            with self._transaction(db) as tx:
                self._take_back(tx, self._hidden)
        except (sqlite3.Error, OSError):
            return
        self._hidden = None

    @staticmethod
    def _take_back(tx: sqlite3.Connection, hidden: _Hidden) -> None:
        """Delete the lines after ``hidden.last`` and the games they made."""
        if hidden.last is None:
            tx.execute("DELETE FROM lines")
        else:
            game_id, seq = hidden.last
            tx.execute("DELETE FROM lines WHERE game_id > ? OR (game_id = ? AND seq > ?)",
                       (game_id, game_id, seq))
        tx.executemany("DELETE FROM games WHERE id = ?", [(gid,) for gid in hidden.games])

    def _add_lines(self, db: sqlite3.Connection, game_id: int, lines: Sequence[str]) -> None:
        """Insert ``lines`` after the game's last, each with its chained CRC."""
        tail = db.execute("SELECT game_id, seq, crc FROM lines "
                          "ORDER BY game_id DESC, seq DESC LIMIT 1").fetchone()
        previous = 0 if tail is None else int(tail[2])
        if previous != self._tail.crc:
            raise sqlite3.DatabaseError("the journal changed outside this referee")
        if game_id < self._tail.top or (tail is not None and tail[0] > game_id):
            raise JournalError(f"game {game_id} is not the newest game: it takes no lines")
        seq = tail[1] + 1 if tail is not None and tail[0] == game_id else 0
        rows = []
        for line in lines:
            previous = chain_crc(previous, game_id, seq, line.encode("utf-8"))
            rows.append((game_id, seq, line, previous))
            seq += 1
        db.executemany("INSERT INTO lines (game_id, seq, text, crc) VALUES (?, ?, ?, ?)", rows)
        last = (game_id, seq - 1) if rows else self._tail.last
        self._tail = _Tail(self._tail.rows + len(rows), previous, last,
                           max(self._tail.top, game_id))

    def close(self) -> None:
        self._db.close()
        if self._acks is not None:
            self._acks.close()
            self._acks = None
        self._unlock()

    def _unlock(self) -> None:
        unlock(self._lock_fd)
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
            self._tail = self._tail._replace(top=max(self._tail.top, game_id))
            self._add_lines(db, game_id, lines)
            return game_id

        if not off_loop:
            return self._write(work)
        try:
            own = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None)
            own.execute("PRAGMA synchronous=FULL")
        except sqlite3.Error as error:
            raise write_refused(self.state_dir, error) from error
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

    def save_flow(self, game_id: int, flow: str, *, durable: bool = False) -> None:
        """Remember the entry flow's position (a half-made selection, a cursor).

        Committed without waiting for the disk (``synchronous=NORMAL`` for this
        one commit): it is no entry, so a power cut may lose the last few
        cursor moves, never a line; the next entry's commit syncs it too.
        ``durable``: waits for the disk like an entry (a new game confirmed
        after a win, kept in the flow until its first entry).
        """
        if durable:
            self._write(lambda db: db.execute("UPDATE games SET flow=? WHERE id=?",
                                              (flow, game_id)))
            return
        try:
            self._db.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as error:
            raise write_refused(self.state_dir, error) from error
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
            raise write_refused(self.state_dir, error) from error
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
        hidden = self._hidden
        if hidden is None:
            rows = self._db.execute(
                "SELECT text FROM lines WHERE game_id=? ORDER BY seq", (game_id,)).fetchall()
            return [text for (text,) in rows]
        rows = self._db.execute(
            "SELECT seq, text FROM lines WHERE game_id=? ORDER BY seq", (game_id,)).fetchall()
        return [text for seq, text in rows if hidden.shows(game_id, seq)]

    def games(self) -> list[GameInfo]:
        """Every stored game, oldest first, with its number of lines."""
        games = list_games(self._db)
        hidden = self._hidden
        if hidden is None:
            return games
        shown = []
        for info in games:
            if info.id in hidden.games:
                continue
            if hidden.last is None or info.id > hidden.last[0]:
                info = info._replace(lines=0)
            elif info.id == hidden.last[0]:
                info = info._replace(lines=min(info.lines, hidden.last[1] + 1))
            shown.append(info)
        return shown

    def latest(self) -> int | None:
        """The id of the newest game (the one the referee resumes), or None."""
        if self._hidden is None:
            return latest_game(self._db)
        games = self.games()
        return games[-1].id if games else None

    def journal_text(self, game_id: int) -> str:
        """The game as a log with its undos, exactly as entered."""
        return log_text(self.lines(game_id))

    def load(self, game_id: int, base: Game | None = None) -> Game:
        """Replay a stored game; raises JournalError if its lines do not replay."""
        return replayed(game_id, self.journal_text(game_id), base)

    def export(self, game_id: int, *, checksums: bool = False) -> str:
        """The game as a clean log: undos applied, score lines after each hand."""
        return clean_log(self.load(game_id), checksums=checksums)

    def backup(self, target: Path) -> int:
        """Copy the journal, consistently, to the single file ``target`` with
        SQLite's backup API (written to a temporary beside it, fsynced, then
        renamed); returns the number of lines in it.  Lines that are not the
        game's (never acknowledged) are left out of the copy."""
        hidden = self._hidden
        if hidden is None:
            return backup_journal(self._db, target)
        return backup_journal(self._db, target, trim=lambda copy: self._take_back(copy, hidden))
