"""Movements: who sits where each round.

:func:`progressive` seats each round from the rounds before it: byes to
those with the fewest (none has a second before everyone has had one),
partners who have not partnered yet (the circle method's when it can: a
multiple of four players partner each other player once in P-1 rounds),
opponents met as seldom as possible, and everyone moving between tables
(each step a cheapest perfect matching, networkx's blossom algorithm).

:func:`by_result` is winners up, losers down, from the round before;
:func:`north_stays` a chart from the first round's seating; :func:`fixed_pairs`
for partners who stay together all night.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from euchre_core import Seat, Team

Tables = list[dict[Seat, str]]
T = TypeVar("T")


Seating = tuple[Sequence[Mapping[Seat, str]], Sequence[str]]
"""A round already seated: its tables (table 1 first) and its byes."""


@dataclass
class _History:
    """What the rounds so far give: counts only, looked up (never iterated, so
    the seating does not depend on the order of a set)."""

    byes: Counter[str] = field(default_factory=Counter)
    partnered: Counter[frozenset[str]] = field(default_factory=Counter)
    opposed: Counter[frozenset[str]] = field(default_factory=Counter)
    visits: Counter[tuple[str, int]] = field(default_factory=Counter)
    """(player, table index): rounds the player sat at that table."""

    @classmethod
    def of(cls, past: Sequence[Seating]) -> _History:
        history = cls()
        for tables, byes in past:
            history.byes.update(byes)
            for index, seats in enumerate(tables):
                for seat, name in seats.items():
                    history.visits[(name, index)] += 1
                    # each opposed pair once (N-E, E-S, S-W, W-N), each partnership once
                    history.opposed[frozenset((name, seats[seat.left]))] += 1
                    if seat in (Seat.N, Seat.E):
                        history.partnered[frozenset((name, seats[seat.partner]))] += 1
        return history


def progressive(players: Sequence[str], past: Sequence[Seating] = ()
                ) -> tuple[Tables, list[str]]:
    """Tables (table 1 first) and byes for the round after ``past`` (every
    round seated so far, whatever its movement; none for round 1).

    The same players and past always give the same seating.  In order:

    1. Byes (the count not a multiple of four): to those with the fewest byes
       so far, so nobody has a second bye before everyone has had one.
    2. Partners: a cheapest perfect matching of the players left, a repeated
       partnership costing more than any number of new ones, so partners
       repeat only when no seating of this round avoids it; among the ways
       without repeats the circle method's pairs (over all the players in
       their order) are preferred, which makes a multiple of four partner
       each other player once in turn.
    3. Opponents: the pairs matched into tables so that the most often met
       opponents meet again as seldom as possible (a meeting costs more than
       all meetings of those met fewer times together).
    4. Table numbers: the tables matched to numbers the same way by the
       rounds each player has sat at each number, so everyone moves.

    Bounds that follow (T tables, after R rounds): nobody opposes anyone more
    than ``max(1, ceil(4(R-1)/(T-1)))`` times, and nobody sits at one table
    number more than ``max(1, ceil(8(R-1)/T))`` rounds (tests/club/
    test_club_movement.py says why); ``bench/movement_bench.py`` measures what
    it does beside the old circle-only movement.
    """
    names = list(players)
    if len(names) < 4:
        raise ValueError(f"a round needs at least 4 players, not {len(names)}")
    if len({name.casefold() for name in names}) != len(names):
        raise ValueError("a player is listed twice")
    history = _History.of(past)
    number = len(past) + 1
    count = len(names)
    sitting = count % 4
    # Fewest byes first; among equals, the last registered first, turning a
    # step of `sitting` each round.
    order = sorted(range(count), key=lambda i: (
        history.byes[names[i]], (count - 1 - i + (number - 1) * sitting) % count))
    out = set(order[:sitting])
    byes = [names[i] for i in sorted(out)]
    playing = [name for i, name in enumerate(names) if i not in out]
    pairs = _partners(playing, _circle(names, number), history)
    groups = _opponents(pairs, history)
    tables = _table_numbers(groups, history)
    return tables, byes


def _circle(names: Sequence[str], number: int) -> set[frozenset[str]]:
    """The circle method's partnerships for round ``number`` (from 1)."""
    ring: list[str | None] = list(names)
    if len(ring) % 2:
        ring.append(None)
    size = len(ring)
    turn = (number - 1) % (size - 1)
    arranged = [ring[0], *ring[1:][turn:], *ring[1:][:turn]]
    pairs = set()
    for index in range(size // 2):
        first, second = arranged[index], arranged[size - 1 - index]
        if first is not None and second is not None:
            pairs.add(frozenset((first, second)))
    return pairs


def _rising(count: int, base: int) -> int:
    """The cost of one more meeting after ``count``: ``base`` is more than the
    meetings in one matching, so one at ``count`` outweighs all below it."""
    return int(base ** count) - 1


def _cheapest(size: int, costs: dict[tuple[int, int], int]) -> list[tuple[int, int]]:
    """A cheapest perfect matching of nodes ``0..size-1`` over the edges in
    ``costs`` (networkx's blossom algorithm, integer weights: exact)."""
    import networkx as nx

    top = max(costs.values()) + 1
    graph: nx.Graph[int] = nx.Graph()
    graph.add_nodes_from(range(size))
    for (a, b), cost in costs.items():
        graph.add_edge(a, b, weight=top - cost)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    if 2 * len(matching) != size:
        raise AssertionError("no perfect matching")  # a complete graph always has one
    return sorted((min(a, b), max(a, b)) for a, b in matching)


def _partners(playing: list[str], circle: set[frozenset[str]], history: _History
              ) -> list[tuple[str, str]]:
    count = len(playing)
    base = count + 1
    costs = {}
    for a in range(count):
        for b in range(a + 1, count):
            pair = frozenset((playing[a], playing[b]))
            costs[(a, b)] = (base * _rising(history.partnered[pair], base)
                             + (pair not in circle))
    return [(playing[a], playing[b]) for a, b in _cheapest(count, costs)]


def _opponents(pairs: list[tuple[str, str]], history: _History
               ) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    if len(pairs) == 2:
        return [(pairs[0], pairs[1])]
    base = 2 * len(pairs) + 1
    costs = {}
    for a in range(len(pairs)):
        for b in range(a + 1, len(pairs)):
            costs[(a, b)] = sum(_rising(history.opposed[frozenset((x, y))], base)
                                for x in pairs[a] for y in pairs[b])
    return [(pairs[a], pairs[b]) for a, b in _cheapest(len(pairs), costs)]


def _table_numbers(groups: list[tuple[tuple[str, str], tuple[str, str]]], history: _History
                   ) -> Tables:
    count = len(groups)
    order = list(range(count))
    if count > 1:
        base = 4 * count + 1
        costs = {(g, count + t): sum(_rising(history.visits[(name, t)], base)
                                     for pair in groups[g] for name in pair)
                 for g in range(count) for t in range(count)}
        order = [0] * count
        for g, t in _cheapest(2 * count, costs):
            order[t - count] = g
    return [{Seat.N: groups[g][0][0], Seat.S: groups[g][0][1],
             Seat.E: groups[g][1][0], Seat.W: groups[g][1][1]} for g in order]


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


def circle(items: Sequence[T], round_number: int) -> list[tuple[T | None, T | None]]:
    """Round ``round_number`` of a round robin by the circle method: the first
    item stays, the others turn one place a round; each item is matched once
    with every other over ``len(items) - 1`` rounds (odd: None, a bye, is
    matched too).  Needs at least one item."""
    ring: list[T | None] = list(items)
    if len(ring) % 2:
        ring.append(None)
    size = len(ring)
    turn = (round_number - 1) % (size - 1)
    others = ring[1:]
    arranged = [ring[0], *others[turn:], *others[:turn]]
    return [(arranged[index], arranged[size - 1 - index]) for index in range(size // 2)]


def fixed_pairs(pairs: Sequence[tuple[str, str]], round_number: int
                ) -> tuple[Tables, list[str]]:
    """Partners stay together all night; the pairs meet each other pair in
    turn (the circle method over pairs), one pair sitting out when their
    number is odd."""
    if len(pairs) < 2:
        raise ValueError(f"fixed pairs: a round needs at least 2 pairs, not {len(pairs)}")
    tables: Tables = []
    byes: list[str] = []
    for first, second in circle(pairs, round_number):
        if first is None or second is None:
            byes.extend(name for pair in (first, second) if pair is not None for name in pair)
        else:
            tables.append({Seat.N: first[0], Seat.S: first[1],
                           Seat.E: second[0], Seat.W: second[1]})
    return tables, byes
