# mypy: disable-error-code="import-untyped"
"""Push buttons and an optional rotary encoder, delivered as queued events.

Wiring: each button goes between its GPIO pin and a ground pin; the pin's
internal pull-up holds it high and a press pulls it low.  A rotary encoder's
A and B go to two GPIO pins and its common (C) to ground.  Pins are anything
gpiozero accepts: BCM numbers (``17``) or names (``"GPIO17"``, ``"BOARD11"``).

Events are put on a :class:`queue.Queue` from gpiozero's callback threads, so
one application loop can consume buttons, timers and the serial link alike.
All times are :func:`time.monotonic` seconds.
"""

from __future__ import annotations

import queue
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Final, Literal, NamedTuple, Self

from .errors import DriverConfigError, GpioChipError, NoGpio, PinError

__all__ = [
    "default_pin_factory",
    "ENCODER_CCW",
    "ENCODER_CW",
    "HOLD",
    "PRESS",
    "ButtonBank",
    "ButtonEvent",
    "EventKind",
    "Pin",
]

Pin = int | str
EventKind = Literal["press", "hold"]

PRESS: Final = "press"
HOLD: Final = "hold"
#: Event names of the encoder's steps (kind ``"press"``), clockwise first.
ENCODER_CW: Final = "NEXT"
ENCODER_CCW: Final = "PREV"


class ButtonEvent(NamedTuple):
    """One thing a player did with one control.

    ``kind`` is ``"press"`` (sent on the press edge, as fast as possible) or
    ``"hold"`` (sent once when the same press has lasted ``hold_time``
    seconds).  ``time`` is monotonic seconds.
    """

    name: str
    kind: EventKind
    time: float


class _Contact:
    """Debounce state of one button (guarded by the bank's lock)."""

    __slots__ = ("accepted_at", "held", "pressed", "seen_at")

    def __init__(self) -> None:
        self.pressed = False
        self.held = False
        self.accepted_at = float("-inf")  # last edge that changed `pressed`
        self.seen_at = float("-inf")  # last edge of any kind


