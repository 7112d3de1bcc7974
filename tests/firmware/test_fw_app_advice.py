"""Every refusal's advice does what it says (issue 23, "advice that records the
wrong thing"), in both button layouts.

The refusals are found systematically: from a set of table states that holds
every step the flow has (each bidding round, the stuck dealer, a lone maker
and defender, the claim, renege and set-up menus, a won game, a new game
waiting for OK) and a few house rules, every button of the layout is pressed
(seats layout) or every option is chosen (cursor layout), and OK twice
quickly.  Each refusal must change nothing (game, journal, the half-made
call); its advice is read into the presses it names (:data:`ADVICE`), and
each alternative the advice offers is followed from the refused state and
must do what it promised.  A refusal whose advice is not known here fails
the test, naming it.

Real ``Referee`` on a real journal; the states are made once and copied (the
journal on a tmpfs when there is one, so the test takes seconds).
Default names: N=Ragnar E=Sigríður S=South W=Anna; Anna deals.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.app_kit import FakeClock, journal_lines, open_referee, ram_dir, scene_journals

from euchre_core import Rules, Seat, Suit, write_log
from firmware.app import Referee
from firmware.buttons import (
    BUTTON_BY_SUIT,
    CONFIRM_GUARD_S,
    NEXT,
    OK,
    PREV,
    SEAT_BUTTONS,
    SUIT_BUTTONS,
    UNDO,
)
from firmware.flow import FlowState

STANDARD = Rules()
SCENES: list[tuple[str, Rules, str]] = [
    ("fresh box", STANDARD, ""),
    ("round 1, no upcard", STANDARD, "W"),
    ("round 1, upcard", STANDARD, "W HEARTS"),
    ("round 1, Sigríður's turn", STANDARD, "W HEARTS N OK"),
    ("maker picked, no upcard", STANDARD, "W N"),
    ("maker picked, round 1", STANDARD, "W HEARTS N"),
    ("first bid out of turn", STANDARD, "W HEARTS E"),
    ("call to confirm", STANDARD, "W HEARTS N HEARTS"),
    ("lone call to confirm", STANDARD, "W HEARTS N HEARTS ALONE"),
    ("round 2", STANDARD, "W HEARTS N OK E OK S OK W OK"),
    ("maker picked, round 2", STANDARD, "W HEARTS N OK E OK S OK W OK N"),
    ("round 2 call to confirm", STANDARD, "W HEARTS N OK E OK S OK W OK N CLUBS"),
    ("stuck dealer's turn", STANDARD, "W HEARTS N OK E OK S OK W OK N OK E OK S OK"),
    ("stuck dealer picked", STANDARD, "W HEARTS N OK E OK S OK W OK N OK E OK S OK W"),
    ("tricks", STANDARD, "W N HEARTS OK"),
    ("claim menu", STANDARD, "W N HEARTS OK OK"),
    ("renege menu", STANDARD, "W N HEARTS OK ALONE"),
    ("lone maker's tricks", STANDARD, "W S HEARTS ALONE OK"),
    ("lone maker's claim", STANDARD, "W S HEARTS ALONE OK S S OK"),
    ("set-up menu", STANDARD, "ALONE"),
    ("set-up names", STANDARD, "ALONE N"),
    ("set-up a seat", STANDARD, "ALONE N W"),
    ("set-up rules", STANDARD, "ALONE E"),
    ("defend alone?", Rules(defend_alone=True), "W S HEARTS ALONE OK"),
    ("lone defender's tricks", Rules(defend_alone=True), "W S HEARTS ALONE OK W"),
    ("Canadian loner picked", Rules(canadian_loner=True), "W HEARTS E"),
    ("Canadian loner with partner", Rules(canadian_loner=True), "W HEARTS E HEARTS ALONE"),
    ("dealer not stuck", Rules(stick_the_dealer=False),
     "W HEARTS N OK E OK S OK W OK N OK E OK S OK"),
    ("game won", Rules(target=1), "W N HEARTS OK N N N E E"),
    ("new game to confirm", Rules(target=1), "W N HEARTS OK N N N E E N"),
]
"""Table states (name, house rules, seats-layout presses from a fresh box)."""



@pytest.fixture(scope="module")
def scenes() -> Iterator[dict[str, tuple[Rules, Path]]]:
    """Each scene's journal, made once by pressing its buttons."""
    yield from scene_journals("advice-", SCENES, _settled_press)


