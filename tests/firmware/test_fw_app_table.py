"""What the table can follow (issue 11, SPEC §2 "What the table sees"): no press
acts unseen, every step says what OK does, the bidding, house rules and hands
on request, help by the buttons of each layout, undo in words, the cursor on
the likeliest choice, refusals that say what to do, set-up without a laptop.

Driven as the table drives it: gpiozero's mock pins through the ButtonBank
(PinTapper), or ``Referee.press`` with a fake clock.  Default names:
N=Ragnar E=Sigríður S=South W=Anna.
"""

from __future__ import annotations

import queue
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory
from support.app_kit import (
    FakeClock,
    PinTapper,
    assert_replays,
    choose,
    journal_lines,
    press_all,
    wait_out_result,
)

import drivers
from euchre_core import Phase, Rules, Seat, Team
from firmware.app import BROWSE_S, Referee
from firmware.buttons import CONFIRM_GUARD_S, STUCK_S
from firmware.config import CURSOR_PINS, DEFAULT_PINS, Config
from firmware.flow import HELP_OPTION, FlowState
from firmware.journal import Store
from firmware.view import Choice


@pytest.fixture
def factory() -> Any:
    mock = MockFactory()
    yield mock
    mock.reset()
    mock.close()


class Table:
    """A referee on gpiozero mock pins: ``tap("N")`` is a finger on a button."""

    def __init__(self, tmp_path: Path, factory: Any, *, layout: str = "seats",
                 rules: Rules | None = None, hold_s: float = 30.0) -> None:
        self.clock = FakeClock()
        pins = dict(CURSOR_PINS if layout == "cursor" else DEFAULT_PINS)
        self.config = Config(state_dir=tmp_path, layout=layout,  # type: ignore[arg-type]
                             pins=pins, rules=rules or Rules(), hold_s=hold_s)
        self.events: queue.Queue[Any] = queue.Queue()
        self.bank = drivers.ButtonBank(pins, self.events, bounce_time=self.config.bounce_s,
                                       hold_time=hold_s, pin_factory=factory, clock=self.clock)
        self.tapper = PinTapper(factory, pins, self.clock, self.events,
                                bounce_s=self.config.bounce_s)
        self.factory, self.pins, self.tmp_path = factory, pins, tmp_path
        self.referee = self.boot()

    def boot(self) -> Referee:
        return Referee(self.config, Store(self.tmp_path), renderer=lambda view: view,
                       clock=self.clock, is_pressed=self.bank.is_pressed)

    def tap(self, *names: str) -> None:
        for name in names:
            self.tapper.tap_and_handle(self.referee, name)

    def taps(self, text: str) -> None:
        self.tap(*text.split())

    def restart(self) -> Referee:
        self.referee.store.close()
        self.referee = self.boot()
        return self.referee

    def close(self) -> None:
        self.bank.close()
        self.referee.store.close()


@pytest.fixture
def table(tmp_path: Path, factory: Any) -> Any:
    made: list[Table] = []

    def make(**kwargs: Any) -> Table:
        made.append(Table(tmp_path, factory, **kwargs))
        return made[-1]

    yield make
    for each in made:
        each.close()


HAND_1 = "W N HEARTS OK N N N E E"  # Anna deals; Ragnar makes hearts, takes 3: NS +1


# --- item 1: the press after a hand's end only dismisses its result ---------

def test_the_tap_after_a_hand_only_dismisses_its_result(table: Any) -> None:
    t = table()
    t.taps(HAND_1)
    referee = t.referee
    lines = journal_lines(referee)
    assert referee.view().kind == "result"
    t.tap("S")  # a seat within the result screen: it is not the next maker
    assert journal_lines(referee) == lines and referee.state.is_empty
    view = referee.view()
    assert (view.kind, view.last_hand) == ("table", "Last hand: Ragnar made it, NS +1")
    referee = t.restart()  # the last hand comes from the game, not from memory
    assert referee.view().last_hand == "Last hand: Ragnar made it, NS +1"
    t.tap("S", "CLUBS", "OK")  # now South makes clubs: the last hand gives way
    assert journal_lines(referee)[-1] == "make S C"
    assert referee.view().last_hand == ""


