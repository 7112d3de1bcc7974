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

What the box keeps about the night (its id, which game is which round, the
watermarks) is ``club.json``, written atomically with a CRC, and its id and
rounds also in the journal (a setting, :data:`RECORD_KEY`, CRC-checked with
the journal).  A ``club.json`` that does not read back exactly as written is
kept aside byte for byte (``club.json.damaged-STAMP``, with a ``.reason``),
said in one line (log, ``status``, a notice on the screen) and rebuilt: the
id and rounds from the journal, the watermarks from the director's retained
ack (or everything sent again: the director drops duplicates), and a round
whose game the journal holds but no record names yet (a power cut between
the two) taken up from the director's retained assignment, whose players
and rules are the game's.  So the box never forgets its round or the hand
in play, and never starts a stray game the director would refuse.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from euchre_core import SEATS, Game, Rules, Seat, Team
from euchre_core.events import Entry
from euchre_core.log import HEADER, replay

from ..app import Inbox, Referee
from ..defaults import DEFAULT_EVENT
from ..journal import JournalError, Store
from ..journal.files import fsync_dir
from ..round_end import RoundEnd
from . import control
from .auth import BrokerLogin
from .mqtt import close_client, open_client
from .protocol import (
    QOS,
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
    check_box_id,
    check_event_id,
    clock_topic,
    entries_topic,
    handover_topic,
    parse_broker_url,
    status_topic,
    takeover_topic,
    topic_kind,
)
from .standings import tie_after

log = logging.getLogger("euchre.club.box")

STATE_NAME: Final = "club.json"
RESEND_S: Final = 5.0
"""Seconds without the director's ack moving before unacknowledged lines are sent
again; doubled after each resend that brings no ack (up to :data:`MAX_RESEND_S`),
so a slow director is not flooded with copies."""
MAX_RESEND_S: Final = 60.0


JOIN_RETRY_S: Final = (1.0, 60.0)
"""The first and the longest wait (s) before the MQTT client is made again
when it could not be made (no network yet: :meth:`ClubBox._open`); the
wait doubles at each try."""
OFFLINE_FLAG: Final = "Club: no network"
"""The screen's corner flag while the box cannot reach any network (drawn
as its first letter, a tiny C; the serial port's is a !)."""
RECORD_KEY: Final = "club {event} {table}"
"""The journal setting that keeps the box's id and its rounds for one event
and table: a second, CRC-checked copy beside the games it names."""


class ClubStateError(ValueError):
    """``club.json`` is damaged; says how in one line."""


def _crc(data: dict[str, Any]) -> str:
    body = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return f"{zlib.crc32(body.encode('ascii')):08x}"


def _id_map(data: Any, what: str) -> dict[int, int]:
    """``{"<game>": n}`` as ints, strictly (the game in digits, n a whole number)."""
    if not isinstance(data, dict):
        raise ClubStateError(f"{what!r} is not an object")
    out: dict[int, int] = {}
    for key, value in data.items():
        if not (isinstance(key, str) and key.isascii() and key.isdigit()) or not isinstance(
                value, int) or isinstance(value, bool) or value < -1:
            raise ClubStateError(f"{what!r}: {key!r} -> {value!r} is not game -> number")
        out[int(key)] = value
    return out


_FIELDS: Final = frozenset({"box", "event", "table", "rounds", "acked"})