def _settled_press(referee: Referee, button: str) -> None:
    _settle(referee)
    referee.press(button)


def _settle(referee: Referee) -> None:
    """The table waits for a hand's result and a message to go by themselves."""
    clock = referee.clock
    assert isinstance(clock, FakeClock)
    clock.t = max(clock.t, referee.result_until, referee.message_until) + CONFIRM_GUARD_S


@dataclass
class Table:
    """A scene's journal, copied, opened in a layout: ``press`` is a finger."""

    referee: Referee
    clock: FakeClock
    layout: str

    def press(self, *buttons: str, quickly: bool = False) -> None:
        for button in buttons:
            if not quickly:
                _settle(self.referee)
            self.referee.press(button)

    def choose(self, index: int) -> None:
        """Cursor layout: the option ``index`` under the cursor, then OK."""
        step = self.referee.step()
        cursor = step.cursor_index(self.referee.state.cursor)
        while cursor != index:
            self.press(NEXT if cursor < index else PREV)
            cursor = self.referee.step().cursor_index(self.referee.state.cursor)
        self.press(OK)

    def snapshot(self) -> tuple[str, list[str], str]:
        referee = self.referee
        return (write_log(referee.game), journal_lines(referee),
                FlowState.loads(referee.store.flow(referee.game_id)).dumps())

    @property
    def refusal(self) -> str | None:
        referee = self.referee
        return referee.message if referee.message and referee.message_is_error else None


@pytest.fixture
def table(scenes: dict[str, tuple[Rules, Path]]) -> Iterator[Callable[[str, str], Table]]:
    """A fresh copy of a scene a call.  A table is used only until the next
    one is made, so that one is closed then (hundreds stay open otherwise:
    past an ordinary user's 1,024 open files)."""
    opened: list[Referee] = []
    made = 0
    with tempfile.TemporaryDirectory(dir=ram_dir(), prefix="advice-") as root:

        def make(scene: str, layout: str) -> Table:
            nonlocal made
            while opened:
                opened.pop().store.close()
            rules, path = scenes[scene]
            copy = Path(root) / f"{made}"
            made += 1
            shutil.copytree(path, copy, ignore=shutil.ignore_patterns("referee.lock"))
            clock = FakeClock()
            opened.append(open_referee(copy, rules, layout, clock))
            return Table(opened[-1], clock, layout)

        yield make
        while opened:
            opened.pop().store.close()


Probe = tuple[str, tuple[str, ...], str, bool]
"""A press to try: what it is, the presses before it, the button, pressed quickly."""


def probes(t: Table) -> list[Probe]:
    """Every press the layout has at this state: each button (seats), each
    option chosen (cursor), UNDO, and OK twice quickly."""
    found: list[Probe] = []
    if t.layout == "seats":
        found += [(button, (), button, False)
                  for button in (*SEAT_BUTTONS, *SUIT_BUTTONS, "ALONE", OK, UNDO)]
    else:
        step = t.referee.step()
        start = step.cursor_index(t.referee.state.cursor)
        for index, option in enumerate(step.options):
            moves = (NEXT,) * (index - start) if index >= start else (PREV,) * (start - index)
            found.append((f"choose {option.label!r}", moves, OK, False))
        found.append((UNDO, (), UNDO, False))
    found.append(("OK twice quickly", (OK,), OK, True))
    return found


