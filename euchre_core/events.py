"""Table events: one per log line, each with a parse/format pair.

``parse_event("play W AS")`` gives ``Play(Seat.W, Card.from_str("AS"))`` and
``event.line()`` gives the canonical text back.  Check lines (``score``,
``winner``) and ``undo`` are events too, though they add no entry to a game.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from .cards import CARD_BY_TEXT, SEATS, Card, Seat, Suit, Team, format_cards
from .rules import Rules, RulesError
from .value import Value


class LogSyntaxError(ValueError):
    """A line that is not any event of the log format; the message says why."""


_set_field: Final = object.__setattr__
_new_event: Final = object.__new__


class Event(Value):
    """Base of every log event: immutable, and equal to an event of its own kind
    with equal fields (:class:`~euchre_core.value.Value`)."""

    __slots__ = ()
    _what = "events"

    def line(self) -> str:  # pragma: no cover - every subclass overrides
        raise NotImplementedError


class Players(Event):
    """``players N=Ragnar E=Sigríður``: names for some or all seats."""

    __slots__ = ("names",)
    names: tuple[tuple[Seat, str], ...]

    def __init__(self, names: tuple[tuple[Seat, str], ...]) -> None:
        _set_field(self, "names", names)

    @classmethod
    def from_names(cls, names: Mapping[Seat, str]) -> Players:
        """The event naming all four seats, N E S W, from ``names`` (every seat
        must be in it): ``Players.from_names(DEFAULT_NAMES).line()`` is
        ``players N=Ragnar E=Sigríður S=South W=Anna``."""
        return cls(tuple((seat, names[seat]) for seat in SEATS))

    def line(self) -> str:
        return "players " + " ".join(f"{seat}={quote(name)}" for seat, name in self.names)


MAX_NAME: Final = 40
"""Characters in a player's name."""


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a player's name (None when it can)."""
    if not name.strip() or len(name) > MAX_NAME or not name.isprintable():
        return f"1 to {MAX_NAME} printable characters"
    return None


class SetRules(Event):
    """``rules target=11 ...``: the house rules for the games that follow."""

    __slots__ = ("rules",)
    rules: Rules

    def __init__(self, rules: Rules) -> None:
        _set_field(self, "rules", rules)

    def line(self) -> str:
        return " ".join(["rules", *self.rules.to_tokens()])


class NewGame(Event):
    """``game dealer=W``: a new game, W dealing the first hand.

    ``game dealer=W NS=6 EW=4`` starts it from a score (a table moving from a
    paper score sheet, or from another box): the game goes on from there.
    """

    __slots__ = ("dealer", "ns", "ew")
    dealer: Seat
    ns: int
    ew: int

    def __init__(self, dealer: Seat, ns: int = 0, ew: int = 0) -> None:
        _set_field(self, "dealer", dealer)
        _set_field(self, "ns", ns)
        _set_field(self, "ew", ew)

    def line(self) -> str:
        if self.ns or self.ew:
            return f"game dealer={self.dealer} NS={self.ns} EW={self.ew}"
        return f"game dealer={self.dealer}"


class Misdeal(Event):
    """``misdeal``: the hand is void before play; the same dealer deals again."""

    __slots__ = ()

    def line(self) -> str:
        return "misdeal"


Hands = tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]
"""Each seat's cards, seats N E S W."""


class Deal(Event):
    """``deal N=... E=... S=... W=...``: each seat's five cards, seats N E S W.

    A deal read from a line in the writer's exact form (:meth:`from_line`, the
    replay's fast path) keeps the line and makes its cards when first asked.
    """

    __slots__ = ("_hands", "_line")
    _fields = ("hands",)
    _hands: Hands
    _line: str

    def __init__(self, hands: Hands) -> None:
        _set_field(self, "_hands", hands)

    @classmethod
    def from_line(cls, line: str) -> Deal:
        """The deal on ``line``, which must be in the writer's exact form
        (``deal N=9S,TS,JS,QS,KS E=...``, as :func:`codes.read_deal` takes)."""
        deal = _new_event(cls)
        _set_field(deal, "_line", line)
        return deal

    @property
    def hands(self) -> Hands:
        try:
            return self._hands
        except AttributeError:  # made from its line: read the cards now, once
            hands = tuple(
                tuple(CARD_BY_TEXT[text] for text in field[2:].split(","))
                for field in self._line[5:].split(" ")
            )
            _set_field(self, "_hands", hands)
            return hands  # type: ignore[return-value]

    def line(self) -> str:
        try:
            return self._line
        except AttributeError:
            return "deal " + " ".join(
                f"{seat}={format_cards(hand)}" for seat, hand in zip(SEATS, self.hands)
            )

    def hand_of(self, seat: Seat) -> tuple[Card, ...]:
        return self.hands[SEATS.index(seat)]