@dataclass
class BoxState:
    """What the box keeps about the night (``club.json`` in the state directory).

    The file is one JSON object with a ``crc`` (CRC-32 of the other fields,
    canonical JSON): a file that does not read back exactly so (a flipped bit,
    a torn write, anything) is damaged, not "for another night"."""

    box: str
    event: str
    table: int
    rounds: dict[int, int] = field(default_factory=dict)
    """Game id -> the round it is."""
    acked: dict[int, int] = field(default_factory=dict)
    """Game id -> the last seq the director has kept (every line up to it)."""

    def fields(self) -> dict[str, Any]:
        return {"box": self.box, "event": self.event, "table": self.table,
                "rounds": {str(g): r for g, r in sorted(self.rounds.items())},
                "acked": {str(g): s for g, s in sorted(self.acked.items())}}

    def encode(self) -> bytes:
        data = self.fields()
        return (json.dumps({**data, "crc": _crc(data)}, separators=(",", ":")) + "\n").encode()

    @classmethod
    def decode(cls, raw: bytes) -> BoxState:
        """The state in ``raw``; ClubStateError (any fault at all) if it is damaged.

        A file written before ``club.json`` carried a CRC (exactly the five
        fields, no ``crc``) is taken as it is."""
        try:
            data = json.loads(raw.decode("utf-8"))
            if not isinstance(data, dict):
                raise ClubStateError("not a JSON object")
            keys = set(data)
            if keys != _FIELDS | {"crc"} and keys != _FIELDS:
                raise ClubStateError(f"fields {sorted(keys)}")
            crc = data.pop("crc", None)
            table, event = data["table"], data["event"]
            if not isinstance(table, int) or isinstance(table, bool) or table < 1:
                raise ClubStateError(f"table {table!r}")
            if not isinstance(event, str) or not isinstance(data["box"], str):
                raise ClubStateError("event or box is not text")
            state = cls(check_box_id(data["box"]), check_event_id(event), table,
                        _id_map(data["rounds"], "rounds"), _id_map(data["acked"], "acked"))
            if crc is not None and crc != _crc(data):
                raise ClubStateError(f"CRC {crc!r}, the fields give {_crc(data)}")
            if state.fields() != data or (crc is not None and raw != state.encode()):
                raise ClubStateError("not as written")
        except ClubStateError:
            raise
        except Exception as error:  # noqa: BLE001 - any fault at all means damaged
            raise ClubStateError(f"{type(error).__name__}: {error}") from None
        return state

    def save(self, path: Path) -> None:
        """Write atomically and durably: a temporary beside it, fsynced,
        renamed over it, the directory fsynced (a pulled plug leaves the old
        file or the new one)."""
        temporary = path.with_name(path.name + ".tmp")
        with open(temporary, "wb") as handle:
            handle.write(self.encode())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        fsync_dir(path.parent)


def _record_key(event: str, table: int) -> str:
    return RECORD_KEY.format(event=event, table=table)


def _encode_record(state: BoxState) -> str:
    return json.dumps({"box": state.box, "rounds": {str(g): r for g, r in
                                                    sorted(state.rounds.items())}},
                      sort_keys=True, separators=(",", ":"))


def read_record(store: Store, event: str, table: int) -> tuple[str, dict[int, int]] | None:
    """The box's id and rounds as its journal keeps them for ``event`` and
    ``table`` (None: none kept, or not readable: said in the log)."""
    try:
        value = store.settings().get(_record_key(event, table))
        if value is None:
            return None
        data = json.loads(value)
        if not isinstance(data, dict) or set(data) != {"box", "rounds"} or not isinstance(
                data["box"], str):
            raise ClubStateError(f"fields {data!r}")
        return check_box_id(data["box"]), _id_map(data["rounds"], "rounds")
    except Exception as error:  # noqa: BLE001 - a record that cannot be read is not used
        log.warning("the journal's club record for table %d is not readable (%s)", table, error)
        return None


