"""The on-table app against its budgets (SPEC section 6).

(a) latency: a gpiozero mock pin is pressed (``drive_low``) -> the frame is
    handed to the display driver (``PageDiffDisplay.show`` is called), with the
    real main loop ``Referee.run`` in its own thread, the real renderer, luma's
    ssd1306 on a recording I2C bus, and the journal committed (fsync) before the
    frame, over a few hundred presses of typical games;
(b) start to first frame: a fresh ``python -c`` that imports the firmware,
    builds the Referee (real renderer, luma dummy device) and draws the first
    frame, timed from before the process is spawned; fresh and resuming a game;
(c) bytes sent to the display per press (from (a)) against a full frame;
(d) resident memory of a process that ran the referee through a whole game
    (VmRSS and VmHWM from /proc/self/status).

Run:  .venv/bin/python bench/latency_bench.py  [--games 4] [--starts 5]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))  # support.*, after the packages (tests/drivers is tests)

from support.app_kit import SEATS_GAME  # noqa: E402  (a whole game to 10, 74 presses)
from support.driver_fakes import FakeBus  # noqa: E402  (the driver tests' recording I2C bus)

from drivers import ButtonBank, PageDiffDisplay, open_oled  # noqa: E402
from euchre_core import Team  # noqa: E402
from firmware.app import Referee  # noqa: E402
from firmware.config import DEFAULT_PINS, Config  # noqa: E402
from firmware.journal import Store  # noqa: E402

FULL_FRAME = 128 * 64 // 8
BUDGET_P99_MS = 10.0
BUDGET_START_S = 1.5
BUDGET_RSS_MB = 60.0


class TimedDisplay(PageDiffDisplay):
    """PageDiffDisplay that notes when each frame is handed to it, and its bytes."""

    def __init__(self, device: Any) -> None:
        super().__init__(device)
        self.frames: list[tuple[float, int]] = []
        self.arrived = threading.Condition()

    def show(self, image: Any) -> int:
        handed = time.perf_counter()
        sent = super().show(image)
        with self.arrived:
            self.frames.append((handed, sent))
            self.arrived.notify_all()
        return sent


class Table:
    """The referee as `euchre-referee run` wires it, on mock pins and a fake bus."""

    def __init__(self, state_dir: Path, *, renderer: Any = None) -> None:
        from gpiozero.pins.mock import MockFactory

        # No frame appears by itself while we wait for one: messages stay, and no
        # result screen shows (so no press is taken to dismiss one).
        self.config = Config(state_dir=state_dir, result_s=0.0, message_s=3600.0)
        self.factory = MockFactory()
        self.events: queue.Queue[Any] = queue.Queue()
        self.bank = ButtonBank(self.config.pins, self.events, bounce_time=self.config.bounce_s,
                               hold_time=self.config.hold_s, pin_factory=self.factory)
        self.bus = FakeBus()
        self.display = TimedDisplay(open_oled("ssd1306", bus=self.bus, init=False))
        self.referee = Referee(self.config, Store(state_dir), display=self.display,
                               renderer=renderer)
        self.stopping = threading.Event()
        self.loop = threading.Thread(target=self.referee.run, args=(self.events,),
                                     kwargs={"stop": self.stopping.is_set, "poll": 0.5})

    def start(self) -> None:
        self.loop.start()
        self._wait_frames(1)

    def _wait_frames(self, count: int, timeout: float = 2.0) -> bool:
        with self.display.arrived:
            return self.display.arrived.wait_for(lambda: len(self.display.frames) >= count,
                                                 timeout)

    def press(self, name: str) -> tuple[float, int] | None:
        """Tap ``name``; (ms from drive_low to show(), bytes sent), or None if no frame."""
        pin = self.factory.pin(DEFAULT_PINS[name])
        seen = len(self.display.frames)
        pressed = time.perf_counter()
        pin.drive_low()
        got = self._wait_frames(seen + 1)
        pin.drive_high()
        time.sleep(self.config.bounce_s * 1.2)  # let the lockout pass before the next tap
        if not got:
            return None
        handed, sent = self.display.frames[seen]
        return (handed - pressed) * 1000, sent

    def close(self) -> None:
        self.stopping.set()
        self.events.put(lambda referee: None)
        self.loop.join(5)
        self.bank.close()
        self.factory.close()


def latency(state_dir: Path, games: int) -> dict[str, Any]:
    table = Table(state_dir)
    table.start()
    samples: list[float] = []
    sent: list[int] = []
    silent = 0
    try:
        for _ in range(games):  # after a win, "W" starts the next game
            for name in SEATS_GAME:
                result = table.press(name)
                if result is None:
                    silent += 1
                else:
                    samples.append(result[0])
                    sent.append(result[1])
        game = table.referee.game
        score = f"NS {game.score[Team.NS]} EW {game.score[Team.EW]}"
    finally:
        table.close()
    samples.sort()
    p99 = samples[min(len(samples) - 1, round(0.99 * (len(samples) - 1)))]
    return {
        "presses": len(samples) + silent, "silent": silent, "score": score,
        "p50": statistics.median(samples), "p99": p99, "max": samples[-1],
        "bytes_mean": statistics.fmean(sent), "bytes_max": max(sent),
        "bytes_median": statistics.median(sent), "full_frames": sent.count(FULL_FRAME),
    }


def commit_times(state_dir: Path, count: int = 300) -> dict[str, float]:
    """The journal's durable append alone (what every entry waits for), in ms."""
    store = Store(state_dir)
    game_id = store.new_game(["players N=Ragnar E=Sigríður S=South W=Anna"])
    times = []
    for index in range(count):
        start = time.perf_counter()
        store.append(game_id, "undo" if index % 2 else "game dealer=N", flow="{}")
        times.append((time.perf_counter() - start) * 1000)
    store.close()
    times.sort()
    return {"p50": statistics.median(times), "p99": times[round(0.99 * (count - 1))]}