def refused(make: Callable[[str, str], Table], scene: str, layout: str,
            probe: Probe) -> tuple[Table, str | None]:
    """The scene in ``layout`` with ``probe`` pressed: the table and the
    refusal it gave (None: the press was taken).  A refusal changes nothing."""
    t = make(scene, layout)
    _, before, button, quickly = probe
    t.press(*before)
    snapshot = t.snapshot()
    t.referee.message = None
    t.press(button, quickly=quickly)
    if t.refusal is not None:
        assert t.snapshot() == snapshot, (scene, layout, probe, t.refusal)
    return t, t.refusal


# --- the advice, read into presses ---------------------------------------------

SEAT_BY_NAME = {"Ragnar": "N", "Sigríður": "E", "South": "S", "Anna": "W"}
NAME = r"(Ragnar|Sigríður|South|Anna)"

Follow = Callable[[Table, "re.Match[str]"], None]


def _last(t: Table) -> str:
    return journal_lines(t.referee)[-1]


def _bid_line(seat: str, suit: str | None = None, alone: bool = False) -> re.Pattern[str]:
    suit_part = rf" {suit}" if suit else r"(?: [SHDC])?"
    return re.compile(rf"(order|call|make) {seat}{suit_part}{' alone' if alone else ''}$")


def _option_keys(t: Table, kinds: tuple[str, ...], keys: tuple[str, ...]) -> list[str]:
    """The buttons of the step's options of these action kinds."""
    return [o.key for o in t.referee.step().options
            if o.action.kind in kinds and o.key in keys]


def _shown_keys(t: Table) -> list[str]:
    """The buttons shown beside a menu's items on the screen now."""
    return [c.key for c in t.referee.view().choices if c.key]


def first_dealer(t: Table, m: re.Match[str]) -> None:
    t.press("N")
    assert t.referee.game.hand.dealer is Seat.N and t.referee.view().dealer == "Ragnar"


def random_dealer(t: Table, m: re.Match[str]) -> None:
    t.press(OK)
    assert t.referee.game.phase.value == "in game"


def open_setup(t: Table, m: re.Match[str]) -> None:
    t.press("ALONE")
    assert t.referee.step().name == "setup"


def next_dealer(t: Table, m: re.Match[str]) -> None:
    t.press("E", OK)
    assert t.referee.game.phase.value == "in game" and t.referee.game.hand.dealer is Seat.E


def new_game(t: Table, m: re.Match[str]) -> None:
    t.press(OK, OK)
    assert t.referee.game.phase.value == "in game" and t.referee.game.hand.number == 1


def undo_last(t: Table, m: re.Match[str]) -> None:
    entries = len(t.referee.game.entries)
    t.press(UNDO)
    assert len(t.referee.game.entries) == entries - 1 and _last(t) == "undo"


def start_it(t: Table, m: re.Match[str]) -> None:
    t.press(OK)
    assert t.referee.game.phase.value == "in game" and t.referee.game.hand.number == 1


def change_dealer(t: Table, m: re.Match[str]) -> None:
    t.press("S", OK)
    assert t.referee.game.phase.value == "in game" and t.referee.game.hand.dealer is Seat.S


def go_back(t: Table, m: re.Match[str]) -> None:
    mode, lines = t.referee.state.mode, journal_lines(t.referee)
    t.press(UNDO)
    assert t.referee.state.mode != mode and journal_lines(t.referee) == lines


def seat_to_name(t: Table, m: re.Match[str]) -> None:
    seat = next(key for key in _shown_keys(t) if key in SEAT_BUTTONS)
    t.press(seat)
    assert t.referee.step().question == f"Who sits at {seat}?"


def done(t: Table, m: re.Match[str]) -> None:
    mode, lines = t.referee.state.mode, journal_lines(t.referee)
    t.press(OK)
    assert t.referee.state.mode != mode and journal_lines(t.referee) == lines


def by_a_name(t: Table, m: re.Match[str]) -> None:
    names = dict(t.referee.config.names)
    t.press(_shown_keys(t)[0])
    assert t.referee.config.names != names


