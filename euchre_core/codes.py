"""Log lines as small ints, for the replay.

Each line of a log maps to a code through one dict, :data:`CODES`
(``list(map(CODES.__getitem__, lines))`` runs in C).  Codes 0..95 are the plays,
``24 * seat + card`` as :mod:`euchre_core.play` numbers them; the others index
:data:`EVENTS`.  ``KIND[code]`` says what the replay does with a line, and the
``*_OF`` tables give a hand line's seat, suit or card as ints.

Only the canonical spelling of each fixed-form line is in the dict at import;
every other spelling (a checksum, a comment, ``10S``, ``♠``, lower case) gets the
code of its event from :meth:`_Codes.__missing__`, which parses it the one way
lines are parsed and memoises the answer.  Deal lines are read by
:func:`read_deal` (or, in any other spelling, :func:`deal_of`).
"""

from __future__ import annotations

from _thread import allocate_lock
from functools import cache
from struct import Struct
from struct import error as StructError
from typing import Final

from .cards import DECK, SEATS, Suit, Team
from .events import (
    Call,
    Deal,
    Defend,
    Discard,
    Event,
    LogSyntaxError,
    Make,
    Misdeal,
    NewGame,
    Order,
    Pass,
    Play,
    Renege,
    ScoreCheck,
    Trick,
    Tricks,
    Undo,
    Upcard,
    WinnerCheck,
    parse_tokens,
    split_line,
)
from .lines import strip_line
from .play import CARD_INDEX, LANE, SEAT_INDEX, SUIT_INDEX, lanes

PLAY, ENTRY, OPEN, CHECK, BLANK, DEAL, SLOW = range(7)
"""Kinds of line: a play; another entry; an entry that may open a hand (upcard,
pass, a bid); a check line; nothing (blank, comment); a deal; the slow path
(undo, setup lines, anything unusual or wrong: parsed and applied one by one)."""


def _canonical_events() -> list[Event]:
    seats, cards, suits = SEATS, DECK, tuple(Suit)
    events: list[Event] = [Play(seat, card) for seat in seats for card in cards]
    for seat in seats:
        events += [Pass(seat), Trick(seat), Renege(seat), Defend(seat)]
        events += [Order(seat, alone) for alone in (False, True)]
        events += [kind(seat, suit, alone) for kind in (Call, Make) for suit in suits
                   for alone in (False, True)]
        events.append(NewGame(seat))
    events += [Discard(card) for card in cards]
    events += [Upcard(card.suit, card) for card in cards]
    events += [Upcard(suit) for suit in suits]
    events += [Tricks(count) for count in range(6)]
    events += [WinnerCheck(team) for team in Team]
    events.append(Misdeal())
    events.append(Undo())
    return events


EVENTS: Final[list[Event | None]] = [*_canonical_events()]
PLAYS: Final = 4 * LANE
"""The codes below this are the plays."""
"""The event of each code (None for the kinds that have none)."""
KIND: Final[list[int]] = [
    PLAY if type(event) is Play
    else CHECK if type(event) is WinnerCheck
    else SLOW if type(event) is Undo
    else OPEN if type(event) in (Upcard, Pass, Order, Call, Make)
    else ENTRY
    for event in EVENTS
]
BLANK_CODE: Final = len(EVENTS)
DEAL_CODE: Final = BLANK_CODE + 1
SLOW_CODE: Final = BLANK_CODE + 2
EVENTS.extend((None, None, None))
KIND.extend((BLANK, DEAL, SLOW))
LINE_EVENTS: Final[dict[str, Event]] = {
    event.line(): event for event in EVENTS if event is not None
}
"""The canonical line of each fixed-form event (``parse_line``'s shortcut)."""

_NONE: Final = -1


def _table() -> list[int]:
    return [_NONE] * len(EVENTS)


UPCARD_CARD_OF: Final = _table()
"""Card int of an ``upcard CARD`` line."""
UPCARD_SUIT_OF: Final = _table()
"""Suit int of an ``upcard`` line (a card or just its suit)."""
PASS_SEAT_OF: Final = _table()
BID_SEAT_OF: Final = _table()
"""Seat int of an ``order``/``call``/``make`` line."""
ALONE_OF: Final = [False] * len(EVENTS)
DISCARD_CARD_OF: Final = _table()
TRICK_SEAT_OF: Final = _table()
SCORE_OF: Final[list[tuple[int, int] | None]] = [None] * len(EVENTS)
"""``(ns, ew)`` of a ``score`` check line (None for every other line)."""
for _code, _event in enumerate(EVENTS):
    if isinstance(_event, Upcard):
        UPCARD_SUIT_OF[_code] = SUIT_INDEX[_event.suit]
        if _event.card is not None:
            UPCARD_CARD_OF[_code] = CARD_INDEX[_event.card]
    elif isinstance(_event, Pass):
        PASS_SEAT_OF[_code] = SEAT_INDEX[_event.seat]
    elif isinstance(_event, (Order, Call, Make)):
        BID_SEAT_OF[_code] = SEAT_INDEX[_event.seat]
        ALONE_OF[_code] = _event.alone
    elif isinstance(_event, Discard):
        DISCARD_CARD_OF[_code] = CARD_INDEX[_event.card]
    elif isinstance(_event, Trick):
        TRICK_SEAT_OF[_code] = SEAT_INDEX[_event.seat]

_GROWING: Final = allocate_lock()
MEMO_LIMIT: Final = 100_000
"""Lines memoised beyond the canonical ones (a bound for a long-running device)."""


