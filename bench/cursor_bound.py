"""How far can ranking the trick winners take the cursor layout? (issue 23)

The cursor layout enters a trick's winner by moving the cursor from the
likeliest winner to the one who won, then OK: ``1 + rank // 2`` presses for
the winner ranked ``rank`` (1 = likeliest; :func:`firmware.flow.around` puts
ranks 2 and 3 one press away, 4 two).  bench/presses.py measures every kind of
hand in both layouts; the goal is at most 1.5x the seats layout for every
kind.  This script asks whether *any* ranking of the four seats could meet it,
for three ways of telling tricks apart (the context a ranking may depend on):

- ``leader``: who leads the trick, seen from the maker (today's
  :data:`firmware.flow.TRICK_ODDS`);
- ``leader, trick, defenders' tricks``: also which trick and how many the
  defenders have taken;
- ``every winner so far``: also who won each trick before.

For each, the ranking per context that minimises the worst kind's ratio is
found exactly for given weights of the kinds (each context on its own, all 24
orders tried) and the weights moved towards the worst kinds.  Any weights
give a lower bound: no ranking by that context does better on those hands
than the weighted optimum (a weighted mean of ratios is at most their
maximum).  Three figures per context:

- the bound on the bench's own hands (seed 1 and 2): a ranking fitted to the
  very hands measured, an unfair advantage, still cannot go below it;
- the worst kind on the bench's hands of a ranking fitted to ``--hands``
  other hands (the honest figure: the ranking ships before the hands are
  played);
- the same ranking measured by the referee itself (bench/presses.py with the
  ranking in place of :func:`firmware.flow.likeliest_winners`), which also
  checks the model.

The presses that are not trick winners (the call, a claim) do not depend on
the ranking: they are measured by bench/presses.py per kind and added.  The
"alone" kinds of the defend-alone table are left to the referee's figure.

Run:  .venv/bin/python bench/cursor_bound.py [--hands 40000] [--seed 101]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import presses  # noqa: E402
from presses import GOAL, Hand, kind, random_hands  # noqa: E402

from euchre_core.cards import Seat  # noqa: E402
from firmware import flow  # noqa: E402

ROLES = ("maker", "partner", "left", "right")
ORDERS = tuple(itertools.permutations(ROLES))
Context = tuple[object, ...]
Trick = tuple[Context, tuple[str, ...], str, bool]
"""One trick as the model sees it: its context, the roles that may win it,
the role that won, and whether the claims sit amid the winners."""

CONTEXTS: dict[str, Callable[[str, int, int, tuple[str, ...]], Context]] = {
    "leader": lambda leader, trick, defenders, history: (leader,),
    "leader, trick, defenders' tricks": lambda leader, trick, defenders, history:
        (leader, trick, defenders),
    "every winner so far": lambda leader, trick, defenders, history: (leader, *history),
}
"""The ways of telling tricks apart: from who leads (seen from the maker),
which trick (0-4), the defenders' tricks so far and the winners so far."""


def presses_for(rank: int, claims_amid: bool) -> int:
    """Presses to enter the winner ranked ``rank`` (1 = likeliest): the cursor
    layout's trick list (flow._trick_step): with the claims interleaved after
    the likeliest (the fourth trick, the makers' three made), rank r sits at
    2r - 1."""
    position = 2 * rank - 1 if claims_amid else rank
    return 1 + position // 2


def tricks(hand: Hand, context: Callable[..., Context]) -> list[Trick]:
    """The hand's tricks as the model sees them (the seats sitting out of a
    lone hand are not among the winners)."""
    maker = hand.maker
    out = {maker.partner} if hand.alone else set()
    leader = hand.dealer.left
    while leader in out:
        leader = leader.left
    result, makers = [], 0
    for number, winner in enumerate(hand.winners):
        history = tuple(flow._role(seat, maker) for seat in hand.winners[:number])
        legal = tuple(flow._role(seat, maker) for seat in flow.clockwise(maker)
                      if seat not in out)
        result.append((context(flow._role(leader, maker), number, number - makers, history),
                       legal, flow._role(winner, maker),
                       number == flow.CLAIMS_AFTER and makers >= 3))
        makers += winner.team is maker.team
        leader = winner
    return result


def counted(hands: Sequence[Hand], context: Callable[..., Context]) -> Iterator[
        tuple[str, list[Trick]]]:
    """Each hand's tricks as counted towards a kind at each table whose
    tricks the model prices (the claim table: its first three)."""
    for hand in hands:
        seq = tricks(hand, context)
        for style in ("plain", "bidding", "claim"):
            name = kind(hand, style)
            if name is not None:
                yield name, seq[:presses.CLAIM_AFTER] if style == "claim" else seq


def cost(order: Sequence[str], trick: Trick) -> int:
    _, legal, winner, amid = trick
    ranked = [role for role in order if role in legal]
    return presses_for(ranked.index(winner) + 1, amid)


Ranking = dict[Context, tuple[str, ...]]


def today(context: Context) -> tuple[str, ...]:
    return flow.TRICK_ODDS[str(context[0])]


def trick_presses(ranking: Ranking, items: list[tuple[str, list[Trick]]]) -> dict[str, float]:
    """Mean trick-winner presses per hand, by kind."""
    by_kind: dict[str, list[int]] = defaultdict(list)
    for name, seq in items:
        by_kind[name].append(sum(cost(ranking.get(trick[0]) or today(trick[0]), trick)
                                 for trick in seq))
    return {name: statistics.mean(values) for name, values in by_kind.items()}


