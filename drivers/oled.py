"""The SSD1306, SSD1309 and SH1106 OLEDs on I2C, without luma or Pillow.

Wiring: display SDA to GPIO2 (header pin 3), SCL to GPIO3 (pin 5), VCC to
3V3, GND to ground; I2C enabled (``/dev/i2c-<port>``), address usually 0x3C.

:class:`OledPanel` is what :func:`drivers.open_oled` returns: it sends the
bytes luma.oled's ``ssd1306`` / ``sh1106`` / ``ssd1309`` on luma.core's
``i2c`` interface would, byte for byte, with their setup commands from the
generated table :mod:`drivers.oled_init`.  The RAM writers below address a
frame the way those controllers want it; :class:`drivers.PageDiffDisplay`
uses them for a panel and for a luma device alike.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from .errors import DisplayError, DriverConfigError

if TYPE_CHECKING:
    from PIL import Image

    from .oled_init import OledInit

__all__ = [
    "COMMAND", "DATA", "I2C_DEVICE", "I2C_SLAVE", "I2C_WRITE_BLOCK", "SMBUS_BLOCK", "I2cLink",
    "OledPanel", "i2c_address", "open_i2c_device", "open_panel", "turn_pages", "write_frame",
    "write_span",
]

#: The I2C control byte that starts a write of command bytes.
COMMAND: Final = 0x00
#: The I2C control byte that starts a write of display RAM bytes.
DATA: Final = 0x40
#: Most bytes in one SMBus block write (a ``bus`` given to :class:`I2cLink`).
SMBUS_BLOCK: Final = 32
#: Most RAM bytes in one write to the i2c-dev file :class:`I2cLink` opens
#: (luma's ``i2c_rdwr`` blocks).
I2C_WRITE_BLOCK: Final = 4096

_SSD1306_COLUMN_ADDR: Final = 0x21
_SSD1306_PAGE_ADDR: Final = 0x22
_SH1106_PAGE: Final = 0xB0

# Byte b with its 8 bits in reverse order: a page byte turned upside down.
_BITS_REVERSED: Final = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))


def i2c_address(address: int | str) -> int:
    """``address`` as luma reads it (``int(str(address), 0)``: 60, "0x3C")."""
    try:
        return int(str(address), 0)
    except ValueError:
        raise DriverConfigError(f"I2C device address invalid: {address}") from None


I2C_SLAVE: Final = 0x0703
"""``ioctl`` request of Linux's i2c-dev (``linux/i2c-dev.h``): the address the
file's writes go to."""
I2C_DEVICE: Final = "/dev/i2c-{port}"
"""The i2c-dev file of an I2C adapter (``dtparam=i2c_arm=on`` makes port 1)."""


def open_i2c_device(path: str, address: int) -> int:
    """A descriptor of the i2c-dev file ``path`` whose writes go to ``address``.

    Each ``write(2)`` on it is one I2C write (start, address, the bytes, stop):
    on the wire what smbus2's ``write_i2c_block_data`` (the first byte its
    "register") and ``i2c_rdwr`` with one write message send, so no smbus2 (and
    its ctypes: 13M instructions of the device's start) is needed.
    """
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, I2C_SLAVE, address)
    except BaseException:
        os.close(fd)
        raise
    return fd


class I2cLink:
    """Command and RAM writes to one I2C address, as luma.core's ``i2c`` does.

    With ``bus`` (smbus2-like, already open and not closed here) every write
    is a ``write_i2c_block_data`` of at most :data:`SMBUS_BLOCK` bytes.
    Without it, ``/dev/i2c-<port>`` is opened (:func:`open_i2c_device`) and
    written directly: commands in one write, RAM in writes of up to
    :data:`I2C_WRITE_BLOCK` bytes, the transactions luma sends through smbus2;
    :meth:`cleanup` closes it.  A command the display does not acknowledge
    raises :class:`DisplayError`; a failed RAM write raises ``OSError``.
    """

    def __init__(self, address: int, *, port: int = 1, bus: Any = None) -> None:
        self.address = address
        self._fd = -1  # the i2c-dev file opened here, if no bus was given
        if bus is None:
            try:
                self._fd = open_i2c_device(I2C_DEVICE.format(port=port), address)
            except OSError as exc:
                if exc.errno == errno.ENOENT:
                    raise DisplayError(f"I2C device not found: {exc.filename}") from exc
                if exc.errno in (errno.EPERM, errno.EACCES):
                    raise DisplayError(f"I2C device permission denied: {exc.filename}") from exc
                raise
        self._bus = bus

    def _write(self, payload: bytes) -> None:
        written = os.write(self._fd, payload)
        if written != len(payload):
            raise OSError(errno.EIO, f"I2C write cut short: {written} of {len(payload)} bytes")

    def command(self, *cmd: int) -> None:
        """Send up to :data:`SMBUS_BLOCK` command bytes in one write."""
        assert len(cmd) <= SMBUS_BLOCK
        try:
            if self._bus is None:
                self._write(bytes((COMMAND, *cmd)))
            else:
                self._bus.write_i2c_block_data(self.address, COMMAND, list(cmd))
        except OSError as exc:
            if exc.errno in (errno.EREMOTEIO, errno.EIO):
                raise DisplayError(
                    f"I2C device not found on address: 0x{self.address:02X}"
                ) from exc
            raise

    def data(self, data: Sequence[int]) -> None:
        """Send RAM bytes, in as few writes as the bus allows."""
        if self._bus is None:
            for i in range(0, len(data), I2C_WRITE_BLOCK):
                self._write(bytes((DATA, *data[i : i + I2C_WRITE_BLOCK])))
        else:
            for i in range(0, len(data), SMBUS_BLOCK):
                block = list(data[i : i + SMBUS_BLOCK])
                self._bus.write_i2c_block_data(self.address, DATA, block)

    def cleanup(self) -> None:
        """Close the i2c-dev file if it was opened here."""
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)


