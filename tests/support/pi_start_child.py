"""``euchre-referee run`` as on a Pi, with the OLED on a recording I2C bus.

Run as ``python pi_start_child.py OUT [--first-frame] -- RUN-ARGS...`` (with
``GPIOZERO_PIN_FACTORY=mock`` for buttons on gpiozero's mock pins, or without
it for a machine with no GPIO).  ``drivers.open_oled`` is given a bus that
records every write; everything else is the real start (``firmware.cli.main``).

OUT gets one line ``loaded NAME...`` (which of :data:`WATCHED` were imported
when the bus was last written), then a line ``CONTROL HEX`` per write.  With
``--first-frame`` the process writes OUT and ends as soon as the first whole
frame (128 x 8 page bytes) has been sent and the display turned on; otherwise
when ``run`` returns.

The first-frame test of ``tests/firmware/test_fw_pi_edges.py`` and
``bench/first_frame_instructions.py`` both run it.  It imports nothing the
start does not import itself, so what it counts is the start's.
"""

from __future__ import annotations

import os
import sys
from typing import Any

WATCHED = ("gpiozero", "PIL", "luma", "smbus2", "socket")
"""Modules the first line of OUT says were loaded (the start's heavy imports)."""
FRAME_BYTES = 128 * 8
DISPLAY_ON = 0xAF  # sent after the first frame's data (PageDiffDisplay)


class RecordingBus:
    """smbus2-like: keeps ``(control, bytes)`` for each block write; ``data``
    is the control byte that starts a write of display RAM."""

    def __init__(self, out: str, first_frame: bool, data: int) -> None:
        self.out = out
        self.first_frame = first_frame
        self.data_control = data
        self.writes: list[tuple[int, bytes]] = []
        self.data = 0

    def write_i2c_block_data(self, address: int, control: int, data: list[int]) -> None:
        self.writes.append((control, bytes(data)))
        if control == self.data_control:
            self.data += len(data)
        elif self.first_frame and self.data >= FRAME_BYTES and list(data) == [DISPLAY_ON]:
            self.save()
            os._exit(0)

    def close(self) -> None:
        """Nothing to release: the bus is a list."""

    def save(self) -> None:
        lines = ["loaded " + " ".join(name for name in WATCHED if name in sys.modules)]
        lines += [f"{control} {data.hex()}" for control, data in self.writes]
        with open(self.out, "w", encoding="ascii") as out:
            out.write("\n".join(lines) + "\n")


def main() -> int:
    out, *rest = sys.argv[1:]
    first_frame = rest[0] == "--first-frame"
    run_args = rest[rest.index("--") + 1:]

    import drivers
    import drivers.display
    from drivers.oled import DATA

    bus = RecordingBus(out, first_frame, DATA)

    real_open = drivers.display.open_oled

    def open_on_the_bus(*args: Any, **kwargs: Any) -> Any:
        return real_open(*args, **kwargs, bus=bus)

    drivers.open_oled = drivers.display.open_oled = open_on_the_bus
    from firmware.cli import main as referee_main

    code = referee_main(["run", *run_args])
    bus.save()
    return code


if __name__ == "__main__":
    raise SystemExit(main())