def by_a_profile(t: Table, m: re.Match[str]) -> None:
    rules = t.referee.config.rules
    step = t.referee.step()
    shown = [c.key for c in t.referee.view().choices
             if c.key and not c.label.startswith(("Standard", "More"))]
    t.press(shown[0])
    assert t.referee.config.rules != rules and step.name == "setup-rules"


def players_or_rules(t: Table, m: re.Match[str]) -> None:
    t.press(_shown_keys(t)[0])
    assert t.referee.step().name in ("setup-names", "setup-rules")


def maker_seat(t: Table, m: re.Match[str]) -> None:
    seat = str(t.referee.game.hand.bid_turn)
    t.press(seat)
    assert t.referee.state.seat == seat and t.refusal is None


def upcard_suit(t: Table, m: re.Match[str]) -> None:
    t.press("SPADES")
    assert _last(t) == "upcard S"


def stuck_dealer(t: Table, m: re.Match[str]) -> None:
    seat = SEAT_BY_NAME[m.group(1)]
    if t.referee.state.seat != seat:
        t.press(seat)
    suit = _option_keys(t, ("suit",), tuple(BUTTON_BY_SUIT.values()))[0]
    t.press(suit, OK)
    assert _bid_line(seat, Suit.from_str(suit[0]).value).match(_last(t)), _last(t)


def a_suit(t: Table, m: re.Match[str]) -> None:
    seat = t.referee.state.seat
    assert seat is not None  # the call the advice relies on is kept
    suit = _option_keys(t, ("suit",), tuple(BUTTON_BY_SUIT.values()))[-1]
    t.press(suit)
    assert t.referee.step().name == "confirm" and t.referee.state.seat == seat
    t.press(OK)
    assert _bid_line(seat).match(_last(t)), _last(t)


def go_alone(t: Table, m: re.Match[str]) -> None:
    seat = t.referee.state.seat
    t.press("ALONE")
    assert t.referee.state.alone and t.referee.state.seat == seat and seat is not None


def another_seat(t: Table, m: re.Match[str]) -> None:
    lines = journal_lines(t.referee)
    t.press(UNDO)
    assert t.referee.state.seat is None and journal_lines(t.referee) == lines


def confirm(t: Table, m: re.Match[str]) -> None:
    seat, suit = t.referee.state.seat, t.referee.state.suit
    assert seat is not None and suit is not None
    t.press(OK)
    assert _bid_line(seat).match(_last(t)), _last(t)


def toggle_alone(t: Table, m: re.Match[str]) -> None:
    alone = t.referee.state.alone
    t.press("ALONE")
    assert t.referee.state.alone is not alone and t.referee.state.suit is not None


def start_again(t: Table, m: re.Match[str]) -> None:
    t.press(UNDO)
    assert t.referee.state.seat is None and t.referee.state.suit is None


def lone_defender(t: Table, m: re.Match[str]) -> None:
    seat = _option_keys(t, ("entry",), SEAT_BUTTONS)[0]
    t.press(seat)
    assert _last(t) == f"defend {seat}"


def no_one(t: Table, m: re.Match[str]) -> None:
    t.press(OK)
    assert t.referee.state.mode == "no-defend" and t.referee.step().name == "trick"


def winner(t: Table, m: re.Match[str]) -> None:
    seat = _option_keys(t, ("entry",), SEAT_BUTTONS)[0]
    t.press(seat)
    assert _last(t) == f"trick {seat}"


def claim(t: Table, m: re.Match[str]) -> None:
    t.press(OK)
    assert t.referee.step().name == "claim"


def renege(t: Table, m: re.Match[str]) -> None:
    t.press("ALONE")
    assert t.referee.step().name == "renege"


def by_the_count(t: Table, m: re.Match[str]) -> None:
    choice = next(c for c in t.referee.view().choices if c.label.startswith("Makers took"))
    t.press(choice.key)
    assert _last(t) == f"tricks {choice.label.split()[-1]}"