class Upcard(Event):
    """``upcard JH`` (or just its suit, ``upcard H``)."""

    __slots__ = ("suit", "card")
    suit: Suit
    card: Card | None

    def __init__(self, suit: Suit, card: Card | None = None) -> None:
        _set_field(self, "suit", suit)
        _set_field(self, "card", card)

    def line(self) -> str:
        return f"upcard {self.card if self.card is not None else self.suit}"


class Pass(Event):
    """``pass E``: E passes in the bidding."""

    __slots__ = ("seat",)
    seat: Seat

    def __init__(self, seat: Seat) -> None:
        _set_field(self, "seat", seat)

    def line(self) -> str:
        return f"pass {self.seat}"


class Order(Event):
    """``order S [alone]``: round 1, S orders up; trump is the upcard's suit."""

    __slots__ = ("seat", "alone")
    seat: Seat
    alone: bool

    def __init__(self, seat: Seat, alone: bool = False) -> None:
        _set_field(self, "seat", seat)
        _set_field(self, "alone", alone)

    def line(self) -> str:
        return f"order {self.seat}" + (" alone" if self.alone else "")


class Call(Event):
    """``call N C [alone]``: round 2, N names clubs."""

    __slots__ = ("seat", "suit", "alone")
    seat: Seat
    suit: Suit
    alone: bool

    def __init__(self, seat: Seat, suit: Suit, alone: bool = False) -> None:
        _set_field(self, "seat", seat)
        _set_field(self, "suit", suit)
        _set_field(self, "alone", alone)

    def line(self) -> str:
        return f"call {self.seat} {self.suit}" + (" alone" if self.alone else "")


class Make(Event):
    """``make N C [alone]``: N makes clubs trump, round not recorded."""

    __slots__ = ("seat", "suit", "alone")
    seat: Seat
    suit: Suit
    alone: bool

    def __init__(self, seat: Seat, suit: Suit, alone: bool = False) -> None:
        _set_field(self, "seat", seat)
        _set_field(self, "suit", suit)
        _set_field(self, "alone", alone)

    def line(self) -> str:
        return f"make {self.seat} {self.suit}" + (" alone" if self.alone else "")


Bid = Order | Call | Make


def suit_round(suit: Suit, upcard: Suit | None) -> int | None:
    """The bidding round in which ``suit`` is named: 1 for the upcard's suit
    (ordered up), 2 for any other (called), None when the upcard is unknown."""
    if upcard is None:
        return None
    return 1 if suit is upcard else 2


def bid_for(seat: Seat, suit: Suit, alone: bool, upcard: Suit | None) -> Bid:
    """The bid a maker's seat, suit and alone flag stand for: ``order`` in
    round 1, ``call`` in round 2, ``make`` when the upcard is unknown."""
    bid_round = suit_round(suit, upcard)
    if bid_round is None:
        return Make(seat, suit, alone)
    return Order(seat, alone) if bid_round == 1 else Call(seat, suit, alone)


class Defend(Event):
    """``defend W``: W defends alone against a lone maker (house rule)."""

    __slots__ = ("seat",)
    seat: Seat

    def __init__(self, seat: Seat) -> None:
        _set_field(self, "seat", seat)

    def line(self) -> str:
        return f"defend {self.seat}"


