"""The entry flow: turns button presses into game entries.

At every moment the flow offers a :class:`Step`: a question and the options
that are legal now (built from ``Game.legal_entries()``), each with the button
that picks it directly.  Two layouts use the same steps:

- ``seats`` (the default): a button per seat and per suit, ALONE, UNDO, OK.
  A button picks the option bound to it; OK picks the step's ``ok`` option.
- ``cursor``: PREV, NEXT, OK, UNDO (or a rotary encoder for PREV/NEXT).
  PREV/NEXT move a cursor over the options; OK picks the one under it.

The flow holds only a half-made selection (maker seat, suit, alone, a menu):
:class:`FlowState`, saved with the game so a reboot resumes it.  The rules
themselves are the engine's: an option that the engine would refuse is never
offered, and a direct button the engine refuses gets the engine's reason.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Literal

from euchre_core import SEATS, Game, Seat, Suit
from euchre_core.events import (
    Call,
    Defend,
    Entry,
    Make,
    NewGame,
    Order,
    Pass,
    Renege,
    Trick,
    Tricks,
    Upcard,
)

from .buttons import BUTTON_BY_SUIT, MENU_KEYS, SUIT_BY_BUTTON, seat_of

ActionKind = Literal["entry", "seat", "suit", "alone", "mode", "random", "confirm", "none"]


@dataclass(frozen=True)
class Action:
    """What picking an option does."""

    kind: ActionKind
    entry: Entry | None = None
    value: str = ""


@dataclass(frozen=True)
class Option:
    label: str
    action: Action
    key: str = ""
    """The button that picks it in the seats layout ("" = cursor only)."""


@dataclass(frozen=True)
class Step:
    name: str
    """``game``, ``maker``, ``trump``, ``confirm``, ``defend``, ``trick``,
    ``claim``, ``renege`` or ``cards``."""
    question: str
    options: tuple[Option, ...]
    ok: Action | None = None
    """What OK does in the seats layout (None: OK does nothing here)."""
    menu: bool = False
    """Draw the options as a list (a menu) rather than over the table."""
    hint: str = ""
    """The keys to press, for the seats layout."""


@dataclass
class FlowState:
    """A half-made selection; JSON-serialisable (saved with the game)."""

    seat: str | None = None
    suit: str | None = None
    alone: bool = False
    mode: str = ""
    """``claim``, ``renege`` or ``no-defend`` (the table declined to defend alone)."""
    cursor: int = 0
    entries: int = field(default=-1)
    """``len(game.entries)`` when this state was made; stale state is dropped."""

    def dumps(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def loads(cls, text: str) -> FlowState:
        """The saved state, or an empty one when it is damaged or unknown."""
        try:
            data = json.loads(text) if text else {}
            state = cls(**data)
        except (ValueError, TypeError):
            return cls()
        valid = (
            state.seat in (None, "N", "E", "S", "W")
            and state.suit in (None, "S", "H", "D", "C")
            and isinstance(state.alone, bool)
            and state.mode in ("", "claim", "renege", "no-defend")
            and type(state.cursor) is int and state.cursor >= 0
            and type(state.entries) is int
        )
        return state if valid else cls()

    @property
    def is_empty(self) -> bool:
        return self.seat is None and self.suit is None and not self.alone and not self.mode


def _seat(text: str | None) -> Seat | None:
    return None if text is None else Seat.from_str(text)


def build_step(game: Game, state: FlowState) -> Step:
    """The question and options for the game's current state."""
    kind = game.expected_kind
    legal = game.legal_entries()
    if kind == "game":
        return _game_step(game)
    if kind == "bid":
        return _bid_step(game, state, legal)
    if kind == "trick":
        defend = [entry for entry in legal if isinstance(entry, Defend)]
        if defend and state.mode != "no-defend":
            return _defend_step(game, defend)
        if state.mode == "claim":
            return _claim_step(legal)
        if state.mode == "renege":
            return _renege_step(game, legal)
        return _trick_step(game, legal)
    # Card-level hands (a deal, plays) come from the serial link or a loaded log.
    return Step("cards", f"Card play: {game.expected}, over the serial link", (),
                hint="UNDO steps back")


def _game_step(game: Game) -> Step:
    options = [Option("Random dealer", Action("random"), "OK")]
    options += [
        Option(f"{game.name(seat)} deals", Action("entry", NewGame(seat)), str(seat))
        for seat in SEATS
    ]
    question = "New game: who deals first?"
    return Step("game", question, tuple(options), ok=Action("random"),
                hint="seat, or OK: random")


