"""A club box's ``club.json`` damaged for real, and what the box made of it
(``tests/club/test_club_state.py`` and ``bench/faults.py``; no tests here).

:class:`ClubFlips` plays a short night once against a real mosquitto: a
director (:class:`~firmware.club.director.Director`, in this process, on its
own SQLite) and one box (a real :class:`~firmware.app.Referee` on its own
journal, its main loop in a thread, joined by
:class:`~firmware.club.box.ClubBox`): round 1 (one hand) played out, round 2
started and its hand half played, every line acknowledged by the director.
Then each :meth:`ClubFlips.case` takes a fresh copy of the box's state
directory and of the director's, flips one bit of the copy's ``club.json``,
starts the director and the box again on the same broker, and judges:

- the box kept its identity, its rounds and the game in progress (the same
  game, the same lines, no new game: *forgot* otherwise);
- a new entry reaches the director and is kept there under the same box and
  game (*refused* otherwise: the director's problem list says why);
- a damaged ``club.json`` was said (a notice, or a note for ``status``) and
  kept aside byte for byte (``club.json.damaged-*``).
"""

from __future__ import annotations

import queue
import random
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from firmware.app import Referee
from firmware.club.box import STATE_NAME, ClubBox
from firmware.club.director import Director
from firmware.club.mqtt import close_client, open_client
from firmware.club.protocol import QOS, RoundFormat, ack_topic, parse_broker_url
from firmware.club.simulate import WINNER_LEVEL
from firmware.config import Config
from firmware.journal import Store

PLAYERS = ("Anna", "Bo", "Cy", "Dee")


class Stuck(Exception):
    """A wait that did not end: the verdict says what was waited for."""


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise Stuck(f"{what}: not within {timeout:g} s")
        time.sleep(0.01)


def replayed(director: Director, round_number: int, table: int, lines: list[str]) -> bool:
    """Whether the director holds exactly ``lines`` for the table, replayed.

    Read under the director's lock: it keeps a table's lines and then replays
    them (TableRound.lines, then .replayed, .done...), both under the lock, so
    lines seen without it may not be replayed yet."""
    with director.lock:
        table_round = director.tables.get((round_number, table))
        return (table_round is not None and table_round.lines == lines
                and table_round.replayed is not None)


class Box:
    """A referee on its main loop in a thread, joined to the club (as ``club box``)."""

    def __init__(self, state_dir: Path, broker: str, table: int, event: str) -> None:
        self.events: queue.Queue[Any] = queue.Queue()
        self.store = Store(state_dir)
        self.referee = Referee(Config(state_dir=state_dir), self.store,
                               renderer=lambda view: None)
        self.club = ClubBox(self.referee, self.events, broker=broker, table=table,
                            event=event, resend_s=1.0)
        self.error: BaseException | None = None
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Box:
        self.club.start()
        self.thread.start()
        return self

    def _run(self) -> None:
        try:
            self.referee.run(self.events, stop=self.stopping.is_set, poll=0.02)
        except BaseException as error:  # noqa: BLE001 - the verdict names it
            self.error = error

    def call(self, fn: Callable[[Referee], Any]) -> Any:
        """Run ``fn`` on the main loop and return what it returned."""
        done: queue.Queue[Any] = queue.Queue()
        self.events.put(lambda referee: done.put(fn(referee)))
        try:
            return done.get(timeout=15)
        except queue.Empty:
            raise Stuck(f"the main loop did not answer ({self.error!r})") from None

    def play(self, rng: random.Random, count: int) -> None:
        """``count`` random legal entries (the kind a club table makes)."""
        for _ in range(count):
            def one(referee: Referee) -> str | None:
                legal = [e for e in referee.game.legal_entries() if isinstance(e, WINNER_LEVEL)]
                return referee.enter(rng.choice(legal))

            reason = self.call(one)
            assert reason is None, reason

    def close(self) -> None:
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(10)
        try:
            self.club.close()
        finally:
            self.store.close()


