"""A quick second OK never answers the question the first OK opened (SPEC §2:
"a quick second press never confirms what the first asked about"), in both
layouts.

The walk is generated: from table states that hold every step the flow has
(the bidding, the tricks after three, a lone maker facing "Defend alone?",
every set-up page, "From a score", a won game), each way OK can be pressed
(seats layout: OK, and OK on each choice PREV/NEXT shows; cursor layout: OK
on each option) is pressed.  Wherever that OK entered nothing and brought up
another step (a list, a confirmation), OK again 0.1 s later must ask with the
guard's words and change nothing (game, journal, the half-made selection),
and so must a third; OK once the guard has passed does what the screen says
OK does.  The walk must meet every question an OK opens (the trump list after
the maker's seat, the claim and renege lists, "Misdeal?", the trick list after
"no one defends", each set-up page, the new game's confirmation).

Real ``Referee`` on a real journal (made once per state, copied; on a tmpfs
when there is one).  Default names: N=Ragnar E=Sigríður S=South W=Anna.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.app_kit import FakeClock, journal_lines, open_referee, ram_dir, scene_journals

from euchre_core import Rules, write_log
from firmware.app import Referee
from firmware.buttons import CONFIRM_GUARD_S, NEXT, OK, PREV, twice_quickly
from firmware.flow import Action, FlowState

SCENES: list[tuple[str, Rules, str]] = [
    ("fresh box", Rules(), ""),
    ("round 1, no upcard", Rules(), "W"),
    ("round 1, upcard", Rules(), "W HEARTS"),
    ("maker picked", Rules(), "W HEARTS N"),
    ("round 2", Rules(), "W HEARTS N OK E OK S OK W OK"),
    ("tricks", Rules(), "W N HEARTS OK"),
    ("after three tricks", Rules(), "W N HEARTS OK N E N"),
    ("defend alone?", Rules(defend_alone=True), "W S HEARTS ALONE OK"),
    ("set-up menu", Rules(), "ALONE"),
    ("set-up names", Rules(), "ALONE N"),
    ("set-up a seat", Rules(), "ALONE N S"),
    ("set-up rules", Rules(), "ALONE E"),
    ("from a score", Rules(), "ALONE W"),
    ("game won", Rules(target=1), "W N HEARTS OK N N N E E"),
]
"""Table states: name, house rules, seats-layout presses from a fresh box."""

OPENED: dict[str, set[tuple[str, str]]] = {
    "cursor": {
        ("maker", "trump"), ("trick", "claim"), ("trick", "renege"), ("maker", "misdeal"),
        ("defend", "trick"), ("game", "setup"), ("setup", "setup-names"),
        ("setup", "setup-rules"), ("setup", "setup-score"), ("setup", "game"),
        ("setup-names", "setup-name"), ("game", "new-game"),
    },  # (a name or a profile chosen is entered in a game not yet dealt: an entry)
    "seats": {
        ("trick", "claim"), ("trump", "confirm"), ("defend", "trick"), ("setup", "game"),
        ("setup-names", "setup"), ("setup-name", "setup-names"), ("setup-rules", "setup"),
        ("game", "new-game"), ("maker", "misdeal"),
    },
}
"""Questions an OK opens (the step it was pressed on, the step it brought
up) that the walk must meet, per layout."""

QUICK_S = 0.1
"""A double tap: the second OK this soon after the first."""



def _clock(referee: Referee) -> FakeClock:
    assert isinstance(referee.clock, FakeClock)
    return referee.clock


def _settled(referee: Referee, button: str) -> None:
    """``button`` pressed as a table does: the screen read first."""
    clock = _clock(referee)
    clock.t = max(clock.t, referee.result_until, referee.message_until) + CONFIRM_GUARD_S
    referee.press(button)


@pytest.fixture(scope="module")
def scenes() -> Iterator[dict[str, tuple[Rules, Path]]]:
    yield from scene_journals("quick-ok-", SCENES, _settled)


def _snapshot(referee: Referee) -> tuple[str, list[str], str, str]:
    return (write_log(referee.game), journal_lines(referee),
            FlowState.loads(referee.store.flow(referee.game_id)).dumps(), referee.step().name)


def _ways(referee: Referee, layout: str) -> list[tuple[str, ...]]:
    """Each way OK can be pressed now: the presses before it, then OK."""
    step = referee.step()
    start = step.cursor_index(referee.state.cursor)
    moves = [(NEXT,) * (index - start) if index >= start else (PREV,) * (start - index)
             for index in range(len(step.options))]
    if layout == "cursor":
        return [(*move, OK) for move in moves]
    # seats: OK, or the first arrow shows the choices and OK picks the one shown
    return [(OK,), *((PREV, *move, OK) for move in moves)]


def _ok_does(referee: Referee, layout: str) -> Action | None:
    """What OK does now (after the first press: no choice strip open)."""
    step = referee.step()
    if layout == "cursor":
        return step.options[step.cursor_index(referee.state.cursor)].action
    return step.ok


def test_a_quick_second_ok_never_answers_what_the_first_opened(
        scenes: dict[str, tuple[Rules, Path]]) -> None:
    met: dict[str, set[tuple[str, str]]] = {"seats": set(), "cursor": set()}
    with tempfile.TemporaryDirectory(dir=ram_dir(), prefix="quick-ok-") as root:
        made = 0
        for layout in ("seats", "cursor"):
            for scene, (rules, path) in scenes.items():
                probe = open_referee(path, rules, layout)
                ways = _ways(probe, layout)
                probe.store.close()
                for way in ways:
                    copy = Path(root) / f"{made}"
                    made += 1
                    shutil.copytree(path, copy, ignore=shutil.ignore_patterns("referee.lock"))
                    referee = open_referee(copy, rules, layout)
                    try:
                        opened = _press_twice(referee, layout, way)
                    except AssertionError as error:
                        raise AssertionError(f"{layout} layout, {scene}, {way}: {error}") from error
                    finally:
                        referee.store.close()
                    if opened is not None:
                        met[layout].add(opened)
    for layout, expected in OPENED.items():
        assert expected <= met[layout], (layout, sorted(expected - met[layout]))


def _press_twice(referee: Referee, layout: str, way: tuple[str, ...]) -> tuple[str, str] | None:
    """Press ``way``; if its OK opened a question, OK quickly (twice: refused,
    nothing changed), then OK once read (it does what the screen says).
    Returns the question opened (from, to), or None."""
    for button in way[:-1]:
        _settled(referee, button)
    asked_on = referee.step().name
    lines = journal_lines(referee)
    _settled(referee, OK)
    if referee.message and referee.message_is_error or referee.page is not None:
        return None  # refused (a rule), or the help pages opened: no question
    if journal_lines(referee) != lines or referee.step().name == asked_on:
        return None  # an entry made, or the same question (a point added...)
    opened = (asked_on, referee.step().name)
    action = _ok_does(referee, layout)
    before = _snapshot(referee)
    clock = _clock(referee)
    for _ in range(2):  # a double tap, and a triple
        clock.advance(QUICK_S)
        referee.press(OK)
        assert _snapshot(referee) == before, f"{opened}: a quick OK changed the table"
        if action is None:  # (OK does nothing here: it says so)
            assert referee.message is not None and " does nothing " in referee.message
        else:
            assert referee.message == twice_quickly() and referee.message_is_error, (
                opened, referee.message)
    if action is None:
        return opened
    clock.advance(CONFIRM_GUARD_S)  # the question read: OK answers it
    referee.press(OK)
    assert not (referee.message and referee.message_is_error), (opened, referee.message)
    if action.kind in ("entry", "confirm", "random"):  # (a new game is staged, not stored)
        assert write_log(referee.game) != before[0], (opened, action)
    else:
        assert _snapshot(referee) != before or referee.page is not None, (opened, action)
    return opened