class Commandable(Protocol):
    """Anything with a controller's command and RAM writes (a panel, a luma device)."""

    def command(self, *cmd: int) -> None: ...
    def data(self, data: Sequence[int]) -> None: ...


class OledPanel:
    """One SSD1306, SSD1309 or SH1106 panel: its size, rotation and setup.

    ``width`` x ``height`` are the panel's pixels, ``rotate`` quarter turns
    clockwise (0-3); :attr:`size` is the size frames have, after rotation.
    :attr:`persist` true (the default here) leaves the picture on at
    :meth:`cleanup`.  Build it with :func:`drivers.open_oled`.
    """

    mode: Final = "1"

    def __init__(self, controller: str, link: I2cLink, init: OledInit, *,
                 width: int, height: int, rotate: int = 0) -> None:
        self.controller = controller
        self.link = link
        self.init = init
        self.kind = init.kind
        self.column0 = init.column0
        self.physical_size = (width, height)
        self.rotate = rotate
        self.size = (width, height) if rotate % 2 == 0 else (height, width)
        self.persist = True

    def command(self, *cmd: int) -> None:
        self.link.command(*cmd)

    def data(self, data: Sequence[int]) -> None:
        self.link.data(data)

    def initialise(self) -> None:
        """Send what luma's constructor sends: setup, a blank RAM, display on."""
        for group in self.init.setup:
            self.command(*group)
        self._clear()
        self.command(*self.init.display_on)

    def preprocess(self, image: Image.Image) -> Image.Image:
        """``image`` turned to the panel's own orientation, as luma does it."""
        if self.rotate == 0:
            return image
        width, height = self.physical_size
        return image.rotate(self.rotate * -90, expand=True).crop((0, 0, width, height))

    def cleanup(self) -> None:
        """Turn the panel off and blank it unless :attr:`persist`; close the bus."""
        if not self.persist:
            self.command(*self.init.display_off)
            self._clear()
        self.link.cleanup()

    def _clear(self) -> None:
        width, height = self.physical_size
        write_frame(self, self.kind, self.column0, [bytes(width)] * (height // 8))


def open_panel(controller: str, address: int | str, *, port: int, bus: Any, rotate: int,
               width: int, height: int) -> OledPanel:
    """Check the address and size, then open the bus; nothing is sent.

    Raises :class:`DriverConfigError` (bad address, size) or :class:`DisplayError`.
    """
    from .oled_init import INIT  # here, so scripts/make_oled_init.py runs without it

    number = i2c_address(address)
    init = INIT[controller].get((width, height))
    if init is None:
        raise DriverConfigError(f"Unsupported display mode: {width} x {height}")
    link = I2cLink(number, port=port, bus=bus)
    return OledPanel(controller, link, init, width=width, height=height, rotate=rotate)


# -- RAM writes (8 pages of 8-pixel-high column bytes) --------------------------


def write_frame(device: Commandable, kind: str, column0: int, pages: Sequence[bytes]) -> int:
    """Write whole ``pages`` from RAM column ``column0``; return the bytes sent.

    ``kind`` "ssd1306" sets one column/page window and writes them all at
    once; "sh1106" addresses each page in turn.
    """
    width = len(pages[0])
    if kind == "ssd1306":
        device.command(
            _SSD1306_COLUMN_ADDR, column0, column0 + width - 1,
            _SSD1306_PAGE_ADDR, 0, len(pages) - 1,
        )  # fmt: skip
        device.data(list(b"".join(pages)))
    else:
        for page, row in enumerate(pages):
            _address_sh1106(device, column0, page, 0)
            device.data(list(row))
    return width * len(pages)


def write_span(device: Commandable, kind: str, column0: int, page: int, start: int,
               data: bytes) -> None:
    """Write ``data`` into ``page`` from column ``start`` (of the frame)."""
    if kind == "ssd1306":
        first = column0 + start
        device.command(
            _SSD1306_COLUMN_ADDR, first, first + len(data) - 1,
            _SSD1306_PAGE_ADDR, page, page,
        )  # fmt: skip
    else:
        _address_sh1106(device, column0, page, start)
    device.data(list(data))


def _address_sh1106(device: Commandable, column0: int, page: int, column: int) -> None:
    column += column0
    device.command(_SH1106_PAGE | page, column & 0x0F, 0x10 | (column >> 4))


def turn_pages(pages: Sequence[bytes]) -> list[bytes]:
    """``pages`` turned 180 degrees: pixel (x, y) moves to (w-1-x, h-1-y)."""
    return [row.translate(_BITS_REVERSED)[::-1] for row in reversed(pages)]
