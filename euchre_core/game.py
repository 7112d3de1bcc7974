"""The game as events: its state is the fold of its entries.

``Game.push(entry)`` checks an entry against the rules and applies it, or
raises :class:`IllegalEntry` naming the rule and changes nothing.
``Game.undo()`` removes the last entry.  ``Game.legal_entries()`` lists what
may come next; the device and the serial link offer exactly those.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any, Final, NamedTuple

from . import codes as _c
from . import play as _play
from .cards import DECK, SEATS, Card, Seat, Suit, Team, is_left_bower, trick_winner
from .events import (
    Call,
    Deal,
    Defend,
    Discard,
    Entry,
    Make,
    Misdeal,
    NewGame,
    Order,
    Pass,
    Play,
    Players,
    Renege,
    ScoreCheck,
    SetRules,
    Trick,
    Tricks,
    Upcard,
    WinnerCheck,
    suit_round,
)
from .rules import Rules
from .value import Record

DEFAULT_NAMES: Final[dict[Seat, str]] = {
    Seat.N: "Ragnar",
    Seat.E: "Sigríður",
    Seat.S: "South",
    Seat.W: "Anna",
}


class IllegalEntry(ValueError):
    """An entry the rules forbid.  ``str(error)`` is the reason, in words."""


class Phase(enum.Enum):
    SETUP = "setup"
    """No game yet: house rules, names and the first dealer."""
    IN_GAME = "in game"
    GAME_OVER = "game over"
    """A side has won: only a new game (or undo) is taken."""


_SETUP: Final = Phase.SETUP
_IN_GAME: Final = Phase.IN_GAME
_GAME_OVER: Final = Phase.GAME_OVER
_NS: Final = Team.NS
_EW: Final = Team.EW
_N, _E, _S, _W = SEATS
_LANE: Final = _play.LANE
_SEAT_INDEX: Final = _play.SEAT_INDEX
_CARD_INDEX: Final = _play.CARD_INDEX
_SUIT_INDEX: Final = _play.SUIT_INDEX
_PLAY_BIT: Final[dict[Seat, dict[Card, int]]] = {
    seat: {card: 1 << (_LANE * _SEAT_INDEX[seat] + _CARD_INDEX[card]) for card in DECK}
    for seat in SEATS
}
"""``_PLAY_BIT[seat][card]``: the bit of the hands int set while ``seat`` holds ``card``."""
_ALL_LANES: Final = tuple(
    sum(1 << (_LANE * seat + card) for seat in range(4)) for card in range(_LANE)
)
"""``_ALL_LANES[card]``: the card's bit in every seat's lane."""
NO_TRUMP_YET: Final = "no trump yet"
"""The start of every refusal of an entry that needs trump made first."""
# (module constants: on Python 3.11 ``Phase.IN_GAME`` costs ~180 ns a lookup)


class HandResult(NamedTuple):
    """How one hand ended and who scored."""

    number: int
    dealer: Seat
    how: str
    """``"made"``, ``"march"``, ``"euchred"``, ``"renege"`` or ``"thrown in"``."""
    team: Team | None
    points: int
    maker: Seat | None = None
    trump: Suit | None = None
    alone: bool = False
    lone_defender: Seat | None = None
    maker_tricks: int | None = None
    reneger: Seat | None = None


def score_hand(
    rules: Rules,
    number: int,
    dealer: Seat,
    maker: Seat | None,
    trump: Suit | None,
    alone: bool = False,
    lone_defender: Seat | None = None,
    maker_tricks: int | None = None,
    reneger: Seat | None = None,
) -> HandResult:
    """How a hand ends and who scores what: the one place scoring lives.

    ``maker_tricks`` for a hand played out (or claimed), ``reneger`` for a hand
    ended by a renege; neither for a hand thrown in (no maker).  Pure: the
    game adds the points and decides the winner.
    """
    team: Team | None = None
    points = 0
    how = "thrown in"
    if reneger is not None:
        how, team = "renege", _OTHER[_TEAM_OF[reneger]]
        against_loner = alone and maker is not None and _TEAM_OF[reneger] is not _TEAM_OF[maker]
        points = rules.renege_vs_loner if against_loner else rules.renege_penalty
    elif maker_tricks is not None:
        assert maker is not None
        makers = _TEAM_OF[maker]
        if maker_tricks >= 3:
            team = makers
            if maker_tricks < 5:
                how, points = "made", 1
            else:
                how, points = "march", 4 if alone else 2
        else:
            team, how = _OTHER[makers], "euchred"
            points = rules.defenders_sweep if maker_tricks == 0 else 2
            if lone_defender is not None:  # all five: the better of the two settings
                points = rules.lone_defender_euchre if maker_tricks else max(
                    rules.lone_defender_euchre, rules.defenders_sweep
                )
    return _new_result((
        number, dealer, how, team, points, maker, trump, alone, lone_defender, maker_tricks,
        reneger,
    ))


_new_result: Final[Callable[[tuple[object, ...]], HandResult]] = partial(
    tuple.__new__, HandResult
)
"""``HandResult(*values)`` without the named tuple's Python-level ``__new__``."""


def _wins(rules: Rules, mine: int, theirs: int) -> bool:
    """True when a side with ``mine`` points against ``theirs`` has won the game."""
    return mine >= rules.target and (not rules.win_by_two or mine - theirs >= 2)


_OTHER: Final = {Team.NS: Team.EW, Team.EW: Team.NS}
_TEAM_OF: Final = {seat: seat.team for seat in SEATS}
_LEFT: Final = {seat: seat.left for seat in SEATS}
_SEATS_OF: Final = {team: tuple(seat for seat in SEATS if seat.team is team) for team in Team}


def _next_seat_table(sitting_out: frozenset[Seat]) -> dict[Seat, Seat]:
    """The next seat clockwise that takes part, for each seat."""
    table = {}
    for seat in SEATS:
        following = seat.left
        while following in sitting_out:
            following = following.left
        table[seat] = following
    return table


_NEXT_SEAT: Final = {
    frozenset(out): _next_seat_table(frozenset(out))
    for out in ((), *((seat,) for seat in SEATS), *((a, b) for a in SEATS for b in SEATS if a != b))
}
"""``_NEXT_SEAT[sitting_out]``: the next active seat, for every set of seats sitting out."""
_ORDERS: Final = {out: _play.turn_orders(table) for out, table in _NEXT_SEAT.items()}
_ALL_IN: Final = _NEXT_SEAT[frozenset()]
_ALL_IN_ORDERS: Final = _ORDERS[frozenset()]
_ALL_PLAY: Final[tuple[tuple[Seat, ...], dict[Seat, Seat], Any]] = ((), _ALL_IN, _ALL_IN_ORDERS)
_LONE: Final = {
    maker: ((maker.partner,), _NEXT_SEAT[frozenset((maker.partner,))],
            _ORDERS[frozenset((maker.partner,))])
    for maker in SEATS
}
"""Per lone maker: the seats sitting out, the next seat table and the turn orders."""