def test_a_sixth_trick_tap_is_not_the_next_hands_maker(table: Any) -> None:
    t = table()
    t.taps(HAND_1 + " E")  # a sixth "trick": it dismisses the result only
    assert journal_lines(t.referee)[-1] == "trick E"
    assert t.referee.game.hand.number == 2 and t.referee.state.seat is None


def test_the_result_screen_goes_by_itself_and_then_taps_act(table: Any) -> None:
    t = table()
    t.taps(HAND_1)
    assert t.referee.next_deadline() == t.referee.result_until
    wait_out_result(t.referee, t.clock)
    assert t.referee.view().kind == "table"
    t.tap("S")  # the table waited: this tap picks the maker
    assert t.referee.state.seat == "S"


def test_a_new_game_after_a_win_takes_a_confirmation_and_undo_reaches_back(
        table: Any) -> None:
    t = table(rules=Rules(target=1))
    t.taps(HAND_1)  # NS win 1-0
    referee = t.referee
    won_id, won_lines = referee.game_id, journal_lines(referee)
    assert referee.view().kind == "winner"
    t.tap("W")  # one more tap: no new game yet
    view = referee.view()
    assert referee.game_id == won_id and referee.game.phase is Phase.GAME_OVER
    assert view.kind == "confirm" and view.ok_hint == "OK: new game, Anna deals"
    assert "W Anna deals" in view.lines  # its own screen: the seats, the players, the dealer
    assert journal_lines(referee) == won_lines
    t.tap("UNDO")  # back from the confirmation, nothing undone
    assert journal_lines(referee) == won_lines and referee.state.is_empty
    t.tap("UNDO")  # and into the finished game: its last trick
    assert journal_lines(referee)[-2:] == ["trick E", "undo"]
    assert referee.game.winner is None and referee.game_id == won_id
    t.tap("N")  # the last trick to Ragnar instead: NS win again
    assert referee.game.winner is not None
    t.tap("OK")  # OK: a new game, its dealer drawn now, once OK confirms it
    drawn = referee.state.seat
    assert drawn is not None and referee.view().ok_hint.startswith("OK: new game, ")
    assert referee.game_id == won_id
    t.clock.advance(CONFIRM_GUARD_S)  # a deliberate second OK (a double tap is refused)
    t.tap("OK")
    assert referee.game.phase is Phase.IN_GAME and referee.view().hand == 1
    assert str(referee.game.hand.dealer) == drawn  # the dealer the confirmation named
    assert referee.game_id == won_id  # stored as a game of its own with its first entry
    t.taps("S CLUBS OK")
    assert referee.game_id != won_id and journal_lines(referee)[-2:] == [
        f"game dealer={referee.game.hand.dealer}", "make S C"]
    assert_replays(referee)


# --- item 2: every step says what OK does; refusals clear; the bidding ------

def test_every_step_says_what_ok_does(table: Any) -> None:
    t = table(rules=Rules(defend_alone=True))
    referee = t.referee
    said = []
    for name in "W HEARTS N OK E HEARTS ALONE".split():
        said.append(referee.view().ok_hint)
        t.tap(name)
    assert said == [
        "OK: a random dealer",  # before W
        "OK: Ragnar passes",  # before the upcard
        "OK: Ragnar passes",
        "OK: Ragnar passes",  # Ragnar picked
        "OK: Sigríður passes",
        "OK: Sigríður passes",  # Sigríður picked
        "OK: Sigríður makes ♥",
    ]
    assert referee.view().ok_hint == "OK: Sigríður makes ♥ alone"
    t.tap("OK")
    assert referee.view().ok_hint == "OK: no one defends"
    t.tap("OK")
    assert referee.view().ok_hint == "OK: claim the rest"
    t.clock.advance(CONFIRM_GUARD_S)  # the trick list read (a quick OK would only ask)
    t.tap("OK")
    assert referee.view().ok_hint == "OK: took 5"  # the makers took the rest: said, and done
    t.clock.advance(CONFIRM_GUARD_S)
    t.tap("OK")
    assert journal_lines(referee)[-1] == "tricks 5"


