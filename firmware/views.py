"""What the referee's state shows now: the :class:`~firmware.view.View` of a
moment, built from the game, the entry flow and what is up over them (a
notice, a page, a message, a hand's result).

``view.py`` is the View itself (plain data), ``screens.py`` draws it; this
module only decides what goes in it.  :meth:`firmware.app.Referee.view` calls
:func:`build_view` with its state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from euchre_core import SEATS, Game, Phase, Rules, Seat, Team
from euchre_core.game import HandResult

from .buttons import ALONE, PAGES, PREV, Layout, help_lines, label
from .flow import FlowState, Option, Step, bidding_words, menu_page
from .summary import (
    describe_result,
    hands_lines,
    last_hand_text,
    play_on_reason,
    result_line,
    rules_lines,
)
from .view import Choice, View

_PAGE_TITLES: Final = {"help": "Help", "rules": "House rules", "hands": "Hands so far",
                        "stats": "Stats"}


def build_view(game: Game, state: FlowState, layout: Layout, step: Callable[[], Step], *,
               message: str | None, message_is_error: bool, flags: tuple[str, ...],
               notice: tuple[str, tuple[str, ...]] | None, page: str | None,
               browsing: bool, result: HandResult | None, page_at: int = 0,
               other_names: tuple[str, ...] = (), stats_lines: tuple[str, ...] = ()) -> View:
    """What the screen shows: ``game`` and the flow's ``state`` in ``layout``,
    with ``step()`` the flow's step now (asked only when the table shows);
    ``message`` the message still up, ``notice`` and ``page`` what is over
    the table, ``browsing`` the seats layout's choice strip open, ``result``
    the hand just ended while its result screen is up; ``page_at`` the
    screen of a long page or notice shown; ``other_names`` the players' names the
    screen may show besides the game's (the games to come, the kept names)."""
    hand = game.hand
    base: dict[str, Any] = {
        "score_ns": game.score[Team.NS],
        "score_ew": game.score[Team.EW],
        "target": game.rules.target,
        "message": message,
        "message_is_error": message_is_error,
        "flags": flags,
        "house_rules": game.rules != Rules(),
        "names": tuple(dict.fromkeys((*game.names.values(), *other_names))),
    }
    if notice is not None:  # any button turns to its next screen, the last's goes back
        shown = View(kind="notice", title=notice[0], lines=notice[1], cursor=page_at,
                     ok_hint="any button: back", **base)
        count = page_screens(shown)
        if page_at + 1 < count:
            shown = shown._replace(ok_hint=f"any button: page {page_at + 2}/{count}")
        return shown
    if page is not None:
        index = PAGES.index(page)
        following = PAGES[index + 1] if index + 1 < len(PAGES) else None
        ok_hint = "OK: back to the table" if following is None else (
            f"OK: {_PAGE_TITLES[following].lower()}")
        if page == "rules":
            page_lines = rules_lines(game.rules)
        elif page == "hands":
            page_lines = hands_lines(game)
        elif page == "stats":  # the players' statistics, made by the app (firmware.stats)
            page_lines = stats_lines
        else:
            page_lines = help_lines(layout)
        shown = View(kind=page, title=_PAGE_TITLES[page],  # type: ignore[arg-type]
                     lines=page_lines, cursor=page_at, ok_hint=ok_hint, **base)
        count = page_screens(shown)
        if page_at + 1 < count:
            shown = shown._replace(ok_hint=f"OK: page {page_at + 2} of {count}")
        return shown
    now_step = step()
    cursor = now_step.cursor_index(state.cursor)
    ok_hint = ok_words(now_step, layout, browsing, cursor)
    if now_step.name == "new-game":  # its own screen: the game it starts, seat by seat
        return View(kind="confirm", title=now_step.question, lines=now_step.details,
                    choices=tuple(Choice(o.label) for o in now_step.options)
                    if layout == "cursor" else (),
                    cursor=cursor, ok_hint=ok_hint, **base)
    if game.phase is Phase.GAME_OVER and game.winner is not None and not now_step.menu:
        winner = game.winner
        title = f"{winner} win {game.score[winner]}-{game.score[winner.other]}"
        names = " & ".join(game.name(seat) for seat in SEATS if seat.team is winner)
        if layout == "cursor":  # the banner as in the seats layout, the way on under it
            return View(kind="winner", title=title, lines=(names, "New game: who deals?"),
                        choices=tuple(Choice(o.label) for o in now_step.options),
                        cursor=cursor, ok_hint=ok_hint, **base)
        lines: tuple[str, ...] = (names,)
        if game.results:
            lines += ("Last hand: " + result_line(game, game.results[-1]),)
        lines += (ok_hint,)
        return View(
            kind="winner", title=title, lines=lines, ok_hint=ok_hint,
            **base,
        )
    if result is not None:
        lines = describe_result(game, result)
        reason = play_on_reason(game)
        return View(kind="result", title=f"Hand {result.number}",
                    lines=lines + (reason,) if reason else lines,
                    ok_hint="any button: back", **base)
    choices: tuple[Choice, ...] = ()
    if layout == "cursor" or browsing or now_step.menu:
        choices = tuple(Choice(o.label, o.key if layout == "seats" else "")
                        for o in now_step.options)
    if now_step.menu:  # the claim and set-up menus: the score stays in view, and trump
        made = game.phase is Phase.IN_GAME and hand.trump is not None
        if layout == "seats":
            choices, cursor = _menu_page(choices, cursor)
        return View(kind="menu", title=now_step.question, choices=choices,
                    cursor=cursor, ok_hint=ok_hint,
                    hand=hand.number if made else None,
                    trump=str(hand.trump) if made else None, **base)
    in_game = game.phase is Phase.IN_GAME
    prompt = now_step.question
    if now_step.name == "game" and game.phase is Phase.SETUP:  # a fresh box: say the set-up
        prompt = (f"Who deals first?\n{label(PREV)} for names, rules" if layout == "cursor"
                  else f"Tap the first dealer\n{label(ALONE)}: names, rules")
    elif now_step.name == "game" and layout == "seats":
        prompt += " Tap a seat."
    selected = ""
    if state.seat is not None and hand.maker is None:
        selected = game.name(Seat.from_str(state.seat))
    return View(
        kind="table",
        hand=hand.number if in_game else None,
        dealer=game.name(hand.dealer) if in_game else None,
        leader=game.name(hand.leader) if in_game else None,
        trump=str(hand.trump) if in_game and hand.trump is not None else None,
        maker=game.name(hand.maker) if in_game and hand.maker is not None else selected
        or None,
        alone=hand.alone if hand.maker is not None else state.alone,
        upcard=str(hand.upcard_suit) if in_game and hand.upcard_suit is not None else None,
        tricks_ns=hand.tricks_of(Team.NS) if in_game else 0,
        tricks_ew=hand.tricks_of(Team.EW) if in_game else 0,
        prompt=prompt,
        choices=choices,
        cursor=cursor if choices else 0,
        ok_hint=ok_hint,
        bidding=bidding_words(game, passes=state.seat is None) if in_game else "",
        last_hand=last_hand_text(game) if in_game else "",
        lone_defender=game.name(hand.lone_defender)
        if in_game and hand.lone_defender is not None else None,
        **base,
    )


