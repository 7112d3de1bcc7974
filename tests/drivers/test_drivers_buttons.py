from __future__ import annotations

import queue
import threading
import time

import pytest
from gpiozero import Button
from gpiozero.pins.mock import MockFactory
from support.clock import FakeClock
from support.driver_fakes import BouncyPin

from drivers import (
    ButtonBank,
    ButtonEvent,
    DriverConfigError,
    PinError,
)

PINS = {"OK": 17, "UNDO": 27}



def drain(events: queue.Queue, wait: float = 0.0) -> list[ButtonEvent]:
    """Everything queued now, after waiting ``wait`` s for stragglers."""
    if wait:
        time.sleep(wait)
    out = []
    while True:
        try:
            out.append(events.get_nowait())
        except queue.Empty:
            return out


def test_press_is_sent_on_the_press_edge(factory, events):
    with ButtonBank(PINS, events, pin_factory=factory) as bank:
        before = time.monotonic()
        factory.pin(27).drive_low()
        event = events.get_nowait()  # mock pins call back synchronously
        assert (event.name, event.kind) == ("UNDO", "press")
        assert before <= event.time <= time.monotonic()
        factory.pin(27).drive_high()  # release: no event of its own
        assert drain(events) == []
        assert bank.names == ("OK", "UNDO")


def test_event_repr_is_valid_python():
    event = ButtonEvent("OK", "press", 1.5)
    assert repr(event) == "ButtonEvent(name='OK', kind='press', time=1.5)"
    assert eval(repr(event)) == event


def test_hold_is_sent_once_and_release_sends_nothing(factory, events):
    with ButtonBank(PINS, events, hold_time=0.05, pin_factory=factory):
        pin = factory.pin(17)
        pin.drive_low()
        assert events.get(timeout=1).kind == "press"
        hold = events.get(timeout=2)
        assert (hold.name, hold.kind) == ("OK", "hold")
        assert drain(events, wait=0.3) == []  # never repeated
        pin.drive_high()
        assert drain(events, wait=0.05) == []  # and no press on letting go


def test_tap_shorter_than_hold_time_is_not_a_hold(factory, events):
    with ButtonBank(PINS, events, hold_time=0.2, pin_factory=factory):
        factory.pin(17).drive_low()
        factory.pin(17).drive_high()
        assert [e.kind for e in drain(events, wait=0.4)] == ["press"]


def test_each_new_press_can_be_held_again(factory, events):
    with ButtonBank(PINS, events, bounce_time=0, hold_time=0.05, pin_factory=factory):
        pin = factory.pin(17)
        for _ in range(2):
            pin.drive_low()
            assert events.get(timeout=1).kind == "press"
            assert events.get(timeout=2).kind == "hold"
            pin.drive_high()


@pytest.fixture
def bouncy() -> MockFactory:
    mock = MockFactory(pin_class=BouncyPin)
    yield mock
    mock.reset()
    mock.close()


def test_bouncy_contact_gives_one_press_per_tap(bouncy, events):
    with ButtonBank(PINS, events, bounce_time=0.05, pin_factory=bouncy):
        pin = bouncy.pin(17)
        for _ in range(3):
            pin.drive_low()  # 5 edges within ~2 ms
            time.sleep(0.06)
            pin.drive_high()  # 5 more
            time.sleep(0.06)
        assert [(e.name, e.kind) for e in drain(events)] == [("OK", "press")] * 3


def test_bouncy_contact_without_lockout_double_counts(bouncy, events):
    # Proves the double is real: MockPin ignores gpiozero's bounce_time.
    with ButtonBank(PINS, events, bounce_time=0, pin_factory=bouncy):
        bouncy.pin(17).drive_low()
        assert len(drain(events)) == 3


