"""Serial replay throughput: a long log over pseudo-terminals against the wire time at 115200 baud.

    .venv/bin/python bench/serial_bench.py [--games 50] [--rounds 5] [--baudrate 115200]

A referee runs its main loop in a thread with its serial service; the host
is the laptop tool's own client (``firmware.link.client.DeviceLink``), pyserial at
both ends, ports set to ``--baudrate`` (a pseudo-terminal does not pace the
bytes, so the setting only says what a real cable would be).  One round is
``euchre-referee send``'s exchange: ``replay N``, its ``ok``, the N log lines
(each with a checksum added), the framed verdict.  Timed from the request to
the last line of the verdict; best of ``--rounds``.

Side by side with the wire time of the same bytes (both directions, counted
by the device's link) at the baud rate, 10 bits a byte (8N1): the spec's
budget is that replay over the link is limited by the wire, not the CPU.

Transports: a pty pair joined back to back (``drivers.pseudoterminal.NullModem``;
the device opens its end by path, as ``/dev/ttyGS0`` on a Pi) and one pty
whose master the device holds (what ``euchre-referee emulate`` offers).
Workloads: ``examples/full-game.log`` played ``--games`` times one after
another (winner level), and random card-level games from OpenSpiel when
open-spiel is installed (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import json
import platform
import queue
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from drivers.pseudoterminal import NullModem, PtyEndpoint  # noqa: E402
from euchre_core import replay  # noqa: E402
from euchre_core.log import HEADER  # noqa: E402
from firmware.app import Referee  # noqa: E402
from firmware.config import Config  # noqa: E402
from firmware.journal import Store  # noqa: E402
from firmware.link.client import DeviceLink, log_lines  # noqa: E402
from firmware.link.service import SerialService  # noqa: E402


def winner_level_log(games: int) -> str:
    """``examples/full-game.log``'s game, ``games`` times in one log."""
    body = (ROOT / "examples" / "full-game.log").read_text(encoding="utf-8").splitlines()
    assert body[0] == HEADER
    return "\n".join([HEADER, *body[1:] * games]) + "\n"


def card_level_log(games: int, seed: int = 2026) -> str | None:
    """Random card-level games from OpenSpiel in one log, or None without open-spiel."""
    try:
        from openspiel_euchre import generate_games
    except ImportError:
        return None
    out = [HEADER]
    for game in generate_games(games, seed):
        out.extend(line for line in game.log_text.splitlines() if line != HEADER)
    return "\n".join(out) + "\n"


@contextmanager
def running_device(baudrate: int, transport: str) -> Iterator[tuple[SerialService, str]]:
    """A referee with its serial service; yields it and the path the host opens."""
    with tempfile.TemporaryDirectory() as state:
        store = Store(Path(state))
        referee = Referee(Config(state_dir=Path(state)), store, renderer=lambda view: view)
        events: queue.Queue[Any] = queue.Queue()
        stop = threading.Event()
        loop = threading.Thread(target=referee.run, args=(events,),
                                kwargs={"stop": stop.is_set, "poll": 0.05}, daemon=True)
        loop.start()
        cable = NullModem() if transport == "pair" else None
        try:
            if cable is not None:
                service = SerialService.open(cable.paths[0], baudrate, events, referee)
                yield service, cable.paths[1]
            else:
                endpoint = PtyEndpoint(baudrate)
                service = SerialService.open(endpoint, baudrate, events, referee)
                yield service, endpoint.slave_path
        finally:
            service.close()
            if cable is not None:
                cable.close()
            stop.set()
            loop.join(5)
            store.close()


def measure(text: str, rounds: int, baudrate: int, transport: str) -> dict[str, float]:
    lines = log_lines(text.encode("utf-8"))
    expected = replay(text)
    assert expected.error is None, expected.error
    best = float("inf")
    traffic = 0
    with running_device(baudrate, transport) as (service, path):
        with DeviceLink(path, baudrate, timeout=60) as link:
            link.sync()
            for _ in range(rounds):
                before = service.link.bytes_in + service.link.bytes_out
                start = time.perf_counter()
                answer = link.replay(lines)
                elapsed = time.perf_counter() - start
                traffic = service.link.bytes_in + service.link.bytes_out - before
                assert answer.ok and answer.lines, answer
                verdict = json.loads(answer.lines[0])
                assert verdict["error"] is None and verdict["winner"] is not None, verdict
                best = min(best, elapsed)
    wire = traffic * 10 / baudrate
    return {"lines": len(lines), "bytes": traffic, "time": best, "wire": wire}


def best_of(rounds: int, job: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        job()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50, help="games in each log (default 50)")
    parser.add_argument("--rounds", type=int, default=5, help="best of (default 5)")
    parser.add_argument("--baudrate", type=int, default=115200)
    args = parser.parse_args()
    workloads = [(f"winner level, {args.games} games", winner_level_log(args.games))]
    cards = card_level_log(args.games)
    if cards is not None:
        workloads.append((f"card level, {args.games} games", cards))
    transports = [("pty pair", "pair"), ("pty (emulate)", "master")]
    print(f"python {platform.python_version()} on {platform.machine()}; pyserial at both ends, "
          f"{args.baudrate} baud setting; best of {args.rounds}")
    print(f"{'workload':30} {'transport':14} {'lines':>6} {'bytes':>8} "
          f"{'pty time':>9} {'lines/s':>8} {'wire time':>10} {'lines/s':>8} {'wire/pty':>9}")
    for name, text in workloads:
        for label, transport in transports:
            row = measure(text, args.rounds, args.baudrate, transport)
            print(f"{name:30} {label:14} {row['lines']:6.0f} {row['bytes']:8.0f} "
                  f"{row['time']:8.3f}s {row['lines'] / row['time']:8.0f} "
                  f"{row['wire']:9.2f}s {row['lines'] / row['wire']:8.0f} "
                  f"{row['wire'] / row['time']:8.1f}x")
        engine = best_of(args.rounds, lambda text=text: replay(text))
        print(f"{'':30} {'engine alone':14} {text.count(chr(10)):6d} {'':8} {engine:8.3f}s "
              f"{text.count(chr(10)) / engine:8.0f}   (euchre_core.replay, no link)")
    print("wire time: the bytes both ways at 10 bits a byte; wire/pty above 1x means the link "
          "keeps up with the wire")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
