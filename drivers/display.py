# mypy: disable-error-code="import-untyped"
"""The 128x64 monochrome I2C OLED (SSD1306, SSD1309 or SH1106).

Wiring: display SDA to GPIO2 (header pin 3), SCL to GPIO3 (pin 5), VCC to
3V3, GND to ground; I2C enabled (``/dev/i2c-1``), address usually 0x3C.

:func:`open_oled` opens the panel (:class:`drivers.oled.OledPanel`: the
bytes luma.oled would send, without importing luma or Pillow);
:class:`PageDiffDisplay` sends it only the bytes of a frame that changed and
survives the display going away; :class:`RetryingDisplay` opens it late,
when it was missing at boot.  luma devices (``dummy``, the emulators, a
luma ``ssd1306``) work with :class:`PageDiffDisplay` too.
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

from .errors import DisplayError, DriverConfigError
from .oled import OledPanel, open_panel, turn_pages, write_frame, write_span

if TYPE_CHECKING:
    from PIL import Image

__all__ = [
    "CONTROLLERS", "LumaDevice", "PageDiffDisplay", "PagedFrame", "RetryingDisplay", "open_oled",
]

#: Controllers :func:`open_oled` can drive, by luma.oled class name: the SH1106
#: (1.3" panels), the SSD1306 (0.96") and the SSD1309 (2.42"; luma drives it as an
#: SSD1306 with its own init, and so does :class:`PageDiffDisplay`).
CONTROLLERS: Final = ("sh1106", "ssd1306", "ssd1309")

_DISPLAY_ON: Final = 0xAF  # same opcode on SSD1306 and SH1106


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


class PagedFrame(Protocol):
    """A 1-bit frame already in controller pages (``firmware.frame.Frame``).

    ``size`` is (width, height) in pixels, e.g. (128, 64); ``pages()`` gives
    height / 8 pages of width bytes, bit k of byte x of page p being pixel
    (x, 8p + k), 1 = lit; ``to_image()`` the same as a Pillow mode "1" image.
    """

    @property
    def size(self) -> tuple[int, int]: ...
    def pages(self) -> Sequence[bytes]: ...
    def to_image(self) -> Image.Image: ...


def open_oled(
    controller: str = "ssd1306",
    port: int = 1,
    address: int | str = 0x3C,
    rotate: int = 0,
    width: int = 128,
    height: int = 64,
    *,
    bus: Any = None,
    init: bool = True,
) -> OledPanel:
    """Open the OLED on I2C ``port`` at ``address`` and return the panel.

    ``rotate`` is in quarter turns clockwise (0-3); ``width`` x ``height`` in
    pixels, one of the sizes luma.oled supports for ``controller``.  ``bus``
    is an smbus2-like object to use instead of opening ``/dev/i2c-<port>``
    (:func:`drivers.oled.open_i2c_device`).  The panel has ``persist =
    True``, so leaving the program does not blank it.

    With ``init=True`` the controller is set up now, as luma's constructor
    does it.  With ``init=False`` nothing is sent: the first
    :meth:`PageDiffDisplay.show` sets it up.  Use this at boot so a missing
    display is reported by ``show()`` (and retried there) instead of here.

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

    shown = f"0x{address:02X}" if isinstance(address, int) else repr(address)
    where = f"{controller} on I2C port {port} address {shown}"
    try:
        panel = open_panel(controller, address, port=port, bus=bus, rotate=rotate,
                           width=width, height=height)
    except DriverConfigError as exc:
        raise DriverConfigError(f"{where}: {exc}") from exc
    except OSError as exc:
        raise DisplayError(f"{where}: {exc}") from exc
    if init:
        try:
            panel.initialise()
        except OSError as exc:
            panel.link.cleanup()
            raise DisplayError(f"{where}: display not answering: {exc}") from exc
    return panel


