"""A box's statistics (issue 26): how long the kept games take to replay.

The statistics are never stored: ``stats`` over the serial link, ``games
--stats`` and the box's "Stats" page replay every kept game with the engine.
This keeps N random whole games (each entry a random legal one, winner level,
as the buttons enter them) in a real journal in a temporary directory, then
times, median of the rounds:

- ``stats_of(kept_logs(store))``: every game read and replayed (the link's
  ``stats``, ``games --stats``), in ms and per game;
- the Stats page opened a second time after one more entry
  (:class:`firmware.stats.StatsCache`: only the game that changed is replayed).

Run:  .venv/bin/python bench/stats_bench.py [--games 500] [--rounds 5]
A Pi Zero 2 W is roughly 10x slower than a laptop core (instructions per
second): scale the per-game figure to estimate a box.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from euchre_core import Game, write_log  # noqa: E402
from euchre_core.events import Undo  # noqa: E402
from firmware.journal import Store  # noqa: E402
from firmware.stats import StatsCache, kept_logs, stats_of  # noqa: E402


def random_game(rng: random.Random) -> list[str]:
    """A whole game's lines (no header), each entry a random legal one."""
    game = Game()
    while game.winner is None:
        game.push(rng.choice([e for e in game.legal_entries() if not isinstance(e, Undo)]))
    return write_log(game).splitlines()[1:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as state:
        store = Store(Path(state))
        hands = 0
        for _ in range(args.games):
            lines = random_game(rng)
            hands += sum(line.startswith("score ") for line in lines)
            store.new_game(lines)
        whole, again = [], []
        for _ in range(args.rounds):
            start = time.perf_counter()
            stats = stats_of(kept_logs(store))
            whole.append(time.perf_counter() - start)
            cache = StatsCache()
            cache.stats(store)
            live = store.new_game(["game dealer=N"])
            store.append(live, "make S H")
            start = time.perf_counter()
            cache.stats(store)
            again.append(time.perf_counter() - start)
        store.close()
    assert stats.games >= args.games and not stats.unreadable  # (+ the live games added)
    median = statistics.median(whole)
    print(f"{args.games} kept games ({hands} hands), {len(stats.players)} players")
    print(f"stats, every game replayed: {median * 1000:.0f} ms "
          f"({median / args.games * 1000:.2f} ms a game; "
          f"min-max {min(whole) * 1000:.0f}-{max(whole) * 1000:.0f} ms, {args.rounds} rounds)")
    print(f"Stats page again after one entry (cache): {statistics.median(again) * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
