"""The referee as a separate process, for the crash test (and shared helpers).

Run as ``python crash_child.py STATE_DIR``: builds a :class:`Referee` on the
journal in ``STATE_DIR`` with a no-op renderer (resuming whatever is there),
then reads log lines from stdin (``trick N``, ``order E alone``, ``undo``,
``game dealer=W`` ...) and enters each one.  It prints, flushing each line:

- ``START <game_id> <lines>`` once the referee has resumed (``START <game_id>
  <lines> staged <line>`` with a new game staged after a win), or first
  ``NOTICE <title> | <lines>`` when the referee shows a notice (the journal
  was moved aside, a game did not resume): the crash test fails on it;
- ``ACK <game_id> <n> <line>`` after ``Referee.enter(...)`` (or ``undo()``)
  has returned: the line is durable and is line ``n`` (1-based, setup lines
  included) of stored game ``game_id``;
- ``ACK <game_id> staged <line>`` for a new game's ``game`` line after a win
  (durable in the flow of finished game ``game_id``, stored as a game of its
  own with its first real entry), ``ACK <game_id> unstaged undo`` for the
  UNDO that takes it back (no line either: the finished game is current);
- ``REFUSED <reason>`` when the referee refused a line (the test only sends
  legal ones, so this fails the test too).

``tests/firmware/test_fw_durable_crash.py`` kills this process with SIGKILL
at random moments and checks the journal against the ACKs.

``python crash_child.py --zygote FD STATE_DIR`` is the same child, many times
over, without paying the interpreter's start-up (imports) for each kill: a
long-lived process that has imported everything reads ``spawn`` requests on
the AF_UNIX socket ``FD`` (each carrying the child's stdin and stdout pipe
ends), forks, and the forked process runs exactly what the plain mode runs,
from opening the journal on.  It answers ``PID <pid>``; ``reap <pid>``
collects a killed child (so its pid cannot be reused before the test is done
with it).  The functions
below are also the durable-tests' helpers (importable: pytest puts this
folder on ``sys.path``).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

from euchre_core import SEATS, Game, Phase, replay
from euchre_core.events import NewGame, Players, Undo
from euchre_core.lines import strip_line
from euchre_core.log import HEADER, parse_line
from firmware.app import Referee
from firmware.config import Config
from firmware.flow import FlowState
from firmware.journal import Store

SETUP_PREFIXES = ("players ", "rules")


def null_renderer(view: Any) -> None:
    """A renderer that draws nothing (the crash test needs no fonts)."""
    return None


def make_config(state_dir: Path, **overrides: Any) -> Config:
    return Config(state_dir=Path(state_dir), **overrides)


def open_referee(state_dir: Path, *, config: Config | None = None, **kwargs: Any
                 ) -> Referee:
    """A referee on the journal in ``state_dir`` (as at boot)."""
    config = config or make_config(state_dir)
    kwargs.setdefault("renderer", null_renderer)
    return Referee(config, Store(Path(state_dir)), **kwargs)


def setup_lines(config: Config) -> list[str]:
    """The lines the referee starts each stored game with (default rules)."""
    return [Players(tuple((seat, config.names[seat]) for seat in SEATS)).line()]


def fresh_game(setup: list[str]) -> Game:
    result = replay("\n".join([HEADER, *setup]) + "\n")
    assert result.error is None, result.error
    return result.game


class Model:
    """What the referee's live game should be, line by line (the test's own
    replica, to pick legal lines and to check against the journal).

    A new game after a win is staged as the referee stages it: ``finished``
    is the won game while the new game has no real entry yet, and UNDO then
    goes back to it (nothing is journalled for the staged line or its UNDO).
    ``table`` is every line entered at the table as the journal holds it:
    the staged ``game`` line counts (it is kept in the finished game's flow),
    and its UNDO takes it away instead of adding ``undo``."""

    def __init__(self, setup: list[str], lines: list[str] | None = None) -> None:
        self.setup = setup
        self.game = fresh_game(setup)
        self.base = len(self.game.entries)
        self.finished: Game | None = None
        self.table: list[str] = []
        for line in lines or []:
            self.apply(line)

    def apply(self, line: str) -> None:
        event = parse_line(strip_line(line))
        if isinstance(event, Undo):
            if self.finished is not None:  # the staged new game: back to the won one
                self.game, self.finished = self.finished, None
                self.table.pop()
                return
            self.game.undo()
            self.table.append(line)
            return
        self.finished = None
        if isinstance(event, NewGame) and self.game.phase is Phase.GAME_OVER:
            self.finished = self.game  # the referee stages a new game
            self.game = fresh_game(self.setup)
        self.game.push(event)  # type: ignore[arg-type]
        self.table.append(line)

    def random_line(self, rng: random.Random, undo_p: float = 0.08) -> str:
        """A legal next line: an entry the engine lists, or sometimes ``undo``."""
        if len(self.game.entries) > self.base and rng.random() < undo_p:
            return "undo"
        legal = self.game.legal_entries()
        return rng.choice(legal).line()


def resumed_model(setup: list[str], games: list[tuple[int, list[str]]],
                  staged: str | None) -> Model:
    """The model of what a start resumes: the newest stored game, then the
    new game ``staged`` in its flow (if any); ``table`` is all of it."""
    model = Model(setup, games[-1][1][len(setup):] if games else [])
    if staged is not None:
        model.apply(staged)
    model.table = table_lines(games) + ([staged] if staged is not None else [])
    return model


def staged_line(state_dir: Path, games: list[tuple[int, list[str]]]) -> str | None:
    """The ``game`` line of a new game staged after a win, as a start finds
    it: in the flow of the newest of ``games`` (the games a start resumes),
    when that game is over; else None."""
    import sqlite3

    if not games:
        return None
    game_id, lines = games[-1]
    result = replay("\n".join([HEADER, *lines]) + "\n")
    if result.error is not None or result.game.phase is not Phase.GAME_OVER:
        return None
    path = Path(state_dir) / "journal.sqlite3"
    immutable = "" if Path(str(path) + "-wal").exists() else "&immutable=1"
    db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro" + immutable, uri=True)
    try:
        row = db.execute("SELECT flow FROM games WHERE id=?", (game_id,)).fetchone()
    finally:
        db.close()
    return None if row is None else FlowState.loads(row[0] or "").staged


def stored_games(state_dir: Path) -> list[tuple[int, list[str]]]:
    """Every stored game's lines, read with plain sqlite3 through a read-only
    connection (it never checkpoints, deletes or moves anything); [] when
    there is no journal yet (a kill before the first start made it)."""
    import sqlite3

    path = Path(state_dir) / "journal.sqlite3"
    if not path.is_file():
        return []
    immutable = "" if Path(str(path) + "-wal").exists() else "&immutable=1"  # makes no -wal
    db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro" + immutable, uri=True)
    try:
        (check,) = db.execute("PRAGMA quick_check").fetchone()
        assert check == "ok", check
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        if not {"games", "lines"} <= tables:
            return []  # killed before the first start had made the schema
        games = [gid for (gid,) in db.execute("SELECT id FROM games ORDER BY id")]
        return [
            (gid, [text for (text,) in db.execute(
                "SELECT text FROM lines WHERE game_id=? ORDER BY seq", (gid,))])
            for gid in games
        ]
    finally:
        db.close()


def table_lines(games: list[tuple[int, list[str]]]) -> list[str]:
    """All games' lines in order without each game's setup lines: the
    sequence of everything entered at the table."""
    out: list[str] = []
    for _, lines in games:
        index = 0
        while index < len(lines) and lines[index].startswith(SETUP_PREFIXES):
            index += 1
        out.extend(lines[index:])
    return out


def main(argv: list[str]) -> int:
    state_dir = Path(argv[1])
    referee = open_referee(state_dir)
    out = sys.stdout
    if referee.notice is not None:
        title, lines = referee.notice
        out.write(f"NOTICE {title} | {' / '.join(lines)}\n")
    game_id = referee.game_id
    count = len(referee.store.lines(game_id))
    staged = f" staged {referee.staged}" if referee.staged is not None else ""
    out.write(f"START {game_id} {count}{staged}\n")
    out.flush()
    for raw in sys.stdin:
        line = raw.strip()
        if not line:
            continue
        event = parse_line(strip_line(line))
        was_staged = referee.staged is not None
        if isinstance(event, Undo):
            reason = referee.undo()
        else:
            reason = referee.enter(event)  # type: ignore[arg-type]
        if reason is not None:
            out.write(f"REFUSED {reason}\n")
            out.flush()
            continue
        if referee.game_id != game_id:
            game_id = referee.game_id
            count = len(referee.store.lines(game_id))
        elif referee.staged is not None or was_staged:  # no line: the finished game's flow
            out.write(f"ACK {game_id} {'staged' if referee.staged else 'unstaged'} {line}\n")
            out.flush()
            continue
        else:
            count += 1
        out.write(f"ACK {game_id} {count} {line}\n")
        out.flush()
    referee.store.close()
    return 0


def zygote(control_fd: int, state_dir: str) -> int:
    """Fork a child per ``spawn`` request on the control socket (see above)."""
    import os
    import socket

    control = socket.socket(fileno=control_fd)
    while True:
        message, fds, _, _ = socket.recv_fds(control, 256, 2)
        if not message:
            return 0
        command = message.decode().split()
        if command[0] == "spawn":
            pid = os.fork()
            if pid == 0:  # the child: stdin/stdout are the pipes it was sent
                code = 1
                try:
                    control.close()
                    os.dup2(fds[0], 0)
                    os.dup2(fds[1], 1)
                    for fd in fds:
                        os.close(fd)
                    sys.stdin = open(0, encoding="utf-8", closefd=False)
                    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
                    code = main(["crash_child.py", state_dir])
                finally:
                    os._exit(code)
            for fd in fds:
                os.close(fd)
            control.sendall(f"PID {pid}".encode())
        elif command[0] == "reap":
            os.waitpid(int(command[1]), 0)
            control.sendall(b"REAPED")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--zygote":
        sys.exit(zygote(int(sys.argv[2]), sys.argv[3]))
    sys.exit(main(sys.argv))
