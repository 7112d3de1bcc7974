"""The entry flow: turns button presses into game entries.

At every moment the flow offers a :class:`Step`: a question and the options
that are legal now (built from ``Game.legal_entries()``), each with the button
that picks it directly.  Two layouts use the same steps:

- ``seats`` (the default): a button per seat and per suit, ALONE, UNDO, OK.
  A button picks the option bound to it; OK picks the step's ``ok`` option.
- ``cursor``: PREV, NEXT, OK, UNDO (or a rotary encoder for PREV/NEXT).
  PREV/NEXT move a cursor over the options; OK picks the one under it.  The
  cursor starts on the likeliest option (:attr:`Step.start`) and the next
  likeliest are one or two presses away (:func:`around`): the pass of the
  bidder whose turn it is, or at a hand's start what the table entered first
  last hand (:func:`bidding_entered`); the upcard's suit in round 1, next
  in round 2; the likeliest trick winner (:func:`likeliest_winners`).

Every step says what OK does now (:attr:`Step.ok_words`) and, for a button
that does nothing in it, what the table can do instead (:attr:`Step.instead`),
in the layout's words: the cursor layout's never name a button it lacks.
The bidding round is the engine's (:attr:`euchre_core.Game.bidding_round`).

The flow holds only a half-made selection (maker seat, suit, alone, a menu):
:class:`FlowState`, saved with the game so a reboot resumes it.  The rules
themselves are the engine's: an option that the engine would refuse is never
offered, and a direct button the engine refuses gets the engine's reason.
"""

from __future__ import annotations

import json
from itertools import zip_longest
from typing import Any, Final, Literal, NamedTuple

from euchre_core import SEATS, Game, Rules, Seat, Suit, parse_event
from euchre_core.events import (
    Call,
    Defend,
    Entry,
    LogSyntaxError,
    Make,
    Misdeal,
    NewGame,
    Order,
    Pass,
    Renege,
    Trick,
    Tricks,
    Upcard,
    bid_for,
)
from euchre_core.value import Record

from .buttons import BUTTON_BY_SUIT, MENU_KEYS, SUIT_BUTTONS, SUIT_BY_BUTTON, Layout, seat_of
from .view import MENU_ROWS

ActionKind = Literal[
    "entry", "seat", "suit", "alone", "mode", "random", "confirm", "new-game", "page",
    "setup-seat", "name", "rules", "cursor", "start-score", "none",
]


class Action(NamedTuple):
    """What picking an option does.

    ``new-game`` (after a win) holds the dealer picked, ``value`` a seat or ""
    for a random one, until OK confirms; ``page`` opens a page (``help``,
    ``rules``, ``hands``); ``setup-seat``, ``name`` and ``rules`` are the set-up
    menu's (a seat whose name to choose, a kept name, a rules profile);
    ``cursor`` moves the cursor to option ``value`` (a seats-layout menu's
    page turned, so that what is picked has been seen: :func:`menu_page`)."""

    kind: ActionKind
    entry: Entry | None = None
    value: str = ""


class Option(NamedTuple):
    label: str
    action: Action
    key: str = ""
    """The button that picks it in the seats layout ("" = cursor only)."""


class Step(NamedTuple):
    name: str
    """``game``, ``new-game``, ``maker``, ``trump``, ``confirm``, ``defend``,
    ``trick``, ``claim``, ``renege``, ``cards``, or the set-up menu's ``setup``,
    ``setup-names``, ``setup-name``, ``setup-rules``."""
    question: str
    options: tuple[Option, ...]
    ok: Action | None = None
    """What OK does in the seats layout (None: OK does nothing here)."""
    menu: bool = False
    """Draw the options as a list (a menu) rather than over the table."""
    ok_words: str = ""
    """What ``ok`` does, in words ("South passes"); "" when ``ok`` is None."""
    instead: str = ""
    """What the table can do at this step, in the layout's words ("tap the
    winner's seat, OK to claim the rest, ALONE for a renege")."""
    doing: str = ""
    """The step, as said of a button that does nothing in it ("while the
    tricks are entered")."""
    start: int = 0
    """The likeliest option: where the cursor starts."""
    details: tuple[str, ...] = ()
    """What a confirmation would do, a line each (the new game's seats and
    players, who deals), shown whole on a screen of its own."""

    def cursor_index(self, cursor: int | None) -> int:
        """The option under the cursor: ``cursor`` (a :attr:`FlowState.cursor`;
        None: not moved, so :attr:`start`), within the options."""
        chosen = self.start if cursor is None else cursor
        return min(chosen, max(len(self.options) - 1, 0))