class PageDiffDisplay:
    """Sends a display only the parts of each frame that changed.

    The SSD1306 and SH1106 keep the picture in RAM as 8 pages of 8-pixel-high
    column bytes.  :meth:`show` takes the 1-bit frame in that shape, compares
    it with the frame last sent and, for each page that changed, addresses
    just the changed column span and writes those bytes.  luma's own
    ``ssd1306.display()`` / ``sh1106.display()`` always send the whole 1 KiB
    frame (they ignore a ``framebuffer=`` option), and the I2C bus is the
    bottleneck: at the Pi's default 100 kHz a full frame takes about 92 ms
    (1024 bytes x 9 clocks), while a changed score digit is a few dozen bytes.

    ``device`` is an :class:`drivers.oled.OledPanel` (:func:`open_oled`) or
    a luma device.  Any luma device other than the SSD1306 and SH1106
    families (``dummy``, the emulators) gets ``device.display(image)`` when
    something changed; :meth:`show` still returns the bytes a controller
    would have been sent.

    Faults: if the bus fails during :meth:`show` (``OSError`` or a luma
    error, e.g. the display was unplugged), ``show`` raises
    :class:`DisplayError` and :attr:`is_lost` becomes true.  The next
    ``show`` re-initialises the controller and sends the full frame.  The
    init sequence is the one the luma constructor sends (for a panel from
    :mod:`drivers.oled_init`, for a luma device captured by building a twin
    on a recording interface), and is replayed with display-on moved after
    the frame, so no stale RAM flashes up.  The first ``show`` does the
    same, which makes ``open_oled(init=False)`` work.

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
        panel = isinstance(device, OledPanel)
        if panel:
            self._column0 = device.column0
        elif self._kind == "ssd1306":
            self._column0 = getattr(device, "_colstart", 0)
        elif self._kind == "sh1106":
            self._column0 = getattr(device, "_page_address_offset", 2)
        # A paged frame goes to the panel as it is, or turned 180 degrees.
        self._paged = panel and device.rotate in (0, 2)
        self._name = device.controller if panel else type(device).__name__
        self._init = _init_sequence(device, self._kind, width, height)
        self._faults = _fault_types(device)
        self._last: list[bytes] | None = None
        self._needs_init = self._kind != "other"
        self._lost = False

    @property
    def device(self) -> Any:
        """The wrapped panel or luma device."""
        return self._device

    @property
    def is_lost(self) -> bool:
        """True after a failed :meth:`show`, until one succeeds."""
        return self._lost

    def show(self, frame: PagedFrame | Image.Image) -> int:
        """Send what changed since the last frame; return the data bytes sent.

        ``frame`` has the device's (rotated) size: a :class:`PagedFrame`, or a
        Pillow image (a mode other than "1" is thresholded at 50 % without
        dithering).  The first call, and the first after a fault, sends the
        whole frame.
        """
        device = self._device
        if tuple(frame.size) != tuple(device.size):
            raise DriverConfigError(
                f"frame is {frame.size[0]}x{frame.size[1]}, display is "
                f"{device.size[0]}x{device.size[1]}"
            )
        image: Image.Image | None = None
        if not hasattr(frame, "pages"):  # a Pillow image has no pages()
            image = _one_bit(frame)
        elif not self._paged:
            image = _one_bit(cast(PagedFrame, frame).to_image())
        if image is None:
            pages = self._frame_pages(cast(PagedFrame, frame))
        else:
            pages = _pack(device.preprocess(image), self._pages)
        try:
            if self._kind == "other":
                sent = self._count(pages)
                if sent:
                    assert image is not None  # only a panel takes pages as they are
                    if device.mode != "1":
                        image = image.convert(device.mode)
                    device.display(image)
            elif self._last is not None and not self._needs_init:
                sent = self._send_changes(pages, self._last)
            else:  # first frame, or first after a fault
                for group in self._init[0]:
                    device.command(*group)
                sent = write_frame(device, self._kind, self._column0, pages)
                if self._init[1]:
                    device.command(*self._init[1])
        except self._faults as exc:
            self._last = None
            self._needs_init = self._kind != "other"
            self._lost = True
            raise DisplayError(f"{self._name} display not answering: {exc}") from exc
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

    def _frame_pages(self, frame: PagedFrame) -> list[bytes]:
        """The frame's pages (copies), in the panel's orientation."""
        pages = [bytes(row) for row in frame.pages()]
        if len(pages) != self._pages or any(len(row) != self._width for row in pages):
            raise DriverConfigError(
                f"frame has {len(pages)} pages of {sorted({len(row) for row in pages})} "
                f"bytes, display has {self._pages} of {self._width}"
            )
        return turn_pages(pages) if self._device.rotate == 2 else pages

    def _count(self, pages: list[bytes]) -> int:
        if self._last is None:
            return sum(map(len, pages))
        total = 0
        for new, old in zip(pages, self._last, strict=True):
            span = _changed_span(old, new)
            if span is not None:
                total += span[1] - span[0]
        return total

    def _send_changes(self, pages: list[bytes], last: list[bytes]) -> int:
        sent = 0
        for page, (new, old) in enumerate(zip(pages, last, strict=True)):
            span = _changed_span(old, new)
            if span is None:
                continue
            start, stop = span
            write_span(self._device, self._kind, self._column0, page, start, new[start:stop])
            sent += stop - start
        return sent


def _one_bit(image: Image.Image) -> Image.Image:
    """``image`` as mode "1", thresholded at 50 % without dithering."""
    if image.mode == "1":
        return image
    from PIL import Image

    return image.convert("1", dither=Image.Dither.NONE)


def _pack(image: Image.Image, pages: int) -> list[bytes]:
    """Pack a 1-bit image into controller pages: bit k of byte x = pixel (x, 8p+k)."""
    from PIL import Image

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
    """How the device's RAM is addressed: "ssd1306", "sh1106" or "other"."""
    if isinstance(device, OledPanel):
        return str(device.kind)
    # A luma device means luma is loaded; for anything else, do not load it.
    luma_oled = sys.modules.get("luma.oled.device")
    if luma_oled is None:
        return "other"
    if isinstance(device, luma_oled.ssd1306):  # and ssd1305/1309/...
        return "ssd1306"
    if isinstance(device, luma_oled.sh1106):
        return "sh1106"
    return "other"


