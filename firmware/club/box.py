"""The table's side of a club night: a referee that joins the room's broker.

:class:`ClubBox` hangs on a running :class:`~firmware.app.Referee` through its
two public seams: ``Referee.listeners`` (called on the main loop with each
journal line once it is durable) and the main loop's queue (jobs: callables
taking the referee).  Everything that reads the journal or changes the game
runs on the main loop; paho's thread only puts jobs on the queue.

The outbox is the journal itself.  Each round's game is published line by
line from ``Store.lines(game)``, with the game id and the line's number in
it; the director answers, per game, "kept up to seq" (the retained ``ack``
topic), and that watermark is kept in ``club.json`` beside the journal.  On
every (re)connect, and whenever the director's ack stops moving, everything
after the watermark is sent again: what is durable on the box reaches the
director at least once, whatever happened to the broker or the Wi-Fi in
between (the director drops duplicates).  Publishing never blocks: without a
broker the table scores as always and catches up later.

An assignment for a round this box has not started yet starts that round's
game: the players per seat (``Referee.set_next_names``), the house rules and
the round's format (``Referee.set_next_rules``), a new game
(``Referee.start_new_game``); the screen says where everyone sits.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from euchre_core import SEATS, Team

from ..app import Inbox, Referee
from ..defaults import DEFAULT_EVENT
from .mqtt import close_client, open_client
from .protocol import (
    QOS,
    Ack,
    Assignment,
    EntryMessage,
    MessageError,
    RoundFormat,
    Status,
    ack_topic,
    assignment_topic,
    check_box_id,
    check_event_id,
    entries_topic,
    parse_broker_url,
    status_topic,
    topic_kind,
)

log = logging.getLogger("euchre.club.box")

STATE_NAME: Final = "club.json"
RESEND_S: Final = 5.0
"""Seconds without the director's ack moving before unacknowledged lines are sent
again; doubled after each resend that brings no ack (up to :data:`MAX_RESEND_S`),
so a slow director is not flooded with copies."""
MAX_RESEND_S: Final = 60.0


@dataclass
class BoxState:
    """What the box keeps about the night (``club.json`` in the state directory)."""

    box: str
    event: str
    table: int
    rounds: dict[int, int] = field(default_factory=dict)
    """Game id -> the round it is."""
    acked: dict[int, int] = field(default_factory=dict)
    """Game id -> the last seq the director has kept (every line up to it)."""

    @classmethod
    def load(cls, path: Path, event: str, table: int) -> BoxState:
        """The kept state, or a fresh one (new box id) when there is none or
        it was for another event or table."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            state = cls(check_box_id(data["box"]), data["event"], int(data["table"]),
                        {int(g): int(r) for g, r in data["rounds"].items()},
                        {int(g): int(s) for g, s in data["acked"].items()})
        except FileNotFoundError:
            state = None
        except (ValueError, KeyError, TypeError, AttributeError, MessageError) as error:
            log.warning("%s: not readable (%s): starting afresh", path, error)
            state = None
        if state is None or state.event != event or state.table != table:
            # A box moved to another table or night is a new box to the director.
            return cls(secrets.token_hex(6), event, table)
        return state

    def save(self, path: Path) -> None:
        """Write atomically (a pulled plug leaves the old file or the new one)."""
        data = {"box": self.box, "event": self.event, "table": self.table,
                "rounds": {str(g): r for g, r in self.rounds.items()},
                "acked": {str(g): s for g, s in self.acked.items()}}
        temporary = path.with_name(path.name + ".tmp")
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)


