"""bench/cursor_bound.py's model of the cursor layout's trick list is the
referee's: a ranking fitted by the model costs, kind by kind, exactly what the
referee measures with it in place; and its bound is a bound (issue 23's
euchre figure rests on both)."""

from __future__ import annotations

import itertools
import statistics
from types import ModuleType
from typing import Any

import pytest
from support.scripts import load_script

HANDS = 120
"""Bench hands per table here (the README's figures: 500, seeds 1 to 8)."""


@pytest.fixture(scope="module")
def bound() -> ModuleType:
    load_script("bench/presses.py")  # (cursor_bound imports it by name)
    return load_script("bench/cursor_bound.py")


@pytest.fixture(scope="module")
def rows(bound: ModuleType) -> dict[str, object]:
    """bench/presses.py's rows for the bench's hands, today's ranking."""
    return bound.presses.measure(HANDS, 1)  # type: ignore[no-any-return]


@pytest.mark.parametrize("context", ["leader", "every winner so far"])
def test_the_model_prices_a_fitted_ranking_as_the_referee_measures_it(
        bound: ModuleType, rows: dict[str, Any], context: str) -> None:
    describe = bound.CONTEXTS[context]
    hands = bound.random_hands(HANDS, 1)
    seats = {name: statistics.mean(row.seats) for name, row in rows.items()}
    today = bound.trick_presses({}, list(bound.counted(hands, describe)))
    other = {name: statistics.mean(rows[name].cursor) - today[name] for name in today}
    training = list(bound.counted(bound.random_hands(600, 101), describe))
    ranking, _, _ = bound.fit(training, other, seats, rounds=20)
    assert any(ranking[key] != bound.today(key) for key in ranking)  # not today's again
    priced = bound.trick_presses(ranking, list(bound.counted(hands, describe)))
    measured = bound.referee_ratios(ranking, describe, HANDS, 1)
    for name, presses in priced.items():
        assert (presses + other[name]) / seats[name] == pytest.approx(measured[name]), name


def test_no_ranking_goes_under_the_bound(bound: ModuleType) -> None:
    """The lower bound against every ranking of the winners by who leads: all
    24**4 are tried on a few hands."""
    describe = bound.CONTEXTS["leader"]
    hands = bound.random_hands(60, 3)
    items = list(bound.counted(hands, describe))
    kinds = {name for name, _ in items}
    other = dict.fromkeys(kinds, 3.0)
    seats = dict.fromkeys(kinds, 8.0)
    _, best_worst, lower = bound.fit(items, other, seats, rounds=60)
    assert lower <= best_worst
    # Every ranking tried: each context's share of each kind's ratio, summed.
    per_kind = {name: sum(1 for kind, _ in items if kind == name) for name in kinds}
    shares: dict[object, list[dict[str, float]]] = {}
    for name, seq in items:
        for trick in seq:
            rows = shares.setdefault(trick[0], [dict.fromkeys(kinds, 0.0) for _ in bound.ORDERS])
            for row, order in zip(rows, bound.ORDERS, strict=True):
                row[name] += bound.cost(order, trick) / per_kind[name] / seats[name]
    exhaustive = float("inf")
    for rows in itertools.product(*shares.values()):
        exhaustive = min(exhaustive, max(other[name] / seats[name] + sum(row[name] for row in rows)
                                         for name in kinds))
    assert lower <= exhaustive + 1e-9
    assert exhaustive <= best_worst + 1e-9
