"""A club night at scale: 40 tables x 12 rounds through a real mosquitto.

    .venv/bin/python bench/club_bench.py [--tables 40] [--rounds 12] [--hands 8] [--pace 0.1]

The broker is Debian's mosquitto on a free localhost port; the director is a
real ``euchre-referee club serve`` process (its CPU time and peak memory read
from ``/proc``); the boxes are real :class:`~firmware.app.Referee` main loops
with their journals and :class:`~firmware.club.box.ClubBox`, one thread each,
in this process, autoplaying random legal winner-level entries (an entry
every ``--pace`` seconds a table).

Measured:
- messages per second through the broker: everything on the event's topics,
  counted by one more subscriber, over the night's wall time;
- the director's CPU (user+system seconds, and as a share of the wall time)
  and its peak resident memory (VmHWM);
- from an entry on a box (the moment its journal commit returned) to the
  live page's stream (``/events``, read here) showing the table with that
  line: p50, p99, max, over every entry of the night.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from support.broker import Mosquitto  # noqa: E402

from firmware.app import Referee  # noqa: E402
from firmware.club.box import ClubBox  # noqa: E402
from firmware.club.mqtt import close_client, open_client  # noqa: E402
from firmware.club.protocol import parse_broker_url  # noqa: E402
from firmware.club.simulate import AutoPlayer, free_port, post_json  # noqa: E402
from firmware.config import Config  # noqa: E402
from firmware.store import Store  # noqa: E402

EVENT = "bench"


class Box:
    """One table: a referee's main loop in a thread, joined to the club, autoplaying."""

    def __init__(self, state_dir: Path, broker: str, table: int, pace: float,
                 written: dict[tuple[int, int, int], float]) -> None:
        self.events: queue.Queue[Any] = queue.Queue()
        self.store = Store(state_dir)
        self.referee = Referee(Config(state_dir=state_dir), self.store,
                               renderer=lambda view: view)
        self.box = ClubBox(self.referee, self.events, broker=broker, table=table, event=EVENT)
        self.table = table

        def journalled(line: str) -> None:  # main loop, right after the commit
            game_id = self.referee.game_id
            round_number = self.box.state.rounds.get(game_id)
            if round_number is not None:
                seq = len(self.store.lines(game_id)) - 1
                written[(table, round_number, seq)] = time.monotonic()

        self.referee.listeners.append(journalled)
        self.box.start()
        self.player = AutoPlayer(self.box, self.events, seed=table, pace=pace)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.referee.run, args=(self.events,),
                                       kwargs={"stop": self.stopping.is_set, "poll": 0.2},
                                       daemon=True)
        self.thread.start()
        self.player.start()

    def close(self) -> None:
        self.player.stopped.set()
        self.stopping.set()
        self.thread.join(10)
        self.box.close()
        self.store.close()


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
    http = free_port()
    url = f"http://127.0.0.1:{http}"
    with open(work / "director.log", "wb") as log:
        director = subprocess.Popen(
            [sys.executable, "-m", "firmware", "club", "serve", "--broker", broker.url,
             "--event", EVENT, "--state-dir", str(work / "director"),
             "--http", f"127.0.0.1:{http}"], stdout=log, stderr=log)
    counted = [0]
    counter = open_client(parse_broker_url(broker.url), "bench-counter",
                          on_message=lambda t, p: counted.__setitem__(0, counted[0] + 1),
                          subscriptions=[f"euchre/{EVENT}/#"])
    written: dict[tuple[int, int, int], float] = {}
    shown: dict[tuple[int, int, int], float] = {}
    boxes: list[Box] = []
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(url + "/standings.json", timeout=5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        for index in range(4 * args.tables):
            post_json(url + "/players", {"name": f"Player {index + 1:03d}"})
        boxes = [Box(work / f"box-{t}", broker.url, t, args.pace, written)
                 for t in range(1, args.tables + 1)]
        done = {"round": 0, "all": False}

        def watch() -> None:  # the page's stream, as a projector's browser reads it
            with urllib.request.urlopen(url + "/events", timeout=600) as stream:
                for raw in stream:
                    line = raw.decode()
                    if not line.startswith("data: "):
                        continue
                    now = time.monotonic()
                    board = json.loads(line[6:])
                    for table in board["tables"]:
                        for seq in range(table["entries"]):
                            shown.setdefault((table["table"], table["round"], seq), now)
                    done["round"] = board["round"]
                    done["all"] = bool(board["tables"]) and all(
                        t["done"] for t in board["tables"])

        threading.Thread(target=watch, daemon=True).start()
        time.sleep(2)  # the boxes connect
        start = time.monotonic()
        counted[0] = 0
        cpu_before, _ = proc_figures(director.pid)
        for round_number in range(1, args.rounds + 1):
            post_json(url + "/rounds", {"hands": args.hands})
            while not (done["round"] == round_number and done["all"]):
                time.sleep(0.1)
            print(f"round {round_number} done at {time.monotonic() - start:.1f} s", flush=True)
        wall = time.monotonic() - start
        cpu_after, peak = proc_figures(director.pid)
        time.sleep(1)
        latencies = [shown[key] - at for key, at in written.items() if key in shown]
        entries = len(written)
        print()
        print(f"club night: {args.tables} tables x {args.rounds} rounds of {args.hands} hands, "
              f"pace {args.pace:g} s; Python {platform.python_version()}, "
              f"{os.cpu_count()} CPUs")
        print(f"  entries journalled on the boxes   {entries}")
        print(f"  night's wall time                 {wall:.1f} s")
        print(f"  messages through the broker       {counted[0]} "
              f"({counted[0] / wall:.0f}/s; entries, acks, statuses, assignments)")
        print(f"  director CPU                      {cpu_after - cpu_before:.1f} s "
              f"({100 * (cpu_after - cpu_before) / wall:.0f}% of one core)")
        print(f"  director peak memory (VmHWM)      {peak / 1024:.1f} MB")
        final = json.loads(urllib.request.urlopen(url + "/board.json", timeout=10).read())
        print(f"  resends by the boxes (no ack)     {sum(b.box.resends for b in boxes)}; "
              f"duplicates dropped by the director {final['duplicates']}")
        print(f"  entry on a box -> page's stream   p50 {1000 * percentile(latencies, 0.5):.0f} ms"
              f", p99 {1000 * percentile(latencies, 0.99):.0f} ms, "
              f"max {1000 * max(latencies):.0f} ms ({len(latencies)} of {entries} seen)")
    finally:
        for box in boxes:
            box.close()
        close_client(counter)
        director.terminate()
        director.wait(15)
        broker.stop()


if __name__ == "__main__":
    main()
