# mypy: disable-error-code="import-untyped"
"""The 128x64 monochrome I2C OLED (SSD1306 or SH1106) via luma.oled.

Wiring: display SDA to GPIO2 (header pin 3), SCL to GPIO3 (pin 5), VCC to
3V3, GND to ground; I2C enabled (``/dev/i2c-1``), address usually 0x3C.

:func:`open_oled` builds the luma device; :class:`PageDiffDisplay` sends it
only the bytes of a frame that changed and survives the display going away;
:class:`RetryingDisplay` opens it late, when it was missing at boot.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol

from PIL import Image

from .errors import DisplayError, DriverConfigError

__all__ = ["CONTROLLERS", "LumaDevice", "PageDiffDisplay", "RetryingDisplay", "open_oled"]

#: Controllers :func:`open_oled` can drive, by luma.oled class name: the SH1106
#: (1.3" panels), the SSD1306 (0.96") and the SSD1309 (2.42"; luma drives it as an
#: SSD1306 with its own init, and so does :class:`PageDiffDisplay`).
CONTROLLERS: Final = ("sh1106", "ssd1306", "ssd1309")

_DISPLAY_ON: Final = 0xAF  # same opcode on SSD1306 and SH1106
_SSD1306_COLUMN_ADDR: Final = 0x21
_SSD1306_PAGE_ADDR: Final = 0x22
_SH1106_PAGE: Final = 0xB0


class LumaDevice(Protocol):
    """The part of a luma device this module uses."""

    size: tuple[int, int]
    mode: str
    rotate: int
    persist: bool

    def preprocess(self, image: Image.Image) -> Image.Image: ...
    def display(self, image: Image.Image) -> None: ...
    def command(self, *cmd: int) -> None: ...
    def data(self, data: Sequence[int]) -> None: ...
    def cleanup(self) -> None: ...


class _Serial:
    """A luma serial interface that records, or forwards once given a target.

    With ``target`` unset it swallows (and logs) what a luma constructor
    sends, so a device object can be built without touching the bus.
    """

    def __init__(self) -> None:
        self.target: Any = None
        self.log: list[tuple[int, ...] | None] = []  # command groups; None = data

    def command(self, *cmd: int) -> None:
        if self.target is None:
            self.log.append(tuple(cmd))
        else:
            self.target.command(*cmd)

    def data(self, data: Sequence[int]) -> None:
        if self.target is None:
            self.log.append(None)
        else:
            self.target.data(data)

    def cleanup(self) -> None:
        if self.target is not None:
            self.target.cleanup()


def open_oled(
    controller: str = "ssd1306",
    port: int = 1,
    address: int = 0x3C,
    rotate: int = 0,
    width: int = 128,
    height: int = 64,
    *,
    bus: Any = None,
    init: bool = True,
) -> Any:
    """Open the OLED on I2C ``port`` at ``address`` and return the luma device.

    ``rotate`` is in quarter turns clockwise (0-3).  ``bus`` is an
    smbus2-like object to use instead of opening ``/dev/i2c-<port>``.  The
    device has ``persist = True``, so leaving the program does not blank it.

    With ``init=False`` nothing is sent now: the controller is set up by the
    first :meth:`PageDiffDisplay.show`.  Use this at boot so a missing
    display is reported by ``show()`` (and retried there) instead of here;
    a luma constructor that fails leaves a half-built device referenced by
    its ``atexit`` hook, so retrying this function in a loop leaks memory.

    Raises :class:`DriverConfigError` for a bad controller, size, rotation or
    address and :class:`DisplayError` when the bus or display is not there.
    """
    if controller not in CONTROLLERS:
        raise DriverConfigError(
            f"unknown display controller {controller!r}; expected one of "
            + ", ".join(map(repr, CONTROLLERS))
        )
    if rotate not in (0, 1, 2, 3):
        raise DriverConfigError(f"rotate must be 0, 1, 2 or 3, not {rotate!r}")

    import luma.core.error
    import luma.oled.device
    from luma.core.interface.serial import i2c

    shown = f"0x{address:02X}" if isinstance(address, int) else repr(address)
    where = f"{controller} on I2C port {port} address {shown}"
    bad_config = (
        luma.core.error.DeviceAddressError,
        luma.core.error.DeviceDisplayModeError,
    )
    try:
        serial = i2c(bus=bus, port=port, address=address)
    except bad_config as exc:
        raise DriverConfigError(f"{where}: {exc}") from exc
    except (luma.core.error.Error, OSError) as exc:
        raise DisplayError(f"{where}: {exc}") from exc

    factory = getattr(luma.oled.device, controller)
    deferred = _Serial()
    try:
        device = factory(serial if init else deferred, width=width, height=height, rotate=rotate)
    except bad_config as exc:
        serial.cleanup()
        raise DriverConfigError(f"{where}: {exc}") from exc
    except (luma.core.error.Error, OSError) as exc:
        serial.cleanup()
        raise DisplayError(f"{where}: display not answering: {exc}") from exc
    deferred.target = serial
    device.persist = True
    return device


class PageDiffDisplay:
    """Sends a luma device only the parts of each frame that changed.

    The SSD1306 and SH1106 keep the picture in RAM as 8 pages of 8-pixel-high
    column bytes.  :meth:`show` packs the 1-bit frame the same way, compares
    it with the frame last sent and, for each page that changed, addresses
    just the changed column span and writes those bytes.  luma's own
    ``ssd1306.display()`` / ``sh1106.display()`` always send the whole 1 KiB
    frame (they ignore a ``framebuffer=`` option), and the I2C bus is the
    bottleneck: at the Pi's default 100 kHz a full frame takes about 92 ms
    (1024 bytes x 9 clocks), while a changed score digit is a few dozen bytes.

    Any other luma device (``dummy``, the emulators) gets
    ``device.display(image)`` when something changed; :meth:`show` still
    returns the bytes a controller would have been sent.

    Faults: if the bus fails during :meth:`show` (``OSError`` or a luma
    error, e.g. the display was unplugged), ``show`` raises
    :class:`DisplayError` and :attr:`is_lost` becomes true.  The next
    ``show`` re-initialises the controller and sends the full frame.  The
    init sequence is the one the luma constructor sends, as
    ``open_oled(init=False)`` recorded it (or captured by building a twin
    device on a recording interface), and is replayed with
    display-on moved after the frame, so no stale RAM flashes up.  The first
    ``show`` does the same, which makes ``open_oled(init=False)`` work.

    Not thread-safe: call it from one thread (the application loop).
    """

    def __init__(self, device: Any) -> None:
        self._device = device
        self._kind = _controller_kind(device)
        width, height = _physical_size(device)
        if height % 8 and self._kind != "other":
            raise DriverConfigError(f"display height {height} is not a multiple of 8")
        self._width = width
        self._pages = -(-height // 8)
        self._column0 = 0
        if self._kind == "ssd1306":
            self._column0 = getattr(device, "_colstart", 0)
        elif self._kind == "sh1106":
            self._column0 = getattr(device, "_page_address_offset", 2)
        self._init = _init_sequence(device, self._kind, width, height)
        self._faults = _fault_types()
        self._last: list[bytes] | None = None
        self._needs_init = self._kind != "other"
        self._lost = False

    @property
    def device(self) -> Any:
        """The wrapped luma device."""
        return self._device

    @property
    def is_lost(self) -> bool:
        """True after a failed :meth:`show`, until one succeeds."""
        return self._lost

    def show(self, image: Image.Image) -> int:
        """Send what changed since the last frame; return the data bytes sent.

        ``image`` has the device's (rotated) size; a mode other than "1" is
        thresholded at 50 % without dithering.  The first call, and the first
        after a fault, sends the whole frame.
        """
        device = self._device
        if image.size != tuple(device.size):
            raise DriverConfigError(
                f"frame is {image.size[0]}x{image.size[1]}, display is "
                f"{device.size[0]}x{device.size[1]}"
            )
        if image.mode != "1":
            image = image.convert("1", dither=Image.Dither.NONE)
        pages = _pack(device.preprocess(image), self._pages)
        try:
            if self._kind == "other":
                sent = self._count(pages)
                if sent:
                    if device.mode != "1":
                        image = image.convert(device.mode)
                    device.display(image)
            elif self._last is not None and not self._needs_init:
                sent = self._send_changes(pages, self._last)
            else:  # first frame, or first after a fault
                for group in self._init[0]:
                    device.command(*group)
                sent = self._send_full(pages)
                if self._init[1]:
                    device.command(*self._init[1])
        except self._faults as exc:
            self._last = None
            self._needs_init = self._kind != "other"
            self._lost = True
            raise DisplayError(f"{type(device).__name__} display not answering: {exc}") from exc
        self._last = pages
        self._needs_init = False
        self._lost = False
        return sent

    def close(self) -> None:
        """Release the bus; the picture stays if the device has ``persist``."""
        try:
            self._device.cleanup()
        except self._faults:
            pass

    # -- sending -----------------------------------------------------------

    def _count(self, pages: list[bytes]) -> int:
        if self._last is None:
            return sum(map(len, pages))
        total = 0
        for new, old in zip(pages, self._last, strict=True):
            span = _changed_span(old, new)
            if span is not None:
                total += span[1] - span[0]
        return total

    def _send_full(self, pages: list[bytes]) -> int:
        device = self._device
        if self._kind == "ssd1306":
            c0 = self._column0
            device.command(
                _SSD1306_COLUMN_ADDR, c0, c0 + self._width - 1,
                _SSD1306_PAGE_ADDR, 0, self._pages - 1,
            )  # fmt: skip
            device.data(list(b"".join(pages)))
        else:
            for page, row in enumerate(pages):
                self._address_sh1106(page, 0)
                device.data(list(row))
        return self._width * self._pages

    def _send_changes(self, pages: list[bytes], last: list[bytes]) -> int:
        device = self._device
        sent = 0
        for page, (new, old) in enumerate(zip(pages, last, strict=True)):
            span = _changed_span(old, new)
            if span is None:
                continue
            start, stop = span
            if self._kind == "ssd1306":
                c0 = self._column0
                device.command(
                    _SSD1306_COLUMN_ADDR, c0 + start, c0 + stop - 1,
                    _SSD1306_PAGE_ADDR, page, page,
                )  # fmt: skip
            else:
                self._address_sh1106(page, start)
            device.data(list(new[start:stop]))
            sent += stop - start
        return sent

    def _address_sh1106(self, page: int, column: int) -> None:
        column += self._column0
        self._device.command(_SH1106_PAGE | page, column & 0x0F, 0x10 | (column >> 4))


def _pack(image: Image.Image, pages: int) -> list[bytes]:
    """Pack a 1-bit image into controller pages: bit k of byte x = pixel (x, 8p+k)."""
    # Flipping makes each column's bottom pixel come first; transposing turns
    # columns into rows, which tobytes() packs most-significant-bit first.
    raw = (
        image.transpose(Image.Transpose.FLIP_TOP_BOTTOM)
        .transpose(Image.Transpose.TRANSPOSE)
        .tobytes()
    )
    return [raw[pages - 1 - page :: pages] for page in range(pages)]


def _changed_span(old: bytes, new: bytes) -> tuple[int, int] | None:
    """The half-open column range [start, stop) where ``old`` and ``new`` differ."""
    if old == new:
        return None
    start = 0
    while old[start] == new[start]:
        start += 1
    stop = len(new)
    while old[stop - 1] == new[stop - 1]:
        stop -= 1
    return start, stop


def _controller_kind(device: Any) -> str:
    import luma.oled.device

    if isinstance(device, luma.oled.device.ssd1306):  # and ssd1305/1309/...
        return "ssd1306"
    if isinstance(device, luma.oled.device.sh1106):
        return "sh1106"
    return "other"


def _physical_size(device: Any) -> tuple[int, int]:
    """Controller RAM size in pixels (before rotation)."""
    width, height = device.size
    return (height, width) if device.rotate % 2 else (width, height)


def _init_sequence(
    device: Any, kind: str, width: int, height: int
) -> tuple[list[tuple[int, ...]], tuple[int, ...]]:
    """The constructor's setup commands, and its final display-on command.

    A device from ``open_oled(init=False)`` was built on a recording interface,
    which kept them; for any other, a twin of ``device`` is built on one.
    Address commands that precede a data write (the constructor clearing the
    RAM) are left out: a full frame follows every replay anyway.
    """
    if kind == "other":
        return [], ()
    built_on = getattr(device, "_serial_interface", None)
    if isinstance(built_on, _Serial):  # open_oled(init=False) recorded its constructor
        log = list(built_on.log)
    else:
        recorder = _Serial()
        extra: dict[str, Any] = {}
        if kind == "sh1106":
            extra["page_address_offset"] = getattr(device, "_page_address_offset", 2)
        with warnings.catch_warnings():  # luma's clear() uses Pillow's deprecated getdata()
            warnings.simplefilter("ignore", DeprecationWarning)
            twin = type(device)(recorder, width=width, height=height, rotate=device.rotate,
                                **extra)
        twin.persist = True
        log = recorder.log
    groups = [
        group
        for i, group in enumerate(log)
        if group is not None and (i + 1 == len(log) or log[i + 1] is not None)
    ]
    display_on: tuple[int, ...] = ()
    if groups and groups[-1] == (_DISPLAY_ON,):
        display_on = groups.pop()
    return groups, display_on


def _fault_types() -> tuple[type[BaseException], ...]:
    import luma.core.error

    return (OSError, luma.core.error.Error)


class RetryingDisplay:
    """A display that is opened on first use and again after it failed to open.

    ``opener`` builds the real display (a :class:`drivers.PageDiffDisplay`)
    and raises ``OSError`` (:class:`drivers.DisplayError`) when the bus or the
    display is not there.  While it is missing, :meth:`show` raises
    ``OSError`` at once and tries the bus again only every ``retry_s``
    seconds (building a luma device on every frame would leak memory).  Once
    open, a frame that fails raises from the inner display, which itself
    re-initialises the controller on the next frame.
    """

    def __init__(self, opener: Callable[[], Any], *, retry_s: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._opener = opener
        self.retry_s = retry_s
        self._clock = clock
        self._display: Any = None
        self._next_try = float("-inf")
        self.open_failures = 0
        self.last_error: OSError | None = None

    @property
    def is_open(self) -> bool:
        return self._display is not None

    def try_open(self) -> bool:
        """Open the display now if it is not open; False if it is not there.

        Configuration errors (``ValueError``: a bad controller or address)
        are raised, not retried.
        """
        if self._display is not None:
            return True
        now = self._clock()
        if now < self._next_try:
            return False
        try:
            self._display = self._opener()
        except OSError as error:
            self.open_failures += 1
            self.last_error = error
            self._next_try = now + self.retry_s
            return False
        return True

    def show(self, image: Any) -> int:
        if not self.try_open():
            raise OSError(f"display not open: {self.last_error}")
        sent: int = self._display.show(image)
        return sent

    def close(self) -> None:
        if self._display is not None and hasattr(self._display, "close"):
            self._display.close()
