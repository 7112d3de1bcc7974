"""Helpers for driving the referee app as the table would (no tests here).

The doubles are the libraries' own (gpiozero's MockFactory, luma's devices) and
the driver tests' fakes (:mod:`support.driver_fakes`: a recording I2C bus, an
SSD1306 RAM model, a bouncing MockPin), imported, not copied.
"""

from __future__ import annotations

import os
import queue
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from gpiozero.pins.mock import MockFactory

from drivers import PRESS, ButtonBank, ButtonEvent, EventKind
from euchre_core import Rules, replay, write_log
from firmware.app import Referee
from firmware.buttons import CONFIRM_GUARD_S
from firmware.config import CURSOR_PINS, DEFAULT_PINS, Config
from firmware.journal import Store
from support.clock import FakeClock
from support.driver_fakes import BouncyPin, FakeBus, Ssd1306Ram

__all__ = [
    "CURSOR_GAME",
    "CURSOR_JOURNAL",
    "SEATS_GAME",
    "SEATS_JOURNAL",
    "BouncyPin",
    "FakeBus",
    "FakeClock",
    "PinTable",
    "PinTapper",
    "Ssd1306Ram",
    "assert_replays",
    "choose",
    "journal_lines",
    "open_referee",
    "pin_tables",
    "press",
    "press_all",
    "ram_dir",
    "scene_journals",
    "wait_out_result",
]


def ram_dir() -> str | None:
    """/dev/shm when this user may write there (a journal's flushes cost
    nothing on a tmpfs: walks that write thousands of entries), else None
    (the system's temporary directory)."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


def open_referee(path: Path, rules: Rules, layout: str,
                 clock: FakeClock | None = None) -> Referee:
    """A referee on the journal in ``path``, drawing nothing (its renderer
    returns the view), on a fake clock."""
    config = Config(state_dir=path, rules=rules, layout=layout)  # type: ignore[arg-type]
    return Referee(config, Store(path), renderer=lambda view: view, clock=clock or FakeClock())


def scene_journals(prefix: str, scenes: list[tuple[str, Rules, str]],
                   press: Callable[[Referee, str], None],
                   ) -> Iterator[dict[str, tuple[Rules, Path]]]:
    """Each scene's journal (name, house rules, seats-layout presses from a
    fresh box), made once in a RAM directory by ``press`` for each button;
    yields the scenes' rules and directories by name (a fixture's body)."""
    with tempfile.TemporaryDirectory(dir=ram_dir(), prefix=prefix) as root:
        made = {}
        for name, rules, presses in scenes:
            path = Path(root) / re.sub(r"\W+", "-", name)
            path.mkdir()
            referee = open_referee(path, rules, "seats")
            for button in presses.split():
                press(referee, button)
            assert not (referee.message and referee.message_is_error), (name, referee.message)
            referee.store.close()
            made[name] = (rules, path)
        yield made


def press(name: str, kind: EventKind = PRESS) -> ButtonEvent:
    """A button event as the ButtonBank queues it (at time 0)."""
    return ButtonEvent(name, kind, 0.0)


class PinTapper:
    """Taps buttons by driving gpiozero mock pins; with a fake clock, the
    ButtonBank's bounce lockout is stepped over without sleeping."""

    def __init__(self, factory: Any, pins: dict[str, int], clock: FakeClock,
                 events: queue.Queue[Any], *, bounce_s: float,
                 encoder: tuple[int, int] | None = None) -> None:
        self.factory, self.pins, self.clock, self.events = factory, pins, clock, events
        self.step = bounce_s * 1.5
        self.encoder = encoder

    def tap(self, name: str) -> None:
        if self.encoder is not None and name in ("NEXT", "PREV"):
            a, b = (self.factory.pin(p) for p in self.encoder)
            first, second = (a, b) if name == "NEXT" else (b, a)
            first.drive_low()  # one detent: 0, 2, 3, 1, 0 clockwise (A is the high bit)
            second.drive_low()
            first.drive_high()
            second.drive_high()
            return
        pin = self.factory.pin(self.pins[name])
        pin.drive_low()
        self.clock.advance(self.step)
        pin.drive_high()
        self.clock.advance(self.step)

    def tap_and_handle(self, referee: Referee, name: str) -> None:
        """One tap, then the referee takes exactly the one event it made
        (on this thread: the referee has one owner)."""
        self.tap(name)
        event = self.events.get_nowait()  # mock pins call back synchronously
        assert (event.name, event.kind) == (name, "press")
        assert self.events.empty(), f"tap {name} queued more than one event"
        referee.handle(event)
        referee.refresh()


