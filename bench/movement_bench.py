"""How fair the progressive movement is: for 8 to 64 players and 4 to 12
rounds, the most times any two players partnered, opposed, the most rounds a
player sat at one table number, and the bye spread (the most byes anyone had
when someone still had fewer than one less: 1 means fair), for today's
movement (``firmware.club.movement.progressive``) beside the one before it
(``progressive_v1`` below, the circle method alone, kept here for the
comparison only).  Each figure has its floor beside it: what no movement can
beat with these numbers.

    .venv/bin/python bench/movement_bench.py [--players 8-64] [--rounds 4-12] [--json OUT]

The rounds are seated one after another as the director seats them, so the
figures after 12 rounds include those after 4, 5, ... 11.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from euchre_core import Seat  # noqa: E402
from firmware.club.movement import Tables, circle, progressive  # noqa: E402


def progressive_v1(players: Sequence[str], round_number: int,
                   past_byes: Counter[str] | None = None) -> tuple[Tables, list[str]]:
    """The movement before issue 24 (git 434f0ac, firmware/club/movement.py):
    partners by the circle method, pairs of pairs seated in ring order, a
    whole circle pair sitting out when the pairs are odd."""
    byes_so_far = past_byes or Counter()
    pairs: list[tuple[str, str]] = []
    byes: list[str] = []
    for first, second in circle(players, round_number):
        if first is None or second is None:
            byes.extend(p for p in (first, second) if p is not None)
        else:
            pairs.append((first, second))
    if len(pairs) % 2:
        out = min(reversed(range(len(pairs))),
                  key=lambda i: byes_so_far[pairs[i][0]] + byes_so_far[pairs[i][1]])
        byes.extend(pairs.pop(out))
    tables = [{Seat.N: a[0], Seat.S: a[1], Seat.E: b[0], Seat.W: b[1]}
              for a, b in zip(pairs[0::2], pairs[1::2])]
    return tables, byes


Seat_ = tuple[Tables, list[str]]
Movement = Callable[[list[str], list[Seat_]], Seat_]


def new(players: list[str], past: list[Seat_]) -> Seat_:
    return progressive(players, past)


def old(players: list[str], past: list[Seat_]) -> Seat_:
    byes: Counter[str] = Counter(name for _, out in past for name in out)
    return progressive_v1(players, len(past) + 1, byes)


def night(movement: Movement, count: int, rounds: int) -> tuple[list[dict[str, int]], float]:
    """Seat ``rounds`` rounds; the figures after each round, and the slowest seating (s)."""
    players = [f"P{i:02d}" for i in range(count)]
    past: list[Seat_] = []
    partnered: Counter[frozenset[str]] = Counter()
    opposed: Counter[frozenset[str]] = Counter()
    visits: Counter[tuple[str, int]] = Counter()
    byes: Counter[str] = Counter()
    played: Counter[str] = Counter()
    figures = []
    spread = 0
    slowest = 0.0
    tables_count = count // 4
    for _ in range(rounds):
        start = time.perf_counter()
        tables, out = movement(players, past)
        slowest = max(slowest, time.perf_counter() - start)
        past.append((tables, out))
        byes.update(out)
        spread = max(spread, max(byes[p] for p in players) - min(byes[p] for p in players))
        for index, seats in enumerate(tables):
            for seat in seats:
                played[seats[seat]] += 1
                visits[(seats[seat], index)] += 1
                opposed[frozenset((seats[seat], seats[seat.left]))] += 1
            partnered[frozenset((seats[Seat.N], seats[Seat.S]))] += 1
            partnered[frozenset((seats[Seat.E], seats[Seat.W]))] += 1
        most = max(played.values())
        figures.append({
            "partnered": max(partnered.values()),
            "partnered_floor": math.ceil(most / (count - 1)),
            "opposed": max(opposed.values()),
            "opposed_floor": math.ceil(2 * most / (count - 1)),
            "one_table": max(visits.values()),
            "one_table_floor": math.ceil(most / tables_count),
            "bye_spread": spread,
        })
    return figures, slowest


def main() -> None:
    parser = argparse.ArgumentParser(prog="movement_bench.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", default="8-64", help="a range, e.g. 8-64 (default)")
    parser.add_argument("--rounds", default="4-12", help="a range, e.g. 4-12 (default)")
    parser.add_argument("--json", type=Path, help="write every figure here too")
    args = parser.parse_args()
    low_p, high_p = (int(x) for x in args.players.split("-"))
    low_r, high_r = (int(x) for x in args.rounds.split("-"))
    rows = []
    slowest = 0.0
    for count in range(low_p, high_p + 1):
        results = {}
        for name, movement in (("new", new), ("old", old)):
            figures, seconds = night(movement, count, high_r)
            results[name] = figures
            if name == "new":
                slowest = max(slowest, seconds)
        for rounds in range(low_r, high_r + 1):
            rows.append({"players": count, "rounds": rounds,
                         **{f"{name}_{key}": value
                            for name in ("new", "old")
                            for key, value in results[name][rounds - 1].items()}})
    keys = ("partnered", "opposed", "one_table", "bye_spread")
    print(f"{len(rows)} nights ({args.players} players x {args.rounds} rounds); "
          "worst figure, and nights above the floor (bye spread: nights above 1)")
    print(f"{'':12}{'new':>18}{'old':>18}")
    for key in keys:
        cells = []
        for name in ("new", "old"):
            worst = max(row[f"{name}_{key}"] for row in rows)
            if key == "bye_spread":
                above = sum(row[f"{name}_{key}"] > 1 for row in rows)
            else:
                above = sum(row[f"{name}_{key}"] > row[f"new_{key}_floor"] for row in rows)
            cells.append(f"{worst:>6} ({above:>3} above)")
        print(f"{key:12}{cells[0]:>18}{cells[1]:>18}")
    print()
    print("players rounds | partnered new/old/floor | opposed new/old/floor | "
          "one table new/old/floor | bye spread new/old")
    for row in rows:
        if row["rounds"] not in (4, 8, 12) or row["players"] % 4 not in (0, 2):
            continue
        print(f"{row['players']:>7} {row['rounds']:>6} | "
              + " | ".join(f"{row['new_' + k]:>5} {row['old_' + k]:>3} "
                           f"{row['new_' + k + '_floor']:>3}"
                           for k in ("partnered", "opposed", "one_table"))
              + f" | {row['new_bye_spread']:>5} {row['old_bye_spread']:>3}")
    print(f"\nslowest seating of one round (new): {slowest * 1000:.0f} ms")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