class Setup(NamedTuple):
    """What the set-up menu offers and shows: the next game's names and rules,
    and the names the box has kept."""

    names: dict[Seat, str]
    rules: Rules
    kept_names: tuple[str, ...] = ()


RULE_PROFILES: dict[str, Rules] = {
    "Standard": Rules(),
    "Short game: to 5": Rules(target=5),
    "To 7": Rules(target=7),
    "To 11": Rules(target=11),
    "Win by two": Rules(win_by_two=True),
    "Dealer not stuck": Rules(stick_the_dealer=False),
    "Defend alone": Rules(defend_alone=True),
    "Canadian loner": Rules(canadian_loner=True),
}
"""The house-rules profiles the set-up menu offers (SPEC's table of variants;
any other mix comes from the config file or the serial link)."""

MODES: Final = ("", "claim", "renege", "no-defend", "new-game", "setup", "setup-names",
                "setup-name", "setup-rules", "setup-score", "misdeal")
"""FlowState.mode values: a menu open, a choice the table made, a pending new game."""


HELP_OPTION: Final = "Help, rules, hands…"
"""The cursor layout's last option at every step: the help pages."""
SETUP_OPTION: Final = "Names and rules…"
"""The game step's option that opens the set-up menu."""


def profile_name(rules: Rules) -> str:
    """The profile's name, or ``Custom`` for a mix set elsewhere."""
    for name, profile in RULE_PROFILES.items():
        if profile == rules:
            return name
    return "Custom"


class FlowState(Record):
    """A half-made selection; JSON-serialisable (saved with the game).

    ``mode`` is one of :data:`MODES`: ``claim``, ``renege`` or ``no-defend``
    (the table declined to defend alone); ``new-game`` (after a win, a new game
    waits for OK; ``seat`` its dealer, None for random); the set-up menu's
    pages.  ``cursor`` is the cursor's option (None: not moved, on the step's
    likeliest option).  ``entries`` is ``len(game.entries)`` when this state
    was made; stale state is dropped.  ``staged`` is the ``game`` line of a
    new game confirmed after a win and not yet stored: it is stored as a game
    of its own with its first real entry, and till then UNDO goes back to the
    finished game (the state is saved with the finished game; ``entries``
    counts the new game's).
    """

    __slots__ = ("seat", "suit", "alone", "mode", "cursor", "entries", "staged", "start")
    _fields = __slots__

    def __init__(self, seat: str | None = None, suit: str | None = None, alone: bool = False,
                 mode: str = "", cursor: int | None = None, entries: int = -1,
                 staged: str | None = None, start: str | None = None) -> None:
        self.seat = seat
        self.suit = suit
        self.alone = alone
        self.mode = mode
        self.cursor = cursor
        self.entries = entries
        self.staged = staged
        self.start = start
        """The set-up menu's game from a score as it stands: its ``game`` line
        (``game dealer=W NS=6 EW=4``), until the table starts it."""

    def as_dict(self) -> dict[str, Any]:
        """The fields by name, in order (what :meth:`dumps` writes)."""
        return {name: getattr(self, name) for name in self._fields}

    def copy(self) -> FlowState:
        return FlowState(**self.as_dict())

    def dumps(self) -> str:
        return json.dumps(self.as_dict(), ensure_ascii=False)

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
            and state.mode in MODES
            and (state.cursor is None or type(state.cursor) is int and state.cursor >= 0)
            and type(state.entries) is int
            and (state.staged is None or isinstance(state.staged, str))
            and (state.start is None or start_entry(state.start) is not None)
        )
        return state if valid else cls()

    @property
    def is_empty(self) -> bool:
        return self.seat is None and self.suit is None and not self.alone and not self.mode


def _seat(text: str | None) -> Seat | None:
    return None if text is None else Seat.from_str(text)


def bidding_words(game: Game, passes: bool = True) -> str:
    """The bidding as it stands, when the table enters it: ``Round 2 · not ♥ ·
    2 passed`` ("" before any upcard or pass); ``passes``: with the passes
    of this round (counted: they go in turn from the dealer's left, and the
    prompt names whose turn it is)."""
    hand = game.hand
    if game.expected_kind != "bid" or (hand.upcard_suit is None and not hand.passes):
        return ""
    number = game.bidding_round or 1
    parts = [f"Round {number}"]
    if hand.upcard_suit is not None:
        symbol = hand.upcard_suit.symbol
        parts.append(f"not {symbol}" if number == 2 else f"{symbol} up")
    passed = hand.passes - (4 if number == 2 else 0)
    if passed and passes:
        parts.append(f"{passed} passed")
    return " · ".join(parts)


