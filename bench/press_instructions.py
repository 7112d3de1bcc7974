"""Instructions from a press to its frame, press by press (callgrind): p50, p99, max.

    apt-get install valgrind                 # once
    .venv/bin/python bench/press_instructions.py [--games 2] [--root DIR] [--here]

Wall times on shared machines are noisy; instruction counts are not. A child
process plays ``--games`` whole games (``SEATS_GAME`` of the tests, 74
presses, each next game started from the winner screen by W, OK: every game
the same) on ``latency_bench.py``'s table: ``euchre-referee run``'s wiring on
gpiozero's mock pins, the main loop in its own thread, the panel luma's
SSD1309 on its ``spi`` (``spidev`` and ``RPi.GPIO`` a stand-in). Counted for
each press, all threads together: from just before the pin's edge
(``drive_low``) until the bench sees the main loop's pass done — the pin's
callback and debounce, the queue, the flow, the journal's commit and its
record of acknowledged lines, the view, the frame, the writes to the panel,
and the bench's own wake-up (a condition variable, a few thousand
instructions). The release, the lockout's sleep and the reading back of the
panel's bytes fall between the counts. It runs under ``valgrind
--tool=callgrind --dump-before=os_getppid`` and calls ``os.getppid()`` at each
end of each press, so callgrind writes one count per press; the main loop
waits an hour for an event (not 0.5 s), so no idle pass lands in a count.

The child runs in a plain install of the checkout (``bench/plain.py``, as a
Pi has it), unless ``--here``.  ``--root`` counts another checkout (installed
the same way; it needs ``firmware.pi.run``'s ``open_display`` and
``build_inputs``, and a default panel on SPI) beside this one: ``git worktree
add /tmp/old REV``.  A checkout from before the panel went through luma is
counted by its own copy of this script (``python /tmp/old/bench/press_instructions.py``).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import plain

HERE = Path(__file__).resolve().parent

CHILD = """
import os, pathlib, sys, tempfile
sys.path.insert(0, sys.argv[1])  # bench/: latency_bench, plain
import latency_bench as bench
table = bench.Table(pathlib.Path(tempfile.mkdtemp()), poll=3600.0)
table.answered = os.getppid  # a count ends as soon as the press is answered
presses = []
for name in bench.game_presses(int(sys.argv[2])):
    os.getppid()  # callgrind dumps the count so far: the press starts here
    presses.append(table.press(name))
table.close()
score = table.referee.game.score
print(len(presses), f"presses, {sum(p.ms is None for p in presses)} with no frame, "
      f"{sum(not p.answered for p in presses)} unanswered, final "
      + " ".join(f"{team} {points}" for team, points in score.items()))
"""


def per_press(python: Path, games: int) -> tuple[list[int], str]:
    """Instructions of each press, in order; the child's last line."""
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--dump-before=os_getppid",
             f"--callgrind-out-file={out}/cg.out", str(python), "-c", CHILD, str(HERE),
             str(games)],
            cwd=out, env={"PATH": "/usr/bin:/bin"}, check=True, capture_output=True, text=True,
        )
        dumps = sorted(Path(out).glob("cg.out.*"), key=lambda path: int(path.suffix[1:]))
        counts = []
        for path in dumps:
            found = re.search(r"^(?:summary|totals): (\d+)", path.read_text(), re.M)
            counts.append(int(found.group(1)) if found else 0)
    # The dumps: the start-up, then per press its count and what followed it
    # (the release, the lockout, the next press's set-up); the rest at the end.
    said = done.stdout.strip().splitlines()[-1]
    pressed = counts[1::2]
    if len(pressed) != int(said.split()[0]):
        raise SystemExit(f"{len(counts)} counts for {said}: not one a press")
    return pressed, said


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--root", type=Path, action="append",
                        help="another checkout to count beside this one (repeatable)")
    parser.add_argument("--here", action="store_true",
                        help="count in this interpreter, not in a plain install")
    args = parser.parse_args()
    roots = [plain.ROOT, *(args.root or [])]
    for root in roots:
        with tempfile.TemporaryDirectory() as work:
            python = Path(sys.executable) if args.here else plain.install(root, Path(work) / "v")
            counts, said = per_press(python, args.games)
        ordered = sorted(counts)
        where = "this interpreter" if args.here else "plain install"
        print(f"{root} ({where}): {said}; instructions from the "
              f"pin's edge to the frame's last byte: p50 {statistics.median(counts) / 1e6:.2f}M, "
              f"p99 {plain.percentile(ordered, 0.99) / 1e6:.2f}M, "
              f"max {ordered[-1] / 1e6:.2f}M, mean {statistics.fmean(counts) / 1e6:.2f}M",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
