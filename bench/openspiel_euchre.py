"""The OpenSpiel half of the replay benchmark (SPEC section 6, "Budgets").

The budget: our card-level log replay takes at most 2x the time of driving OpenSpiel's
C++ Euchre from Python with the same actions. This module makes the workload and times
the OpenSpiel side:

* :func:`generate_games` plays random whole games to 10 points, each hand one OpenSpiel
  episode, and keeps every hand's OpenSpiel action list, the points OpenSpiel gave, and
  the same game as our text log (SPEC section 3) for our engine to replay.
* :func:`replay_openspiel` re-applies the stored actions to fresh OpenSpiel states. That
  is what is timed; it does nothing else.

OpenSpiel's ``euchre`` (open-spiel 2.0.2, ``stick_the_dealer=True``,
``allow_lone_defender=False``), as checked against the installed build:

* Players 0..3 are N, E, S, W; the player after ``p`` is ``(p + 1) % 4``; partners are
  ``p`` and ``(p + 2) % 4``. That is our seat order: player ``p`` is ``SEATS[p]``.
* Chance actions, 22 per hand: the dealer (action 0..3), then 20 cards one at a time,
  the i-th card (i = 0..19) going to player ``(dealer + i) % 4`` (the dealer gets the
  first card), then the upcard.
* Card ids: ``rank * 4 + suit``, ranks 9 T J Q K A = 0..5, suits C D H S = 0..3
  (``JH`` is ``2 * 4 + 2 = 10``). OpenSpiel prints suit first (``HJ``); we print
  rank first (``JH``).
* Bidding, from the dealer's left: 24 pass, 25 clubs, 26 diamonds, 27 hearts, 28 spades.
  In round 1 only the upcard's suit may be named (an order-up); in round 2 only the
  other three, and the dealer may not pass (stick the dealer).
* After an order-up the dealer discards a card id: any of the six cards except the
  upcard just picked up. Then the maker, in either round, chooses 29 (alone) or 30
  (with partner). That choice comes after the discard; our log writes ``alone`` on the
  call line.
* Play: card ids, five tricks. The first lead is the dealer's left, skipping the partner
  of a lone maker.
* ``state.returns()`` is zero-sum: makers get +1 (3-4 tricks), +2 (5 tricks), +4 (5
  tricks alone) or -2 (euchred, also when alone or taking no trick); defenders get the
  negation.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

import pyspiel  # type: ignore[import-not-found, unused-ignore]

SEATS = "NESW"
"""Our seat letters, indexed by OpenSpiel player id."""
RANKS = "9TJQKA"
"""Rank letters, indexed by OpenSpiel rank (``card // 4``)."""
SUITS = "CDHS"
"""Suit letters, indexed by OpenSpiel suit (``card % 4``)."""

NUM_PLAYERS = 4
NUM_CARDS = 24
PASS_ACTION = 24
CLUBS_TRUMP_ACTION = 25
"""Naming suit ``s`` (0..3, C D H S) is action ``CLUBS_TRUMP_ACTION + s``."""
GO_ALONE_ACTION = 29
WITH_PARTNER_ACTION = 30
DEALT_CARDS = 20
UPCARD_INDEX = 1 + DEALT_CARDS
"""Index of the upcard chance action in a hand's action list (after dealer and deal)."""
FIRST_BID_INDEX = UPCARD_INDEX + 1
TARGET_SCORE = 10

GAME_PARAMETERS: dict[str, bool] = {
    "stick_the_dealer": True,
    "allow_lone_defender": False,
}


@dataclass(frozen=True)
class BenchGame:
    """One random game to 10 points, as OpenSpiel actions and as our text log.

    ``hands[k]`` is hand k's full OpenSpiel action list, chance actions included (its
    first action is the dealer), ready to re-apply to ``game.new_initial_state()``.
    ``hand_points[k]`` is what that hand scored, ``(NS, EW)``, exactly one side
    non-zero. ``log_text`` is the whole game in our log format, with a cumulative
    ``score`` line after every hand and ``winner`` at the end.
    """

    hands: list[list[int]]
    hand_points: list[tuple[int, int]]
    log_text: str

    @property
    def first_dealer(self) -> int:
        """The OpenSpiel player id (0..3 = N E S W) who dealt the first hand."""
        return self.hands[0][0]

    @property
    def num_actions(self) -> int:
        """All OpenSpiel actions over the game's hands, chance actions included."""
        return sum(len(hand) for hand in self.hands)


def card_str(card: int) -> str:
    """Our spelling of an OpenSpiel card id: rank then suit, e.g. ``10 -> "JH"``."""
    return RANKS[card // 4] + SUITS[card % 4]


@functools.cache
def load_game() -> pyspiel.Game:
    """OpenSpiel's Euchre with the standard profile's options, loaded once."""
    return pyspiel.load_game("euchre", GAME_PARAMETERS)


def hand_log_lines(actions: Sequence[int]) -> list[str]:
    """Our log lines for one hand from its OpenSpiel action list, without ``score``.

    Pure decoding, no OpenSpiel call: the seat that plays a card is the card's holder
    (dealt, or the upcard picked up by the dealer), so no trick logic is needed.
    """
    return _decode_hand(actions)[0]


def _decode_hand(actions: Sequence[int]) -> tuple[list[str], dict[int, int]]:
    """Log lines for one hand, and the seat the log names for each player action.

    The second result maps the index of every pass, call, discard, alone choice and play
    to the seat that makes it; :func:`_play_random_hand` checks it against OpenSpiel's
    ``current_player()``.
    """
    dealer = actions[0]
    holder: dict[int, int] = {}
    dealt: list[list[str]] = [[] for _ in range(NUM_PLAYERS)]
    for i, card in enumerate(actions[1:UPCARD_INDEX]):
        seat = (dealer + i) % 4
        holder[card] = seat
        dealt[seat].append(card_str(card))
    upcard = actions[UPCARD_INDEX]
    lines = [
        "deal "
        + " ".join(f"{SEATS[seat]}={','.join(dealt[seat])}" for seat in range(4)),
        f"upcard {card_str(upcard)}",
    ]
    seats: dict[int, int] = {}
    index = FIRST_BID_INDEX
    passes = 0
    while actions[index] == PASS_ACTION:
        seats[index] = (dealer + 1 + passes) % 4
        lines.append(f"pass {SEATS[seats[index]]}")
        passes += 1
        index += 1
    maker = (dealer + 1 + passes) % 4
    seats[index] = maker
    suit = actions[index] - CLUBS_TRUMP_ACTION
    index += 1
    discard = None
    if passes < NUM_PLAYERS:
        call = f"order {SEATS[maker]}"
        seats[index] = dealer
        discard = actions[index]
        index += 1
        holder[upcard] = dealer
    else:
        call = f"call {SEATS[maker]} {SUITS[suit]}"
    seats[index] = maker
    if actions[index] == GO_ALONE_ACTION:
        call += " alone"
    index += 1
    lines.append(call)
    if discard is not None:
        lines.append(f"discard {card_str(discard)}")
    for i in range(index, len(actions)):
        seats[i] = holder[actions[i]]
        lines.append(f"play {SEATS[seats[i]]} {card_str(actions[i])}")
    return lines, seats


def _play_random_hand(
    game: pyspiel.Game, dealer: int, rng: random.Random
) -> tuple[list[int], int, int]:
    """Play one OpenSpiel episode: ``dealer`` forced, then uniformly random actions.

    Returns the action list and the points ``(NS, EW)`` from ``state.returns()``. Checks
    that our decoding names the seat OpenSpiel had to act for every player action.
    """
    state = game.new_initial_state()
    state.apply_action(dealer)
    actions = [dealer]
    players: list[int] = [int(pyspiel.PlayerId.CHANCE)]
    while not state.is_terminal():
        action = rng.choice(state.legal_actions())
        players.append(state.current_player())
        state.apply_action(action)
        actions.append(action)
    seats = _decode_hand(actions)[1]
    acting = {i: p for i, p in enumerate(players) if p >= 0}
    if seats != acting:
        raise AssertionError(
            f"decoded seats {seats} differ from OpenSpiel's players {acting}"
        )
    returns = state.returns()
    ns, ew = int(returns[0]), int(returns[1])
    if ns + ew != 0 or ns == 0 or returns[2] != ns or returns[3] != ew:
        raise AssertionError(f"unexpected returns {returns}")
    return actions, max(ns, 0), max(ew, 0)


def generate_games(n_games: int, seed: int) -> list[BenchGame]:
    """Play ``n_games`` random games to 10 points with ``random.Random(seed)``.

    Each hand is one OpenSpiel episode. Its dealer chance action is forced so that the
    deal rotates N, E, S, W, ... from a random first dealer; every other action (deal,
    upcard, bids, discard, alone choice, plays) is drawn uniformly from
    ``state.legal_actions()``. A game ends when a side has 10 at the end of a hand.
    """
    game = load_game()
    rng = random.Random(seed)
    games: list[BenchGame] = []
    for _ in range(n_games):
        first_dealer = rng.randrange(4)
        lines = ["euchre-log 1", f"game dealer={SEATS[first_dealer]}"]
        hands: list[list[int]] = []
        hand_points: list[tuple[int, int]] = []
        score_ns = score_ew = 0
        while score_ns < TARGET_SCORE and score_ew < TARGET_SCORE:
            dealer = (first_dealer + len(hands)) % 4
            actions, ns, ew = _play_random_hand(game, dealer, rng)
            hands.append(actions)
            hand_points.append((ns, ew))
            score_ns += ns
            score_ew += ew
            lines.extend(hand_log_lines(actions))
            lines.append(f"score NS={score_ns} EW={score_ew}")
        lines.append("winner NS" if score_ns >= TARGET_SCORE else "winner EW")
        games.append(
            BenchGame(
                hands=hands, hand_points=hand_points, log_text="\n".join(lines) + "\n"
            )
        )
    return games


def replay_openspiel(games: Sequence[BenchGame]) -> None:
    """Re-apply every hand's actions to a fresh OpenSpiel state: the timed workload."""
    game = load_game()
    for bench_game in games:
        for hand in bench_game.hands:
            state = game.new_initial_state()
            for action in hand:
                state.apply_action(action)


def replay_openspiel_checked(games: Sequence[BenchGame]) -> None:
    """The same, with OpenSpiel checking each action against its legal actions
    (``apply_action_with_legality_check``), as our replay checks every line."""
    game = load_game()
    for bench_game in games:
        for hand in bench_game.hands:
            state = game.new_initial_state()
            for action in hand:
                state.apply_action_with_legality_check(action)


def best_time(games: Sequence[BenchGame], repeats: int = 5) -> float:
    """Best of ``repeats`` wall times, in seconds, of :func:`replay_openspiel`."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        replay_openspiel(games)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    """Generate 20 games; print their size, the replay time and the first log's head."""
    games = generate_games(20, seed=2024)
    n_hands = sum(len(g.hands) for g in games)
    n_actions = sum(g.num_actions for g in games)
    seconds = best_time(games)
    print(f"games={len(games)} hands={n_hands} actions={n_actions}")
    print(
        f"replay_openspiel best of 5: {seconds * 1e3:.3f} ms total, "
        f"{seconds * 1e6 / n_hands:.1f} us/hand, "
        f"{seconds * 1e9 / n_actions:.0f} ns/action"
    )
    print("--- first game log (first 40 lines) ---")
    print("\n".join(games[0].log_text.splitlines()[:40]))


if __name__ == "__main__":
    main()
