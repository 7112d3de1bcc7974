"""The set-up menu is found and does what a table needs (issue 23, "the set-up
menu nobody finds"): the first screen of a fresh box says how to set the
players and the rules, in both layouts, and following it opens the menu; a
seat's row offers the players seated elsewhere (a swap: the names move with
the players) and the names the box has kept, never nothing; the journal
records the names as the ``players`` line it always has.

Driven as the table drives it: gpiozero's mock pins through the ButtonBank,
on a fake clock.  Default names: N=Ragnar E=Sigríður S=South W=Anna.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.app_kit import PinTable, assert_replays, journal_lines, pin_tables

from euchre_core import SEATS, Seat
from firmware.screens import draw


class Table(PinTable):
    """A referee on gpiozero mock pins; ``taps("ALONE N")`` are fingers on buttons."""

    def taps(self, text: str) -> None:
        for name in text.split():
            self.clock.advance(1.0)
            self.tapper.tap_and_handle(self.referee, name)

    def shown(self) -> tuple[str, ...]:
        """The texts the frame drew now (each whole: a cut one fails)."""
        drawn = draw(self.referee.view())
        assert drawn.cut == (), drawn.cut
        return drawn.texts

    def pick(self, label: str) -> None:
        """Press what the screen shows for ``label`` (seats: the button beside
        it, turning a long menu's page first; cursor: the arrows, then OK)."""
        for _ in range(12):
            view = self.referee.view()
            labels = [choice.label for choice in view.choices]
            if label in labels:
                if self.config.layout == "cursor":
                    if view.cursor == labels.index(label):
                        self.taps("OK")
                        return
                    self.taps("NEXT")
                    continue
                self.taps(view.choices[labels.index(label)].key)
                return
            self.taps("ALONE" if self.config.layout == "seats" else "NEXT")
        raise AssertionError(f"{label!r} never shown; shown: {labels}")


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Any]:
    yield from pin_tables(Table, tmp_path)


@pytest.mark.parametrize(("layout", "said", "follow"), [
    ("seats", "ALONE: names, rules", "ALONE"),
    ("cursor", "< for names, rules", "PREV OK"),
])
def test_a_fresh_box_says_how_to_set_the_players_and_the_rules(
        table: Any, layout: str, said: str, follow: str) -> None:
    t = table(layout)
    assert said in t.shown()  # on the first screen, whole
    t.taps(follow)
    view = t.referee.view()
    assert (view.kind, view.title) == ("menu", "Set up a game")
    assert "Players…" in [c.label for c in view.choices]


@pytest.mark.parametrize("layout", ["seats", "cursor"])
def test_every_seat_row_offers_the_others_and_a_swap_moves_the_names(
        table: Any, layout: str) -> None:
    t = table(layout)
    t.taps("ALONE" if layout == "seats" else "PREV OK")
    t.pick("Players…")
    for seat in SEATS:  # every seat's row: the three seated elsewhere, to swap with
        t.pick(f"{seat}: {t.referee.config.names[seat]}")
        view = t.referee.view()
        assert view.title == f"Who sits at {seat}?"
        others = [t.referee.config.names[other] for other in SEATS if other is not seat]
        assert [c.label for c in view.choices][:3] == [f"{name} (swap)" for name in others]
        assert "(nothing to choose)" not in t.shown()
        if layout == "seats":
            t.taps("OK")  # keep who sits there
        else:
            t.pick(f"Keep {t.referee.config.names[seat]}")
        assert t.referee.step().name == "setup-names"
    t.pick("W: Anna")
    t.pick("Ragnar (swap)")  # Ragnar moves to W, Anna to N
    names = t.referee.config.names
    assert (names[Seat.N], names[Seat.W]) == ("Anna", "Ragnar")
    # Recorded as names always are: the next games' setting and the game's players line.
    line = "players N=Anna E=Sigríður S=South W=Ragnar"
    assert t.referee.store.settings()["players"] == line
    assert journal_lines(t.referee)[-1] == line
    t.pick("N: Anna")  # and back: the names move with the players again
    t.pick("Ragnar (swap)")
    assert journal_lines(t.referee)[-1] == "players N=Ragnar E=Sigríður S=South W=Anna"
    if layout == "seats":  # the four seats fill the page: OK is done, as its title says
        assert "Whose name? OK: done" in t.shown()
        t.taps("OK")
    else:
        t.pick("Done")
    t.pick("Done")
    t.taps("W" if layout == "seats" else "OK")  # the first dealer: the game starts
    assert t.referee.game.names[Seat.W] == "Anna"
    assert_replays(t.referee)


def test_a_kept_name_is_offered_after_the_swaps(table: Any) -> None:
    t = table()
    t.referee.set_next_names({Seat.S: "Zoë"})  # (South went home; Zoë sat down)
    t.taps("ALONE")
    t.pick("Players…")
    t.pick("S: Zoë")
    labels = [c.label for c in t.referee.view().choices]
    assert labels == ["Ragnar (swap)", "Sigríður (swap)", "Anna (swap)", "South"]
    t.pick("South")  # South is back: a kept name, no swap
    assert t.referee.config.names[Seat.S] == "South"
    assert journal_lines(t.referee)[-1] == "players N=Ragnar E=Sigríður S=South W=Anna"


def test_each_name_is_picked_by_the_button_shown_beside_it(table: Any) -> None:
    """Seats layout: the names menu shows the four seats on one page, each by its
    seat's button; a seat's list shows the players seated elsewhere by their
    seats' buttons (the first page), then the kept names by the suit buttons;
    every name, on the page that shows it, is picked by the button drawn
    beside it."""
    t = table()
    seated = {Seat.N: "Bob", Seat.E: "Cleo", Seat.S: "Dan", Seat.W: "Eve"}
    t.referee.set_next_names(seated)
    t.taps("ALONE N")
    view = t.referee.view()
    assert [(c.key, c.label) for c in view.choices] == [
        (str(seat), f"{seat}: {name}") for seat, name in seated.items()]
    for seat in SEATS:
        others = {str(other): name for other, name in seated.items() if other is not seat}
        t.taps(str(seat))
        listed = [option.label for option in t.referee.step().options]
        assert len(listed) == 7 and t.referee.view().title == f"Who sits at {seat}?"
        first = {c.key: c.label for c in t.referee.view().choices if c.key != "ALONE"}
        assert first == {key: f"{name} (swap)" for key, name in others.items()}
        for label in listed:
            for _ in range(3):  # the page that shows it (ALONE: the next page)
                shown = {c.label: c.key for c in t.referee.view().choices}
                if label in shown:
                    break
                t.taps("ALONE")
            assert label in shown and label in " ".join(t.shown()), (seat, label)
            t.taps(shown[label])
            name = label.removesuffix(" (swap)")
            assert t.referee.config.names[seat] == name, (seat, label, shown[label])
            assert t.referee.step().name == "setup-names"
            t.referee.set_next_names(seated)  # as they were, for the next name
            t.taps(str(seat))
        t.taps("OK")  # keep who sits there
