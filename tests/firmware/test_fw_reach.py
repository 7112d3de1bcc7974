"""Every item of every list, and every screen of every page, can be reached and
is drawn on the screen before the press that chooses it, in both layouts.

A :class:`Table` drives the real :class:`~firmware.app.Referee` as a player
would and draws each frame with :func:`firmware.screens.draw`, which says
every text it drew.  A watch on the referee's actions checks, at the press
that chooses an item of a list (a menu in either layout; any step in the
cursor layout, whose items are only reached by moving over them), that the
item's label was drawn since the list came up.  The walk tries every item of
every list the flow shows, from the first game to the winner, with the
set-up menu and every house-rules profile.  (The seats layout's seat and
suit buttons are printed on the box: choosing by them is no list.)
"""

from __future__ import annotations

import random
import re
import tempfile
from collections import Counter, deque
from pathlib import Path
from typing import Final

import pytest
from PIL import ImageOps
from support.clock import FakeClock
from support.screen_ok import ok_unsaid

from euchre_core import Rules, Seat
from euchre_core.events import SetRules
from firmware.app import Referee
from firmware.buttons import NEXT, OK, PAGES, Layout
from firmware.config import Config
from firmware.flow import Action, Step
from firmware.fonts import load_fonts
from firmware.journal import Store
from firmware.screens import HEIGHT, WIDTH, cap_height, draw, pages

NAMES = {Seat.N: "Guðrún", Seat.E: "Sigríður", Seat.S: "Bartholomew", Seat.W: "Anna"}
"""Two of them not the default names: the set-up menu offers those as kept names."""

Presses = tuple[str, ...]
Lines = tuple[str, ...]


def _key(step: Step) -> tuple[str, tuple[str, ...]]:
    return step.name, tuple(option.label for option in step.options)


class Table:
    """A referee (its journal in a temporary directory, a clock moved by hand)
    whose every frame is drawn; it fails a choice of an item not drawn since
    its list came up."""

    def __init__(self, layout: Layout, rules: Rules, state: Path, log: Lines = ()) -> None:
        self.clock = FakeClock()
        config = Config(state_dir=state, layout=layout, names=dict(NAMES), rules=rules)
        self.app = Referee(config, Store(state), renderer=lambda view: view, clock=self.clock,
                           rng=random.Random(7))
        if log:
            self.app.load_game(log)
            self.app.message = None
        self.layout = layout
        self.seen: dict[tuple[str, tuple[str, ...]], set[str]] = {}
        self.unseen: list[str] = []
        self.unsaid: list[str] = []
        """Frames of a step that do not say, whole, what OK does (:func:`ok_unsaid`)."""
        act = self.app._act

        def watched(action: Action) -> None:
            self._check(action)
            act(action)

        self.app._act = watched  # type: ignore[method-assign]
        self._look()

    def _look(self) -> None:
        """Draw the frame shown now; what it shows counts as seen for the step."""
        view = self.app.view()
        drawn = draw(view)
        unsaid = ok_unsaid(view, drawn, self.layout)
        if unsaid and unsaid not in self.unsaid:
            self.unsaid.append(unsaid)
        seen = self.seen.setdefault(_key(self.app.step()), set())
        seen.update(drawn.texts + drawn.cut)
        seen.update(choice.label for choice, shown in zip(view.choices, drawn.view.choices)
                    if shown.label in drawn.texts)  # drawn with its names shortened

    def _check(self, action: Action) -> None:
        if action.kind == "cursor":
            return  # a page turned, nothing chosen
        step = self.app.step()
        if not step.menu and self.layout == "seats":
            return
        seen = self.seen.get(_key(step), set())
        for option in step.options:
            if option.action == action and option.label not in seen:
                self.unseen.append(f"{step.name}: {option.label!r} chosen unseen "
                                   f"(drawn: {sorted(seen)})")

    def press(self, *buttons: str) -> None:
        for button in buttons:
            self.clock.advance(30)  # any message or hand's result has gone
            self.app.press(button)
            self._look()

    def close(self) -> None:
        self.app.store.close()