def _physical_size(device: Any) -> tuple[int, int]:
    """Controller RAM size in pixels (before rotation)."""
    width, height = device.size
    return (height, width) if device.rotate % 2 else (width, height)


class _Recorder:
    """A luma serial interface that records what a constructor sends.

    ``log`` has a tuple per command group and None per data write.
    """

    def __init__(self) -> None:
        self.log: list[tuple[int, ...] | None] = []

    def command(self, *cmd: int) -> None:
        self.log.append(tuple(cmd))

    def data(self, data: Sequence[int]) -> None:
        self.log.append(None)

    def cleanup(self) -> None:
        """Nothing to release."""


def record_luma(factory: Callable[..., Any], **options: Any) -> tuple[Any, _Recorder]:
    """A luma device ``factory(serial, **options)`` built on a recording interface."""
    recorder = _Recorder()
    with warnings.catch_warnings():  # luma's clear() uses Pillow's deprecated getdata()
        warnings.simplefilter("ignore", DeprecationWarning)
        device = factory(recorder, **options)
    device.persist = True  # no blanking atexit
    return device, recorder


def split_init(
    log: Sequence[tuple[int, ...] | None],
) -> tuple[list[tuple[int, ...]], tuple[int, ...]]:
    """A constructor's log as its setup command groups and its final display-on.

    Address commands that precede a data write (the constructor clearing the
    RAM) are left out: a full frame follows every replay anyway.
    """
    groups = [
        group
        for i, group in enumerate(log)
        if group is not None and (i + 1 == len(log) or log[i + 1] is not None)
    ]
    display_on: tuple[int, ...] = ()
    if groups and groups[-1] == (_DISPLAY_ON,):
        display_on = groups.pop()
    return groups, display_on


def _init_sequence(
    device: Any, kind: str, width: int, height: int
) -> tuple[Sequence[tuple[int, ...]], tuple[int, ...]]:
    """The constructor's setup commands, and its final display-on command.

    A panel has them from :mod:`drivers.oled_init`; for a luma device a twin
    is built on a recording interface.
    """
    if kind == "other":
        return [], ()
    if isinstance(device, OledPanel):
        return device.init.setup, device.init.display_on
    extra: dict[str, Any] = {}
    if kind == "sh1106":
        extra["page_address_offset"] = getattr(device, "_page_address_offset", 2)
    _, recorder = record_luma(type(device), width=width, height=height, rotate=device.rotate,
                              **extra)
    return split_init(recorder.log)


def _fault_types(device: Any) -> tuple[type[BaseException], ...]:
    """What a failed write raises: ``OSError``, and luma's errors for a luma device."""
    luma_error = None if isinstance(device, OledPanel) else sys.modules.get("luma.core.error")
    if luma_error is None:
        return (OSError,)
    return (OSError, luma_error.Error)


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
