"""``euchre-referee run`` as on a Pi, its panel on a recording SPI bus.

Run as ``python pi_start_child.py OUT [--first-frame] -- RUN-ARGS...`` (with
``GPIOZERO_PIN_FACTORY=mock`` for buttons on gpiozero's mock pins, or without
it for a machine with no GPIO).  luma's ``spi`` imports ``spidev`` and
``RPi.GPIO``, which a Pi has: here they are two small stand-ins put in
``sys.modules`` (an SPI device that keeps every write with the level of the
DC pin, and the three GPIO calls luma makes), so that everything else is the
real start (``firmware.cli.main``), luma and Pillow included.  A config
choosing I2C gets a recording ``smbus2.SMBus`` the same way.

OUT gets one line ``loaded NAME...`` (which of :data:`WATCHED` were imported
when the bus was last written), then a line ``CONTROL HEX`` per write
(CONTROL 0 for commands, 64 for RAM data, as luma's I2C control bytes).
With ``--first-frame`` the process writes OUT and ends as soon as the first
frame has been sent whole (after luma's set-up, which clears the RAM with a
frame of its own); otherwise when ``run`` returns.

The first-frame test of ``tests/firmware/test_fw_pi_edges.py`` and
``bench/first_frame_instructions.py`` both run it.  It imports nothing the
start does not import itself, so what it counts is the start's.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

WATCHED = ("gpiozero", "PIL", "luma", "socket")
"""Modules the first line of OUT says were loaded (the start's heavy imports)."""
FRAME_BYTES = 128 * 64 // 8
COMMAND, DATA = 0x00, 0x40


class Recorder:
    """Keeps ``(control, bytes)`` for each write; ends the process after the
    first frame when asked."""

    def __init__(self, out: str, first_frame: bool) -> None:
        self.out = out
        self.first_frame = first_frame
        self.writes: list[tuple[int, bytes]] = []
        self.data = 0

    def record(self, control: int, data: bytes) -> None:
        self.writes.append((control, data))
        if control == DATA:
            self.data += len(data)
            # luma's constructor clears the RAM (one frame), then the first frame
            if self.first_frame and self.data >= 2 * FRAME_BYTES:
                self.save()
                os._exit(0)

    def save(self) -> None:
        lines = ["loaded " + " ".join(name for name in WATCHED if name in sys.modules)]
        lines += [f"{control} {data.hex()}" for control, data in self.writes]
        with open(self.out, "w", encoding="ascii") as out:
            out.write("\n".join(lines) + "\n")


class Gpio:
    """The RPi.GPIO calls luma's ``spi`` makes, keeping each pin's level."""

    BCM, OUT, LOW, HIGH = 11, 0, 0, 1

    def __init__(self) -> None:
        self.levels: dict[int, int] = {}

    def setmode(self, mode: int) -> None:
        """BCM numbers, as luma asks."""

    def setup(self, pin: int, direction: int, initial: int = 0) -> None:
        self.levels[pin] = initial

    def output(self, pin: int, level: int) -> None:
        self.levels[pin] = level

    def cleanup(self, pins: Any = None) -> None:
        """Nothing to release."""


class SpiDev:
    """spidev's ``SpiDev``: each write recorded as a command (DC low) or data."""

    def __init__(self, recorder: Recorder, gpio: Gpio, dc: int = 24) -> None:
        self.recorder, self.gpio, self.dc = recorder, gpio, dc
        self.max_speed_hz = 0
        self.mode = 0

    def open(self, port: int, device: int) -> None:
        """The device file a Pi has."""

    def writebytes(self, data: list[int]) -> None:
        self.recorder.record(DATA if self.gpio.levels.get(self.dc) else COMMAND, bytes(data))

    def close(self) -> None:
        """Nothing to release."""


class SMBus:
    """smbus2's ``SMBus`` as luma's ``i2c`` uses it (``i2c_rdwr`` messages,
    block writes for commands)."""

    recorder: Recorder

    def __init__(self, port: int) -> None:
        self.port = port

    def write_i2c_block_data(self, address: int, control: int, data: list[int]) -> None:
        self.recorder.record(control, bytes(data))

    def i2c_rdwr(self, *messages: Any) -> None:
        for message in messages:
            raw = bytes(message)
            self.recorder.record(raw[0], raw[1:])

    def close(self) -> None:
        """Nothing to release."""


def main() -> int:
    out, *rest = sys.argv[1:]
    first_frame = rest[0] == "--first-frame"
    run_args = rest[rest.index("--") + 1:]

    recorder = Recorder(out, first_frame)
    gpio = Gpio()
    spidev = types.ModuleType("spidev")
    spidev.SpiDev = lambda: SpiDev(recorder, gpio)  # type: ignore[attr-defined]
    rpi = types.ModuleType("RPi")
    rpi.GPIO = gpio  # type: ignore[attr-defined]
    sys.modules.update({"spidev": spidev, "RPi": rpi, "RPi.GPIO": gpio})  # type: ignore[dict-item]
    SMBus.recorder = recorder
    smbus2 = types.ModuleType("smbus2")
    smbus2.SMBus = SMBus  # type: ignore[attr-defined]
    smbus2.i2c_msg = types.SimpleNamespace(write=_i2c_write)  # type: ignore[attr-defined]
    sys.modules["smbus2"] = smbus2

    from firmware.cli import main as referee_main

    code = referee_main(["run", *run_args])
    recorder.save()
    return code


class _Message:
    def __init__(self, address: int, data: list[int]) -> None:
        self.addr, self._data = address, bytes(data)

    def __bytes__(self) -> bytes:
        return self._data


def _i2c_write(address: int, data: list[int]) -> _Message:
    return _Message(address, data)


if __name__ == "__main__":
    raise SystemExit(main())
