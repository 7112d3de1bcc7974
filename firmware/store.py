"""The journal: every game the referee keeps, in SQLite (WAL, synchronous=FULL).

Stored per game: its event lines in order, exactly as entered (``undo`` lines
included), and the entry flow's position (UI state the events do not hold).
Rules and names are the game's own ``rules``/``players`` lines.  Derived state
(score, dealer, winner) is never stored: it is rebuilt by replaying the lines.

``append`` returns only after the line is committed to disk, so the caller may
acknowledge the entry (screen, serial link) once it returns.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
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
"""


class JournalError(RuntimeError):
    """The journal cannot be opened or read (it is moved aside, never deleted)."""


@dataclass(frozen=True)
class GameInfo:
    """One stored game, for listings."""

    id: int
    created: float
    """Unix time (s)."""
    lines: int


class Store:
    """A crash-safe journal of games in ``state_dir/journal.sqlite3``."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.state_dir / JOURNAL_NAME
        self.moved_aside: Path | None = None
        """Where an unreadable journal was moved at open, if it was."""
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as error:
            self.moved_aside = self._move_aside(error)
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(_SCHEMA)
            check = db.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {check}")
            for (game_id,) in db.execute("SELECT id FROM games").fetchall():
                self._check_readable(db, game_id)
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    @staticmethod
    def _check_readable(db: sqlite3.Connection, game_id: int) -> None:
        rows = db.execute(
            "SELECT seq FROM lines WHERE game_id=? ORDER BY seq", (game_id,)
        ).fetchall()
        if [seq for (seq,) in rows] != list(range(len(rows))):
            raise sqlite3.DatabaseError(f"game {game_id}: lines out of sequence")

    def _move_aside(self, error: Exception) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self.state_dir / f"{JOURNAL_NAME}.unreadable-{stamp}"
        index = 1
        while target.exists():
            target = self.state_dir / f"{JOURNAL_NAME}.unreadable-{stamp}-{index}"
            index += 1
        for suffix in ("", "-wal", "-shm"):
            source = Path(str(self.path) + suffix)
            if source.exists():
                os.replace(source, Path(str(target) + suffix))
        (self.state_dir / (target.name + ".reason")).write_text(f"{error}\n", encoding="utf-8")
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

    def new_game(self, lines: list[str] = ()) -> int:  # type: ignore[assignment]
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
        """Remember the entry flow's position (a half-made selection)."""
        with self._transaction() as db:
            db.execute("UPDATE games SET flow=? WHERE id=?", (flow, game_id))

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