class ClubBox:
    """A referee's membership of a club night (see the module's docstring).

    ``ClubBox(referee, events, broker="mqtt://host", table=3).start()``;
    ``close()`` leaves (the status goes offline)."""

    def __init__(self, referee: Referee, events: Inbox, *, broker: str, table: int,
                 event: str = DEFAULT_EVENT, resend_s: float = RESEND_S) -> None:
        self.referee = referee
        self.events = events
        self.address = parse_broker_url(broker)
        self.event = check_event_id(event)
        self.table = table
        self.resend_s = resend_s
        self.path = Path(referee.store.state_dir) / STATE_NAME
        self.state = BoxState.load(self.path, self.event, table)
        self.formats: dict[int, RoundFormat] = {}
        self.sent: dict[int, int] = dict(self.state.acked)
        """Game id -> the last seq handed to the broker since the last (re)connect."""
        self.connected = False
        self.last_ack = time.monotonic()
        self.wait_s = resend_s
        """The wait before the next resend (backs off while no ack comes)."""
        self.resends = 0
        self.resent_at = 0.0
        """When everything unacknowledged was last sent again (monotonic s)."""
        self._client: Any = None
        self._closing = threading.Event()
        self._timer = threading.Thread(target=self._tick, name="club-resend", daemon=True)

    @property
    def box_id(self) -> str:
        return self.state.box

    def start(self) -> ClubBox:
        self.state.save(self.path)
        self.referee.listeners.append(self._on_journal)
        will = (status_topic(self.event, self.table),
                Status(self.table, self.box_id, online=False).encode())
        self._client = open_client(
            self.address, f"box-{self.box_id}", on_message=self._on_message,
            subscriptions=[assignment_topic(self.event, "+"), ack_topic(self.event, self.box_id)],
            on_connect=lambda: self.events.put(self._on_connect),
            on_disconnect=lambda: self.events.put(self._on_disconnect), will=will)
        self._timer.start()
        log.info("table %d joins %s (event %s) as box %s", self.table, self.address,
                 self.event, self.box_id)
        return self

    def close(self) -> None:
        self._closing.set()
        try:
            self.referee.listeners.remove(self._on_journal)
        except ValueError:
            pass
        if self._client is not None:
            info = self._client.publish(status_topic(self.event, self.table),
                                        Status(self.table, self.box_id, online=False).encode(),
                                        qos=QOS, retain=True)
            if self.connected:
                try:
                    info.wait_for_publish(2.0)
                except (RuntimeError, ValueError):
                    pass
            close_client(self._client)

    # --- paho's thread: only queue jobs -----------------------------------------------

    def _on_message(self, topic: str, payload: bytes) -> None:
        try:
            kind, _ = topic_kind(self.event, topic)
            if kind == "assignment":
                assignment = Assignment.decode(payload)
                self.events.put(lambda referee: self._on_assignment(assignment))
            elif kind == "ack":
                ack = Ack.decode(payload)
                if ack.box == self.box_id:
                    self.events.put(lambda referee: self._on_ack(ack))
        except MessageError as error:
            log.warning("%s: refused: %s", topic, error)

    def _tick(self) -> None:
        while not self._closing.wait(min(1.0, self.resend_s)):
            self.events.put(self._resend_if_stale)

    # --- the main loop ------------------------------------------------------------

    def _on_connect(self, referee: Referee) -> None:
        self.connected = True
        self._publish_status()
        self._send_again()  # what the broker had in flight may be gone

    def _on_disconnect(self, referee: Referee) -> None:
        self.connected = False

    def _on_ack(self, ack: Ack) -> None:
        changed = False
        for game, seq in ack.acked.items():
            if game in self.state.rounds and seq > self.state.acked.get(game, -1):
                self.state.acked[game] = seq
                changed = True
        if changed:
            self.last_ack = time.monotonic()
            self.wait_s = self.resend_s
            self.state.save(self.path)

    def _behind(self) -> bool:
        """Lines handed to the broker that the director has not acknowledged."""
        return any(self.sent.get(g, -1) > self.state.acked.get(g, -1) for g in self.sent)

    def _resend_if_stale(self, referee: Referee) -> None:
        if self.connected and self._behind() and time.monotonic() - self.last_ack > self.wait_s:
            log.info("no ack for %.0f s: sending again from the journal", self.wait_s)
            self.last_ack = time.monotonic()
            self.wait_s = min(2 * self.wait_s, MAX_RESEND_S)
            self.resends += 1
            self._send_again()

    def _send_again(self) -> None:
        """Everything after the director's watermark, from the journal."""
        self.resent_at = time.monotonic()
        self.sent = dict(self.state.acked)
        self.pump()

    def _on_journal(self, line: str) -> None:
        self.pump(self.referee.game_id)
        game_id = self.referee.game_id
        round_number = self.state.rounds.get(game_id)
        round_format = self.formats.get(round_number or 0)
        game = self.referee.game
        if round_format is not None and round_format.hands is not None and line != "undo" and (
            game.hands_played == round_format.hands and game.results
        ):
            score = {team: sum(r.points for r in game.results if r.team is team)
                     for team in Team}
            self.referee.notice = (f"Round {round_number} over",
                                   (f"NS {score[Team.NS]}  EW {score[Team.EW]}",
                                    "Wait for the director's", "next round."))

    def pump(self, only: int | None = None) -> None:
        """Publish every line of the round games (or of game ``only``) not yet
        handed to the broker."""
        if not self.connected or self._client is None:
            return
        store = self.referee.store
        for game_id, round_number in sorted(self.state.rounds.items()):
            if only is not None and game_id != only:
                continue
            first = self.sent.get(game_id, -1) + 1
            lines = store.lines(game_id)
            for seq in range(first, len(lines)):
                message = EntryMessage(self.table, self.box_id, round_number, game_id, seq,
                                       lines[seq])
                self._client.publish(entries_topic(self.event, self.table), message.encode(),
                                     qos=QOS)
            if len(lines) > first:
                self.sent[game_id] = len(lines) - 1

    def _publish_status(self) -> None:
        if self._client is None:
            return
        game_id = self.referee.game_id
        status = Status(self.table, self.box_id, online=True,
                        round=self.state.rounds.get(game_id),
                        game=game_id if game_id in self.state.rounds else None)
        self._client.publish(status_topic(self.event, self.table), status.encode(), qos=QOS,
                             retain=True)

    def _on_assignment(self, assignment: Assignment) -> None:
        self.formats[assignment.round] = assignment.format
        started = set(self.state.rounds.values())
        if assignment.round in started or assignment.round < max(started, default=0):
            # A retained assignment seen again: this round is under way.  The
            # director sends them all when it (re)connects: whatever it has not
            # acknowledged yet goes again now, not after the resend back-off.
            if assignment.round == max(started) and self._behind() and (
                    time.monotonic() - self.resent_at > 1.0):
                self._send_again()
                self.wait_s = self.resend_s
            return
        seats = assignment.tables.get(self.table)
        if seats is None:
            log.info("round %d: no players at table %d", assignment.round, self.table)
            return
        referee = self.referee
        was_round = referee.game_id in self.state.rounds
        leaving = [referee.game.names[seat] for seat in SEATS] if was_round else []
        referee.set_next_rules(assignment.format.rules(assignment.rules))
        referee.set_next_names(seats)
        game_id = referee.start_new_game()
        self.state.rounds[game_id] = assignment.round
        self.state.save(self.path)
        referee.notice = (f"Round {assignment.round}: table {self.table}",
                          where_next(assignment, leaving) if leaving else
                          tuple(f"{seat} {seats[seat]}" for seat in SEATS)
                          + (assignment.format.describe(),))
        log.info("round %d started as game %d", assignment.round, game_id)
        self._publish_status()
        self.pump()


def where_next(assignment: Assignment, names: list[str]) -> tuple[str, ...]:
    """Where each of ``names`` sits in ``assignment`` (``Anna: table 2 N``, ``Bo: bye``)."""
    seat_of = {name: f"table {table} {seat}" for table, seats in assignment.tables.items()
               for seat, name in seats.items()}
    return tuple(f"{name}: {seat_of.get(name, 'bye')}" for name in names)


def join(referee: Referee, events: Inbox, *, say: Callable[[str], object] = log.warning
         ) -> ClubBox | None:
    """The ``--club URL --table N`` of ``run`` and ``emulate`` (or the config's
    ``[club]``, in ``referee.config``): a started :class:`ClubBox`, or None
    without a broker.  A bad URL or a missing table number is said (``say``)
    and the referee goes on alone."""
    config = referee.config
    broker, table, event = config.club_broker, config.club_table, config.club_event
    if broker is None:
        return None
    if table is None or table < 1:
        say("club: --table N (1 or more) is needed with --club; not joining")
        return None
    try:
        return ClubBox(referee, events, broker=broker, table=table, event=event).start()
    except (ValueError, OSError, ImportError) as error:
        say(f"club: {error}; not joining")
        return None
