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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from euchre_core import SEATS, Game, Replay, Rules, Seat, Team, replay
from euchre_core.events import name_problem
from euchre_core.log import HEADER

from ..defaults import DEFAULT_EVENT
from ..round_end import verdict_of
from . import control
from . import corrections as fixes
from . import scorecards as cards
from .control import ahead, in_hand
from .movement import by_result, fixed_pairs, north_stays, progressive
from .names import csv_cell, lookalike_warning, normalise
from .protocol import (
    Ack,
    Assignment,
    Clock,
    EntryMessage,
    Handover,
    MessageError,
    RoundFormat,
    Status,
    Takeover,
    ack_topic,
    assignment_topic,
    check_event_id,
    clock_topic,
    handover_topic,
    topic_kind,
)
from .standings import Bonuses as Bonuses
from .standings import night_settings, outcome, standings, winners_of

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
CREATE TABLE IF NOT EXISTS final (at REAL NOT NULL);
"""

Publish = Callable[[str, bytes, bool], None]
"""``(topic, payload, retain)``: hands a message to the broker."""


NO_BONUSES: Final = Bonuses()


class DirectorError(ValueError):
    """A request the director refuses (a name registered twice...); says why."""


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
    ended: float | None = None
    """When a forced start of the next round ended this game (:data:`.control.FORCED_RULE`)."""
    time_called: bool = False
    """A timed round's time is up (:data:`.control.TIME_RULE`): done once no hand is in play."""
    tied_round: str = "shared"
    """The round's rule for a tie after N hands (:mod:`.standings`)."""

    @property
    def counted(self) -> list[Any]:
        """The hand results that count for the round."""
        if self.replayed is None:
            return []
        results = self.replayed.game.results
        return results[: self.format.hands] if self.format.hands is not None else results

    @property
    def score(self) -> dict[Team, int]:
        """The game's starting score (``game dealer=W NS=6 EW=4``: a table that
        kept score on paper, or a box swapped in) plus the hands that count."""
        if self.replayed is None:
            return {Team.NS: 0, Team.EW: 0}
        score = dict(self.replayed.game.start_score)
        for result in self.counted:
            if result.team is not None:
                score[result.team] += result.points
        return score

    @property
    def done(self) -> bool:
        if self.ended is not None:
            return True
        if self.replayed is None:
            return self.time_called
        if self.time_called and not in_hand(self.replayed.game):
            return True
        if self.format.hands is not None:
            return len(self.counted) >= self.format.hands and not self.awaits_extra_hand
        return self.replayed.game.winner is not None

    @property
    def decider(self) -> Team | None:
        """After a tie at N hands with the extra-hand rule: the side that
        scored the next hand (unscored for the round), once played."""
        if self.replayed is None or self.format.hands is None or (
                self.tied_round != "extra-hand"):
            return None
        return next((r.team for r in self.replayed.game.results[self.format.hands:]
                     if r.team is not None), None)

    @property
    def awaits_extra_hand(self) -> bool:
        """Level after the N hands, the extra hand not played yet."""
        return (self.format.hands is not None and len(self.counted) >= self.format.hands
                and winners_of(self.score, self.decider, self.tied_round) is None)

    @property
    def winners(self) -> frozenset[Team]:
        """Who won the round: one side, or both (a tie shared; also a tie
        ended by force or time), none while not done."""
        if not self.done:
            return frozenset()
        winner = self.winner
        return frozenset(Team) if winner is None else frozenset({winner})

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
        if self.format.hands is None and self.replayed is not None and (
                self.replayed.game.winner is not None):
            return self.replayed.game.winner
        return ahead(self.score) or self.decider  # N hands, or ended by force or by time


