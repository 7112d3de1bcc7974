"""The optional buzzer and LEDs: seat LEDs mark the dealer (steady) and the
leader (blinking), the buzzer sounds on a refusal and at the win (gpiozero's
MockFactory pins)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory

from drivers import Indicators
from euchre_core import Rules
from firmware.app import Referee
from firmware.config import Config
from firmware.journal import Store

SEAT_LEDS = {"N": 20, "E": 21, "S": 4}  # W has no LED: it must simply stay unlit
BUZZER = 12


@pytest.fixture
def factory() -> MockFactory:
    return MockFactory()


def make(tmp_path: Path, factory: MockFactory, rules: Rules | None = None) -> Referee:
    config = Config(state_dir=tmp_path, rules=rules or Rules(), seat_led_pins=SEAT_LEDS,
                    buzzer_pin=BUZZER)
    indicators = Indicators(buzzer=BUZZER, leds=SEAT_LEDS, pin_factory=factory)
    return Referee(config, Store(tmp_path), indicators=indicators, renderer=lambda view: view)


def lit(factory: MockFactory) -> set[str]:
    return {name for name, pin in SEAT_LEDS.items() if factory.pin(pin).state}


def modes(factory: MockFactory, expected: dict[str, str]) -> dict[str, str]:
    """Each seat LED's mode now: ``blink`` once it has gone on twice since
    this call, else ``on`` or ``off``; waits (generously) for the LEDs that
    ``expected`` says blink to show it."""
    since = {name: len(factory.pin(pin).states) for name, pin in SEAT_LEDS.items()}
    blinking = [name for name, mode in expected.items() if mode == "blink"]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(
            rises(factory.pin(SEAT_LEDS[name]), since[name] - 1) < 2 for name in blinking):
        time.sleep(0.05)
    out = {}
    for name, pin in SEAT_LEDS.items():
        if rises(factory.pin(pin), since[name] - 1) >= 2:
            out[name] = "blink"
        else:
            out[name] = "on" if factory.pin(pin).state else "off"
    return out


def test_seat_leds_mark_dealer_steady_and_leader_blinking(tmp_path: Path,
                                                         factory: MockFactory) -> None:
    referee = make(tmp_path, factory)
    referee.refresh()
    assert lit(factory) == set()  # no game yet
    referee.press("N")  # Ragnar deals (steady), Sigríður leads (blinking)
    referee.refresh()
    expected = {"N": "on", "E": "blink", "S": "off"}
    assert modes(factory, expected) == expected
    for button in ("S", "CLUBS", "OK", "E"):  # South makes clubs; Sigríður wins trick 1
        referee.press(button)
    referee.refresh()
    assert modes(factory, expected) == expected  # (a blink is not restarted by a redraw)
    referee.press("S")  # South wins trick 2 and leads trick 3
    referee.refresh()
    expected = {"N": "on", "E": "off", "S": "blink"}
    assert modes(factory, expected) == expected
    referee.press("W")  # Anna leads: W has no LED, only the dealer stays lit
    referee.refresh()
    expected = {"N": "on", "E": "off", "S": "off"}
    assert modes(factory, expected) == expected
    referee.indicators.close()  # type: ignore[union-attr]


def test_leds_attached_after_the_first_frame_light_at_once(tmp_path: Path,
                                                          factory: MockFactory) -> None:
    """``run`` draws the first frame before it makes the buttons and LEDs; once
    attached, the LEDs show the resumed hand's dealer and leader without a press."""
    config = Config(state_dir=tmp_path, seat_led_pins=SEAT_LEDS)
    first = Referee(config, Store(tmp_path), renderer=lambda view: view)
    first.press("N")  # Ragnar deals, Sigríður leads
    first.store.close()
    referee = Referee(config, Store(tmp_path), renderer=lambda view: view)
    assert referee.refresh()  # the first frame, no LEDs yet
    indicators = Indicators(leds=SEAT_LEDS, pin_factory=factory)
    referee.attach_inputs(indicators=indicators, is_pressed=lambda name: False)
    expected = {"N": "on", "E": "blink", "S": "off"}
    assert modes(factory, expected) == expected and referee.indicators is indicators
    assert referee.is_pressed is not None and not referee.is_pressed("OK")
    indicators.close()  # (the blinking LED's thread stopped)
    referee.store.close()


def rises(pin: object, since: int) -> int:
    """Rising edges in a mock pin's recorded states from index ``since``."""
    states = [bool(state) for _, state in pin.states[since:]]  # type: ignore[attr-defined]
    return sum(1 for before, after in zip(states, states[1:]) if after and not before)


def wait_for_rises(pin: object, since: int, count: int) -> int:
    deadline = time.monotonic() + 5
    while rises(pin, since) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)  # and no more than that
    return rises(pin, since)


def test_buzzer_sounds_on_a_refusal_and_at_the_win(tmp_path: Path, factory: MockFactory
                                                   ) -> None:
    referee = make(tmp_path, factory, Rules(target=1))
    buzzer = factory.pin(BUZZER)
    start = len(buzzer.states)
    referee.press("UNDO")  # refused: nothing to undo
    assert referee.view().message == "nothing to undo: this is the start of the game"
    assert wait_for_rises(buzzer, start - 1, 1) == 1
    before_win = len(buzzer.states)
    for button in ("N", "S", "CLUBS", "OK", "S", "S", "S", "S"):
        referee.press(button)
    assert len(buzzer.states) == before_win  # accepted entries are silent
    referee.press("S")  # the fifth trick: North-South win 2-0
    assert referee.game.winner is not None
    assert wait_for_rises(buzzer, before_win - 1, 3) == 3
    referee.indicators.close()  # type: ignore[union-attr]
