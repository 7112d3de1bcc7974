"""Presses per hand, by kind of hand, in each layout, through the referee app
(issues 11 and 23).

The hands are random but played out: four simple players (euchre_core's rules
of play: follow the effective suit led, the left bower is a trump) are dealt
a shuffled deck and bid it: in turn from the dealer's left, order up with
three trumps (the dealer counts the upcard), else in round 2 name the best
other suit with three, the dealer stuck; the maker goes alone with four
trumps and the right bower; under the defend-alone house rule a defender
with two trumps defends alone against a loner.  Each trick is played
(lead the best trump if a maker, else the best card; follow cheaply, win when
the partner is not winning; the seats sitting out skipped), so the trick
winners fall as they do at a table, not uniformly.

The same hands are entered at several tables, each in both layouts, as a
table would enter them:
- ``plain``: the maker's seat and the trump suit (and alone), then each
  trick's winner;
- ``bidding``: the upcard's suit, each pass in turn, then the call, then the
  tricks;
- ``claim``: as plain, but after three tricks the makers' total is claimed;
- ``defend``: as plain, under the defend-alone house rule.
Seats layout: a seat, a suit button, ALONE, OK, a menu item's button.  Cursor
layout: PREV/NEXT the shorter way round to each option, then OK (a claim's
count straight from the trick list when it offers it, else through the claim
menu).  The comparison is fair: both layouts enter the same facts, entry for
entry (every hand's journal is checked against the hand, in each layout), the
new game before a hand is counted in neither, and each table waits out each
hand's result screen (the fake clock moves on).  The fake clock also moves
:data:`PRESS_S` (1.0 s) with each press, a table's pace between two presses,
so that no press is taken for the quick second tap of the one before
(``firmware.buttons.CONFIRM_GUARD_S``, 0.6 s): the presses counted are the
ones a table makes, none refused.

A hand counts towards one kind per table (:func:`kind`).  The cursor layout's
presses are compared with the seats layout's for the same hands: the goal
(issue 23) is at most 1.5x for every kind, by the mean.

Run:  .venv/bin/python bench/presses.py [--hands 500] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from euchre_core import Rules  # noqa: E402
from euchre_core.cards import DECK, POWER, SEATS, SUIT_OF, Card, Seat, Suit  # noqa: E402
from euchre_core.events import Defend, NewGame, Pass, Trick, Tricks, Upcard, bid_for  # noqa: E402
from firmware.app import Referee  # noqa: E402
from firmware.buttons import ALONE, BUTTON_BY_SUIT, NEXT, OK, PREV  # noqa: E402
from firmware.config import Config  # noqa: E402
from firmware.journal import Store  # noqa: E402

GOAL = 1.5
"""The cursor layout's presses at most this many times the seats layout's."""

STYLES = ("plain", "bidding", "claim", "defend")
"""The tables: how each enters the hands (the module's docstring)."""

CLAIM_AFTER = 3
"""The ``claim`` table claims the rest after this many tricks."""

PRESS_S = 1.0
"""Seconds between two presses at the table (the fake clock moves this much a
press): longer than the quick second tap that asks instead of entering."""

_RAM = "/dev/shm" if Path("/dev/shm").is_dir() else None
"""The journals' directory: in RAM, so that the syncs of each press cost nothing."""


@dataclass(frozen=True)
class Hand:
    dealer: Seat
    upcard: Suit
    passes: int
    """Passes before the call, in turn from the dealer's left (0-7)."""
    maker: Seat
    trump: Suit
    alone: bool
    defender: Seat | None
    """Who defends alone (only under the defend-alone house rule)."""
    winners: tuple[Seat, ...]

    @property
    def makers_tricks(self) -> int:
        return sum(winner.team is self.maker.team for winner in self.winners)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _trumps(cards: list[Card], trump: Suit) -> int:
    return sum(SUIT_OF[trump][card] is trump for card in cards)


def _strength(cards: list[Card], trump: Suit) -> int:
    return sum(POWER[trump][trump][card] for card in cards if SUIT_OF[trump][card] is trump)


def _goes_alone(cards: list[Card], trump: Suit) -> bool:
    return _trumps(cards, trump) >= 4 and Card.from_str(f"J{trump}") in cards


def _bid(hands: dict[Seat, list[Card]], dealer: Seat,
         upcard: Card) -> tuple[Seat, Suit, int, bool]:
    """Round 1: order up with three trumps (the dealer counts the upcard);
    round 2: name the best other suit with three; the dealer is stuck.
    Returns the maker, trump, the passes before the call, and alone."""
    seat = dealer.left
    for passes in range(4):
        cards = hands[seat] + ([upcard] if seat is dealer else [])
        if _trumps(cards, upcard.suit) >= 3:
            return seat, upcard.suit, passes, _goes_alone(cards, upcard.suit)
        seat = seat.left
    others = [suit for suit in Suit if suit is not upcard.suit]
    for passes in range(4, 8):
        best = max(others, key=lambda suit: _strength(hands[seat], suit))
        if _trumps(hands[seat], best) >= 3 or seat is dealer:
            return seat, best, passes, _goes_alone(hands[seat], best)
        seat = seat.left
    raise AssertionError("the dealer is stuck")  # pragma: no cover


def _choose(cards: list[Card], trump: Suit, led: Suit | None, winning: int,
            partner_winning: bool, makers: bool) -> Card:
    power = POWER[trump]
    if led is None:  # lead
        trumps = [card for card in cards if SUIT_OF[trump][card] is trump]
        if makers and trumps:
            return max(trumps, key=lambda card: power[trump][card])
        off = [card for card in cards if SUIT_OF[trump][card] is not trump] or cards
        return max(off, key=lambda card: power[SUIT_OF[trump][card]][card])
    follow = [card for card in cards if SUIT_OF[trump][card] is led] or cards
    beating = [card for card in follow if power[led][card] > winning]
    if beating and not partner_winning:
        return min(beating, key=lambda card: power[led][card])
    return min(follow, key=lambda card: (power[led][card], power[trump][card]))


def random_hand(rng: random.Random, dealer: Seat) -> Hand:
    """A shuffled deal, bid and played out (the module's docstring)."""
    deck = list(DECK)
    rng.shuffle(deck)
    hands = {seat: deck[index * 5:index * 5 + 5] for index, seat in enumerate(SEATS)}
    upcard = deck[20]
    maker, trump, passes, alone = _bid(hands, dealer, upcard)
    if trump is upcard.suit:  # the dealer picks it up and discards the weakest card
        cards = hands[dealer] + [upcard]
        cards.remove(min(cards, key=lambda card: (SUIT_OF[trump][card] is trump,
                                                   POWER[trump][SUIT_OF[trump][card]][card])))
        hands[dealer] = cards
    defender = None
    if alone:
        defender = next((seat for seat in (maker.left, maker.partner.left)
                         if _trumps(hands[seat], trump) >= 2), None)
    out = {maker.partner} if alone else set()
    if defender is not None:
        out.add(defender.partner)
    active = [seat for seat in SEATS if seat not in out]
    leader = dealer.left
    while leader in out:  # the standard lone lead: the next seat left that plays
        leader = leader.left
    winners: list[Seat] = []
    for _ in range(5):
        seat, led, best, best_seat = leader, None, -1, leader
        for _ in range(len(active)):
            card = _choose(hands[seat], trump, led, best,
                           led is not None and best_seat is seat.partner,
                           seat.team is maker.team)
            hands[seat].remove(card)
            if led is None:
                led = SUIT_OF[trump][card]
            if POWER[trump][led][card] > best:
                best, best_seat = POWER[trump][led][card], seat
            seat = seat.left
            while seat in out:
                seat = seat.left
        winners.append(best_seat)
        leader = best_seat
    return Hand(dealer, upcard.suit, passes, maker, trump, alone, defender, tuple(winners))


def kind(hand: Hand, style: str) -> str | None:
    """The kind of hand ``hand`` is at the ``style`` table (None: not
    counted there)."""
    if style == "bidding":
        if hand.passes == 7:
            return "stuck dealer (7 passes, call)"
        if hand.passes >= 4:
            return "round-2 call (4-6 passes)"
        return f"order-up after {hand.passes} pass{'es' if hand.passes != 1 else ''}"
    if style == "defend":
        if not hand.alone:
            return None
        return "defend alone" if hand.defender else "alone, no one defends"
    if style == "claim":
        return None if hand.alone else f"claim after {CLAIM_AFTER} tricks"
    if hand.alone:
        return "going alone"
    tricks = hand.makers_tricks
    return "euchre" if tricks < 3 else "march" if tricks == 5 else "plain, makers 3-4"


class Table:
    """A referee in ``layout``, pressed through its buttons; counts presses."""

    def __init__(self, layout: str, state_dir: Path, rules: Rules | None = None) -> None:
        self.clock = Clock()
        config = Config(state_dir=state_dir, layout=layout,  # type: ignore[arg-type]
                        rules=rules or Rules())
        self.referee = Referee(config, Store(state_dir), renderer=lambda view: view,
                               clock=self.clock)
        self.layout = layout
        self.presses = 0

    def press(self, button: str) -> None:
        self.presses += 1
        self.clock.t += PRESS_S  # a table's pace: no press is a quick second tap
        self.referee.press(button)
        message = self.referee.message
        assert not (message and self.referee.message_is_error), (button, message)

    def pick(self, kind: str, value: object = None) -> None:
        """Cursor layout: move the shorter way round to the option whose
        action is ``kind`` (with the entry or value ``value``), then OK."""
        options = self.referee.step().options
        target = next(index for index, option in enumerate(options)
                      if option.action.kind == kind
                      and value in (option.action.entry, option.action.value))
        count = len(options)
        forward = (target - self.referee.view().cursor) % count
        for _ in range(min(forward, count - forward)):
            self.press(NEXT if forward <= count - forward else PREV)
        assert self.referee.view().cursor == target
        self.press(OK)

    def choose(self, entry: Tricks) -> None:
        """Seats layout: a menu item's button (twice if it turns the page to it)."""
        entries = len(self.referee.game.entries)
        key = next(o.key for o in self.referee.step().options if o.action.entry == entry)
        self.press(key)
        if len(self.referee.game.entries) == entries:
            self.press(key)

    def enter(self, hand: Hand, style: str) -> int:
        """Enter one hand as the ``style`` table does; returns the presses it took."""
        referee = self.referee
        self.clock.t = max(self.clock.t, referee.result_until) + 1  # the result has gone
        before, entries = self.presses, len(referee.game.entries)
        suit, cursor = hand.trump, self.layout == "cursor"
        expected = []
        upcard = None
        if style == "bidding":
            upcard = hand.upcard
            expected.append(f"upcard {upcard}")
            self.pick("entry", Upcard(upcard)) if cursor else self.press(BUTTON_BY_SUIT[upcard])
            seat = hand.dealer.left
            for _ in range(hand.passes):
                expected.append(f"pass {seat}")
                self.pick("entry", Pass(seat)) if cursor else self.press(OK)
                seat = seat.left
        call = bid_for(hand.maker, suit, hand.alone, upcard)
        expected.append(call.line())
        if cursor:
            self.pick("seat", str(hand.maker))
            self.pick("confirm", call)
        else:
            self.press(str(hand.maker))
            self.press(BUTTON_BY_SUIT[suit])
            if hand.alone:
                self.press(ALONE)
            self.press(OK)
        if referee.config.rules.defend_alone and hand.alone:
            if hand.defender is not None:
                expected.append(f"defend {hand.defender}")
                if cursor:
                    self.pick("entry", Defend(hand.defender))
                else:
                    self.press(str(hand.defender))
            else:
                self.pick("mode", "no-defend") if cursor else self.press(OK)
        winners = hand.winners[:CLAIM_AFTER] if style == "claim" else hand.winners
        for winner in winners:
            expected.append(f"trick {winner}")
            self.pick("entry", Trick(winner)) if cursor else self.press(str(winner))
        if style == "claim":
            claim = Tricks(hand.makers_tricks)
            expected.append(claim.line())
            if cursor:  # the count itself when the trick list offers it, else the claim menu
                if not any(option.action.entry == claim for option in referee.step().options):
                    self.pick("mode", "claim")
                self.pick("entry", claim)
            else:
                self.press(OK)
                self.choose(claim)
        lines = [entry.line() for entry in referee.game.entries[entries:]]
        assert lines == expected, (lines, expected)
        return self.presses - before


@dataclass
class Row:
    """One kind of hand: the presses each of its hands took, in each layout."""

    seats: list[int] = field(default_factory=list)
    cursor: list[int] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return statistics.mean(self.cursor) / statistics.mean(self.seats)


def _tables(style: str, hands: list[Hand], layout: str) -> Iterator[tuple[Hand, int]]:
    rules = Rules(defend_alone=True) if style == "defend" else Rules()
    with tempfile.TemporaryDirectory(dir=_RAM) as state_dir:
        table = Table(layout, Path(state_dir), rules)
        try:
            for hand in hands:
                referee = table.referee
                if referee.game.expected_kind == "game":  # before the first, after a win
                    referee.enter(NewGame(hand.dealer))  # (not counted: not a hand's)
                assert referee.game.hand.dealer is hand.dealer
                yield hand, table.enter(hand, style)
        finally:
            table.referee.store.close()


def random_hands(count: int, seed: int) -> list[Hand]:
    """``count`` played-out hands, the deal passing left, the first dealt by W."""
    rng, dealer, hands = random.Random(seed), Seat.W, []
    for _ in range(count):
        hands.append(random_hand(rng, dealer))
        dealer = dealer.left
    return hands


def measure(count: int = 500, seed: int = 1) -> dict[str, Row]:
    """Presses per hand by kind, in both layouts, for ``count`` random hands
    entered at each table (:data:`STYLES`)."""
    hands = random_hands(count, seed)
    rows: dict[str, Row] = {}
    for style in STYLES:
        for layout in ("seats", "cursor"):
            for hand, presses in _tables(style, hands, layout):
                name = kind(hand, style)
                if name is not None:
                    getattr(rows.setdefault(name, Row()), layout).append(presses)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rows = measure(args.hands, args.seed)
    print(f"{args.hands} random played-out hands (seed {args.seed}) at each table, "
          "presses per hand, mean (min-max):")
    print(f"| kind of hand | hands | seats | cursor | cursor/seats (goal <= {GOAL}x) |")
    print("| --- | --- | --- | --- | --- |")
    for name, row in sorted(rows.items(), key=lambda item: statistics.mean(item[1].seats)):
        print(f"| {name} | {len(row.seats)} "
              f"| {statistics.mean(row.seats):.2f} ({min(row.seats)}-{max(row.seats)}) "
              f"| {statistics.mean(row.cursor):.2f} ({min(row.cursor)}-{max(row.cursor)}) "
              f"| {row.ratio:.2f}x{'' if row.ratio <= GOAL else ' OVER'} |")


if __name__ == "__main__":
    main()
