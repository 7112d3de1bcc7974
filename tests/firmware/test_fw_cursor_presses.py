"""The cursor layout's presses (issue 23): every kind of hand in at most 1.5x
the seats layout's presses (bench/presses.py's counting, run here on fewer
hands), and where the cursor starts: on the likeliest option, the next
likeliest one press away (``flow.around``)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from support.app_kit import FakeClock, assert_replays, journal_lines
from support.scripts import load_script

from euchre_core import Rules, Seat, Suit
from euchre_core.events import Call, Defend, Make, NewGame, Order, Pass, Trick, Tricks, Upcard
from firmware.app import Referee
from firmware.buttons import CONFIRM_GUARD_S, NEXT, OK, PREV
from firmware.config import Config
from firmware.flow import Action, Option, around
from firmware.journal import Store

HANDS = 200
"""Hands per table in the bench run here (the README's figures: 500)."""

OVER = {
    "euchre": "the defenders' tricks are the unlikely winners, and only the first and the "
              "last of four winners cost a press more or less (two are one press away): "
              "about 9 presses for five tricks plus 3.7 for the call; bench/cursor_bound.py: no "
              "ranking of the winners by who leads goes under 1.50x-1.55x on the bench's own "
              "hands, and rankings by the tricks so far fitted to other hands measure "
              "1.48x-1.54x, over the goal on 3 to 5 of 8 seeds",
}
"""Kinds of hand still over the goal, and why (the report of issue 23)."""


@pytest.fixture(scope="module")
def rows() -> dict[str, object]:
    bench: ModuleType = load_script("bench/presses.py")
    return bench.measure(HANDS, seed=1)  # type: ignore[no-any-return]


def test_every_kind_of_hand_is_entered_in_both_layouts(rows: dict[str, object]) -> None:
    assert set(rows) == {
        "plain, makers 3-4", "euchre", "march", "claim after 3 tricks", "going alone",
        "alone, no one defends", "defend alone", *(f"order-up after {n} pass{'es' * (n != 1)}"
                                                    for n in range(4)),
        "round-2 call (4-6 passes)", "stuck dealer (7 passes, call)"}
    for row in rows.values():
        assert len(row.seats) == len(row.cursor) > 0  # type: ignore[attr-defined]


def test_the_cursor_layout_takes_at_most_1_5x_the_seats_presses(
        rows: dict[str, object]) -> None:
    ratios = {name: row.ratio for name, row in rows.items()}  # type: ignore[attr-defined]
    assert {name: ratio for name, ratio in ratios.items()
            if ratio > 1.5 and name not in OVER} == {}


@pytest.mark.xfail(reason="; ".join(f"{kind}: {why}" for kind, why in OVER.items()),
                   strict=True)
def test_the_kinds_still_over_the_goal(rows: dict[str, object]) -> None:
    assert all(rows[name].ratio <= 1.5 for name in OVER)  # type: ignore[attr-defined]


# --- where the cursor starts -------------------------------------------------

def make(tmp_path: Path, rules: Rules | None = None) -> Referee:
    config = Config(state_dir=tmp_path, rules=rules or Rules(), layout="cursor")
    return Referee(config, Store(tmp_path), renderer=lambda view: view, clock=FakeClock())


def under_cursor(referee: Referee) -> Option:
    step = referee.step()
    return step.options[step.cursor_index(referee.state.cursor)]


def away(referee: Referee, action: Action) -> int:
    """Presses of PREV/NEXT from the cursor to the option doing ``action``."""
    step = referee.step()
    target = [option.action for option in step.options].index(action)
    forward = (target - step.cursor_index(referee.state.cursor)) % len(step.options)
    return min(forward, len(step.options) - forward)


def test_around_puts_each_option_as_near_as_its_rank() -> None:
    ranked = [Option(str(rank), Action("none")) for rank in range(7)]
    options, start = around(ranked)
    labels = [option.label for option in options]
    assert labels == ["6", "4", "2", "0", "1", "3", "5"] and start == 3
    for rank in range(7):
        assert abs(labels.index(str(rank)) - start) == (rank + 1) // 2


def test_a_fresh_hand_starts_on_the_dealer_and_a_pass_is_one_press(tmp_path: Path) -> None:
    referee = make(tmp_path)
    referee.enter(NewGame(Seat.W))
    assert under_cursor(referee).label == "Anna"  # the dealer makes most often
    assert away(referee, Action("seat", value="N")) == 1  # the seat in turn
    assert away(referee, Action("seat", value="S")) == 1  # the dealer's partner
    assert away(referee, Action("seat", value="E")) == 2
    referee.enter(Upcard(Suit.HEARTS))
    for seat in ("Ragnar", "Sigríður", "South"):  # the bidding entered: each pass is OK
        assert under_cursor(referee).label == f"{seat} passes"
        referee.press(OK)
    assert journal_lines(referee)[-3:] == ["pass N", "pass E", "pass S"]
    assert under_cursor(referee).label == "Anna passes"
    assert away(referee, Action("seat", value="W")) == 1  # her call: one press away
    assert_replays(referee)


def test_the_call_starts_on_the_upcard_in_round_1_and_on_next_in_round_2(
        tmp_path: Path) -> None:
    referee = make(tmp_path)
    referee.enter(NewGame(Seat.W))
    referee.enter(Upcard(Suit.HEARTS))
    referee.press(NEXT)  # from Ragnar's pass to Ragnar
    referee.press(OK)
    assert under_cursor(referee).action.entry == Order(Seat.N)  # OK: Ragnar orders up ♥
    assert away(referee, Action("confirm", Call(Seat.N, Suit.DIAMONDS))) == 1  # next
    referee.press("UNDO")
    for seat in (Seat.N, Seat.E, Seat.S, Seat.W):
        referee.enter(Pass(seat))
    referee.press(NEXT)
    referee.press(OK)  # Ragnar, in round 2: hearts was turned down
    assert under_cursor(referee).action.entry == Call(Seat.N, Suit.DIAMONDS)  # next
    assert {away(referee, Action("confirm", Call(Seat.N, suit)))
            for suit in (Suit.SPADES, Suit.CLUBS)} == {1}
    assert isinstance(referee.clock, FakeClock)
    referee.clock.advance(CONFIRM_GUARD_S)  # the list read: OK is the call, not a double tap
    referee.press(OK)
    assert journal_lines(referee)[-1] == "call N D"


def test_the_next_hand_starts_where_the_table_began_the_last(tmp_path: Path) -> None:
    referee = make(tmp_path)
    referee.enter(NewGame(Seat.W))
    referee.enter(Upcard(Suit.CLUBS))
    referee.enter(Order(Seat.N))
    for _ in range(5):
        referee.enter(Trick(Seat.N))
    referee.result_until = 0.0
    assert under_cursor(referee).action.kind == "entry"  # an upcard, as last hand
    assert isinstance(under_cursor(referee).action.entry, Upcard)
    referee.enter(Pass(Seat.E))  # Ragnar deals now: passes only, no upcard
    referee.enter(Make(Seat.S, Suit.SPADES))
    for _ in range(5):
        referee.enter(Trick(Seat.S))
    assert under_cursor(referee).action.entry == Pass(Seat.S)  # passes, as last hand


def test_the_trick_starts_on_the_likeliest_winner_and_each_defender_is_near(
        tmp_path: Path) -> None:
    referee = make(tmp_path, Rules(defend_alone=True))
    referee.enter(NewGame(Seat.W))
    referee.enter(Make(Seat.E, Suit.SPADES, alone=True))
    assert under_cursor(referee).label == "No one: play on"
    assert away(referee, Action("entry", Defend(Seat.S))) == 1
    assert away(referee, Action("entry", Defend(Seat.N))) == 1
    referee.press(OK)  # no one defends alone
    # Ragnar leads (the maker's right): the maker, then Ragnar, then South.
    assert under_cursor(referee).action.entry == Trick(Seat.E)
    assert away(referee, Action("entry", Trick(Seat.N))) == 1
    assert away(referee, Action("entry", Trick(Seat.S))) == 1
    referee.press(PREV)
    referee.press(OK)
    assert journal_lines(referee)[-1] == "trick S"
    # South (the maker's left) leads: still the maker first, South next.
    assert under_cursor(referee).action.entry == Trick(Seat.E)
    assert_replays(referee)


def test_after_three_tricks_each_count_is_a_choice_and_the_rest_near_once_made(
        tmp_path: Path) -> None:
    referee = make(tmp_path)
    referee.enter(NewGame(Seat.W))
    referee.enter(Make(Seat.E, Suit.SPADES))
    for _ in range(3):  # the makers' three: the outcome settled but for the march
        referee.enter(Trick(Seat.E))
    assert under_cursor(referee).action.entry == Trick(Seat.E)
    assert away(referee, Action("entry", Tricks(5))) == 1  # the makers take the rest
    assert away(referee, Action("entry", Tricks(4))) == 2
    assert away(referee, Action("entry", Tricks(3))) == 3
    assert away(referee, Action("mode", value="claim")) == 4  # the claim menu too
    labels = [option.label for option in referee.step().options]
    assert "Makers took 5" in labels
    while under_cursor(referee).action.entry != Tricks(5):
        referee.press(NEXT)
    referee.press(OK)
    assert journal_lines(referee)[-1] == "tricks 5"
    assert_replays(referee)


def test_after_three_tricks_not_yet_made_the_counts_come_after_every_winner(
        tmp_path: Path) -> None:
    referee = make(tmp_path)
    referee.enter(NewGame(Seat.W))
    referee.enter(Make(Seat.E, Suit.SPADES))
    for winner in (Seat.N, Seat.E, Seat.N):  # makers 1 of 3: N (the maker's left) leads
        referee.enter(Trick(winner))
    step = referee.step()
    cursor = step.cursor_index(referee.state.cursor)
    winners = [away(referee, Action("entry", Trick(seat))) for seat in Seat]
    assert sorted(winners) == [0, 1, 1, 2]  # as near as before the fourth trick
    assert step.options[cursor].action.entry == Trick(Seat.E)
    assert [away(referee, Action("entry", Tricks(count))) for count in (3, 2, 1)] == [2, 3, 3]
    assert step.options[-1].action == Action("page", value="help")