def _pick(layout: Layout, seats: str, cursor: str) -> str:
    return cursor if layout == "cursor" else seats


def build_step(game: Game, state: FlowState, layout: Layout = "seats",
               setup: Setup | None = None) -> Step:
    """The question and options for the game's current state (in ``layout``'s
    words; the cursor layout adds a last option that opens the help pages)."""
    step = _build_step(game, state, layout, setup)
    if layout == "cursor" and step.options:
        options = [*step.options, Option(HELP_OPTION, Action("page", value="help"))]
        if step.name == "game":  # the set-up last: one PREV from the first choice
            options.sort(key=lambda option: option.label == SETUP_OPTION)
        step = step._replace(options=tuple(options))
    return step


def _build_step(game: Game, state: FlowState, layout: Layout, setup: Setup | None) -> Step:
    kind = game.expected_kind
    if state.mode.startswith("setup") and kind == "game" and setup is not None:
        return _setup_step(state, layout, setup)
    legal = game.legal_entries()
    if kind == "game":
        return _game_step(game, state, layout, setup)
    if kind == "bid":
        if state.mode == "misdeal" and Misdeal() in legal:
            return _misdeal_step(game, layout)
        return _bid_step(game, state, legal, layout)
    if kind == "trick":
        defend = [entry for entry in legal if isinstance(entry, Defend)]
        if defend and not state.mode:  # any mode chosen (no-defend, claim...) declined it
            return _defend_step(game, defend, layout)
        if state.mode == "claim":
            return _claim_step(legal, layout)
        if state.mode == "renege":
            return _renege_step(game, legal, layout)
        return _trick_step(game, legal, layout)
    # Card-level hands (a deal, plays) come from the serial link or a loaded log.
    return Step("cards", f"Card play: {game.expected}, over the serial link", (),
                instead="enter the cards over the serial link, or UNDO to step back",
                doing="while the cards are entered over the serial link")


def _game_step(game: Game, state: FlowState, layout: Layout, coming: Setup | None) -> Step:
    """The first dealer; after a win a new game, and its confirmation
    (naming the players of ``coming``, the games to come, when given)."""
    setup = Option(SETUP_OPTION, Action("mode", value="setup"), "ALONE")
    if game.winner is None:
        options = [Option("Random dealer", Action("random"), "OK")]
        options += [
            Option(f"{game.name(seat)} deals", Action("entry", NewGame(seat)), str(seat))
            for seat in SEATS
        ]
        return Step(
            "game", "New game: who deals first?", (*options, setup), ok=Action("random"),
            ok_words="a random dealer",
            instead=_pick(layout, "tap the first dealer's seat, OK for a random one, "
                          "ALONE to set up the game",
                          "choose the first dealer, or set up players and rules"),
            doing="before the first deal")
    if state.mode != "new-game":
        options = [Option("Random dealer", Action("new-game"), "OK")]
        options += [Option(f"{game.name(seat)} deals",
                           Action("new-game", value=str(seat)), str(seat)) for seat in SEATS]
        return Step(
            "game", "New game: who deals first?", (*options, setup), ok=Action("new-game"),
            ok_words="a new game",
            instead=_pick(layout, "tap the next dealer's seat or OK for a new game, "
                          "UNDO to take back the last entry",
                          "choose a new game, or UNDO to take back the last entry"),
            doing="after the win")
    dealer = _seat(state.seat)
    names = coming.names if coming is not None else game.names
    if dealer is None:
        start, words = Action("random"), "new game, random dealer"
    else:
        start, words = Action("entry", NewGame(dealer)), f"new game, {names[dealer]} deals"
    options = [Option("Start the game", start, "OK"),
               Option("Back to last game", Action("mode", value=""), "UNDO")]
    details = tuple(f"{seat} {names[seat]}" + (" deals" if seat is dealer else "")
                    for seat in SEATS)
    if layout == "seats":  # (the cursor layout's choice says it)
        details += ("OK: start, UNDO: back",)
    return Step(
        "new-game", "New game?", tuple(options), ok=start, ok_words=words, details=details,
        instead=_pick(layout, "OK to start it, a seat to change the dealer, UNDO to go back",
                      "choose to start it, or go back"),
        doing="while a new game waits for OK")