def _choose(table: Table, step: Step, index: int) -> Presses:
    """The presses a player makes to choose option ``index`` of ``step``: the
    cursor moved onto it then OK; in a seats-layout menu, ALONE (more) until
    its label is drawn, then the button beside it; else its button."""
    option = step.options[index]
    app = table.app
    presses: list[str] = []
    if table.layout == "cursor":
        for _ in range(len(step.options)):
            if step.cursor_index(app.state.cursor) == index:
                break
            table.press(NEXT)
            presses.append(NEXT)
        table.press(OK)
        return (*presses, OK)
    if step.menu:
        for _ in range(len(step.options)):
            if option.label in table.seen.get(_key(step), set()):
                break
            table.press("ALONE")
            presses.append("ALONE")
    table.press(option.key)
    return (*presses, option.key)


def _walk(layout: Layout, rules: Rules, log: Lines, limit: int,
          unsaid: list[str] | None = None) -> tuple[set[str], list[str]]:
    """Breadth first over the lists the flow shows after ``log``: every item
    of each is chosen once, each from a fresh referee.  Returns the step
    names met and the items chosen unseen; adds to ``unsaid`` the frames
    that do not say what OK does (:func:`ok_unsaid`)."""
    met: set[str] = set()
    unseen: list[str] = []
    done: set[tuple[str, tuple[str, ...]]] = set()
    per_name: Counter[str] = Counter()
    todo: deque[Presses] = deque([()])
    with tempfile.TemporaryDirectory() as root:
        runs = 0

        def fresh(presses: Presses) -> Table:
            nonlocal runs
            runs += 1
            table = Table(layout, rules, Path(root) / str(runs), log)
            table.press(*presses)
            return table

        while todo and len(done) < limit:
            prefix = todo.popleft()
            table = fresh(prefix)
            step = table.app.step()
            table.close()
            if _key(step) in done or not step.options or per_name[step.name] >= 3:
                continue  # (the same list for another seat tells nothing new)
            done.add(_key(step))
            per_name[step.name] += 1
            met.add(step.name)
            for index, option in enumerate(step.options):
                if layout == "seats" and not step.menu and not option.key:
                    continue
                table = fresh(prefix)
                presses = _choose(table, table.app.step(), index)
                unseen += table.unseen
                if unsaid is not None:
                    unsaid += (said for said in table.unsaid if said not in unsaid)
                if table.app.page is None:
                    todo.append(prefix + presses)
                table.close()
    return met, unseen


WON: Final = ("players N=Guðrún E=Sigríður S=Bartholomew W=Anna", SetRules(Rules(target=1)).line(),
               "game dealer=N", "make S C", "tricks 3")
"""A one-point game, won."""


@pytest.mark.parametrize("layout", ["seats", "cursor"])
def test_every_item_of_every_menu_is_seen_before_it_is_chosen(layout: Layout) -> None:
    """The set-up menu (players, a kept name, every house-rules profile), the
    first dealer, the bidding, the claim (0 to 5), a renege, to the winner's
    new game; with a one-point game so the walk reaches the win."""
    met, unseen = _walk(layout, Rules(target=1), (), limit=40)
    won, unseen_after = _walk(layout, Rules(target=1), WON, limit=10)
    assert unseen + unseen_after == []
    wanted = {"game", "setup", "setup-names", "setup-name", "setup-rules", "maker", "trump",
              "trick", "claim", "renege"}
    if layout == "seats":
        wanted.add("confirm")  # (the cursor layout's suits are the call)
    assert wanted <= met
    assert {"game", "new-game"} <= won


