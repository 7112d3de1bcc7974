"""Games the box could not take (issue 23): a game started from a score, chosen
in the set-up menu; a misdeal, asked and entered as one (not an undo); a
renege said in words on the screen and on the hands page.  In both button
layouts, on gpiozero's mock pins through the ButtonBank, on a fake clock; the
journal is checked to replay to the same game, and a restart resumes it.
Default names: N=Ragnar E=Sigríður S=South W=Anna.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.app_kit import PinTable, assert_replays, journal_lines, pin_tables

from euchre_core import Rules, Seat, Team
from euchre_core.events import Misdeal, NewGame, Pass
from firmware.flow import SETUP_OPTION, FlowState, next_start, start_entry
from firmware.screens import draw
from firmware.summary import hands_lines


class Table(PinTable):
    """A referee on gpiozero mock pins; ``taps("ALONE N")`` are fingers on buttons."""

    def taps(self, text: str) -> None:
        for name in text.split():
            self.clock.advance(1.0)  # (never a double tap)
            self.tapper.tap_and_handle(self.referee, name)

    def labels(self) -> list[str]:
        return [option.label for option in self.referee.step().options]

    def pick(self, label: str) -> None:
        """Pick the option ``label`` as the table would: the seats layout with
        the button beside it (turning a long menu's page with ALONE), the
        cursor layout with NEXT to it, then OK."""
        for _ in range(16):
            options = self.referee.step().options
            labels = [option.label for option in options]
            if self.layout == "cursor":
                step = self.referee.step()
                at = step.cursor_index(self.referee.state.cursor)
                if labels[at] == label:
                    self.taps("OK")
                    return
                self.taps("NEXT")
                continue
            if label in labels:
                self.taps(options[labels.index(label)].key)
                return
            self.taps("ALONE")
        raise AssertionError(f"{label!r} never offered; offered: {labels}")


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Any]:
    yield from pin_tables(Table, tmp_path)


def open_setup(t: Table) -> None:
    if t.layout == "seats":
        t.taps("ALONE")
    else:
        t.pick(SETUP_OPTION)
    assert t.referee.step().name == "setup"


# --- a game started from a score ---------------------------------------------------


@pytest.mark.parametrize("layout", ["seats", "cursor"])
def test_the_set_up_menu_starts_a_game_from_a_score(table: Any, layout: str) -> None:
    t = table(layout)
    open_setup(t)
    t.pick("From a score…")
    step = t.referee.step()
    assert (step.name, step.question) == ("setup-score", "From a score")
    for points in range(6):
        t.pick(f"NS points: {points}")
    for points in range(4):
        t.pick(f"EW points: {points}")
    for name in ("Ragnar", "Sigríður", "South"):  # clockwise from North to Anna (W)
        t.pick(f"Dealer: {name}")
    assert t.referee.step().ok_words == "start at NS 6, EW 4, Anna deals"
    t.pick("Start the game")
    game = t.referee.game
    assert game.score == {Team.NS: 6, Team.EW: 4} and game.dealer is Seat.W
    assert game.hands_played == 0 and game.expected_kind == "bid"
    assert "game dealer=W NS=6 EW=4" in journal_lines(t.referee)
    assert_replays(t.referee)
    assert hands_lines(game) == ("No hand finished yet", "Started at NS 6, EW 4")
    t.close()  # a pulled plug: the next start resumes the game at its score
    again = table(layout)
    assert again.referee.game.score == {Team.NS: 6, Team.EW: 4}
    assert again.referee.game.dealer is Seat.W


def test_the_starting_score_goes_back_to_0_after_the_target_s_last_point() -> None:
    rules = Rules(target=5)
    state = FlowState(mode="setup-score")
    for expected in (1, 2, 3, 4, 0, 1):
        state = FlowState(mode="setup-score", start=next_start(state, rules, "EW"))
        assert start_entry(state.start) == NewGame(Seat.N, 0, expected)
    state = FlowState(mode="setup-score", start=next_start(state, rules, "dealer"))
    assert state.start == "game dealer=E NS=0 EW=1"
    assert FlowState.loads(state.dumps()) == state  # kept with the game: a restart resumes it
    assert FlowState.loads('{"mode": "setup-score", "start": "play N AS"}') == FlowState()


def test_a_button_that_does_nothing_on_the_from_a_score_page_says_what_does_whole(
        table: Any) -> None:
    """The refusal names what each button does there, wrapped whole into the
    message box (its words once took seven lines: the last ones cut)."""
    t = table()
    open_setup(t)
    t.pick("From a score…")
    for button in ("ALONE", "SPADES", "HEARTS", "DIAMONDS", "CLUBS"):
        t.taps(button)
        view = t.referee.view()
        assert view.message is not None and view.message.endswith(
            ": N or E adds a point (back to 0 after the last), W: next dealer, OK starts, "
            "UNDO: back"), view.message
        assert draw(view).cut == ()
        assert t.referee.step().name == "setup-score"  # and nothing changed
    t.pick("NS points: 0")  # the advice followed: a point for NS
    assert t.referee.step().ok_words == "start at NS 1, EW 0, Ragnar deals"


def test_a_starting_score_at_the_target_is_refused_on_the_screen(table: Any) -> None:
    t = table()
    assert t.referee.enter(NewGame(Seat.W, 10, 3)) is not None
    assert t.referee.message == "starting score NS 10, EW 3: NS is not below the target (10)"
    assert t.referee.game.dealer is None  # nothing started
    assert not any(line.startswith("game") for line in journal_lines(t.referee))


# --- a misdeal ---------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["seats", "cursor"])
def test_a_misdeal_is_asked_entered_said_and_undone(table: Any, layout: str) -> None:
    t = table(layout)
    t.referee.enter(NewGame(Seat.W))
    t.referee.enter(next(e for e in t.referee.game.legal_entries()
                         if e.line() == "upcard H"))
    t.referee.enter(Pass(Seat.N))
    assert t.referee.game.hand.passes == 1
    if layout == "seats":
        t.taps("ALONE")
    else:
        t.pick("Misdeal…")
    step = t.referee.step()
    assert (step.name, step.question, step.ok_words) == (
        "misdeal", "Misdeal?", "misdeal, Anna deals again")
    assert t.referee.game.entries[-1] != Misdeal()  # asked, not entered yet
    if layout == "seats":
        t.taps("OK")
    else:
        t.pick("Yes, deal again")
    game = t.referee.game
    assert game.entries[-1] == Misdeal()
    assert t.referee.message == "Misdeal: Anna deals hand 1 again"
    assert (game.hand.number, game.dealer, game.hand.passes, game.hand.upcard_suit) == (
        1, Seat.W, 0, None)
    assert journal_lines(t.referee)[-1] == "misdeal"  # a line of its own, not an undo
    assert_replays(t.referee)
    t.taps("UNDO")
    assert t.referee.message == "Undone: the misdeal"
    assert game.hand.passes == 1 and game.hand.upcard_suit is not None
    assert_replays(t.referee)


def test_a_quick_second_ok_in_the_cursor_layout_never_confirms_the_misdeal(
        table: Any) -> None:
    t = table("cursor")
    t.referee.enter(NewGame(Seat.W))
    t.pick("Misdeal…")
    t.taps("OK")  # the cursor starts on "back"
    assert Misdeal() not in t.referee.game.entries
    assert t.referee.step().name == "maker"


def test_undo_from_the_misdeal_question_goes_back_without_a_misdeal(table: Any) -> None:
    t = table()
    t.referee.enter(NewGame(Seat.W))
    t.taps("ALONE")
    assert t.referee.step().name == "misdeal"
    t.taps("UNDO")
    assert t.referee.step().name == "maker"
    assert t.referee.game.entries[-1] == NewGame(Seat.W)


# --- a renege in words -------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["seats", "cursor"])
def test_a_renege_is_said_in_words_and_the_hands_page_shows_it(
        table: Any, layout: str) -> None:
    t = table(layout)
    t.referee.enter(NewGame(Seat.W, 3, 1))
    for line in ("make N H",):
        t.referee.enter(next(e for e in t.referee.game.legal_entries() if e.line() == line))
    t.pick("Renege…")
    t.pick("Anna reneged")
    texts = draw(t.referee.view()).texts  # the result screen, as drawn
    assert "Anna reneged" in texts and "NS +2" in texts  # who reneged, what it cost
    assert t.referee.game.score == {Team.NS: 5, Team.EW: 1}
    assert hands_lines(t.referee.game) == ("1 ♥: Anna reneged, NS +2", "Started at NS 3, EW 1")
