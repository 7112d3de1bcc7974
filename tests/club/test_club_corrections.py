"""The organiser's corrections, the tie-breaks and shared ranks, a tied round
and bye compensation, on the director without a broker
(firmware/club/corrections.py, standings.py, director.py)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from euchre_core import SEATS, Rules, Seat, Team
from euchre_core.events import Players, SetRules
from firmware.club.corrections import Correction
from firmware.club.director import Bonuses, Director, DirectorError, standings_json
from firmware.club.protocol import Assignment, EntryMessage, RoundFormat, entries_topic
from firmware.club.standings import NightSettings, Outcome, Totals, rank

NAMES = ["Anna", "Bo", "Cy", "Dee", "Eve", "Finn", "Gus", "Hal"]


def play(director: Director, assignment: Assignment, table: int, hands: list[list[str]],
         box: str | None = None) -> None:
    """Send the table's round: its setup, then each hand's lines."""
    seats = assignment.tables[table]
    lines = [SetRules(assignment.format.rules(assignment.rules)).line(),
             Players.from_names(seats).line(), "game dealer=W"]
    for hand in hands:
        lines.extend(hand)
    for seq, line in enumerate(lines):
        message = EntryMessage(table, box or f"box{table}", assignment.round,
                               assignment.round, seq, line)  # a game id per round
        director.receive(entries_topic("club", table), message.encode())


NS_ONE = ["make N H", *["trick N"] * 3, *["trick E"] * 2]
"""NS make hearts and take 3 tricks: NS +1 (the deal then moves on)."""
EW_ONE = ["make E S", *["trick E"] * 3, *["trick N"] * 2]


def make(tmp_path: Path, names: list[str] = NAMES, **settings: str) -> Director:
    director = Director(tmp_path, settings=settings or None)
    for name in names:
        director.register(name)
    return director


def players(director: Director) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in director.board()["players"]}


def correction(kind: str, **fields: Any) -> Correction:
    return Correction.from_request({"kind": kind, "by": "Kim", "reason": "as agreed",
                                    **fields})


# --- ranks -------------------------------------------------------------------------------


def test_players_level_on_everything_share_a_rank(tmp_path: Path) -> None:
    director = make(tmp_path, NAMES[:4])
    first = director.start_round(RoundFormat(hands=1), force=True)
    play(director, first, 1, [NS_ONE])
    seats = first.tables[1]
    ranks = {p["name"]: p["rank"] for p in director.board()["players"]}
    # N and S made 1 point each and won the round; E and W nothing: two shared ranks
    assert ranks == {seats[Seat.N]: "=1", seats[Seat.S]: "=1",
                     seats[Seat.E]: "=3", seats[Seat.W]: "=3"}
    assert [p["rank"] for p in standings_json(director.board())["players"]] == [
        "=1", "=1", "=3", "=3"]
    rows = list(csv.reader(io.StringIO(director.standings_csv())))
    assert [row[0] for row in rows[1:]] == ["=1", "=1", "=3", "=3"]


def outcome(round_number: int, seats: str, winner: Team, ns: int, ew: int,
            loners: tuple[Seat, ...] = ()) -> Outcome:
    named = dict(zip(SEATS, seats, strict=True))
    return Outcome(round_number, 1, named, {Team.NS: ns, Team.EW: ew}, True,
                   frozenset({winner}), list(loners), [])


def test_the_tie_break_order_is_followed_then_head_to_head() -> None:
    # a and b: 5 points, 1 round won each; a made a loner; b beat a head to head
    outcomes = [outcome(1, "axby", Team.NS, 4, 0, (Seat.N,)),  # a (N) and x (S) win 4-0
                outcome(2, "bazy", Team.NS, 1, 0),   # b (N) beats a (E): 1-0
                outcome(3, "zaqb", Team.EW, 0, 4)]   # a and b partner and win 4 (the b team)
    def ranked(order: tuple[str, ...]) -> list[tuple[str, str]]:
        totals = [Totals("a", table_points=8, rounds_won=2, loners=1),
                  Totals("b", table_points=8, rounds_won=2)]
        return [(t.name, t.rank) for t in rank(totals, outcomes, order)]

    assert ranked(("points", "rounds_won", "loners")) == [("a", "1"), ("b", "2")]
    assert ranked(("points", "head_to_head", "loners")) == [("b", "1"), ("a", "2")]
    assert ranked(("points", "rounds_won", "euchres")) == [("a", "=1"), ("b", "=1")]


def test_the_tie_breaks_are_a_setting_kept_with_the_night(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="tie-breaks: 'luck' is not one of points, "
                       "rounds_won, loners, euchres, head_to_head"):
        make(tmp_path / "bad", tie_breaks="points,luck")
    director = make(tmp_path, tie_breaks="points,euchres", tied_round="extra-hand",
                    bye_points="average")
    director.close()
    again = Director(tmp_path)
    assert again.settings == NightSettings(("points", "euchres"), "extra-hand", "average")
    assert again.board()["settings"]["words"] == (
        "ties: points, then euchres; a tied round: extra-hand; a bye: the player's average")


# --- corrections --------------------------------------------------------------------------


def test_a_result_corrected_counts_instead_of_the_journal(tmp_path: Path) -> None:
    director = make(tmp_path)
    first = director.start_round(RoundFormat(hands=1), force=True)
    play(director, first, 1, [NS_ONE])
    seats = first.tables[1]
    assert players(director)[seats[Seat.N]]["points"] == 1
    kept = director.correct(correction("result", round=1, table=1, ns=0, ew=2))
    assert kept.id == 1 and kept.who == "Kim" and kept.made > 0
    totals = players(director)
    assert totals[seats[Seat.N]]["points"] == 0 and totals[seats[Seat.N]]["rounds_won"] == 0
    assert totals[seats[Seat.E]]["points"] == 2 and totals[seats[Seat.E]]["rounds_won"] == 1
    board = director.board()
    assert board["tables"][0]["score"] == {"NS": 0, "EW": 2}
    assert board["tables"][0]["corrected"] == 1
    assert board["corrections"][0]["what"] == "round 1, table 1: result set to NS 0, EW 2"
    assert board["corrections"][0]["reason"] == "as agreed"
    # table 2 has not played: a result for it counts, and settles the table
    director.correct(correction("result", round=1, table=2, ns=3, ew=3))
    assert players(director)[first.tables[2][Seat.W]]["rounds_won"] == 1  # level: shared
    assert director.tables[(1, 1)].lines  # the journal itself is untouched
    rows = list(csv.reader(io.StringIO(director.corrections_csv())))
    assert rows[0][:6] == ["id", "made", "by", "kind", "what", "reason"]
    assert [row[2:6] for row in rows[1:]] == [
        ["Kim", "result", "round 1, table 1: result set to NS 0, EW 2", "as agreed"],
        ["Kim", "result", "round 1, table 2: result set to NS 3, EW 3", "as agreed"]]


def test_a_result_disputed_at_the_table_is_in_the_corrections_csv(tmp_path: Path) -> None:
    director = make(tmp_path)
    first = director.start_round(RoundFormat(hands=1), force=True)
    play(director, first, 1, [[*NS_ONE, "# result disputed by EW"]])  # as the box sends it
    play(director, first, 2, [[*EW_ONE, "# result accepted by NS"]])
    rows = list(csv.reader(io.StringIO(director.corrections_csv())))
    (dispute,) = [row for row in rows[1:] if row[3] == "dispute"]  # not the accepted one
    assert dispute[:1] + dispute[2:] == [
        "", "EW", "dispute", "round 1, table 1: NS 1 EW 0 disputed by EW at the table; the "
        "organiser decides (club correct result)", "", "1", "1", "", "", "", "1", "0"]
    assert dispute[1] == director.board()["disputes"][0]["when"]
    director.correct(correction("result", round=1, table=1, ns=0, ew=1))
    rows = list(csv.reader(io.StringIO(director.corrections_csv())))
    assert [(row[0], row[3], row[4]) for row in rows[1:]] == [  # in the order they came
        ("", "dispute", "round 1, table 1: NS 1 EW 0 disputed by EW at the table; settled by "
                        "correction 1"),
        ("1", "result", "round 1, table 1: result set to NS 0, EW 1")]
    assert [c.kind for c in director.corrections()] == ["result"]  # a dispute is no record


def test_a_penalty_comes_off_the_total(tmp_path: Path) -> None:
    director = make(tmp_path)
    first = director.start_round(RoundFormat(hands=1), force=True)
    play(director, first, 1, [NS_ONE])
    north = first.tables[1][Seat.N]
    director.correct(correction("penalty", player=north.lower(), points=3))
    mine = players(director)[north]
    assert (mine["points"], mine["penalties"]) == (1 - 3, 3)
    assert director.board()["players"][-1]["name"] == north
    assert director.corrections()[0].player == north  # the name as registered


def test_withdraw_add_bye_and_reseat_shape_the_next_round(tmp_path: Path) -> None:
    director = make(tmp_path, NAMES + ["Ida"])  # 9 players: one bye a round
    first = director.start_round(RoundFormat(hands=1), force=True)
    director.correct(correction("withdraw", player="Anna"))
    director.correct(correction("add", player="Jo"))
    director.correct(correction("add", player="Kai"))
    director.correct(correction("bye", player="Bo"))
    director.correct(correction("reseat", player="Cy", other="Dee"))
    expected = director.corrections()
    assert [c.round for c in expected] == [2, 2, 2, 2, 2]
    second = director.start_round(RoundFormat(hands=1), force=True)
    seated = {name for seats in second.tables.values() for name in seats.values()}
    assert "Anna" not in seated and "Anna" not in second.byes
    assert {"Jo", "Kai"} <= seated | set(second.byes)
    assert "Bo" in second.byes and "Bo" not in seated
    assert len(seated) == 8 and len(second.byes) == 2  # 10 to seat: Bo and one more sit out
    board = players(director)
    assert board["Anna"]["withdrawn"] and not board["Jo"]["withdrawn"]
    assert "Jo" in director.players()
    del first


def test_reseat_swaps_two_places_of_the_seating(tmp_path: Path) -> None:
    plain = make(tmp_path / "plain")
    plain.start_round(RoundFormat(hands=1), force=True)
    expected = plain.start_round(RoundFormat(hands=1), force=True)
    director = make(tmp_path / "swapped")
    director.start_round(RoundFormat(hands=1), force=True)
    a, b = expected.tables[1][Seat.N], expected.tables[2][Seat.E]
    director.correct(correction("reseat", player=a, other=b))
    swapped = director.start_round(RoundFormat(hands=1), force=True)
    assert swapped.tables[1] == {**expected.tables[1], Seat.N: b}
    assert swapped.tables[2] == {**expected.tables[2], Seat.E: a}


@pytest.mark.parametrize(("fields", "refusal"), [
    ({"kind": "penalty", "player": "Zed", "points": 2},
     "penalty: 'Zed' is not a registered player"),
    ({"kind": "penalty", "player": "Anna", "points": 2, "reason": " "},
     "penalty: a reason is needed"),
    ({"kind": "penalty", "player": "Anna", "points": 2, "by": ""},
     "penalty: say who makes it"),
    ({"kind": "penalty", "player": "Anna", "points": 0},
     "penalty: 'points': from 1 to 999 taken off, not 0"),
    ({"kind": "result", "round": 2, "table": 1, "ns": 1, "ew": 0},
     "result: round 2 has not been played"),
    ({"kind": "result", "round": 1, "table": 7, "ns": 1, "ew": 0},
     "result: round 1 has no table 7"),
    ({"kind": "result", "round": 1, "table": 1, "ns": 1},
     "result: 'ew' needed"),
    ({"kind": "withdraw", "player": "Anna", "points": 3},
     "withdraw: 'points' does not belong here"),
    ({"kind": "add", "player": "bo"}, "add: 'Bo' is playing already"),
    ({"kind": "reseat", "player": "Anna", "other": "anna"},
     "reseat: Anna cannot swap with themselves"),
    ({"kind": "bonus", "player": "Anna"}, "kind 'bonus': one of result, penalty, withdraw, "
     "add, bye, reseat"),
])
def test_bad_corrections_are_refused_in_one_line_and_change_nothing(
        tmp_path: Path, fields: dict[str, Any], refusal: str) -> None:
    director = make(tmp_path)
    first = director.start_round(RoundFormat(hands=1), force=True)
    play(director, first, 1, [NS_ONE])
    before = director.board()
    request = {"by": "Kim", "reason": "as agreed", **fields}
    with pytest.raises(ValueError) as caught:  # DirectorError, or the request's shape
        director.correct(Correction.from_request(request))
    assert str(caught.value).startswith(refusal) and "\n" not in str(caught.value)
    after = director.board()
    assert director.corrections() == [] and after["players"] == before["players"]
    assert len(director.players()) == len(NAMES)


def test_a_withdrawn_player_cannot_be_withdrawn_twice_and_can_come_back(
        tmp_path: Path) -> None:
    director = make(tmp_path)
    director.correct(correction("withdraw", player="Anna"))
    with pytest.raises(DirectorError, match="withdraw: Anna has withdrawn"):
        director.correct(correction("withdraw", player="Anna"))
    with pytest.raises(DirectorError, match="bye: Anna has withdrawn"):
        director.correct(correction("bye", player="Anna"))
    director.correct(correction("add", player="anna"))
    assert not players(director)["Anna"]["withdrawn"]
    assert [c.kind for c in director.corrections()] == ["withdraw", "add"]


def test_corrections_survive_a_restart(tmp_path: Path) -> None:
    director = make(tmp_path)
    first = director.start_round(RoundFormat(hands=1), force=True)
    play(director, first, 1, [NS_ONE])
    director.correct(correction("penalty", player="Anna", points=1))
    director.correct(correction("result", round=1, table=1, ns=2, ew=0))
    before = director.board()
    director.close()
    again = Director(tmp_path)
    after = again.board()
    assert after["players"] == before["players"]
    assert after["corrections"] == before["corrections"]


# --- byes ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("rule", "worth"), [("none", 0), ("3", 3), ("average", None)])
def test_a_bye_is_compensated_by_the_setting(tmp_path: Path, rule: str,
                                             worth: int | None) -> None:
    director = make(tmp_path, NAMES[:5], bye_points=rule)  # 5 players: one bye a round
    first = director.start_round(RoundFormat(hands=2), force=True)
    play(director, first, 1, [NS_ONE, NS_ONE])
    second = director.start_round(RoundFormat(hands=2), force=True)
    (sat_out,) = first.byes
    play(director, second, 1, [NS_ONE, EW_ONE])
    totals = players(director)
    mine = totals[sat_out]
    assert (mine["byes"], mine["rounds_played"]) == (1, 1)
    earned = 1  # 1-1 in round 2: one point
    expected = earned if worth is None else worth  # average: 1 point a round played
    assert mine["bye_points"] == expected and mine["points"] == earned + expected


# --- a tied round ---------------------------------------------------------------------------


def test_a_tied_round_is_shared_by_default(tmp_path: Path) -> None:
    director = make(tmp_path, NAMES[:4])
    first = director.start_round(RoundFormat(hands=2), force=True)
    assert first.tied_round == "shared"
    play(director, first, 1, [NS_ONE, EW_ONE])
    assert director.tables[(1, 1)].done
    assert {p["rounds_won"] for p in director.board()["players"]} == {1}


def test_a_tied_round_waits_for_its_extra_hand(tmp_path: Path) -> None:
    director = make(tmp_path, NAMES[:4], tied_round="extra-hand")
    first = director.start_round(RoundFormat(hands=2), force=True)
    assert first.tied_round == "extra-hand"
    assert Assignment.decode(first.encode()).tied_round == "extra-hand"
    play(director, first, 1, [NS_ONE, EW_ONE])
    table = director.board()["tables"][0]
    assert not table["done"] and table["extra_hand"] and table["hand"] == 3
    assert {p["rounds_won"] for p in director.board()["players"]} == {0}
    lines = director.tables[(1, 1)].lines
    extra = ["make S D", *["trick E"] * 3, *["trick S"] * 2]  # EW euchre S: EW +2
    for seq, line in enumerate(extra, len(lines)):
        director.receive(entries_topic("club", 1),
                         EntryMessage(1, "box1", 1, 1, seq, line).encode())
    table = director.board()["tables"][0]
    assert table["done"] and table["score"] == {"NS": 1, "EW": 1}  # the extra hand unscored
    totals = players(director)
    seats = first.tables[1]
    assert totals[seats[Seat.E]]["rounds_won"] == 1 and totals[seats[Seat.E]]["points"] == 1
    assert totals[seats[Seat.N]]["rounds_won"] == 0
    assert totals[seats[Seat.E]]["euchres"] == 0  # the extra hand counts for nothing else


def test_bonuses_follow_the_rounds_won(tmp_path: Path) -> None:
    director = Director(tmp_path, bonuses=Bonuses(round_won=2))
    for name in NAMES[:4]:
        director.register(name)
    first = director.start_round(RoundFormat(hands=2), Rules())
    play(director, first, 1, [NS_ONE, EW_ONE])
    assert {p["points"] for p in director.board()["players"]} == {1 + 2}


def test_winners_up_losers_down_follows_a_corrected_result(tmp_path: Path) -> None:
    from firmware.club.movement import by_result

    director = make(tmp_path)
    first = director.start_round(RoundFormat(hands=1), force=True)
    play(director, first, 1, [NS_ONE])
    play(director, first, 2, [NS_ONE])
    director.correct(correction("result", round=1, table=1, ns=0, ew=3))
    second = director.start_round(RoundFormat(hands=1), movement="by-result")
    assert list(second.tables.values()) == by_result(
        [first.tables[1], first.tables[2]], [Team.EW, Team.NS])


def test_an_average_bye_counts_only_rounds_played_to_their_end() -> None:
    from firmware.club.standings import standings

    done = outcome(1, "axby", Team.NS, 4, 0)
    playing = Outcome(2, 1, dict(zip(SEATS, "aqbr", strict=True)), {Team.NS: 3, Team.EW: 0},
                      False, frozenset(), [], [])
    ranked = standings(["a"], [done, playing], ["a"], {}, [],
                       NightSettings(bye_points="average"), Bonuses(round_won=2))
    mine = next(t for t in ranked if t.name == "a")
    assert (mine.rounds_played, mine.bye_points) == (1, 4 + 2)  # round 1 and its bonus
    assert mine.points == 4 + 2 + 3 + 6


@settings(deadline=None, max_examples=60)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 2)),
                min_size=1, max_size=12),
       st.permutations(["points", "rounds_won", "loners"]))
def test_ranks_follow_the_order_and_share_exactly_when_level(
        rows: list[tuple[int, int, int]], order: list[str]) -> None:
    totals = [Totals(f"p{i}", table_points=a, rounds_won=b, loners=c)
              for i, (a, b, c) in enumerate(rows)]
    ranked = rank(totals, [], order)

    def key(t: Totals) -> tuple[int, ...]:
        return tuple(getattr(t, criterion) for criterion in order)

    assert [key(t) for t in ranked] == sorted((key(t) for t in ranked), reverse=True)
    for place, mine in enumerate(ranked, 1):
        level = [t for t in ranked if key(t) == key(mine)]
        first = 1 + ranked.index(level[0])
        assert mine.rank == (f"={first}" if len(level) > 1 else str(place))


def test_a_preview_shows_the_next_seating_and_keeps_nothing(tmp_path: Path) -> None:
    sent: list[Any] = []
    director = Director(tmp_path, publish=lambda *message: sent.append(message))
    for name in NAMES:
        director.register(name)
    first = director.start_round(RoundFormat(hands=1))
    sent.clear()
    seen = director.start_round(RoundFormat(hands=1), preview=True)  # table 1, 2 still play
    assert seen.round == 2 and director.current_round == 1 and sent == []
    assert not director.tables[(1, 1)].done and director.tables[(1, 1)].ended is None
    a, b = seen.tables[1][Seat.N], seen.tables[2][Seat.W]
    director.correct(correction("reseat", player=a, other=b))
    swapped = director.start_round(RoundFormat(hands=1), preview=True)
    assert swapped.tables[1] == {**seen.tables[1], Seat.N: b}
    second = director.start_round(RoundFormat(hands=1), force=True)
    assert second.tables == swapped.tables and len(sent) == 1
    del first