def start_entry(line: str | None) -> NewGame | None:
    """The game from a score that :attr:`FlowState.start` holds (None: none, or
    not a ``game`` line)."""
    if line is None:
        return None
    try:
        entry = parse_event(line)
    except LogSyntaxError:
        return None
    return entry if isinstance(entry, NewGame) else None


def next_start(state: FlowState, rules: Rules, what: str) -> str:
    """The set-up menu's game from a score after a press on its ``NS`` or ``EW``
    line (a point more, back to 0 after the target's last) or its ``dealer``
    line (the next seat clockwise): its ``game`` line."""
    entry = start_entry(state.start) or NewGame(SEATS[0])
    ns, ew, dealer = entry.ns, entry.ew, entry.dealer
    if what == "NS":
        ns = (ns + 1) % rules.target
    elif what == "EW":
        ew = (ew + 1) % rules.target
    else:
        dealer = dealer.left
    return NewGame(dealer, ns, ew).line()


def _start_step(state: FlowState, layout: Layout, setup: Setup) -> Step:
    """Start from a score: NS's points, EW's, the dealer, then start the game
    (a table moving from a paper score sheet, or from another box)."""
    entry = start_entry(state.start) or NewGame(SEATS[0])
    dealer = setup.names[entry.dealer]
    words = f"NS {entry.ns}, EW {entry.ew}, {dealer} deals"
    start = Action("entry", entry)
    options = (
        Option(f"NS points: {entry.ns}", Action("start-score", value="NS"), "N"),
        Option(f"EW points: {entry.ew}", Action("start-score", value="EW"), "E"),
        Option(f"Dealer: {dealer}", Action("start-score", value="dealer"), "W"),
        Option("Start the game", start, "OK"),  # (the row says what OK does)
    )
    return Step("setup-score", "From a score", options, ok=start, menu=True,
                ok_words=f"start at {words}", doing="in the set-up menu",
                instead=_pick(layout, "N or E adds a point (back to 0 after the last), "
                              "W: next dealer, OK starts, UNDO: back",
                              "choose a side to add a point, the dealer, or start"))


def _misdeal_step(game: Game, layout: Layout) -> Step:
    """A misdeal, asked before it is entered: the same dealer deals again."""
    dealer = game.dealer
    assert dealer is not None
    words = f"misdeal, {game.name(dealer)} deals again"
    misdeal = Action("entry", Misdeal())
    options = (Option("Yes, deal again", misdeal, "OK"),
               Option("No misdeal: back", Action("mode", value=""), "UNDO"))
    return Step("misdeal", "Misdeal?", options, ok=misdeal, menu=True, ok_words=words,
                instead=_pick(layout, "OK: the same dealer deals again; UNDO to go back",
                              "choose the misdeal, or back"),
                doing="while a misdeal is asked",
                start=1 if layout == "cursor" else 0)  # a quick second OK never confirms it