def page_screens(view: View) -> int:
    """How many screens a text page (or notice) takes, as the screens page it."""
    from .fonts import load_fonts
    from .screens import pages

    return len(pages(view, load_fonts()))


MORE: Final = "More…"
"""The last row of a seats-layout menu page when there are more (ALONE)."""


def _menu_page(choices: tuple[Choice, ...], cursor: int) -> tuple[tuple[Choice, ...], int]:
    """The seats layout's page of a menu (:func:`~firmware.flow.menu_page`):
    its options, a last row ``More… 1/3`` by ALONE when there are more, and
    the cursor on the page."""
    shown = menu_page(len(choices), cursor)
    if len(shown) == len(choices):
        return choices, cursor
    per_page = len(menu_page(len(choices), 0))
    pages = -(-len(choices) // per_page)
    more = Choice(f"{MORE} {shown.start // per_page + 1}/{pages}", "ALONE")
    return (*choices[shown.start:shown.stop], more), cursor - shown.start


def ok_words(step: Step, layout: Layout, browsing: bool, cursor: int) -> str:
    """What OK does now, in words (``OK: South passes``); ``cursor``: the
    option under the cursor."""
    if layout == "cursor" or browsing:
        if not step.options:
            return f"OK does nothing {step.doing}"
        return "OK: " + _option_words(step.options[cursor])
    if step.ok is None:
        return f"OK does nothing {step.doing}"
    return f"OK: {step.ok_words}"


def _option_words(option: Option) -> str:
    """A cursor option as what OK does with it (``Ragnar bids``, ``Anna won``)."""
    if option.action.kind == "seat":
        return f"{option.label} bids"
    return option.label
