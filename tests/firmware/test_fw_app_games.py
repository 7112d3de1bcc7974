"""Whole games through gpiozero's mock pins, in both layouts, and one press per
bouncy tap at the app level."""

from __future__ import annotations

import queue
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory
from support.app_kit import (
    CURSOR_GAME,
    CURSOR_JOURNAL,
    SEATS_GAME,
    SEATS_JOURNAL,
    BouncyPin,
    FakeClock,
    PinTapper,
    Ssd1306Ram,
    assert_replays,
    choose,
    journal_lines,
    wait_out_result,
)
from support.driver_fakes import FakeSpi, GpiozeroGpio, spi_modules

import drivers
from euchre_core import SEATS, Team
from firmware.app import Referee
from firmware.config import CURSOR_PINS, DEFAULT_PINS, Config
from firmware.journal import Store
from firmware.pi.run import build_inputs, open_display
from firmware.screens import render


@pytest.fixture
def factory() -> Any:
    mock = MockFactory()
    yield mock
    mock.reset()
    mock.close()


def test_seats_game_to_ten_through_mock_pins_and_the_main_loop(
    tmp_path: Path, factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The whole stack as `euchre-referee run` wires it: build_inputs's
    # ButtonBank on mock pins -> queue -> Referee.run in its own thread ->
    # screens.render -> RetryingDisplay -> luma ssd1309 -> luma's spi -> a
    # fake spidev, DC and RST on the same mock pins (the recommended build).
    gpio = GpiozeroGpio(factory)
    bus = FakeSpi(dc=lambda: gpio.level(24))
    for name, module in spi_modules(gpio, bus).items():
        monkeypatch.setitem(sys.modules, name, module)
    # result_s=0: the table waits out each hand's result screen (else the
    # press after a hand's end only dismisses it; test_fw_app_table.py).
    config = Config(state_dir=tmp_path, bounce_s=0.002, result_s=0.0)
    events: queue.Queue[Any] = queue.Queue()
    display = open_display(config)
    buttons, indicators = build_inputs(config, events, pin_factory=factory)
    assert indicators is None and buttons.names == tuple(DEFAULT_PINS)
    referee = Referee(config, Store(tmp_path), display=display)
    stop = threading.Event()
    loop = threading.Thread(target=referee.run, args=(events,),
                            kwargs={"stop": stop.is_set, "poll": 0.05})
    loop.start()
    try:
        for name in SEATS_GAME:
            pin = factory.pin(config.pins[name])
            pin.drive_low()
            time.sleep(0.003)  # > bounce_s: the release is a new edge
            pin.drive_high()
            time.sleep(0.003)
        done = threading.Event()
        events.put(lambda ref: done.set())  # queued after every tap
        assert done.wait(10)
    finally:
        stop.set()
        events.put(lambda ref: None)
        loop.join(5)
        buttons.close()
    assert not loop.is_alive()
    assert journal_lines(referee) == SEATS_JOURNAL
    game = referee.game
    assert (game.score[Team.NS], game.score[Team.EW], game.winner) == (10, 3, Team.NS)
    view = referee.view()
    assert (view.kind, view.title) == ("winner", "NS win 10-3")
    assert view.lines[0] == "Ragnar & South"
    assert_replays(referee)
    ram = Ssd1306Ram()
    ram.replay(bus)
    assert ram.on
    assert ram.image().tobytes() == render(view).tobytes()  # the panel shows the win
    assert referee.display_errors == 0


@pytest.mark.parametrize("encoder", [False, True], ids=["prev-next-buttons", "rotary-encoder"])
def test_cursor_game_to_ten_through_mock_pins(tmp_path: Path, factory: Any,
                                              encoder: bool) -> None:
    pins = dict(CURSOR_PINS)
    enc = None
    if encoder:
        enc = (pins.pop("PREV"), pins.pop("NEXT"))
    config = Config(state_dir=tmp_path, layout="cursor", pins=pins, encoder=enc)
    clock = FakeClock()
    events: queue.Queue[Any] = queue.Queue()
    bank = drivers.ButtonBank(pins, events, bounce_time=config.bounce_s, encoder=enc,
                              pin_factory=factory, clock=clock)
    tapper = PinTapper(factory, pins, clock, events, bounce_s=config.bounce_s, encoder=enc)
    referee = Referee(config, Store(tmp_path), renderer=lambda view: view, clock=clock)
    taps = 0

    def tap(name: str) -> None:
        nonlocal taps
        taps += 1
        tapper.tap_and_handle(referee, name)

    try:
        for label in CURSOR_GAME:
            wait_out_result(referee, clock)
            choose(referee, label, tap)
            assert_replays(referee)
        assert taps > len(CURSOR_GAME) + 30  # the cursor really travelled
        tap("UNDO")  # after the win: undo is still taken ...
        assert journal_lines(referee)[-1] == "undo"
        assert referee.game.winner is None and referee.view().message == (
            "Undone: the claim (makers took 0) — hand 6 reopened, NS −2, game on again")
        choose(referee, "Claim: makers took…", tap)  # ... and the claim re-entered
        choose(referee, "Makers took 0", tap)
    finally:
        bank.close()
    assert journal_lines(referee) == [*CURSOR_JOURNAL, "undo", "tricks 0"]
    game = referee.game
    assert (game.score[Team.NS], game.score[Team.EW], game.winner) == (10, 5, Team.NS)
    assert referee.view().title == "NS win 10-5"
    assert_replays(referee)


def test_random_first_dealer_is_the_rng_choice(tmp_path: Path) -> None:
    referee = Referee(Config(state_dir=tmp_path), Store(tmp_path),
                      renderer=lambda view: view, rng=random.Random(7))
    referee.press("OK")
    expected = random.Random(7).choice(SEATS)
    assert journal_lines(referee)[-1] == f"game dealer={expected}"
    assert referee.view().dealer == referee.game.name(expected)


def _to_first_trick(referee: Referee, tap: Any) -> None:
    for name in ("W", "S", "HEARTS", "OK"):  # Anna deals; South orders hearts
        tap(name)
    assert referee.step().name == "trick"


def test_bouncy_tap_records_exactly_one_trick(tmp_path: Path) -> None:
    bouncy = MockFactory(pin_class=BouncyPin)
    events: queue.Queue[Any] = queue.Queue()
    bank = drivers.ButtonBank(DEFAULT_PINS, events, bounce_time=0.05, pin_factory=bouncy)
    referee = Referee(Config(state_dir=tmp_path), Store(tmp_path), renderer=lambda view: view)

    def tap(name: str) -> None:  # 5 edges down within ~2 ms, 5 more up
        pin = bouncy.pin(DEFAULT_PINS[name])
        pin.drive_low()
        time.sleep(0.06)
        pin.drive_high()
        time.sleep(0.06)
        while not events.empty():
            referee.handle(events.get_nowait())

    try:
        _to_first_trick(referee, tap)
        tap("S")
    finally:
        bank.close()
        bouncy.reset()
        bouncy.close()
    assert journal_lines(referee)[2:] == ["game dealer=W", "make S H", "trick S"]
    assert referee.view().prompt == "Trick 2: who won?"


def test_bouncy_tap_without_lockout_would_record_three_tricks(tmp_path: Path) -> None:
    # The control: the chatter is real, so the lockout above is what saves the score.
    bouncy = MockFactory(pin_class=BouncyPin)
    events: queue.Queue[Any] = queue.Queue()
    bank = drivers.ButtonBank(DEFAULT_PINS, events, bounce_time=0, pin_factory=bouncy)
    referee = Referee(Config(state_dir=tmp_path), Store(tmp_path), renderer=lambda view: view)
    try:
        _to_first_trick(referee, referee.press)
        bouncy.pin(DEFAULT_PINS["S"]).drive_low()
        while not events.empty():
            referee.handle(events.get_nowait())
        bouncy.pin(DEFAULT_PINS["S"]).drive_high()
    finally:
        bank.close()
        bouncy.reset()
        bouncy.close()
    assert journal_lines(referee)[-3:] == ["trick S"] * 3


def test_held_button_is_reported_and_changes_nothing(tmp_path: Path, factory: Any) -> None:
    events: queue.Queue[Any] = queue.Queue()
    bank = drivers.ButtonBank(DEFAULT_PINS, events, hold_time=0.05, pin_factory=factory)
    referee = Referee(Config(state_dir=tmp_path), Store(tmp_path), renderer=lambda view: view)
    try:
        _to_first_trick(referee, referee.press)
        before = journal_lines(referee)
        factory.pin(DEFAULT_PINS["UNDO"]).drive_low()
        press, hold = events.get(timeout=1), events.get(timeout=2)
        factory.pin(DEFAULT_PINS["UNDO"]).drive_high()
    finally:
        bank.close()
    assert [(press.name, press.kind), (hold.name, hold.kind)] == [("UNDO", "press"),
                                                                  ("UNDO", "hold")]
    referee.handle(hold)
    assert referee.view().message == "UNDO is held down: is the button stuck?"
    assert journal_lines(referee) == before