def _first_leader(
    rules: Rules, dealer: Seat, maker: Seat, alone: bool, lone_defender: Seat | None,
    next_seat: dict[Seat, Seat],
) -> Seat:
    """Who leads a hand's first trick: left of the dealer, or of a lone maker with
    ``lone-lead=maker-left``, skipping the seats that sit out."""
    lone = alone or lone_defender is not None
    return next_seat[maker if lone and rules.lone_lead == "maker-left" else dealer]


_Verdict = tuple[str, Team, int, int]
"""How a hand played out ends: how, the team that scores, its points, the maker's tricks."""
_Shape = tuple[int, Any, tuple[int, ...], _play.Block]
"""Who plays a hand: cards in a trick, the turn orders (``play.turn_orders``),
the first leader (seat int) for each dealer (seat int), and the checker of the
hand's five tricks (``play.trick_block``)."""
_Bids = dict[int, tuple[int, int] | None]
"""The bids met so far: one int for the bid's line code, passes before it,
upcard's suit and dealer, to its round and trump (suit
int), or None when the engine refuses it (:func:`_bid_verdict`)."""
_FastTables = tuple[
    tuple[tuple[tuple[_Verdict, ...], ...], ...], tuple[tuple[_Shape, ...], ...], _Bids
]
_FAST: Final[dict[int, tuple[Rules, _FastTables]]] = {}


def _fast_tables(rules: Rules) -> _FastTables:
    """The replay's fast path tables for ``rules``, made from the one source of
    each rule (:func:`score_hand`, :func:`_first_leader`) once per rules object:

    * ``verdicts[maker][alone][odd]``: how a hand played out without a lone
      defender ends, when the maker (seat int) went alone or not and E and W
      took ``odd`` tricks;
    * ``shapes[alone][maker]``: who plays (:data:`_Shape`);
    * ``bids``: the verdicts on the bids met so far (:func:`_bid_verdict`).
    """
    known = _FAST.get(id(rules))
    if known is not None and known[0] is rules:
        return known[1]
    verdicts = []
    for maker in SEATS:
        by_alone = []
        for alone in (False, True):
            by_odd = []
            for odd in range(6):
                tricks = odd if maker.team is _EW else 5 - odd
                result = score_hand(rules, 1, SEATS[0], maker, Suit.SPADES, alone, None, tricks)
                assert result.team is not None  # a hand played out scores
                by_odd.append((result.how, result.team, result.points, tricks))
            by_alone.append(tuple(by_odd))
        verdicts.append(tuple(by_alone))
    shapes = tuple(
        tuple(
            (
                4 - len(out), orders,
                tuple(
                    _SEAT_INDEX[_first_leader(rules, dealer, maker, alone, None, next_seat)]
                    for dealer in SEATS
                ),
                _play.trick_block(4 - len(out), 5),
            )
            for maker in SEATS
            for out, next_seat, orders in [_LONE[maker] if alone else _ALL_PLAY]
        )
        for alone in (False, True)
    )
    if len(_FAST) >= 64:  # a bound: rules objects come and go on a long-running device
        _FAST.clear()
    tables: _FastTables = (tuple(verdicts), shapes, {})
    _FAST[id(rules)] = (rules, tables)
    return tables


def _bid_verdict(
    rules: Rules, code: int, passes: int, up_suit: int, dealer: int
) -> tuple[int, int] | None:
    """The bidding round and trump (suit int) of the bid on a line of ``code``
    after ``passes`` passes in turn from the dealer's left, or None when the
    engine refuses it: judged by :meth:`Game._bid` itself on a game brought to
    that point, so the replay's fast path has no bidding rule of its own."""
    probe = Game(rules)
    probe.push(NewGame(SEATS[dealer]))
    probe.push(Upcard(_play.SUITS[up_suit]))
    for turn in range(1, passes + 1):
        if probe.offer(Pass(SEATS[(dealer + turn) % 4])) is not None:
            return None
    bid = _c.EVENTS[code]
    assert isinstance(bid, (Order, Call, Make))
    if probe.offer(bid) is not None:
        return None
    hand = probe.hand
    assert hand.round is not None and hand.trump is not None
    return hand.round, _SUIT_INDEX[hand.trump]


_BID_SEAT_OF, _ALONE_OF = _c.BID_SEAT_OF, _c.ALONE_OF
_PASS_RUNS: Final = tuple(
    tuple(_c.CODES[Pass(SEATS[(dealer + turn) % 4]).line()] for turn in range(1, 9)) + (-1,)
    for dealer in range(4)
)
"""Per dealer (seat int): the codes of the eight passes in turn from the
dealer's left, then -1 (no line's code)."""
_LANE_BITS: Final = tuple(
    tuple(1 << (_LANE * seat + card) for card in range(_LANE)) for seat in range(4)
)
"""Per seat (int), each card's bit in the hands int."""
NEXT_DEALER: Final = (1, 2, 3, 0)
"""The next hand's dealer (seat int) after each dealer: the one on the left."""


class Hand:
    """The state of the hand being played (mutable; owned by :class:`Game`)."""

    __slots__ = (
        "number", "dealer", "start", "call_index", "held", "upcard_suit", "upcard_card", "passes",
        "maker", "trump", "alone", "round", "lone_defender", "sitting_out",
        "discard_pending", "discarded", "tricks", "trick", "leader", "played",
        "showed_out", "by_winner", "card_level", "next_seat",
        "trick_size", "turn", "led", "orders", "playable",
    )

    def __init__(self, number: int, dealer: Seat, start: int) -> None:
        self.number = number
        self.dealer = dealer
        self.start = start
        """Index in ``Game.entries`` of the hand's first entry."""
        self.call_index = -1
        """Index in ``Game.entries`` just after the call."""
        self.held: int | None = None
        """The cards each seat holds in a dealt hand, one int (None when the deal is
        unknown): bit ``24 * seat + card`` is set while the seat holds the card
        (seat and card as ints, see :mod:`euchre_core.play`)."""
        self.upcard_suit: Suit | None = None
        self.upcard_card: Card | None = None
        self.passes = 0
        self.maker: Seat | None = None
        self.trump: Suit | None = None
        self.alone = False
        self.round: int | None = None
        self.lone_defender: Seat | None = None
        self.sitting_out: tuple[Seat, ...] = ()
        self.discard_pending = False
        self.discarded: Card | None = None
        self.tricks: list[Seat] = []
        self.trick: list[Play] = []
        """The plays of the trick under way."""
        self.leader = _LEFT[dealer]
        self.played: dict[Card, tuple[int, Seat]] = {}
        self.showed_out: dict[tuple[Seat, Suit], int] = {}
        self.by_winner = False
        self.card_level = False
        """True once the hand has a deal or a play: tricks come from the plays."""
        self.next_seat: dict[Seat, Seat] = _ALL_IN
        """The next seat clockwise that takes part in the hand."""
        self.trick_size = 4
        """Cards in a trick: 4, or fewer when seats sit out."""
        self.turn = self.leader
        """Who plays the next card (the leader, then clockwise past sitting-out seats)."""
        self.led: Suit | None = None
        """The effective suit led in the current trick."""
        self.orders = _ALL_IN_ORDERS
        """Per leader, the seats of a trick in playing order (``play.turn_orders``)."""
        self.playable = False
        """True while a ``play`` may come: trump made, no discard owed, not by winner."""

    def set_sitting_out(self, seats: tuple[Seat, ...]) -> None:
        self.sitting_out = seats
        self.next_seat = _NEXT_SEAT[frozenset(seats)]
        self.orders = _ORDERS[frozenset(seats)]
        self.trick_size = 4 - len(seats)

    @property
    def cards(self) -> dict[Seat, set[Card]] | None:
        """Each seat's cards in a dealt hand (None when the deal is unknown)."""
        held = self.held
        if held is None:
            return None
        return {
            seat: {card for card, bit in _PLAY_BIT[seat].items() if held & bit} for seat in SEATS
        }

    def holds(self, seat: Seat, card: Card) -> bool:
        """True when ``seat`` holds ``card`` (in a dealt hand)."""
        return self.held is not None and self.held & _PLAY_BIT[seat][card] != 0

    def tricks_of(self, team: Team) -> int:
        first, second = _SEATS_OF[team]
        return self.tricks.count(first) + self.tricks.count(second)

    @property
    def bid_turn(self) -> Seat:
        """Whose turn it is to bid when passes are recorded."""
        seat = self.dealer.left
        for _ in range(self.passes % 4):
            seat = seat.left
        return seat

    def next_active(self, seat: Seat) -> Seat:
        return self.next_seat[seat]

    @property
    def to_play(self) -> Seat:
        """Who plays the next card of the current trick."""
        return self.turn


