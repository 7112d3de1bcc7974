"""A game started from a score (``game dealer=W NS=6 EW=4``) and a misdeal
(``misdeal``): the lines, the engine's rules and reasons, undo, the writer, and
both replay paths agreeing on each (``agree``: verdict, line, reason, state)."""

from __future__ import annotations

import pytest
from test_core_fast_replay import agree
from test_core_play_runs import HAND

from euchre_core import Game, IllegalEntry, Seat, Team, parse_event, replay, write_log
from euchre_core.events import Misdeal, NewGame, Pass, Upcard

HEADER = "euchre-log 1"


def log(*lines: str) -> str:
    return "\n".join([HEADER, *lines]) + "\n"


def test_the_game_line_carries_a_starting_score_and_writes_it_back() -> None:
    event = parse_event("game dealer=W NS=6 EW=4")
    assert event == NewGame(Seat.W, 6, 4)
    assert event.line() == "game dealer=W NS=6 EW=4"
    assert parse_event("game dealer=W EW=4 NS=6") == event
    assert parse_event("game dealer=W EW=4").line() == "game dealer=W NS=0 EW=4"
    assert parse_event("game dealer=W NS=0 EW=0").line() == "game dealer=W"  # from nothing
    text = log("game dealer=W NS=6 EW=4", "upcard H", "order N", *["trick N"] * 3,
               "trick E", "trick S")
    assert agree(text, deep=True) == "valid"
    game = replay(text).game
    assert game.score == {Team.NS: 7, Team.EW: 4}
    assert game.start_score == {Team.NS: 6, Team.EW: 4}
    assert game.hands_played == 1 and game.dealer is Seat.N  # the deal moved on from Anna
    assert write_log(game).split("\n")[1:3] == ["game dealer=W NS=6 EW=4", "upcard H"]
    assert "score NS=7 EW=4" in write_log(game)
    assert replay(write_log(game)).game == game


def test_a_game_started_from_a_score_is_won_at_the_target() -> None:
    text = log("game dealer=N NS=9 EW=8", "upcard H", "order S", *["trick N"] * 3,
               "tricks 3", "score NS=10 EW=8", "winner NS")
    assert agree(text, deep=True) == "valid"
    game = replay(text).game
    assert game.winner is Team.NS and game.hands_played == 1


def test_undo_of_the_game_line_takes_the_starting_score_back() -> None:
    game = replay(log("game dealer=N NS=3 EW=2")).game
    assert game.score == {Team.NS: 3, Team.EW: 2}
    assert game.undo() == NewGame(Seat.N, 3, 2)
    assert game.score == {Team.NS: 0, Team.EW: 0} and game.start_score == game.score
    game.push(NewGame(Seat.N))
    assert game.score == {Team.NS: 0, Team.EW: 0}


@pytest.mark.parametrize(("lines", "reason"), [
    (["game dealer=W NS=10 EW=4"], "starting score NS 10, EW 4: NS is not below the target (10)"),
    (["game dealer=W NS=3 EW=12"], "starting score NS 3, EW 12: EW is not below the target (10)"),
    (["rules target=5", "game dealer=N NS=5"],
     "starting score NS 5, EW 0: NS is not below the target (5)"),
    (["rules target=10 win-by-two=on", "game dealer=N NS=12 EW=9"],
     "starting score NS 12, EW 9: NS has already won (target 10, win by two)"),
    (["game dealer=W NS=-1 EW=4"],
     "game: NS=-1: a starting score is a whole number of points, 0 to 99"),
    (["game dealer=W NS=six EW=4"],
     "game: NS=six: a starting score is a whole number of points, 0 to 99"),
    (["game dealer=W NS=6 EW=100"],
     "game: EW=100: a starting score is a whole number of points, 0 to 99"),
    (["game dealer=W NS=6 EW=٤"],  # an Arabic-Indic digit: not a number the log takes
     "game: EW=٤: a starting score is a whole number of points, 0 to 99"),
    (["game dealer=X NS=6 EW=4"], "not a seat: 'X' (use N E S W)"),
    (["game dealer=W NS=6 NS=4"], "game: expected 'game dealer=SEAT [NS=N EW=N]'"),
    (["game NS=6 EW=4 dealer=W"], "game: expected 'game dealer=SEAT [NS=N EW=N]'"),
    (["game dealer=W NS=6 EW=4", "game dealer=N NS=1 EW=1"],
     "a game is in progress (hand 1): finish it or undo"),
])
def test_a_bad_starting_score_is_refused_naming_its_line(lines: list[str], reason: str) -> None:
    text = log(*lines, "upcard H")
    assert agree(text, deep=True) == "refused"
    result = replay(text)
    assert result.error is not None
    assert (result.error.line, result.error.reason) == (1 + len(lines), reason)
    assert result.game.phase.value in ("setup", "in game")
    assert result.game.winner is None


