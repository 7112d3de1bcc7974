"""Flushes per entry: how many, on which file, and what they cost a press on a slow device.

    apt-get install strace                   # once
    sudo .venv/bin/python bench/flush_bench.py [--games 8] [--delay-ms 20] [--here]

Every entry is flushed twice before its frame: SQLite's commit (WAL,
``synchronous=FULL``) and then the record of acknowledged lines
(``journal.acks``).  Two parts:

1. **count**: one whole game (``SEATS_GAME``, 75 presses) on
   ``latency_bench.py``'s table (``euchre-referee run``'s wiring, mock pins,
   the panel on a socket pair) under ``strace -f -y -e
   trace=fsync,fdatasync,getppid``; the bench calls ``os.getppid()`` before
   each press's edge and when the press is answered, so each flush is put to
   its press, and to its file.  Presses are told apart by what the journal
   got: an entry (a line), the entry flow's position only, or nothing.
2. **slow device**: the journal on ext4 made on a loop device over a file
   (set up here and torn down after), and the same with each flush slowed:
   a device-mapper ``delay`` target of ``--delay-ms`` between the loop device
   and ext4 when the kernel has one (every read and write delayed, as a slow
   card is), else each ``fsync``/``fdatasync`` of the process delayed by
   ``--delay-ms`` with strace's ``inject=...:delay_exit=`` (the flush itself
   still reaches the loop device), and it says which.  On each, press
   latency (the pin's edge to the panel's last byte) with the journal as it
   is (2 flushes an entry, none for a press that stores only the flow's
   position: the record is written only when lines were added), with a
   record at every commit as before (2 an entry, 1 for the flow), and with
   ``journal.acks`` written but never flushed (1 an entry: what the journal
   would do if SQLite's commit carried both promises).  The bench
   replaces the record's method and the ``os.fdatasync`` it calls, in its own
   process.  Whole games of each in turn, p50/p99/max and the spread of the
   games' medians.

Needs root (losetup, mount; dmsetup if there), strace, and says so when it
has not got them.  It runs in a plain install of the checkout
(``bench/plain.py``) unless ``--here``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by a test
    sys.path.append(str(Path(__file__).resolve().parent))
import plain  # noqa: E402

IMAGE_MB = 256
VARIANTS = ("as is", "a record every commit", "acks never flushed")
"""The journal as it is (an entry: SQLite's commit and the record, 2 flushes;
a press that stores only the flow's position: none); as it was before, a
record at every commit (an entry 2, the flow 1); the record written but never
flushed (an entry 1 flush, the flow 0)."""


# --- the children (run in their own process, under strace or not) ------------------


def child_count(state: Path) -> None:
    """One game; a getppid() at each end of each press; one JSON line a press."""
    import latency_bench as bench

    table = bench.Table(state, poll=3600.0)
    table.answered = os.getppid
    try:
        kinds = [kind for _, kind in play(table, bench.SEATS_GAME, os.getppid)]
    finally:
        table.close()
    print(json.dumps(kinds))


def stored(table: Any) -> tuple[int, str]:
    """Lines in the journal, and the current game's stored flow position."""
    games = table.store.games()
    return sum(info[2] for info in games), table.store.flow(games[-1][0]) if games else ""


def play(table: Any, names: list[str], before: Any = None) -> list[tuple[Any, str]]:
    """Each press, and what the journal got from it: an entry (a line), the
    flow's position only, or nothing (looked up between presses)."""
    out = []
    lines, flow = stored(table)
    for name in names:
        if before is not None:
            before()
        press = table.press(name)
        now = stored(table)
        out.append((press, "entry" if now[0] > lines else "flow only" if now[1] != flow
                    else "nothing"))
        lines, flow = now
    return out


class _Os:
    """``os`` for the module that writes ``journal.acks``: ``fdatasync`` does
    nothing while ``flush`` is false (everything else is ``os``'s)."""

    flush = True

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def fdatasync(self, fd: int) -> None:
        if self.flush:
            os.fdatasync(fd)


def child_latency(state: Path, games: int) -> None:
    """``games`` whole games, the variants in turn; JSON: each variant's games' press times."""
    import latency_bench as bench

    ack_file = bench.ack_file_class()
    patched = _Os()
    sys.modules[ack_file.__module__].os = patched  # type: ignore[attr-defined]
    real_record = ack_file.record
    variant = VARIANTS[0]

    def record(self: Any, count: int, crc: int) -> None:
        """The record; in the second variant written (and flushed) even when it
        says what the last one said, as every commit once did."""
        if variant == VARIANTS[1]:
            self.last = None
        real_record(self, count, crc)

    ack_file.record = record
    table = bench.Table(state)
    times: dict[str, list[list[tuple[float, str]]]] = {variant: [] for variant in VARIANTS}
    played: list[list[Any]] = []
    try:
        for number in range(games):
            variant = VARIANTS[number % len(VARIANTS)]
            patched.flush = variant != VARIANTS[2]
            names = bench.SEATS_GAME if number == 0 else bench.NEXT_GAME + bench.SEATS_GAME[1:]
            presses = play(table, names)
            if any(press.ms is None for press, _ in presses):
                raise SystemExit(f"presses without a frame: {presses}")
            times[variant].append([(press.ms, kind) for press, kind in presses])
            played.append([press for press, _ in presses])
        result = bench.finish(table, played)
        if not (result.games_alike and result.panel_ok):
            raise SystemExit(f"games out of step or panel wrong: {result}")
    finally:
        table.close()
    print(json.dumps(times))


# --- part 1: counting ----------------------------------------------------------------

CALL = re.compile(r"^\d+\s+(fsync|fdatasync|getppid)\((?:\d+<([^>]*)>)?")


def count(state: Path, work: Path) -> list[str]:
    """Strace one game; the table of flushes a press by kind and file, as lines."""
    trace = work / "strace.out"
    done = subprocess.run(
        ["strace", "-f", "-y", "-qq", "-e", "trace=fsync,fdatasync,getppid", "-o", str(trace),
         sys.executable, __file__, "--child-count", str(state)],
        capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the counting child failed:\n{done.stderr[-3000:]}")
    kinds: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    presses: list[Counter[str]] = []
    inside = False
    for line in trace.read_text().splitlines():
        found = CALL.match(line)
        if found is None:
            continue
        call, path = found.groups()
        if call == "getppid":
            inside = not inside
            if inside:
                presses.append(Counter())
        elif inside:
            presses[-1][f"{call} {Path(path).name if path else '?'}"] += 1
    if len(presses) != len(kinds):
        raise SystemExit(f"{len(presses)} presses traced, {len(kinds)} played")
    out = [f"one game, {len(kinds)} presses (strace -f -y; flushes while a press was under "
           "way, each put to its press):"]
    for kind in ("entry", "flow only", "nothing"):
        mine = [press for press, k in zip(presses, kinds) if k == kind]
        if not mine:
            continue
        total: Counter[str] = Counter()
        for press in mine:
            total.update(press)
        each = ", ".join(f"{name} {number / len(mine):.2f}"
                         for name, number in sorted(total.items()))
        flushes = sorted(sum(press.values()) for press in mine)
        out.append(f"  {kind:<9} {len(mine):3} presses: flushes a press "
                   f"{statistics.fmean(flushes):.2f} ({flushes[0]}-{flushes[-1]}); "
                   f"by call and file: {each or 'none'}")
    return out


# --- part 2: a slow device ---------------------------------------------------------------


def run(command: list[str]) -> str:
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


def dm_delay_problem() -> str | None:
    """None if device-mapper's delay target can be used here, else why not."""
    if shutil.which("dmsetup") is None:
        return "no dmsetup (apt-get install dmsetup)"
    done = subprocess.run(["dmsetup", "targets"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return ("device-mapper is not in this kernel ("
                + (done.stderr.strip().splitlines() or ["dmsetup targets failed"])[0] + ")")
    if not re.search(r"^delay\b", done.stdout, re.M):
        return "device-mapper has no delay target (modprobe dm-delay)"
    return None


@contextmanager
def loop_ext4(folder: Path, name: str, delay_ms: int | None) -> Iterator[Path]:
    """ext4 on a loop device over a file in ``folder`` (on dm-delay if
    ``delay_ms``), mounted; its mount point.  Torn down after."""
    image = folder / f"{name}.img"
    mount = folder / f"{name}.mnt"
    mount.mkdir()
    with open(image, "wb") as file:
        file.truncate(IMAGE_MB << 20)
    with ExitStack() as undo:
        undo.callback(image.unlink)
        loop = run(["losetup", "--find", "--show", str(image)])
        undo.callback(subprocess.run, ["losetup", "-d", loop], check=False)
        device = loop
        if delay_ms is not None:
            sectors = (IMAGE_MB << 20) // 512
            mapped = f"euchre-bench-{os.getpid()}-{name}"
            run(["dmsetup", "create", mapped, "--table",
                 f"0 {sectors} delay {loop} 0 {delay_ms}"])
            undo.callback(subprocess.run, ["dmsetup", "remove", mapped], check=False)
            device = f"/dev/mapper/{mapped}"
        run(["mkfs.ext4", "-q", "-F", device])
        run(["mount", device, str(mount)])
        undo.callback(subprocess.run, ["umount", str(mount)], check=False)
        yield mount


Times = dict[str, list[list[tuple[float, str]]]]
"""Per variant, per game, each press's ms and what the journal got from it."""


def latency_on(mount: Path, games: int, wrap: list[str]) -> Times:
    state = mount / "state"
    done = subprocess.run([*wrap, sys.executable, __file__, "--child-latency", str(state),
                           "--games", str(games)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the latency child failed:\n{done.stderr[-3000:]}")
    result: Times = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def latency_lines(label: str, times: Times) -> list[str]:
    out = [label]
    for variant, games in times.items():
        every = sorted(ms for game in games for ms, _ in game)
        medians = [statistics.median(ms for ms, _ in game) for game in games]
        kinds = []
        for kind in ("entry", "flow only"):
            mine = [ms for game in games for ms, k in game if k == kind]
            if mine:
                kinds.append(f"{kind} {statistics.median(mine):.2f}")
        out.append(f"  {variant:<28} p50 {statistics.median(every):6.2f} / p99 "
                   f"{plain.percentile(every, 0.99):6.2f} / max {every[-1]:6.2f} ms"
                   f"  (p50 by kind: {', '.join(kinds)}; {len(every)} presses, {len(games)} "
                   f"games, their medians {min(medians):.2f}–{max(medians):.2f} ms)")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=9,
                        help="whole games on each device, the three variants in turn")
    parser.add_argument("--delay-ms", type=int, default=20)
    parser.add_argument("--count-only", action="store_true", help="part 1 only")
    parser.add_argument("--here", action="store_true",
                        help="measure in this interpreter, not in a plain install")
    parser.add_argument("--child-count", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--child-latency", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_count is not None:
        child_count(args.child_count)
        return 0
    if args.child_latency is not None:
        child_latency(args.child_latency, args.games)
        return 0
    if shutil.which("strace") is None:
        print("flush_bench: needs strace (apt-get install strace)")
        return 2
    if not args.here and not plain.in_plain_install():
        return plain.rerun(__file__, sys.argv[1:])

    print(f"flushes per entry (Python {sys.version.split()[0]}, firmware from "
          f"{plain.where_from()})", flush=True)
    with tempfile.TemporaryDirectory() as work:
        for line in count(Path(work) / "state", Path(work)):
            print(line, flush=True)
    if args.count_only:
        return 0
    missing = [tool for tool in ("losetup", "mkfs.ext4", "mount") if shutil.which(tool) is None]
    if os.geteuid() != 0 or missing:
        why = "not root" if os.geteuid() != 0 else f"no {', '.join(missing)}"
        print(f"slow device: not measured ({why}: a loop device and a mount need root: "
              "sudo .venv/bin/python bench/flush_bench.py)")
        return 2
    problem = dm_delay_problem()
    delay = args.delay_ms
    with tempfile.TemporaryDirectory(dir="/var/tmp") as work, ExitStack() as devices:
        fast = devices.enter_context(loop_ext4(Path(work), "fast", None))
        if problem is None:
            slow = devices.enter_context(loop_ext4(Path(work), "slow", delay))
            slow_label = f"ext4 on dm-delay ({delay} ms each read and write) on a loop device"
            wrap: list[str] = []
        else:
            print(f"slow device: no dm-delay here: {problem}; instead each fsync and "
                  f"fdatasync of the referee's process is delayed {delay} ms by strace "
                  "(inject=fsync,fdatasync:delay_exit), on the same loop device", flush=True)
            slow = fast
            slow_label = f"the same, each fsync/fdatasync {delay} ms longer (strace inject)"
            wrap = ["strace", "-f", "-qq", "--seccomp-bpf", "-o", "/dev/null",
                    "-e", "trace=fsync,fdatasync",
                    "-e", f"inject=fsync,fdatasync:delay_exit={delay * 1000}"]
        for line in latency_lines("press latency, journal on ext4 on a loop device over a "
                                  "file on this VM's disk:", latency_on(fast, args.games, [])):
            print(line, flush=True)
        if slow is fast:
            shutil.rmtree(fast / "state")
        for line in latency_lines(f"press latency, {slow_label}:",
                                  latency_on(slow, args.games, wrap)):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
