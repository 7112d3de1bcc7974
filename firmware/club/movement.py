"""Movements: who sits where each round.

:func:`progressive` pairs partners by the circle method (the round-robin
schedule: with P players, P even, each player partners every other player
exactly once in P-1 rounds), then seats pairs of pairs at tables, pair A at
N-S and pair B at E-W.  When the count is not a multiple of four the players
left over sit the round out (a bye), the byes going to those who have had the
fewest.

:func:`by_result` is winners up, losers down, from the round before;
:func:`north_stays` a chart from the first round's seating; :func:`fixed_pairs`
for partners who stay together all night.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from euchre_core import Seat, Team

Tables = list[dict[Seat, str]]


def progressive(players: Sequence[str], round_number: int,
                past_byes: Counter[str] | None = None) -> tuple[Tables, list[str]]:
    """Tables (table 1 first) and byes for round ``round_number`` (from 1)."""
    if len(players) < 4:
        raise ValueError(f"a round needs at least 4 players, not {len(players)}")
    byes_so_far = past_byes or Counter()
    ring: list[str | None] = list(players)
    if len(ring) % 2:
        ring.append(None)
    size = len(ring)
    turn = (round_number - 1) % (size - 1)
    others = ring[1:]
    arranged = [ring[0], *others[turn:], *others[:turn]]
    pairs: list[tuple[str, str]] = []
    byes: list[str] = []
    for index in range(size // 2):
        first, second = arranged[index], arranged[size - 1 - index]
        if first is None or second is None:
            byes.extend(p for p in (first, second) if p is not None)
        else:
            pairs.append((first, second))
    if len(pairs) % 2:
        # One whole pair sits out: the pair with the fewest byes so far (the last on a tie).
        out = min(reversed(range(len(pairs))),
                  key=lambda i: byes_so_far[pairs[i][0]] + byes_so_far[pairs[i][1]])
        byes.extend(pairs.pop(out))
    tables = [{Seat.N: a[0], Seat.S: a[1], Seat.E: b[0], Seat.W: b[1]}
              for a, b in zip(pairs[0::2], pairs[1::2])]
    return tables, byes


def by_result(previous: Sequence[dict[Seat, str]], winners: Sequence[Team]) -> Tables:
    """Winners up, losers down: after a round at tables 1..T (table 1 the top),
    the side that won at table t moves up to t-1 (table 1's winners stay) and
    the side that lost moves down to t+1 (the last table's losers stay); at
    the new table the two arriving pairs split, so everyone has a new partner.
    ``winners[t-1]`` is the side that won at table t."""
    count = len(previous)
    if count == 0 or len(winners) != count:
        raise ValueError("winners up, losers down needs every table's result")

    def pair(table: int, team: Team) -> tuple[str, str]:
        seats = previous[table]
        first, second = (Seat.N, Seat.S) if team is Team.NS else (Seat.E, Seat.W)
        return seats[first], seats[second]

    arriving: list[list[tuple[str, str]]] = [[] for _ in range(count)]
    for index, winner in enumerate(winners):
        arriving[max(index - 1, 0)].append(pair(index, winner))
        arriving[min(index + 1, count - 1)].append(pair(index, winner.other))
    tables = []
    for (a, b), (c, d) in arriving:
        tables.append({Seat.N: a, Seat.S: c, Seat.E: b, Seat.W: d})
    return tables


def north_stays(first: Sequence[dict[Seat, str]], round_number: int) -> Tables:
    """A chart from round 1's seating: North stays at their table; East moves
    one table up each round, South two, West one down (wrapping round).  With
    an odd number of tables nobody partners anyone twice for as many rounds
    as there are tables."""
    count = len(first)
    step = round_number - 1
    return [{Seat.N: first[t][Seat.N], Seat.E: first[(t - step) % count][Seat.E],
             Seat.S: first[(t - 2 * step) % count][Seat.S],
             Seat.W: first[(t + step) % count][Seat.W]} for t in range(count)]


def fixed_pairs(pairs: Sequence[tuple[str, str]], round_number: int
                ) -> tuple[Tables, list[str]]:
    """Partners stay together all night; the pairs meet each other pair in
    turn (the circle method over pairs), one pair sitting out when their
    number is odd."""
    if len(pairs) < 2:
        raise ValueError(f"fixed pairs: a round needs at least 2 pairs, not {len(pairs)}")
    ring: list[tuple[str, str] | None] = list(pairs)
    if len(ring) % 2:
        ring.append(None)
    size = len(ring)
    turn = (round_number - 1) % (size - 1)
    others = ring[1:]
    arranged = [ring[0], *others[turn:], *others[:turn]]
    tables: Tables = []
    byes: list[str] = []
    for index in range(size // 2):
        first, second = arranged[index], arranged[size - 1 - index]
        if first is None or second is None:
            byes.extend(name for pair in (first, second) if pair is not None for name in pair)
        else:
            tables.append({Seat.N: first[0], Seat.S: first[1],
                           Seat.E: second[0], Seat.W: second[1]})
    return tables, byes