def test_a_refused_suit_keeps_the_maker_and_the_screen_shows_the_bidding(
        table: Any) -> None:
    t = table()
    referee = t.referee
    t.taps("W HEARTS N OK E OK S OK W OK")  # all four passed: round 2
    view = referee.view()
    assert view.bidding == "Round 2 · not ♥"
    assert view.ok_hint == "OK: Ragnar passes"
    t.taps("N OK")
    assert referee.view().bidding == "Round 2 · not ♥ · 1 passed"
    t.taps("E HEARTS")  # hearts was turned down: refused; Sigríður stays picked (issue 23)
    view = referee.view()
    assert view.message == "hearts was turned down: name another suit"
    assert referee.state.seat == "E" and view.maker == "Sigríður"
    assert view.ok_hint == "OK: Sigríður passes"  # the screen says whose pass OK enters
    t.tap("S")  # out of turn: refused, and Sigríður is still the one picked
    assert referee.view().message == "it is Sigríður's turn to bid, not South's"
    assert referee.state.seat == "E" and referee.view().ok_hint == "OK: Sigríður passes"
    t.taps("CLUBS OK")  # the advice: name another suit
    assert journal_lines(referee)[-1] == "call E C"


def test_round_one_bidding_names_the_upcard_and_the_passes(table: Any) -> None:
    t = table()
    t.taps("W DIAMONDS N OK")
    assert t.referee.view().bidding == "Round 1 · ♦ up · 1 passed"


# --- item 4: house rules, a lone defender, counts in words, the hands -------

def test_house_rules_marker_and_rules_page(table: Any) -> None:
    standard = table()
    assert standard.referee.view().house_rules is False
    standard.referee.press("HELP")  # the emulator's ?; on the box a long press (below)
    standard.taps("OK OK")  # the help's two screens, then the rules
    view = standard.referee.view()
    assert (view.kind, view.lines) == ("rules", ("Standard rules", "to 10, stick the dealer"))
    standard.close()


def test_win_by_two_says_why_play_goes_on(tmp_path: Path) -> None:
    clock = FakeClock()
    rules = Rules(target=5, win_by_two=True, stick_the_dealer=False)
    referee = Referee(Config(state_dir=tmp_path, rules=rules), Store(tmp_path),
                      renderer=lambda view: view, clock=clock)
    view = referee.view()
    assert view.house_rules
    referee.press("HELP")
    referee.press("OK")  # the help's second screen
    referee.press("OK")
    assert referee.view().lines == (
        "Target: 5 points", "Win by two: on", "Stick the dealer: off",
        "At 5 or more, play on until two ahead")
    referee.press("UNDO")  # back to the table
    # NS +2 (march), EW +2, EW +2 (euchres), NS +2 (march), NS +1: 5-4, play goes on.
    press_all(referee, ("W N HEARTS OK N N N N N  S HEARTS OK E E E W W  N HEARTS OK E E E W W"
                        "  N HEARTS OK N N N N N  S HEARTS OK S S S E E").split(), clock)
    assert (referee.game.score[Team.NS], referee.game.score[Team.EW]) == (5, 4)
    assert referee.game.winner is None
    view = referee.view()
    assert view.kind == "result"
    assert view.lines == ("South made it", "3 tricks", "NS +1", "Win by two: play on")
    wait_out_result(referee, clock)
    assert referee.view().last_hand == "Last hand: South made it, NS +1"