class DirectorOn:
    """A director in this process on ``state_dir``, connected to the broker
    (it sends its assignments again as it connects, as ``club serve`` does)."""

    def __init__(self, state_dir: Path, broker: str, event: str) -> None:
        self.connected = threading.Event()
        made = threading.Event()
        holder: list[Any] = []
        self.director = Director(state_dir, event=event, publish=lambda t, p, r: holder[0].publish(
            t, p, qos=QOS, retain=r))

        def on_connect() -> None:  # (paho's thread: the client is made by then)
            made.wait(10)
            self.director.republish()
            self.connected.set()

        self.client = open_client(parse_broker_url(broker), f"director-{event}",
                                  on_message=self.director.receive,
                                  subscriptions=[f"euchre/{event}/table/#"],
                                  on_connect=on_connect)
        holder.append(self.client)
        made.set()

    def forget_ack(self, event: str, box: str) -> None:
        """Clear the retained ack of ``box`` (left by another case's director)."""
        info = self.client.publish(ack_topic(event, box), b"", qos=QOS, retain=True)
        info.wait_for_publish(10)

    def close(self) -> None:
        close_client(self.client)
        self.director.close()


@dataclass
class ClubVerdict:
    """What one damaged ``club.json`` came to (each flag a failure)."""

    bit: int
    crashed: str = ""
    forgot: str = ""
    """The box lost its id, a round, or the game in progress (a new game)."""
    refused: str = ""
    """A new entry did not reach the director's game of this table."""
    unsaid: str = ""
    """Damage not said, or the damaged file not kept byte for byte."""
    said: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.crashed or self.forgot or self.refused or self.unsaid)

    def describe(self) -> str:
        parts = [f"{name}: {text}" for name, text in (
            ("crashed", self.crashed), ("forgot", self.forgot), ("refused", self.refused),
            ("unsaid", self.unsaid)) if text]
        return f"bit {self.bit}: " + ("; ".join(parts) or "fine")