def fit(items: list[tuple[str, list[Trick]]], other: dict[str, float],
        seats: dict[str, float], rounds: int = 150) -> tuple[Ranking, float, float]:
    """The ranking per context minimising the worst kind's ratio on ``items``
    (multiplicative weights over the kinds, each weighted problem solved
    exactly).  Returns the best ranking found, its worst ratio, and the
    largest lower bound met on the way (no ranking does better)."""
    per_kind = Counter(name for name, _ in items)
    kinds = sorted(per_kind)
    counts: dict[Context, Counter[tuple[str, Trick]]] = defaultdict(Counter)
    for name, seq in items:
        for trick in seq:
            counts[trick[0]][name, trick] += 1
    # Per context and order: each kind's share of its mean ratio.
    shares: dict[Context, list[tuple[tuple[str, ...], dict[str, float]]]] = {}
    for context, tally in counts.items():
        shares[context] = []
        for order in ORDERS:
            share = dict.fromkeys(kinds, 0.0)
            for (name, trick), number in tally.items():
                share[name] += number * cost(order, trick) / per_kind[name] / seats[name]
            shares[context].append((order, share))
    weights = dict.fromkeys(kinds, 1.0 / len(kinds))
    best: tuple[Ranking, float] = ({}, float("inf"))
    bound = 0.0
    for _ in range(rounds):
        ratios = {name: other[name] / seats[name] for name in kinds}
        ranking: Ranking = {}
        for context, options in shares.items():
            order, share = min(options, key=lambda option: sum(
                weights[name] * value for name, value in option[1].items()))
            ranking[context] = order
            for name, value in share.items():
                ratios[name] += value
        bound = max(bound, sum(weights[name] * ratios[name] for name in kinds))
        worst = max(ratios.values())
        if worst < best[1]:
            best = (ranking, worst)
        weights = {name: weight * (ratios[name] / GOAL) ** 8 for name, weight in weights.items()}
        total = sum(weights.values())
        weights = {name: weight / total for name, weight in weights.items()}
    return best[0], best[1], bound


def referee_ratios(ranking: Ranking, context: Callable[..., Context], count: int,
                   seed: int) -> dict[str, float]:
    """bench/presses.py's ratios with ``ranking`` in place of today's."""
    def likeliest(game: Any) -> list[Seat]:
        hand = game.hand
        maker = hand.maker
        number = len(hand.tricks)
        makers = sum(seat.team is maker.team for seat in hand.tricks)
        key = context(flow._role(hand.leader, maker), number, number - makers,
                      tuple(flow._role(seat, maker) for seat in hand.tricks))
        order = ranking.get(key) or today(key)
        return sorted(flow.clockwise(maker), key=lambda seat: order.index(flow._role(seat, maker)))

    saved = flow.likeliest_winners
    flow.likeliest_winners = likeliest
    try:
        rows = presses.measure(count, seed)
    finally:
        flow.likeliest_winners = saved
    return {name: row.ratio for name, row in rows.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=40000,
                        help="hands to fit the honest ranking on (default 40000)")
    parser.add_argument("--seed", type=int, default=101, help="their seed (default 101)")
    parser.add_argument("--bench-hands", type=int, default=500)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2],
                        help="the bench's seeds to measure on (default 1 2)")
    args = parser.parse_args()
    seeds = tuple(args.seeds)
    bench = {seed: random_hands(args.bench_hands, seed) for seed in seeds}
    rows = {seed: presses.measure(args.bench_hands, seed) for seed in seeds}
    seats = {seed: {name: statistics.mean(row.seats) for name, row in rows[seed].items()}
             for seed in seeds}
    other = {}
    for seed in seeds:  # the presses that are not trick winners, per kind
        priced = trick_presses({}, list(counted(bench[seed], CONTEXTS["leader"])))
        other[seed] = {name: statistics.mean(rows[seed][name].cursor) - priced[name]
                       for name in priced}
    training = random_hands(args.hands, args.seed)
    mean_other = {name: statistics.mean(other[seed][name] for seed in seeds)
                  for name in other[seeds[0]]}
    mean_seats = {name: statistics.mean(seats[seed][name] for seed in seeds)
                  for name in mean_other}
    today_worst = {seed: max(row.ratio for row in rows[seed].values()) for seed in seeds}
    def each(values: Sequence[float]) -> str:
        return " / ".join(f"{value:.3f}x" for value in values)

    named = " / ".join(str(seed) for seed in seeds)
    print(f"The cursor layout's worst kind of hand, cursor/seats presses (goal <= {GOAL}x), "
          f"bench/presses.py --hands {args.bench_hands}, seeds {named}; today's ranking: "
          f"{each([today_worst[seed] for seed in seeds])}.")
    print(f"| ranking by | contexts | bound on the bench's own hands, seeds {named} | "
          f"fitted to {args.hands} other hands (seed {args.seed}): model | "
          "the same measured by the referee |")
    print("| --- | --- | --- | --- | --- |")
    for label, context in CONTEXTS.items():
        bounds = []
        for seed in seeds:
            items = list(counted(bench[seed], context))
            bounds.append(fit(items, other[seed], seats[seed])[2])
        items = list(counted(training, context))
        ranking, _, _ = fit(items, mean_other, mean_seats)
        modelled: list[float] = []
        measured: list[tuple[str, float]] = []
        for seed in seeds:
            means = trick_presses(ranking, list(counted(bench[seed], context)))
            modelled.append(max((means[name] + other[seed][name]) / seats[seed][name]
                                for name in means))
            ratios = referee_ratios(ranking, context, args.bench_hands, seed)
            measured.append(max(ratios.items(), key=lambda item: item[1]))
        worst = " / ".join(f"{ratio:.3f}x ({name})" for name, ratio in measured)
        print(f"| {label} | {len(ranking)} | {each(bounds)} | {each(modelled)} | {worst} |")


if __name__ == "__main__":
    main()
