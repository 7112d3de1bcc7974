"""A new game after a win (issue 23, "a double tap ends the game for good"): OK
twice quickly asks once and confirms nothing, and UNDO reaches the finished
game until the new game's first real entry, also after a restart.

Driven as the table drives it: gpiozero's mock pins through the ButtonBank, on
a fake clock (the bank's bounce lockout is stepped over, never slept).
Default names: N=Ragnar E=Sigríður S=South W=Anna.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.app_kit import FakeClock, PinTable, assert_replays, journal_lines, pin_tables

from euchre_core import Phase, Rules, Seat, parse_event
from euchre_core.events import NewGame, Trick
from firmware.app import Referee
from firmware.buttons import CONFIRM_GUARD_S
from firmware.config import Config
from firmware.journal import Store

WIN = "W N HEARTS OK N N N E E"
"""Target 1: Anna deals, Ragnar makes hearts and takes 3 tricks: NS win 1-0."""
CURSOR_WIN = "OK NEXT OK … OK OK OK OK OK OK"
"""The same game's entries in the cursor layout (the cursor starts on the likeliest;
``…``: the table reads the trump list Ragnar's seat opened before its OK)."""


class Table(PinTable):
    """A referee on gpiozero mock pins, to target 1; ``tap("OK")`` is a finger on a button."""

    def __init__(self, tmp_path: Path, factory: Any, layout: str = "seats") -> None:
        super().__init__(tmp_path, factory, layout, rules=Rules(target=1))

    def taps(self, text: str) -> None:
        for name in text.split():
            if self.referee.result is not None:  # the result screen goes by itself
                self.clock.t = max(self.clock.t, self.referee.result_until)
            if name == "…":  # the screen read: the next OK is not a quick second tap
                self.clock.advance(CONFIRM_GUARD_S)
                continue
            self.tapper.tap_and_handle(self.referee, name)

    def restart(self) -> Referee:
        self.referee.store.close()
        self.referee = self.boot()
        return self.referee


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Any]:
    yield from pin_tables(Table, tmp_path)


@pytest.mark.parametrize(("layout", "win"), [("seats", WIN), ("cursor", CURSOR_WIN)])
def test_ok_twice_quickly_after_the_win_starts_no_game(table: Any, layout: str,
                                                       win: str) -> None:
    t = table(layout)
    t.taps(win)
    referee = t.referee
    assert referee.game.winner is not None
    won = journal_lines(referee)
    t.clock.advance(CONFIRM_GUARD_S)  # the winner read
    t.taps("OK")  # asks: "Start a new game?"
    assert referee.view().title == "Start a new game?" or referee.state.mode == "new-game"
    t.clock.advance(0.12 - 0.06)  # a tap takes 0.06 s here: OK again 0.12 s after the first
    t.taps("OK")
    assert referee.game.phase is Phase.GAME_OVER and referee.state.mode == "new-game"
    assert referee.view().message == "OK twice quickly: read the screen, then OK to confirm"
    assert journal_lines(referee) == won
    t.clock.advance(CONFIRM_GUARD_S)  # read, then OK: the new game starts
    t.taps("OK")
    assert referee.game.phase is Phase.IN_GAME and referee.view().hand == 1


def test_undo_reaches_the_finished_game_until_the_new_games_first_entry(table: Any) -> None:
    t = table()
    t.taps(WIN)
    referee = t.referee
    won_id, won = referee.game_id, journal_lines(referee)
    t.taps("W")  # a new game, Anna dealing, once OK confirms it
    t.clock.advance(CONFIRM_GUARD_S)
    t.taps("OK")
    assert referee.game.phase is Phase.IN_GAME and referee.view().dealer == "Anna"
    assert [info.id for info in referee.store.games()] == [won_id]  # nothing stored yet
    referee = t.restart()  # a power cut: the new game is still there
    assert referee.game.phase is Phase.IN_GAME and referee.view().dealer == "Anna"
    t.taps("UNDO")  # back to the finished game, as the journal keeps it
    view = referee.view()
    assert (view.kind, view.title) == ("winner", "NS win 1-0")
    assert view.message == "Undone: the new game (Anna to deal): back to the finished game"
    assert journal_lines(referee) == won and referee.game_id == won_id
    referee = t.restart()
    assert referee.game.winner is not None
    t.taps("UNDO")  # and on into it: its last trick
    assert journal_lines(referee) == [*won, "undo"] and referee.game.winner is None
    t.taps("E")  # won again
    t.taps("N OK")  # a new game, Ragnar dealing: another button confirms it at once
    t.taps("S CLUBS OK")  # the new game's first real entry: stored as a game of its own
    new_id = referee.game_id
    assert new_id != won_id and journal_lines(referee)[-2:] == ["game dealer=N", "make S C"]
    assert_replays(referee)
    t.taps("UNDO UNDO")  # the call, then the first dealer
    assert journal_lines(referee)[-2:] == ["undo", "undo"]
    t.taps("UNDO")  # the finished game is behind the new one now
    assert referee.view().message == "nothing to undo: this is the start of the game"
    assert referee.game_id == new_id
    assert referee.store.lines(won_id) == won[1:] + ["undo", "trick E"]


def test_a_new_game_over_the_link_after_a_win_is_taken_back_by_its_undo(tmp_path: Path) -> None:
    # Referee.enter and Referee.undo are what the serial link's `enter` and `undo` call.
    referee = Referee(Config(state_dir=tmp_path, rules=Rules(target=1)), Store(tmp_path),
                      renderer=lambda view: view, clock=FakeClock())
    for entry in ("game dealer=W", "make N H", "trick N", "trick N", "trick N", "trick E",
                  "trick E"):
        assert referee.enter(parse_event(entry)) is None  # type: ignore[arg-type]
    won_id = referee.game_id
    assert referee.enter(NewGame(Seat.E)) is None
    assert referee.game.phase is Phase.IN_GAME and referee.game_id == won_id
    assert referee.undo() is None
    assert referee.game.winner is not None and referee.undone.startswith("Undone: the new game")
    assert referee.undo() is None and referee.game.winner is None
    assert referee.enter(Trick(Seat.E)) is None and referee.game.winner is not None
    referee.store.close()