class Discard(Event):
    """``discard 9C``: the dealer's discard after picking up the upcard."""

    __slots__ = ("card",)
    card: Card

    def __init__(self, card: Card) -> None:
        _set_field(self, "card", card)

    def line(self) -> str:
        return f"discard {self.card}"


class Play(Event):
    """``play W AS``: W plays the ace of spades."""

    __slots__ = ("seat", "card")
    seat: Seat
    card: Card

    def __init__(self, seat: Seat, card: Card) -> None:
        _set_field(self, "seat", seat)
        _set_field(self, "card", card)

    def line(self) -> str:
        return f"play {self.seat} {self.card}"


class Trick(Event):
    """``trick N``: N won the trick (a check, after a trick's plays)."""

    __slots__ = ("seat",)
    seat: Seat

    def __init__(self, seat: Seat) -> None:
        _set_field(self, "seat", seat)

    def line(self) -> str:
        return f"trick {self.seat}"


class Tricks(Event):
    """``tricks 4``: the makers took 4 tricks in all (claims the rest of the hand)."""

    __slots__ = ("count",)
    count: int

    def __init__(self, count: int) -> None:
        _set_field(self, "count", count)

    def line(self) -> str:
        return f"tricks {self.count}"


class Renege(Event):
    """``renege E``: a renege caught against E; the hand ends with the penalty."""

    __slots__ = ("seat",)
    seat: Seat

    def __init__(self, seat: Seat) -> None:
        _set_field(self, "seat", seat)

    def line(self) -> str:
        return f"renege {self.seat}"


class Undo(Event):
    """``undo``: revokes the entry before it."""

    __slots__ = ()

    def line(self) -> str:
        return "undo"


class ScoreCheck(Event):
    """``score NS=3 EW=5``: the score must be exactly this."""

    __slots__ = ("ns", "ew")
    ns: int
    ew: int

    def __init__(self, ns: int, ew: int) -> None:
        _set_field(self, "ns", ns)
        _set_field(self, "ew", ew)

    def line(self) -> str:
        return f"score NS={self.ns} EW={self.ew}"


class WinnerCheck(Event):
    """``winner NS``: the game must be over, won by NS."""

    __slots__ = ("team",)
    team: Team

    def __init__(self, team: Team) -> None:
        _set_field(self, "team", team)

    def line(self) -> str:
        return f"winner {self.team}"


Entry = (
    Players | SetRules | NewGame | Deal | Upcard | Pass | Order | Call | Make | Defend
    | Discard | Play | Trick | Tricks | Renege | Misdeal
)
"""An event that becomes part of a game's state (everything but undo and checks)."""


# --- parsing ---------------------------------------------------------------