@pytest.mark.parametrize("layout", ["seats", "cursor"])
def test_every_frame_of_every_step_says_what_ok_does_whole(layout: Layout) -> None:
    """SPEC: every screen says what OK will do now.  The walk above (the
    set-up menu and its pages, a game from a score, the bidding, a misdeal,
    a lone defender, the claim, a renege, the winner's new game): every frame
    of a step names what OK does, in words (:func:`ok_unsaid`), drawn whole."""
    unsaid: list[str] = []
    met, _ = _walk(layout, Rules(target=1), (), limit=60, unsaid=unsaid)
    alone = Rules(target=1, defend_alone=True)
    defended, _ = _walk(layout, alone, (*WON[:1], SetRules(alone).line(), "game dealer=N",
                                        "make E H alone"), limit=10, unsaid=unsaid)
    won, _ = _walk(layout, Rules(target=1), WON, limit=10, unsaid=unsaid)
    assert unsaid == []
    met |= defended
    assert {"setup", "setup-names", "setup-name", "setup-rules", "setup-score", "maker",
            "misdeal", "trick", "claim", "renege", "defend"} <= met
    assert {"game", "new-game"} <= won


def test_the_claim_menu_shows_every_count_in_the_seats_layout(tmp_path: Path) -> None:
    """0 to 5: six counts, four rows: the menu turns pages (ALONE), each count is
    drawn beside its button before that button picks it, and a button whose
    count is on another page only turns to it."""
    table = Table("seats", Rules(), tmp_path)
    table.press("N", "S", "CLUBS", "OK", "OK")  # Ragnar deals, South makes clubs: the claim
    assert table.app.step().name == "claim"
    first = table.app.view().choices
    assert [c.label for c in first][-1].startswith("More…") and first[-1].key == "ALONE"
    table.press("N")  # "Makers took 0": is it on the page shown?
    shown = {c.label for c in table.app.view().choices}
    if "Makers took 0" not in {c.label for c in first}:
        assert table.app.game.hand.tricks == [] and "Makers took 0" in shown
        table.press("N")
    assert table.unseen == []
    assert table.app.game.entries[-1].line() == "tricks 0"
    table.close()


def _page_screens(table: Table) -> tuple[str, int]:
    view = table.app.view()
    return view.kind, len(pages(view, load_fonts()))


@pytest.mark.parametrize("layout", ["seats", "cursor"])
def test_every_screen_of_every_page_is_reached_with_ok(tmp_path: Path, layout: Layout) -> None:
    """Help, house rules and the hands so far, each longer than a screen: OK
    steps through every screen of each (and PREV back), and every line of
    every page is drawn on the way."""
    rules = Rules(win_by_two=True, stick_the_dealer=False, defend_alone=True,
                  canadian_loner=True, target=11)
    table = Table(layout, rules, tmp_path)
    hands = ["players N=Guðrún E=Sigríður S=Bartholomew W=Anna", SetRules(rules).line(),
             "game dealer=N"]
    for number in range(7):
        hands += [f"make {'NESW'[number % 4]} {'SHDC'[number % 4]}", f"tricks {3 + number % 3}"]
    table.app.load_game(hands)
    table.press("HELP")
    shown: dict[str, set[int]] = {}
    drawn: set[str] = set()
    for _ in range(40):
        if table.app.page is None:
            break
        view = table.app.view()
        kind, count = _page_screens(table)
        shown.setdefault(kind, set()).add(view.cursor)
        assert view.cursor < count
        drawn.update(draw(view).texts)
        table.press(OK)
    assert table.app.page is None  # the last OK went back to the table
    for page in PAGES:
        table.app._open_page(page)
        view = table.app.view()
        kind, count = _page_screens(table)
        assert count > 1 or page == "rules", f"the {page} page fits one screen: no test"
        assert shown[kind] == set(range(count)), (kind, shown[kind], count)
        lines = {line for screen in pages(view, load_fonts()) for line in screen}
        assert lines <= drawn, lines - drawn
    table.app._open_page("hands", at=-1)
    last = table.app.page_at
    table.press("PREV")
    assert (table.app.page, table.app.page_at) == ("hands", last - 1)
    assert table.unsaid == []  # each screen says what OK does: its next screen, or page
    table.close()