class PinTable:
    """A referee on gpiozero mock pins through the ButtonBank, on a fake clock,
    in ``layout``'s pin map; the tests' tables add how they tap."""

    def __init__(self, tmp_path: Path, factory: Any, layout: str = "seats",
                 rules: Rules | None = None) -> None:
        self.clock = FakeClock()
        self.tmp_path, self.factory, self.layout = tmp_path, factory, layout
        pins = dict(CURSOR_PINS if layout == "cursor" else DEFAULT_PINS)
        self.config = Config(state_dir=tmp_path, layout=layout,  # type: ignore[arg-type]
                             pins=pins, rules=Rules() if rules is None else rules)
        self.events: queue.Queue[Any] = queue.Queue()
        self.bank = ButtonBank(pins, self.events, bounce_time=self.config.bounce_s,
                               hold_time=self.config.hold_s, pin_factory=factory,
                               clock=self.clock)
        self.tapper = PinTapper(factory, pins, self.clock, self.events,
                                bounce_s=self.config.bounce_s)
        self.referee = self.boot()

    def boot(self) -> Referee:
        """A referee on the state directory's journal (as the box starts)."""
        return Referee(self.config, Store(self.tmp_path), renderer=lambda view: view,
                       clock=self.clock, is_pressed=self.bank.is_pressed)

    def close(self) -> None:
        self.bank.close()
        self.referee.store.close()


T = TypeVar("T", bound=PinTable)


def pin_tables(make: Callable[[Path, Any, str], T], tmp_path: Path) -> Iterator[Callable[..., T]]:
    """A fixture's body: ``table(layout)`` makes a table on one MockFactory
    (all on ``tmp_path``); every table is closed and the factory reset after."""
    factory = MockFactory()
    made: list[T] = []

    def table(layout: str = "seats") -> T:
        made.append(make(tmp_path, factory, layout))
        return made[-1]

    yield table
    for each in made:
        each.close()
    factory.reset()
    factory.close()


def journal_lines(referee: Referee) -> list[str]:
    return referee.store.journal_text(referee.game_id).splitlines()


def assert_replays(referee: Referee) -> None:
    """The journal (undos included) replays to exactly the referee's game."""
    result = replay(referee.store.journal_text(referee.game_id))
    assert result.error is None, str(result.error)
    assert write_log(result.game) == write_log(referee.game)
    assert result.game.score == referee.game.score
    assert result.game.winner is referee.game.winner


def choose(referee: Referee, label: str, tap: Any) -> None:
    """Cursor layout: move the cursor to the option ``label`` (NEXT/PREV) and OK,
    as a table does: the list read first (on a fake clock, time for it passes:
    an OK on a list an OK has just opened is otherwise the double tap that
    asks, firmware.buttons.CONFIRM_GUARD_S)."""
    if isinstance(referee.clock, FakeClock):
        referee.clock.advance(CONFIRM_GUARD_S)
    labels = [option.label for option in referee.step().options]
    assert label in labels, f"{label!r} not offered; offered: {labels}"
    view = referee.view()
    if view.kind in ("table", "menu"):
        assert [choice.label for choice in view.choices] == labels  # what the screen lists
    target = labels.index(label)
    while (cursor := referee.view().cursor) != target:
        tap("NEXT" if cursor < target else "PREV")
    tap("OK")