def parse_stripped(text: str) -> Event | None:
    """The event on a stripped line, or None for a blank line (``log.parse_line``)."""
    event = LINE_EVENTS.get(text)
    if event is not None:
        return event
    if not text:
        return None
    return parse_tokens(split_line(text))


class _Codes(dict[str, int]):
    """Line text to line code; a spelling not seen yet is worked out from its text."""

    def _new_code(self, event: Event) -> int:
        """A code of its own, once, for a check line (``score NS=12 EW=3``) or a
        game started from a score (``game dealer=W NS=6 EW=4``, an entry)."""
        with _GROWING:  # the tables grow together, one thread at a time
            code = self.get(event.line())
            if code is None:
                code = len(EVENTS)
                EVENTS.append(event)
                KIND.append(ENTRY if type(event) is NewGame else CHECK)
                for table in _ALL_TABLES:
                    table.append(_NONE)
                ALONE_OF.append(False)
                SCORE_OF.append((event.ns, event.ew) if type(event) is ScoreCheck else None)
                self[event.line()] = code
            return code

    def __missing__(self, raw: str) -> int:
        if raw[:5] == "deal ":
            return DEAL_CODE  # every deal line differs: read by read_deal, not memoised
        try:
            event = parse_stripped(strip_line(raw))
        except LogSyntaxError:
            code = SLOW_CODE  # the slow path says what is wrong
        else:
            if event is None:
                code = BLANK_CODE
            else:
                code = self.get(event.line(), SLOW_CODE)
                if code == SLOW_CODE and type(event) in (ScoreCheck, WinnerCheck, NewGame):
                    code = self._new_code(event)
        if len(self) < MEMO_LIMIT:
            self[raw] = code
        return code


_ALL_TABLES: Final = (
    UPCARD_CARD_OF, UPCARD_SUIT_OF, PASS_SEAT_OF, BID_SEAT_OF,
    DISCARD_CARD_OF, TRICK_SEAT_OF,
)
CODES: Final = _Codes(
    {event.line(): code for code, event in enumerate(EVENTS) if event is not None}
)
"""Line text to line code: canonical lines at import, every other spelling memoised."""


# --- deal lines ----------------------------------------------------------------

_DEAL_FIELDS: Final = Struct("13s6s2s" + "9s6s2s" * 3)
"""The canonical deal line, 72 bytes, cut in twelve: per seat its head and first
two cards (``deal N=9S,TS,``, `` E=9S,TS,``), two more cards, the last card."""
_Table = dict[bytes, int]
_DealTables = tuple[tuple[_Table, _Table, _Table, _Table], _Table, _Table]


@cache
def _deal_tables() -> _DealTables:
    """Per seat, its own head (``deal N=``, `` E=``, `` S=``, `` W=``) with the
    first two cards; the pairs; the last cards, each to their cards' bits in lane
    0 (made on the first deal read: few programs read one).  A head is looked up
    only in its own seat's table, so a line naming a seat twice, or its seats in
    another order, is not the writer's form (the parser then reads it)."""
    pairs: dict[str, int] = {
        f"{a},{b},": 1 << CARD_INDEX[a] | 1 << CARD_INDEX[b]
        for a in DECK for b in DECK if a is not b
    }
    heads = tuple(
        {f"{head}={text}".encode(): cards for text, cards in pairs.items()}
        for head in ["deal N", *(f" {seat}" for seat in SEATS[1:])]
    )
    ones = {str(card).encode(): 1 << CARD_INDEX[card] for card in DECK}
    north, east, south, west = heads
    return (north, east, south, west), {
        text.encode(): cards for text, cards in pairs.items()
    }, ones


def read_deal(line: str) -> int | None:
    """The hands int (:mod:`euchre_core.play`) of a deal line in the writer's
    exact form (its event is then ``Deal.from_line(line)``); None for any other
    line (seats named in another order, or twice), or one dealing a card twice
    (those go through the parser, which says what is wrong)."""
    if len(line) != 72:
        return None
    (north_heads, east_heads, south_heads, west_heads), pairs, ones = _deal_tables()
    try:
        n1, n2, n3, e1, e2, e3, s1, s2, s3, w1, w2, w3 = _DEAL_FIELDS.unpack(line.encode())
        # A seat's three parts as a sum: it has all five bits only when they
        # are five different cards (a card twice carries into fewer bits).
        north = north_heads[n1] + pairs[n2] + ones[n3]
        east = east_heads[e1] + pairs[e2] + ones[e3]
        south = south_heads[s1] + pairs[s2] + ones[s3]
        west = west_heads[w1] + pairs[w2] + ones[w3]
    except (KeyError, StructError):  # another form (non-ASCII text is longer: StructError)
        return None
    if (north | east | south | west).bit_count() != 20:  # a card twice
        return None
    return north + (east << LANE) + (south << 2 * LANE) + (west << 3 * LANE)


def deal_of(line: str) -> tuple[Deal, int] | None:
    """A deal line's event and hands int, read by the parser: any spelling it
    takes (a checksum, a comment...); None for any other line, or a deal it
    refuses (the engine then says what is wrong, line by line).  The writer's
    exact form is read faster by :func:`read_deal` and ``Deal.from_line``."""
    try:
        event = parse_stripped(strip_line(line))
    except LogSyntaxError:
        return None
    if type(event) is not Deal:
        return None
    return event, lanes([[CARD_INDEX[card] for card in cards] for cards in event.hands])