def _setup_step(state: FlowState, layout: Layout, setup: Setup) -> Step:
    done = _pick(layout, "OK when done, UNDO to go back", "choose, or Done")
    if state.mode == "setup-score":
        return _start_step(state, layout, setup)
    if state.mode == "setup-names":
        options = [Option(f"{seat}: {setup.names[seat]}", Action("setup-seat", value=str(seat)),
                          str(seat)) for seat in SEATS]
        if layout == "cursor":  # (the seats layout's OK does it: the four seats on one page)
            options.append(Option("Done", Action("mode", value="setup")))
        return Step("setup-names", _pick(layout, "Whose name? OK: done", "Whose name?"),
                    tuple(options), ok=Action("mode", value="setup"),
                    menu=True, ok_words="done",  # (the seats layout's title says it)
                    instead=_pick(layout, "tap a seat to choose its player; " + done, done),
                    doing="in the set-up menu")
    if state.mode == "setup-name" and state.seat is not None:
        seat = Seat.from_str(state.seat)
        # The players seated elsewhere first, each by its seat's button (a swap:
        # the names move with them; three rows, the first page), then the names
        # the box has kept that nobody has now, by the suit buttons.
        options = [Option(f"{setup.names[other]} (swap)", Action("name", value=setup.names[other]),
                          str(other)) for other in SEATS if other is not seat]
        kept = [name for name in setup.kept_names if name not in setup.names.values()]
        options += [Option(name, Action("name", value=name), key)
                    for name, key in zip(kept, SUIT_BUTTONS)]
        back = Action("mode", value="setup-names")
        if layout == "cursor":  # (the seats layout's OK does it)
            options.append(Option(f"Keep {setup.names[seat]}", back))
        return Step("setup-name", f"Who sits at {seat}?", tuple(options), ok=back,
                    menu=True, ok_words=f"keep {setup.names[seat]}",
                    instead=_pick(layout, "tap the button by a name; " + done, done),
                    doing="in the set-up menu")
    if state.mode == "setup-rules":
        options = [Option(name, Action("rules", value=name), MENU_KEYS[index])
                   for index, name in enumerate(RULE_PROFILES)]
        current = profile_name(setup.rules)
        names = list(RULE_PROFILES)
        return Step("setup-rules", "House rules", tuple(options), ok=Action("mode", value="setup"),
                    menu=True, ok_words="keep",  # ("House rules  OK: keep": the bar's room)
                    instead=_pick(layout, "tap the button by a profile; " + done, done),
                    doing="in the set-up menu",
                    start=names.index(current) if current in names else 0)
    options = [
        Option("Players…", Action("mode", value="setup-names"), "N"),
        Option("House rules…", Action("mode", value="setup-rules"), "E"),
        Option("Done", Action("mode", value=""), "OK"),  # (the row says what OK does)
        Option("From a score…", Action("mode", value="setup-score"), "W"),
    ]
    return Step("setup", "Set up a game", tuple(options), ok=Action("mode", value=""),
                menu=True, ok_words="done", doing="in the set-up menu",
                instead=_pick(layout, "tap the button by players or rules; " + done, done))


def _bid_step(game: Game, state: FlowState, legal: list[Entry], layout: Layout) -> Step:
    seat = _seat(state.seat)
    hand = game.hand
    bids = [entry for entry in legal if isinstance(entry, (Order, Call, Make, Pass))]
    entry: Entry
    if seat is None:
        turn = hand.bid_turn
        seats = [Option(game.name(candidate), Action("seat", value=str(candidate)), str(candidate))
                 for candidate in clockwise(turn) if any(bid.seat is candidate for bid in bids)]
        upcards = [Option(f"Upcard {entry.suit.symbol}", Action("entry", entry),
                          BUTTON_BY_SUIT[entry.suit])
                   for entry in legal if isinstance(entry, Upcard) and entry.card is None]
        ok = Action("entry", Pass(turn)) if Pass(turn) in legal else None
        passes = [Option(f"{game.name(turn)} passes", ok, "OK")] if ok else []
        bidders, start = around(_likeliest_bids(game, seats, upcards, passes))
        if Misdeal() in legal:  # ALONE (or the cursor's last but help) asks first
            bidders = (*bidders, Option("Misdeal…", Action("mode", value="misdeal"), "ALONE"))
        if hand.passes:
            question = f"{game.name(turn)} to bid"
        else:
            question = "Who made trump?"
        upcard = "" if hand.upcard_suit or hand.passes else " or the upcard's suit"
        stuck = game.check(Pass(turn)) if ok is None and hand.passes else None
        said = f"{stuck}; " if stuck else ""  # stick the dealer: Anna must name a suit
        if stuck and stuck.startswith("stick the dealer"):
            question = f"{game.name(turn)} must name a suit"
        return Step(
            "maker", question, bidders, ok=ok,
            ok_words=f"{game.name(turn)} passes" if ok else "",
            instead=_pick(layout, f"{said}tap the maker's seat{upcard}",
                          f"{said}choose the maker{upcard}"),
            doing="now" if stuck else "before the maker is picked",  # (stuck: the bidding kept)
            start=start)
    name = game.name(seat)
    if state.suit is None:
        suits: list[Suit] = []
        for entry in bids:
            if entry.seat is not seat or isinstance(entry, Pass):
                continue
            suit = entry.suit if isinstance(entry, (Call, Make)) else hand.upcard_suit
            if suit is not None and suit not in suits:
                suits.append(suit)
        start = 1 if len(suits) > 2 else 0  # amid the suits: none is likelier
        if layout == "cursor":  # a suit is the call: with partner, or alone
            ranked = [
                Option(f"{name}: {suit.symbol}" + (" alone" if alone else ""),
                       Action("confirm", call))
                for alone in (False, True) for suit in _likeliest_suits(hand.upcard_suit, suits)
                if game.check(call := bid_entry(game, seat, suit, alone)) is None
            ]
            if Pass(seat) in legal:
                ranked.append(Option(f"{name} passes", Action("entry", Pass(seat))))
            calls, start = around(ranked)
            options = list(calls)
        else:
            options = [
                Option(f"{name}: {suit.symbol}", Action("suit", value=suit.value),
                       BUTTON_BY_SUIT[suit])
                for suit in Suit if suit in suits
            ]
        passing = Pass(seat) in legal
        if passing and layout != "cursor":
            options.append(Option(f"{name} passes", Action("entry", Pass(seat)), "OK"))
        return Step(  # (the line above the prompt says who, and alone)
            "trump", "Which trump?", tuple(options),
            ok=Action("entry", Pass(seat)) if passing else None,
            ok_words=f"{name} passes" if passing else "",
            instead=_pick(layout, "tap a suit, ALONE to go alone, UNDO for another seat",
                          f"choose {name}'s trump suit"),
            doing="while trump is picked", start=start)
    suit = Suit.from_str(state.suit)
    options = []
    for alone in (False, True):
        entry = bid_entry(game, seat, suit, alone)
        if game.check(entry) is None:
            label = f"{name}: {suit.symbol}" + (" alone" if alone else "")
            options.append(Option(label, Action("confirm", entry), "OK" if alone == state.alone
                                  else "ALONE"))
    alone_text = " alone" if state.alone else ""
    return Step(
        "confirm", "Is that the call?", tuple(options),  # (OK's words say it)
        ok=Action("confirm", bid_entry(game, seat, suit, state.alone)),
        ok_words=f"{name} makes {suit.symbol}{alone_text}",
        instead=_pick(layout, "OK to confirm, ALONE to toggle alone, UNDO to start again",
                      "choose with partner or alone"),
        doing="while the call is confirmed",
        start=next((index for index, option in enumerate(options)
                    if option.label.endswith(" alone") == state.alone), 0))