def set_aside(path: Path, reason: str) -> Path:
    """Rename a damaged ``path`` to ``NAME.damaged-STAMP`` (kept byte for byte,
    never deleted) with a ``.reason`` file beside it, as the journal keeps its
    damaged files (``firmware/journal/aside.py``); returns the new path."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    index = 1
    while target.exists() or target.with_name(target.name + ".reason").exists():
        target = path.with_name(f"{path.name}.damaged-{stamp}-{index}")
        index += 1
    os.replace(path, target)
    with open(target.with_name(target.name + ".reason"), "w", encoding="utf-8") as handle:
        handle.write(reason + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    fsync_dir(path.parent)
    return target


@dataclass
class Loaded:
    """The state :func:`load_state` found, and what it says about it."""

    state: BoxState
    damage: str | None = None
    """One line for the log and ``status`` when ``club.json`` was damaged."""
    kept_as: Path | None = None


def load_state(path: Path, store: Store, event: str, table: int) -> Loaded:
    """The box's state for ``event`` and ``table``: ``club.json`` when it reads
    back whole, else rebuilt from the journal's record (its id and rounds;
    the director's retained ack brings the watermarks back, and an assignment
    whose game the journal already holds is taken up: :meth:`ClubBox._on_assignment`).

    A damaged ``club.json`` (any fault reading it) is kept aside byte for
    byte and said.  A kept state for another event or table is a new box to
    the director (a new id), unless the journal keeps one for this table."""
    record = read_record(store, event, table)
    found: BoxState | None = None
    damage: str | None = None
    kept_as: Path | None = None
    try:
        found = BoxState.decode(path.read_bytes())
    except FileNotFoundError:
        pass
    except (ClubStateError, OSError) as error:
        reason = str(error) if isinstance(error, ClubStateError) else f"not readable: {error}"
        try:
            kept_as = set_aside(path, reason)
            where = f"kept aside as {kept_as.name}"
        except OSError as aside_error:
            where = f"not kept aside ({aside_error})"
        damage = f"{path.name} damaged ({reason}): {where}; rebuilt from the journal"
    if found is not None and (found.event, found.table) != (event, table):
        found = None  # a box moved to another table or night
    if record is None:
        state = found or BoxState(secrets.token_hex(6), event, table)
        source = "no club record in the journal: a new box id" if found is None else ""
    else:
        box, rounds = record
        if found is not None and found.box != box:
            log.warning("%s names box %s, the journal box %s: the journal's is kept",
                        path.name, found.box, box)
            found = None
        state = found or BoxState(box, event, table)
        state.rounds = {**rounds, **state.rounds}
        source = f"box {box}, rounds {sorted(rounds.values())}"
    if damage is not None:
        damage = f"{damage} ({source}) and the director's assignments"
    return Loaded(state, damage, kept_as)


class ClubBox:
    """A referee's membership of a club night (see the module's docstring).

    ``ClubBox(referee, events, broker="mqtt://host", table=3).start()``;
    ``close()`` leaves (the status goes offline)."""

    def __init__(self, referee: Referee, events: Inbox, *, broker: str, table: int,
                 event: str = DEFAULT_EVENT, resend_s: float = RESEND_S,
                 login: BrokerLogin | None = None, take_over: bool = False) -> None:
        """``take_over``: a spare box, asking the director for the table's
        round in play (:data:`.control.SPARE_RULE`)."""
        self.referee = referee
        self.taking_over = take_over
        """A spare box that has not had the table's journal yet (no round starts meanwhile)."""
        self.replaced: str | None = None
        """The spare box that took this box's table over (this box is refused)."""
        self.assignments: dict[int, Assignment] = {}
        self.clock_ends: dict[int, float] = {}
        """Per timed round, when its time is called (monotonic s, from the director's clock)."""
        self._announced: dict[int, int] = {}
        self.login = login
        self.events = events
        self.address = parse_broker_url(broker)
        self.event = check_event_id(event)
        self.table = table
        self.resend_s = resend_s
        self.path = Path(referee.store.state_dir) / STATE_NAME
        loaded = load_state(self.path, referee.store, self.event, table)
        self.state = loaded.state
        self.damage = loaded.damage
        """One line when ``club.json`` was found damaged (kept aside, rebuilt)."""
        if loaded.damage is not None:
            log.warning("%s", loaded.damage)
            referee.notes.append(f"club: {loaded.damage}")
            if referee.notice is None:  # a journal's own notice comes first
                referee.notice = ("Club state damaged", (
                    f"Kept aside as {loaded.kept_as.name}." if loaded.kept_as else
                    "It could not be kept aside.", "Rebuilt from the journal",
                    "and the director."))
        self.pending: Assignment | None = None
        """An assignment whose round could not be started (the journal refused
        a write): tried again each second."""
        self.formats: dict[int, RoundFormat] = {}
        self.tied_rules: dict[int, str] = {}
        """Per round, what a tie after its N hands comes to (``Assignment.tied_round``)."""
        self._tie_said: dict[int, int] = {}
        """Per game, the hands played when its tie (or the extra hand's end) was said."""
        self.sent: dict[int, int] = dict(self.state.acked)
        """Game id -> the last seq handed to the broker since the last (re)connect."""
        self.connected = False
        self.last_ack = time.monotonic()
        self.wait_s = resend_s
        """The wait before the next resend (backs off while no ack comes)."""
        self.resends = 0
        self.refused_acks = 0
        """Acks for lines the journal does not hold (forged), refused."""
        self.resent_at = 0.0
        """When everything unacknowledged was last sent again (monotonic s)."""
        self._client: Any = None
        self.join_tries = 0
        """Tries to make the MQTT client that failed since the last that worked."""
        self._join_at = 0.0
        """When the next try is due (monotonic s) while there is no client."""
        self.round_end: RoundEnd | None = None
        """Asks the other side to accept a round's result (:mod:`firmware.round_end`)."""
        self._closing = threading.Event()
        self._timer = threading.Thread(target=self._tick, name="club-resend", daemon=True)

    @property
    def box_id(self) -> str:
        return self.state.box

    def start(self) -> ClubBox:
        self.state.save(self.path)
        self._keep_record()
        self.referee.listeners.append(self._on_journal)
        self.referee.guards.append(self._guard)
        self.round_end = RoundEnd(self.referee, self._finished_round).attach()
        self._open()
        self._timer.start()
        log.info("table %d joins %s (event %s) as box %s", self.table, self.address,
                 self.event, self.box_id)
        return self

    def _open(self) -> bool:
        """Make the MQTT client; paho then connects and reconnects by itself.
        It cannot be made while the box has no network at all (paho's wake-up
        pair is a TCP socket on 127.0.0.1: at boot before the Wi-Fi and the
        loopback are up, or in a sandbox without one): then the table scores
        on, the screen's corner says :data:`OFFLINE_FLAG`, the log says when
        it is tried again, and :meth:`_tick` tries again, waiting twice as
        long each time (:data:`JOIN_RETRY_S`).  True once it is made."""
        will = (status_topic(self.event, self.table),
                Status(self.table, self.box_id, online=False).encode())
        try:
            self._client = open_client(
                self.address, f"box-{self.box_id}", on_message=self._on_message,
                subscriptions=[assignment_topic(self.event, "+"),
                               ack_topic(self.event, self.box_id),
                               handover_topic(self.event, self.table),
                               clock_topic(self.event, "+")],
                on_connect=lambda: self.events.put(self._on_connect),
                on_disconnect=lambda: self.events.put(self._on_disconnect), will=will,
                login=self.login)
        except OSError as error:
            first, longest = JOIN_RETRY_S
            wait = min(first * 2 ** self.join_tries, longest)
            self.join_tries += 1
            self._join_at = time.monotonic() + wait
            log.warning("club: no network to reach %s yet (%s); trying again in %.0f s",
                        self.address, error.strerror or error, wait)
            self._flag(True)
            return False
        if self.join_tries:
            log.warning("club: the network is there now: joining %s", self.address)
        self.join_tries = 0
        self._flag(False)
        return True

    def _flag(self, offline: bool) -> None:
        """The screen's corner mark: set while there is no network."""
        flags = tuple(flag for flag in self.referee.flags if flag != OFFLINE_FLAG)
        self.referee.flags = (*flags, OFFLINE_FLAG) if offline else flags

    def _retry_open(self, referee: Referee) -> None:
        """On the main loop: make the client, when a try is due (:meth:`_open`)."""
        if self._client is None and not self._closing.is_set() \
                and time.monotonic() >= self._join_at:
            self._open()

    def close(self) -> None:
        self._closing.set()
        try:
            self.referee.listeners.remove(self._on_journal)
        except ValueError:
            pass
        if self.round_end is not None:
            self.round_end.detach()
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
                self.events.put(BoxJob(f"club: round {assignment.round}'s assignment not taken",
                                       lambda referee: self._on_assignment(assignment)))
            elif kind == "handover":
                handover = Handover.decode(payload)
                self.events.put(BoxJob(
                    f"club: the director's handover of table {handover.table} not taken",
                    lambda referee: self._on_handover(handover)))
            elif kind == "clock":
                clock = Clock.decode(payload)
                self.events.put(BoxJob(f"club: round {clock.round}'s clock not taken",
                                       lambda referee: self._on_clock(clock)))
            elif kind == "ack":
                ack = Ack.decode(payload)
                if ack.box == self.box_id:
                    self.events.put(BoxJob("club: the director's ack not taken",
                                           lambda referee: self._on_ack(ack)))
        except MessageError as error:
            log.warning("%s: refused: %s", topic, error)

    def _tick(self) -> None:
        while not self._closing.wait(min(1.0, self.resend_s)):
            self.events.put(self._resend_if_stale)
            self.events.put(self._clock_tick)
            self.events.put(self._check_round_end)  # a timed round over by the clock
            if self._client is None:
                self.events.put(self._retry_open)  # no network yet: tried when due
            if self.pending is not None:
                self.events.put(self._retry_pending)

    # --- the main loop ------------------------------------------------------------

    def _on_connect(self, referee: Referee) -> None:
        self.connected = True
        self._ask_takeover()
        self._publish_status()
        self._send_again()  # what the broker had in flight may be gone

    def _on_disconnect(self, referee: Referee) -> None:
        self.connected = False

    def _on_ack(self, ack: Ack) -> None:
        changed = False
        for game, seq in ack.acked.items():
            if game in self.state.rounds and seq > self.state.acked.get(game, -1):
                held = len(self.referee.store.lines(game)) - 1
                if seq > held:  # not the director's: it cannot keep what was never sent
                    log.warning("an ack of game %d up to line %d refused: the journal "
                                "holds %d lines", game, seq, held + 1)
                    self.refused_acks += 1
                    continue
                self.state.acked[game] = seq
                changed = True
        if changed:
            self.last_ack = time.monotonic()
            self.wait_s = self.resend_s
            self._save()

    def _behind(self) -> bool:
        """Lines handed to the broker that the director has not acknowledged."""
        return any(self.sent.get(g, -1) > self.state.acked.get(g, -1) for g in self.sent)

    def _retry_pending(self, referee: Referee) -> None:
        assignment, self.pending = self.pending, None
        if assignment is not None:
            self._on_assignment(assignment)

    def _save(self) -> None:
        """``club.json`` now; a card that refuses it is said in the log and
        the table plays on (the journal keeps the rounds, the director the
        watermarks)."""
        try:
            self.state.save(self.path)
        except OSError as error:
            log.warning("%s not written: %s", self.path, error)

    def _keep_record(self) -> None:
        """The box's id and rounds in the journal too (a setting), so that a
        damaged ``club.json`` is rebuilt from it; a journal that refuses the
        write leaves ``club.json`` the only copy (said in the log)."""
        store = self.referee.store
        key, value = _record_key(self.event, self.table), _encode_record(self.state)
        try:
            if store.settings().get(key) != value:
                store.set_setting(key, value)
        except JournalError as error:
            log.warning("the club record was not kept in the journal: %s", error)

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
            game.hands_played >= round_format.hands and game.results
        ):
            assert round_number is not None
            if self._extra_hand_notice(round_number, round_format.hands, game):
                return
            if game.hands_played != round_format.hands or self.round_end is not None:
                return  # the round's result is shown as the other side is asked to accept it
            score = {team: sum(r.points for r in game.results if r.team is team)
                     for team in Team}
            self.referee.notice = (f"Round {round_number} over",
                                   (f"NS {score[Team.NS]}  EW {score[Team.EW]}",
                                    "Wait for the director's", "next round."))

    def _finished_round(self, game_id: int, game: Game) -> tuple[str, dict[Team, int]] | None:
        """``(title, score)`` when ``game_id`` is a round game of this box that
        is over (its counted hands' score), else None (:mod:`firmware.round_end`)."""
        number = self.state.rounds.get(game_id)
        round_format = self.formats.get(number or 0)
        if number is None or round_format is None or self.replaced is not None or (
                not self._round_over(number, game)):
            return None
        counted = game.results[: round_format.hands] if round_format.hands else game.results
        return f"Round {number}", {team: sum(r.points for r in counted if r.team is team)
                                        for team in Team}

    def _check_round_end(self, referee: Referee) -> None:
        if self.round_end is not None:
            self.round_end.check()

    def awaits_extra_hand(self, round_number: int, game: Game) -> bool:
        """Is round ``round_number``'s game level after its N hands, with the
        extra-hand rule, and that hand not played yet?"""
        round_format = self.formats.get(round_number)
        if round_format is None or round_format.hands is None or (
                self.tied_rules.get(round_number) != "extra-hand"):
            return False
        tie = tie_after(game.results, round_format.hands)
        return tie is not None and tie[1] is None

    def _extra_hand_notice(self, round_number: int, hands: int, game: Game) -> bool:
        """A tie after the round's ``hands`` with the extra-hand rule: the
        screen asks for one more hand, then says who took it (once per hand
        ended).  False when the round is not such a tie."""
        tie = tie_after(game.results, hands)
        if tie is None or self.tied_rules.get(round_number) != "extra-hand":
            return False
        game_id = self.referee.game_id
        if self._tie_said.get(game_id) != game.hands_played:
            self._tie_said[game_id] = game.hands_played
            points, decider = tie
            self.referee.notice = (
                (f"Round {round_number}: tied", (
                    "Tied round: one more hand decides it.",
                    f"NS {points}  EW {points}: the extra hand scores nothing."))
                if decider is None else
                (f"Round {round_number} over", (
                    f"NS {points}  EW {points}: {decider} took the extra hand.",
                    "Wait for the director's", "next round.")))
        return True

    def pump(self, only: int | None = None) -> None:
        """Publish every line of the round games (or of game ``only``) not yet
        handed to the broker."""
        if not self.connected or self._client is None:
            return
        store = self.referee.store
        for game_id, round_number in sorted(self.state.rounds.items()):
            if only is not None and game_id != only or self.replaced is not None:
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
        self.tied_rules[assignment.round] = assignment.tied_round
        self.assignments[assignment.round] = assignment
        self.events.put(self._check_round_end)  # a round over before a restart: ask again
        if self.taking_over and assignment.round == max(self.assignments):
            self._ask_takeover()  # the director sends them as it (re)connects: ask again
        if self.taking_over or self.replaced is not None:
            return  # a spare waits for the table's journal; a replaced box is out
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
        rules = assignment.format.rules(assignment.rules)
        if self._is_round_game(referee, seats, rules):
            # Started before a restart that lost club.json's word of it: the
            # game in progress is the round's, and stays.
            self.state.rounds[referee.game_id] = assignment.round
            self._save()
            self._keep_record()
            log.info("round %d: game %d, started before the restart, taken up",
                     assignment.round, referee.game_id)
            self._publish_status()
            self.pump()
            return
        was_round = referee.game_id in self.state.rounds
        leaving = [referee.game.names[seat] for seat in SEATS] if was_round else []
        ended = self._ended_early(referee)
        try:
            referee.set_next_rules(rules)
            referee.set_next_names(seats)
            game_id = referee.start_new_game()
        except JournalError as error:  # said on the screen by the referee; tried again
            log.warning("round %d not started: %s", assignment.round, error)
            self.pending = assignment
            return
        self.state.rounds[game_id] = assignment.round
        self._save()
        self._keep_record()
        referee.notice = (f"Round {assignment.round}: table {self.table}",
                          where_next(assignment, leaving) if leaving else
                          tuple(f"{seat} {seats[seat]}" for seat in SEATS)
                          + (assignment.format.describe(),))
        if ended is not None:  # the director forced this round's start
            referee.notice = (f"Round {ended[0]} ended early", (ended[1], *referee.notice[1]))
            log.warning("%s", ended[1])
        log.info("round %d started as game %d", assignment.round, game_id)
        self._publish_status()
        self.pump()

    # --- round control: a forced end, a spare box, the clock (control.py) -----------

    def _ended_early(self, referee: Referee) -> tuple[int, str] | None:
        """The round game in progress when the next round comes, if it is not
        over: its round and what :data:`.control.FORCED_RULE` made of it."""
        number = self.state.rounds.get(referee.game_id)
        round_format = self.formats.get(number or 0)
        game = referee.game
        if number is None or round_format is None or self._round_over(number, game):
            return None
        counted = game.results[: round_format.hands] if round_format.hands else game.results
        score = {team: sum(r.points for r in counted if r.team is team) for team in Team}
        return number, control.ended_words(number, self.table, score, len(counted),
                                           control.in_hand(game))

    def _round_over(self, number: int, game: Game) -> bool:
        round_format = self.formats.get(number)
        if round_format is None:
            return False
        if self.time_called(number) and not control.in_hand(game):
            return True
        if round_format.hands is not None:
            return (game.hands_played >= round_format.hands
                    and not self.awaits_extra_hand(number, game))
        return game.winner is not None

    def time_called(self, number: int) -> bool:
        """Has round ``number``'s time been called (by the director's clock,
        counted on here while the network is gone)?"""
        ends = self.clock_ends.get(number)
        return ends is not None and time.monotonic() >= ends

    def remaining(self, number: int) -> float | None:
        """Seconds left in round ``number`` (None: not timed, or no clock heard yet)."""
        ends = self.clock_ends.get(number)
        return None if ends is None else max(0.0, ends - time.monotonic())

    def _on_clock(self, clock: Clock) -> None:
        self.clock_ends[clock.round] = time.monotonic() + clock.remaining
        self._clock_tick(self.referee)

    def _clock_tick(self, referee: Referee) -> None:
        """Each second: the clock on the screen now and then, and the call of time."""
        number = self.state.rounds.get(referee.game_id)
        remaining = None if number is None else self.remaining(number)
        if number is None or remaining is None:
            return
        minute = int((remaining + 59) // 60)
        if remaining <= 0:  # said once at the call, once more when the round is over
            said = -1 if self._round_over(number, referee.game) else 0
            if self._announced.get(number) not in (said, -1):
                self._announced[number] = said
                game = referee.game
                score = {team: sum(r.points for r in game.results if r.team is team)
                         for team in Team}
                referee.notice = (f"Round {number}: time", (
                    f"Time was called: {control.TIME_RULE}.", "Time: finish this hand.")
                ) if said == 0 else (f"Round {number} over", (
                    f"NS {score[Team.NS]}  EW {score[Team.EW]}", "Time was called.",
                    "Wait for the director's next round."))
        elif self._announced.get(number) != minute and (minute <= 5 or minute % 5 == 0
                                                         or number not in self._announced):
            self._announced[number] = minute
            referee.say(f"Round {number}: {control.clock_words(remaining)}")

    def _guard(self, game: Game, entry: Entry) -> str | None:
        """Refuse, in words, what the club does not allow now: any entry on a
        table a spare took over, a new hand after time."""
        if self.replaced is not None:
            return f"this box was replaced by spare box {self.replaced}: see the director"
        number = self.state.rounds.get(self.referee.game_id)
        if number is not None and self.time_called(number) and control.starts_hand(game):
            return f"time was called in round {number}: no new hand starts"
        return None

    def _ask_takeover(self) -> None:
        if self.taking_over and self._client is not None:
            log.info("asking the director for table %d (a spare box)", self.table)
            self._client.publish(takeover_topic(self.event, self.table),
                                 Takeover(self.table, self.box_id).encode(), qos=QOS)

    def _on_handover(self, handover: Handover) -> None:
        """The director's word on who has this table: this spare box goes on
        from the journal it is sent; a box replaced is told and stops."""
        referee = self.referee
        if handover.box == self.box_id:
            if not self.taking_over:
                return  # seen again (retained): taken over already
            if handover.round not in self.state.rounds.values() and handover.lines:
                problem = handover_problem(handover.lines)
                if problem is not None:  # a director's fault: refused, the table plays on
                    raise MessageError(problem)
            self.taking_over = False
            if handover.round not in self.state.rounds.values() and handover.lines:
                try:
                    game_id = referee.load_game(list(handover.lines))
                except JournalError as error:
                    log.warning("the table's journal not taken: %s", error)
                    self.taking_over = True
                    return
                self.state.rounds[game_id] = handover.round
                self._save()
                self._keep_record()
                referee.notice = (f"Table {self.table} taken over", (
                    f"Round {handover.round} goes on from the director's journal "
                    f"({len(handover.lines)} lines): {referee.game.expected}.",))
                log.info("table %d taken over in round %d: game %d, %d lines", self.table,
                         handover.round, game_id, len(handover.lines))
                self._publish_status()
                self.pump()
            for number in sorted(self.assignments):  # a round not started while waiting
                self._on_assignment(self.assignments[number])
        elif handover.old == self.box_id or handover.round in self.state.rounds.values():
            if self.replaced != handover.box:
                self.replaced = handover.box
                referee.notice = (f"Table {self.table}: replaced", (
                    f"Spare box {handover.box} plays this table since round "
                    f"{handover.round}.", "This box is refused: take it to the director."))
                log.warning("replaced at table %d by spare box %s (round %d)", self.table,
                            handover.box, handover.round)

    def _is_round_game(self, referee: Referee, seats: dict[Seat, str], rules: Rules) -> bool:
        """Is the game in progress this round's, started before club.json
        knew it: newer than every round game, with the round's players in
        their seats and the round's rules?"""
        game_id = referee.game_id
        return (game_id not in self.state.rounds
                and game_id > max(self.state.rounds, default=0)
                and referee.game.rules == rules
                and all(referee.game.names.get(seat) == seats[seat] for seat in SEATS))


@dataclass(frozen=True)
class BoxJob:
    """A job for the main loop, with what it is in words: a job that fails
    is said as ``what: cause`` (:meth:`~firmware.app.Referee.fault`), and the
    table plays on."""

    what: str
    run: Callable[[Referee], object]

    def __call__(self, referee: Referee) -> object:
        return self.run(referee)


def handover_problem(lines: Sequence[str]) -> str | None:
    """Why a handover's ``lines`` cannot be the table's game (None: they
    can): each line UTF-8 text, and all of them a log the engine replays
    whole (what the director kept of the table's journal)."""
    for number, line in enumerate(lines, 1):
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            return f"line {number} of its journal is not UTF-8 text"
    checked = replay("\n".join([HEADER, *lines]) + "\n")
    if checked.error is not None:
        return (f"line {checked.error.line - 1} of its journal: {checked.error.reason}"
                if checked.error.line > 1 else f"its journal: {checked.error.reason}")
    return None


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
    login = (BrokerLogin(config.club_username, config.club_password or "", config.club_cafile)
             if config.club_username else None)
    try:
        return ClubBox(referee, events, broker=broker, table=table, event=event,
                       login=login, take_over=config.club_take_over).start()
    except (ValueError, OSError, ImportError) as error:
        say(f"club: {error}; not joining")
        return None