def rest_to_makers(t: Table, m: re.Match[str]) -> None:
    most = max(int(c.label.split()[-1]) for c in t.referee.step().options)
    t.press(OK)
    assert _last(t) == f"tricks {most}"


def reneger(t: Table, m: re.Match[str]) -> None:
    seat = _option_keys(t, ("entry",), SEAT_BUTTONS)[0]
    t.press(seat)
    assert _last(t) == f"renege {seat}"


def must_go_alone(t: Table, m: re.Match[str]) -> None:
    seat = SEAT_BY_NAME[m.group(1)]
    t.press("ALONE", OK)
    assert _bid_line(seat, alone=True).match(_last(t)), _last(t)


def confirm_later(t: Table, m: re.Match[str]) -> None:
    """A moment later OK does what the screen says it does: what the quick
    second OK was refused (any question an OK opened: a call, a list...)."""
    step = t.referee.step()
    if t.layout == "cursor":
        action = step.options[step.cursor_index(t.referee.state.cursor)].action
    else:
        assert step.ok is not None  # (an OK that does nothing is never refused as quick)
        action = step.ok
    lines, before = journal_lines(t.referee), t.snapshot()
    t.press(OK)  # a moment later
    assert t.refusal is None, t.refusal
    if step.name == "new-game":
        assert t.referee.game.phase.value == "in game" and t.referee.game.hand.number == 1
    elif action.kind in ("entry", "confirm", "random"):
        assert journal_lines(t.referee)[:-1] == lines, journal_lines(t.referee)
        if step.name == "confirm":
            assert _bid_line(".").match(_last(t)), _last(t)
    else:  # a list opened, a choice made: the flow moved on
        assert t.snapshot() != before or t.referee.page is not None, (step.name, action)


def another_suit(t: Table, m: re.Match[str]) -> None:
    seat = t.referee.state.seat
    assert seat is not None  # the maker the advice speaks to is kept
    turned = m.group(1)
    keys = [key for key in _option_keys(t, ("suit",), tuple(BUTTON_BY_SUIT.values()))
            if Suit.from_str(key[0]).word != turned]
    t.press(keys[0], OK)
    assert _bid_line(seat, Suit.from_str(keys[0][0]).value).match(_last(t)), _last(t)


def whose_turn(t: Table, m: re.Match[str]) -> None:
    seat = SEAT_BY_NAME[m.group(1)]
    t.press(seat)
    assert t.referee.state.seat == seat and t.refusal is None


def words_only(t: Table, m: re.Match[str]) -> None:
    """A reason, no advice: nothing to follow."""