class ButtonBank:
    """Named buttons (and optionally an encoder) feeding one event queue.

    * ``"press"`` is sent on the press edge, not on release: a tap reaches
      the application one callback after the contact closes.
    * ``"hold"`` is sent once, ``hold_time`` seconds into a press that is
      still down; it never repeats.  The press that started it was already
      sent, so an application that gives a hold its own meaning (for example
      "undo" on a long press) should treat the earlier press as a no-op it
      can take back, or map hold-only actions to buttons whose tap is
      harmless.  No second press is sent when a held button is let go.
    * Contact bounce: an edge within ``bounce_time`` seconds of the last
      accepted edge of the same button is ignored.  gpiozero's mock pins
      ignore ``bounce_time``, so the lockout lives here and behaves the same
      on mock and real pins (where gpiozero's own filter also runs).  A
      release missed inside the lockout (a tap shorter than ``bounce_time``)
      is inferred when the next press arrives after a quiet line.
    * ``encoder=(a, b)`` adds a :class:`gpiozero.RotaryEncoder`; each detent
      sends ``"press"`` named ``"NEXT"`` (clockwise) or ``"PREV"``.  Swap
      ``a`` and ``b`` if the directions come out reversed.

    ``clock`` (monotonic seconds) stamps events and times the lockout; tests
    pass a fake one.  If ``events`` is bounded and full, events are dropped
    and counted in :attr:`dropped` (a callback thread must never block).
    """

    def __init__(
        self,
        pin_map: Mapping[str, Pin],
        events: queue.Queue[Any],  # it puts ButtonEvents; others may share it
        *,
        bounce_time: float = 0.02,
        hold_time: float = 3.0,
        encoder: tuple[Pin, Pin] | None = None,
        pin_factory: Any = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if bounce_time < 0:
            raise DriverConfigError(f"bounce_time must be >= 0 s, not {bounce_time}")
        if hold_time <= 0:
            raise DriverConfigError(f"hold_time must be > 0 s, not {hold_time}")
        _check_pins(pin_map, encoder)

        from gpiozero import Button, RotaryEncoder
        from gpiozero.exc import GPIOZeroError

        if pin_factory is None:
            pin_factory = default_pin_factory()

        self._events = events
        self._bounce = bounce_time
        self._clock = clock
        self._lock = threading.Lock()
        self._contacts: dict[str, _Contact] = {}
        self._buttons: dict[str, Any] = {}
        self._encoder: Any = None
        self.dropped = 0
        try:
            for name, pin in pin_map.items():
                try:
                    button = Button(
                        pin,
                        pull_up=True,
                        bounce_time=bounce_time or None,
                        hold_time=hold_time,
                        pin_factory=pin_factory,
                    )
                except (GPIOZeroError, OSError) as exc:
                    raise PinError(f"button {name!r} on pin {pin!r}: {exc}") from exc
                self._buttons[name] = button
                self._contacts[name] = _Contact()
                button.when_pressed = partial(self._edge, name, True)
                button.when_released = partial(self._edge, name, False)
                button.when_held = partial(self._held, name)
            if encoder is not None:
                try:
                    self._encoder = RotaryEncoder(
                        encoder[0], encoder[1], max_steps=0, pin_factory=pin_factory
                    )
                except (GPIOZeroError, OSError) as exc:
                    raise PinError(f"encoder on pins {encoder!r}: {exc}") from exc
                self._encoder.when_rotated_clockwise = partial(self._step, ENCODER_CW)
                self._encoder.when_rotated_counter_clockwise = partial(self._step, ENCODER_CCW)
        except BaseException:
            self.close()
            raise

    @property
    def names(self) -> tuple[str, ...]:
        """The button names, in pin-map order (encoder names not included)."""
        return tuple(self._buttons)

    def is_pressed(self, name: str) -> bool:
        """Whether the named button's contact is closed right now."""
        try:
            button = self._buttons[name]
        except KeyError:
            raise DriverConfigError(f"no button named {name!r}") from None
        return bool(button.is_pressed)

    def close(self) -> None:
        """Release every pin; safe to call twice.

        gpiozero's hold thread makes this wait up to ``hold_time`` seconds
        for a button that is down at the time (about 0.1 s otherwise).
        """
        devices = [*self._buttons.values(), self._encoder]
        self._buttons.clear()
        self._encoder = None
        for device in devices:
            if device is not None:
                device.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # gpiozero callbacks (any thread) -------------------------------------

    def _edge(self, name: str, closed: bool) -> None:
        now = self._clock()
        with self._lock:
            contact = self._contacts[name]
            settled = now - contact.accepted_at >= self._bounce
            quiet = now - contact.seen_at >= self._bounce
            contact.seen_at = now
            if not settled:
                return
            if closed:
                if contact.pressed and not quiet:
                    return  # bounce of a release we never accepted
                contact.pressed = True
                contact.held = False
                contact.accepted_at = now
                self._put(ButtonEvent(name, PRESS, now))
            elif contact.pressed:
                contact.pressed = False
                contact.accepted_at = now

    def _held(self, name: str) -> None:
        now = self._clock()
        with self._lock:
            contact = self._contacts[name]
            if contact.pressed and not contact.held:
                contact.held = True
                self._put(ButtonEvent(name, HOLD, now))

    def _step(self, name: str) -> None:
        self._put(ButtonEvent(name, PRESS, self._clock()))

    def _put(self, event: ButtonEvent) -> None:
        try:
            self._events.put_nowait(event)
        except queue.Full:
            self.dropped += 1


def _check_pins(pin_map: Mapping[str, Pin], encoder: tuple[Pin, Pin] | None) -> None:
    owners: dict[Pin, str] = {}
    wanted = [(name, pin) for name, pin in pin_map.items()]
    if encoder is not None:
        if len(encoder) != 2:
            raise DriverConfigError(f"encoder needs two pins (a, b), not {encoder!r}")
        wanted += [("encoder A", encoder[0]), ("encoder B", encoder[1])]
    for name, pin in wanted:
        if not isinstance(name, str) or not name:
            raise DriverConfigError(f"button name must be a non-empty string: {name!r}")
        if pin in owners:
            raise DriverConfigError(f"pin {pin!r} is given to both {owners[pin]!r} and {name!r}")
        owners[pin] = name


def default_pin_factory() -> Any:
    """gpiozero's pin factory for this machine (``GPIOZERO_PIN_FACTORY``, else
    the first of lgpio, RPi.GPIO, pigpio, native that works), made once.

    Raises :class:`NoGpio` in one line when there is none: no factory could be
    loaded (each one's reason given), or lgpio could not open the GPIO chip
    (its bare ``lgpio.error``).  gpiozero's fallback warnings become that line."""
    from gpiozero import Device

    if Device.pin_factory is not None:
        return Device.pin_factory
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            factory = Device._default_pin_factory()
        except Exception as error:  # lgpio.error, ImportError, BadPinFactory...
            tried = "; ".join(str(warning.message) for warning in caught)
            if type(error).__module__.split(".")[0] == "lgpio":
                raise GpioChipError(f"the GPIO chip could not be opened (lgpio: {error})"
                                    ) from None
            reason = f"{error}" + (f" ({tried})" if tried else "")
            raise NoGpio(f"no GPIO pin factory: {reason}") from None
    Device.pin_factory = factory
    return factory