class ClubFlips:
    """The night played once (:meth:`prepare`), then one damaged ``club.json``
    per :meth:`case` (see the module's docstring)."""

    TABLE = 1

    def __init__(self, broker_url: str, workdir: Path, *, event: str = "flips",
                 seed: int = 1) -> None:
        self.broker = broker_url
        self.workdir = Path(workdir)
        self.event = event
        self.seed = seed
        self.box_id = ""
        self.rounds: dict[int, int] = {}
        self.games: list[int] = []
        self.current: tuple[int, list[str]] = (0, [])
        self.size = 0

    # --- the night, once -------------------------------------------------------

    def prepare(self) -> ClubFlips:
        rng = random.Random(self.seed)
        box_dir, director_dir = self.workdir / "box0", self.workdir / "director0"
        director = DirectorOn(director_dir, self.broker, self.event)
        box = None
        try:
            for name in PLAYERS:
                director.director.register(name)
            box = Box(box_dir, self.broker, self.TABLE, self.event).start()
            wait_for(lambda: box is not None and box.club.connected, "the box connects")
            for round_number, entries in ((1, None), (2, 4)):
                director.director.start_round(RoundFormat(hands=1))
                wait_for(lambda r=round_number: r in box.club.state.rounds.values(),
                         f"round {round_number} starts")
                if entries is None:  # the whole hand
                    while box.call(lambda r: r.game.hands_played) < 1:
                        box.play(rng, 1)
                else:
                    box.play(rng, entries)
                game = box.referee.game_id
                last = len(box.call(lambda r, g=game: r.store.lines(g))) - 1
                wait_for(lambda g=game, n=last: box.club.state.acked.get(g) == n,
                         f"round {round_number} acknowledged")
            self.box_id = box.club.box_id
            self.rounds = dict(box.club.state.rounds)
            self.games = [info.id for info in box.store.games()]
            game = box.referee.game_id
            self.current = (game, box.call(lambda r: r.store.lines(game)))
        finally:
            if box is not None:
                box.close()
            director.close()
        self.size = (box_dir / STATE_NAME).stat().st_size
        return self

    @property
    def bits(self) -> int:
        """Bits in the kept ``club.json``."""
        return 8 * self.size

    # --- one damaged club.json ---------------------------------------------------

    def case(self, bit: int | None, *, damage: Callable[[Path], None] | None = None
             ) -> ClubVerdict:
        """Flip ``bit`` of a fresh copy's ``club.json`` (or apply ``damage`` to
        its state directory), start the director and the box again, judge
        (a flipped bit must be said and kept aside)."""
        verdict = ClubVerdict(-1 if bit is None else bit)
        where = self.workdir / f"case-{verdict.bit}"
        if where.exists():
            shutil.rmtree(where)
        box_dir, director_dir = where / "box", where / "director"
        shutil.copytree(self.workdir / "box0", box_dir)
        shutil.copytree(self.workdir / "director0", director_dir)
        path = box_dir / STATE_NAME
        original = path.read_bytes()
        if bit is not None:
            data = bytearray(original)
            data[bit // 8] ^= 1 << (bit % 8)
            path.write_bytes(bytes(data))
        if damage is not None:
            damage(box_dir)
        damaged = path.read_bytes() if path.exists() else None
        director = DirectorOn(director_dir, self.broker, self.event)
        box: Box | None = None
        try:
            if not director.connected.wait(15):
                raise Stuck("the director connects")
            director.forget_ack(self.event, self.box_id)
            try:
                box = Box(box_dir, self.broker, self.TABLE, self.event).start()
            except Exception as error:  # noqa: BLE001 - the verdict names it
                verdict.crashed = f"the box did not start: {type(error).__name__}: {error}"
                return verdict
            self._judge(verdict, box, director.director, damaged, bit)
        except Stuck as error:
            if box is not None and box.error is not None:
                verdict.crashed = f"the main loop: {type(box.error).__name__}: {box.error}"
            else:
                verdict.refused = verdict.refused or str(error)
        finally:
            if box is not None:
                try:
                    box.close()
                except Exception as error:  # noqa: BLE001
                    verdict.crashed = verdict.crashed or f"close: {error!r}"
            director.close()
            shutil.rmtree(where, ignore_errors=True)
        return verdict

    def _judge(self, verdict: ClubVerdict, box: Box, director: Director,
               damaged: bytes | None, bit: int | None) -> None:
        wait_for(lambda: box.club.connected and set(self.rounds.values()) <= set(box.club.formats),
                 "the box connects and has the director's assignments")
        referee, club = box.referee, box.club
        state = box.call(lambda r: (club.box_id, dict(club.state.rounds), r.game_id,
                                    r.store.lines(r.game_id), [i.id for i in r.store.games()],
                                    r.notice, r.notices()))
        box_id, rounds, game_id, lines, games, notice, notes = state
        forgot = []
        if box_id != self.box_id:
            forgot.append(f"box {box_id}, was {self.box_id}")
        if rounds != self.rounds:
            forgot.append(f"rounds {rounds}, were {self.rounds}")
        if (game_id, lines) != self.current:
            forgot.append(f"game {game_id} ({len(lines)} lines), was game {self.current[0]} "
                          f"({len(self.current[1])} lines)")
        if games != self.games:
            forgot.append(f"games {games}, were {self.games}")
        verdict.forgot = "; ".join(forgot)
        verdict.notes = [*notes]
        verdict.said = notice is not None or bool(notes)
        if bit is not None:
            kept = [p for p in box_dir_of(referee).glob(STATE_NAME + ".damaged-*")
                    if not p.name.endswith(".reason")]
            if not verdict.said:
                verdict.unsaid = "the damage was not said (no notice, no note)"
            elif damaged is not None and not any(p.read_bytes() == damaged for p in kept):
                verdict.unsaid = "the damaged club.json was not kept byte for byte"
        # A new entry: kept by the director under this table's game.
        box.play(random.Random(verdict.bit), 1)
        expected = box.call(lambda r: r.store.lines(r.game_id))
        round_number = self.rounds.get(self.current[0], 0)

        def arrived() -> bool:
            table = director.tables.get((round_number, self.TABLE))
            return table is not None and (table.lines == expected or bool(director.problems))

        try:
            wait_for(arrived, "the new entry at the director", timeout=10)
        except Stuck as error:
            verdict.refused = str(error)
        table = director.tables.get((round_number, self.TABLE))
        if director.problems:
            verdict.refused = f"{len(director.problems)} problems at the director, the last: " + (
                director.problems[0])
        elif table is None or table.lines != expected or table.box != self.box_id:
            verdict.refused = verdict.refused or (
                f"the director holds {len(table.lines) if table else 0} lines of box "
                f"{table.box if table else None}, the box {len(expected)}")


def box_dir_of(referee: Referee) -> Path:
    return Path(referee.store.state_dir)