FIRST_FRAME = """
import time
t_start = time.perf_counter()
import pathlib, sys
import luma.core.device
from drivers import PageDiffDisplay
from firmware.app import Referee
from firmware.config import Config
from firmware.journal import Store
state = pathlib.Path(sys.argv[1])
device = luma.core.device.dummy(width=128, height=64, mode="1")
referee = Referee(Config(state_dir=state), Store(state), display=PageDiffDisplay(device))
assert referee.refresh()
t_frame = time.perf_counter()
print(t_start, t_frame, referee.view().kind, referee.view().hand)
"""


def first_frame(state_dir: Path) -> tuple[float, float, str]:
    """(s from spawning to first frame, s from interpreter up to first frame, what it showed)."""
    spawned = time.perf_counter()  # CLOCK_MONOTONIC: the same clock in the child
    out = subprocess.run([sys.executable, "-c", FIRST_FRAME, str(state_dir)], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout.split()
    t_start, t_frame = float(out[0]), float(out[1])
    return t_frame - spawned, t_frame - t_start, f"{out[2]} hand {out[3]}"


def starts(runs: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as fresh_root, tempfile.TemporaryDirectory() as resume:
        # A game in progress to resume: the whole game but its winning trick.
        referee = Referee(Config(state_dir=Path(resume), result_s=0.0), Store(Path(resume)),
                          renderer=lambda view: view)
        for name in SEATS_GAME[:-1]:
            referee.press(name)
        referee.store.close()
        for label, make_dir in (("fresh", lambda i: Path(fresh_root) / str(i)),
                                ("resume", lambda i: Path(resume))):
            spawn, inproc, shown = [], [], ""
            for i in range(runs):
                total, inside, shown = first_frame(make_dir(i))
                spawn.append(total)
                inproc.append(inside)
            results[label] = {"median": statistics.median(spawn), "max": max(spawn),
                              "in_process": statistics.median(inproc), "shown": shown}
    return results


def rss_child(state_dir: Path) -> None:
    """Run in a fresh process: a whole game through pins, then report memory."""
    table = Table(state_dir)
    table.start()
    try:
        for name in SEATS_GAME:
            table.press(name)
        assert table.referee.game.winner is not None
    finally:
        table.close()
    status = Path("/proc/self/status").read_text().splitlines()
    fields = dict(line.split(":", 1) for line in status if line.startswith(("VmRSS", "VmHWM")))
    print(json.dumps({key: int(value.split()[0]) for key, value in fields.items()}))


def rss() -> dict[str, int]:
    with tempfile.TemporaryDirectory() as state:
        out = subprocess.run([sys.executable, __file__, "--rss-child", state], cwd=ROOT,
                             check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=4, help="games of 74 presses for (a)")
    parser.add_argument("--starts", type=int, default=5, help="process starts for (b)")
    parser.add_argument("--rss-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child is not None:
        rss_child(args.rss_child)
        return

    with tempfile.TemporaryDirectory() as disk:
        on_disk = latency(Path(disk), args.games)
    in_ram = None
    if os.path.isdir("/dev/shm"):
        with tempfile.TemporaryDirectory(dir="/dev/shm") as ram:
            in_ram = latency(Path(ram), args.games)
    with tempfile.TemporaryDirectory() as disk:
        commit = commit_times(Path(disk))
    boot = starts(args.starts)
    memory = rss()

    def ok(good: bool) -> str:
        return "ok" if good else "OVER"

    rows = [("(a) press -> show(), journal on disk",
             f"p50 {on_disk['p50']:.2f} / p99 {on_disk['p99']:.2f} / max {on_disk['max']:.2f} ms",
             f"p99 < {BUDGET_P99_MS:.0f} ms", ok(on_disk["p99"] < BUDGET_P99_MS))]
    if in_ram is not None:
        rows.append(("    same, journal in RAM (/dev/shm)",
                     f"p50 {in_ram['p50']:.2f} / p99 {in_ram['p99']:.2f} / "
                     f"max {in_ram['max']:.2f} ms",
                     f"p99 < {BUDGET_P99_MS:.0f} ms", ok(in_ram["p99"] < BUDGET_P99_MS)))
    rows.append(("    context: journal commit alone, disk",
                 f"p50 {commit['p50']:.2f} / p99 {commit['p99']:.2f} ms (Store.append)",
                 "", ""))
    rows.append(("    presses timed (no frame)",
                 f"{on_disk['presses']} ({on_disk['silent']}), final {on_disk['score']}", "", ""))
    for label in ("fresh", "resume"):
        figure = boot[label]
        rows.append((f"(b) start -> first frame, {label}",
                     f"median {figure['median']:.3f} / max {figure['max']:.3f} s "
                     f"(in-process {figure['in_process']:.3f} s)",
                     f"< {BUDGET_START_S} s", ok(figure["max"] < BUDGET_START_S)))
    rows.append(("(c) bytes to the display per press",
                 f"mean {on_disk['bytes_mean']:.0f} / median {on_disk['bytes_median']:.0f} / "
                 f"max {on_disk['bytes_max']} ({on_disk['full_frames']} full)",
                 f"< {FULL_FRAME} (full frame)", ok(on_disk["bytes_mean"] < FULL_FRAME)))
    rows.append(("(d) resident memory after a game",
                 f"VmRSS {memory['VmRSS'] / 1024:.1f} MB, VmHWM {memory['VmHWM'] / 1024:.1f} MB",
                 f"< {BUDGET_RSS_MB:.0f} MB", ok(memory["VmHWM"] / 1024 < BUDGET_RSS_MB)))
    print(f"on-table app budgets (Python {sys.version.split()[0]}, {os.cpu_count()} CPUs)")
    width = max(len(row[0]) for row in rows)
    fig = max(len(row[1]) for row in rows)
    print(f"{'measure':<{width}}  {'figure':<{fig}}  {'budget':<22} verdict")
    for name, figure, budget, verdict in rows:
        print(f"{name:<{width}}  {figure:<{fig}}  {budget:<22} {verdict}")


if __name__ == "__main__":
    main()
