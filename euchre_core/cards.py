"""Cards, suits, seats and teams as small value types, and the trump rules.

Every value has a parse/format pair (``Card.from_str("JH")`` / ``str(card)``)
and a repr that is valid Python.  :func:`effective_suit` is the one place the
left bower is judged; following suit, trick winners, voids and the screens all
call it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from typing import Final


class _Written(enum.Enum):
    """Base of the enums that are written as their value (``S``, ``NS``, ``N``).

    Enum's own hash, ``str`` and ``format`` are Python code that looks at the
    class each time; these members are singletons with a string value, so they
    hash by identity and print their value (an f-string of a seat: 0.1 us, not 1).
    """

    _value_: str
    __hash__ = object.__hash__

    def __str__(self) -> str:
        return self._value_

    def __format__(self, spec: str) -> str:
        return self._value_.__format__(spec)


class Suit(_Written):
    """A suit, written ``S H D C`` (``♠ ♥ ♦ ♣`` accepted when reading)."""

    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"

    @classmethod
    def from_str(cls, text: str) -> Suit:
        """Parse ``S``/``H``/``D``/``C`` or a suit symbol; raises ValueError."""
        try:
            return _SUIT_BY_TEXT[text]
        except KeyError:
            raise ValueError(f"not a suit: {text!r} (use S H D C)") from None

    @property
    def symbol(self) -> str:
        return _SYMBOL[self]

    @property
    def word(self) -> str:
        """The plural name used in messages: ``"hearts"``."""
        return self.name.lower()

    @property
    def is_red(self) -> bool:
        return self in (Suit.HEARTS, Suit.DIAMONDS)

    @property
    def sister(self) -> Suit:
        """The other suit of the same colour (home of the left bower)."""
        return _SISTER[self]

    def __repr__(self) -> str:
        return f"Suit.from_str({self.value!r})"


_SYMBOL: Final = {Suit.SPADES: "♠", Suit.HEARTS: "♥", Suit.DIAMONDS: "♦", Suit.CLUBS: "♣"}
_SISTER: Final = {
    Suit.SPADES: Suit.CLUBS,
    Suit.CLUBS: Suit.SPADES,
    Suit.HEARTS: Suit.DIAMONDS,
    Suit.DIAMONDS: Suit.HEARTS,
}
_SUIT_BY_TEXT: Final[dict[str, Suit]] = {}
for _suit in Suit:
    for _text in (_suit.value, _suit.value.lower(), _SYMBOL[_suit]):
        _SUIT_BY_TEXT[_text] = _suit


class Rank(_Written):
    """A rank of the 24-card deck, written ``9 T J Q K A`` (``10`` accepted)."""

    NINE = "9"
    TEN = "T"
    JACK = "J"
    QUEEN = "Q"
    KING = "K"
    ACE = "A"

    @property
    def order(self) -> int:
        """Plain order, 0 for the nine up to 5 for the ace."""
        return _RANK_ORDER[self]

    def __repr__(self) -> str:
        return f"Rank({self.value!r})"


_RANK_ORDER: Final = {rank: index for index, rank in enumerate(Rank)}


class Card:
    """One of the 24 cards.  Instances are interned: ``Card.from_str("JH") is
    Card.from_str("JH")``, so cards compare and hash cheaply."""

    __slots__ = ("rank", "suit", "_text")

    rank: Rank
    suit: Suit
    _text: str

    def __new__(cls, rank: Rank, suit: Suit) -> Card:
        return _CARDS[(rank, suit)]

    @classmethod
    def _make(cls, rank: Rank, suit: Suit) -> Card:
        card = object.__new__(cls)
        object.__setattr__(card, "rank", rank)
        object.__setattr__(card, "suit", suit)
        object.__setattr__(card, "_text", rank.value + suit.value)
        return card

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("cards are immutable")

    @classmethod
    def from_str(cls, text: str) -> Card:
        """Parse ``"JH"``, ``"TS"``, ``"10S"``, ``"J♥"``; raises ValueError."""
        try:
            return CARD_BY_TEXT[text]
        except KeyError:
            raise ValueError(
                f"not a card: {text!r} (rank 9 T J Q K A, then suit S H D C)"
            ) from None

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Card.from_str({self._text!r})"

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (Card.from_str, (self._text,))

    @property
    def pretty(self) -> str:
        """``"J♥"``, ``"10♠"``: for screens."""
        rank = "10" if self.rank is Rank.TEN else self.rank.value
        return rank + self.suit.symbol


_CARDS: Final[dict[tuple[Rank, Suit], Card]] = {
    (rank, suit): Card._make(rank, suit) for suit in Suit for rank in Rank
}
DECK: Final[tuple[Card, ...]] = tuple(_CARDS.values())
"""The 24 cards, spades to clubs, nine to ace within each suit."""

CARD_BY_TEXT: Final[dict[str, Card]] = {}
for _card in DECK:
    for _rank_text in (_card.rank.value, "10" if _card.rank is Rank.TEN else None):
        if _rank_text is None:
            continue
        for _suit_text, _suit in _SUIT_BY_TEXT.items():
            if _suit is _card.suit:
                CARD_BY_TEXT[_rank_text + _suit_text] = _card
                CARD_BY_TEXT[(_rank_text + _suit_text).upper()] = _card
                CARD_BY_TEXT[(_rank_text + _suit_text).lower()] = _card


def format_cards(cards: Iterable[Card]) -> str:
    """``"9S,TS,JS"``, the log's form of a list of cards."""
    return ",".join(card._text for card in cards)