def around(ranked: list[Option]) -> tuple[tuple[Option, ...], int]:
    """Options ranked likeliest first, laid out for a cursor that goes round:
    the likeliest where the cursor starts, the next ones alternately one
    after it, one before, two after, two before...; so each is as few presses
    away as its rank allows.  Returns the options in list order and the
    start (the list's last option, the cursor layout's help, follows them)."""
    before = ranked[2::2]
    return (*reversed(before), *ranked[:1], *ranked[1::2]), len(before)


def bidding_entered(game: Game) -> str:
    """How the table entered the last hand's bidding in this game: ``upcard``
    (its upcard), ``pass`` (passes, no upcard) or "" (the call alone, or no
    hand yet): what the table likely enters first in this hand."""
    entries = game.entries
    for index in range(len(entries) - 1, -1, -1):
        entry = entries[index]
        if isinstance(entry, (Order, Call)):
            return "upcard"
        if isinstance(entry, Make):
            return "pass" if index and isinstance(entries[index - 1], Pass) else ""
        if isinstance(entry, NewGame):
            break
    return ""


def _likeliest_bids(game: Game, seats: list[Option], upcards: list[Option],
                    passing: list[Option]) -> list[Option]:
    """The maker step's options, likeliest first (``seats`` in turn, from the
    seat whose turn it is).  While the table enters the bidding (an upcard or
    a pass this hand): the pass of the seat whose turn it is, then that seat,
    then the others in turn.  At a hand's start, as the table entered the
    last hand (:func:`bidding_entered`): the upcard's suit; or the first pass;
    or the maker: the dealer first (the dealer makes over two fifths of the
    calls in bench/presses.py's played-out hands), then the seats in turn."""
    hand = game.hand
    if hand.upcard_suit is not None or hand.passes:
        return [*passing, *seats]
    habit = bidding_entered(game)
    if habit == "upcard":
        return [*upcards, *passing, *seats]
    if habit == "pass":
        return [*passing, *seats, *upcards]
    dealer = [option for option in seats if option.key == str(hand.dealer)]
    others = [option for option in seats if option not in dealer]
    # The dealer, the seat in turn, the dealer's partner, the seat between:
    # laid out around the dealer, the seats read clockwise.
    return [*dealer, *others[:1], *others[2:], *others[1:2], *passing, *upcards]


