"""No line the table needs is cut (issue 23, "Words").

The real :class:`~firmware.app.Referee` is driven through whole games, in
both layouts, with long and non-ASCII names (12 characters, 40, the config's
limit, and two that share a long start), by a walk that mostly chooses what
the screen offers (the seats layout by the button beside it, the cursor
layout by moving onto it) and now and then presses any button: the set-up
menu and its pages, help, house rules, the hands so far, refusals, the
claim, the renege, the winner and the new game's confirmation.  Every frame
is drawn with :func:`firmware.screens.draw`, which measures each text with
the font: a frame with a cut text (or a state line left out for want of
room) fails, naming it.

What may be shortened: a player's name, by the one function
:func:`~firmware.screens.short_name`, the same way all over a frame.
Nothing else: a sentence is reworded or given its own screen instead.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

import pytest
from support.app_kit import ram_dir
from support.clock import FakeClock
from support.screen_ok import ok_unsaid

from euchre_core import SEATS, Rules, Seat
from euchre_core.events import MAX_NAME
from firmware.app import Referee
from firmware.buttons import BUTTONS, CONFIRM_GUARD_S, NEXT, OK, Layout
from firmware.config import Config
from firmware.journal import Store
from firmware.screens import draw, short_name, short_names

FORTY: Final = "Þórhildur Sigríður Guðmundsdóttir Ólafs"[:MAX_NAME].ljust(MAX_NAME, "x")
"""A name as long as the config allows (40 characters), non-ASCII."""

NAME_SETS: Final[dict[str, dict[Seat, str]]] = {
    "seed": {Seat.N: "Ragnar", Seat.E: "Sigríður", Seat.S: "Anna", Seat.W: "Þórhildur"},
    "twelve": {Seat.N: "Aðalsteinunn", Seat.E: "Christopher", Seat.S: "Bartholomew",
               Seat.W: "Guðmundsdótt"},
    "forty": {Seat.N: FORTY, Seat.E: "Sigríður", Seat.S: "Jo", Seat.W: "Ólafur Ragnar G."},
}
"""Players' names, seat by seat: the seed's, 11 and 12-character ones (not
"Christopher" and "Christina", which share their first seven letters: the
tests below keep such names apart, on a lone defender's lead line too), and
one of 40 characters."""

RULES: Final = (
    Rules(target=3),
    Rules(target=5, defend_alone=True, stick_the_dealer=False, win_by_two=True),
    Rules(target=3, canadian_loner=True),
)
"""Short games (a walk reaches the winner), with the house rules whose words differ."""



@contextmanager
def _referee(layout: Layout, names: dict[Seat, str], rules: Rules,
             seed: int = 0) -> Iterator[tuple[Referee, FakeClock]]:
    clock = FakeClock()
    with tempfile.TemporaryDirectory(dir=ram_dir(), prefix="words-") as state:
        config = Config(state_dir=Path(state), layout=layout, names=dict(names), rules=rules)
        app = Referee(config, Store(Path(state)), renderer=lambda view: view, clock=clock,
                      rng=random.Random(seed))
        try:
            yield app, clock
        finally:
            app.store.close()


class Walk:
    """Draws every frame a referee shows and keeps what was wrong with it."""

    def __init__(self, app: Referee, clock: FakeClock) -> None:
        self.app, self.clock = app, clock
        self.faults: list[str] = []
        self.kinds: set[str] = set()
        self.frames = 0

    def look(self) -> None:
        view = self.app.view()
        drawn = draw(view)
        self.frames += 1
        self.kinds.add(view.kind + (" message" if view.message else ""))
        where = f"{view.kind} screen ({view.title or view.prompt!r}, message {view.message!r})"
        if drawn.cut:
            self.faults.append(f"{where}: cut {drawn.cut}")
        unsaid = ok_unsaid(view, drawn, self.app.config.layout)
        if unsaid and not drawn.cut:
            self.faults.append(unsaid)
        shown = drawn.view  # one form of each name on one frame
        forms: dict[str, set[str]] = {}
        for full, short in ((view.dealer, shown.dealer), (view.leader, shown.leader),
                            (view.maker, shown.maker), (view.lone_defender, shown.lone_defender)):
            if full and short:
                forms.setdefault(full, set()).add(short)
        for name, form in forms.items():
            if len(form) > 1:
                self.faults.append(f"{where}: {name!r} drawn as {sorted(form)}")

    def press(self, button: str, wait: float) -> None:
        self.clock.advance(wait)
        self.app.press(button)
        self.look()
        self.clock.advance(30)  # the message, or the hand's result, has gone
        self.look()


def _walk(layout: Layout, names: dict[Seat, str], rules: Rules, seed: int,
          presses: int) -> Walk:
    """``presses`` presses from a fresh box: mostly an option the screen
    offers, sometimes any button or the help."""
    rng = random.Random(seed)
    with _referee(layout, names, rules, seed) as (app, clock):
        walk = Walk(app, clock)
        walk.look()
        for _ in range(presses):
            step = app.step()
            wait = rng.choice([0.05, 1.0, 5.0])  # quick taps too: the double-tap guard
            roll = rng.random()
            if step.options and roll < 0.8:
                option = rng.randrange(len(step.options))
                if layout == "cursor":
                    for _ in range(option):
                        walk.press(NEXT, 0.2)
                    walk.press(OK, wait + CONFIRM_GUARD_S)
                else:
                    walk.press(step.options[option].key or OK, wait)
            elif roll < 0.84:
                walk.press("HELP", wait)
            else:
                walk.press(rng.choice(BUTTONS), wait)
    return walk


@pytest.mark.parametrize("names", sorted(NAME_SETS))
@pytest.mark.parametrize("layout", ["seats", "cursor"])
def test_no_line_the_table_needs_is_cut(layout: Layout, names: str) -> None:
    """Whole games in each set of rules: no frame has a cut text, every frame
    of a step says what OK does (:func:`support.screen_ok.ok_unsaid`), and the
    walks met every kind of screen (and messages over them)."""
    faults: list[str] = []
    kinds: set[str] = set()
    for number, rules in enumerate(RULES):
        walk = _walk(layout, NAME_SETS[names], rules, seed=number, presses=260)
        faults += walk.faults
        kinds |= walk.kinds
    assert not faults, "\n".join(sorted(set(faults))[:20])
    wanted = {"table", "table message", "menu", "result", "winner", "confirm", "help", "rules",
              "hands"}
    assert wanted <= kinds, f"the walks never showed {wanted - kinds}"


# --------------------------------------------------------------------------- the one function


def test_a_name_is_shortened_one_way() -> None:
    """Whole when short enough; else its first letters and "." (never "…", the
    mark of a cut text); two names alike kept apart."""
    assert short_name("Þórhildur", 9) == "Þórhildur"
    assert short_name("Þórhildur", 8) == "Þórhild."
    assert short_name(FORTY, 12) == FORTY[:11] + "."
    assert short_name("Ann Marie", 5) == "Ann."  # (no space before the mark)
    shorts = short_names(("Christopher", "Christina", "Anna"), 6)
    assert shorts["Anna"] == "Anna"
    assert shorts["Christopher"] != shorts["Christina"]
    assert all(short.endswith(".") for name, short in shorts.items() if name != "Anna")


def test_every_name_on_a_frame_is_shortened_alike(tmp_path: Path) -> None:
    """A lone defender's table with 12-character names: "Lead X vs Y" is
    tight, so the frame is drawn with every name shortened to one length:
    the dealer's big name, the maker's, the leader's and the defender's."""
    names = NAME_SETS["twelve"]
    with _referee("seats", names, Rules(defend_alone=True)) as (app, clock):
        for button in ("N", "S", "DIAMONDS", "ALONE", "OK", "W"):  # S alone, W defends
            clock.advance(5)
            app.press(button)
        view = app.view()
        assert view.lone_defender == names[Seat.W] and view.trump == "D"
        drawn = draw(view)
        assert drawn.cut == ()
        shown = drawn.view
        limit = max(len(text) for text in (shown.dealer, shown.maker, shown.leader,
                                           shown.lone_defender) if text)
        for full, short in ((view.dealer, shown.dealer), (view.maker, shown.maker),
                            (view.leader, shown.leader),
                            (view.lone_defender, shown.lone_defender)):
            assert full is not None and short is not None
            assert short == short_names(view.names, limit)[full], (full, short)
        assert shown.lone_defender != view.lone_defender  # it had to be shortened
        assert f"vs {shown.lone_defender}" in drawn.texts


def test_the_seed_names_fit_the_table_but_a_lone_defenders_line() -> None:
    """The default names fit every line of the table whole, but "Lead Anna vs
    Þórhildur" (22 characters in 21): there "Þórhild." all over the frame."""
    names = NAME_SETS["seed"]
    with _referee("seats", names, Rules(defend_alone=True)) as (app, clock):
        for button in ("N", "S", "DIAMONDS", "ALONE", "OK"):
            clock.advance(5)
            app.press(button)
        assert draw(app.view()).view == app.view()  # nothing shortened
        clock.advance(5)
        app.press("W")  # Þórhildur defends alone
        drawn = draw(app.view())
        assert drawn.cut == () and "vs Þórhild." in drawn.texts
        assert drawn.view.dealer == "Ragnar" and drawn.view.maker == "Anna"


@pytest.mark.parametrize("layout", ["seats", "cursor"])
def test_two_names_alike_on_a_lone_defenders_lead_line_fit_told_apart(layout: Layout) -> None:
    """Christopher alone leads against Christina defending alone: "Lead
    Christo. vs Christi." is 25 characters in 21, so the maker who leads is
    said on the hand line ("Christop. leads") and the defender below ("vs
    Christina alone"): nothing cut, the two told apart; once she leads, her
    line is "Lead Christi. (alone)" and the maker's "Christo. alone"."""
    names = {**NAME_SETS["seed"], Seat.E: "Christopher", Seat.S: "Christina"}
    with _referee("seats", names, Rules(defend_alone=True)) as (app, clock):
        for button in ("N", "E", "DIAMONDS", "ALONE", "OK", "S"):  # E alone, S defends
            clock.advance(5)
            app.press(button)
        app.config = app.config._replace(layout=layout)
        view = app.view()
        assert (view.maker, view.leader, view.lone_defender) == (
            "Christopher", "Christopher", "Christina")
        drawn = draw(view)
        assert drawn.cut == ()
        maker = next(text for text in drawn.texts if text.endswith(" leads"))
        defender = next(text for text in drawn.texts if text.startswith("vs "))
        assert defender.endswith(" alone")
        told = (maker.removesuffix(" leads"), defender[3:].removesuffix(" alone"))
        assert told[0] != told[1] and all(len(name) >= 8 for name in told), told
        assert "Christopher".startswith(told[0].rstrip(".")) and "Christina".startswith(
            told[1].rstrip("."))
        assert not any(text.startswith("Lead ") for text in drawn.texts)
        clock.advance(5)
        app.config = app.config._replace(layout="seats")
        app.press("S")  # she takes the first trick: she leads the next
        app.config = app.config._replace(layout=layout)
        drawn = draw(app.view())
        assert drawn.cut == ()
        lead = next(text for text in drawn.texts if text.startswith("Lead "))
        assert lead.endswith(" (alone)") and lead[5:].startswith("Christi")
        assert any(text.startswith("Christo") and text.endswith(" alone")
                   for text in drawn.texts)


# --------------------------------------------------------------------------- the new game


WON: Final = ("players N=Ragnar E=Sigríður S=Anna W=Þórhildur", "rules target=1",
              "game dealer=N", "make S C", "tricks 3")


@pytest.mark.parametrize("layout", ["seats", "cursor"])
def test_the_new_game_confirmation_names_its_players_and_dealer(layout: Layout) -> None:
    """After the win: the confirmation is a screen of its own naming each seat's
    player of the game it starts (the names set for the games to come, here
    changed after the win) and who deals first, a random dealer drawn before
    it is asked; OK starts exactly that game."""
    names = NAME_SETS["seed"]
    with _referee(layout, names, Rules(target=1), seed=3) as (app, clock):
        app.load_game(list(WON))
        app.set_next_names({Seat.E: "Guðrún"})
        clock.advance(5)
        app.press(OK)  # the cursor starts on "Random dealer"; the seats' OK: a new game
        view = app.view()
        assert view.kind == "confirm" and view.title == "New game?"
        dealer = app.game.dealer if app.staged else None
        assert dealer is None  # nothing started yet
        seats = [line for line in view.lines if line[:2] in {f"{seat} " for seat in SEATS}]
        assert [line.split(" deals")[0] for line in seats] == [
            "N Ragnar", "E Guðrún", "S Anna", "W Þórhildur"]
        dealing = [line for line in seats if line.endswith(" deals")]
        assert len(dealing) == 1
        drawn = draw(view)
        assert drawn.cut == () and set(view.lines[:4]) <= set(drawn.texts)
        if layout == "cursor":
            assert view.choices[view.cursor].label == "Start the game"
        else:
            assert view.lines[-1] == "OK: start, UNDO: back"
        clock.advance(5)
        app.press(OK)
        assert app.game.dealer is not None
        assert dealing[0] == f"{app.game.dealer} {app.game.name(app.game.dealer)} deals"
        assert app.game.name(Seat.E) == "Guðrún"


def test_the_confirmation_of_a_chosen_dealer_with_a_forty_character_name() -> None:
    """Tap a seat after the win: that seat deals; a 40-character name is
    shortened on this screen (only), every line whole."""
    names = {**NAME_SETS["seed"], Seat.W: FORTY}
    log = ["players N=Ragnar E=Sigríður S=Anna W=\"" + FORTY + "\"", *WON[1:]]
    with _referee("seats", names, Rules(target=1)) as (app, clock):
        app.load_game(log)
        clock.advance(5)
        app.press("W")
        view = app.view()
        assert view.kind == "confirm" and view.lines[3] == f"W {FORTY} deals"
        drawn = draw(view)
        assert drawn.cut == ()
        shown = drawn.view.lines[3]
        assert shown != view.lines[3] and shown.endswith(". deals")
        assert shown in drawn.texts and "N Ragnar" in drawn.texts