class Director:
    """The club night's state (see the module's docstring)."""

    def __init__(self, state_dir: Path, *, event: str = DEFAULT_EVENT,
                 bonuses: Bonuses = NO_BONUSES, settings: Mapping[str, str] | None = None,
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
        self.broker: tuple[bool, float] | None = None
        """The director's own link to the broker: (connected, since), None
        before the first try is over (:meth:`broker_state`)."""
        self._outbox: list[tuple[str, bytes, bool]] = []
        """Messages to send once the transaction that made them is committed."""
        self._db = sqlite3.connect(self.state_dir / DB_NAME, isolation_level=None,
                                   check_same_thread=False, timeout=10)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)
        self._db.executescript(control.SCHEMA)
        self._db.executescript(fixes.SCHEMA)
        self.settings = night_settings(self._db, settings)
        """Ties, a tied round, byes (:mod:`.standings`): ``settings``, else as kept."""
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
                (table_round.last_heard,) = self._db.execute(  # not "not heard from yet"
                    "SELECT max(received) FROM entries WHERE box=? AND game=?",
                    (box, game)).fetchone()
        for round_number, table, at in self._db.execute(
                "SELECT round, table_no, at FROM ended"):
            if (round_number, table) in self.tables:
                self.tables[(round_number, table)].ended = at
        self._clock_called = self._call_time()

    def close(self) -> None:
        self._db.close()

    def _changed(self) -> None:
        self.version += 1

    def problem(self, text: str) -> None:
        """Say something went wrong: the log and the page."""
        log.warning("%s", text)
        stamp = time.strftime("%H:%M:%S", time.localtime(self.clock()))
        with self.lock:
            for said in [p for p in self.problems if p.partition(" ")[2] == text]:
                self.problems.remove(said)  # said again: once, at its latest time
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

    # --- corrections (:mod:`.corrections`) --------------------------------------------

    def corrections(self) -> list[fixes.Correction]:
        """Every correction made, the first first."""
        with self.lock:
            return fixes.load(self._db)

    def correct(self, correction: fixes.Correction) -> fixes.Correction:
        """Check and keep one correction, stamped now (an ``add`` of a new
        name registers it too); DirectorError saying why it is refused, with
        nothing kept."""
        if correction.kind == "add" and correction.player is not None:
            correction = replace(correction, player=normalise(correction.player))
        with self.lock:
            corrections = self.corrections()
            number = self.current_round + 1
            night = fixes.Night(self.players(), fixes.withdrawn(corrections),
                                {r: set(a.tables) for r, a in self.rounds.items()}, number,
                                frozenset(fixes.forced_byes(corrections, number)))
            try:
                checked = replace(fixes.check(correction, night), made=self.clock())
            except fixes.CorrectionError as error:
                raise DirectorError(str(error)) from None
            self._db.execute("BEGIN IMMEDIATE")
            try:
                if checked.kind == "add" and checked.player not in night.players:
                    self._db.execute("INSERT INTO players (name, registered) VALUES (?, ?)",
                                     (checked.player, checked.made))
                kept = fixes.keep(self._db, checked)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            self._changed()
        log.info("correction %d by %s: %s (%s)", kept.id, kept.who, kept.describe(),
                 kept.reason)
        return kept

    def start_round(self, round_format: RoundFormat | None = None,
                    rules: Rules | None = None, movement: str = "progressive",
                    force: bool = False, preview: bool = False) -> Assignment:
        """Seat the registered players for the next round by ``movement``
        (:data:`MOVEMENTS`), keep it, and send it to the boxes.  While tables
        still play the round before, DirectorError (:func:`.control.refusal`),
        unless ``force``: their games end by :data:`.control.FORCED_RULE`.
        ``preview``: the seating it would make now, keeping, ending and
        sending nothing (so that a reseat can be made before it starts)."""
        with self.lock:
            if self.final_at() is not None:
                raise DirectorError("the night is final: no round starts after it")
            number = self.current_round + 1
            now = self.clock()
            ending = self._still_playing(number - 1, force or preview)
            for table_round in ending:  # provisional: "by-result" seats from them
                table_round.ended = now
            sitting_out: list[str]
            try:
                if movement == "by-result" and number > 1:
                    seatings, sitting_out = self._by_result(number - 1), []
                elif movement == "pairs":
                    seated = set(self._seated(number))
                    pairs = self._pairs()
                    seatings, sitting_out = fixed_pairs(
                        [pair for pair in pairs if set(pair) <= seated], number)
                    sitting_out += [name for pair in pairs if not set(pair) <= seated
                                    for name in pair if name in seated]
                elif movement == "north-stays" and number > 1:
                    first = self.rounds[1]
                    self._same_players(first, "north stays")
                    seatings = north_stays([first.tables[t] for t in sorted(first.tables)],
                                           number)
                    sitting_out = []
                elif movement in MOVEMENTS:
                    seatings, sitting_out = progressive(self._seated(number), [
                        ([past.tables[t] for t in sorted(past.tables)], past.byes)
                        for _, past in sorted(self.rounds.items())])
                else:
                    raise ValueError(f"movement {movement!r}: one of {', '.join(MOVEMENTS)}")
            except ValueError as error:
                for table_round in ending:
                    table_round.ended = None
                raise DirectorError(str(error)) from None
            seatings, sitting_out = fixes.reseat(
                seatings, [*fixes.forced_byes(self.corrections(), number), *sitting_out],
                self.corrections(), number)
            round_format = round_format or RoundFormat()
            assignment = Assignment(number, round_format, rules or Rules(),
                                    {index + 1: seats for index, seats in enumerate(seatings)},
                                    tuple(sitting_out), tied_round=self.settings.tied_round,
                                    ends=None if round_format.minutes is None
                                    else now + 60 * round_format.minutes)
            if preview:
                for table_round in ending:
                    table_round.ended = None
                return assignment
            payload = assignment.encode()
            self._end_games(ending, now)
            self._db.execute("INSERT INTO rounds (number, assignment) VALUES (?, ?)",
                             (number, payload))
            self._add_round(assignment)
            self._changed()
        if self.publish is not None:
            self.publish(assignment_topic(self.event, number), payload, True)
        log.info("round %d: %d tables, byes: %s", number, len(seatings),
                 ", ".join(sitting_out) or "none")
        return assignment

    def final_at(self) -> float | None:
        """When the night was called final (:meth:`finish`), or None."""
        with self.lock:
            (at,) = self._db.execute("SELECT max(at) FROM final").fetchone()
            return None if at is None else float(at)

    def finish(self, force: bool = False) -> float:
        """Call the night final: the page says so and no round starts after it.
        While tables still play the last round, DirectorError naming them,
        unless ``force``: their games end as a forced round start ends them
        (:data:`.control.FORCED_RULE`).  Returns when."""
        with self.lock:
            if self.final_at() is not None:
                raise DirectorError("the night is final already")
            if not self.current_round:
                raise DirectorError("no round has been played: nothing to call final")
            try:
                ending = self._still_playing(self.current_round, force)
            except DirectorError as error:
                raise DirectorError(str(error).replace("force the next round",
                                                       "force the end")) from None
            now = self.clock()
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._end_games(ending, now)
                self._db.execute("INSERT INTO final (at) VALUES (?)", (now,))
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            for table_round in ending:
                table_round.ended = now
            self._changed()
        log.info("the night is final")
        return now

    def broker_state(self, connected: bool) -> None:
        """The director's link to the broker came up or went down (paho's
        callbacks): the page says "broker lost" while it is down."""
        with self.lock:
            self.broker = (connected, self.clock())
            self._changed()

    def connected(self) -> None:
        """The director (re)connected to the broker: said, and every round's
        assignment sent again."""
        self.broker_state(True)
        self.republish()

    def _still_playing(self, last: int, force: bool) -> list[TableRound]:
        """The tables of round ``last`` not done; DirectorError naming them
        unless ``force``."""
        settled = fixes.results(self.corrections())  # a result correction settles a table
        playing = [table_round for key, table_round in sorted(self.tables.items())
                   if key[0] == last and not table_round.done and key not in settled]
        if playing and not force:
            raise DirectorError(control.refusal(last, [(t.table, t.hand) for t in playing]))
        return playing

    def _end_games(self, ending: list[TableRound], now: float) -> None:
        """Keep the forced ends (who and when; the rule is :data:`.control.FORCED_RULE`)."""
        for table_round in ending:
            self._db.execute("INSERT OR REPLACE INTO ended (round, table_no, at) "
                             "VALUES (?, ?, ?)", (table_round.round, table_round.table, now))
            log.warning("%s", self._ended_words(table_round))

    def _ended_words(self, table_round: TableRound) -> str:
        game = table_round.replayed.game if table_round.replayed is not None else None
        return control.ended_words(table_round.round, table_round.table, table_round.score,
                                   len(table_round.counted),
                                   game is not None and in_hand(game))

    def _seated(self, number: int) -> list[str]:
        """The players to seat in round ``number``: the registered and added,
        but not the withdrawn nor those given a bye (corrections)."""
        corrections = self.corrections()
        out = set(fixes.withdrawn(corrections)) | set(fixes.forced_byes(corrections, number))
        return [name for name in self.players() if name not in out]

    def _same_players(self, previous: Assignment, movement: str) -> None:
        if previous.byes or set(self._seated(self.current_round + 1)) != {
                name for seats in previous.tables.values() for name in seats.values()}:
            raise ValueError(f"{movement}: the same players as round {previous.round}, "
                             "a multiple of four (no byes)")

    def _by_result(self, last: int) -> list[dict[Seat, str]]:
        previous = self.rounds[last]
        self._same_players(previous, "winners up, losers down")
        winners = []
        settled = fixes.results(self.corrections())
        for table in sorted(previous.tables):
            table_round = self.tables[(last, table)]
            fixed = settled.get((last, table))
            if fixed is not None:  # a result correction: its score decides
                assert fixed.ns is not None and fixed.ew is not None
                winners.append(Team.EW if fixed.ew > fixed.ns else Team.NS)
                continue
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
                table, assignment.round, dict(seats), assignment.format,
                tied_round=assignment.tied_round)

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
                        elif kind == "takeover":
                            self._takeover(int(number), Takeover.decode(payload))
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
        self._send_outbox()

    def _status(self, table: int, status: Status | None) -> None:
        if status is None:  # no box sends one: a retained status cleared by someone
            raise MessageError("an empty status changes nothing")
        else:
            if status.table != table:
                raise MessageError(f"says table {status.table}")
            if status.box in self._replaced(table):
                return  # a box a spare replaced: it has no say on this table
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
        if message.box in self._replaced(table):
            raise MessageError(self._replaced_words(table, message.box))
        if table_round.box == message.box and table_round.game == 0:  # a spare's first line
            self._db.execute("UPDATE claims SET game=? WHERE round=? AND table_no=?",
                             (message.game, message.round, table))
            table_round.game = message.game
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

    # --- round control: a spare box, the clock (control.py's rules) --------------------

    def _replaced(self, table: int) -> set[str]:
        """The boxes a spare replaced at ``table`` (refused there from then on)."""
        return {str(box) for (box,) in self._db.execute(
            "SELECT old_box FROM handovers WHERE table_no=? AND old_box IS NOT NULL", (table,))}

    def _replaced_words(self, table: int, box: str) -> str:
        round_number, new_box = self._db.execute(
            "SELECT round, new_box FROM handovers WHERE table_no=? AND old_box=? "
            "ORDER BY at LIMIT 1", (table, box)).fetchone()
        return (f"box {box} was replaced at table {table} by spare box {new_box} in round "
                f"{round_number}: its lines are refused")

    def _takeover(self, table: int, request: Takeover) -> None:
        """A spare box asks for ``table`` in the current round (inside
        :meth:`receive_many`'s transaction): the claim moves to it and it is
        sent the table's journal so far (:data:`.control.SPARE_RULE`)."""
        if request.table != table:
            raise MessageError(f"says table {request.table}")
        number = self.current_round
        table_round = self.tables.get((number, table))
        if table_round is None:
            raise MessageError(f"box {request.box} asks for table {table}, which round "
                               f"{number} does not have")
        if table_round.box != request.box:
            old, old_game = table_round.box, table_round.game
            self._db.execute(
                "INSERT OR REPLACE INTO handovers (round, table_no, new_box, old_box, old_game, "
                "lines, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (number, table, request.box, old, old_game, len(table_round.lines),
                 self.clock()))
            self._db.execute("INSERT OR REPLACE INTO claims (round, table_no, box, game) "
                             "VALUES (?, ?, ?, 0)", (number, table, request.box))
            table_round.box, table_round.game = request.box, 0
            log.warning("round %d, table %d: spare box %s takes over from box %s with %d "
                        "lines", number, table, request.box, old, len(table_round.lines))
            self._changed()
        old_box, old_game, count = self._db.execute(
            "SELECT old_box, old_game, lines FROM handovers WHERE round=? AND table_no=? "
            "AND new_box=?", (number, table, request.box)).fetchone() or (None, None, 0)
        lines = [str(line) for (line,) in self._db.execute(
            "SELECT line FROM entries WHERE box=? AND game=? AND seq<? ORDER BY seq",
            (old_box, old_game, count))] if old_box is not None else []
        self._outbox.append((handover_topic(self.event, table), Handover(
            table, number, request.box, old_box, tuple(lines)).encode(), True))

    def _send_outbox(self) -> None:
        with self.lock:
            messages, self._outbox = self._outbox, []
        if self.publish is not None:
            for topic, payload, retain in messages:
                self.publish(topic, payload, retain)

    def _call_time(self) -> bool:
        """Mark the tables of timed rounds whose time is up; True when the
        current round's is."""
        now = self.clock()
        for (number, _), table_round in self.tables.items():
            ends = self.rounds[number].ends
            table_round.time_called = ends is not None and now >= ends
        current = self.rounds.get(self.current_round)
        return current is not None and current.ends is not None and now >= current.ends

    def tick(self) -> None:
        """Every :data:`.control.CLOCK_S` (``club serve``'s thread): time called
        when it is up, and the timed round's clock sent to the boxes while any
        of its tables plays."""
        with self.lock:
            called = self._call_time()
            if called != self._clock_called:
                self._clock_called = called
                self._changed()
            clock = self._clock_json()
            playing = any(not t.done for (n, _), t in self.tables.items()
                          if n == self.current_round)
        if clock is not None and playing and self.publish is not None:
            self.publish(clock_topic(self.event, clock["round"]),
                         Clock(clock["round"], clock["remaining"]).encode(), False)

    def _clock_json(self) -> dict[str, Any] | None:
        """The current round's clock for the page: ``{"round", "ends" (Unix
        time), "remaining" (s), "words"}``; None when the round is not timed."""
        number = self.current_round
        ends = self.rounds[number].ends if number else None
        if ends is None:
            return None
        remaining = max(0.0, ends - self.clock())
        return {"round": number, "ends": ends, "remaining": round(remaining, 1),
                "words": control.clock_words(remaining)}

    def _control_notes(self) -> list[str]:
        """Forced ends and spare boxes, in words, the latest first (the page)."""
        notes = [(table_round.ended, self._ended_words(table_round))
                 for table_round in self.tables.values() if table_round.ended is not None]
        for number, table, new_box, old_box, count, at in self._db.execute(
                "SELECT round, table_no, new_box, old_box, lines, at FROM handovers"):
            notes.append((at, f"round {number}, table {table}: spare box {new_box} took over "
                          f"from box {old_box or '(none)'} after {count} lines"))
        return [words for _, words in sorted(notes, reverse=True)]

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
            self._call_time()
            corrections = fixes.load(self._db)
            fixed = fixes.results(corrections)
            outcomes = {key: outcome(table_round, fixed.get(key))
                        for key, table_round in sorted(self.tables.items())}
            ranked = standings(self.players(), outcomes.values(),
                               [name for a in self.rounds.values() for name in a.byes],
                               fixes.penalties(corrections), fixes.withdrawn(corrections),
                               self.settings, self.bonuses)
            tables = []
            for (round_number, table), table_round in sorted(self.tables.items()):
                if round_number != current:
                    continue
                score = outcomes[(round_number, table)].score
                online = self._online(table_round)
                tables.append({
                    "table": table, "round": round_number, "hand": table_round.hand,
                    "score": {"NS": score[Team.NS], "EW": score[Team.EW]},
                    "players": {str(seat): table_round.players[seat] for seat in SEATS},
                    "online": bool(online), "state": self._table_state(table_round, now),
                    "done": table_round.done, "entries": len(table_round.lines),
                    "heard": None if table_round.last_heard is None
                    else round(now - table_round.last_heard),
                    "ended": table_round.ended is not None,
                    "corrected": outcomes[(round_number, table)].corrected_by,
                    "extra_hand": table_round.awaits_extra_hand,
                    "verdict": self._verdict(table_round),
                })
            return {
                "event": self.event, "round": current,
                "format": self.rounds[current].format.describe() if current else None,
                "tables": tables,
                "players": [totals.to_json() for totals in ranked],
                "corrections": [c.to_json() for c in corrections],
                "settings": {**self.settings.to_json(), "words": self.settings.describe()},
                "byes": list(self.rounds[current].byes) if current else [],
                "problems": list(self.problems), "version": self.version,
                "duplicates": self.duplicates, "refused": self.refused,
                "clock": self._clock_json(), "notes": self._control_notes(),
                "disputes": self._disputes(outcomes),
                "final": self.final_at(), "now": now,
                "broker": None if self.broker is None else {
                    "connected": self.broker[0], "since": self.broker[1]},
            }

    # --- the result accepted at the table (firmware/round_end.py) --------------------

    def _verdict(self, table_round: TableRound) -> dict[str, Any] | None:
        """A done round's verdict at the table: ``{"verdict": "accepted" |
        "disputed", "by": "NS" | "EW", "at": when the director got it}``;
        None while not done or not answered yet."""
        found = verdict_of(table_round.lines) if table_round.done else None
        if found is None:
            return None
        row = self._db.execute("SELECT received FROM entries WHERE box=? AND game=? AND seq=?",
                               (table_round.box, table_round.game, found.line)).fetchone()
        return {"verdict": found.verdict, "by": str(found.side),
                "at": float(row[0]) if row else self.clock()}

    def _disputes(self, outcomes: Mapping[tuple[int, int], Any]) -> list[dict[str, Any]]:
        """Every round disputed at its table, the latest first, with the result
        correction that settled it (``corrected``: its id, or None: the organiser
        is to decide, ``club correct result``)."""
        disputes = []
        for key, table_round in self.tables.items():
            verdict = self._verdict(table_round)
            if verdict is None or verdict["verdict"] != "disputed":
                continue
            score = table_round.score  # the result as the table had it
            corrected = outcomes[key].corrected_by
            disputes.append({
                "round": key[0], "table": key[1], "by": verdict["by"], "at": verdict["at"],
                "when": fixes.stamp(verdict["at"]),
                "score": {"NS": score[Team.NS], "EW": score[Team.EW]},
                "corrected": corrected,
                "what": f"round {key[0]}, table {key[1]}: NS {score[Team.NS]} EW "
                        f"{score[Team.EW]} disputed by {verdict['by']} at the table" + (
                            f"; settled by correction {corrected}" if corrected else
                            "; the organiser decides (club correct result)")})
        return sorted(disputes, key=lambda d: -d["at"])

    # --- personal scorecards (scorecards.py) ---------------------------------------------

    def scorecards(self) -> list[dict[str, Any]]:
        """One card per player, in the standings' order, from the same
        outcomes, byes and corrections as the standings (:mod:`.scorecards`)."""
        with self.lock:
            corrections = fixes.load(self._db)
            fixed = fixes.results(corrections)
            outcomes = [outcome(table_round, fixed.get(key))
                        for key, table_round in sorted(self.tables.items())]
            ranked = standings(self.players(), outcomes,
                               [name for a in self.rounds.values() for name in a.byes],
                               fixes.penalties(corrections), fixes.withdrawn(corrections),
                               self.settings, self.bonuses)
            return cards.scorecards(ranked, outcomes,
                                    {n: a.byes for n, a in self.rounds.items()},
                                    corrections, self.bonuses)

    # --- exports ---------------------------------------------------------------------

    def standings_csv(self) -> str:
        board = self.board()
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["rank", "name", "points", "rounds_won", "loners", "euchres",
                         "rounds_played", "byes", "bye_points", "penalties", "withdrawn"])
        for player in board["players"]:
            writer.writerow([player["rank"], csv_cell(player["name"]), player["points"],
                             player["rounds_won"],
                             player["loners"], player["euchres"], player["rounds"],
                             player["byes"], player["bye_points"], player["penalties"],
                             "yes" if player["withdrawn"] else ""])
        return out.getvalue()

    def corrections_csv(self) -> str:
        """The audit list: every correction, with who, when and why, and every
        result disputed at its table (kind ``dispute``) among them."""
        with self.lock:
            board = self.board()
            rows = fixes.csv_rows(self.corrections(), board["disputes"])
        out = io.StringIO()
        csv.writer(out).writerows([csv_cell(cell) for cell in row] for row in rows)
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
        "players": [{key: player[key] for key in ("rank", "name", "points", "rounds_won",
                                                  "loners", "rounds_played")}
                    for player in board["players"]],
        "corrections": board["corrections"],
    }
