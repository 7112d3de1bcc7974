"""Presses per plain hand, in each layout, through the referee app (issue 11).

A plain hand is what most tables enter: the maker's seat and the trump suit
(with partner, no upcard, no passes), then each of the five tricks' winner.
The hands are random but played out: four simple players (euchre_core's rules
of play: follow the effective suit led, the left bower is a trump) are dealt
a shuffled deck, bid (order up or name a suit with three trumps, the dealer
stuck), and play each trick (lead the best trump if a maker, else the best
card; follow cheaply, win when the partner is not winning); so the trick
winners fall as they do at a table, not uniformly.

Each hand is then entered through ``Referee.press`` as a table would:
- ``seats``: the maker's seat, the suit button, OK, each winner's seat;
- ``cursor``: PREV/NEXT the shorter way round to each option, then OK: the
  maker, the suit (the call, with partner), each winner.
The table waits out each hand's result screen (the fake clock moves on), as
it does while the next hand is dealt.  Every hand's journal is checked against
the winners played.

Run:  .venv/bin/python bench/presses.py [--hands 500] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from euchre_core.cards import DECK, POWER, SEATS, SUIT_OF, Card, Seat, Suit  # noqa: E402
from euchre_core.events import NewGame  # noqa: E402
from firmware.app import Referee  # noqa: E402
from firmware.buttons import BUTTON_BY_SUIT, NEXT, OK, PREV  # noqa: E402
from firmware.config import Config  # noqa: E402
from firmware.journal import Store  # noqa: E402


@dataclass(frozen=True)
class PlainHand:
    maker: Seat
    trump: Suit
    winners: tuple[Seat, ...]


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _trumps(cards: list[Card], trump: Suit) -> int:
    return sum(SUIT_OF[trump][card] is trump for card in cards)


def _strength(cards: list[Card], trump: Suit) -> int:
    return sum(POWER[trump][trump][card] for card in cards if SUIT_OF[trump][card] is trump)


def _bid(hands: dict[Seat, list[Card]], dealer: Seat, upcard: Card) -> tuple[Seat, Suit]:
    """Round 1: order up with three trumps (the dealer counts the upcard);
    round 2: name the best other suit with three; the dealer is stuck."""
    seat = dealer.left
    for _ in range(4):
        cards = hands[seat] + ([upcard] if seat is dealer else [])
        if _trumps(cards, upcard.suit) >= 3:
            return seat, upcard.suit
        seat = seat.left
    others = [suit for suit in Suit if suit is not upcard.suit]
    for _ in range(4):
        best = max(others, key=lambda suit: _strength(hands[seat], suit))
        if _trumps(hands[seat], best) >= 3 or seat is dealer:
            return seat, best
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


def random_plain_hand(rng: random.Random, dealer: Seat) -> PlainHand:
    deck = list(DECK)
    rng.shuffle(deck)
    hands = {seat: deck[index * 5:index * 5 + 5] for index, seat in enumerate(SEATS)}
    upcard = deck[20]
    maker, trump = _bid(hands, dealer, upcard)
    if trump is upcard.suit:  # the dealer picks it up and discards the weakest card
        cards = hands[dealer] + [upcard]
        cards.remove(min(cards, key=lambda card: (SUIT_OF[trump][card] is trump,
                                                   POWER[trump][SUIT_OF[trump][card]][card])))
        hands[dealer] = cards
    leader, winners = dealer.left, []
    for _ in range(5):
        seat, led, best, best_seat = leader, None, -1, leader
        for _ in range(4):
            card = _choose(hands[seat], trump, led, best,
                           led is not None and best_seat is seat.partner,
                           seat.team is maker.team)
            hands[seat].remove(card)
            if led is None:
                led = SUIT_OF[trump][card]
            if POWER[trump][led][card] > best:
                best, best_seat = POWER[trump][led][card], seat
            seat = seat.left
        winners.append(best_seat)
        leader = best_seat
    return PlainHand(maker, trump, tuple(winners))


class Table:
    """A referee in ``layout``, pressed through its buttons; counts presses."""

    def __init__(self, layout: str, state_dir: Path) -> None:
        self.clock = Clock()
        config = Config(state_dir=state_dir, layout=layout)  # type: ignore[arg-type]
        self.referee = Referee(config, Store(state_dir), renderer=lambda view: view,
                               clock=self.clock)
        self.layout = layout
        self.presses = 0

    def press(self, button: str) -> None:
        self.presses += 1
        self.referee.press(button)

    def pick(self, label: str) -> None:
        """Cursor layout: move the shorter way round to ``label``, then OK."""
        labels = [option.label for option in self.referee.step().options]
        target, count = labels.index(label), len(labels)
        forward = (target - self.referee.view().cursor) % count
        for _ in range(min(forward, count - forward)):
            self.press(NEXT if forward <= count - forward else PREV)
        assert self.referee.view().cursor == target
        self.press(OK)

    def enter(self, hand: PlainHand) -> int:
        """Enter one plain hand; returns the presses it took."""
        referee = self.referee
        self.clock.t = max(self.clock.t, referee.result_until) + 1  # the result has gone
        before, entries = self.presses, len(referee.game.entries)
        game = referee.game
        maker, suit = game.name(hand.maker), hand.trump
        if self.layout == "seats":
            self.press(str(hand.maker))
            self.press(BUTTON_BY_SUIT[suit])
            self.press(OK)
            for winner in hand.winners:
                self.press(str(winner))
        else:
            self.pick(maker)
            self.pick(f"{maker}: {suit.symbol} {suit.word}")  # the call, with partner
            for winner in hand.winners:
                self.pick(f"{game.name(winner)} won")
        lines = [entry.line() for entry in referee.game.entries[entries:]]
        assert lines == [f"make {hand.maker} {suit}", *(f"trick {w}" for w in hand.winners)], lines
        return self.presses - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"{args.hands} random plain hands (seed {args.seed}), entered in each layout:")
    for layout in ("seats", "cursor"):
        rng = random.Random(args.seed)  # the same hands in both layouts
        counts, repeats, tricks = [], 0, 0
        with tempfile.TemporaryDirectory() as state_dir:
            table = Table(layout, Path(state_dir))
            for _ in range(args.hands):
                referee = table.referee
                if referee.game.expected_kind == "game":  # before the first, after a win
                    referee.enter(NewGame(Seat.W))  # (not counted: not a plain hand's)
                hand = random_plain_hand(rng, referee.game.hand.dealer)
                counts.append(table.enter(hand))
                repeats += sum(a is b for a, b in zip(hand.winners, hand.winners[1:]))
                tricks += 4
            table.referee.store.close()
        print(f"  {layout:6}  presses per plain hand: mean {statistics.mean(counts):.2f}, "
              f"min {min(counts)}, max {max(counts)}  (a trick's leader won it "
              f"{repeats / tricks:.0%} of the time)")


if __name__ == "__main__":
    main()