def test_result_words_one_trick_and_the_hands_page_after_a_restart(tmp_path: Path,
                                                                    factory: Any) -> None:
    t = Table(tmp_path, factory)
    try:
        t.taps("W N HEARTS OK N E E E E")  # Ragnar takes 1 trick: euchred
        assert t.referee.view().lines == ("Ragnar euchred", "1 trick", "EW +2")
        t.tap("N")  # dismiss
        referee = t.restart()
        referee.press("HELP")  # the emulator's ?; on the box a long press (below)
        t.taps("OK OK OK")  # the help's two screens, the rules
        view = referee.view()
        assert (view.kind, view.title) == ("hands", "Hands so far")
        assert view.lines == ("1 ♥: Ragnar euchred, EW +2",)
        t.tap("OK")  # the players' stats over the kept games, replayed (issue 26)
        view = referee.view()
        assert (view.kind, view.title) == ("stats", "Stats")
        assert view.lines[:1] == ("1 game kept, replayed",)
        assert ("Ragnar: won 0 of 1; called 1, -2.0 a call; alone 0 (0 made); euchres 0, "
                "euchred 1") in view.lines
        t.taps(" ".join(["OK"] * referee.page_screens()))  # its screens, one player each
        assert referee.view().kind == "table"
    finally:
        t.close()


def test_a_lone_defender_is_on_the_table_screen(table: Any) -> None:
    t = table(rules=Rules(defend_alone=True))
    t.taps("W N HEARTS ALONE OK")
    assert t.referee.view().lone_defender is None
    t.tap("E")  # Sigríður defends alone
    assert t.referee.view().lone_defender == "Sigríður"


# --- item 5: help on the real box ------------------------------------------

def hold(t: Table, name: str) -> list[Any]:
    """Press and keep holding ``name`` until the ButtonBank sends its hold;
    returns the events (press, hold), each handled by the referee."""
    pin = t.factory.pin(t.pins[name])
    pin.drive_low()
    got = [t.events.get(timeout=5)]
    got.append(t.events.get(timeout=5))
    for event in got:
        t.referee.handle(event)
    return got


def test_a_long_press_of_alone_opens_help_and_takes_back_its_tap(table: Any) -> None:
    t = table(hold_s=0.05)
    t.taps("W N")  # Ragnar picked: ALONE's tap would toggle alone
    before = t.referee.store.flow(t.referee.game_id)
    events = hold(t, "ALONE")
    t.factory.pin(t.pins["ALONE"]).drive_high()
    assert [(e.name, e.kind) for e in events] == [("ALONE", "press"), ("ALONE", "hold")]
    view = t.referee.view()
    assert view.kind == "help" and "Hold ALONE: help" in view.lines
    assert view.ok_hint == "OK: page 2 of 2"
    assert t.referee.store.flow(t.referee.game_id) == before  # the toggle was taken back
    assert t.referee.state.alone is False
    t.clock.advance(STUCK_S + 1)
    t.referee.tick()  # let go in time: not reported
    assert t.referee.view().message is None
    for kind in ("help", "rules", "hands", "stats"):
        t.tap("OK")
        assert t.referee.view().kind == kind
    t.taps(" ".join(["OK"] * t.referee.page_screens()))  # the stats' screens
    assert t.referee.view().kind == "table"
    t.taps("HEARTS OK")  # and the call goes on where it was
    assert journal_lines(t.referee)[-1] == "make N H"


def test_a_long_press_still_down_much_later_is_reported_stuck(table: Any) -> None:
    t = table(hold_s=0.05)
    t.tap("W")
    hold(t, "ALONE")
    assert t.referee.view().kind == "help"
    assert t.referee.next_deadline() is not None
    t.clock.advance(STUCK_S)
    t.referee.tick()
    assert t.referee.view().message == "ALONE is held down: is the button stuck?"
    t.factory.pin(t.pins["ALONE"]).drive_high()


