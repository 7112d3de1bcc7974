"""The on-table app against its budgets (SPEC section 6).

(a) latency: a press timed from the gpiozero mock pin's edge (``drive_low``)
    to the last byte of its frame written to the panel, every step of
    ``euchre-referee run`` in between: the pin's callback (the ButtonBank's
    debounce), the main loop's queue, ``Referee.handle`` (the flow, the
    journal's commit and its record of acknowledged lines, both flushed), the
    view, the frame (Pillow), luma's framebuffer and luma.oled's ``display()``.
    The referee is wired as ``run`` wires it (``firmware.pi.run``'s
    ``open_display`` and ``build_inputs``, ``Referee.run`` in its own thread)
    with the default config: the recommended SSD1309 on luma's ``spi``, whose
    ``spidev`` and ``RPi.GPIO`` are a stand-in that keeps each write with the
    DC pin's level (the time taken is when the frame's last write returned).
    Whole games of ``SEATS_GAME`` (the tests' seats-layout game, 75
    presses), the next one started from the winner screen by W then OK, so
    every game is the same (checked: each
    game's journal lines, and the panel's RAM replayed from the bytes against
    the last frame).  A press after which no byte reaches the panel is counted
    as such ("no frame"), never waited for: the bench waits for the main
    loop's pass that took the press, and a press that is not taken within
    5 s is reported as unanswered.  The journal on disk and in RAM, one game
    of each in turn;
(b) start to first frame: a fresh ``python -c`` that imports the firmware,
    builds the Referee (real renderer, luma dummy device) and draws the first
    frame, timed from before the process is spawned; fresh and resuming a game;
(c) bytes sent to the display per press (from (a)) against a full frame;
(d) resident memory of a process that ran the referee through a whole game
    (VmRSS and VmHWM from /proc/self/status).

Run:  .venv/bin/python bench/latency_bench.py  [--games 4] [--starts 5] [--here]

It runs in a plain install of the checkout (``bench/plain.py``), unless
``--here``.  The wire's own time is not in (a): (c) gives it, at SPI's 8 MHz
(1 us a byte) and at I2C's 400 kHz (22.5 us a byte, 9 clocks).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by a test
    sys.path.append(str(Path(__file__).resolve().parent))
import plain  # noqa: E402

plain.packages()

from support.app_kit import SEATS_GAME, SEATS_JOURNAL  # noqa: E402  (75 presses, to NS 10-3)

from euchre_core import Team  # noqa: E402
from firmware.app import Referee  # noqa: E402
from firmware.config import CareConfig, Config  # noqa: E402

STORE_MODULE = ("firmware.journal" if importlib.util.find_spec("firmware.journal") is not None
                else "firmware.store")  # the journal moves into a package of its own
Store: Any = importlib.import_module(STORE_MODULE).Store

ROOT = plain.ROOT
FULL_FRAME = 128 * 64 // 8
BUDGET_P99_MS = 10.0
BUDGET_START_S = 1.5
BUDGET_RSS_MB = 60.0
ANSWER_S = 5.0
"""A press the main loop has not taken this long after its edge is unanswered."""
I2C_BYTE_US = 9 / 400_000 * 1e6
"""One byte on a 400 kHz I2C bus (8 bits and the acknowledge), in microseconds."""
SPI_BYTE_US = 8 / 8_000_000 * 1e6
"""One byte on SPI at luma's 8 MHz, in microseconds."""
COMMAND, DATA = 0x00, 0x40
"""A write's kind as the bench keeps it (DC low, DC high: luma's I2C control bytes)."""
NEXT_GAME = ["W", "OK"]
"""On the winner screen: W deals the next game, OK confirms it (then SEATS_GAME[1:])."""


def game_presses(games: int) -> list[str]:
    """``games`` whole games of SEATS_GAME, each the same."""
    return SEATS_GAME + (NEXT_GAME + SEATS_GAME[1:]) * (games - 1)


