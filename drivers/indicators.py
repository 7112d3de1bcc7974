# mypy: disable-error-code="import-untyped"
"""Buzzer, status LED and named LEDs; every one of them optional.

Wiring: an *active* buzzer module (it sounds on DC) between its GPIO pin and
ground; each LED from its GPIO pin through a resistor (about 330 ohm) to
ground.  A pin of ``None`` means "not fitted": the matching method then does
nothing, so the application never has to ask what is fitted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Self

from .buttons import Pin
from .errors import DriverConfigError, PinError

__all__ = ["Indicators"]


class Indicators:
    """The box's outputs other than the display.

    ``leds`` maps opaque names to pins (or ``None`` when that LED is not
    fitted); :meth:`light` lights exactly the named ones, steady or blinking.
    """

    def __init__(
        self,
        *,
        buzzer: Pin | None = None,
        status_led: Pin | None = None,
        leds: Mapping[str, Pin | None] | None = None,
        pin_factory: Any = None,
    ) -> None:
        from gpiozero import LED, Buzzer
        from gpiozero.exc import GPIOZeroError

        self._names = frozenset(leds or ())
        self._buzzer: Any = None
        self._status: Any = None
        self._leds: dict[str, Any] = {}
        self._modes: dict[str, str] = {}
        """What each LED was last told: ``on``, ``off`` or ``blink``."""

        def make(kind: type, what: str, pin: Pin) -> Any:
            try:
                return kind(pin, pin_factory=pin_factory)
            except (GPIOZeroError, OSError) as exc:
                raise PinError(f"{what} on pin {pin!r}: {exc}") from exc

        try:
            if buzzer is not None:
                self._buzzer = make(Buzzer, "buzzer", buzzer)
            if status_led is not None:
                self._status = make(LED, "status LED", status_led)
            for name, pin in (leds or {}).items():
                if pin is not None:
                    self._leds[name] = make(LED, f"LED {name!r}", pin)
        except BaseException:
            self.close()
            raise

    def beep(self, times: int = 1, *, on_time: float = 0.08, off_time: float = 0.08) -> None:
        """Sound the buzzer ``times`` times (seconds per beep and gap); returns at once.

        A new call replaces a sequence still running.
        """
        if times < 0 or on_time <= 0 or off_time < 0:
            raise DriverConfigError(
                f"beep needs times >= 0, on_time > 0, off_time >= 0; got "
                f"{times}, {on_time}, {off_time}"
            )
        if self._buzzer is None or times == 0:
            return
        self._buzzer.beep(on_time=on_time, off_time=off_time, n=times, background=True)

    def status(self, on: bool) -> None:
        """Switch the status LED on or off."""
        if self._status is not None:
            if on:
                self._status.on()
            else:
                self._status.off()

    BLINK_S = 0.4
    """Seconds on, then off, of a blinking LED."""

    def light(self, names: Iterable[str], blinking: Iterable[str] = ()) -> None:
        """Light exactly the LEDs in ``names``, steady, and blink those in
        ``blinking`` (:attr:`BLINK_S` on and off, in the background); all
        others go dark.  An LED already doing what it is asked is left alone
        (a blink keeps its rhythm)."""
        steady, blink = set(names), set(blinking)
        unknown = (steady | blink) - self._names
        if unknown:
            raise DriverConfigError(
                f"no LED named {', '.join(map(repr, sorted(unknown)))}; "
                f"known: {', '.join(map(repr, sorted(self._names)))}"
            )
        for name, led in self._leds.items():
            mode = "blink" if name in blink else "on" if name in steady else "off"
            if self._modes.get(name) == mode:
                continue
            self._modes[name] = mode
            if mode == "blink":
                led.blink(on_time=self.BLINK_S, off_time=self.BLINK_S, background=True)
            elif mode == "on":
                led.on()
            else:
                led.off()

    def close(self) -> None:
        """Switch everything off and release the pins; safe to call twice."""
        devices = [self._buzzer, self._status, *self._leds.values()]
        self._buzzer = self._status = None
        self._leds.clear()
        for device in devices:
            if device is not None:
                device.off()  # closing alone leaves an output as it was
                device.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
