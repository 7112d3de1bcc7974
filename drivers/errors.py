"""Exceptions raised by the hardware adapters.

Every class also inherits a builtin, so callers that only know the builtin
(``OSError``, ``ValueError``) still catch them.
"""

from __future__ import annotations

__all__ = ["DisplayError", "DriverConfigError", "DriverError", "PinError"]


class DriverError(Exception):
    """Base class for every error raised by :mod:`drivers`."""


class DriverConfigError(DriverError, ValueError):
    """A pin map, name or setting given to a driver is invalid."""


class PinError(DriverError, OSError):
    """A GPIO device could not be opened (pin in use, no GPIO chip, ...)."""


class DisplayError(DriverError, OSError):
    """The display did not answer on the I2C bus (unplugged, bad wiring)."""