def ack_file_class() -> Any:
    """The class that writes ``journal.acks`` (wherever the journal keeps it)."""
    try:
        from firmware.journal.acks import AckFile
    except ImportError:
        from firmware.store import _AckFile as AckFile  # type: ignore[attr-defined,no-redef]
    return AckFile


class CountingQueue(queue.Queue[Any]):
    """The main loop's queue; ``taken`` counts the items it has handed out
    (the bench's one addition to the path: a Python call in each ``get``)."""

    def __init__(self) -> None:
        super().__init__()
        self.taken = 0

    def _get(self) -> Any:
        self.taken += 1
        return super()._get()


class SpiPanel:
    """The panel's SPI as luma's ``spi`` reaches it: spidev's ``SpiDev`` (each
    ``writebytes`` kept as one packet, its first byte COMMAND or DATA by the
    DC pin's level, and stamped with when it returned) and the three
    ``RPi.GPIO`` calls luma makes for DC and RST."""

    BCM, OUT, LOW, HIGH = 11, 0, 0, 1

    def __init__(self, dc: int = 24) -> None:
        self.dc = dc
        self.levels: dict[int, int] = {}
        self.stamps: list[float] = []
        self.packets: list[bytes] = []
        self._drained = 0
        self.max_speed_hz = 0
        self.mode = 0

    # RPi.GPIO
    def setmode(self, mode: int) -> None:
        """BCM numbers, as luma asks."""

    def setup(self, pin: int, direction: int, initial: int = 0) -> None:
        self.levels[pin] = initial

    def output(self, pin: int, level: int) -> None:
        self.levels[pin] = level

    def cleanup(self, pins: Any = None) -> None:
        """Nothing to release."""

    # spidev.SpiDev
    def open(self, port: int, device: int) -> None:
        """/dev/spidev<port>.<device> on a Pi."""

    def writebytes(self, data: list[int]) -> None:
        kind = DATA if self.levels.get(self.dc) else COMMAND
        self.packets.append(bytes((kind, *data)))
        self.stamps.append(time.perf_counter())

    def close(self) -> None:
        """Nothing to release."""

    def drain(self) -> list[bytes]:
        """The writes since the last drain (all are kept in ``packets``)."""
        new = self.packets[self._drained:]
        self._drained = len(self.packets)
        return new


@contextmanager
def panel_on(panel: SpiPanel) -> Iterator[None]:
    """luma's ``spi`` importing ``panel`` as ``spidev`` and ``RPi.GPIO``."""
    spidev = types.ModuleType("spidev")
    spidev.SpiDev = lambda: panel  # type: ignore[attr-defined]
    rpi = types.ModuleType("RPi")
    rpi.GPIO = panel  # type: ignore[attr-defined]
    stand_ins = {"spidev": spidev, "RPi": rpi, "RPi.GPIO": panel}
    kept = {name: sys.modules.get(name) for name in stand_ins}
    sys.modules.update(stand_ins)  # type: ignore[arg-type]
    try:
        yield
    finally:
        for name, module in kept.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


class Press(NamedTuple):
    name: str
    ms: float | None
    """From the pin's edge to the frame's last byte; None: no frame."""
    data_bytes: int
    answered: bool
    """The main loop took the press (and finished its pass) within ANSWER_S."""


