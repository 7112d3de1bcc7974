"""Test doubles for the driver tests: the buses under luma's interfaces (a
recording I2C bus, a recording SPI device), luma's ``gpio`` over gpiozero's
mock pins, controller RAM models that replay what was written, and a
bouncing mock pin.

Pillow is imported only by the functions that make images, so a child
process can use :class:`FakeBus` without it."""

from __future__ import annotations

import errno
import os
import time
import types
from typing import TYPE_CHECKING, Any, Final

from gpiozero.pins.mock import MockPin

if TYPE_CHECKING:
    from gpiozero.pins import Factory
    from PIL import Image

__all__ = ["COMMAND", "DATA", "BouncyPin", "FakeBus", "FakeSMBus", "FakeSpi", "GpiozeroGpio",
           "Sh1106Ram", "Ssd1306Ram", "spi_modules"]

COMMAND: Final = 0x00
"""luma's ``i2c``: the control byte that starts a write of command bytes (and
in :class:`FakeSpi`'s log: DC low)."""
DATA: Final = 0x40
"""luma's ``i2c``: the control byte that starts a write of display RAM bytes
(and in :class:`FakeSpi`'s log: DC high)."""
SMBUS_BLOCK: Final = 32
"""Most bytes luma's ``i2c`` writes in one SMBus block write (a bus it was given)."""
I2C_WRITE_BLOCK: Final = 4096
"""Most bytes luma's ``i2c`` writes in one ``i2c_rdwr`` message (a bus it opened)."""


class FakeBus:
    """smbus2-like bus that records every block write.

    ``log`` holds ``(address, control, bytes)`` per transaction.  While
    ``unplugged`` is true, or when ``fail_in`` counts down to zero, writes
    raise ``OSError(fault)`` (EREMOTEIO, as smbus2 does on a NACK) and
    record nothing.
    """

    def __init__(self) -> None:
        self.log: list[tuple[int, int, bytes]] = []
        self.unplugged = False
        self.fail_in: int | None = None
        self.fault = errno.EREMOTEIO

    def write_i2c_block_data(self, address: int, control: int, data: list[int]) -> None:
        assert len(data) <= SMBUS_BLOCK, "SMBus block writes carry at most 32 bytes"
        self._record(address, control, bytes(data))

    def _record(self, address: int, control: int, data: bytes) -> None:
        if self.fail_in is not None:
            self.fail_in -= 1
            if self.fail_in < 0:
                self.fail_in = None
                self.unplugged = True
        if self.unplugged:
            raise OSError(self.fault, os.strerror(self.fault))
        self.log.append((address, control, data))

    def mark(self) -> int:
        """Position in the log, to slice off what a later call sent."""
        return len(self.log)

    def commands(self, since: int = 0) -> list[bytes]:
        return [b for _, c, b in self.log[since:] if c == COMMAND]

    def data_bytes(self, since: int = 0) -> int:
        return sum(len(b) for _, c, b in self.log[since:] if c == DATA)


class FakeSMBus(FakeBus):
    """Stands in for ``smbus2.SMBus(port)`` under luma's ``i2c`` (which opens
    one when given no bus): also records ``i2c_rdwr`` writes.

    Each message is logged as ``(address, first byte, the rest)``, like a
    block write; ``opened`` keeps every bus made, ``closed`` says if closed.
    """

    opened: list[FakeSMBus] = []

    def __init__(self, port: int) -> None:
        super().__init__()
        self.port = port
        self.closed = False
        FakeSMBus.opened.append(self)

    def i2c_rdwr(self, *messages: Any) -> None:
        for message in messages:
            raw = bytes(message)
            assert len(raw) <= 1 + I2C_WRITE_BLOCK
            self._record(message.addr, raw[0], raw[1:])

    def close(self) -> None:
        self.closed = True