def _bid_step(game: Game, state: FlowState, legal: list[Entry]) -> Step:
    seat = _seat(state.seat)
    bids = [entry for entry in legal if isinstance(entry, (Order, Call, Make, Pass))]
    if seat is None:
        options = []
        for candidate in SEATS:
            if any(bid.seat is candidate for bid in bids):
                options.append(
                    Option(game.name(candidate), Action("seat", value=str(candidate)),
                           str(candidate))
                )
        for entry in legal:
            if isinstance(entry, Upcard) and entry.card is None:
                options.append(
                    Option(f"Upcard {entry.suit.symbol}", Action("entry", entry),
                           BUTTON_BY_SUIT[entry.suit])
                )
        hand = game.hand
        if hand.passes:
            question = f"{game.name(hand.bid_turn)} to bid"
        else:
            question = "Who made trump?"
        hint = "maker's seat" if hand.upcard_suit or hand.passes else "upcard suit, or maker"
        return Step("maker", question, tuple(options), hint=hint)
    name = game.name(seat)
    if state.suit is None:
        suits: list[Suit] = []
        for entry in bids:
            if entry.seat is not seat or isinstance(entry, Pass):
                continue
            suit = entry.suit if isinstance(entry, (Call, Make)) else game.hand.upcard_suit
            if suit is not None and suit not in suits:
                suits.append(suit)
        options = [
            Option(f"{name}: {suit.symbol} {suit.word}", Action("suit", value=suit.value),
                   BUTTON_BY_SUIT[suit])
            for suit in Suit if suit in suits
        ]
        if Pass(seat) in legal:
            options.append(Option(f"{name} passes", Action("entry", Pass(seat)), "OK"))
        alone_word = " alone" if state.alone else ""
        # OK always means "pass": when the rules forbid it, the engine says why
        # ("stick the dealer: Anna must name a suit").
        return Step("trump", f"{name}{alone_word}: which trump?", tuple(options),
                    ok=Action("entry", Pass(seat)), hint="suit; OK: pass")
    suit = Suit.from_str(state.suit)
    options = []
    for alone in (False, True):
        entry = bid_entry(game, seat, suit, alone)
        if game.check(entry) is None:
            label = f"{name} {suit.symbol}" + (" alone" if alone else " with partner")
            options.append(Option(label, Action("confirm", entry), "OK" if alone == state.alone
                                  else "ALONE"))
    alone_text = " alone" if state.alone else ""
    return Step(
        "confirm", f"{name} makes {suit.symbol}{alone_text}. OK?", tuple(options),
        ok=Action("confirm", bid_entry(game, seat, suit, state.alone)),
        hint="OK; ALONE toggles",
    )


def bid_entry(game: Game, seat: Seat, suit: Suit, alone: bool) -> Entry:
    """The entry a maker's seat, suit and alone flag stand for: ``order`` when it
    is the upcard's suit, ``call`` when another suit is named against a known
    upcard, ``make`` when the upcard was not entered."""
    upcard = game.hand.upcard_suit
    if upcard is None:
        return Make(seat, suit, alone)
    if suit is upcard:
        return Order(seat, alone)
    return Call(seat, suit, alone)


def _defend_step(game: Game, defend: list[Defend]) -> Step:
    maker = game.hand.maker
    assert maker is not None
    options = [Option("No one: play on", Action("mode", value="no-defend"), "OK")]
    options += [
        Option(f"{game.name(entry.seat)} defends alone", Action("entry", entry), str(entry.seat))
        for entry in defend
    ]
    return Step("defend", f"{game.name(maker)} is alone. Defend alone?", tuple(options),
                ok=Action("mode", value="no-defend"), hint="defender's seat; OK: no")


def _trick_step(game: Game, legal: list[Entry]) -> Step:
    hand = game.hand
    options = [
        Option(f"{game.name(entry.seat)} won", Action("entry", entry), str(entry.seat))
        for entry in legal
        if isinstance(entry, Trick)
    ]
    options.append(Option("Claim: makers took…", Action("mode", value="claim"), "OK"))
    options.append(Option("Renege…", Action("mode", value="renege"), "ALONE"))
    question = f"Trick {len(hand.tricks) + 1}: who won?"
    return Step("trick", question, tuple(options), ok=Action("mode", value="claim"),
                hint="winner; OK: claim; ALONE: renege")


def _claim_step(legal: list[Entry]) -> Step:
    counts = [entry for entry in legal if isinstance(entry, Tricks)]
    options = tuple(
        Option(f"Makers took {entry.count}", Action("entry", entry), MENU_KEYS[index])
        for index, entry in enumerate(counts)
    )
    return Step("claim", "Claim: the makers took", options, menu=True,
                hint="the button by the count; UNDO: back")


def _renege_step(game: Game, legal: list[Entry]) -> Step:
    options = tuple(
        Option(f"{game.name(entry.seat)} reneged", Action("entry", entry), str(entry.seat))
        for entry in legal
        if isinstance(entry, Renege)
    )
    return Step("renege", "Renege: who?", options, hint="seat; UNDO: back")


def direct_action(game: Game, state: FlowState, step: Step, button: str) -> Action | None:
    """What a seats-layout button does now (None: nothing is bound to it).

    Seat and suit buttons stand for the entry they mean even when the rules
    forbid it, so that the engine's reason is shown ("Ragnar sits out: Anna
    went alone"); menus pick their items by the buttons shown beside them.
    """
    if button == "OK":
        return step.ok
    if button == "ALONE":
        for option in step.options:
            if option.key == "ALONE" and option.action.kind == "mode":
                return option.action
        return Action("alone") if step.name in ("trump", "confirm") else None
    if step.menu:
        for option in step.options:
            if option.key == button:
                return option.action
        return None
    seat = seat_of(button)
    suit = SUIT_BY_BUTTON.get(button)
    name = step.name
    if seat is not None:
        if name == "game":
            return Action("entry", NewGame(seat))
        if name in ("maker", "trump", "confirm"):
            return Action("seat", value=str(seat))
        if name == "defend":
            return Action("entry", Defend(seat))
        if name == "renege":
            return Action("entry", Renege(seat))
        if name == "trick":
            return Action("entry", Trick(seat))
    if suit is not None:
        if name in ("maker", "game"):  # after the win the engine says "game over: ..."
            return Action("entry", Upcard(suit))
        if name in ("trump", "confirm"):
            return Action("suit", value=suit.value)
    return None