class Team(_Written):
    """A partnership: ``NS`` (North and South) or ``EW`` (East and West)."""

    NS = "NS"
    EW = "EW"

    @classmethod
    def from_str(cls, text: str) -> Team:
        try:
            return cls(text.upper())
        except ValueError:
            raise ValueError(f"not a team: {text!r} (use NS or EW)") from None

    @property
    def other(self) -> Team:
        return _OTHER_TEAM[self]

    def __repr__(self) -> str:
        return f"Team.from_str({self.value!r})"


class Seat(_Written):
    """A seat, clockwise ``N E S W``.  "Left of X" is the next seat clockwise."""

    N = "N"
    E = "E"
    S = "S"
    W = "W"

    @classmethod
    def from_str(cls, text: str) -> Seat:
        try:
            return _SEAT_BY_TEXT[text]
        except KeyError:
            raise ValueError(f"not a seat: {text!r} (use N E S W)") from None

    @property
    def left(self) -> Seat:
        """The next seat clockwise: left of N is E, left of W is N."""
        return _LEFT[self]

    @property
    def partner(self) -> Seat:
        return _LEFT[_LEFT[self]]

    @property
    def team(self) -> Team:
        return _TEAM[self]

    def __repr__(self) -> str:
        return f"Seat.from_str({self.value!r})"


SEATS: Final[tuple[Seat, ...]] = (Seat.N, Seat.E, Seat.S, Seat.W)
# Lookup tables: on Python 3.11 ``Seat.N`` style access costs ~180 ns, a dict ~25 ns.
_OTHER_TEAM: Final = {Team.NS: Team.EW, Team.EW: Team.NS}
_TEAM: Final = {Seat.N: Team.NS, Seat.S: Team.NS, Seat.E: Team.EW, Seat.W: Team.EW}
_LEFT: Final = {Seat.N: Seat.E, Seat.E: Seat.S, Seat.S: Seat.W, Seat.W: Seat.N}
_SEAT_BY_TEXT: Final = {seat.value: seat for seat in Seat} | {
    seat.value.lower(): seat for seat in Seat
}


# --- trump -----------------------------------------------------------------


def effective_suit(card: Card, trump: Suit) -> Suit:
    """The suit a card belongs to once ``trump`` is named.

    The one place the left bower is judged: the jack of trump's sister suit
    is a trump for every purpose (following, winning, leading, voids).
    """
    if card.rank is Rank.JACK and card.suit is _SISTER[trump]:
        return trump
    return card.suit


def is_left_bower(card: Card, trump: Suit) -> bool:
    """True for the jack of the same colour as trump (asks effective_suit)."""
    return card.suit is not trump and effective_suit(card, trump) is trump


def card_power(card: Card, trump: Suit, led: Suit) -> int:
    """How strongly ``card`` bids for a trick led in effective suit ``led``.

    Trumps rank right bower, left bower, A K Q 10 9 above everything; cards of
    the led suit rank A K Q J 10 9; any other card cannot win (-1).
    """
    suit = effective_suit(card, trump)
    if suit is trump:
        if card.rank is Rank.JACK:
            return 20 if card.suit is trump else 19
        return 10 + _RANK_ORDER[card.rank]
    if suit is led:
        return _RANK_ORDER[card.rank]
    return -1


SUIT_OF: Final[dict[Suit, dict[Card, Suit]]] = {
    trump: {card: effective_suit(card, trump) for card in DECK} for trump in Suit
}
"""``SUIT_OF[trump][card]``: :func:`effective_suit`, memoised."""

POWER: Final[dict[Suit, dict[Suit, dict[Card, int]]]] = {
    trump: {led: {card: card_power(card, trump, led) for card in DECK} for led in Suit}
    for trump in Suit
}
"""``POWER[trump][led][card]``: :func:`card_power`, memoised."""


def trick_winner(plays: Sequence[tuple[Seat, Card]], trump: Suit) -> Seat:
    """The seat that wins a trick; ``plays`` in the order they were played.

    The highest :func:`card_power` for the suit led wins.  ``Game.play_run``
    calls this when a trick is complete; the replay's generated trick checker
    takes the maximum of ``euchre_core.play.RANK_KEY``, which is this same
    ``card_power`` with the seat in its low bits (a test proves the table equal).
    """
    best_seat, first = plays[0]
    power = POWER[trump][SUIT_OF[trump][first]]
    best_power = power[first]
    for seat, card in plays[1:]:
        if power[card] > best_power:
            best_seat, best_power = seat, power[card]
    return best_seat