def test_tap_shorter_than_bounce_time_then_next_tap_counts(factory, events):
    clock = FakeClock(100.0)
    with ButtonBank(PINS, events, bounce_time=0.02, pin_factory=factory, clock=clock):
        pin = factory.pin(17)
        pin.drive_low()
        clock.t += 0.005
        pin.drive_high()  # release inside the lockout: missed
        clock.t += 0.5
        pin.drive_low()  # quiet line since: a new press
        assert [e.time for e in drain(events)] == [100.0, 100.505]


def test_release_bounce_after_missed_release_is_ignored(factory, events):
    clock = FakeClock(100.0)
    with ButtonBank(PINS, events, bounce_time=0.02, pin_factory=factory, clock=clock):
        pin = factory.pin(17)
        pin.drive_low()
        clock.t += 0.015
        pin.drive_high()  # missed (inside lockout)
        clock.t += 0.006
        pin.drive_low()  # past the lockout, but only 6 ms after the last edge
        clock.t += 0.001
        pin.drive_high()
        assert len(drain(events)) == 1


def test_events_from_another_thread(factory, events):
    with ButtonBank(PINS, events, pin_factory=factory):
        worker = threading.Thread(target=factory.pin(17).drive_low)
        worker.start()
        assert events.get(timeout=1).name == "OK"
        worker.join()
        factory.pin(17).drive_high()  # gpiozero's close waits out a held button


def test_encoder_steps_are_next_and_prev(factory, events):
    with ButtonBank({}, events, encoder=(5, 6), pin_factory=factory):
        a, b = factory.pin(5), factory.pin(6)
        for first, second in ((a, b), (b, a)):  # clockwise, then back
            first.drive_low()
            second.drive_low()
            first.drive_high()
            second.drive_high()
        assert [(e.name, e.kind) for e in drain(events)] == [
            ("NEXT", "press"),
            ("PREV", "press"),
        ]


def test_full_queue_drops_and_counts(factory):
    small: queue.Queue[ButtonEvent] = queue.Queue(maxsize=1)
    with ButtonBank(PINS, small, bounce_time=0, pin_factory=factory) as bank:
        for _ in range(3):
            factory.pin(17).drive_low()
            factory.pin(17).drive_high()
        assert small.qsize() == 1
        assert bank.dropped == 2


def test_is_pressed(factory, events):
    with ButtonBank(PINS, events, pin_factory=factory) as bank:
        factory.pin(17).drive_low()
        assert bank.is_pressed("OK") and not bank.is_pressed("UNDO")
        factory.pin(17).drive_high()
        assert not bank.is_pressed("OK")
        with pytest.raises(DriverConfigError, match="no button named 'X'"):
            bank.is_pressed("X")


def test_close_releases_pins(factory, events):
    bank = ButtonBank(PINS, events, pin_factory=factory)
    bank.close()
    bank.close()
    ButtonBank(PINS, events, pin_factory=factory).close()


@pytest.mark.parametrize(
    ("pin_map", "kwargs", "message"),
    [
        ({"A": 17, "B": 17}, {}, "pin 17 is given to both 'A' and 'B'"),
        ({"A": 5}, {"encoder": (5, 6)}, "pin 5 is given to both 'A' and 'encoder A'"),
        ({"": 17}, {}, "button name must be a non-empty string: ''"),
        ({"A": 17}, {"hold_time": 0}, "hold_time must be > 0 s, not 0"),
        ({"A": 17}, {"bounce_time": -1}, "bounce_time must be >= 0 s, not -1"),
    ],
)
def test_bad_config(factory, events, pin_map, kwargs, message):
    with pytest.raises(DriverConfigError) as info:
        ButtonBank(pin_map, events, pin_factory=factory, **kwargs)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)


def test_pin_in_use_names_the_button_and_releases_the_rest(factory, events):
    other = Button(27, pin_factory=factory)
    with pytest.raises(PinError, match="^button 'UNDO' on pin 27: ") as info:
        ButtonBank(PINS, events, pin_factory=factory)
    assert isinstance(info.value, OSError)
    other.close()
    ButtonBank(PINS, events, pin_factory=factory).close()  # pin 17 was freed