def wait_out_result(referee: Referee, clock: FakeClock) -> None:
    """The table waits until a hand's result screen has gone by itself (so the
    next press acts, instead of only dismissing it)."""
    if referee.result is not None and clock() < referee.result_until:
        clock.t = referee.result_until


def press_all(referee: Referee, names: list[str], clock: FakeClock) -> None:
    """Press each button in turn as a table does: waiting out each hand's result."""
    for name in names:
        wait_out_result(referee, clock)
        referee.press(name)


def presses(text: str) -> list[str]:
    return text.split()


# A whole game in the seats layout, dealer W, to NS 10-3: upcard, passes, order
# alone, a sitting-out seat tapped as trick winner (refused), make, four passes
# and a round-2 call, a claim via OK (its count on the menu's first page: S shows it, S
# picks it), a renege via ALONE, a euchre, a march.
SEATS_GAME: list[str] = presses("""
    W HEARTS N OK E OK S HEARTS ALONE OK S N S S S S
    E CLUBS OK E W N E W
    SPADES S OK W OK N OK E OK S DIAMONDS OK S OK S S
    CLUBS W CLUBS OK N ALONE E
    N HEARTS OK E E E N W
    DIAMONDS E OK S DIAMONDS OK N N N N N
    S SPADES ALONE OK S W S S E
""")

SEATS_JOURNAL: list[str] = [
    "euchre-log 1",
    "players N=Ragnar E=Sigríður S=South W=Anna",
    "game dealer=W",
    "upcard H", "pass N", "pass E", "order S alone", *["trick S"] * 5,
    "make E C", "trick E", "trick W", "trick N", "trick E", "trick W",
    "upcard S", "pass S", "pass W", "pass N", "pass E", "call S D", "trick S", "tricks 3",
    "upcard C", "order W", "trick N", "renege E",
    "make N H", "trick E", "trick E", "trick E", "trick N", "trick W",
    "upcard D", "pass E", "order S", *["trick N"] * 5,
    "make S S alone", "trick S", "trick W", "trick S", "trick S", "trick E",
]

# A whole game in the cursor layout, dealer W, to NS 10-5, as the labels chosen
# (a suit is the call: "X: ♠" with partner, "X: ♠ alone").
CURSOR_GAME: list[str] = [
    "Anna deals",
    "Upcard ♥", "Ragnar", "Ragnar passes", "Sigríður", "Sigríður: ♥ alone", *["Sigríður won"] * 5,
    "South", "South: ♠", "South won",
    "Claim: makers took…", "Makers took 5",
    "Upcard ♣", "South", "South passes", "Anna", "Anna passes", "Ragnar", "Ragnar: ♣",
    "Anna won", "Renege…", "Sigríður reneged",
    "Anna", "Anna: ♦ alone", "Anna won", "Anna won", "Anna won",
    "Ragnar won", "Anna won",
    "Ragnar", "Ragnar: ♥ alone", *["Ragnar won"] * 5,
    "Sigríður", "Sigríður: ♠", "Ragnar won", "South won",
    "Ragnar won", "Claim: makers took…", "Makers took 0",
]

CURSOR_JOURNAL: list[str] = [
    "euchre-log 1",
    "players N=Ragnar E=Sigríður S=South W=Anna",
    "game dealer=W",
    "upcard H", "pass N", "order E alone", *["trick E"] * 5,
    "make S S", "trick S", "tricks 5",
    "upcard C", "pass S", "pass W", "order N", "trick W", "renege E",
    "make W D alone", "trick W", "trick W", "trick W", "trick N", "trick W",
    "make N H alone", *["trick N"] * 5,
    "make E S", "trick N", "trick S", "trick N", "tricks 0",
]

