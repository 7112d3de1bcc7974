"""Undo across hands back to the game's start, and resuming after a restart
(a new Referee on the same journal), half-made selections included."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.app_kit import (
    SEATS_GAME,
    SEATS_JOURNAL,
    FakeClock,
    assert_replays,
    journal_lines,
    press_all,
)

from euchre_core import Team, write_log
from firmware.app import Referee
from firmware.config import Config
from firmware.journal import Store

START = "nothing to undo: this is the start of the game"


def boot(tmp_path: Path, clock: FakeClock, layout: str = "seats") -> Referee:
    config = Config(state_dir=tmp_path, layout=layout)  # type: ignore[arg-type]
    return Referee(config, Store(tmp_path), renderer=lambda view: view, clock=clock)


def restart(referee: Referee, clock: FakeClock) -> Referee:
    """Power cycle: drop the referee, open the same state directory again."""
    referee.store.close()
    clock.advance(60)  # messages and result screens do not survive a reboot
    return boot(referee.store.state_dir, clock, referee.config.layout)


def score(referee: Referee) -> tuple[int, int]:
    return referee.game.score[Team.NS], referee.game.score[Team.EW]


HAND_1 = SEATS_GAME[:16]  # Anna dealt; South marched alone; Ragnar deals hand 2


@pytest.mark.parametrize(("selection", "then", "entry"), [
    ("S", "UNDO", None),  # maker seat chosen; UNDO drops the selection, not an entry
    ("S SPADES", "OK", "make S S"),  # ... and the suit
    ("S SPADES ALONE", "OK", "make S S alone"),  # ... and alone toggled
    ("S ALONE", "CLUBS OK", "make S C alone"),  # alone toggled before the suit
    ("SPADES S DIAMONDS ALONE", "OK", "call S D alone"),  # a call against a known upcard
    ("CLUBS E OK S OK W OK N OK E OK S OK W OK N", "SPADES OK", "call N S"),  # stuck dealer
])
def test_half_made_selection_survives_a_restart(
    tmp_path: Path, selection: str, then: str, entry: str | None
) -> None:
    clock = FakeClock()
    referee = boot(tmp_path, clock)
    press_all(referee, [*HAND_1, *selection.split()], clock)
    assert score(referee) == (4, 0) and not referee.state.is_empty
    clock.advance(60)
    before = referee.view()
    state = referee.state
    entries = journal_lines(referee)
    referee = restart(referee, clock)
    assert referee.view() == before
    assert referee.state == state
    assert journal_lines(referee) == entries
    assert_replays(referee)
    for name in then.split():  # the selection completes as if never interrupted
        referee.press(name)
    assert journal_lines(referee) == entries + ([entry] if entry else [])
    assert referee.state.is_empty
    assert_replays(referee)


def test_claim_menu_survives_a_restart(tmp_path: Path) -> None:
    clock = FakeClock()
    referee = boot(tmp_path, clock)
    for name in "W S HEARTS OK S OK".split():
        referee.press(name)
    before = referee.view()
    assert before.kind == "menu"
    referee = restart(referee, clock)
    assert referee.view() == before
    referee.press("S")  # third item, on the menu's first page: shown first
    referee.press("S")  # and chosen: makers took 3
    assert journal_lines(referee)[-1] == "tricks 3"


def test_cursor_selection_survives_a_restart(tmp_path: Path) -> None:
    clock = FakeClock()
    referee = boot(tmp_path, clock, "cursor")
    for name in "PREV PREV PREV OK PREV OK NEXT".split():  # Anna deals; South; on ♦
        referee.press(name)
    clock.advance(60)
    before = referee.view()
    assert before.choices[before.cursor].label == "South: ♦"
    referee = restart(referee, clock)
    assert referee.view() == before
    referee.press("OK")
    assert journal_lines(referee)[-1] == "make S D"


def test_undo_walks_back_to_the_start_across_hands_and_restarts(tmp_path: Path) -> None:
    clock = FakeClock()
    referee = boot(tmp_path, clock)
    start_log = write_log(referee.game)
    press_all(referee, SEATS_GAME, clock)
    assert journal_lines(referee) == SEATS_JOURNAL and score(referee) == (10, 3)
    entries = len(SEATS_JOURNAL) - 2  # after the header and the players line
    scores = []
    for undone in range(entries):
        if undone in (5, entries // 2):  # reboot in the middle of undoing, twice
            referee = restart(referee, clock)
            assert score(referee) == scores[-1]
        before = score(referee)
        referee.press("UNDO")
        message = referee.view().message
        assert message is not None and message.startswith("Undone: ")  # in words, with names
        assert SEATS_JOURNAL[-1 - undone] not in message  # never log syntax
        assert ("reopened" in message) == (score(referee) != before)  # points taken back
        scores.append(score(referee))
    # The scores seen while walking back: each hand's points come off with its last trick.
    assert scores[:6] == [(9, 3)] * 6  # the winning trick and the rest of hand 7
    assert scores[6] == (7, 3)  # hand 6's march comes off with its last trick
    assert sorted(set(scores), reverse=True) == [(9, 3), (7, 3), (7, 1), (5, 1), (4, 1),
                                                 (4, 0), (0, 0)]
    referee = restart(referee, clock)
    assert referee.game.phase.value == "setup"
    referee.press("UNDO")
    assert referee.view().message == START
    assert write_log(referee.game) == start_log
    assert_replays(referee)
    lines = journal_lines(referee)
    assert lines[:len(SEATS_JOURNAL)] == SEATS_JOURNAL
    assert lines[len(SEATS_JOURNAL):] == ["undo"] * entries
    referee.press("N")  # and the table can start over in the same journal
    assert journal_lines(referee)[-1] == "game dealer=N"
    assert_replays(referee)


def test_resume_after_the_win_shows_the_winner_and_undo_still_works(tmp_path: Path) -> None:
    clock = FakeClock()
    referee = boot(tmp_path, clock)
    press_all(referee, SEATS_GAME, clock)
    before = referee.view()
    referee = restart(referee, clock)
    assert referee.view() == before
    assert before.title == "NS win 10-3"
    referee.press("UNDO")
    assert score(referee) == (9, 3) and referee.view().prompt == "Trick 5: who won?"