_HandRead = tuple[
    int, Deal | str | None, int | None, int, int, int, int, int, int, bool, int,
    tuple[int, ...], bool,
]
"""A whole hand read for the replay's fast path: the index after its lines; its
deal (or its line in the writer's form; None for a hand by trick winners) and
the hands int at its end; the upcard card (-1 when only its suit is known) and
suit; the passes; the maker (seat int), trump (suit int), round and alone; the
discard (-1 for none); the trick winners (seat ints); and whether each trick
was followed by its ``trick`` line."""


def _played_hand(number: int, dealer: Seat, start: int, read: _HandRead) -> Hand:
    """The finished hand ``read`` describes, as the handlers leave it (the game's last)."""
    _, deal, held, upcard, up_suit, passes, maker, trump, bid_round, alone, discard, won, _ = read
    hand = Hand(number, dealer, start)
    hand.held = held
    hand.card_level, hand.by_winner = deal is not None, deal is None
    hand.upcard_card = DECK[upcard] if upcard >= 0 else None
    hand.upcard_suit = _play.SUITS[up_suit]
    hand.passes = passes
    hand.maker, hand.trump = SEATS[maker], _play.SUITS[trump]
    hand.alone, hand.round = alone, bid_round
    hand.call_index = start + (deal is not None) + 2 + passes
    if alone:
        hand.set_sitting_out((SEATS[maker].partner,))
    if discard >= 0:
        hand.discarded = DECK[discard]
    hand.tricks = list(map(SEATS.__getitem__, won))
    hand.leader = hand.turn = hand.tricks[-1]
    return hand


_OwedHand = tuple[
    Deal | str | None, list[int], int, int, int, int, int, int, bool, _Verdict
]
"""A hand the fast path took (:meth:`Game.replay_hands`), kept until its entries
and result are asked for: its deal (or its line in the writer's form; None by
trick winners), the codes of its other lines (``codes[start:end]``), its number,
dealer and maker (seat ints), trump (suit int), alone and verdict."""
_NO_GAME_YET: Final = Hand(1, SEATS[0], 0)
"""The hand of a game not started: one object for every Game (nothing changes
a hand before ``game dealer=X`` makes the first real one)."""
_STANDARD: Final = Rules()
"""The standard house rules (immutable: one object serves every game)."""