def quote(name: str) -> str:
    """A player name as the log writes it: quoted when it has spaces or quotes."""
    if name and not any(c.isspace() or c in '"#=\\*' for c in name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def split_line(text: str) -> list[str]:
    """Split a line (comment and checksum already removed) into tokens,
    honouring double quotes with backslash escapes inside them."""
    if '"' not in text:
        return text.split()
    tokens: list[str] = []
    current: list[str] = []
    in_token = in_quotes = False
    index = 0
    while index < len(text):
        char = text[index]
        if in_quotes:
            if char == "\\" and index + 1 < len(text):
                index += 1
                current.append(text[index])
            elif char == '"':
                in_quotes = False
            else:
                current.append(char)
        elif char == '"':
            in_quotes = in_token = True
        elif char.isspace():
            if in_token:
                tokens.append("".join(current))
                current, in_token = [], False
        else:
            current.append(char)
            in_token = True
        index += 1
    if in_quotes:
        raise LogSyntaxError("a quoted name is not closed")
    if in_token:
        tokens.append("".join(current))
    return tokens


def _seat(token: str) -> Seat:
    try:
        return Seat.from_str(token)
    except ValueError as error:
        raise LogSyntaxError(str(error)) from None


def _card(token: str) -> Card:
    card = CARD_BY_TEXT.get(token)
    if card is None:
        raise LogSyntaxError(f"not a card: {token!r} (rank 9 T J Q K A, then suit S H D C)")
    return card


def _suit(token: str) -> Suit:
    try:
        return Suit.from_str(token)
    except ValueError as error:
        raise LogSyntaxError(str(error)) from None


def _alone(keyword: str, args: list[str], fixed: int) -> bool:
    if len(args) == fixed:
        return False
    if len(args) == fixed + 1 and args[fixed] == "alone":
        return True
    raise LogSyntaxError(_usage(keyword))


_USAGE: Final = {
    "players": "players N=NAME E=NAME S=NAME W=NAME",
    "rules": "rules KEY=VALUE ...",
    "game": "game dealer=SEAT [NS=N EW=N]",
    "deal": "deal N=C,C,C,C,C E=... S=... W=...",
    "upcard": "upcard CARD (or SUIT)",
    "pass": "pass SEAT",
    "order": "order SEAT [alone]",
    "call": "call SEAT SUIT [alone]",
    "make": "make SEAT SUIT [alone]",
    "defend": "defend SEAT",
    "discard": "discard CARD",
    "play": "play SEAT CARD",
    "trick": "trick SEAT",
    "tricks": "tricks N (the makers' total, 0 to 5)",
    "renege": "renege SEAT",
    "misdeal": "misdeal",
    "undo": "undo",
    "score": "score NS=N EW=N",
    "winner": "winner NS|EW",
}


def _usage(keyword: str) -> str:
    return f"{keyword}: expected '{_USAGE[keyword]}'"


def _one_seat(keyword: str, args: list[str]) -> Seat:
    if len(args) != 1:
        raise LogSyntaxError(_usage(keyword))
    return _seat(args[0])


def _parse_players(args: list[str]) -> Players:
    if not args:
        raise LogSyntaxError(_usage("players"))
    names: dict[Seat, str] = {}
    for token in args:
        key, sep, name = token.partition("=")
        if not sep:
            raise LogSyntaxError(_usage("players"))
        seat = _seat(key)
        if seat in names:
            raise LogSyntaxError(f"players: seat {seat} named twice")
        problem = name_problem(name)
        if problem is not None:
            raise LogSyntaxError(f"players: {seat}'s name must be {problem}")
        names[seat] = name
    return Players(tuple(names.items()))


def _parse_rules(args: list[str]) -> SetRules:
    try:
        return SetRules(Rules.from_tokens(args))
    except RulesError as error:
        raise LogSyntaxError(str(error)) from None


MAX_START_POINTS: Final = 99
"""The most points a side may start a game with (the target is at most 99)."""


def _parse_game(args: list[str]) -> NewGame:
    if not args or not args[0].startswith("dealer="):
        raise LogSyntaxError(_usage("game"))
    dealer = _seat(args[0][7:])
    points: dict[str, int] = {}
    for token in args[1:]:
        key, sep, value = token.partition("=")
        if not sep or key not in ("NS", "EW") or key in points:
            raise LogSyntaxError(_usage("game"))
        if not (value.isascii() and value.isdigit() and int(value) <= MAX_START_POINTS):
            raise LogSyntaxError(
                f"game: {key}={value}: a starting score is a whole number "
                f"of points, 0 to {MAX_START_POINTS}"
            )
        points[key] = int(value)
    return NewGame(dealer, points.get("NS", 0), points.get("EW", 0))


def _parse_misdeal(args: list[str]) -> Misdeal:
    if args:
        raise LogSyntaxError(_usage("misdeal"))
    return Misdeal()


def _parse_deal(args: list[str]) -> Deal:
    hands: dict[Seat, tuple[Card, ...]] = {}
    for token in args:
        key, sep, cards_text = token.partition("=")
        if not sep:
            raise LogSyntaxError(_usage("deal"))
        seat = _seat(key)
        if seat in hands:
            raise LogSyntaxError(f"deal: seat {seat} dealt twice")
        cards = tuple(_card(text) for text in cards_text.split(","))
        if len(cards) != 5:
            raise LogSyntaxError(f"deal: {seat} must get 5 cards, not {len(cards)}")
        hands[seat] = cards
    if len(hands) != 4:
        missing = " ".join(str(seat) for seat in SEATS if seat not in hands)
        raise LogSyntaxError(f"deal: every seat gets 5 cards; missing {missing}")
    everything = [*hands[Seat.N], *hands[Seat.E], *hands[Seat.S], *hands[Seat.W]]
    if len(set(everything)) != 20:
        twice = next(card for card in everything if everything.count(card) > 1)
        raise LogSyntaxError(f"deal: {twice} is dealt twice")
    return Deal((hands[Seat.N], hands[Seat.E], hands[Seat.S], hands[Seat.W]))


def _parse_upcard(args: list[str]) -> Upcard:
    if len(args) != 1:
        raise LogSyntaxError(_usage("upcard"))
    card = CARD_BY_TEXT.get(args[0])
    if card is not None:
        return Upcard(card.suit, card)
    return Upcard(_suit(args[0]))


def _parse_order(args: list[str]) -> Order:
    alone = _alone("order", args, 1)
    return Order(_seat(args[0]), alone)


def _parse_call(args: list[str]) -> Call:
    alone = _alone("call", args, 2)
    return Call(_seat(args[0]), _suit(args[1]), alone)


def _parse_make(args: list[str]) -> Make:
    alone = _alone("make", args, 2)
    return Make(_seat(args[0]), _suit(args[1]), alone)


def _parse_discard(args: list[str]) -> Discard:
    if len(args) != 1:
        raise LogSyntaxError(_usage("discard"))
    return Discard(_card(args[0]))


def _parse_play(args: list[str]) -> Play:
    if len(args) != 2:
        raise LogSyntaxError(_usage("play"))
    return Play(_seat(args[0]), _card(args[1]))


def _parse_tricks(args: list[str]) -> Tricks:
    if len(args) != 1 or args[0] not in ("0", "1", "2", "3", "4", "5"):
        raise LogSyntaxError(_usage("tricks"))
    return Tricks(int(args[0]))


def _parse_undo(args: list[str]) -> Undo:
    if args:
        raise LogSyntaxError(_usage("undo"))
    return Undo()


def _parse_score(args: list[str]) -> ScoreCheck:
    points: dict[str, int] = {}
    for token in args:
        key, sep, value = token.partition("=")
        if not sep or key not in ("NS", "EW") or key in points or not (
            value.isascii() and value.isdigit() and len(value) <= 4
        ):
            raise LogSyntaxError(_usage("score"))
        points[key] = int(value)
    if len(points) != 2:
        raise LogSyntaxError(_usage("score"))
    return ScoreCheck(points["NS"], points["EW"])


def _parse_winner(args: list[str]) -> WinnerCheck:
    if len(args) != 1 or args[0] not in ("NS", "EW"):
        raise LogSyntaxError(_usage("winner"))
    return WinnerCheck(Team(args[0]))


_PARSERS: Final = {
    "players": _parse_players,
    "rules": _parse_rules,
    "game": _parse_game,
    "deal": _parse_deal,
    "upcard": _parse_upcard,
    "pass": lambda args: Pass(_one_seat("pass", args)),
    "order": _parse_order,
    "call": _parse_call,
    "make": _parse_make,
    "defend": lambda args: Defend(_one_seat("defend", args)),
    "discard": _parse_discard,
    "play": _parse_play,
    "trick": lambda args: Trick(_one_seat("trick", args)),
    "tricks": _parse_tricks,
    "renege": lambda args: Renege(_one_seat("renege", args)),
    "misdeal": _parse_misdeal,
    "undo": _parse_undo,
    "score": _parse_score,
    "winner": _parse_winner,
}
KEYWORDS: Final[tuple[str, ...]] = tuple(_PARSERS)


def parse_tokens(tokens: list[str]) -> Event:
    """The event a line's tokens spell; raises LogSyntaxError naming the problem."""
    parser = _PARSERS.get(tokens[0])
    if parser is None:
        raise LogSyntaxError(f"unknown event {tokens[0]!r}")
    event: Event = parser(tokens[1:])
    return event


def parse_event(text: str) -> Event:
    """Parse one event line (no comment, no checksum)."""
    tokens = split_line(text)
    if not tokens:
        raise LogSyntaxError("empty line")
    return parse_tokens(tokens)
