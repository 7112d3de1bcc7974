"""Thin adapters between the referee and its hardware.

Nothing here knows the game: buttons and LEDs are opaque names, the display
takes 1-bit frames.  gpiozero is imported inside the functions that use it,
so importing this package works on any machine; the OLED is written through
Linux's i2c-dev file directly; luma and Pillow are imported only when a luma
device or a Pillow image is handed over.
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
    CONTROLLERS,
    LumaDevice,
    PagedFrame,
    PageDiffDisplay,
    RetryingDisplay,
    open_oled,
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
from .oled import OledPanel

__all__ = [
    "CONTROLLERS",
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
    "LumaDevice",
    "OledPanel",
    "PageDiffDisplay",
    "PagedFrame",
    "Pin",
    "PinError",
    "RetryingDisplay",
    "open_oled",
]