def _likeliest_suits(upcard: Suit | None, suits: list[Suit]) -> list[Suit]:
    """The suits a seat may name, likeliest first: the upcard's suit (round
    1), then its sister ("next", the usual call in round 2), then the suits
    after the upcard's in order.  With no upcard none is likelier: in order,
    the second first, so that the list reads in suit order around the cursor."""
    if upcard is None:
        return [*suits[1:2], *suits[2:3], *suits[:1], *suits[3:]]
    order = list(Suit)
    after = order[order.index(upcard):] + order[:order.index(upcard)]
    return sorted(suits, key=lambda suit: (suit is not upcard, suit is not upcard.sister,
                                           after.index(suit)))


def bid_entry(game: Game, seat: Seat, suit: Suit, alone: bool) -> Entry:
    """The entry a maker's seat, suit and alone flag stand for: ``order`` when it
    is the upcard's suit, ``call`` when another suit is named against a known
    upcard, ``make`` when the upcard was not entered."""
    return bid_for(seat, suit, alone, game.hand.upcard_suit)


def _defend_step(game: Game, defend: list[Defend], layout: Layout) -> Step:
    maker = game.hand.maker
    assert maker is not None
    ranked = [Option("No one: play on", Action("mode", value="no-defend"), "OK")]
    ranked += [
        Option(f"{game.name(entry.seat)} defends", Action("entry", entry), str(entry.seat))
        for entry in defend
    ]
    options, start = around(ranked)  # each defender one press away
    return Step("defend", "Defend alone?", options, start=start,
                ok=Action("mode", value="no-defend"), ok_words="no one defends",
                instead=_pick(layout, "tap the lone defender's seat, or OK: no one",
                              "choose the lone defender, or no one"),
                doing="while a lone defender may be named")


def clockwise(first: Seat) -> tuple[Seat, ...]:
    """The four seats clockwise from ``first``."""
    return (first, first.left, first.left.left, first.left.left.left)


TRICK_ODDS: Final = {
    "maker": ("maker", "right", "left", "partner"),
    "partner": ("partner", "maker", "left", "right"),
    "left": ("maker", "partner", "left", "right"),
    "right": ("maker", "right", "partner", "left"),
}
"""Who likely wins a trick, by who leads it, likeliest first: the maker, the
maker's partner, the defender on the maker's left or right.  Measured over
played-out hands by bench/presses.py: the maker wins over half the tricks,
except those the partner leads, where the partner wins most; after the
maker come the seat that led and the partner or the defender playing
between them."""


def _role(seat: Seat, maker: Seat) -> str:
    """``seat`` as seen from the maker: ``maker``, ``partner``, ``left``, ``right``."""
    return ("maker", "left", "partner", "right")[clockwise(maker).index(seat)]


def likeliest_winners(game: Game) -> list[Seat]:
    """The seats that may win the trick under way, likeliest first
    (:data:`TRICK_ODDS`)."""
    maker, leader = game.hand.maker, game.hand.leader
    assert maker is not None and leader is not None
    order = TRICK_ODDS[_role(leader, maker)]
    return sorted(clockwise(maker), key=lambda seat: order.index(_role(seat, maker)))


CLAIMS_AFTER: Final = 3
"""After this many tricks (when a table that claims the rest usually does) the
cursor layout's trick list offers each count of the claim as a choice of its
own, the makers taking the rest first: under the winners, or, once the makers
have made their three tricks (the outcome settled but for the march), one
press away, amid the winners.  Measured by bench/presses.py: the makers take
the rest in over half the claims there, and the third likeliest winner of a
fourth trick the makers lead after three is rare."""


def _trick_step(game: Game, legal: list[Entry], layout: Layout) -> Step:
    hand = game.hand
    winners = {entry.seat for entry in legal if isinstance(entry, Trick)}
    # The cursor starts on the likeliest; the next two are one press away.
    ranked = [Option(f"{game.name(seat)} won", Action("entry", Trick(seat)), str(seat))
              for seat in likeliest_winners(game) if seat in winners]
    if layout == "cursor" and len(hand.tricks) == CLAIMS_AFTER:
        counts = sorted((entry for entry in legal if isinstance(entry, Tricks)),
                        key=lambda entry: -entry.count)
        claims = [Option(f"Makers took {entry.count}", Action("entry", entry))  # as the menu
                  for entry in counts]
        assert hand.maker is not None
        if hand.tricks_of(hand.maker.team) < 3:
            ranked += claims
        else:  # settled: the claims interleaved with all but the likeliest winner
            ranked = [*ranked[:1], *(option for pair in zip_longest(claims, ranked[1:])
                                     for option in pair if option is not None)]
    ranked.append(Option("Claim: makers took…", Action("mode", value="claim"), "OK"))
    ranked.append(Option("Renege…", Action("mode", value="renege"), "ALONE"))
    options, start = around(ranked)
    question = f"Trick {len(hand.tricks) + 1}: who won?"
    return Step("trick", question, options, ok=Action("mode", value="claim"),
                ok_words="claim the rest",
                instead=_pick(layout, "tap the winner's seat, OK to claim the rest, "
                              "ALONE for a renege",
                              "choose the winner, a claim or a renege"),
                doing="while the tricks are entered", start=start)


