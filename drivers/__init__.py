"""Thin adapters between the referee and its hardware.

Nothing here knows the game: buttons and LEDs are opaque names, the display
takes 1-bit Pillow images.  gpiozero, luma and Pillow are imported inside
the functions that use them, so importing this package works on any machine.
"""

from .buttons import (
    ENCODER_CCW,
    ENCODER_CW,
    HOLD,
    PRESS,
    ButtonBank,
    ButtonEvent,
    EventKind,
    Pin,
)
from .display import (
    Panel,
    PanelSettings,
    RetryingDisplay,
    check_panel,
    luma_devices,
    open_panel,
)
from .errors import (
    DisplayError,
    DriverConfigError,
    DriverError,
    GpioChipError,
    NoGpio,
    PinError,
)
from .indicators import Indicators

__all__ = [
    "ENCODER_CCW",
    "ENCODER_CW",
    "HOLD",
    "PRESS",
    "ButtonBank",
    "ButtonEvent",
    "DisplayError",
    "DriverConfigError",
    "GpioChipError",
    "NoGpio",
    "DriverError",
    "EventKind",
    "Indicators",
    "Panel",
    "PanelSettings",
    "Pin",
    "PinError",
    "RetryingDisplay",
    "check_panel",
    "luma_devices",
    "open_panel",
]
