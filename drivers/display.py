# mypy: disable-error-code="import-untyped"
"""The display: any panel luma.oled drives, on SPI or I2C, shown Pillow images.

Wiring and the panels a builder can fit: ``hw/README.md``.  luma.oled has a
device class per controller (``ssd1306``, ``ssd1309``, ``sh1106``,
``ssd1322``...) and luma.core the interfaces (``spi``, ``i2c``): this module
builds the two from :class:`PanelSettings`, with luma's own parameter names,
and adds only what the referee needs around them:

- :func:`luma_devices` lists luma.oled's device classes, taken from luma at
  run time; :func:`device_options` the options a class's constructor has
  beyond the common ones (an SH1106's ``page_address_offset``);
  :func:`check_panel` refuses, in one line naming the setting, what luma
  would refuse (an unknown class, a size the class has not, a rotation the
  screens cannot take), before any bus is opened;
- :class:`Panel` shows a frame: a Pillow image designed at a smaller size
  (the screens' 128x64) is scaled by the largest whole factor that fits and
  centred, luma's framebuffer (``luma.core.framebuffer.diff_to_previous``)
  says whether anything changed, and the device's ``display()`` sends it;
  it dims, blanks and wakes the panel with luma's ``contrast``, ``hide`` and
  ``show``, and moves the picture a pixel when asked (:attr:`Panel.shift`);
- :class:`RetryingDisplay` keeps the referee going without a panel: one
  missing at boot or failing later is opened again every few seconds and
  the change said in one line.

luma and Pillow are imported by the functions that use them: importing this
module loads neither.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from .errors import DisplayError, DriverConfigError

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = [
    "INTERFACES", "Panel", "PanelSettings", "RetryingDisplay", "check_panel", "device_options",
    "luma_devices", "open_panel",
]

INTERFACES: Final = ("spi", "i2c")
"""The luma.core serial interfaces a panel can be on."""

COMMON_PARAMETERS: Final = frozenset({"self", "serial_interface", "width", "height", "rotate",
                                      "mode", "framebuffer", "const", "kwargs"})
"""A device constructor's parameters that are not per-device options: the
interface, the size and rotation (settings of their own), the colour mode and
framebuffer (chosen here: 1-bit frames, luma's default framebuffer)."""


class PanelSettings(NamedTuple):
    """The panel: a luma.oled device class and its interface, in luma's words.

    The defaults are the recommended build (``hw/README.md``): the 2.42"
    SSD1309 on SPI0, DC on GPIO24, RST on GPIO25 (luma's defaults).
    """

    controller: str = "ssd1309"
    """The luma.oled device class (:func:`luma_devices`)."""
    interface: str = "spi"
    """``"spi"`` or ``"i2c"`` (:data:`INTERFACES`)."""
    port: int | None = None
    """SPI port (``/dev/spidev<port>.<device>``) or I2C bus (``/dev/i2c-<port>``);
    None: the interface's usual one, SPI 0, I2C 1."""
    address: int = 0x3C
    """I2C address."""
    device: int = 0
    """SPI device (chip select CE0 or CE1)."""
    bus_speed_hz: int = 8_000_000
    """SPI clock (luma's ``spi`` takes 0.5 to 52 MHz in its own steps)."""
    gpio_DC: int = 24
    """SPI: BCM pin of the panel's DC (data/command) input."""
    gpio_RST: int = 25
    """SPI: BCM pin of the panel's RES (reset) input."""
    width: int = 128
    height: int = 64
    """The panel's pixels (before rotation): one of the sizes the class has."""
    rotate: int = 0
    """Quarter turns clockwise, 0-3 (2: mounted upside down)."""
    options: tuple[tuple[str, Any], ...] = ()
    """Per-device options of the class's constructor (:func:`device_options`),
    as (name, value) pairs: ``(("page_address_offset", 0),)``."""
    contrast: int = 0xCF
    """The panel's contrast, 0-255, set once it is open (luma's ``contrast``)."""

    @property
    def bus_port(self) -> int:
        """:attr:`port`, or the interface's usual one."""
        if self.port is not None:
            return self.port
        return 0 if self.interface == "spi" else 1

    def where(self) -> str:
        """``ssd1309 on SPI port 0 device 0`` / ``sh1106 on I2C port 1 address 0x3C``."""
        if self.interface == "spi":
            return f"{self.controller} on SPI port {self.bus_port} device {self.device}"
        return f"{self.controller} on I2C port {self.bus_port} address 0x{self.address:02X}"


# --------------------------------------------------------------------------- luma's devices


def luma_devices() -> dict[str, type]:
    """luma.oled's device classes by name (``ssd1306``: the class), as the
    installed luma.oled has them: the names in its ``__all__`` that are
    ``luma.core.device.device`` classes."""
    import luma.oled.device as oled
    from luma.core.device import device

    classes = (getattr(oled, name, None) for name in oled.__all__)
    return {cls.__name__: cls for cls in classes
            if isinstance(cls, type) and issubclass(cls, device)}


def _parameters(cls: type) -> dict[str, Any]:
    """A class's constructor parameters with their defaults (the code object's
    names: no ``inspect`` at the start)."""
    init = cls.__init__  # type: ignore[misc]
    code = init.__code__
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    defaults = init.__defaults__ or ()
    values = dict(zip(names[len(names) - len(defaults):], defaults))
    values.update(init.__kwdefaults__ or {})
    return {name: values.get(name) for name in names}


def device_options(cls: type) -> dict[str, Any]:
    """The options ``cls``'s constructor takes beyond :data:`COMMON_PARAMETERS`
    that a config file can write (a number, a truth value or a word), with
    their defaults: ``{"page_address_offset": 2}`` for the SH1106."""
    return {name: default for name, default in _parameters(cls).items()
            if name not in COMMON_PARAMETERS and isinstance(default, (bool, int, float, str))}


def _choices(names: Sequence[str]) -> str:
    return ", ".join(map(repr, sorted(names)))


def _check_options(cls: type, options: Sequence[tuple[str, Any]]) -> None:
    known = device_options(cls)
    for name, value in options:
        if name not in known:
            offered = _choices(list(known)) if known else "none"
            raise DriverConfigError(f"display.options.{name}: luma.oled's {cls.__name__} has no "
                                    f"such option (its options: {offered})")
        default = known[name]
        kind = type(default)
        fits = (isinstance(value, bool) if kind is bool
                else isinstance(value, (int, float)) and not isinstance(value, bool)
                if kind is float else isinstance(value, kind) and not isinstance(value, bool))
        if not fits:
            raise DriverConfigError(f"display.options.{name}: luma.oled's {cls.__name__} takes "
                                    f"{_KINDS[kind]} (its default {default!r}), not {value!r}")


_KINDS: Final = {bool: "true or false", int: "a whole number", float: "a number",
                 str: "a word in quotes"}


def spi_speeds() -> list[int]:
    """The SPI clocks luma.core's ``spi`` takes (it asserts its own list): each
    multiple of 0.5 MHz up to 64 MHz that it accepts, tried on luma's ``noop``."""
    return [speed for speed in range(500_000, 64_000_001, 500_000) if _spi_takes(speed)]


def _spi_takes(speed: int) -> bool:
    from luma.core.interface.serial import noop, spi

    try:
        spi(spi=noop(), gpio=noop(), bus_speed_hz=speed)
    except AssertionError:
        return False
    return True


@lru_cache(maxsize=16)
def check_panel(settings: PanelSettings, frame_size: tuple[int, int]) -> tuple[int, int]:
    """Refuse what luma would refuse, and a panel the screens do not fit;
    returns the panel's size as the screens see it (after rotation).

    The device is built once on luma's ``noop`` interface (nothing is
    sent; luma checks the size there), so a bad setting is said at the
    start even when the bus is not there yet.  Raises
    :class:`DriverConfigError` with one line naming the setting.
    """
    devices = luma_devices()
    cls = devices.get(settings.controller)
    if cls is None:
        raise DriverConfigError(f"display.controller: luma.oled has no device "
                                f"{settings.controller!r} (its devices: {_choices(list(devices))})")
    if settings.interface not in INTERFACES:
        raise DriverConfigError(f"display.interface: {_choices(INTERFACES)}, "
                                f"not {settings.interface!r}")
    if settings.rotate not in (0, 1, 2, 3):
        raise DriverConfigError(f"display.rotate: 0, 1, 2 or 3 quarter turns clockwise, "
                                f"not {settings.rotate!r}")
    if not 0 <= settings.contrast <= 255:
        raise DriverConfigError(f"display.contrast: 0 to 255, not {settings.contrast!r}")
    if settings.interface == "spi" and not _spi_takes(settings.bus_speed_hz):
        speeds = ", ".join(f"{speed / 1e6:g}" for speed in spi_speeds())
        raise DriverConfigError(f"display.bus_speed_hz: luma's spi takes {speeds} MHz, "
                                f"not {settings.bus_speed_hz!r} Hz")
    _check_options(cls, settings.options)
    import luma.core.error
    from luma.core.interface.serial import noop

    _hush()
    try:
        device = _build(cls, noop(), settings)
    except luma.core.error.DeviceDisplayModeError as error:
        raise DriverConfigError(f"display.width, display.height: luma.oled's {settings.controller} "
                                f"has no {settings.width}x{settings.height} panel "
                                f"({error})") from None
    size = (int(device.width), int(device.height))
    if _scale(size, frame_size) == 0:
        turned = _scale((size[1], size[0]), frame_size) > 0  # it fits the other way up
        keys = "display.rotate" if turned else "display.width, display.height"
        hint = ""
        if turned:
            hint = (" (rotate = 1 or 3 turns it on its side: rotate 0 or 2)" if settings.rotate % 2
                    else " (rotate = 1 or 3 stands it the other way)")
        raise DriverConfigError(
            f"{keys}: the screens are {frame_size[0]}x{frame_size[1]}; "
            f"a {settings.width}x{settings.height} {settings.controller} turned {settings.rotate} "
            f"is {size[0]}x{size[1]} and cannot show them{hint}")
    return size


def _build(cls: type, interface: Any, settings: PanelSettings) -> Any:
    """``cls`` on ``interface`` (its constructor sets the controller up and
    clears it), with ``persist`` so that leaving the program keeps the picture."""
    extra: dict[str, Any] = dict(settings.options)
    if "mode" in _parameters(cls):
        extra["mode"] = "1"  # the frames are 1-bit: a greyscale panel lights full or off
    device = cls(interface, width=settings.width, height=settings.height,
                 rotate=settings.rotate, **extra)
    device.persist = True  # no blanking at exit (luma's atexit hook)
    return device


def _hush() -> None:
    """luma.oled 3.16 reads images with ``Image.getdata``, which Pillow 13
    warns about at every frame (removed in Pillow 14, below which
    pyproject.toml keeps Pillow until luma moves on)."""
    import warnings

    warnings.filterwarnings("ignore", "Image.Image.getdata is deprecated", DeprecationWarning)


def _scale(size: tuple[int, int], frame_size: tuple[int, int]) -> int:
    """The largest whole factor by which a frame fits the panel (0: it does not)."""
    return min(size[0] // frame_size[0], size[1] // frame_size[1])


# --------------------------------------------------------------------------- the panel


class _Counted:
    """luma's serial interface contract (``command``, ``data``, ``cleanup``)
    around the real interface, counting the data bytes sent."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent = 0

    def command(self, *cmd: int) -> None:
        self.inner.command(*cmd)

    def data(self, data: Sequence[int]) -> None:
        self.inner.data(data)
        self.sent += len(data)

    def cleanup(self) -> None:
        self.inner.cleanup()


def _faults() -> tuple[type[BaseException], ...]:
    """What a panel that stopped answering raises: ``OSError`` (the bus) and
    luma's own errors (``DeviceNotFoundError`` for an I2C NACK)."""
    import luma.core.error

    return (OSError, luma.core.error.Error)


def _interface(settings: PanelSettings, *, bus: Any, spi: Any, gpio: Any) -> Any:
    """luma.core's ``i2c`` or ``spi`` for the settings (``bus``, ``spi``,
    ``gpio``: luma's own injection points, for tests and benches)."""
    from luma.core.interface import serial

    if settings.interface == "i2c":
        return serial.i2c(bus=bus, port=settings.bus_port, address=settings.address)
    return serial.spi(spi=spi, gpio=gpio, port=settings.bus_port, device=settings.device,
                      bus_speed_hz=settings.bus_speed_hz, gpio_DC=settings.gpio_DC,
                      gpio_RST=settings.gpio_RST)


def open_panel(settings: PanelSettings, frame_size: tuple[int, int] = (128, 64), *,
               bus: Any = None, spi: Any = None, gpio: Any = None) -> Panel:
    """Open the panel: luma's interface, then the device (whose constructor
    sets the controller up and clears it), then the configured contrast.

    Raises :class:`DriverConfigError` for settings luma refuses
    (:func:`check_panel`) and :class:`DisplayError` when the bus or the panel
    is not there (no ``/dev/spidev0.0``, no answer on the I2C address), or
    the module an interface needs is missing (``spidev``, ``RPi.GPIO``,
    ``smbus2``: the install script installs them).
    """
    check_panel(settings, frame_size)
    cls = luma_devices()[settings.controller]
    where = settings.where()
    interface = None
    _hush()
    try:
        interface = _Counted(_interface(settings, bus=bus, spi=spi, gpio=gpio))
        device = _build(cls, interface, settings)
        device.contrast(settings.contrast)
    except ImportError as error:
        raise DisplayError(f"{where}: {error.msg} (needed by luma's {settings.interface}; "
                           "scripts/install-pi.sh installs it)") from error
    except _faults() as error:
        if interface is not None:
            _release(interface)
        raise DisplayError(f"{where}: {_said(error)}") from error
    return Panel(device, interface, frame_size, name=where)


def _said(error: BaseException) -> str:
    return str(error) or type(error).__name__


def _release(interface: Any) -> None:
    try:
        interface.cleanup()
    except _faults():
        pass


class Panel:
    """A luma device showing the screens' frames.

    ``device`` is any luma device (``dummy`` in tests), ``interface`` its
    serial interface when counted (:func:`open_panel`).  :meth:`show` takes a
    mode "1" image of ``frame_size``; on a larger panel it is scaled by the
    largest whole factor that fits and centred.  Faults raise
    :class:`DisplayError`; the panel is then to be opened again
    (:class:`RetryingDisplay` does it).
    """

    def __init__(self, device: Any, interface: _Counted | None = None,
                 frame_size: tuple[int, int] = (128, 64), *, name: str = "") -> None:
        from luma.core.framebuffer import diff_to_previous

        self.device = device
        self.name = name or type(device).__name__
        self._interface = interface
        self.size: tuple[int, int] = (int(device.width), int(device.height))
        self.frame_size = frame_size
        self.scale = _scale(self.size, frame_size)
        if self.scale == 0:
            raise DriverConfigError(f"a {self.size[0]}x{self.size[1]} panel cannot show "
                                    f"{frame_size[0]}x{frame_size[1]} frames")
        width, height = frame_size[0] * self.scale, frame_size[1] * self.scale
        self.origin = ((self.size[0] - width) // 2, (self.size[1] - height) // 2)
        self.shift: tuple[int, int] = (0, 0)
        """Where the picture is moved now, in panel pixels (0 or 1 each way):
        it moves only where nothing lit would be cut (the panel's margin, or
        a dark last column or row)."""
        self._framebuffer = diff_to_previous(num_segments=1)
        _hush()
        self.last: Image | None = None
        """The last frame shown (as the screens drew it)."""

    def show(self, image: Image) -> int:
        """Show ``image``; the data bytes sent (0 when nothing changed)."""
        if tuple(image.size) != self.frame_size:
            raise DriverConfigError(f"frame is {image.size[0]}x{image.size[1]}, the panel "
                                    f"takes {self.frame_size[0]}x{self.frame_size[1]}")
        composed = self._compose(image)
        if not list(self._framebuffer.redraw(composed)):  # its last frame kept only at the end
            self.last = image
            return 0
        before = self._interface.sent if self._interface is not None else 0
        self._call(self.device.display, composed)
        self.last = image
        return self._interface.sent - before if self._interface is not None else 0

    def contrast(self, level: int) -> None:
        """luma's ``contrast`` (0-255): dims or brightens the panel."""
        self._call(self.device.contrast, level)

    def hide(self) -> None:
        """luma's ``hide``: the panel off (its picture kept)."""
        self._call(self.device.hide)

    def wake(self) -> None:
        """luma's ``show``: the panel on again, as it was."""
        self._call(self.device.show)

    def close(self) -> None:
        """Release the bus; the picture stays (``persist``)."""
        try:
            self.device.cleanup()
        except _faults():
            pass

    def _call(self, method: Callable[..., object], *args: Any) -> None:
        try:
            method(*args)
        except _faults() as error:
            raise DisplayError(f"{self.name}: display not answering: {_said(error)}") from error

    def _compose(self, image: Image) -> Image:
        """``image`` on the panel: scaled, centred, shifted, in its mode."""
        from PIL import Image as PillowImage

        mode = self.device.mode
        dx, dy = self._room(image)
        if self.scale == 1 and self.size == tuple(image.size) and (dx, dy) == (0, 0):
            return image if image.mode == mode else image.convert(mode)
        if self.scale > 1:
            width, height = image.size
            image = image.resize((width * self.scale, height * self.scale),
                                 PillowImage.Resampling.NEAREST)
        canvas = PillowImage.new(mode, self.size)
        canvas.paste(image if image.mode == mode else image.convert(mode),
                     (self.origin[0] + dx, self.origin[1] + dy))
        return canvas

    def _room(self, image: Image) -> tuple[int, int]:
        """:attr:`shift` where it cuts nothing lit, else 0 on that axis."""
        dx, dy = self.shift
        if dx and self.origin[0] + image.size[0] * self.scale + dx > self.size[0]:
            # no margin on the right: only a dark last column may go
            dx = dx if image.crop((image.size[0] - 1, 0, image.size[0],
                                   image.size[1])).getbbox() is None else 0
        if dy and self.origin[1] + image.size[1] * self.scale + dy > self.size[1]:
            dy = dy if image.crop((0, image.size[1] - 1, image.size[0],
                                   image.size[1])).getbbox() is None else 0
        return dx, dy


# --------------------------------------------------------------------------- retries


LEVELS: Final = ("on", "dim", "off")
"""What the panel shows: its picture at full contrast, dimmed, or nothing."""


class RetryingDisplay:
    """A display that is opened on first use and again after it failed.

    ``opener`` builds the :class:`Panel` (:func:`open_panel`) and raises
    ``OSError`` (:class:`DisplayError`) when the bus or the panel is not
    there.  While it is missing, :meth:`show` raises ``OSError`` at once and
    tries again only every ``retry_s`` seconds (a luma device is built at
    each try).  A panel that fails once open is closed and opened again the
    same way: luma's constructor sets the controller up anew, and the frame
    is sent whole.  ``say`` is given one line when the panel goes missing
    and one when it is back.  The level (:meth:`set_level`: on, dimmed,
    off) and :attr:`shift` carry over to a panel opened again.
    """

    def __init__(self, opener: Callable[[], Any], *, retry_s: float = 5.0,
                 clock: Callable[[], float] = time.monotonic,
                 say: Callable[[str], object] | None = None,
                 contrast: int = 0xCF, dim_contrast: int = 0) -> None:
        self._opener = opener
        self.retry_s = retry_s
        self._clock = clock
        self.say = say
        """Told one line when the panel goes missing and when it is back."""
        self.contrast = contrast
        self.dim_contrast = dim_contrast
        self._display: Any = None
        self._next_try = float("-inf")
        self.open_failures = 0
        self.last_error: OSError | None = None
        self.level = "on"
        self.shift: tuple[int, int] = (0, 0)
        self._missing = False

    @property
    def is_open(self) -> bool:
        return self._display is not None

    @property
    def panel(self) -> Any:
        """The open panel, or None."""
        return self._display

    def try_open(self) -> bool:
        """Open the display now if it is not open; False if it is not there.

        Configuration errors (``ValueError``: a controller luma does not have)
        are raised, not retried.
        """
        if self._display is not None:
            return True
        now = self._clock()
        if now < self._next_try:
            return False
        try:
            display = self._opener()
            self._apply(display)
        except OSError as error:
            self.open_failures += 1
            self._lost(error, now)
            return False
        self._display = display
        if self._missing:
            self._missing = False
            self._tell("display answering again")
        return True

    def _apply(self, display: Any) -> None:
        """The level and shift the referee asked for, on a panel just opened."""
        if hasattr(display, "shift"):
            display.shift = self.shift
        if self.level == "dim" and hasattr(display, "contrast"):
            display.contrast(self.dim_contrast)
        elif self.level == "off" and hasattr(display, "hide"):
            display.hide()

    def _lost(self, error: OSError, now: float) -> None:
        self.last_error = error
        self._next_try = now + self.retry_s
        if not self._missing:
            self._missing = True
            self._tell(f"display not answering, retrying every {self.retry_s:g} s: {error}")

    def _tell(self, text: str) -> None:
        if self.say is not None:
            self.say(text)

    def _drop(self, error: OSError) -> None:
        """The open panel failed: closed, to be opened again after ``retry_s``."""
        display, self._display = self._display, None
        if display is not None and hasattr(display, "close"):
            try:
                display.close()
            except OSError:
                pass
        self._lost(error, self._clock())

    def show(self, image: Any) -> int:
        if not self.try_open():
            raise DisplayError(f"display not open: {self.last_error}")
        try:
            sent: int = self._display.show(image)
        except OSError as error:
            self._drop(error)
            raise
        return sent

    def set_level(self, level: str) -> None:
        """Show the picture ``"on"`` (at :attr:`contrast`), ``"dim"`` (at
        :attr:`dim_contrast`) or ``"off"`` (luma's ``hide``; ``show`` turns it
        on again, as it was)."""
        if level not in LEVELS:
            raise ValueError(f"level: one of {', '.join(LEVELS)}, not {level!r}")
        was, self.level = self.level, level
        display = self._display
        if display is None or level == was or not hasattr(display, "contrast"):
            return
        try:
            if was == "off":
                display.wake()
            if level == "off":
                display.hide()
            else:
                display.contrast(self.dim_contrast if level == "dim" else self.contrast)
        except OSError as error:
            self._drop(error)

    def set_shift(self, shift: tuple[int, int]) -> None:
        """Move the picture (:attr:`Panel.shift`) from the next frame on."""
        self.shift = shift
        if self._display is not None and hasattr(self._display, "shift"):
            self._display.shift = shift

    def close(self) -> None:
        if self._display is not None and hasattr(self._display, "close"):
            self._display.close()

