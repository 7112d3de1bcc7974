from __future__ import annotations

import time

import pytest
from gpiozero import LED

from drivers import DriverConfigError, Indicators, PinError

LEDS = {"north": 5, "east": 6, "south": 13, "west": None}  # west: not fitted


def wait_for_states(pin, count: int, timeout: float = 2.0) -> list[bool]:
    deadline = time.monotonic() + timeout
    while len(pin.states) < count and time.monotonic() < deadline:
        time.sleep(0.005)
    return [s.state for s in pin.states]


def test_light_lights_exactly_the_named_leds(factory):
    with Indicators(leds=LEDS, pin_factory=factory) as out:
        out.light({"north", "south", "west"})
        assert [factory.pin(p).state for p in (5, 6, 13)] == [True, False, True]
        out.light(["east"])
        assert [factory.pin(p).state for p in (5, 6, 13)] == [False, True, False]
        out.light(set())
        assert [factory.pin(p).state for p in (5, 6, 13)] == [False, False, False]


def test_light_unknown_name(factory):
    with Indicators(leds=LEDS, pin_factory=factory) as out:
        with pytest.raises(DriverConfigError) as info:
            out.light({"up", "north"})
    assert str(info.value) == ("no LED named 'up'; known: 'east', 'north', 'south', 'west'")


def test_status_led(factory):
    with Indicators(status_led=21, pin_factory=factory) as out:
        out.status(True)
        assert factory.pin(21).state is True
        out.status(False)
        assert factory.pin(21).state is False


def test_beep_counts_and_returns_at_once(factory):
    with Indicators(buzzer=18, pin_factory=factory) as out:
        pin = factory.pin(18)
        out.beep(times=2, on_time=0.02, off_time=0.02)
        assert len(pin.states) < 5  # returned before the beeps were done
        assert wait_for_states(pin, 5) == [False, True, False, True, False]
        time.sleep(0.1)
        assert len(pin.states) == 5  # exactly two beeps
        out.beep(times=0)
        assert len(pin.states) == 5


def test_beep_arguments(factory):
    with Indicators(pin_factory=factory) as out, pytest.raises(DriverConfigError):
        out.beep(times=-1)


def test_nothing_fitted_does_nothing(factory):
    with Indicators(pin_factory=factory) as out:
        out.beep(3)
        out.status(True)
        out.light(set())
        with pytest.raises(DriverConfigError, match="^no LED named 'x'; known: $"):
            out.light({"x"})


def test_close_switches_off_and_releases(factory):
    out = Indicators(status_led=21, leds=LEDS, pin_factory=factory)
    out.status(True)
    out.light({"north"})
    out.close()
    out.close()
    assert factory.pin(21).state is False and factory.pin(5).state is False
    Indicators(status_led=21, leds=LEDS, pin_factory=factory).close()


def test_pin_in_use(factory):
    other = LED(6, pin_factory=factory)
    with pytest.raises(PinError, match="^LED 'east' on pin 6: ") as info:
        Indicators(status_led=21, leds=LEDS, pin_factory=factory)
    assert isinstance(info.value, OSError)
    other.close()
    Indicators(status_led=21, leds=LEDS, pin_factory=factory).close()
