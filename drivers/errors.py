"""Exceptions raised by the hardware adapters.

Every class also inherits a builtin, so callers that only know the builtin
(``OSError``, ``ValueError``) still catch them.
"""

from __future__ import annotations

__all__ = [
    "DisplayError",
    "DriverConfigError",
    "DriverError",
    "GpioChipError",
    "NoGpio",
    "PinError",
]


class DriverError(Exception):
    """Base class for every error raised by :mod:`drivers`."""


class DriverConfigError(DriverError, ValueError):
    """A pin map, name or setting given to a driver is invalid."""


class PinError(DriverError, OSError):
    """A GPIO device could not be opened (pin in use, no GPIO chip, ...)."""


class DisplayError(DriverError, OSError):
    """The display did not answer on its bus (unplugged, bad wiring, no bus)."""


class NoGpio(PinError):
    """No GPIO here: gpiozero found no pin factory, or the one named in
    ``GPIOZERO_PIN_FACTORY`` could not open the GPIO chip (lgpio's
    ``can not open gpiochip``)."""


class GpioChipError(NoGpio):
    """lgpio is there but could not open the GPIO chip (``/dev/gpiochip0``:
    missing, or not this user's to open)."""
