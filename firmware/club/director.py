"""The director: players, rounds, every table's journal, the standings.

:class:`Director` is the night's one owner of its state; the MQTT thread
(:meth:`Director.receive`) and the web server call it under one lock.  Its
SQLite (``director.sqlite3`` in the state directory) keeps the players, each
round's assignment (the very message sent to the boxes) and every journal
line received, keyed by ``(box, game, seq)``: a duplicate is dropped by that
key, a line that arrives before the one it follows waits for it.

Nothing derived is stored.  Each table's round is the box's journal lines
0, 1, 2... with no gap, replayed with :func:`euchre_core.replay` exactly as the
box replays its own journal; every standing comes from the hands that replay
gives (:meth:`Director.board`).  A line the engine refuses (a modified box)
stops that table's replay there: the table is shown refused with the line and
the reason, and nothing after it counts.

Standings per player: their side's points in each round (a round of N hands
counts its first N hands; a game to a target counts the game), rounds won
(their side scored more, or won the game), loners made, euchres (their side
euchred the makers), plus the club's bonuses (:class:`Bonuses`).
"""

from __future__ import annotations

import csv
import io
import logging
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from euchre_core import SEATS, Game, Replay, Rules, Seat, Team, replay
from euchre_core.events import name_problem
from euchre_core.log import HEADER

from ..defaults import DEFAULT_EVENT
from .movement import by_result, fixed_pairs, north_stays, progressive
from .names import csv_cell, lookalike_warning, normalise
from .protocol import (
    Ack,
    Assignment,
    EntryMessage,
    MessageError,
    RoundFormat,
    Status,
    ack_topic,
    assignment_topic,
    check_event_id,
    topic_kind,
)

log = logging.getLogger("euchre.club.director")

DB_NAME: Final = "director.sqlite3"
MOVEMENTS: Final = ("progressive", "by-result", "north-stays", "pairs")
"""How players move between rounds: partners rotating (with byes); winners
up, losers down; the North-stays chart (those three start progressive); or
fixed pairs (registered with their partner) meeting each other pair in turn."""
SILENT_S: Final = 60.0
"""Seconds without a line from a table in play before it is shown as silent."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS players (name TEXT PRIMARY KEY, registered REAL NOT NULL);
CREATE TABLE IF NOT EXISTS pairs (first TEXT PRIMARY KEY, second TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rounds (number INTEGER PRIMARY KEY, assignment BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS claims (
    round INTEGER NOT NULL, table_no INTEGER NOT NULL, box TEXT NOT NULL, game INTEGER NOT NULL,
    PRIMARY KEY (round, table_no)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entries (
    box TEXT NOT NULL, game INTEGER NOT NULL, seq INTEGER NOT NULL, line TEXT NOT NULL,
    received REAL NOT NULL, PRIMARY KEY (box, game, seq)) WITHOUT ROWID;
"""

Publish = Callable[[str, bytes, bool], None]
"""``(topic, payload, retain)``: hands a message to the broker."""


class DirectorError(ValueError):
    """A request the director refuses (a name registered twice...); says why."""


@dataclass(frozen=True)
class Bonuses:
    """The club's extra points, per player."""

    loner: int = 0
    """For each loner the player made (3 or more tricks alone)."""
    euchre: int = 0
    """For each euchre the player's side made as defenders."""
    round_won: int = 0
    """For each round the player's side won."""


@dataclass
class TableRound:
    """One table in one round, as its journal replays (derived, never stored)."""

    table: int
    round: int
    players: dict[Seat, str]
    format: RoundFormat
    box: str | None = None
    game: int | None = None
    lines: list[str] = field(default_factory=list)
    waiting: int = 0
    """Lines received that wait for a gap before them."""
    replayed: Replay | None = None
    problem: str | None = None
    last_heard: float | None = None

    @property
    def counted(self) -> list[Any]:
        """The hand results that count for the round."""
        if self.replayed is None:
            return []
        results = self.replayed.game.results
        return results[: self.format.hands] if self.format.hands is not None else results

    @property
    def score(self) -> dict[Team, int]:
        score = {Team.NS: 0, Team.EW: 0}
        for result in self.counted:
            if result.team is not None:
                score[result.team] += result.points
        return score

    @property
    def done(self) -> bool:
        if self.replayed is None:
            return False
        if self.format.hands is not None:
            return len(self.counted) >= self.format.hands
        return self.replayed.game.winner is not None

    @property
    def hand(self) -> int:
        """The hand being played (the last hand once the round is done; 0 before the first)."""
        played = len(self.counted)
        if self.done or self.replayed is None or self.replayed.game.dealer is None:
            return played
        return played + 1

    @property
    def winner(self) -> Team | None:
        if not self.done:
            return None
        if self.format.hands is None:
            assert self.replayed is not None
            return self.replayed.game.winner
        score = self.score
        if score[Team.NS] == score[Team.EW]:
            return None
        return Team.NS if score[Team.NS] > score[Team.EW] else Team.EW