class FakeSpi(FakeBus):
    """spidev-like (``open``, ``writebytes``, ``max_speed_hz``, ``mode``,
    ``close``) under luma's ``spi``: each write is logged as ``(device,
    COMMAND or DATA, bytes)`` by the level of the DC pin at that moment
    (``dc()``: high is data), so the RAM models replay it as an I2C log.
    ``unplugged`` and ``fail_in`` as :class:`FakeBus`."""

    def __init__(self, dc: Any) -> None:
        super().__init__()
        self.dc = dc
        self.opened: tuple[int, int] | None = None
        self.closed = False
        self.max_speed_hz = 0
        self.mode = 0

    def open(self, port: int, device: int) -> None:
        self.opened = (port, device)

    def writebytes(self, data: list[int]) -> None:
        assert self.opened is not None, "written before open()"
        assert len(data) <= 4096, "spidev writes at most 4096 bytes at once"
        self._record(self.opened[1], DATA if self.dc() else COMMAND, bytes(data))

    def close(self) -> None:
        self.closed = True


class GpiozeroGpio:
    """The part of the RPi.GPIO module luma's ``spi`` uses (its ``gpio=``),
    on a gpiozero pin factory's pins: ``setup(pin, OUT)``, ``output(pin,
    level)``, ``cleanup(pins)``.  With gpiozero's ``MockFactory`` each pin
    keeps its states (``MockPin.states``), so a test reads what DC and RST
    did from gpiozero's own mock pins."""

    BCM = 11
    OUT = 0
    IN = 1
    LOW = 0
    HIGH = 1

    def __init__(self, factory: Factory) -> None:
        self.factory = factory
        self.pins: dict[int, Any] = {}

    def setmode(self, mode: int) -> None:
        assert mode == self.BCM

    def setup(self, pin: int, direction: int, initial: int | None = None) -> None:
        assert direction == self.OUT
        device = self.pins.get(pin) or self.factory.pin(pin)
        device.function = "output"
        if initial is not None:
            device.state = bool(initial)
        self.pins[pin] = device

    def output(self, pin: int, level: int) -> None:
        self.pins[pin].state = bool(level)

    def level(self, pin: int) -> bool:
        return bool(self.pins[pin].state)

    def cleanup(self, pins: Any = None) -> None:
        for pin in [pins] if isinstance(pins, int) else (pins or list(self.pins)):
            device = self.pins.pop(pin, None)
            if device is not None:
                device.close()


def spi_modules(gpio: Any, spi: FakeSpi) -> dict[str, Any]:
    """``spidev`` and ``RPi.GPIO`` as luma's ``spi`` imports them when given
    neither (``import spidev``, ``import RPi.GPIO``), for ``sys.modules``:
    every ``SpiDev()`` is ``spi``, the GPIO module is ``gpio``."""
    spidev = types.ModuleType("spidev")
    spidev.SpiDev = lambda: spi  # type: ignore[attr-defined]
    rpi = types.ModuleType("RPi")
    rpi.GPIO = gpio  # type: ignore[attr-defined]
    return {"spidev": spidev, "RPi": rpi, "RPi.GPIO": gpio}


# Opcodes that take argument bytes, per controller (datasheet command tables).
_SSD1306_ARGS = {0x20: 1, 0x21: 2, 0x22: 2, 0x81: 1, 0x8D: 1, 0xA8: 1, 0xD3: 1,
                 0xD5: 1, 0xD9: 1, 0xDA: 1, 0xDB: 1}  # fmt: skip
_SH1106_ARGS = {0x81: 1, 0xA8: 1, 0xAD: 1, 0xD3: 1, 0xD5: 1, 0xD9: 1, 0xDA: 1, 0xDB: 1}


