"""The button vocabulary, once: every button name the referee knows, what is
printed on each, and the help text of each layout.

A button is named by its meaning (``"N"``, ``"HEARTS"``, ``"OK"``...); the
config's pin map binds names to GPIO pins, the emulator binds keys to names
(``firmware.emulator.terminal.KEYS``), and the app, the flow and the screens
speak only these names.  Suit symbols and words come from
:class:`euchre_core.Suit`.
"""

from __future__ import annotations

from typing import Final, Literal

from euchre_core import Seat, Suit

Layout = Literal["seats", "cursor"]
"""``seats``: a button per seat and per suit; ``cursor``: PREV, NEXT, OK, UNDO
(or a rotary encoder for PREV/NEXT)."""

SEAT_BUTTONS: Final = ("N", "E", "S", "W")
"""One button per seat: the first dealer, the maker, a trick's winner."""

SUIT_BY_BUTTON: Final = {
    "SPADES": Suit.SPADES, "HEARTS": Suit.HEARTS, "DIAMONDS": Suit.DIAMONDS, "CLUBS": Suit.CLUBS,
}  # fmt: skip
BUTTON_BY_SUIT: Final = {suit: button for button, suit in SUIT_BY_BUTTON.items()}
SUIT_BUTTONS: Final = tuple(SUIT_BY_BUTTON)

ALONE: Final = "ALONE"
UNDO: Final = "UNDO"
OK: Final = "OK"
PREV: Final = "PREV"
NEXT: Final = "NEXT"
HELP: Final = "HELP"
"""Shows the help pages (the emulator's ``?``; no pin in the default map: on the
box a long press opens them, :data:`HOLD_OPENS_HELP`)."""

BUTTONS: Final = (*SEAT_BUTTONS, *SUIT_BUTTONS, ALONE, UNDO, OK, PREV, NEXT)
"""Every button a pin can be bound to (``PREV``/``NEXT`` move the cursor)."""

MENU_KEYS: Final = (*SEAT_BUTTONS, *SUIT_BUTTONS)
"""Buttons that pick a menu's items, in order, in the seats layout."""

LABELS: Final[dict[str, str]] = {
    **{seat: seat for seat in SEAT_BUTTONS},
    **{button: suit.symbol for button, suit in SUIT_BY_BUTTON.items()},
    ALONE: "ALONE", UNDO: "UNDO", OK: "OK", PREV: "<", NEXT: ">", HELP: "?",
}  # fmt: skip
"""What is printed on each button (and said of it in messages)."""

SHORT_LABELS: Final[dict[str, str]] = {**LABELS, ALONE: "A", UNDO: "U"}
"""The prefix a menu line shows for the button that picks it."""


def seat_of(button: str) -> Seat | None:
    """The seat a seat button stands for (None for any other button)."""
    return Seat.from_str(button) if button in SEAT_BUTTONS else None


def label(button: str) -> str:
    """What is printed on ``button`` (its name when unknown)."""
    return LABELS.get(button, button)


PAGES: Final = ("help", "rules", "hands", "stats")
"""The pages over the table, in the order OK (or NEXT) steps through them: the
help, the house rules in force, the hands so far, the players' statistics
over the kept games (:mod:`firmware.stats`)."""

HOLD_OPENS_HELP: Final[dict[str, tuple[str, ...]]] = {
    "seats": (ALONE,),
    "cursor": (PREV, NEXT),
}
"""Per layout, the buttons whose long press opens the help pages.  Their tap
never enters anything (ALONE toggles alone or opens the renege menu; PREV/NEXT
move the cursor), so the tap that starts a long press is taken back."""

STUCK_S: Final = 10.0
"""A button still down this long after its long press is reported as stuck (s)."""

CONFIRM_GUARD_S: Final = 0.6
"""An OK that opened a question (a list, a confirmation: a new game, the
trump after the maker's seat, a claim's count...) is never followed this
soon (s) by an OK that answers it: OK twice quickly asks once and enters
nothing (:meth:`firmware.app.Referee.press`)."""


def twice_quickly(then: str = "confirm") -> str:
    """What a quick second OK is told (it did nothing): read, then OK to ``then``."""
    return f"{LABELS[OK]} twice quickly: read the screen, then {LABELS[OK]} to {then}"


def hold_opens_help(layout: str, button: str) -> bool:
    """Whether a long press of ``button`` opens the help pages in ``layout``."""
    return button in HOLD_OPENS_HELP.get(layout, ())


def help_lines(layout: str) -> tuple[str, ...]:
    """The help screen's lines for a layout (``seats`` or ``cursor``): the
    buttons, the long press that opens the help, and the pages OK turns to
    from it (every page of :data:`PAGES` named; the first four lines are the
    ones a small screen shows without scrolling)."""
    then = f"OK now: {', '.join(PAGES[1:])}"
    if layout == "cursor":
        return (
            "PREV/NEXT: move",
            "OK: choose",
            "UNDO: back one step",
            f"Hold {LABELS[PREV]} or {LABELS[NEXT]}: help",
            then,
            "Help: the last choice",
        )
    suits = "".join(LABELS[button] for button in SUIT_BUTTONS)
    return (
        f"{' '.join(SEAT_BUTTONS)}: seats",
        f"{suits}: trump, upcard",
        f"{LABELS[ALONE]}: alone, renege",
        f"{LABELS[UNDO]}: back one step",
        then,
        f"Hold {LABELS[ALONE]}: help",
        "OK: as shown",  # (every screen says what OK does; one line: two screens of four)
    )
