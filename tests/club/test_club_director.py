"""The director without a broker: registration, the movement, collecting a
table's journal (duplicates, out of order, illegal, foreign) and the
standings derived from the replayed lines (firmware/club/director.py)."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.club_room import round_lines

from euchre_core import SEATS, Rules, Seat, Team
from euchre_core.events import Players, SetRules
from firmware.club.director import Bonuses, Director, DirectorError, standings_json
from firmware.club.movement import progressive
from firmware.club.protocol import (
    Assignment,
    EntryMessage,
    RoundFormat,
    Status,
    entries_topic,
    status_topic,
)


def send(director: Director, assignment: Assignment, table: int, lines: list[str],
         box: str = "box1", game: int = 1, order: list[int] | None = None) -> None:
    for seq in order if order is not None else range(len(lines)):
        message = EntryMessage(table, box, assignment.round, game, seq, lines[seq])
        director.receive(entries_topic("club", table), message.encode())


@pytest.fixture
def director(tmp_path: Path) -> Director:
    sent: list[tuple[str, bytes, bool]] = []
    director = Director(tmp_path, publish=lambda *message: sent.append(message))
    for name in ["Anna", "Bo", "Cy", "Dee", "Eve", "Finn", "Gus", "Hal"]:
        director.register(name)
    return director


def test_a_name_registered_twice_is_refused(director: Director) -> None:
    with pytest.raises(DirectorError, match="'anna' is registered already"):
        director.register("anna")
    with pytest.raises(DirectorError, match="1 to 40 printable characters"):
        director.register("   ")
    assert len(director.players()) == 8


def test_standings_come_from_the_replayed_journal(director: Director) -> None:
    assignment = director.start_round(RoundFormat(hands=4))
    assert len(assignment.tables) == 2
    lines = round_lines(assignment, 1, 4, seed=3)
    order = list(range(len(lines)))
    random.Random(5).shuffle(order)
    send(director, assignment, 1, lines, order=order + order[:7])  # shuffled, 7 duplicates
    assert director.duplicates == 7
    game = director.game_of(1, 1)
    assert game is not None and game.hands_played == 4
    board = director.board()
    table = board["tables"][0]
    assert table["done"] and table["state"] == "done" and table["hand"] == 4
    assert (table["score"]["NS"], table["score"]["EW"]) == (game.score[Team.NS],
                                                             game.score[Team.EW])
    points = {p["name"]: p["points"] for p in board["players"]}
    seats = assignment.tables[1]
    for seat in SEATS:
        assert points[seats[seat]] == game.score[seat.team]
    for seat in SEATS:  # table 2 has sent nothing: shown as such, its players have 0
        assert points[assignment.tables[2][seat]] == 0
    assert board["tables"][1]["state"] == "not heard from yet"
    assert not board["tables"][1]["online"]


def test_a_gap_holds_back_what_follows(director: Director) -> None:
    assignment = director.start_round(RoundFormat(hands=2))
    lines = round_lines(assignment, 2, 2, seed=1)
    send(director, assignment, 2, lines, order=[0, 1, 2, *range(4, len(lines))])
    assert director.tables[(1, 2)].waiting == len(lines) - 4
    assert len(director.tables[(1, 2)].lines) == 3
    send(director, assignment, 2, lines, order=[3])
    assert director.tables[(1, 2)].done


def test_an_illegal_entry_is_refused_and_counts_nothing_after_it(director: Director) -> None:
    assignment = director.start_round(RoundFormat(hands=8))
    lines = round_lines(assignment, 1, 1, seed=2)
    bad = [*lines, "trick N", "trick N", "trick N", "trick N", "trick N", "trick N"]
    send(director, assignment, 1, bad)
    table = director.board()["tables"][0]
    assert table["state"].startswith(f"refused line {len(lines) + 1}: ")
    assert any("round 1, table 1: refused line" in p for p in director.board()["problems"])


def test_other_rules_than_assigned_count_nothing(director: Director) -> None:
    assignment = director.start_round(RoundFormat(hands=1))
    lines = round_lines(assignment, 1, 1, seed=2)
    lines[0] = SetRules(Rules(target=5)).line()
    send(director, assignment, 1, lines)
    assert director.board()["tables"][0]["state"] == "plays by other rules than the round's"
    assert director.board()["tables"][0]["score"] == {"NS": 0, "EW": 0}


def test_foreign_and_malformed_messages_change_nothing(director: Director) -> None:
    assignment = director.start_round(RoundFormat(hands=1))
    before = standings_json(director.board())
    director.receive("euchre/club/table/1/entries", b"not ours")
    director.receive("euchre/club/table/9/entries",
                     EntryMessage(9, "x", 1, 1, 0, "players").encode())
    director.receive("euchre/club/table/2/entries",
                     EntryMessage(1, "x", 1, 1, 0, "players").encode())
    director.receive("euchre/club/lobby", b"{}")
    problems = director.board()["problems"]
    assert any("table/1/entries: refused: not JSON text" in p for p in problems)
    assert any("round 1 has no table 9" in p for p in problems)
    assert any("says table 1" in p for p in problems)
    assert any("topic 'euchre/club/lobby' is not one of event 'club'" in p for p in problems)
    assert standings_json(director.board()) == before
    del assignment


def test_two_boxes_claiming_one_table(director: Director) -> None:
    assignment = director.start_round(RoundFormat(hands=1))
    lines = round_lines(assignment, 1, 1, seed=4)
    director.receive(status_topic("club", 1), Status(1, "boxA", True).encode())
    director.receive(status_topic("club", 1), Status(1, "boxB", True).encode())
    send(director, assignment, 1, lines, box="boxA")
    send(director, assignment, 1, lines[:3], box="boxB")
    problems = director.board()["problems"]
    assert any("box boxB claims it, but box boxA is on it already" in p for p in problems)
    assert any("box boxB game 1 claims it too" in p for p in problems)
    assert director.board()["tables"][0]["online"]
    assert director.tables[(1, 1)].box == "boxA"


def test_bonuses_and_the_csv(tmp_path: Path) -> None:
    director = Director(tmp_path, bonuses=Bonuses(loner=1, euchre=1, round_won=2))
    for name in "ABCD":
        director.register(name)
    assignment = director.start_round(RoundFormat(hands=1))
    seats = assignment.tables[1]
    lines = [SetRules(assignment.format.rules(Rules())).line(),
             Players.from_names(seats).line(), "game dealer=N", "make E H alone",
             *["trick E"] * 5]
    send(director, assignment, 1, lines)
    players = {p["name"]: p for p in director.board()["players"]}
    east = players[seats[SEATS[1]]]
    assert (east["points"], east["loners"], east["rounds_won"]) == (4 + 1 + 2, 1, 1)
    assert director.standings_csv().splitlines()[1] == f"1,{seats[SEATS[1]]},7,1,1,0,1,0,0,0,"


def test_the_director_resumes_from_its_database(tmp_path: Path) -> None:
    director = Director(tmp_path)
    for name in "ABCDEFGH":
        director.register(name)
    assignment = director.start_round(RoundFormat(hands=2))
    send(director, assignment, 1, round_lines(assignment, 1, 2, seed=9))
    before = standings_json(director.board())
    director.close()
    again = Director(tmp_path)
    assert standings_json(again.board()) == before


@settings(deadline=None, max_examples=30)
@given(st.integers(4, 24))
def test_the_movement_seats_everyone_once_a_round(count: int) -> None:
    players = [f"P{i}" for i in range(count)]
    partners: Counter[frozenset[str]] = Counter()
    byes: Counter[str] = Counter()
    rounds = count - 1 if count % 2 == 0 else count
    past: list[tuple[list[dict[Seat, str]], list[str]]] = []
    for _ in range(rounds):
        tables, sitting_out = progressive(players, past)
        past.append((tables, sitting_out))
        seated = [name for seats in tables for name in seats.values()]
        assert sorted(seated + sitting_out) == sorted(players)
        assert len(sitting_out) == count % 4
        byes.update(sitting_out)
        for seats in tables:
            for a, b in itertools.combinations(SEATS, 2):
                if a.partner is b:
                    partners[frozenset((seats[a], seats[b]))] += 1
    if count % 4 == 0:  # a full round robin: every pair partners exactly once
        assert len(partners) == count * (count - 1) // 2
        assert set(partners.values()) == {1}
    assert max(byes.values(), default=0) - min(byes[p] for p in players) <= 1


def test_winners_up_losers_down(tmp_path: Path) -> None:
    from euchre_core import Seat
    from firmware.club.movement import by_result

    top = {Seat.N: "a", Seat.S: "b", Seat.E: "c", Seat.W: "d"}
    middle = {Seat.N: "e", Seat.S: "f", Seat.E: "g", Seat.W: "h"}
    bottom = {Seat.N: "i", Seat.S: "j", Seat.E: "k", Seat.W: "l"}
    tables = by_result([top, middle, bottom], [Team.NS, Team.EW, Team.NS])
    # table 1: its winners a-b stay, table 2's winners g-h come up, partners split
    assert tables[0] == {Seat.N: "a", Seat.S: "g", Seat.E: "b", Seat.W: "h"}
    # table 2: table 1's losers c-d come down, table 3's winners i-j come up
    assert tables[1] == {Seat.N: "c", Seat.S: "i", Seat.E: "d", Seat.W: "j"}
    # table 3: table 2's losers e-f come down, its own losers k-l stay
    assert tables[2] == {Seat.N: "e", Seat.S: "k", Seat.E: "f", Seat.W: "l"}

    director = Director(tmp_path)
    for name in "ABCDEFGH":
        director.register(name)
    first = director.start_round(RoundFormat(hands=1))
    send(director, first, 1, round_lines(first, 1, 1, seed=1))
    with pytest.raises(DirectorError, match=r"round 1 is still being played at table\(s\) 2 "):
        director.start_round(RoundFormat(hands=1), movement="by-result")
    send(director, first, 2, round_lines(first, 2, 1, seed=2), box="box2")
    second = director.start_round(RoundFormat(hands=1), movement="by-result")
    winners = [director.tables[(1, t)].winner or Team.NS for t in (1, 2)]
    assert list(second.tables.values()) == by_result(list(first.tables.values()), winners)
    with pytest.raises(DirectorError, match="movement 'chart'"):
        director.start_round(movement="chart", force=True)


def test_a_batch_is_kept_at_once_and_acked_once(tmp_path: Path) -> None:
    from firmware.club.protocol import Ack

    sent: list[tuple[str, bytes, bool]] = []
    director = Director(tmp_path, publish=lambda *message: sent.append(message))
    for name in "ABCD":
        director.register(name)
    assignment = director.start_round(RoundFormat(hands=1))
    lines = round_lines(assignment, 1, 1, seed=6)
    batch = [(entries_topic("club", 1), EntryMessage(1, "bx", 1, 4, seq, line).encode())
             for seq, line in enumerate(lines)]
    batch.insert(3, (entries_topic("club", 1), b"garbage"))
    sent.clear()
    director.receive_many(batch)
    assert director.tables[(1, 1)].lines == lines
    assert [(topic, Ack.decode(payload)) for topic, payload, _ in sent] == [
        ("euchre/club/box/bx/ack", Ack("bx", {4: len(lines) - 1}))]
    assert any("refused: not JSON text" in p for p in director.board()["problems"])


def test_north_stays(tmp_path: Path) -> None:
    from euchre_core import Seat
    from firmware.club.movement import north_stays

    first = [{seat: f"{seat}{t}" for seat in SEATS} for t in range(1, 6)]  # 5 tables
    partners: Counter[frozenset[str]] = Counter()
    for number in range(1, 6):
        tables = north_stays(first, number)
        assert [t[Seat.N] for t in tables] == [f"N{t}" for t in range(1, 6)]
        assert sorted(n for t in tables for n in t.values()) == sorted(
            n for t in first for n in t.values())
        for seats in tables:
            partners[frozenset((seats[Seat.N], seats[Seat.S]))] += 1
            partners[frozenset((seats[Seat.E], seats[Seat.W]))] += 1
    assert set(partners.values()) == {1}  # five rounds, nobody partners anyone twice
    assert north_stays(first, 2)[0] == {Seat.N: "N1", Seat.E: "E5", Seat.S: "S4", Seat.W: "W2"}

    director = Director(tmp_path)
    for name in "ABCDEFGHI":
        director.register(name)
    director.start_round(RoundFormat(hands=1))
    with pytest.raises(DirectorError, match="north stays: the same players as round 1, a "
                       "multiple of four"):
        director.start_round(RoundFormat(hands=1), movement="north-stays", force=True)


def test_fixed_pairs(tmp_path: Path) -> None:
    from euchre_core import Seat
    from firmware.club.movement import fixed_pairs

    pairs = [("a", "b"), ("c", "d"), ("e", "f"), ("g", "h"), ("i", "j")]
    met: Counter[frozenset[tuple[str, str]]] = Counter()
    for number in range(1, 6):  # five pairs: four rounds each, one bye each
        tables, byes = fixed_pairs(pairs, number)
        assert len(byes) == 2 and tuple(byes) in pairs
        for seats in tables:
            ns, ew = (seats[Seat.N], seats[Seat.S]), (seats[Seat.E], seats[Seat.W])
            assert ns in pairs and ew in pairs
            met[frozenset((ns, ew))] += 1
    assert len(met) == 10 and set(met.values()) == {1}  # each pair met each other pair once

    director = Director(tmp_path)
    director.register_pair("Anna", "Bo")
    with pytest.raises(DirectorError, match="'anna' is registered already"):
        director.register_pair("Cy", "anna")
    assert director.players() == ["Anna", "Bo"]  # the refused pair left nothing behind
    director.register_pair("Cy", "Dee")
    assignment = director.start_round(RoundFormat(hands=1), movement="pairs")
    assert assignment.tables[1] == {Seat.N: "Anna", Seat.S: "Bo", Seat.E: "Cy", Seat.W: "Dee"}
    director.register("Eve")
    with pytest.raises(DirectorError, match="fixed pairs: Eve registered without a partner"):
        director.start_round(movement="pairs", force=True)