class Table:
    """The referee as ``euchre-referee run`` wires it, on mock pins, the
    panel's SPI on a stand-in (:class:`SpiPanel`), the journal in ``state_dir``."""

    def __init__(self, state_dir: Path, *, config: Config | None = None,
                 poll: float = 0.5) -> None:
        """``poll``: the main loop's longest wait for an event (``run``'s 0.5 s)."""
        from gpiozero.pins.mock import MockFactory

        from firmware.pi.run import build_inputs, open_display

        # No frame comes by itself while a press is timed: a message stays up,
        # no result screen shows (so no press only dismisses one), and the
        # screen's care neither dims nor moves the picture.
        self.config = config or Config(state_dir=state_dir, result_s=0.0, message_s=3600.0,
                                       care=CareConfig(0, 0, 0, 0))
        self.file = SpiPanel(self.config.display.gpio_DC)
        with panel_on(self.file):
            self.display = open_display(self.config)
            self.store = Store(state_dir)
            self.referee = Referee(self.config, self.store, display=self.display)
            self.referee.refresh()  # the first frame (init, whole frame, display on)
        self.file.drain()
        self.factory = MockFactory()
        self.events = CountingQueue()
        self.buttons, self.indicators = build_inputs(self.config, self.events,
                                                     pin_factory=self.factory)
        self.referee.attach_inputs(indicators=self.indicators,
                                   is_pressed=self.buttons.is_pressed)
        self.pins = {name: self.factory.pin(pin) for name, pin in self.config.pins.items()}
        self.poll = poll
        self.answered: Callable[[], object] | None = None
        """Called as soon as a press is answered (press_instructions.py: a count's end)."""
        self.target = 0
        self.passed = 0
        self.pass_done = threading.Condition()
        self.stopping = threading.Event()
        self.loop = threading.Thread(target=self._run, name="main loop", daemon=True)
        self.loop.start()

    def _run(self) -> None:
        self.referee.run(self.events, stop=self.stopping.is_set, on_loop=self._passed,
                         poll=self.poll)

    def _passed(self) -> None:
        """``on_loop``: after each pass of the main loop (its frame written)."""
        if self.events.taken >= self.target:
            with self.pass_done:
                self.passed = self.events.taken
                self.pass_done.notify_all()

    def press(self, name: str) -> Press:
        """Tap ``name`` (down, answered, up, the bounce lockout waited out)."""
        pin = self.pins[name]
        mark = len(self.file.stamps)
        self.target = self.events.taken + 1
        pressed = time.perf_counter()
        pin.drive_low()
        with self.pass_done:
            answered = self.pass_done.wait_for(lambda: self.passed >= self.target, ANSWER_S)
        if self.answered is not None:
            self.answered()
        pin.drive_high()
        stamps = self.file.stamps[mark:]
        data = sum(len(packet) - 1 for packet in self.file.drain() if packet[0] == DATA)
        time.sleep(self.config.bounce_s * 1.2)  # the release's lockout, before the next tap
        ms = (stamps[-1] - pressed) * 1000 if stamps and answered else None
        return Press(name, ms, data, answered)

    def panel_matches(self) -> bool:
        """The panel's RAM, replayed from every byte written, is the last frame."""
        from support.driver_fakes import Ssd1306Ram

        from firmware.screens import render

        class Log:
            log = [(0x3C, packet[0], packet[1:]) for packet in self.file.packets]

        ram = Ssd1306Ram()
        ram.replay(Log)  # type: ignore[arg-type]
        return ram.on and ram.image().tobytes() == render(self.referee.view()).tobytes()

    def close(self) -> None:
        self.stopping.set()
        self.events.put(lambda referee: None)
        self.loop.join(5)
        self.buttons.close()
        self.factory.close()
        self.display.close()
        self.store.close()
        self.file.drain()


class Run(NamedTuple):
    """The presses of one table, and what was checked after them."""

    presses: list[Press]
    game_medians: list[float]
    """Each game's median press time (ms)."""
    games_alike: bool
    panel_ok: bool
    score: str


def play(table: Table, names: list[str]) -> list[Press]:
    return [table.press(name) for name in names]


def finish(table: Table, games: list[list[Press]]) -> Run:
    game = table.referee.game
    score = f"NS {game.score[Team.NS]} EW {game.score[Team.EW]}"
    stored = [table.store.lines(info[0]) for info in table.store.games()]
    alike = len(stored) == len(games) and all(lines == SEATS_JOURNAL[1:] for lines in stored)
    medians = [statistics.median(p.ms for p in presses if p.ms is not None)
               for presses in games if any(p.ms is not None for p in presses)]
    return Run([press for presses in games for press in presses], medians, alike,
               table.panel_matches(), score)