class Director:
    """The club night's state (see the module's docstring)."""

    def __init__(self, state_dir: Path, *, event: str = DEFAULT_EVENT,
                 bonuses: Bonuses = Bonuses(),
                 publish: Publish | None = None, clock: Callable[[], float] = time.time) -> None:
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.event = check_event_id(event)
        self.bonuses = bonuses
        self.publish = publish
        self.clock = clock
        self.lock = threading.RLock()
        self.version = 0
        """Goes up with every change the page would show."""
        self.problems: deque[str] = deque(maxlen=50)
        self.duplicates = 0
        self.refused = 0
        """Messages refused (malformed, foreign, for a table another box plays...)."""
        self.status: dict[int, Status] = {}
        self.status_seen: dict[int, float] = {}
        self._db = sqlite3.connect(self.state_dir / DB_NAME, isolation_level=None,
                                   check_same_thread=False, timeout=10)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)
        self.rounds: dict[int, Assignment] = {}
        self.tables: dict[tuple[int, int], TableRound] = {}
        for (payload,) in self._db.execute("SELECT assignment FROM rounds"):
            self._add_round(Assignment.decode(bytes(payload)))
        for round_number, table, box, game in self._db.execute(
                "SELECT round, table_no, box, game FROM claims"):
            table_round = self.tables.get((round_number, table))
            if table_round is not None:
                table_round.box, table_round.game = box, game
                self._reload(table_round)

    def close(self) -> None:
        self._db.close()

    def _changed(self) -> None:
        self.version += 1

    def problem(self, text: str) -> None:
        """Say something went wrong: the log and the page."""
        log.warning("%s", text)
        stamp = time.strftime("%H:%M:%S", time.localtime(self.clock()))
        with self.lock:
            self.problems.appendleft(f"{stamp} {text}")
            self._changed()

    # --- players and rounds ------------------------------------------------------

    def players(self) -> list[str]:
        with self.lock:
            return [name for (name,) in self._db.execute(
                "SELECT name FROM players ORDER BY registered, name")]

    def register(self, name: str) -> str | None:
        """Add a player (the name in NFC); DirectorError if the name cannot be
        used or is taken.  Returns a warning in words when the name mixes
        scripts or looks like a registered one (:mod:`.names`)."""
        name = normalise(name)
        problem = name_problem(name)
        if problem is not None:
            raise DirectorError(f"name {name!r}: {problem}")
        with self.lock:
            registered = self.players()
            if name.casefold() in {n.casefold() for n in registered}:
                raise DirectorError(f"{name!r} is registered already")
            warning = lookalike_warning(name, registered)
            self._db.execute("INSERT INTO players (name, registered) VALUES (?, ?)",
                             (name, self.clock()))
            self._changed()
        if warning is not None:
            log.warning("registered, but %s", warning)
        return warning

    def register_pair(self, first: str, second: str) -> str | None:
        """Register two players as fixed partners (both new names); a warning
        as :meth:`register`'s."""
        first, second = normalise(first), normalise(second)
        if first.casefold() == second.casefold():
            raise DirectorError(f"{first!r} cannot partner themselves")
        with self.lock:
            self._db.execute("SAVEPOINT pair")
            try:
                warnings = [self.register(first), self.register(second)]
                self._db.execute("INSERT INTO pairs (first, second) VALUES (?, ?)",
                                 (first, second))
            except BaseException:
                self._db.execute("ROLLBACK TO pair")
                self._db.execute("RELEASE pair")
                raise
            self._db.execute("RELEASE pair")
        return "; ".join(w for w in warnings if w) or None

    def _pairs(self) -> list[tuple[str, str]]:
        pairs = [(str(a), str(b)) for a, b in self._db.execute(
            "SELECT first, second FROM pairs ORDER BY rowid")]
        paired = {name for pair in pairs for name in pair}
        alone = [name for name in self.players() if name not in paired]
        if alone:
            raise ValueError(f"fixed pairs: {', '.join(alone)} registered without a partner")
        return pairs

    @property
    def current_round(self) -> int:
        return max(self.rounds, default=0)

    def start_round(self, round_format: RoundFormat | None = None,
                    rules: Rules | None = None, movement: str = "progressive") -> Assignment:
        """Seat the registered players for the next round by ``movement``
        (:data:`MOVEMENTS`), keep it, and send it to the boxes."""
        with self.lock:
            number = self.current_round + 1
            sitting_out: list[str]
            try:
                if movement == "by-result" and number > 1:
                    seatings, sitting_out = self._by_result(number - 1), []
                elif movement == "pairs":
                    seatings, sitting_out = fixed_pairs(self._pairs(), number)
                elif movement == "north-stays" and number > 1:
                    first = self.rounds[1]
                    self._same_players(first, "north stays")
                    seatings = north_stays([first.tables[t] for t in sorted(first.tables)],
                                           number)
                    sitting_out = []
                elif movement in MOVEMENTS:
                    seatings, sitting_out = progressive(self.players(), [
                        ([past.tables[t] for t in sorted(past.tables)], past.byes)
                        for _, past in sorted(self.rounds.items())])
                else:
                    raise ValueError(f"movement {movement!r}: one of {', '.join(MOVEMENTS)}")
            except ValueError as error:
                raise DirectorError(str(error)) from None
            assignment = Assignment(number, round_format or RoundFormat(), rules or Rules(),
                                    {index + 1: seats for index, seats in enumerate(seatings)},
                                    tuple(sitting_out))
            payload = assignment.encode()
            self._db.execute("INSERT INTO rounds (number, assignment) VALUES (?, ?)",
                             (number, payload))
            self._add_round(assignment)
            self._changed()
        if self.publish is not None:
            self.publish(assignment_topic(self.event, number), payload, True)
        log.info("round %d: %d tables, byes: %s", number, len(seatings),
                 ", ".join(sitting_out) or "none")
        return assignment

    def _same_players(self, previous: Assignment, movement: str) -> None:
        if previous.byes or set(self.players()) != {
                name for seats in previous.tables.values() for name in seats.values()}:
            raise ValueError(f"{movement}: the same players as round {previous.round}, "
                             "a multiple of four (no byes)")

    def _by_result(self, last: int) -> list[dict[Seat, str]]:
        previous = self.rounds[last]
        self._same_players(previous, "winners up, losers down")
        winners = []
        for table in sorted(previous.tables):
            table_round = self.tables[(last, table)]
            if not table_round.done:
                raise ValueError(f"winners up, losers down: table {table} has not finished "
                                 f"round {last}")
            winners.append(table_round.winner or Team.NS)  # a tie: NS go up
        return by_result([previous.tables[t] for t in sorted(previous.tables)], winners)

    def republish(self) -> None:
        """Send every round's assignment again (retained; after the director restarts)."""
        with self.lock:
            rounds = sorted(self.rounds.items())
        if self.publish is not None:
            for number, assignment in rounds:
                self.publish(assignment_topic(self.event, number), assignment.encode(), True)

    def _add_round(self, assignment: Assignment) -> None:
        self.rounds[assignment.round] = assignment
        for table, seats in assignment.tables.items():
            self.tables[(assignment.round, table)] = TableRound(
                table, assignment.round, dict(seats), assignment.format)

    # --- what the boxes send ---------------------------------------------------------

    def receive(self, topic: str, payload: bytes) -> None:
        """One MQTT message; anything malformed or foreign is said and changes nothing."""
        self.receive_many([(topic, payload)])

    def receive_many(self, messages: list[tuple[str, bytes]]) -> None:
        """MQTT messages ``(topic, payload)``, kept in one transaction (one disk
        sync for the lot), then each box told what is kept: the acks go out
        only once the lines are durable here."""
        acks: dict[str, dict[int, int]] = {}
        with self.lock:
            touched: dict[tuple[int, int], TableRound] = {}
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for topic, payload in messages:
                    try:
                        kind, number = topic_kind(self.event, topic)
                        if kind == "entries":
                            message = EntryMessage.decode(payload)
                            table_round = self._entry(int(number), message)
                            touched[(table_round.round, table_round.table)] = table_round
                        elif kind == "status":
                            self._status(int(number), Status.decode(payload) if payload else None)
                        # assignments and acks are the director's own, coming back
                    except (MessageError, ValueError) as error:
                        self.refused += 1
                        self.problem(f"{topic}: refused: {error}")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            changed = False
            for table_round in touched.values():
                changed = self._reload(table_round) or changed
                assert table_round.box is not None and table_round.game is not None
                acks.setdefault(table_round.box, {})[table_round.game] = (
                    len(table_round.lines) - 1)
            if changed:
                self._changed()
        if self.publish is not None:
            for box, acked in acks.items():
                self.publish(ack_topic(self.event, box), Ack(box, acked).encode(), True)

    def _status(self, table: int, status: Status | None) -> None:
        if status is None:  # no box sends one: a retained status cleared by someone
            raise MessageError("an empty status changes nothing")
        else:
            if status.table != table:
                raise MessageError(f"says table {status.table}")
            playing = self.tables.get((self.current_round, table))
            if not status.online and playing is not None and playing.box not in (
                    None, status.box):
                raise MessageError(f"box {status.box} says table {table} is offline, but "
                                   f"box {playing.box} plays it")
            previous = self.status.get(table)
            if (status.online and previous is not None and previous.online
                    and previous.box != status.box):
                self.problem(f"table {table}: box {status.box} claims it, but box "
                             f"{previous.box} is on it already")
                return
            self.status[table] = status
            self.status_seen[table] = self.clock()
        self._changed()

    def _entry(self, table: int, message: EntryMessage) -> TableRound:
        """Keep one line (inside :meth:`receive_many`'s transaction); returns its table."""
        if message.table != table:
            raise MessageError(f"says table {message.table}")
        table_round = self.tables.get((message.round, table))
        if table_round is None:
            raise MessageError(f"round {message.round} has no table {table}")
        if table_round.box is None:
            self._db.execute("INSERT INTO claims (round, table_no, box, game) "
                             "VALUES (?, ?, ?, ?)",
                             (message.round, table, message.box, message.game))
            table_round.box, table_round.game = message.box, message.game
        elif (table_round.box, table_round.game) != (message.box, message.game):
            raise MessageError(
                f"round {message.round}, table {table} is game {table_round.game} of box "
                f"{table_round.box}; box {message.box} game {message.game} claims it too")
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO entries (box, game, seq, line, received) "
            "VALUES (?, ?, ?, ?, ?)",
            (message.box, message.game, message.seq, message.line, self.clock()))
        table_round.last_heard = self.clock()
        if cursor.rowcount == 0:
            self.duplicates += 1
        return table_round

    def _reload(self, table_round: TableRound) -> bool:
        """Read the table's lines 0, 1, 2... (up to the first gap) and replay
        them; True when there were new ones."""
        rows = self._db.execute("SELECT seq, line FROM entries WHERE box=? AND game=? "
                                "ORDER BY seq", (table_round.box, table_round.game)).fetchall()
        lines: list[str] = []
        for seq, line in rows:
            if seq != len(lines):
                break
            lines.append(line)
        table_round.waiting = len(rows) - len(lines)
        if len(lines) == len(table_round.lines) and table_round.replayed is not None:
            return False
        table_round.lines = lines
        result = replay("\n".join([HEADER, *lines]))
        table_round.replayed = result
        expected = table_round.format.rules(self.rounds[table_round.round].rules)
        problem = None
        if result.error is not None:
            problem = f"refused line {result.error.line - 1}: {result.error.reason}"
        elif result.game.rules != expected:
            problem = "plays by other rules than the round's"
            table_round.replayed = replay(HEADER)  # counts nothing
        if problem is not None and problem != table_round.problem:
            self.problem(f"round {table_round.round}, table {table_round.table}: {problem}")
        table_round.problem = problem
        return True

    # --- the standings ------------------------------------------------------------

    def _table_state(self, table_round: TableRound, now: float) -> str:
        if table_round.problem is not None:
            return table_round.problem
        if table_round.done:
            return "done"
        if table_round.table in self.status and not self._online(table_round):
            return "offline"
        if table_round.last_heard is None or now - table_round.last_heard > SILENT_S:
            return "silent" if table_round.last_heard is not None else "not heard from yet"
        return "playing"

    def _online(self, table_round: TableRound) -> bool:
        """Is the table's box on the broker: its own status says so, or a line
        came from it after its status said offline (a will or a stale retained
        status cannot show a playing table offline)?"""
        status = self.status.get(table_round.table)
        if status is None:
            return False
        if status.online and table_round.box in (None, status.box):
            return True
        seen = self.status_seen.get(table_round.table, 0.0)
        return table_round.last_heard is not None and table_round.last_heard > seen

    def board(self) -> dict[str, Any]:
        """Everything the page shows, derived from the replayed journals."""
        with self.lock:
            now = self.clock()
            current = self.current_round
            totals: dict[str, dict[str, int]] = {
                name: {"points": 0, "rounds_won": 0, "loners": 0, "euchres": 0, "rounds": 0}
                for name in self.players()}
            for assignment in self.rounds.values():
                for name in assignment.byes:
                    totals.setdefault(name, {"points": 0, "rounds_won": 0, "loners": 0,
                                             "euchres": 0, "rounds": 0})
            tables = []
            for (round_number, table), table_round in sorted(self.tables.items()):
                self._add_to_totals(table_round, totals)
                if round_number != current:
                    continue
                score = table_round.score
                online = self._online(table_round)
                tables.append({
                    "table": table, "round": round_number, "hand": table_round.hand,
                    "score": {"NS": score[Team.NS], "EW": score[Team.EW]},
                    "players": {str(seat): table_round.players[seat] for seat in SEATS},
                    "online": bool(online), "state": self._table_state(table_round, now),
                    "done": table_round.done, "entries": len(table_round.lines),
                })
            ranking = sorted(totals.items(),
                             key=lambda item: (-item[1]["points"], -item[1]["rounds_won"],
                                               item[0].casefold()))
            return {
                "event": self.event, "round": current,
                "format": self.rounds[current].format.describe() if current else None,
                "tables": tables,
                "players": [{"name": name, **values} for name, values in ranking],
                "byes": list(self.rounds[current].byes) if current else [],
                "problems": list(self.problems), "version": self.version,
                "duplicates": self.duplicates, "refused": self.refused,
            }

    def _add_to_totals(self, table_round: TableRound, totals: dict[str, dict[str, int]]
                       ) -> None:
        seats = table_round.players
        for seat in SEATS:
            totals.setdefault(seats[seat], {"points": 0, "rounds_won": 0, "loners": 0,
                                            "euchres": 0, "rounds": 0})
        score = table_round.score
        winner = table_round.winner
        for seat in SEATS:
            mine = totals[seats[seat]]
            mine["points"] += score[seat.team]
            if table_round.done:
                mine["rounds"] += 1
            if winner is seat.team:
                mine["rounds_won"] += 1
                mine["points"] += self.bonuses.round_won
        for result in table_round.counted:
            if result.alone and result.maker is not None and result.team is result.maker.team:
                totals[seats[result.maker]]["loners"] += 1
                totals[seats[result.maker]]["points"] += self.bonuses.loner
            if result.how == "euchred" and result.team is not None:
                for seat in SEATS:
                    if seat.team is result.team:
                        totals[seats[seat]]["euchres"] += 1
                        totals[seats[seat]]["points"] += self.bonuses.euchre

    # --- exports ---------------------------------------------------------------------

    def standings_csv(self) -> str:
        board = self.board()
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["rank", "name", "points", "rounds_won", "loners", "euchres",
                         "rounds_played"])
        for rank, player in enumerate(board["players"], 1):
            writer.writerow([rank, csv_cell(player["name"]), player["points"],
                             player["rounds_won"],
                             player["loners"], player["euchres"], player["rounds"]])
        return out.getvalue()

    def table_logs(self) -> dict[tuple[int, int], str]:
        """Each table's round as the box journalled it (undos included), by (round, table)."""
        with self.lock:
            return {key: "\n".join([HEADER, *table_round.lines]) + "\n"
                    for key, table_round in sorted(self.tables.items()) if table_round.lines}

    def game_of(self, round_number: int, table: int) -> Game | None:
        with self.lock:
            table_round = self.tables.get((round_number, table))
            if table_round is None or table_round.replayed is None:
                return None
            return table_round.replayed.game


def standings_json(board: dict[str, Any]) -> dict[str, Any]:
    """``GET /standings.json``: exactly the documented schema, from :meth:`Director.board`."""
    return {
        "event": board["event"], "round": board["round"],
        "tables": [{key: table[key] for key in
                    ("table", "round", "hand", "score", "players", "online")}
                   for table in board["tables"]],
        "players": [{key: player[key] for key in ("name", "points", "rounds_won", "loners")}
                    for player in board["players"]],
    }
