"""Every kind of refused entry: the reason in words on the screen, and nothing
changed (game, journal, flow).  Default names: N=Ragnar E=Sigríður S=South W=Anna."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.app_kit import FakeClock, assert_replays, journal_lines

from euchre_core import Rules, Seat, write_log
from euchre_core.events import Defend, NewGame, Trick, Tricks
from firmware.app import Referee
from firmware.config import Config
from firmware.flow import HELP_OPTION as HELP
from firmware.flow import SETUP_OPTION, FlowState
from firmware.journal import Store
from firmware.view import View


def make(tmp_path: Path, rules: Rules | None = None, layout: str = "seats") -> Referee:
    config = Config(state_dir=tmp_path, rules=rules or Rules(), layout=layout)  # type: ignore[arg-type]
    return Referee(config, Store(tmp_path), renderer=lambda view: view, clock=FakeClock())


def setup(referee: Referee, presses: str) -> None:
    for name in presses.split():
        referee.press(name)


def quiet(view: View) -> View:
    return view._replace(message=None, message_is_error=True)


def snapshot(referee: Referee) -> tuple[str, list[str], str, View]:
    return (write_log(referee.game), journal_lines(referee),
            referee.store.flow(referee.game_id), quiet(referee.view()))


def assert_unchanged(referee: Referee, before: tuple[object, ...]) -> None:
    """A refused press changes nothing: the game, the journal, and the half-made
    call, which its advice relies on (issue 23: "tap a suit" after a refused OK
    is the selected maker's suit, not the upcard)."""
    after = snapshot(referee)
    assert after == before
    state = FlowState.loads(str(after[2]))
    assert state.mode == FlowState.loads(str(before[2])).mode


STANDARD = Rules()
LONE_MAKER = "W S HEARTS ALONE OK"  # Anna deals; South makes hearts alone (Ragnar sits out)
NS_WON = "W S HEARTS OK S S S E E"  # target 1: South makes hearts, takes 3 tricks: NS win 1-0

REFUSED = [
    ("sitting-out trick winner", STANDARD, LONE_MAKER, "N",
     "Ragnar sits out: South went alone"),
    ("sitting-out seat reneges", STANDARD, LONE_MAKER + " ALONE", "N",
     "Ragnar sits out: South went alone"),
    ("lone defender's partner wins a trick", Rules(defend_alone=True), LONE_MAKER + " W", "E",
     "Sigríður sits out: Anna defends alone"),
    ("makers' side defends alone", Rules(defend_alone=True), LONE_MAKER, "N",
     "Ragnar is on the makers' side"),
    ("turned-down suit named in round 2", STANDARD, "W HEARTS N OK E OK S OK W OK N", "HEARTS",
     "hearts was turned down: name another suit"),
    ("other suit named in round 1", STANDARD, "W HEARTS N OK E", "CLUBS",
     "round 1: only hearts (the upcard) can be ordered up; Sigríður may order up or pass"),
    ("out-of-turn bid after a pass", STANDARD, "W HEARTS N OK", "W",
     "it is Sigríður's turn to bid, not Anna's"),
    ("second upcard", STANDARD, "W HEARTS", "CLUBS", "the upcard is already entered (hearts)"),
    ("upcard after a pass", STANDARD, "W N OK", "HEARTS", "the upcard comes before the bidding"),
    ("Canadian loner with partner", Rules(canadian_loner=True), "W HEARTS E HEARTS ALONE", "OK",
     "Canadian loner: Sigríður ordered up partner Anna and must go alone"),
    ("undo before any game", STANDARD, "", "UNDO",
     "nothing to undo: this is the start of the game"),
    ("undo past the first dealer", STANDARD, "W UNDO", "UNDO",
     "nothing to undo: this is the start of the game"),
]


@pytest.mark.parametrize(("rules", "presses", "button", "message"),
                         [case[1:] for case in REFUSED], ids=[case[0] for case in REFUSED])
def test_refused_press_says_why_and_changes_nothing(
    tmp_path: Path, rules: Rules, presses: str, button: str, message: str
) -> None:
    referee = make(tmp_path, rules)
    setup(referee, presses)
    before = snapshot(referee)
    referee.press(button)
    view = referee.view()
    assert (view.message, view.message_is_error) == (message, True)
    assert_unchanged(referee, before)
    assert_replays(referee)


def test_stick_the_dealer_pass_says_why(tmp_path: Path) -> None:
    referee = make(tmp_path)
    setup(referee, "W HEARTS N OK E OK S OK W OK N OK E OK S OK W")  # Anna (dealer) selected
    before = snapshot(referee)
    assert referee.view().ok_hint == "OK does nothing while trump is picked"
    referee.press("OK")  # Anna may not pass: refused
    assert_unchanged(referee, before)
    assert referee.view().message == (
        "OK does nothing while trump is picked: tap a suit, ALONE to go alone, UNDO for another "
        "seat")
    setup(referee, "CLUBS OK")  # the advice: tap a suit (issue 23: it was taken as the upcard)
    assert journal_lines(referee)[-1] == "call W C"


def test_out_of_turn_first_pass_says_why(tmp_path: Path) -> None:
    referee = make(tmp_path)
    setup(referee, "W HEARTS E")  # Ragnar bids first; Sigríður selected
    before = snapshot(referee)
    assert referee.view().ok_hint == "OK does nothing while trump is picked"
    referee.press("OK")  # Sigríður may not pass: refused
    assert_unchanged(referee, before)
    setup(referee, "HEARTS OK")  # the advice: tap a suit; Sigríður orders up
    assert journal_lines(referee)[-1] == "order E"


@pytest.mark.parametrize("button", ["HEARTS", "CLUBS"])
def test_press_after_the_win_says_the_game_is_over(tmp_path: Path, button: str) -> None:
    referee = make(tmp_path, Rules(target=1))
    setup(referee, NS_WON)
    before = snapshot(referee)
    referee.press(button)
    assert snapshot(referee) == before
    assert referee.view().message == "game over: NS won 1-0: start a new game or undo"


def test_after_the_win_only_new_game_and_undo_are_taken(tmp_path: Path) -> None:
    referee = make(tmp_path, Rules(target=1))
    setup(referee, NS_WON)
    won_id = referee.game_id
    assert referee.view().title == "NS win 1-0"
    for button in ("SPADES", "DIAMONDS", "CLUBS", "HEARTS"):  # refused, unchanged
        before = snapshot(referee)
        referee.press(button)
        assert snapshot(referee) == before
        assert referee.view().message == "game over: NS won 1-0: start a new game or undo"
    assert referee.enter(Trick(Seat.S)) == "game over: NS won 1-0: start a new game or undo"
    assert referee.view().message == "game over: NS won 1-0: start a new game or undo"
    referee.press("UNDO")
    assert journal_lines(referee)[-2:] == ["trick E", "undo"]
    assert referee.game.winner is None and referee.view().prompt == "Trick 5: who won?"
    referee.press("E")  # the last trick again: won again
    assert referee.game.winner is not None
    referee.press("N")  # a seat: a new game, Ragnar dealing, once OK confirms it
    assert referee.game_id == won_id and referee.view().ok_hint == "OK: new game, Ragnar deals"
    referee.press("OK")  # shown at once, stored as a game of its own with its first entry
    assert referee.view().dealer == "Ragnar" and referee.game_id == won_id
    setup(referee, "S CLUBS OK")
    assert referee.game_id != won_id
    assert journal_lines(referee) == ["euchre-log 1", "rules target=1",
                                      "players N=Ragnar E=Sigríður S=South W=Anna",
                                      "game dealer=N", "make S C"]
    assert_replays(referee)


@pytest.mark.parametrize(("rules", "presses", "entry", "message"), [
    (STANDARD, LONE_MAKER, Defend(Seat.W),
     "defending alone is not played here (house rule defend-alone=off)"),
    (STANDARD, LONE_MAKER + " S S", Tricks(1),
     "the makers have 2 tricks with 3 to play: they finish with 2 to 5, not 1"),
    (STANDARD, LONE_MAKER + " S S", Tricks(0),
     "the makers have 2 tricks with 3 to play: they finish with 2 to 5, not 0"),
    (STANDARD, LONE_MAKER, NewGame(Seat.N),
     "a game is in progress (hand 1): finish it or undo"),
    (Rules(defend_alone=True), LONE_MAKER + " E", Defend(Seat.W),
     "Sigríður already defends alone"),
], ids=["defend-without-house-rule", "claim-below-range", "claim-zero", "new-game-mid-game",
        "second-lone-defender"])
def test_refused_entry_from_the_link_says_why_and_changes_nothing(
    tmp_path: Path, rules: Rules, presses: str, entry: object, message: str
) -> None:
    # Referee.enter is what the serial link's `enter` calls: same checks, same answer.
    referee = make(tmp_path, rules)
    setup(referee, presses)
    before = snapshot(referee)
    assert referee.enter(entry) == message  # type: ignore[arg-type]
    assert referee.view().message == message
    assert snapshot(referee) == before


def test_claim_menu_offers_only_counts_in_range(tmp_path: Path) -> None:
    referee = make(tmp_path)
    setup(referee, LONE_MAKER + " S S OK")  # makers have 2, 3 to play: claim menu
    view = referee.view()
    assert (view.kind, view.title) == ("menu", "Makers took")
    assert [(c.label, c.key) for c in view.choices] == [
        ("Makers took 2", "N"), ("Makers took 3", "E"), ("Makers took 4", "S"),
        ("Makers took 5", "W")]
    words = {"SPADES": "♠", "HEARTS": "♥", "DIAMONDS": "♦", "CLUBS": "♣"}
    for button in ("SPADES", "HEARTS", "DIAMONDS", "CLUBS", "ALONE"):  # no count 0, 1, 6
        before = snapshot(referee)
        referee.press(button)
        assert snapshot(referee) == before
        assert referee.view().message == (
            f"{words.get(button, button)} does nothing in the claim menu: "
            "tap the button by the count, OK: the makers took the rest, or UNDO to go back")
    referee.press("E")
    assert journal_lines(referee)[-1] == "tricks 3"
    assert referee.game.results[-1].points == 1


def bidding_labels(referee: Referee) -> list[str]:
    """The choices of the maker step, but a misdeal (offered beside them)."""
    return [c.label for c in referee.view().choices if c.label != "Misdeal…"]


def entries_offered(referee: Referee) -> list[str]:
    """The log line of each option's entry ("" for an option without one)."""
    return [o.action.entry.line() if o.action.entry else "" for o in referee.step().options]


def test_cursor_layout_offers_only_legal_choices(tmp_path: Path) -> None:
    referee = make(tmp_path, layout="cursor")
    setup(referee, "NEXT NEXT NEXT NEXT OK")  # cursor on "Anna deals"
    assert journal_lines(referee)[-1] == "game dealer=W"
    labels = [c.label for c in referee.view().choices]
    assert labels[:9] == ["Upcard ♣", "Upcard ♥", "Ragnar passes",  # the seats clockwise
                          "South", "Anna", "Ragnar", "Sigríður", "Upcard ♠", "Upcard ♦"]
    assert labels[-1] == HELP
    assert referee.view().cursor == 4  # on Anna: the dealer makes most often
    setup(referee, "PREV PREV PREV OK")  # upcard hearts
    assert bidding_labels(referee) == [
        "Anna", "Sigríður", "Ragnar passes", "Ragnar", "South", HELP]
    assert referee.view().cursor == 2  # the bidding is entered: the pass of whose turn it is
    setup(referee, "NEXT OK")  # Ragnar
    assert entries_offered(referee) == [  # passes not recorded: any suit
        "pass N", "call N C alone", "order N alone", "call N C", "order N", "call N D",
        "call N S", "call N D alone", "call N S alone", ""]  # the last: help
    assert referee.view().cursor == 4  # on the upcard's suit, next (♦) one press away
    setup(referee, "UNDO OK")  # another seat: back to the bidders, and OK: Ragnar passes
    assert journal_lines(referee)[-2:] == ["upcard H", "pass N"]
    assert bidding_labels(referee) == [  # whose turn it is
        "Sigríður passes", "Sigríður", HELP]
    setup(referee, "NEXT OK")
    assert entries_offered(referee) == ["pass E", "order E", "order E alone", ""]
    assert referee.view().cursor == 1
    setup(referee, "NEXT OK")  # the call: alone
    assert journal_lines(referee)[-1] == "order E alone"
    # Anna sits out: never offered; the cursor on the maker, the likeliest winner.
    view = referee.view()
    assert [c.label for c in view.choices] == [  # the leader, Ragnar, one press away
        "Renege…", "South won", "Sigríður won", "Ragnar won", "Claim: makers took…", HELP]
    assert view.cursor == 2
    setup(referee, "OK OK")
    assert journal_lines(referee)[-3:] == ["order E alone", "trick E", "trick E"]
    assert all(c.key == "" for c in referee.view().choices)  # no buttons this layout lacks
    setup(referee, "NEXT NEXT OK")  # the claim menu: makers have 2, 3 to play
    assert [c.label for c in referee.view().choices] == [
        "Makers took 2", "Makers took 3", "Makers took 4", "Makers took 5", HELP]
    assert all(c.key == "" for c in referee.view().choices)
    assert_replays(referee)


def test_arrows_in_the_seats_layout_show_the_choices_and_ok_picks(tmp_path: Path) -> None:
    referee = make(tmp_path)
    assert referee.view().choices == ()
    setup(referee, "NEXT")  # the first arrow shows the choices, the cursor on the first
    view = referee.view()
    assert [c.label for c in view.choices] == [
        "Random dealer", "Ragnar deals", "Sigríður deals", "South deals", "Anna deals",
        SETUP_OPTION]
    assert view.cursor == 0
    assert journal_lines(referee)[-1].startswith("players ")  # nothing entered yet
    setup(referee, "NEXT NEXT PREV NEXT NEXT NEXT")  # to "Anna deals"
    assert referee.view().cursor == 4
    setup(referee, "OK")
    assert journal_lines(referee)[-1] == "game dealer=W"
    assert referee.view().choices == ()  # back to the table: seat buttons again
    setup(referee, "H S")  # upcard hearts; South (the seat button, not the cursor)
    assert referee.state.seat == "S"
    setup(referee, "PREV")
    assert referee.view().choices != ()
    setup(referee, "UNDO")  # any other button leaves the choices
    assert referee.view().choices == ()
    setup(referee, "N")  # a seat button acts as usual, even after arrows
    assert referee.state.seat == "N"
    assert_replays(referee)