def test_cursor_layout_help_by_a_long_press_or_the_last_choice(table: Any) -> None:
    t = table(layout="cursor", hold_s=0.05)
    hold(t, "NEXT")
    t.factory.pin(t.pins["NEXT"]).drive_high()
    view = t.referee.view()
    assert view.kind == "help" and view.lines[0] == "PREV/NEXT: move"
    assert not any("hold a key" in line for line in view.lines)
    assert t.referee.view().cursor == 0 and t.referee.state.cursor is None  # taken back
    t.tap("UNDO")  # back to the table
    choose(t.referee, HELP_OPTION, t.tap)  # with a rotary encoder: the last choice
    assert t.referee.view().kind == "help"


# --- item 6: undo in words --------------------------------------------------

def test_undo_says_what_it_took_back_with_names(table: Any) -> None:
    t = table()
    referee = t.referee
    t.taps("W N HEARTS OK N E E E E")  # Ragnar euchred: EW +2
    t.tap("N")  # dismiss the result
    t.tap("UNDO")
    assert referee.view().message == "Undone: Sigríður's trick — hand 1 reopened, EW −2"
    t.tap("UNDO")
    assert referee.view().message == "Undone: Sigríður's trick"
    t.taps("UNDO UNDO UNDO UNDO")
    assert referee.view().message == "Undone: Ragnar's call (♥)"
    t.tap("UNDO")
    assert referee.view().message == "Undone: the new game (Anna to deal)"


# --- item 7: the cursor layout ------------------------------------------------

def test_cursor_starts_on_whose_turn_and_the_leader(table: Any) -> None:
    t = table(layout="cursor")
    referee = t.referee
    t.taps("PREV PREV PREV OK")  # Anna deals
    assert journal_lines(referee)[-1] == "game dealer=W"
    view = referee.view()
    assert view.choices[view.cursor].label == "Anna"  # the dealer makes most often
    assert [c.label for c in view.choices[3:7]] == [  # the seats clockwise around her
        "South", "Anna", "Ragnar", "Sigríður"]
    assert view.ok_hint == "OK: Anna bids"
    t.taps("NEXT OK PREV OK")  # Ragnar; spades with partner is the call: four presses
    assert journal_lines(referee)[-1] == "make N S"
    view = referee.view()
    assert view.choices[view.cursor].label == "Ragnar won"  # the maker leads: left of Anna
    assert [c.label for c in view.choices[1:5]] == [  # one press away: the defenders, the
        "Sigríður won", "Ragnar won", "Anna won", "South won"]  # partner two
    t.taps("NEXT OK")  # Anna wins and leads: the maker is still the likeliest
    view = referee.view()
    assert view.choices[view.cursor].label == "Ragnar won"
    t.taps("PREV OK")  # South wins and leads: the makers lead, so South is the likeliest
    view = referee.view()
    assert view.choices[view.cursor].label == "South won"
    assert all(choice.key == "" for choice in view.choices)
    assert "Tap" not in view.prompt


def test_the_choice_strip_closes_by_itself_and_on_another_button(table: Any) -> None:
    t = table()
    referee = t.referee
    t.tap("W")
    referee.press("NEXT")  # (the default map has no arrows; the emulator's keys do)
    assert referee.view().choices != ()
    assert referee.next_deadline() == referee.browse_until
    t.clock.advance(BROWSE_S)
    view = referee.view()
    assert view.choices == () and view.ok_hint == "OK: Ragnar passes"  # OK is OK again
    referee.press("NEXT")
    assert referee.view().ok_hint == "OK: Anna bids"  # while open it says so
    t.tap("N")  # any other button closes it and acts as itself
    assert referee.view().choices == () and referee.state.seat == "N"


# --- item 9: refusals that say what to do instead ---------------------------

