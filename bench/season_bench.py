"""How long `club season` takes to replay a season: N nights of P players x R
rounds of H hands (random legal winner-level play fed to a real Director, as
its boxes' lines), then `euchre-referee club season --nights ...` timed as a
process (the median of --runs).

    .venv/bin/python bench/season_bench.py [--nights 10] [--players 64] [--rounds 8]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from euchre_core import Game
from euchre_core.events import Players, SetRules
from firmware.club.director import Director
from firmware.club.protocol import EntryMessage, RoundFormat, Status, entries_topic, status_topic
from firmware.club.simulate import WINNER_LEVEL


def night(path: Path, players: int, rounds: int, hands: int, seed: int) -> int:
    """One night's director state directory; the number of lines its tables sent."""
    director = Director(path)
    rng = random.Random(seed)
    sent = 0
    for number in range(players):
        director.register(f"Player {number:03d}")
    for _ in range(rounds):
        assignment = director.start_round(RoundFormat(hands=hands))
        for table, seats in assignment.tables.items():
            rules = assignment.format.rules(assignment.rules)
            game = Game(rules=rules, names=dict(seats))
            lines = [SetRules(rules).line(), Players.from_names(seats).line()]
            while game.hands_played < hands:
                entry = rng.choice([e for e in game.legal_entries()
                                    if isinstance(e, WINNER_LEVEL)])
                game.push(entry)
                lines.append(entry.line())
            box = f"box{table}"
            director.receive(status_topic(director.event, table),
                             Status(table, box, True, assignment.round, 1).encode())
            for seq, line in enumerate(lines):
                director.receive(entries_topic(director.event, table), EntryMessage(
                    table, box, assignment.round, assignment.round, seq, line).encode())
            sent += len(lines)
    director.close()
    return sent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nights", type=int, default=10)
    parser.add_argument("--players", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--hands", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        dirs = [Path(work) / f"night-{n}" for n in range(args.nights)]
        lines = sum(night(d, args.players, args.rounds, args.hands, n)
                    for n, d in enumerate(dirs))
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "firmware", "club", "season", "--out",
                            str(Path(work) / "season"), "--nights", *map(str, dirs)],
                           check=True, capture_output=True)
            times.append(time.perf_counter() - start)
    print(f"{args.nights} nights x {args.players} players x {args.rounds} rounds x "
          f"{args.hands} hands ({lines} journal lines): club season median "
          f"{statistics.median(times):.2f} s (min {min(times):.2f}, max {max(times):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