class Game(Record):
    """A table's session: setup, then games one after another.

    ``rules`` and ``names`` are the starting setup; ``players`` and ``rules``
    entries change them.  ``entries`` is everything pushed and not undone.
    """

    _fields = ("rules", "names", "entries")
    _entries_made: int
    _results_made: int
    _owed_count: int

    def __init__(self, rules: Rules = _STANDARD, names: dict[Seat, str] | None = None) -> None:
        self._start = (rules, DEFAULT_NAMES if names is None else dict(names))  # read only
        self._reset()

    @property
    def entries(self) -> list[Entry]:
        """Every entry pushed and not undone.  (The entries and results of the
        hands the replay's fast path took are made when first asked: a replay
        that only checks a log never makes them.)"""
        owed = self._owed
        if self._owed_count:
            entries, event_of = self._entries, _c.EVENTS.__getitem__
            for deal, codes, start, end, *_ in owed[self._entries_made:]:
                if isinstance(deal, str):  # a deal line in the writer's form (codes.read_deal)
                    entries.append(Deal.from_line(deal))
                elif deal is not None:
                    entries.append(deal)
                entries += map(event_of, codes[start:end])  # type: ignore[arg-type]
            self._entries_made, self._owed_count = len(owed), 0
            self._forget_owed()
        return self._entries

    @property
    def results(self) -> list[HandResult]:
        """How each hand of the game under way (or just won) ended."""
        owed = self._owed
        if self._results_made < len(owed):
            self._results += [
                HandResult(number, SEATS[dealer], how, team, points, SEATS[maker],
                           _play.SUITS[trump], alone, None, maker_tricks)
                for *_, number, dealer, maker, trump, alone, (how, team, points, maker_tricks)
                in owed[self._results_made:]
            ]
            self._results_made = len(owed)
            self._forget_owed()
        return self._results

    def _forget_owed(self) -> None:
        """Drop the owed hands once both their entries and results are made."""
        if self._entries_made == self._results_made == len(self._owed):
            self._owed.clear()
            self._entries_made, self._results_made = 0, 0

    def _reset(self) -> None:
        self.rules, names = self._start
        self.names = dict(names)
        self._entries: list[Entry] = []
        self._owed: list[_OwedHand] = []
        """Hands the fast path took whose entries or results are not made yet."""
        self._entries_made = 0
        self._results_made = 0
        """How many of ``_owed`` have their entries, and their results, made."""
        self._owed_count = 0
        """The entries that ``_owed`` stands for and are not made yet."""
        self.phase = _SETUP
        self.game_number = 0
        self.score: dict[Team, int] = {_NS: 0, _EW: 0}
        self.start_score: dict[Team, int] = {_NS: 0, _EW: 0}
        """The score the game under way started from (``game dealer=W NS=6 EW=4``)."""
        self._results: list[HandResult] = []
        self.winner: Team | None = None
        self.hand = _NO_GAME_YET
        self.pending_trick: Seat | None = None
        self._legal_cache: tuple[tuple[int, Seat | None], list[Entry]] | None = None

    # --- the public surface ------------------------------------------------

    def push(self, entry: Entry) -> None:
        """Apply ``entry``, or raise IllegalEntry (the game is left unchanged)."""
        reason = self.offer(entry)
        if reason is not None:
            raise IllegalEntry(reason)

    def offer(self, entry: Entry) -> str | None:
        """Apply ``entry`` and return None, or return why it is refused (the game
        is left unchanged).  The one door for single entries: :meth:`push` and the
        log's replay both come through here."""
        kind = type(entry)
        if self.phase is _IN_GAME and (self.pending_trick is None or kind is not Trick):
            handler = _HANDLERS.get(kind)
            if handler is not None:
                return handler(self, entry, True)  # the common case, fast
        return self._handle(entry, True)

    def check(self, entry: Entry) -> str | None:
        """Why ``entry`` may not come next, or None when it may."""
        return self._handle(entry, False)

    def _handle(self, entry: Entry, apply: bool) -> str | None:
        kind = type(entry)
        if kind not in _HANDLERS:
            return f"{kind.__name__} is not a table entry"
        if kind is Trick and self.pending_trick is not None:
            return self._trick_result(entry, apply)  # type: ignore[arg-type]
        if self.phase is not _IN_GAME and kind not in _SETUP_KINDS:
            if self.phase is _SETUP:
                return "no game yet: start one with the first dealer (game dealer=SEAT)"
            return self.game_over_text() + ": start a new game or undo"
        return _HANDLERS[kind](self, entry, apply)

    def undo(self) -> Entry:
        """Remove the last entry and return it; raises IllegalEntry if none."""
        if not self.entries:
            raise IllegalEntry("nothing to undo: this is the start")
        kept = self.entries[:-1]
        removed = self.entries[-1]
        self._reset()
        for entry in kept:
            self._handle(entry, True)
        return removed

    def verify(self, check: ScoreCheck | WinnerCheck) -> None:
        """Check a ``score``/``winner`` line against the state; raises IllegalEntry."""
        reason = self.verify_reason(check)
        if reason is not None:
            raise IllegalEntry(reason)

    def verify_reason(self, check: ScoreCheck | WinnerCheck, apply: bool = True) -> str | None:
        """Why a ``score``/``winner`` line does not match the state, or None.

        (``apply`` is ignored: a check line changes nothing.  It is there so the
        log's fast path can call this like an entry's handler.)
        """
        ns, ew = self.score[_NS], self.score[_EW]
        if type(check) is ScoreCheck:
            if check.ns != ns or check.ew != ew:
                return (
                    f"score check: the score is NS {ns}, EW {ew}, "
                    f"not NS {check.ns}, EW {check.ew}"
                )
            return None
        assert isinstance(check, WinnerCheck)
        if self.winner is None:
            return f"winner check: no side has won yet (NS {ns}, EW {ew})"
        if self.winner is not check.team:
            return f"winner check: {self.winner} won, not {check.team}"
        return None

    def legal_entries(self) -> list[Entry]:
        """Every entry that may come next, except ``players``/``rules``/``deal``
        lines (free text); each one is accepted by :meth:`push`."""
        key = (len(self.entries), self.pending_trick)
        if self._legal_cache is None or self._legal_cache[0] != key:
            candidates = dict.fromkeys(self._candidates())
            legal = [entry for entry in candidates if self.check(entry) is None]
            self._legal_cache = (key, legal)
        return list(self._legal_cache[1])

    @property
    def bidding_round(self) -> int | None:
        """The bidding round under way: 1, or 2 once four passes are recorded;
        None when no bid is expected (no game, trump made, a dealt hand's upcard owed)."""
        hand = self.hand
        if self.phase is not _IN_GAME or hand.maker is not None:
            return None
        if hand.held is not None and hand.upcard_card is None:
            return None
        return 1 if hand.passes < 4 else 2

    @property
    def hands_played(self) -> int:
        """Hands finished in the current game (thrown-in hands included)."""
        return len(self.results)

    @property
    def dealer(self) -> Seat | None:
        """Who deals the hand in progress (or next); None when no game is on."""
        return self.hand.dealer if self.phase is _IN_GAME else None

    @property
    def leader(self) -> Seat | None:
        """Who leads the current trick (before the call: left of the dealer)."""
        return self.hand.leader if self.phase is _IN_GAME else None

    def name(self, seat: Seat) -> str:
        return self.names[seat]

    def is_sitting_out(self, seat: Seat) -> bool:
        return seat in self.hand.sitting_out

    @property
    def expected(self) -> str:
        """What entry the table owes next, in words."""
        kind = self.expected_kind
        hand = self.hand
        if kind == "game":
            if self.phase is _GAME_OVER:
                return self.game_over_text() + ": new game?"
            return "new game: who deals first?"
        if kind == "upcard":
            return "the upcard (this hand was dealt)"
        if kind == "bid":
            if hand.passes:
                return f"{self.name(hand.bid_turn)} to bid, round {self.bidding_round}"
            return "the call: who made trump, which suit, alone?"
        if kind == "discard":
            return f"{self.name(hand.dealer)} (dealer) to discard"
        if kind == "play":
            return f"{self.name(hand.to_play)} to play to trick {len(hand.tricks) + 1}"
        return f"who won trick {len(hand.tricks) + 1}?"

    @property
    def expected_kind(self) -> str:
        """``game``, ``upcard``, ``bid``, ``discard``, ``play`` or ``trick``."""
        hand = self.hand
        if self.phase is not _IN_GAME:
            return "game"
        if hand.maker is None:
            if hand.held is not None and hand.upcard_card is None:
                return "upcard"
            return "bid"
        if hand.discard_pending:
            return "discard"
        if hand.card_level:
            return "play"
        return "trick"

    # --- helpers ------------------------------------------------------------

    def game_over_text(self) -> str:
        """``game over: NS won 10-7`` (only when the game is over)."""
        assert self.winner is not None
        other = self.winner.other
        return f"game over: {self.winner} won {self.score[self.winner]}-{self.score[other]}"

    def _sits_out(self, seat: Seat) -> str:
        hand = self.hand
        if hand.lone_defender is not None and seat is hand.lone_defender.partner:
            return f"{self.name(seat)} sits out: {self.name(hand.lone_defender)} defends alone"
        assert hand.maker is not None
        return f"{self.name(seat)} sits out: {self.name(hand.maker)} went alone"

    def _candidates(self) -> Iterable[Entry]:
        """The entries that may be legal now, in the order ``legal_entries`` lists
        them; :meth:`legal_entries` checks each.  Kinds this state refuses
        whatever their fields (the handlers' first checks) are left out, so
        fewer are checked; the tests prove the list is the same."""
        yield from self._hand_candidates()
        hand = self.hand
        if self.phase is _IN_GAME and not hand.tricks and not hand.trick:
            yield Misdeal()

    def _hand_candidates(self) -> Iterable[Entry]:
        """:meth:`_candidates` but the misdeal."""
        hand = self.hand
        if self.pending_trick is not None:
            yield Trick(self.pending_trick)
        if self.phase is not _IN_GAME:
            yield from (NewGame(seat) for seat in SEATS)
            return
        if hand.maker is None:
            if hand.upcard_suit is None and not hand.passes:  # the upcard, before the bidding
                if hand.held is None:
                    yield from (Upcard(suit) for suit in Suit)
                yield from (Upcard(card.suit, card) for card in DECK)
            if hand.held is not None and hand.upcard_card is None:
                return  # a dealt hand's bidding waits for its upcard
            turn = hand.bid_turn
            for seat in SEATS if not hand.passes else (turn,):  # the first bid: any seat
                if seat is turn:
                    yield Pass(seat)
                for alone in (False, True):
                    yield Order(seat, alone)
                    for suit in Suit:
                        yield Call(seat, suit, alone)
                        yield Make(seat, suit, alone)
            return
        if (self.rules.defend_alone and hand.alone and hand.lone_defender is None
                and len(self.entries) == hand.call_index):
            yield from (Defend(seat) for seat in SEATS)
        if hand.round != 2 and hand.discarded is None and not hand.tricks and not hand.trick:
            yield from (Discard(card) for card in DECK)
        if hand.playable:
            to_play = hand.to_play
            yield from (Play(to_play, card) for card in DECK)
        if not hand.trick:
            if not hand.card_level:
                yield from (Trick(seat) for seat in SEATS)
            yield from (Tricks(count) for count in range(6))
        yield from (Renege(seat) for seat in SEATS)

    # --- applying ------------------------------------------------------------

    def _record(self, entry: Entry) -> None:
        """Called by each handler once its checks passed, before it changes state."""
        self.entries.append(entry)
        self.pending_trick = None

    def _end_hand(self, maker_tricks: int | None = None, reneger: Seat | None = None) -> None:
        hand = self.hand
        hand.playable = False
        result = score_hand(
            self.rules, hand.number, hand.dealer, hand.maker, hand.trump, hand.alone,
            hand.lone_defender, maker_tricks, reneger,
        )
        if not self._add_result(result):
            self.hand = Hand(hand.number + 1, _LEFT[hand.dealer], len(self.entries))

    def _add_result(self, result: HandResult) -> bool:
        """Record a finished hand's result and its points; True when they win the
        game (which is then over)."""
        self.results.append(result)
        team = result.team
        if team is None:
            return False
        score = self.score
        score[team] += result.points
        if _wins(self.rules, score[team], score[_OTHER[team]]):
            self.winner = team
            self.phase = _GAME_OVER
            return True
        return False

    def _set_first_leader(self) -> None:
        hand = self.hand
        assert hand.maker is not None
        hand.leader = hand.turn = _first_leader(
            self.rules, hand.dealer, hand.maker, hand.alone, hand.lone_defender, hand.next_seat
        )

    # --- the replay's fast path: whole hands -----------------------------------

    def replay_hands(self, lines: Sequence[str], codes: list[int], index: int) -> int:
        """Apply the whole hands that start at ``lines[index]``, and the score check
        lines after each, from the lines and their codes (:mod:`euchre_core.codes`);
        return the index of the first line not applied (``index`` when none was).

        A hand is taken whole when it has one of the usual shapes and every line
        of it is legal: a deal, the upcard card, passes in turn, the call, the
        dealer's discard and five tricks of plays (each trick maybe followed by
        its ``trick`` line); or by trick winners: the upcard (card or suit),
        passes, the call and five ``trick`` lines.  The state is then as if each
        line had been pushed.  Anything else stops it, at a hand's first line or
        at a check line, and goes line by line through :meth:`offer`, which says
        what is wrong.  The tests prove the two ways agree, line for line.
        """
        hand, made = self.hand, len(self._entries)
        length = made + self._owed_count  # of self.entries
        if self.phase is not _IN_GAME or length != hand.start:
            return index
        rules, owed, score = self.rules, self._owed, self.score
        (verdicts, shapes, bids), target = _fast_tables(rules), rules.target
        kinds, score_of = _c.KIND, _c.SCORE_OF
        read_deal = _c.read_deal
        upcard_of, discard_of, trick_of = _c.UPCARD_CARD_OF, _c.DISCARD_CARD_OF, _c.TRICK_SEAT_OF
        lead = _play.LEAD
        number, dealer = hand.number, _SEAT_INDEX[hand.dealer]
        ns, ew = score[_NS], score[_EW]
        run_of = _PASS_RUNS
        first, count = index, len(codes)
        while index < count:
            code = codes[index]
            try:
                if code == _c.DEAL_CODE:  # a card-level hand
                    text = lines[index]
                    held = read_deal(text)
                    deal: Deal | str | None = text  # the writer's form: its event made when asked
                    if held is None:  # another spelling (a checksum, a comment...), or wrong
                        dealt = _c.deal_of(text)
                        if dealt is None:
                            break
                        deal, held = dealt
                    at = index + 2
                    upcard = upcard_of[codes[index + 1]]
                    if upcard < 0 or held & _ALL_LANES[upcard]:  # not a card, or a dealt one
                        break
                    up_suit = upcard // 6
                elif kinds[code] == _c.OPEN:  # maybe a hand by trick winners
                    deal = held = None
                    at, upcard, up_suit = index + 1, upcard_of[code], _c.UPCARD_SUIT_OF[code]
                    if up_suit < 0:
                        break
                else:
                    break
                # The bidding: passes in turn from the dealer's left (not eight: a
                # hand thrown in goes line by line), then a bid, judged by Game._bid.
                run, passes = run_of[dealer], 0
                while codes[at] == run[passes]:
                    at += 1
                    passes += 1
                code = codes[at]
                maker = _BID_SEAT_OF[code]
                if passes == 8 or maker < 0:
                    break
                key = ((code * 8 + passes) * 4 + up_suit) * 4 + dealer  # one int per bid
                try:
                    bid = bids[key]
                except KeyError:
                    bid = bids[key] = _bid_verdict(rules, code, passes, up_suit, dealer)
                if bid is None:
                    break
                bid_round, trump = bid
                alone = _ALONE_OF[code]
                at += 1
                if held is None:  # five trick lines, no partner of a lone maker
                    end = at + 5
                    winners = tuple(map(trick_of.__getitem__, codes[at:end]))
                    if len(winners) != 5 or min(winners) < 0:
                        break
                    if alone and (maker + 2) % 4 in winners:
                        break
                    start = index
                    checked, discard = True, -1  # (no trick is owed its line)
                else:
                    discard = -1
                    if bid_round == 1:  # the dealer picks up the upcard and discards
                        bits = _LANE_BITS[dealer]
                        held += bits[upcard]
                        discard = discard_of[codes[at]]
                        if discard < 0 or not held & bits[discard]:
                            break
                        held -= bits[discard]
                        at += 1
                    size, orders, leaders, five_tricks = shapes[alone][maker]
                    checked = trick_of[codes[at + size]] >= 0  # each trick's winner checked
                    end = at + 5 * (size + checked)
                    plays = codes[at:end]
                    if checked:
                        checks = plays[size::size + 1]
                        del plays[size::size + 1]
                    done = five_tricks(held, leaders[dealer], plays, lead[trump], orders)
                    if done is None:
                        break
                    held, winners = done
                    if checked and tuple(map(trick_of.__getitem__, checks)) != winners:
                        break
                    start = index + 1  # (the deal line's event is the deal)
            except (IndexError, ValueError):  # the lines end early, or a line is not a play
                break
            verdict = verdicts[maker][alone][winners.count(1) + winners.count(3)]  # E-W tricks
            _, team, points, _ = verdict
            owed.append((deal, codes, start, end, number, dealer, maker, trump, alone, verdict))
            length += end - index
            if team is _NS:
                ns += points
                won = ns >= target and _wins(rules, ns, ew)
            else:
                ew += points
                won = ew >= target and _wins(rules, ew, ns)
            if won:
                score[_NS], score[_EW] = ns, ew
                self.winner, self.phase = team, _GAME_OVER
                # the game's last hand stays, as the handlers leave it
                read = (end, deal, held, upcard, up_suit, passes, maker, trump,
                        bid_round, alone, discard, winners, checked)
                self._owed_count = length - made
                self.hand = _played_hand(number, SEATS[dealer], length - (end - index), read)
                self.pending_trick = None if checked else SEATS[winners[-1]]
                return end
            number, dealer, index = number + 1, NEXT_DEALER[dealer], end
            try:  # the score lines that agree (any other check line: verify_reason says why)
                while score_of[codes[index]] == (ns, ew):
                    index += 1
            except IndexError:  # the lines end here
                pass
        score[_NS], score[_EW] = ns, ew
        if index != first:
            self._owed_count = length - made
            self.hand = Hand(number, SEATS[dealer], length)
            self.pending_trick = None if checked else SEATS[winners[-1]]  # the last hand's
        return index

    # --- one handler per entry kind: checks, then (when applying) changes ---
    # Each returns the reason the entry is refused, or None.  With apply=False
    # it only checks; with apply=True it records the entry and changes state.

    def _players(self, entry: Players, apply: bool) -> str | None:
        if apply:
            hand = self.hand
            if self.phase is _IN_GAME and hand.start == len(self.entries):
                hand.start += 1  # names between hands: the next line still starts the hand
            self._record(entry)
            self.names.update(entry.names)
        return None

    def _set_rules(self, entry: SetRules, apply: bool) -> str | None:
        if self.phase is _IN_GAME:
            return "house rules change only between games"
        if apply:
            self._record(entry)
            self.rules = entry.rules
        return None

    def _new_game(self, entry: NewGame, apply: bool) -> str | None:
        if self.phase is _IN_GAME:
            return f"a game is in progress (hand {self.hand.number}): finish it or undo"
        ns, ew = entry.ns, entry.ew
        if ns or ew:
            reason = self._start_score_problem(ns, ew)
            if reason is not None:
                return reason
        if apply:
            self._record(entry)
            self.phase = _IN_GAME
            self.game_number += 1
            self.score = {_NS: ns, _EW: ew}
            self.start_score = {_NS: ns, _EW: ew}
            self._results = []
            self._results_made = len(self._owed)  # the last game's, if any: not wanted now
            self._forget_owed()
            self.winner = None
            self.hand = Hand(1, entry.dealer, len(self.entries))
        return None

    def _start_score_problem(self, ns: int, ew: int) -> str | None:
        """Why a game may not start from NS ``ns``, EW ``ew`` (a side has
        already won it under the house rules), or None."""
        rules = self.rules
        for team, mine, theirs in ((_NS, ns, ew), (_EW, ew, ns)):
            if _wins(rules, mine, theirs):
                if rules.win_by_two:
                    return (f"starting score NS {ns}, EW {ew}: {team} has already won "
                            f"(target {rules.target}, win by two)")
                return (f"starting score NS {ns}, EW {ew}: {team} is not below "
                        f"the target ({rules.target})")
        return None

    def _misdeal(self, entry: Misdeal, apply: bool) -> str | None:
        """A misdeal: the hand so far is void and the same dealer deals again."""
        hand = self.hand
        if hand.tricks or hand.trick:
            return (f"too late for a misdeal: play has begun (trick {len(hand.tricks) + 1}); "
                    "finish the hand, or undo back to the bidding")
        if apply:
            self._record(entry)
            self.hand = Hand(hand.number, hand.dealer, len(self.entries))
        return None

    def _deal(self, entry: Deal, apply: bool) -> str | None:
        hand = self.hand
        if len(self.entries) != hand.start:
            return "deal must be the first line of a hand"
        if apply:
            self._record(entry)
            hand.held = _play.lanes(
                [[_CARD_INDEX[card] for card in cards] for cards in entry.hands]
            )
            hand.card_level = True
        return None

    def _upcard(self, entry: Upcard, apply: bool) -> str | None:
        hand = self.hand
        if hand.upcard_suit is not None:
            shown = hand.upcard_card or hand.upcard_suit.word
            return f"the upcard is already entered ({shown})"
        if hand.maker is not None or hand.passes:
            return "the upcard comes before the bidding"
        if hand.held is not None:
            if entry.card is None:
                return "this hand was dealt: enter the upcard card, not just its suit"
            for seat in SEATS:
                if hand.holds(seat, entry.card):
                    return f"{entry.card} was dealt to {self.name(seat)}: it cannot be the upcard"
        if apply:
            self._record(entry)
            hand.upcard_suit = entry.suit
            hand.upcard_card = entry.card
        return None

    def _bidding_closed(self) -> str | None:
        hand = self.hand
        if hand.maker is not None:
            assert hand.trump is not None
            return f"trump is already made: {self.name(hand.maker)} made {hand.trump.word}"
        if hand.held is not None and hand.upcard_card is None:
            return "this hand was dealt: enter its upcard first"
        return None

    def _pass(self, entry: Pass, apply: bool) -> str | None:
        reason = self._bidding_closed()
        if reason is not None:
            return reason
        hand = self.hand
        turn = hand.bid_turn
        if entry.seat is not turn:
            return f"it is {self.name(turn)}'s turn to bid, not {self.name(entry.seat)}'s"
        if hand.passes == 7 and self.rules.stick_the_dealer:
            return f"stick the dealer: {self.name(hand.dealer)} must name a suit"
        if apply:
            self._record(entry)
            hand.passes += 1
            if hand.passes == 8:
                self._end_hand()
        return None

    def _bid(self, entry: Order | Call | Make, apply: bool) -> str | None:
        reason = self._bidding_closed()
        if reason is not None:
            return reason
        hand = self.hand
        upcard = hand.upcard_suit
        bid_round: int | None
        if isinstance(entry, Order):
            if upcard is None:
                return "order up needs the upcard: enter it first, or use make"
            suit, bid_round = upcard, 1
        elif isinstance(entry, Call):
            suit, bid_round = entry.suit, 2
        else:
            suit = entry.suit
            bid_round = suit_round(suit, upcard)
        if bid_round == 2 and suit is upcard:
            return f"{suit.word} was turned down: name another suit"
        if hand.passes:
            current = self.bidding_round
            if bid_round == 1 and current == 2:
                turned_down = upcard.word if upcard is not None else "the upcard's suit"
                return f"{turned_down} was turned down: name another suit"
            if bid_round == 2 and current == 1:
                upcard_text = f"{upcard.word} (the upcard)" if upcard is not None else "the upcard"
                return (
                    f"round 1: only {upcard_text} can be ordered up; "
                    f"{self.name(hand.bid_turn)} may order up or pass"
                )
            turn = hand.bid_turn
            if entry.seat is not turn:
                return f"it is {self.name(turn)}'s turn to bid, not {self.name(entry.seat)}'s"
            bid_round = current
        if (
            self.rules.canadian_loner
            and bid_round == 1
            and entry.seat is hand.dealer.partner
            and not entry.alone
        ):
            return (
                f"Canadian loner: {self.name(entry.seat)} ordered up partner "
                f"{self.name(hand.dealer)} and must go alone"
            )
        if apply:
            self._record(entry)
            hand.maker, hand.trump, hand.alone = entry.seat, suit, entry.alone
            hand.round = bid_round
            hand.call_index = len(self.entries)
            if entry.alone:
                hand.set_sitting_out((entry.seat.partner,))
            if hand.held is not None and bid_round == 1:
                assert hand.upcard_card is not None
                hand.held += _PLAY_BIT[hand.dealer][hand.upcard_card]
                hand.discard_pending = True
            hand.playable = not hand.discard_pending
            self._set_first_leader()
        return None

    def _defend(self, entry: Defend, apply: bool) -> str | None:
        hand = self.hand
        if hand.maker is None:
            return self._no_trump_yet()
        if not self.rules.defend_alone:
            return "defending alone is not played here (house rule defend-alone=off)"
        if not hand.alone:
            return "a defender may go alone only against a lone maker"
        if hand.lone_defender is not None:
            return f"{self.name(hand.lone_defender)} already defends alone"
        if len(self.entries) != hand.call_index:
            return "defending alone is declared right after the lone call"
        if entry.seat.team is hand.maker.team:
            return f"{self.name(entry.seat)} is on the makers' side"
        if apply:
            self._record(entry)
            hand.lone_defender = entry.seat
            hand.set_sitting_out((*hand.sitting_out, entry.seat.partner))
            self._set_first_leader()
        return None

    def _discard(self, entry: Discard, apply: bool) -> str | None:
        hand = self.hand
        if hand.maker is None:
            return self._no_trump_yet()
        dealer = self.name(hand.dealer)
        if hand.round == 2:
            return "the upcard was turned down: nobody discards"
        if hand.discarded is not None:
            return f"{dealer} (dealer) already discarded"
        if hand.tricks or hand.trick:
            return "too late to discard: play has begun"
        if hand.held is not None:
            if not hand.holds(hand.dealer, entry.card):
                return f"{dealer} (dealer) does not hold {entry.card}"
        elif entry.card in hand.played:
            return f"{entry.card} was already played"
        if apply:
            self._record(entry)
            hand.discarded = entry.card
            hand.discard_pending = False
            hand.playable = not hand.by_winner
            if hand.held is not None:
                hand.held -= _PLAY_BIT[hand.dealer][entry.card]
        return None

    def _play(self, entry: Play, apply: bool) -> str | None:
        return self.play_run((entry,), apply)[1]

    def play_run(self, plays: Sequence[Play], apply: bool = True) -> tuple[int, str | None]:
        """Check and apply consecutive plays: the one place the rules of play are
        explained.

        Returns how many were applied and why the next one was refused (None
        when all were applied, or when the hand ended and the rest were left
        for the next call).  With ``apply=False`` only ``plays[0]`` is checked
        and nothing changes.  The checks use the tables of :mod:`euchre_core.play`,
        as its generated trick checker does; the tests prove the two agree.
        """
        hand = self.hand
        if not hand.playable:
            return 0, self._cannot_play_yet()
        held, trump = hand.held, hand.trump
        assert trump is not None  # playable: trump is made
        t = _SUIT_INDEX[trump]
        effective, suit_mask = _play.EFFECTIVE[t], _play.SUIT_MASK[t]
        next_seat, trick_size = hand.next_seat, hand.trick_size
        turn, led, trick = hand.turn, hand.led, hand.trick
        reason: str | None = None
        applied = 0
        for applied, entry in enumerate(plays):  # noqa: B007 - used after the loop
            seat = entry.seat
            if seat is not turn:
                reason = self._out_of_turn(seat, turn)
                break
            card = entry.card
            if held is not None:
                lane = _LANE * _SEAT_INDEX[seat]
                bit = 1 << (lane + _CARD_INDEX[card])
                if not held & bit:
                    reason = f"{self.name(seat)} does not hold {card}"
                    break
                if led is not None and effective[_CARD_INDEX[card]] != _SUIT_INDEX[led]:
                    follow = held >> lane & suit_mask[_SUIT_INDEX[led]]
                    if follow:
                        reason = self._must_follow(seat, card, led, follow)
                        break
                if not apply:
                    break
                held -= bit
            else:
                reason = self._play_unseen(seat, card)
                if reason is not None or not apply:
                    break
                if led is not None and _play.SUITS[effective[_CARD_INDEX[card]]] is not led:
                    hand.showed_out.setdefault((seat, led), len(hand.tricks) + 1)
                hand.played[card] = (len(hand.tricks) + 1, seat)
                hand.card_level = True
            trick.append(entry)
            if led is None:  # the lead
                led = _play.SUITS[effective[_CARD_INDEX[card]]]
            if len(trick) < trick_size:
                turn = next_seat[seat]
                continue
            winner = trick_winner([(play.seat, play.card) for play in trick], trump)
            turn = hand.leader = winner  # the trick is complete: its winner leads
            hand.tricks.append(winner)
            trick, led = [], None
            if len(hand.tricks) == 5:
                applied += 1
                break
        else:
            applied = len(plays)
        if applied:
            self.entries.extend(plays[:applied])
            self.pending_trick = None if trick else turn
        hand.held, hand.turn, hand.led, hand.trick = held, turn, led, trick
        if len(hand.tricks) == 5:
            self._end_hand(maker_tricks=self._maker_tricks())
        return applied, reason

    def play_codes(self, codes: list[int], plays: Sequence[Play]) -> tuple[int, str | None]:
        """:meth:`play_run` for the replay: the same plays, also given as play codes
        (``24 * seat + card``), whole tricks checked at once by the generated
        checker of :mod:`euchre_core.play`.

        Anything the checker does not take (a trick under way, unknown hands, a
        bad play) goes to :meth:`play_run`, which explains the first bad play.
        """
        hand = self.hand
        held = hand.held
        size = hand.trick_size
        tricks = min(len(codes) // size, 5 - len(hand.tricks))
        if not hand.playable:  # no game, game over, no trump yet...: offer says which
            return 0, self.offer(plays[0])
        if held is None or hand.trick or tricks < 1:
            return self.play_run(plays)
        count = tricks * size
        t = _SUIT_INDEX[hand.trump]  # type: ignore[index]  # playable: trump is made
        done = _play.trick_block(size, tricks)(
            held, _SEAT_INDEX[hand.turn], codes[:count] if count < len(codes) else codes,
            _play.LEAD[t], hand.orders,
        )
        if done is None:
            return self.play_run(plays)
        hand.held, winners = done
        won = [SEATS[winner] for winner in winners]
        hand.tricks.extend(won)
        hand.leader = hand.turn = won[-1]
        self.entries.extend(plays[:count] if count < len(plays) else plays)
        self.pending_trick = won[-1]
        if len(hand.tricks) == 5:
            self._end_hand(maker_tricks=self._maker_tricks())
        if count < len(plays):
            more, reason = self.play_codes(codes[count:], plays[count:])
            return count + more, reason
        return count, None

    @staticmethod
    def _no_trump_yet(then: str = "enter the call first") -> str:
        return f"{NO_TRUMP_YET}: {then}"

    def _cannot_play_yet(self) -> str:
        hand = self.hand
        if hand.maker is None:
            return self._no_trump_yet()
        if hand.by_winner:
            return "this hand's tricks are entered by winner: plays cannot be mixed in"
        return f"{self.name(hand.dealer)} (dealer) must discard first"

    def _out_of_turn(self, seat: Seat, to_play: Seat) -> str:
        if seat in self.hand.sitting_out:
            return self._sits_out(seat)
        return f"it is {self.name(to_play)}'s turn to play, not {self.name(seat)}'s"

    def _play_unseen(self, seat: Seat, card: Card) -> str | None:
        """Checks for a play when the hands are unknown: the card is still
        unseen, and the seat has not shown out of its suit (a renege)."""
        hand = self.hand
        if card in hand.played:
            trick_number, by = hand.played[card]
            return f"{card} was already played (trick {trick_number}, {self.name(by)})"
        if card is hand.discarded:
            return f"{card} was the dealer's discard"
        if card is hand.upcard_card:
            if hand.round == 2:
                return f"{card} was turned down: it is out of play"
            if hand.round == 1 and seat is not hand.dealer:
                return f"{card} went to the dealer, {self.name(hand.dealer)}"
        assert hand.trump is not None
        suit = _play.SUITS[_play.EFFECTIVE[_SUIT_INDEX[hand.trump]][_CARD_INDEX[card]]]
        showed_out = hand.showed_out.get((seat, suit))
        if showed_out is not None:
            return (
                f"renege: {self.name(seat)} showed out of {suit.word} on trick {showed_out}, "
                f"then played {card}; enter 'renege {seat}'"
            )
        return None

    def _must_follow(self, seat: Seat, card: Card, led: Suit, follow_mask: int) -> str:
        trump = self.hand.trump
        assert trump is not None
        follow = [DECK[index] for index in range(_LANE) if follow_mask >> index & 1]
        held = " ".join(str(c) for c in follow)
        text = f"{self.name(seat)} must follow {led.word} (holds {held})"
        if is_left_bower(card, trump):
            text += f"; {card} is the left bower, a {trump.word[:-1]}"
        elif any(is_left_bower(c, trump) for c in follow):
            text += f"; the left bower is a {trump.word[:-1]}"
        return text

    def _trick_in_progress(self) -> str:
        hand = self.hand
        return f"trick {len(hand.tricks) + 1} is being played: {self.name(hand.to_play)} to play"

    def _maker_tricks(self) -> int:
        maker = self.hand.maker
        assert maker is not None
        return self.hand.tricks_of(maker.team)

    def _trick_result(self, entry: Trick, apply: bool) -> str | None:
        """A ``trick`` line right after a trick's plays: a check of its winner."""
        winner = self.pending_trick
        assert winner is not None
        if entry.seat is not winner:
            return (
                f"trick check: {self.name(winner)} won that trick (worked out from the plays), "
                f"not {self.name(entry.seat)}"
            )
        if apply:
            self._record(entry)
            if self.hand.start == len(self.entries) - 1:
                self.hand.start += 1  # the last trick's check came after its hand ended
        return None

    def _between_tricks(self) -> str | None:
        """Why a trick's winner or a claim may not come now (no trump yet, or a
        trick's plays under way), or None."""
        if self.hand.maker is None:
            return self._no_trump_yet()
        if self.hand.trick:
            return self._trick_in_progress()
        return None

    def _trick(self, entry: Trick, apply: bool) -> str | None:
        reason = self._between_tricks()
        if reason is not None:
            return reason
        hand = self.hand
        if hand.card_level:
            return "this hand is entered card by card: enter plays, or claim with 'tricks N'"
        if entry.seat in hand.sitting_out:
            return self._sits_out(entry.seat)
        if apply:
            self._record(entry)
            hand.by_winner = True
            hand.discard_pending = hand.playable = False
            hand.tricks.append(entry.seat)
            hand.leader = hand.turn = entry.seat
            if len(hand.tricks) == 5:
                self._end_hand(maker_tricks=self._maker_tricks())
        return None

    def _tricks(self, entry: Tricks, apply: bool) -> str | None:
        reason = self._between_tricks()
        if reason is not None:
            return reason
        hand = self.hand
        won = self._maker_tricks()
        left = 5 - len(hand.tricks)
        if not won <= entry.count <= won + left:
            return (
                f"the makers have {won} trick{'s' if won != 1 else ''} with {left} to play: "
                f"they finish with {won} to {won + left}, not {entry.count}"
            )
        if apply:
            self._record(entry)
            self._end_hand(maker_tricks=entry.count)
        return None

    def _renege(self, entry: Renege, apply: bool) -> str | None:
        if self.hand.maker is None:
            return self._no_trump_yet("a renege is called during play")
        if entry.seat in self.hand.sitting_out:
            return self._sits_out(entry.seat)
        if apply:
            self._record(entry)
            self._end_hand(reneger=entry.seat)
        return None


_SETUP_KINDS: Final = frozenset({Players, SetRules, NewGame})

_Handler = Callable[[Game, Any, bool], "str | None"]
_HANDLERS: Final[dict[type, _Handler]] = {
    Players: Game._players,
    SetRules: Game._set_rules,
    NewGame: Game._new_game,
    Deal: Game._deal,
    Upcard: Game._upcard,
    Pass: Game._pass,
    Order: Game._bid,
    Call: Game._bid,
    Make: Game._bid,
    Defend: Game._defend,
    Discard: Game._discard,
    Play: Game._play,
    Trick: Game._trick,
    Tricks: Game._tricks,
    Renege: Game._renege,
    Misdeal: Game._misdeal,
}
