"""Resume at boot exactly where the game was (issue item 2; SPEC §2).

A reboot after any press brings back the same screen: the score, the hand,
and the entry flow's position (a maker's seat picked, a suit, ALONE toggled,
the claim or renege menu open).  Undo reaches back to the start of the game
after any number of reboots, and no further.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support.app_kit import press_all, wait_out_result
from support.clock import FakeClock
from support.crash_child import make_config, open_referee

from euchre_core import Phase
from firmware.app import Referee
from firmware.journal import JOURNAL_NAME

# Seats layout, dealer W: every kind of half-made selection appears in it.
PRESSES = """
    W HEARTS N OK E HEARTS ALONE OK E E E E E
    S CLUBS OK S S N S W
    SPADES S OK W OK N ALONE ALONE SPADES OK N N OK N
    DIAMONDS N DIAMONDS OK E ALONE E
    S HEARTS OK S S S S S
""".split()


def reboot(referee: Referee, clock: FakeClock, **config: object) -> Referee:
    referee.store.close()
    return open_referee(referee.store.state_dir, config=make_config(
        referee.store.state_dir, **config), clock=clock)


def snapshot(referee: Referee) -> tuple[object, ...]:
    flow = referee.state.as_dict()
    return (referee.view(), flow, [e.line() for e in referee.game.entries],
            dict(referee.game.score), referee.game.phase)


def test_every_press_resumes_exactly_after_a_reboot(tmp_path: Path) -> None:
    clock = FakeClock()
    referee = open_referee(tmp_path, clock=clock)
    seen_steps = set()
    for button in PRESSES:
        referee.press(button)
        assert not (referee.message and referee.message_is_error), (button, referee.message)
        clock.t += 60  # results and messages have gone: only the state is left
        seen_steps.add(referee.step().name)
        before = snapshot(referee)
        referee = reboot(referee, clock)
        assert referee.notice is None
        assert snapshot(referee) == before, button
    # The sequence went through each kind of half-made selection.
    assert {"maker", "trump", "confirm", "trick", "claim", "renege"} <= seen_steps
    assert referee.game.score  # and scored hands
    assert sum(referee.game.score.values()) > 0
    referee.store.close()


@pytest.mark.parametrize("presses, step, flow", [
    ("W N", "trump", {"seat": "N"}),
    ("W E HEARTS", "confirm", {"seat": "E", "suit": "H"}),
    ("W E HEARTS ALONE", "confirm", {"seat": "E", "suit": "H", "alone": True}),
    ("W HEARTS S ALONE", "trump", {"seat": "S", "alone": True}),
    ("W HEARTS N OK E OK S OK W OK N CLUBS", "confirm", {"seat": "N", "suit": "C"}),
    ("W S SPADES OK OK", "claim", {"mode": "claim"}),
    ("W S SPADES OK ALONE", "renege", {"mode": "renege"}),
])
def test_the_entry_flow_position_survives_a_reboot(tmp_path: Path, presses: str, step: str,
                                                   flow: dict[str, object]) -> None:
    clock = FakeClock()
    referee = open_referee(tmp_path, clock=clock)
    for button in presses.split():
        referee.press(button)
    clock.t += 60
    view = referee.view()
    referee = reboot(referee, clock)
    assert referee.step().name == step
    state = referee.state.as_dict()
    assert {key: state[key] for key in flow} == flow
    assert referee.view() == view
    referee.store.close()


def test_the_position_resumed_goes_on_to_the_entry(tmp_path: Path) -> None:
    clock = FakeClock()
    referee = open_referee(tmp_path, clock=clock)
    for button in "W E HEARTS ALONE".split():
        referee.press(button)
    referee = reboot(referee, clock)
    referee.press("OK")
    assert referee.game.entries[-1].line() == "make E H alone"
    referee = reboot(referee, clock)
    assert referee.game.hand.maker is not None and referee.game.hand.alone
    referee.store.close()


def test_undo_reaches_the_start_of_the_game_across_reboots(tmp_path: Path) -> None:
    clock = FakeClock()
    referee = open_referee(tmp_path, clock=clock)
    history = [[e.line() for e in referee.game.entries]]
    for button in PRESSES:
        wait_out_result(referee, clock)
        referee.press(button)
        entries = [e.line() for e in referee.game.entries]
        if entries != history[-1]:
            history.append(entries)
    referee = reboot(referee, clock)
    undos = 0
    while True:
        assert [e.line() for e in referee.game.entries] == history[-1 - undos]
        if referee.undo() is not None:
            break
        undos += 1
        referee = reboot(referee, clock)  # a reboot after every undo
    assert undos == len(history) - 1 >= 30
    assert referee.game.phase is Phase.SETUP
    assert "nothing to undo" in (referee.message or "")
    referee = reboot(referee, clock)
    assert referee.undo() is not None  # still the start, after one more reboot
    # The journal kept every line and every undo, as entered.
    lines = referee.store.lines(referee.game_id)
    assert lines.count("undo") == undos
    # And the table can play the same game again from there.
    press_all(referee, PRESSES, clock)
    assert [e.line() for e in referee.game.entries] == history[-1]
    referee = reboot(referee, clock)
    assert [e.line() for e in referee.game.entries] == history[-1]
    referee.store.close()


def test_undo_button_after_a_reboot_first_drops_the_half_made_selection(
        tmp_path: Path) -> None:
    clock = FakeClock()
    referee = open_referee(tmp_path, clock=clock)
    for button in "W E HEARTS".split():
        referee.press(button)
    entries = list(referee.game.entries)
    referee = reboot(referee, clock)
    referee.press("UNDO")  # drops E + hearts, not an entry
    assert referee.state.is_empty and referee.game.entries == entries
    referee = reboot(referee, clock)
    assert referee.state.is_empty  # and that is durable too
    referee.press("UNDO")  # now the entry: "game dealer=W"
    assert len(referee.game.entries) == len(entries) - 1
    referee.store.close()


def test_undo_after_a_won_game_and_a_new_one_stops_at_the_new_start(tmp_path: Path) -> None:
    """Each game is its own stored game: undo in the second one reaches its
    start and leaves the finished first game untouched."""
    clock = FakeClock()
    referee = open_referee(tmp_path, clock=clock)
    referee.press("W")
    while referee.game.phase is not Phase.GAME_OVER:  # N makes spades alone, marches
        for button in "N SPADES ALONE OK N N N N N".split():
            wait_out_result(referee, clock)
            referee.press(button)
            if referee.game.phase is Phase.GAME_OVER:
                break
    first_id, first_lines = referee.game_id, referee.store.lines(referee.game_id)
    referee = reboot(referee, clock)
    assert referee.view().kind == "winner"
    assert referee.undo() is None  # the winning trick, across a reboot
    assert referee.game.phase is Phase.IN_GAME
    referee.press("N")  # and it again
    assert referee.game.phase is Phase.GAME_OVER
    referee.press("E")  # a new game, E deals, once OK confirms it
    assert referee.game_id == first_id
    referee.press("OK")
    for button in "N SPADES OK".split():  # its first entry stores it as a game of its own
        referee.press(button)
    assert referee.game_id != first_id
    referee = reboot(referee, clock)
    assert referee.undo() is None and referee.undo() is None and referee.undo() is not None
    assert referee.game.phase is Phase.SETUP
    assert referee.store.lines(first_id)[: len(first_lines)] == first_lines
    assert [g.id for g in referee.store.games()] == [first_id, referee.game_id]
    referee.store.close()


def test_the_cursor_position_survives_a_reboot(tmp_path: Path) -> None:
    clock = FakeClock()
    referee = open_referee(tmp_path, config=make_config(tmp_path, layout="cursor"), clock=clock)
    referee.press("NEXT")
    referee.press("NEXT")
    view = referee.view()
    assert view.cursor == 2
    referee = reboot(referee, clock, layout="cursor")
    assert referee.view().cursor == 2
    referee.store.close()


@pytest.mark.parametrize("flow", ['{"seat": "Z"}', '{"seat": "N", "suit": "X"}',
                                  '{"cursor": "x"}'])
def test_a_flow_position_with_bad_values_is_dropped(tmp_path: Path, flow: str) -> None:
    clock = FakeClock()
    referee = open_referee(tmp_path, clock=clock)
    referee.press("W")
    entries = len(referee.game.entries)
    referee.store.close()
    db = sqlite3.connect(tmp_path / JOURNAL_NAME)
    db.execute("UPDATE games SET flow=?", (flow[:-1] + f', "entries": {entries}}}',))
    db.commit()
    db.close()
    referee = open_referee(tmp_path, clock=clock)
    referee.view()
    referee.press("N")
    referee.view()
    referee.store.close()
