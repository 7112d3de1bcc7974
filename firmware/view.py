"""What the screen shows, as plain data: the app builds a :class:`View`,
``firmware.screens.render(view)`` draws it at 128x64, 1 bit per pixel.

Keeping the view separate from drawing lets the main loop redraw only when the
view changed (views compare equal), and lets tests check both halves.
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

from euchre_core import Suit

SCREEN_SIZE: Final = (128, 64)
"""The size every screen is laid out at, in pixels (a larger panel shows the
layout scaled and centred: :mod:`drivers.display`)."""

MENU_ROWS: Final = 4
"""Rows a menu shows at once (:func:`firmware.screens.render`); a longer menu
scrolls with the cursor, or in the seats layout turns pages
(:func:`firmware.flow.menu_page`)."""

ScreenKind = Literal["table", "menu", "result", "winner", "confirm", "help", "notice", "rules",
                     "hands", "stats"]


class Choice(NamedTuple):
    """One item of a menu: its label, and the button that picks it directly
    (``"N"``, ``"HEARTS"``...; empty when only the cursor reaches it)."""

    label: str
    key: str = ""


class View(NamedTuple):
    """Everything one frame shows.  Names are player names, already chosen.

    ``kind`` picks the layout:

    - ``table``: the game: score bar, hand number, dealer and leader, trump and
      maker, trick tally, and the prompt (what to enter next) — or, before the
      first game, the prompt alone;
    - ``menu``: ``title`` and ``choices`` with the ``cursor`` on one of them;
    - ``result``: a hand just ended: ``title`` (e.g. "Hand 4") and ``lines``
      (e.g. "Sigríður euchred", "EW +2"), over the score bar;
    - ``winner``: the game is won: ``title`` (e.g. "NS win 10-7") and ``lines``;
    - ``confirm``: a question in ``title`` ("New game?") and what it would do,
      a line each (the seats and their players), then what OK does or, in the
      cursor layout, the choice under the cursor;
    - ``help``: ``title`` and ``lines``: the keys;
    - ``notice``: ``title`` and ``lines``: something the table must know (the
      journal was moved aside, the display came back...);
    - ``rules``: ``title`` and ``lines``: the house rules in force;
    - ``hands``: ``title`` and ``lines``: the last hand and the hands so far.

    The text pages (``help``, ``notice``, ``rules``, ``hands``) show every line
    whole, four to a screen, over what OK does (``ok_hint``): ``cursor`` is
    the screen shown (from 0).  A menu shows the score, and ``trump`` when
    given (the claim keeps them in view).

    ``message`` is shown over any layout for a moment: a rejection in words
    ("Ragnar sits out: Anna went alone") when ``message_is_error``, else info.
    """

    kind: ScreenKind = "table"
    score_ns: int = 0
    score_ew: int = 0
    target: int = 10
    hand: int | None = None
    """Hand number in the game (from 1), None before the first game."""
    dealer: str | None = None
    leader: str | None = None
    trump: str | None = None
    """Trump suit letter ``S H D C`` once made."""
    maker: str | None = None
    alone: bool = False
    upcard: str | None = None
    """Upcard suit letter while bidding, when entered."""
    tricks_ns: int = 0
    tricks_ew: int = 0
    prompt: str = ""
    title: str = ""
    lines: tuple[str, ...] = ()
    choices: tuple[Choice, ...] = ()
    cursor: int = 0
    message: str | None = None
    message_is_error: bool = True
    flags: tuple[str, ...] = ()
    """Small status marks for the corner, e.g. ``("serial",)``."""
    ok_hint: str = ""
    """What OK does now, in words ("OK: South passes"); every step says it."""
    bidding: str = ""
    """The bidding as it stands, while bidding ("Round 2 · passed: Anna, Ragnar ·
    ♥ turned down")."""
    last_hand: str = ""
    """The last hand's result, until the next hand's first entry ("Last hand:
    Anna euchred, EW +2")."""
    house_rules: bool = False
    """The rules in force are not the standard profile (a marker on the table)."""
    lone_defender: str | None = None
    """The name of the player defending alone, when one does."""
    names: tuple[str, ...] = ()
    """The players' names in the texts above: the screen may shorten them, all
    alike (:func:`firmware.screens.short_name`); nothing else is shortened."""


def suit_symbol(letter: str | None) -> str:
    """``"♥"`` for a view's suit letter ``"H"`` ("" for None, the text itself if
    it is no suit)."""
    if not letter:
        return ""
    try:
        return Suit.from_str(letter.upper()).symbol
    except ValueError:
        return letter


def suit_word(letter: str | None) -> str:
    """``"hearts"`` for a view's suit letter ``"H"`` ("" if it is no suit)."""
    try:
        return Suit.from_str((letter or "").upper()).word
    except ValueError:
        return ""
