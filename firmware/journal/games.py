"""The stored games as games: the list, a game as a log, backups.

What the journal's lines mean (a game's lines under the log's header replay
to the game; derived state is never stored), the listing ``games`` shows, a
consistent copy of the whole journal, and how a log of several games is cut
into the games the referee stores.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from euchre_core import Game, Phase, replay, write_log
from euchre_core.events import NewGame, Players, SetRules
from euchre_core.log import HEADER
from euchre_core.rules import Rules

from .faults import JournalError
from .files import fsync_dir


class GameInfo(NamedTuple):
    """One stored game, for listings."""

    id: int
    created: float
    """Unix time (s)."""
    lines: int


def list_games(db: sqlite3.Connection) -> list[GameInfo]:
    """Every stored game, oldest first, with its number of lines."""
    rows = db.execute(
        "SELECT g.id, g.created, COUNT(l.seq) FROM games g "
        "LEFT JOIN lines l ON l.game_id = g.id GROUP BY g.id ORDER BY g.id"
    ).fetchall()
    return [GameInfo(game_id, created, count) for game_id, created, count in rows]


def latest_game(db: sqlite3.Connection) -> int | None:
    """The id of the newest game (the one the referee resumes), or None."""
    row = db.execute("SELECT MAX(id) FROM games").fetchone()
    return None if row is None or row[0] is None else int(row[0])


def log_text(lines: Sequence[str]) -> str:
    """A game's stored lines as a log with its undos, exactly as entered."""
    return "\n".join([HEADER, *lines]) + "\n"


def replayed(game_id: int, text: str, base: Game | None = None) -> Game:
    """Game ``game_id``'s log ``text`` replayed; JournalError if it does not replay."""
    result = replay(text, base)
    if result.error is not None:
        raise JournalError(f"game {game_id}: {result.error}")
    return result.game


def clean_log(game: Game, *, checksums: bool = False) -> str:
    """A game as a clean log: undos applied, score lines after each hand."""
    return write_log(game, checksums=checksums)


def backup_journal(db: sqlite3.Connection, target: Path, *,
                   trim: Callable[[sqlite3.Connection], None] | None = None) -> int:
    """Copy the journal ``db``, consistently, to the single file ``target``
    with SQLite's backup API (written to a temporary beside it, fsynced,
    then renamed); returns the number of lines in it.  ``trim``: called on
    the copy, in a transaction, before it is fsynced (lines to leave out)."""
    target = Path(target)
    temp = target.with_name(target.name + ".part")
    temp.unlink(missing_ok=True)
    out = sqlite3.connect(temp, isolation_level=None)
    try:
        db.backup(out)
        out.execute("PRAGMA journal_mode=DELETE")
        if trim is not None:
            out.execute("BEGIN")
            trim(out)
            out.execute("COMMIT")
        (count,) = out.execute("SELECT COUNT(*) FROM lines").fetchone()
    finally:
        out.close()
    with open(temp, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(temp, target)
    fsync_dir(target.parent)
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