@pytest.mark.parametrize(("presses", "button", "message"), [
    # (ALONE before the maker is picked asks about a misdeal:
    # test_fw_app_start_misdeal.py)
    ("W N HEARTS OK", "SPADES",
     "♠ does nothing while the tricks are entered: tap the winner's seat, OK to claim the "
     "rest, ALONE for a renege"),
    ("W N HEARTS OK ALONE", "OK",
     "OK does nothing now: tap the seat that reneged, or UNDO to go back"),
])
def test_a_button_that_does_nothing_says_what_to_do(table: Any, presses: str, button: str,
                                                    message: str) -> None:
    t = table()
    t.taps(presses)
    lines = journal_lines(t.referee)
    t.tap(button)
    assert t.referee.view().message == message
    assert journal_lines(t.referee) == lines
    assert "not used here" not in message


# --- item 11: setting up without a laptop -------------------------------------

def test_set_up_players_and_rules_with_the_buttons(tmp_path: Path, factory: Any) -> None:
    t = Table(tmp_path, factory)
    try:
        referee = t.referee
        t.tap("ALONE")  # at a new game: the set-up menu
        view = referee.view()
        assert (view.kind, view.title) == ("menu", "Set up a game")
        assert [c.label for c in view.choices] == [
            "Players…", "House rules…", "Done",
            "From a score…"]
        t.tap("E")  # rules: eight profiles, three a page (ALONE: more)
        assert referee.view().choices[-1] == Choice("More… 1/3", "ALONE")
        t.tap("ALONE")
        labels = [c.label for c in referee.view().choices]
        t.tap(referee.view().choices[labels.index("To 11")].key)
        assert journal_lines(referee)[-1] == "rules target=11"
        t.tap("N")  # players: the four seats on one page
        t.tap("W")  # who sits West?
        view = referee.view()
        assert view.title == "Who sits at W?"
        assert "Anna" not in [c.label for c in view.choices]  # already seated
        t.tap("OK")  # keep Anna
        assert referee.view().title == "Whose name? OK: done"
        t.clock.advance(CONFIRM_GUARD_S)  # read (a quick second OK only asks)
        t.tap("OK")  # done with the names
        t.clock.advance(CONFIRM_GUARD_S)
        t.tap("OK")  # done (the row beside OK)
        assert referee.view().kind == "table" and referee.view().house_rules
        t.tap("W")  # Anna deals the first game, to 11
        assert referee.game.rules.target == 11
        assert_replays(referee)
    finally:
        t.close()


def test_set_up_offers_names_the_box_has_kept(tmp_path: Path) -> None:
    clock = FakeClock()
    referee = Referee(Config(state_dir=tmp_path, rules=Rules(target=1)), Store(tmp_path),
                      renderer=lambda view: view, clock=clock)
    referee.set_next_names({Seat.W: "Zoë"})  # (a laptop set her for the next game)
    press_all(referee, (HAND_1 + " W OK N HEARTS OK N N N E E").split(), clock)  # two games
    referee.set_next_names({Seat.W: "Anna"})  # and Anna back for the one after
    assert "players N=Ragnar E=Sigríður S=South W=Zoë" in referee.store.lines(referee.game_id)
    for name in "ALONE N W".split():  # after the win: set-up, players, who sits West?
        referee.press(name)
    labels = [c.label for c in referee.view().choices]
    assert "Zoë" in labels and "Anna" not in labels  # kept; already seated
    referee.press(referee.view().choices[labels.index("Zoë")].key)
    assert referee.config.names[Seat.W] == "Zoë"
    assert referee.store.settings()["players"].endswith("W=Zoë")
    assert FlowState.loads(referee.store.flow(referee.game_id)).mode == "setup-names"
    referee.store.close()  # the box is switched off: one referee per state directory
    referee = Referee(Config(state_dir=tmp_path), Store(tmp_path),
                      renderer=lambda view: view, clock=clock)
    assert referee.config.names[Seat.W] == "Zoë"  # kept across a restart