def test_win_by_two_may_start_at_the_target_while_no_one_leads_by_two() -> None:
    text = log("rules win-by-two=on", "game dealer=N NS=10 EW=9", "upcard H", "order E",
               *["trick E"] * 3, "tricks 3", "score NS=10 EW=10")
    assert agree(text, deep=True) == "valid"
    assert replay(text).game.winner is None


def test_a_misdeal_voids_the_hand_so_far_and_the_same_dealer_deals_again() -> None:
    text = log("game dealer=W", "upcard H", "pass N", "pass E", "misdeal",
               "upcard S", "pass N", "order E", *["trick E"] * 5, "score NS=0 EW=2")
    assert agree(text, deep=True) == "valid"
    game = replay(text).game
    assert game.hands_played == 1 and game.results[0].dealer is Seat.W
    assert game.results[0].number == 1 and game.hand.number == 2
    assert Misdeal() in game.entries
    written = write_log(game)
    assert "misdeal\nupcard S\n" in written and replay(written).game == game


def test_a_misdeal_keeps_the_hand_number_dealer_and_score() -> None:
    game = Game()
    game.push(NewGame(Seat.S, 2, 1))
    game.push(Upcard(parse_event("upcard H").suit))  # type: ignore[attr-defined]
    game.push(Pass(Seat.W))
    before = (game.hand.number, game.dealer, dict(game.score))
    game.push(Misdeal())
    assert (game.hand.number, game.dealer, dict(game.score)) == before
    assert game.hand.upcard_suit is None and game.hand.passes == 0
    assert game.hand.bid_turn is Seat.W  # the bidding starts again from the dealer's left
    assert game.expected == "the call: who made trump, which suit, alone?"
    game.push(Misdeal())  # and again: a table may misdeal twice
    assert game.undo() == Misdeal()
    assert game.undo() == Misdeal()
    assert game.hand.passes == 1 and game.hand.upcard_suit is not None  # the hand is back


def test_a_misdeal_after_the_call_and_in_a_dealt_hand_before_play() -> None:
    for lines in (["upcard H", "order S", "discard 9C"], [HAND[0]], HAND[:4]):
        text = log("game dealer=N", *lines, "misdeal", *HAND, "score NS=0 EW=2")
        assert agree(text, deep=True) == "valid", lines
        assert replay(text).game.hands_played == 1


@pytest.mark.parametrize(("lines", "reason"), [
    ([], "no game yet: start one with the first dealer (game dealer=SEAT)"),
    (["game dealer=N", "upcard H", "order S", "trick E"],
     "too late for a misdeal: play has begun (trick 2); finish the hand, or undo back to "
     "the bidding"),
    (["game dealer=N", *HAND[:6]],
     "too late for a misdeal: play has begun (trick 1); finish the hand, or undo back to "
     "the bidding"),
    (["game dealer=N NS=9", "upcard H", "order S", "tricks 3"],
     "game over: NS won 10-0: start a new game or undo"),
    (["game dealer=N", "misdeal extra"], "misdeal: expected 'misdeal'"),
])
def test_a_misdeal_too_late_is_refused_naming_its_line(lines: list[str], reason: str) -> None:
    bad = [] if lines and lines[-1].startswith("misdeal") else ["misdeal"]
    text = log(*lines, *bad)
    assert agree(text, deep=True) == "refused"
    result = replay(text)
    assert result.error is not None
    assert (result.error.line, result.error.reason) == (1 + len(lines) + len(bad), reason)


def test_a_misdeal_is_an_entry_undo_takes_back_not_an_undo() -> None:
    game = replay(log("game dealer=N", "upcard H", "pass E", "misdeal")).game
    with pytest.raises(IllegalEntry, match="^too late"):
        late = replay(log("game dealer=N", "upcard H", "order S", "trick E")).game
        late.push(Misdeal())
    assert game.undo() == Misdeal()
    assert game.hand.passes == 1