class Ssd1306Ram:
    """SSD1306 GDDRAM driven by replaying a FakeBus log (addressing modes 0/2)."""

    def __init__(self, width: int = 128, pages: int = 8) -> None:
        self.width, self.pages = width, pages
        self.ram = [bytearray(width) for _ in range(pages)]
        self.on = False
        self.mode = 2  # page addressing after reset
        self.col_range, self.page_range = (0, width - 1), (0, pages - 1)
        self.col = self.page = 0
        self._seen = 0

    def replay(self, bus: FakeBus) -> None:
        for _, control, payload in bus.log[self._seen :]:
            if control == COMMAND:
                self._commands(payload)
            else:
                for byte in payload:
                    self._write(byte)
        self._seen = len(bus.log)

    def _commands(self, payload: bytes) -> None:
        i = 0
        while i < len(payload):
            op = payload[i]
            args = payload[i + 1 : i + 1 + _SSD1306_ARGS.get(op, 0)]
            i += 1 + len(args)
            if op == 0x20:
                self.mode = args[0] & 3
            elif op == 0x21:
                self.col_range = (args[0], args[1])
                self.col = args[0]
            elif op == 0x22:
                self.page_range = (args[0], args[1])
                self.page = args[0]
            elif 0xB0 <= op <= 0xB7:
                self.page = op & 7
            elif op <= 0x0F:
                self.col = (self.col & 0xF0) | op
            elif op <= 0x1F:
                self.col = (self.col & 0x0F) | (op & 0x0F) << 4
            elif op in (0xAE, 0xAF):
                self.on = op == 0xAF

    def _write(self, byte: int) -> None:
        self.ram[self.page][self.col] = byte
        if self.mode == 0:  # horizontal: wrap column into the next page
            if self.col == self.col_range[1]:
                self.col = self.col_range[0]
                last = self.page == self.page_range[1]
                self.page = self.page_range[0] if last else self.page + 1
            else:
                self.col += 1
        else:
            self.col = min(self.col + 1, self.width - 1)

    def image(self) -> Image.Image:
        return _ram_image(self.ram, 0, self.width)


class Sh1106Ram:
    """SH1106 132-column RAM (page addressing only); 128 columns from offset 2."""

    def __init__(self, offset: int = 2, width: int = 128, pages: int = 8) -> None:
        self.offset, self.width = offset, width
        self.ram = [bytearray(132) for _ in range(pages)]
        self.on = False
        self.col = self.page = 0
        self._seen = 0

    def replay(self, bus: FakeBus) -> None:
        for _, control, payload in bus.log[self._seen :]:
            if control == COMMAND:
                self._commands(payload)
            else:
                for byte in payload:
                    self.ram[self.page][self.col] = byte
                    self.col = min(self.col + 1, 131)
        self._seen = len(bus.log)

    def _commands(self, payload: bytes) -> None:
        i = 0
        while i < len(payload):
            op = payload[i]
            i += 1 + _SH1106_ARGS.get(op, 0)
            if 0xB0 <= op <= 0xB7:
                self.page = op & 7
            elif op <= 0x0F:
                self.col = (self.col & 0xF0) | op
            elif op <= 0x1F:
                self.col = (self.col & 0x0F) | (op & 0x0F) << 4
            elif op in (0xAE, 0xAF):
                self.on = op == 0xAF

    def image(self) -> Image.Image:
        return _ram_image(self.ram, self.offset, self.width)


def _ram_image(ram: list[bytearray] | list[bytes], offset: int, width: int) -> Image.Image:
    from PIL import Image

    image = Image.new("1", (width, 8 * len(ram)))
    pixels = image.load()
    assert pixels is not None
    for page, row in enumerate(ram):
        for x in range(width):
            byte = row[offset + x]
            for bit in range(8):
                if byte >> bit & 1:
                    pixels[x, 8 * page + bit] = 1
    return image


class BouncyPin(MockPin):
    """A MockPin whose contact chatters: every drive_low()/drive_high() first
    flips the level ``chatter`` extra times, ``gap`` seconds apart, as a real
    switch does for a few milliseconds."""

    chatter = 4
    gap = 0.0005

    def _bounce_to(self, final: bool) -> None:
        level = final
        for _ in range(self.chatter):
            self._drive(level)
            time.sleep(self.gap)
            level = not level
        self._drive(final)

    def _drive(self, high: bool) -> None:
        if high:
            super().drive_high()
        else:
            super().drive_low()

    def drive_low(self) -> None:
        self._bounce_to(False)

    def drive_high(self) -> None:
        self._bounce_to(True)