def latency(places: dict[str, Path], games: int) -> dict[str, Run]:
    """One table per place (a state directory), a whole game of each in turn."""
    tables = {label: Table(path) for label, path in places.items()}
    played: dict[str, list[list[Press]]] = {label: [] for label in places}
    try:
        for number in range(games):
            names = SEATS_GAME if number == 0 else NEXT_GAME + SEATS_GAME[1:]
            for label, table in tables.items():
                played[label].append(play(table, names))
        return {label: finish(table, played[label]) for label, table in tables.items()}
    finally:
        for table in tables.values():
            table.close()


def figures(run: Run) -> dict[str, Any]:
    timed = sorted(press.ms for press in run.presses if press.ms is not None)
    sent = [press.data_bytes for press in run.presses if press.ms is not None]
    return {
        "presses": len(run.presses), "timed": len(timed),
        "no_frame": [p.name for p in run.presses if p.ms is None and p.answered],
        "unanswered": [p.name for p in run.presses if not p.answered],
        "p50": statistics.median(timed), "p99": plain.percentile(timed, 0.99),
        "max": timed[-1], "bytes_mean": statistics.fmean(sent), "bytes_max": max(sent),
        "bytes_median": statistics.median(sent), "full_frames": sent.count(FULL_FRAME),
        "medians": run.game_medians, "games_alike": run.games_alike, "panel_ok": run.panel_ok,
        "score": run.score,
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
    return {"p50": statistics.median(times), "p99": plain.percentile(times, 0.99)}


FIRST_FRAME = f"""
import time
t_start = time.perf_counter()
import pathlib, sys
import luma.core.device
try:
    from drivers import Panel
except ImportError:  # a checkout before the display went through luma (--root)
    from drivers import PageDiffDisplay as Panel
from firmware.app import Referee
from firmware.config import Config
from {STORE_MODULE} import Store
state = pathlib.Path(sys.argv[1])
device = luma.core.device.dummy(width=128, height=64, mode="1")
device.persist = True
referee = Referee(Config(state_dir=state), Store(state), display=Panel(device))
assert referee.refresh()
t_frame = time.perf_counter()
print(t_start, t_frame, referee.view().kind, referee.view().hand)
"""


def first_frame(state_dir: Path) -> tuple[float, float, str]:
    """(s from spawning to first frame, s from interpreter up to first frame, what it showed)."""
    spawned = time.perf_counter()  # CLOCK_MONOTONIC: the same clock in the child
    out = subprocess.run([sys.executable, "-c", FIRST_FRAME, str(state_dir)],
                         cwd=tempfile.gettempdir(), check=True, capture_output=True,
                         text=True).stdout.split()
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
        makers: dict[str, Callable[[int], Path]] = {
            "fresh": lambda i: Path(fresh_root) / str(i), "resume": lambda i: Path(resume)}
        for label, make_dir in makers.items():
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
    try:
        play(table, SEATS_GAME)
        assert table.referee.game.winner is not None
    finally:
        table.close()
    status = Path("/proc/self/status").read_text().splitlines()
    fields = dict(line.split(":", 1) for line in status if line.startswith(("VmRSS", "VmHWM")))
    print(json.dumps({key: int(value.split()[0]) for key, value in fields.items()}))


def rss() -> dict[str, int]:
    with tempfile.TemporaryDirectory() as state:
        out = subprocess.run([sys.executable, __file__, "--rss-child", state],
                             check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def press_rows(label: str, figure: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    def ok(good: bool) -> str:
        return "ok" if good else "OVER"

    return [(f"(a) pin edge -> panel's last byte, {label}",
             f"p50 {figure['p50']:.2f} / p99 {figure['p99']:.2f} / max {figure['max']:.2f} ms"
             f" (the games' medians {min(figure['medians']):.2f}–"
             f"{max(figure['medians']):.2f})",
             f"p99 < {BUDGET_P99_MS:.0f} ms", ok(figure["p99"] < BUDGET_P99_MS))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=4, help="games of 75 presses for (a)")
    parser.add_argument("--starts", type=int, default=5, help="process starts for (b)")
    parser.add_argument("--here", action="store_true",
                        help="measure in this interpreter, not in a plain install")
    parser.add_argument("--rss-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child is not None:
        rss_child(args.rss_child)
        return 0
    if not args.here and not plain.in_plain_install():
        return plain.rerun(__file__, sys.argv[1:])

    with tempfile.TemporaryDirectory() as disk, tempfile.TemporaryDirectory(
            dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as ram:
        runs = latency({"journal on disk": Path(disk), "journal in RAM": Path(ram)}, args.games)
    with tempfile.TemporaryDirectory() as disk:
        commit = commit_times(Path(disk))
    boot = starts(args.starts)
    memory = rss()

    def ok(good: bool) -> str:
        return "ok" if good else "OVER"

    results = {label: figures(run) for label, run in runs.items()}
    on_disk = results["journal on disk"]
    rows: list[tuple[str, str, str, str]] = []
    for label, figure in results.items():
        rows += press_rows(label, figure)
    rows.append(("    context: journal commit alone, disk",
                 f"p50 {commit['p50']:.2f} / p99 {commit['p99']:.2f} ms (Store.append)", "", ""))
    for label, figure in results.items():
        checks = ("games alike" if figure["games_alike"] else "GAMES DIFFER") + ", " + (
            "panel = last frame" if figure["panel_ok"] else "PANEL DIFFERS")
        rows.append((f"    presses, {label}",
                     f"{figure['presses']}: {figure['timed']} timed, "
                     f"{len(figure['no_frame'])} no frame"
                     f"{' ' + ' '.join(figure['no_frame']) if figure['no_frame'] else ''}, "
                     f"{len(figure['unanswered'])} unanswered; final {figure['score']}; "
                     f"{checks}", "", ""))
    for label in ("fresh", "resume"):
        figure = boot[label]
        rows.append((f"(b) start -> first frame, {label}",
                     f"median {figure['median']:.3f} / max {figure['max']:.3f} s "
                     f"(in-process {figure['in_process']:.3f} s)",
                     f"< {BUDGET_START_S} s", ok(figure["max"] < BUDGET_START_S)))
    rows.append(("(c) bytes to the display per press",
                 f"mean {on_disk['bytes_mean']:.0f} / median {on_disk['bytes_median']:.0f} / "
                 f"max {on_disk['bytes_max']} ({on_disk['full_frames']} full); on the wire "
                 f"at SPI's 8 MHz {on_disk['bytes_mean'] * SPI_BYTE_US / 1000:.1f} / "
                 f"{on_disk['bytes_max'] * SPI_BYTE_US / 1000:.1f} ms, at I2C's 400 kHz "
                 f"{on_disk['bytes_mean'] * I2C_BYTE_US / 1000:.1f} / "
                 f"{on_disk['bytes_max'] * I2C_BYTE_US / 1000:.1f} ms",
                 f"< {FULL_FRAME} (full frame)", ok(on_disk["bytes_mean"] < FULL_FRAME)))
    rows.append(("(d) resident memory after a game",
                 f"VmRSS {memory['VmRSS'] / 1024:.1f} MB, VmHWM {memory['VmHWM'] / 1024:.1f} MB",
                 f"< {BUDGET_RSS_MB:.0f} MB", ok(memory["VmHWM"] / 1024 < BUDGET_RSS_MB)))
    print(f"on-table app budgets (Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"firmware from {plain.where_from()}, {args.games} games a table, in turn)")
    width = max(len(row[0]) for row in rows)
    fig = max(len(row[1]) for row in rows)
    print(f"{'measure':<{width}}  {'figure':<{fig}}  {'budget':<22} verdict")
    for name, figure_text, budget, verdict in rows:
        print(f"{name:<{width}}  {figure_text:<{fig}}  {budget:<22} {verdict}")
    good = all(f["games_alike"] and f["panel_ok"] and not f["unanswered"]
               for f in results.values())
    return 0 if good else 1


if __name__ == "__main__":
    raise SystemExit(main())
