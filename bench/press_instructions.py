"""Instructions from a press to its frame, press by press (callgrind): p50 and p99.

    apt-get install valgrind                 # once
    .venv/bin/python bench/press_instructions.py [--games 2] [--root DIR]

Wall times on shared machines are noisy; instruction counts are not.  A child
process plays ``--games`` whole games of the seats layout (``SEATS_GAME`` of the
tests, 74 presses each) on the real app: ``Referee.press`` then ``refresh`` (the
flow, the journal's commit, the renderer drawing the frame, the page-diff
display sending the changed bytes of an SSD1306 to an I2C bus that drops them:
the device's path).  It runs under ``valgrind
--tool=callgrind --dump-before=os_getppid`` and calls ``os.getppid()`` before each
press, so callgrind writes one count per press.  ``--root`` counts another
checkout (for a side-by-side figure: ``git worktree add /tmp/old REV``).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import os, pathlib, sys, tempfile
sys.path.append(os.path.join(sys.argv[1], "tests"))
from support.app_kit import SEATS_GAME
from drivers import PageDiffDisplay, open_oled
from firmware.app import Referee
from firmware.config import Config
from firmware.journal import Store
state = pathlib.Path(tempfile.mkdtemp())
class Bus:  # smbus2-like, as on the Pi's I2C: the bytes go nowhere
    def write_i2c_block_data(self, address, control, data):
        pass
device = open_oled("ssd1306", bus=Bus(), init=False)
referee = Referee(Config(state_dir=state, result_s=0.0), Store(state),
                  display=PageDiffDisplay(device))
referee.refresh()
for _ in range(int(sys.argv[2])):
    for name in SEATS_GAME:
        os.getppid()  # callgrind dumps the count so far: one count a press
        referee.press(name)
        referee.refresh()
    os.getppid()
    referee.press("OK")  # the next game: OK on the winner screen, then confirm
    referee.refresh()
    referee.press("OK")
    referee.refresh()
os.getppid()
"""


def per_press(root: Path, games: int) -> list[int]:
    """Instructions of each press (press and frame), in order."""
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--dump-before=os_getppid",
             f"--callgrind-out-file={out}/cg.out", sys.executable, "-c", CHILD, str(root),
             str(games)],
            cwd=root, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
            check=True, capture_output=True,
        )
        dumps = sorted(Path(out).glob("cg.out.*"), key=lambda path: int(path.suffix[1:]))
        counts = []
        for path in dumps:
            found = re.search(r"^(?:summary|totals): (\d+)", path.read_text(), re.M)
            counts.append(int(found.group(1)) if found else 0)
    return counts[1:-1]  # the first is the start-up; the last, the end (no press)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args()
    counts = per_press(args.root, args.games)
    ordered = sorted(counts)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    print(f"{args.root}: {len(counts)} presses, instructions from press to frame: "
          f"p50 {statistics.median(counts) / 1e6:.2f}M, p99 {p99 / 1e6:.2f}M, "
          f"max {ordered[-1] / 1e6:.2f}M")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
