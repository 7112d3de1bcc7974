"""The progressive movement (firmware/club/movement.py): byes spread exactly,
partners repeated only when no seating of the round avoids it, opponents and
table numbers within the bounds the movement's docstring states, and the same
seating from the same input (also in another process, with another hash seed).
The other movements' tests are in test_club_director.py."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from euchre_core import Seat
from firmware.club.director import Director
from firmware.club.movement import Seating, Tables, circle, progressive
from firmware.club.protocol import RoundFormat

ROOT = Path(__file__).resolve().parents[2]


def seat_night(count: int, rounds: int) -> tuple[list[str], list[tuple[Tables, list[str]]]]:
    players = [f"P{i:02d}" for i in range(count)]
    past: list[tuple[Tables, list[str]]] = []
    for _ in range(rounds):
        past.append(progressive(players, past))
    return players, past


def partnerships(seats: dict[Seat, str]) -> list[frozenset[str]]:
    return [frozenset((seats[Seat.N], seats[Seat.S])), frozenset((seats[Seat.E], seats[Seat.W]))]


def oppositions(seats: dict[Seat, str]) -> list[frozenset[str]]:
    return [frozenset((seats[seat], seats[seat.left])) for seat in Seat]


@settings(deadline=None, max_examples=60)
@given(st.integers(4, 64), st.integers(1, 12))
def test_byes_partners_opponents_and_tables(count: int, rounds: int) -> None:
    players, past = seat_night(count, rounds)
    tables_count = count // 4
    byes: Counter[str] = Counter()
    partnered: Counter[frozenset[str]] = Counter()
    opposed: Counter[frozenset[str]] = Counter()
    visits: Counter[tuple[str, int]] = Counter()
    for number, (tables, out) in enumerate(past, 1):
        seated = [name for seats in tables for name in seats.values()]
        assert sorted(seated + out) == players  # everyone once: at a table or out
        assert len(tables) == tables_count and len(out) == count % 4
        # byes, exactly: nobody has a second before everyone has had one
        byes.update(out)
        assert max(byes[p] for p in players) - min(byes[p] for p in players) <= 1
        # partners: a repeat only when this round's players had no seating without one
        pairs = [pair for seats in tables for pair in partnerships(seats)]
        if any(partnered[pair] for pair in pairs):
            fresh = nx.Graph()
            fresh.add_nodes_from(seated)
            fresh.add_edges_from((a, b) for i, a in enumerate(seated) for b in seated[i + 1:]
                                 if not partnered[frozenset((a, b))])
            assert 2 * len(nx.max_weight_matching(fresh, maxcardinality=True)) < len(seated), (
                f"round {number}: a partner repeated that could have been avoided")
        partnered.update(pairs)
        for index, seats in enumerate(tables):
            opposed.update(oppositions(seats))
            visits.update((name, index) for name in seats.values())
        # the bounds proved in the module's docstring
        if tables_count >= 2:
            assert max(opposed.values()) <= max(1, math.ceil(4 * (number - 1)
                                                             / (tables_count - 1)))
            assert max(visits.values()) <= max(1, math.ceil(8 * (number - 1) / tables_count))
    if count % 4 == 0 and rounds <= count - 1:  # the circle method: nobody partners twice
        assert max(partnered.values()) == 1


def test_eighteen_players_over_eight_rounds() -> None:
    """The issue's example: two sat out twice while four never did."""
    players, past = seat_night(18, 8)
    byes = Counter(name for _, out in past for name in out)
    assert sorted(byes[p] for p in players) == [0] * 2 + [1] * 16
    partnered = Counter(pair for tables, _ in past for seats in tables
                        for pair in partnerships(seats))
    assert max(partnered.values()) == 1
    opposed = Counter(pair for tables, _ in past for seats in tables
                      for pair in oppositions(seats))
    assert max(opposed.values()) <= 2
    visits = Counter((name, index) for tables, _ in past
                     for index, seats in enumerate(tables) for name in seats.values())
    assert max(visits.values()) <= 3  # nobody stays put (the old movement: 8 of 8)


def test_sixteen_players_partner_everyone_once() -> None:
    players, past = seat_night(16, 15)
    partnered = Counter(pair for tables, _ in past for seats in tables
                        for pair in partnerships(seats))
    assert len(partnered) == 16 * 15 // 2 and set(partnered.values()) == {1}


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="a round needs at least 4 players, not 3"):
        progressive(["a", "b", "c"])
    with pytest.raises(ValueError, match="a player is listed twice"):
        progressive(["a", "b", "c", "A"])


def _seatings_in_a_process(hash_seed: str) -> str:
    code = ("import json, sys; from firmware.club.movement import progressive\n"
            "players = [f'Player {i}' for i in range(27)]; past = []\n"
            "for _ in range(6): past.append(progressive(players, past))\n"
            "print(json.dumps([([{str(s): n for s, n in t.items()} for t in ts], b)"
            " for ts, b in past]))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, env={"PYTHONHASHSEED": hash_seed, "PATH": "/usr/bin"},
                            timeout=120, check=True)
    return result.stdout


def test_the_same_input_gives_the_same_seating() -> None:
    players = [f"Player {i}" for i in range(27)]
    past: list[Seating] = []
    for _ in range(6):
        past.append(progressive(players, past))
    assert progressive(players, past[:3]) == past[3]
    expected = json.dumps([([{str(s): n for s, n in t.items()} for t in ts], b)
                           for ts, b in past]) + "\n"
    assert _seatings_in_a_process("1") == expected
    assert _seatings_in_a_process("2") == expected


def test_the_director_seats_from_every_round_before(tmp_path: Path) -> None:
    """A restarted director seats the next round exactly as one that kept
    running, and the byes stay even across the rounds."""
    kept, restarted = Director(tmp_path / "a"), Director(tmp_path / "b")
    for director in (kept, restarted):
        for index in range(18):
            director.register(f"Player {index}")
        for _ in range(3):  # nothing played: each round forced (the movement is the point)
            director.start_round(RoundFormat(hands=1), force=True)
    restarted.close()
    restarted = Director(tmp_path / "b")
    byes = Counter(name for number in range(1, 4) for name in kept.rounds[number].byes)
    for _ in range(6):
        a = kept.start_round(RoundFormat(hands=1), force=True)
        b = restarted.start_round(RoundFormat(hands=1), force=True)
        assert a.encode() == b.encode()
        byes.update(a.byes)
        assert max(byes.values()) - min(byes[p] for p in kept.players()) <= 1
    assert len(byes) == 18  # 9 rounds of 2 byes: everyone once


@given(st.integers(min_value=2, max_value=21))
def test_the_circle_matches_every_item_with_every_other_once_a_cycle(count: int) -> None:
    items = list(range(count))
    cycle = count - 1 if count % 2 == 0 else count  # odd: None (the bye) is one more item
    met: Counter[frozenset[int | None]] = Counter()
    for round_number in range(1, cycle + 1):
        matches = circle(items, round_number)
        seen = [item for match in matches for item in match if item is not None]
        assert sorted(seen) == items  # everyone once a round
        met.update(frozenset(match) for match in matches)
    assert all(times == 1 for times in met.values())
    assert len(met) == (count + count % 2) * (count + count % 2 - 1) // 2
    assert circle(items, cycle + 1) == circle(items, 1)  # then it starts again