ADVICE: list[tuple[str, Follow]] = [
    # the reasons (what was refused, and why)
    (r"^\S+ does nothing [^:]*: ", words_only),
    (r"^" + NAME + r" is on the makers' side$", words_only),
    (r"^" + NAME + r" sits out: " + NAME + r" (went|defends) alone$", words_only),
    (r"^nothing to undo: this is the start of the game$", words_only),
    (r"^the upcard is already entered \(\w+\)$", words_only),
    (r"^game over: (NS|EW) won \d+-\d+: ", words_only),
    (r"^Canadian loner: ", words_only),
    (r"^OK twice quickly: ", words_only),
    # the advice, each with the presses it names and what they must do
    (r"tap the first dealer's seat", first_dealer),
    (r"OK for a random one", random_dealer),
    (r"ALONE to set up the game", open_setup),
    (r"tap the next dealer's seat", next_dealer),
    (r"OK for a new game", new_game),
    (r"start a new game", new_game),
    (r"UNDO to take back the last entry", undo_last),
    (r"(?<=start a new game )or undo$", undo_last),
    (r"OK to start it", start_it),
    (r"a seat to change the dealer", change_dealer),
    (r"UNDO to go back", go_back),
    (r"tap a seat to choose its player", seat_to_name),
    (r"OK when done", done),
    (r"tap the button by a name", by_a_name),
    (r"tap the button by a profile", by_a_profile),
    (r"tap the button by players or rules", players_or_rules),
    (r"tap the maker's seat", maker_seat),
    (r"or the upcard's suit", upcard_suit),
    (r"stick the dealer: " + NAME + r" must name a suit", stuck_dealer),
    (r"tap a suit", a_suit),
    (r"ALONE to go alone", go_alone),
    (r"UNDO for another seat", another_seat),
    (r"(?<!then )OK to confirm", confirm),
    (r"ALONE to toggle alone", toggle_alone),
    (r"UNDO to start again", start_again),
    (r"tap the lone defender's seat", lone_defender),
    (r"or OK: no one", no_one),
    (r"tap the winner's seat", winner),
    (r"OK to claim the rest", claim),
    (r"ALONE for a renege", renege),
    (r"tap the button by the count", by_the_count),
    (r"OK: the makers took the rest", rest_to_makers),
    (r"tap the seat that reneged", reneger),
    (NAME + r" ordered up partner " + NAME + r" and must go alone", must_go_alone),
    (r"read the screen, then OK to confirm", confirm_later),
    (r"(\w+) was turned down: name another suit", another_suit),
    (r"^it is " + NAME + r"'s turn to bid, not " + NAME + r"'s$", whose_turn),
]
"""Each piece of a refusal's words: a reason (nothing to follow) or advice,
with the presses it names and a check that they do what it says."""

SEPARATORS = re.compile(r"^[\s,;:.]*(?:(?:or|and|then)[\s,;:.]*)*$")


def read_advice(message: str) -> list[tuple[str, Follow, re.Match[str]]]:
    """The advice in ``message``, each piece with what follows it; every word
    of the message must be read (a reason or advice), or this fails."""
    pieces, covered = [], [False] * len(message)
    for pattern, follow in ADVICE:
        for match in re.finditer(pattern, message):
            pieces.append((pattern, follow, match))
            for index in range(*match.span()):
                covered[index] = True
    unread = "".join(" " if done else char for char, done in zip(message, covered))
    assert all(SEPARATORS.match(part) for part in re.split(r"\s{2,}", unread)), (
        f"a refusal whose words are not all read as a reason or advice: {message!r} "
        f"(unread: {unread.strip()!r}): add its advice to ADVICE")
    return [piece for piece in pieces if piece[1] is not words_only]


def test_every_refusals_advice_does_what_it_says(table: Callable[[str, str], Table]) -> None:
    followed: dict[tuple[str, str], int] = {}
    for layout in ("seats", "cursor"):
        for scene, _, _ in SCENES:
            for probe in probes(table(scene, layout)):
                _, message = refused(table, scene, layout, probe)
                if message is None or (layout, message) in followed:
                    continue
                advice = read_advice(message)
                followed[layout, message] = len(advice)
                for pattern, follow, match in advice:
                    t, again = refused(table, scene, layout, probe)
                    assert again == message
                    try:
                        follow(t, match)
                    except AssertionError as error:
                        raise AssertionError(
                            f"{layout} layout, {scene}, {probe[0]}: refused {message!r}; "
                            f"following {pattern!r} did not do what it says: {error}"
                        ) from error
    # The walk met every kind of refusal there is (a scene lost would hide some).
    kinds = {(layout, re.sub(NAME, "X", message)) for layout, message in followed}
    print(f"{len(followed)} refusals, {len(kinds)} kinds, {sum(followed.values())} advice "
          "followed")
    assert len([kind for kind in kinds if kind[0] == "seats"]) >= 25, sorted(kinds)
    assert {message for layout, message in kinds if layout == "cursor"} >= {
        "nothing to undo: this is the start of the game",
        "OK twice quickly: read the screen, then OK to confirm"}, sorted(kinds)
    assert sum(followed.values()) >= 40