def _claim_step(legal: list[Entry], layout: Layout) -> Step:
    counts = [entry for entry in legal if isinstance(entry, Tricks)]
    options = tuple(
        Option(f"Makers took {entry.count}", Action("entry", entry), MENU_KEYS[index])
        for index, entry in enumerate(counts)
    )
    start = max(len(options) - 1, 0)  # the makers took the rest: the likeliest
    rest = options[start] if options else None
    return Step("claim", "Makers took", options, menu=True,
                ok=rest.action if rest else None,
                ok_words=rest.label.replace("Makers took", "took") if rest else "",
                instead=_pick(layout, "tap the button by the count, OK: the makers took the "
                              "rest, or UNDO to go back", "choose the count"),
                doing="in the claim menu", start=start)


def _renege_step(game: Game, legal: list[Entry], layout: Layout) -> Step:
    options = tuple(
        Option(f"{game.name(entry.seat)} reneged", Action("entry", entry), str(entry.seat))
        for entry in legal
        if isinstance(entry, Renege)
    )
    return Step("renege", "Renege: who?", options,
                instead=_pick(layout, "tap the seat that reneged, or UNDO to go back",
                              "choose who reneged"),
                doing="now")  # ("OK does nothing now": one line, the lead line kept)


def menu_page(count: int, cursor: int) -> range:
    """The seats layout's page of a menu of ``count`` options that holds
    option ``cursor``: all of them when they fit the screen's
    :data:`~firmware.view.MENU_ROWS`, else ``MENU_ROWS - 1`` a page, the
    last row saying ALONE shows more.  Only the page shown can be picked."""
    if count <= MENU_ROWS:
        return range(count)
    per_page = MENU_ROWS - 1
    first = min(max(cursor, 0), count - 1) // per_page * per_page
    return range(first, min(first + per_page, count))


def _menu_action(state: FlowState, step: Step, button: str) -> Action | None:
    """A seats-layout menu: a button beside an option shown picks it; ALONE
    turns the page; the button of an option on another page turns to it
    (shown first, picked by the next press)."""
    count = len(step.options)
    shown = menu_page(count, step.cursor_index(state.cursor))
    if button == "ALONE":
        if count <= MENU_ROWS:
            return None
        return Action("cursor", value=str(shown.stop % count))
    for index, option in enumerate(step.options):
        if option.key == button:
            return option.action if index in shown else Action("cursor", value=str(index))
    return None


def direct_action(game: Game, state: FlowState, step: Step, button: str) -> Action | None:
    """What a seats-layout button does now (None: nothing is bound to it).

    Seat and suit buttons stand for the entry they mean even when the rules
    forbid it, so that the engine's reason is shown ("Ragnar sits out: Anna
    went alone"); menus pick their items by the buttons shown beside them.
    """
    if button == "OK":
        return step.ok
    if step.menu:
        return _menu_action(state, step, button)
    if button == "ALONE":
        for option in step.options:
            if option.key == "ALONE" and option.action.kind == "mode":
                return option.action
        return Action("alone") if step.name in ("trump", "confirm") else None
    seat = seat_of(button)
    suit = SUIT_BY_BUTTON.get(button)
    name = step.name
    if seat is not None:
        if name == "game" or name == "new-game":
            for option in step.options:
                if option.key == button:
                    return option.action
            return Action("new-game", value=str(seat))
        if name in ("maker", "trump", "confirm"):
            return Action("seat", value=str(seat))
        if name == "defend":
            return Action("entry", Defend(seat))
        if name == "renege":
            return Action("entry", Renege(seat))
        if name == "trick":
            return Action("entry", Trick(seat))
    if suit is not None:
        if name == "maker" or name == "game" and game.winner is not None:
            # (after the win the engine says "game over: ..."; before the first
            # game the step's own words, no log syntax)
            return Action("entry", Upcard(suit))
        if name in ("trump", "confirm"):
            return Action("suit", value=suit.value)
    return None