def test_a_notice_longer_than_a_screen_is_shown_whole(tmp_path: Path) -> None:
    """Any button shows a long notice's next screen; the last one's press dismisses it."""
    table = Table("seats", Rules(), tmp_path)
    lines = tuple(f"Line {number} of a long notice the table must read" for number in range(6))
    table.app.notice = ("Journal damaged", lines)
    drawn: set[str] = set()
    for _ in range(10):
        if table.app.notice is None:
            break
        drawn.update(draw(table.app.view()).texts)
        assert ok_unsaid(table.app.view(), draw(table.app.view()), "seats") is None
        table.press("N")
    assert table.app.notice is None
    expected = {line for screen in pages(table.app.view()._replace(kind="notice", lines=lines),
                                         load_fonts()) for line in screen}
    assert expected <= drawn
    table.close()


@pytest.mark.parametrize("layout", ["seats", "cursor"])
def test_the_winner_is_announced_larger_than_the_score(tmp_path: Path, layout: Layout) -> None:
    """The winner's banner: its letters taller than the table's score (Terminus
    Bold 18, 12 px capitals), in both layouts; the cursor layout's way on
    (a new game) under it."""
    table = Table(layout, Rules(target=1), tmp_path, WON)
    view = table.app.view()
    assert view.kind == "winner" and view.title == "NS win 1-0"
    image = draw(view).image
    banner = next(row for row in range(HEIGHT) if image.getpixel((0, row)) == 0)
    letters = ImageOps.invert(image.crop((0, 0, WIDTH, banner)).convert("L")).getbbox()
    assert letters is not None
    assert letters[3] - letters[1] > cap_height(load_fonts().big)
    if layout == "cursor":
        assert view.lines[-1] == "New game: who deals?"
        assert view.choices[view.cursor].label == "Random dealer"
    table.close()


@pytest.mark.parametrize("layout", ["seats", "cursor"])
def test_the_help_names_every_page_and_how_to_reach_it(tmp_path: Path, layout: Layout) -> None:
    """The help, as drawn (every screen of it), names every page over the table
    (buttons.PAGES: the help, the house rules, the hands, the stats) and how it
    is opened; OK then turns to each page it names, in that order."""
    table = Table(layout, Rules(), tmp_path)
    table.press("HELP")
    view = table.app.view()
    assert view.kind == "help"
    drawn = " ".join(line for screen in pages(view, load_fonts()) for line in screen).lower()
    for page in PAGES:
        assert re.search(rf"\b{page}\b", drawn), f"the help does not name the {page} page"
    assert "hold" in drawn  # how the help itself opens (a long press)
    turned = []
    for _ in range(20):
        if table.app.page is None:
            break
        if table.app.page not in turned:
            turned.append(table.app.page)
        table.press(OK)
    assert turned == list(PAGES)
    table.close()


def test_a_long_notice_says_what_a_press_does_on_each_screen(tmp_path: Path) -> None:
    """A notice's words for a press are true on every screen: its next screen
    ("any button: page 2/3") until the last, whose press goes back."""
    table = Table("seats", Rules(), tmp_path)
    lines = tuple(f"Line {number} of a long notice the table must read" for number in range(6))
    table.app.notice = ("Journal damaged", lines)
    count = table.app.page_screens()
    assert count > 1
    said = []
    for _ in range(count):
        hint = table.app.view().ok_hint
        said.append(hint)
        table.press("N")
        if hint == "any button: back":
            assert table.app.notice is None
        else:
            assert table.app.notice is not None
            assert hint == f"any button: page {table.app.page_at + 1}/{count}"
    assert said[-1] == "any button: back" and table.app.notice is None
    table.close()
