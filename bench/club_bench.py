"""A club night at scale: 40 tables x 12 rounds through a real mosquitto.

    .venv/bin/python bench/club_bench.py [--tables 40] [--rounds 12] [--hands 8] [--pace 0.1]

Everything is a real process, as in a hall: Debian's mosquitto on a free
localhost port, the director (``euchre-referee club serve``; its CPU time and
peak memory read from ``/proc``), and one ``euchre-referee club box
--autoplay`` per table (a real referee with its journal, entering a random
legal winner-level entry every ``--pace`` seconds; ``--trace`` writes the
moment each line's journal commit returned).

Measured:
- messages per second through the broker: everything on the event's topics,
  counted by one more subscriber, over the night's wall time;
- the director's CPU (user+system seconds, and as a share of the wall time)
  and its peak resident memory (VmHWM);
- from an entry on a box (its journal commit) to the live page's stream
  (``/events``, read here as a projector's browser reads it) showing that
  table with that line: p50, p99, max over every entry of the night.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from support.broker import Mosquitto  # noqa: E402

from firmware.club.mqtt import close_client, open_client  # noqa: E402
from firmware.club.protocol import parse_broker_url  # noqa: E402
from firmware.club.simulate import Night  # noqa: E402

EVENT = "bench"


def proc_figures(pid: int) -> tuple[float, int]:
    """(user+system CPU seconds, peak resident KiB) of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    status = Path(f"/proc/{pid}/status").read_text()
    peak = next(int(line.split()[1]) for line in status.splitlines()
                if line.startswith("VmHWM:"))
    return cpu, peak


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--hands", type=int, default=8)
    parser.add_argument("--pace", type=float, default=0.1,
                        help="seconds between a table's entries (default 0.1)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="club-bench-"))
    broker = Mosquitto(work / "broker")
    night = Night(broker.url, work / "night", tables=args.tables, event=EVENT, pace=args.pace,
                  resend_s=5.0, trace=True)
    counted = [0]
    counter = open_client(parse_broker_url(broker.url), "bench-counter",
                          on_message=lambda t, p: counted.__setitem__(0, counted[0] + 1),
                          subscriptions=[f"euchre/{EVENT}/#"])
    shown: dict[tuple[int, int, int], float] = {}
    state = {"round": 0, "all": False, "duplicates": 0}
    try:
        night.start()
        night.register(4 * args.tables)

        def watch() -> None:  # the page's stream, as a projector's browser reads it
            with urllib.request.urlopen(night.url + "/events", timeout=600) as stream:
                for raw in stream:
                    line = raw.decode()
                    if not line.startswith("data: "):
                        continue
                    now = time.time()
                    board = json.loads(line[6:])
                    for table in board["tables"]:
                        for seq in range(table["entries"]):
                            shown.setdefault((table["table"], table["round"], seq), now)
                    state["round"] = board["round"]
                    state["duplicates"] = board["duplicates"]
                    state["all"] = bool(board["tables"]) and all(
                        t["done"] for t in board["tables"])

        threading.Thread(target=watch, daemon=True).start()
        night.wait(lambda: all(night.box_dir(t).joinpath("club.json").exists()
                               for t in range(1, args.tables + 1)), 300, "the boxes start")
        time.sleep(3)  # the boxes connect
        assert night.director is not None
        start = time.monotonic()
        counted[0] = 0
        cpu_before, _ = proc_figures(night.director.pid)
        for round_number in range(1, args.rounds + 1):
            night.post("/rounds", {"hands": args.hands})
            while not (state["round"] == round_number and state["all"]):
                time.sleep(0.1)
            print(f"round {round_number} done at {time.monotonic() - start:.1f} s", flush=True)
        wall = time.monotonic() - start
        cpu_after, peak = proc_figures(night.director.pid)
        time.sleep(1)
        written: dict[tuple[int, int, int], float] = {}
        for table in range(1, args.tables + 1):
            for line in (night.workdir / f"box-{table}.trace").read_text().splitlines():
                t, r, seq, at = line.split()
                written.setdefault((int(t), int(r), int(seq)), float(at))
        latencies = [shown[key] - at for key, at in written.items() if key in shown]
        resends = sum(log.read_text().count("sending again")
                      for log in night.workdir.glob("box-*.log"))
        entries = len(written)
        print()
        print(f"club night: {args.tables} tables x {args.rounds} rounds of {args.hands} hands, "
              f"pace {args.pace:g} s; Python {platform.python_version()}, "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
        print(f"  entries journalled on the boxes   {entries}")
        print(f"  night's wall time                 {wall:.1f} s")
        print(f"  messages through the broker       {counted[0]} "
              f"({counted[0] / wall:.0f}/s; entries, acks, statuses, assignments)")
        print(f"  director CPU                      {cpu_after - cpu_before:.1f} s "
              f"({100 * (cpu_after - cpu_before) / wall:.0f}% of one core)")
        print(f"  director peak memory (VmHWM)      {peak / 1024:.1f} MB")
        print(f"  resends by the boxes (no ack)     {resends}; "
              f"duplicates dropped by the director {state['duplicates']}")
        print(f"  entry on a box -> page's stream   p50 {1000 * percentile(latencies, 0.5):.0f} ms"
              f", p99 {1000 * percentile(latencies, 0.99):.0f} ms, "
              f"max {1000 * max(latencies):.0f} ms ({len(latencies)} of {entries} seen)")
    finally:
        night.stop()
        close_client(counter)
        broker.stop()


if __name__ == "__main__":
    main()
