"""Property tests: random legal games, played to the end, against the rules.

Two game strategies drive the engine only through its public surface:

* :func:`card_games` plays a card-level game: ``game dealer=X``, then per hand
  a shuffled ``deal``, an ``upcard``, random bidding among the legal passes,
  orders and calls (alone or not), the dealer's discard, and random legal
  ``play`` lines, with optional ``trick X`` check lines, until a side wins.
* :func:`winner_games` plays a winner-level game (no deal): optional upcard and
  passes, ``make``/``order``/``call``, then ``trick X`` per trick or a
  ``tricks N`` claim, and the occasional ``renege``.

Both start with random house rules (a ``rules`` entry).  Every choice is a
hypothesis draw, so a failing game shrinks; a drawn game's repr is its log.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, event, example, given, note, settings
from hypothesis import strategies as st

from euchre_core import (
    DECK,
    SEATS,
    Card,
    Game,
    HandResult,
    IllegalEntry,
    Rules,
    Seat,
    Suit,
    Team,
    replay,
    write_log,
)
from euchre_core import Phase as GamePhase
from euchre_core.codes import EVENTS
from euchre_core.events import (
    Call,
    Deal,
    Defend,
    Discard,
    Entry,
    Make,
    NewGame,
    Order,
    Pass,
    Play,
    Renege,
    ScoreCheck,
    SetRules,
    Trick,
    Tricks,
    Undo,
    Upcard,
    WinnerCheck,
)

SUITS = tuple(Suit)


def props(examples: int) -> settings:
    """Full games are slow to draw: no deadline, and no too_slow health check."""
    return settings(
        max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )


# --- house rules --------------------------------------------------------------

# sampled_from shrinks towards its first element: short games, standard rules.
def rules_strategy(
    targets: Sequence[int] = (1, 2, 3, 5, 7, 10, 11, 15),
) -> st.SearchStrategy[Rules]:
    points = st.sampled_from([2, 3, 4, 1, 5, 20])
    return st.builds(
        Rules,
        target=st.sampled_from(targets),
        win_by_two=st.sampled_from([False, True]),
        stick_the_dealer=st.sampled_from([True, False]),
        defend_alone=st.sampled_from([False, True]),
        lone_defender_euchre=points,
        defenders_sweep=points,
        lone_lead=st.sampled_from(["dealer-left", "maker-left"]),
        canadian_loner=st.sampled_from([False, True]),
        renege_penalty=points,
        renege_vs_loner=points,
    )


# --- the record of a drawn game ----------------------------------------------


@dataclass
class PlayStep:
    """One card-level play, with what the test itself knows of the hand."""

    seat: Seat
    trump: Suit
    trick: tuple[tuple[Seat, Card], ...]
    held: frozenset[Card]
    """The seat's cards before the play, tracked by the test from the deal."""
    engine_legal: frozenset[Card]
    """The cards of the ``Play`` entries ``legal_entries()`` listed."""


@dataclass
class TrickStep:
    hand: int
    trump: Suit
    plays: tuple[tuple[Seat, Card], ...]
    engine_winner: Seat


@dataclass
class GameEnd:
    rules: Rules
    score: dict[Team, int]
    winner: Team | None
    results: list[HandResult]


class Played:
    """A drawn game; its repr is its log, so hypothesis reports the log."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.plays: list[PlayStep] = []
        self.tricks: list[TrickStep] = []
        self.ends: list[GameEnd] = []
        self.stuck: str | None = None
        """Why a strategy could not go on (a legal next entry was refused)."""

    def __repr__(self) -> str:
        text = write_log(self.game)
        if self.stuck is not None:
            text += f"# then refused: {self.stuck}\n"
        return "<log\n" + text + ">"

    def record_end(self) -> None:
        game = self.game
        self.ends.append(
            GameEnd(game.rules, dict(game.score), game.winner, list(game.results))
        )


Draw = Callable[[st.SearchStrategy], object]


def pick(draw: Draw, entries: Sequence[object], kinds: Sequence[type]) -> object:
    """A drawn entry: first a kind (in ``kinds`` order; a kind listed twice is
    drawn twice as often), then one of that kind."""
    present = [kind for kind in kinds if any(type(e) is kind for e in entries)]
    kind = draw(st.sampled_from(present))
    return draw(st.sampled_from([e for e in entries if type(e) is kind]))


def legal_of(game: Game, kinds: Sequence[type]) -> list[object]:
    return [e for e in game.legal_entries() if type(e) in kinds]


def hand_over(game: Game, results: int) -> bool:
    return game.phase is not GamePhase.IN_GAME or len(game.results) != results


def bid(draw: Draw, game: Game, kinds: Sequence[type]) -> None:
    """Random legal bidding (in ``kinds``) until trump is made or the hand is
    thrown in."""
    results = len(game.results)
    # Now and then everyone passes who may: thrown-in hands, stuck dealers.
    passing = Pass in kinds and draw(st.integers(0, 7)) == 7
    while game.hand.maker is None and not hand_over(game, results):
        legal = legal_of(game, kinds)
        if passing and Pass(game.hand.bid_turn) in legal:
            game.push(Pass(game.hand.bid_turn))
        else:
            game.push(pick(draw, legal, kinds))  # type: ignore[arg-type]
    if hand_over(game, results):
        return
    defend = legal_of(game, (Defend,))
    if defend and draw(st.booleans()):
        game.push(draw(st.sampled_from(defend)))  # type: ignore[arg-type]


# --- card level -----------------------------------------------------------------


@st.composite
def card_games(
    draw: Draw,
    rules: st.SearchStrategy[Rules] | None = None,
    final_trick_checks: bool = False,
) -> Played:
    """A card-level game played to its end.

    ``trick X`` check lines are drawn after any trick; after each hand's last
    trick always with ``final_trick_checks``.
    """
    game = Game()
    played = Played(game)
    house = draw(rules if rules is not None else rules_strategy())
    if house != Rules():
        game.push(SetRules(house))
    game.push(NewGame(draw(st.sampled_from(SEATS))))
    while game.phase is GamePhase.IN_GAME:
        results = len(game.results)
        deck: list[Card] = draw(st.permutations(DECK))
        hands = tuple(tuple(deck[5 * i : 5 * i + 5]) for i in range(4))
        deal = Deal(hands)  # type: ignore[arg-type]
        reason = game.check(deal)
        if reason is not None:
            played.stuck = f"{deal.line()}: {reason}"
            return played
        game.push(deal)
        upcard = draw(st.sampled_from(deck[20:]))
        game.push(Upcard(upcard.suit, upcard))
        bid(draw, game, (Pass, Order, Call))
        if hand_over(game, results):
            continue  # thrown in
        held = {seat: set(cards) for seat, cards in zip(SEATS, hands)}
        maker, trump = game.hand.maker, game.hand.trump
        assert maker is not None and trump is not None
        dealer = game.dealer
        assert dealer is not None
        if trump is upcard.suit:  # round 1: the dealer picks the upcard up
            held[dealer].add(upcard)
            game.push(draw(st.sampled_from(legal_of(game, (Discard,)))))  # type: ignore[arg-type]
            discard = game.entries[-1]
            assert isinstance(discard, Discard)
            held[dealer].remove(discard.card)
        trick: list[tuple[Seat, Card]] = []
        while not hand_over(game, results):
            if not trick and draw(st.integers(0, 40)) == 40:
                # now and then a claim or a renege ends the hand early
                game.push(draw(st.sampled_from(legal_of(game, (Tricks, Renege)))))  # type: ignore[arg-type]
                break
            legal = legal_of(game, (Play,))
            entry = draw(st.sampled_from(legal))
            assert isinstance(entry, Play)
            played.plays.append(
                PlayStep(
                    entry.seat, trump, tuple(trick), frozenset(held[entry.seat]),
                    frozenset(e.card for e in legal),  # type: ignore[attr-defined]
                )
            )
            number = game.hand.number
            game.push(entry)
            held[entry.seat].remove(entry.card)
            trick.append((entry.seat, entry.card))
            if game.pending_trick is not None:  # the play completed a trick
                played.tricks.append(TrickStep(number, trump, tuple(trick), game.pending_trick))
                trick = []
                last = hand_over(game, results)
                if (last and final_trick_checks) or draw(st.booleans()):
                    game.push(Trick(game.pending_trick))
    played.record_end()
    return played


# --- winner level --------------------------------------------------------------


@st.composite
def winner_games(draw: Draw, rules: st.SearchStrategy[Rules] | None = None) -> Played:
    """A winner-level game to its end; now and then a second game follows."""
    game = Game()
    played = Played(game)
    for number in range(2):
        if number and not draw(st.integers(0, 3)) == 3:
            break
        house = draw(rules if rules is not None else rules_strategy())
        if house != game.rules:
            game.push(SetRules(house))
        game.push(NewGame(draw(st.sampled_from(SEATS))))
        while game.phase is GamePhase.IN_GAME:
            results = len(game.results)
            shown = draw(st.integers(0, 2))
            if shown:
                card = draw(st.sampled_from(DECK))
                game.push(Upcard(card.suit, card if shown == 2 else None))
            bid(draw, game, (Pass, Make, Order, Call))
            if hand_over(game, results):
                continue
            discard = legal_of(game, (Discard,))
            if discard and draw(st.integers(0, 5)) == 5:
                game.push(draw(st.sampled_from(discard)))  # type: ignore[arg-type]
            while not hand_over(game, results):
                way = draw(st.integers(0, 12))
                kinds = (Trick,) if way < 11 else (Tricks,) if way == 11 else (Renege,)
                game.push(draw(st.sampled_from(legal_of(game, kinds))))  # type: ignore[arg-type]
        played.record_end()
    return played


def any_games(rules: st.SearchStrategy[Rules] | None = None) -> st.SearchStrategy[Played]:
    return st.one_of(winner_games(rules), card_games(rules))


# --- independent references ---------------------------------------------------

_SISTER = {"S": "C", "C": "S", "H": "D", "D": "H"}


def ref_suit(card: Card, trump: Suit) -> str:
    text = str(card)
    if text[0] == "J" and text[1] == _SISTER[trump.value]:
        return trump.value
    return text[1]


def ref_rank(card: Card, trump: Suit, led: str) -> tuple[int, int]:
    text, t = str(card), trump.value
    if text == "J" + t:
        return (2, 100)
    if text == "J" + _SISTER[t]:
        return (2, 99)
    if ref_suit(card, trump) == t:
        return (2, "9TQKA".index(text[0]))
    if text[1] == led:
        return (1, "9TJQKA".index(text[0]))
    return (0, 0)


def ref_trick_winner(plays: Sequence[tuple[Seat, Card]], trump: Suit) -> Seat:
    led = ref_suit(plays[0][1], trump)
    return max(plays, key=lambda play: ref_rank(play[1], trump, led))[0]


def ref_legal(held: frozenset[Card], trick: Sequence[tuple[Seat, Card]], trump: Suit) -> set[Card]:
    if not trick:
        return set(held)
    led = ref_suit(trick[0][1], trump)
    follow = {card for card in held if ref_suit(card, trump) == led}
    return follow or set(held)


def ref_points(result: HandResult, rules: Rules) -> tuple[Team | None, int] | None:
    """Who scores a hand and how much, from the house rules; None where the
    rules leave the combination open (a lone defender who also swept)."""
    if result.how == "thrown in":
        return None, 0
    assert result.maker is not None
    makers = result.maker.team
    if result.reneger is not None:
        loner = result.alone and result.reneger.team is not makers
        return result.reneger.team.other, rules.renege_vs_loner if loner else rules.renege_penalty
    tricks = result.maker_tricks
    assert tricks is not None
    if tricks == 5:
        return makers, 4 if result.alone else 2
    if tricks >= 3:
        return makers, 1
    if result.lone_defender is not None:
        # A lone defender's sweep, or a setting below the ordinary euchre's 2,
        # is left open by the rules; the engine takes the larger value.
        if tricks == 0 or rules.lone_defender_euchre < 2:
            return None
        return makers.other, rules.lone_defender_euchre
    return makers.other, rules.defenders_sweep if tricks == 0 else 2


# --- helpers -------------------------------------------------------------------


def fingerprint(game: Game) -> tuple[object, ...]:
    """The public state, cheaply (write_log is compared too, less often)."""
    return (
        list(game.entries), dict(game.score), list(game.results), game.winner, game.phase,
        game.expected, game.dealer, game.leader, game.pending_trick, game.hand.number,
        game.rules, dict(game.names), game.game_number,
    )


def complete(game: Game) -> None:
    assert game.phase is GamePhase.GAME_OVER, game.expected
    assert game.winner is not None


# --- 1. the game ends, with a winner who reached the target -------------------


def check_game_course(played: Played) -> None:
    """Walk the entries on a fresh game: after each hand exactly one side
    scored (none for a thrown-in hand), the deal moved left, and the game ends
    exactly when a side first has the target (and, win-by-two, a lead of 2)."""
    game = Game()
    results = 0
    score = {Team.NS: 0, Team.EW: 0}
    ends = iter(played.ends)
    for entry in played.game.entries:
        game.push(entry)  # type: ignore[arg-type]
        if isinstance(entry, NewGame):
            results, score = 0, {Team.NS: 0, Team.EW: 0}
            assert game.score == score and game.results == []
            continue
        if len(game.results) == results:
            continue
        assert len(game.results) == results + 1
        result = game.results[-1]
        rules = game.rules
        delta = {team: game.score[team] - score[team] for team in Team}
        if result.how == "thrown in":
            assert not rules.stick_the_dealer
            assert result.team is None and result.points == 0
            assert delta == {Team.NS: 0, Team.EW: 0}
        else:
            assert result.team is not None and result.points > 0
            assert delta[result.team] == result.points and delta[result.team.other] == 0
            expected = ref_points(result, rules)
            if expected is not None:
                assert (result.team, result.points) == expected, result
        if results:
            assert result.dealer is game.results[-2].dealer.left
        results += 1
        score = dict(game.score)
        target, two = rules.target, rules.win_by_two
        won = [
            t for t in Team if score[t] >= target and (not two or score[t] - score[t.other] >= 2)
        ]
        if won:
            assert won == [result.team]
            assert game.phase is GamePhase.GAME_OVER and game.winner is result.team
            end = next(ends)
            assert end.winner is result.team and end.score == score
            assert end.results == game.results and end.rules == rules
            loser = score[result.team.other]
            assert loser < target or (two and score[result.team] - loser >= 2)
        else:
            assert game.phase is GamePhase.IN_GAME and game.winner is None
            assert game.dealer is result.dealer.left
    assert next(ends, None) is None
    complete(game)


def check_round_trip(played: Played) -> None:
    """The written log (with or without checksums) reads back to the same
    game, and writing that game gives the same text."""
    game = played.game
    for checksums in (False, True):
        text = write_log(game, checksums=checksums)
        read = replay(text)
        assert read.error is None, (read.error, text)
        assert read.game.entries == game.entries
        assert read.game.score == game.score
        assert read.game.results == game.results
        assert read.game.winner == game.winner
        assert read.game.phase is game.phase and read.game.rules == game.rules
        assert read.lines == text.count("\n")
        assert write_log(read.game, checksums=checksums) == text


@props(70)
@given(card_games())
def test_card_level_games_end_score_and_round_trip(played: Played) -> None:
    complete(played.game)
    check_game_course(played)
    check_round_trip(played)


@props(150)
@given(winner_games())
def test_winner_level_games_end_score_and_round_trip(played: Played) -> None:
    complete(played.game)
    check_game_course(played)
    check_round_trip(played)


# --- 2. the engine's tricks agree with an independent reference ----------------


@props(50)
@given(card_games())
def test_card_level_tricks_and_follows_agree_with_reference(played: Played) -> None:
    for step in played.tricks:
        assert step.engine_winner is ref_trick_winner(step.plays, step.trump), step
    for play in played.plays:
        assert set(play.engine_legal) == ref_legal(play.held, play.trick, play.trump), play
    # Each hand played out to five tricks is scored from the reference's winners.
    by_hand: dict[int, list[Seat]] = {}
    for step in played.tricks:
        by_hand.setdefault(step.hand, []).append(ref_trick_winner(step.plays, step.trump))
    for result in played.game.results:
        winners = by_hand.get(result.number, [])
        if len(winners) == 5 and result.reneger is None:
            assert result.maker is not None
            makers = sum(1 for seat in winners if seat.team is result.maker.team)
            assert result.maker_tricks == makers, (result, winners)


# --- 3. undo ---------------------------------------------------------------------


def check_undo(played: Played) -> None:
    """After each push, undo then push again restores the state; then undo
    all the way back to the start, and push everything again."""
    entries = list(played.game.entries)
    game = Game()
    texts = [write_log(game)]
    states = [fingerprint(game)]
    for entry in entries:
        game.push(entry)  # type: ignore[arg-type]
        text, state = write_log(game), fingerprint(game)
        assert game.undo() == entry
        assert write_log(game) == texts[-1] and fingerprint(game) == states[-1]
        game.push(entry)  # type: ignore[arg-type]
        assert write_log(game) == text and fingerprint(game) == state
        texts.append(text)
        states.append(state)
    final = fingerprint(game)
    for index in range(len(entries), 0, -1):
        assert game.undo() == entries[index - 1]
        assert write_log(game) == texts[index - 1] and fingerprint(game) == states[index - 1]
    assert game.entries == [] and game.phase is GamePhase.SETUP
    with pytest.raises(IllegalEntry):
        game.undo()
    for entry in entries:
        game.push(entry)  # type: ignore[arg-type]
    assert fingerprint(game) == final
    assert write_log(game) == texts[-1] == write_log(played.game)


@props(60)
@given(winner_games())
def test_undo_then_push_restores_winner_level(played: Played) -> None:
    check_undo(played)


@props(20)
@given(card_games(rules_strategy(targets=(1, 2, 3))))
def test_undo_then_push_restores_card_level(played: Played) -> None:
    check_undo(played)


# --- 4. legal_entries agrees with check and push; refusals change nothing ------


def random_candidate(rng: random.Random, game: Game) -> object:
    seat = rng.choice(SEATS)
    suit = rng.choice(SUITS)
    card = rng.choice(DECK)
    alone = rng.random() < 0.3
    kind = rng.randrange(14)
    if kind == 0:
        return Pass(seat)
    if kind == 1:
        return Order(seat, alone)
    if kind == 2:
        return Call(seat, suit, alone)
    if kind == 3:
        return Make(seat, suit, alone)
    if kind == 4:
        return Defend(seat)
    if kind == 5:
        return Discard(card)
    if kind in (6, 7):  # plays: the seat to play half the time
        to_play = game.hand.to_play if rng.random() < 0.5 else seat
        return Play(to_play, card)
    if kind == 8:
        return Trick(seat)
    if kind == 9:
        return Tricks(rng.randrange(6))
    if kind == 10:
        return Renege(seat)
    if kind == 11:
        return NewGame(seat)
    return Upcard(card.suit, card) if kind == 12 else Upcard(suit)


FIXED_ENTRIES: list[Entry] = [
    fixed for fixed in EVENTS  # type: ignore[misc]  # every entry of a fixed form
    if fixed is not None and not isinstance(fixed, (ScoreCheck, WinnerCheck, Undo))
]
"""Every entry but deal, players and rules lines (those take free text)."""


def check_legal_entries(played: Played, rng: random.Random) -> None:
    """At every point of the game: each listed entry passes check; random
    candidates pass check exactly when listed, and a refused one is refused by
    push with the same reason and changes nothing."""
    entries = played.game.entries
    game = Game()
    deep = set(rng.sample(range(len(entries) + 1), min(8, len(entries) + 1)))
    for index in range(len(entries) + 1):
        legal = game.legal_entries()
        before = fingerprint(game)
        text = write_log(game) if index in deep else None
        for entry in legal:
            assert game.check(entry) is None, entry
        if index in deep or rng.random() < 0.25:  # nothing legal is left out of the list
            assert set(legal) == {entry for entry in FIXED_ENTRIES if game.check(entry) is None}
        for _ in range(6):
            candidate = random_candidate(rng, game)
            reason = game.check(candidate)  # type: ignore[arg-type]
            assert (reason is None) == (candidate in legal), (candidate, reason, game.expected)
            if reason is not None:
                assert isinstance(reason, str) and reason.strip()
                with pytest.raises(IllegalEntry) as refused:
                    game.push(candidate)  # type: ignore[arg-type]
                assert str(refused.value) == reason
                assert fingerprint(game) == before
                assert game.legal_entries() == legal
        if text is not None:  # every listed entry is taken, tried on copies
            assert write_log(game) == text
            for entry in rng.sample(legal, min(4, len(legal))):
                copy = replay(text).game
                copy.push(entry)
                assert copy.entries == [*game.entries, entry]
                after = write_log(copy)
                assert replay(after).error is None
        if index < len(entries):
            entry = entries[index]
            assert entry in legal or type(entry) in (Deal, SetRules), entry
            game.push(entries[index])


@props(40)
@given(any_games(), st.randoms(use_true_random=False))
def test_legal_entries_agree_with_check_and_push(played: Played, rng: random.Random) -> None:
    check_legal_entries(played, rng)


def test_legal_entries_lists_winner_level_card_upcards() -> None:
    """Regression: ``upcard JH`` in a winner-level hand is accepted and listed."""
    game = Game()
    game.push(NewGame(Seat.N))
    entry = Upcard(Suit.HEARTS, Card.from_str("JH"))
    assert game.check(entry) is None
    assert entry in game.legal_entries()


# --- 5. a corrupted log: replay never raises, and stops at the right line -------

# Characters whose str.isdigit() is true but int() rejects (superscripts and
# the like) once made replay raise: see test_replay_never_raises_on_odd_digits.
ODD_DIGITS = "".join(chr(c) for c in range(0x110000) if chr(c).isdigit() and not chr(c).isdecimal())
SPICE = ODD_DIGITS[:20] + " \t*#\"\\=,-0123456789NESWHDCSTJQKA♠♥♦♣ßØ٣\u00a0\u2028\x00\x0b\x1c\r"
TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(SPICE),
        st.characters(exclude_characters="\n", exclude_categories=("Cs",)),
    ),
    max_size=30,
)
WORDS = (
    "players", "rules", "game", "deal", "upcard", "pass", "order", "call", "make", "defend",
    "discard", "play", "trick", "tricks", "renege", "undo", "score", "winner", "alone",
    "euchre-log", "1", "0", "5", "6", "10", "N", "E", "S", "W", "n", "H", "D", "C", "♠",
    "JH", "JD", "TS", "10C", "9S", "AC", "dealer=N", "dealer=X", "NS=0", "EW=2", "NS", "EW",
    "target=1", "win-by-two=on", "stick-the-dealer=off", "N=9S,TS,JS,QS,KS", "*0000", "#",
)
TOKEN = st.one_of(st.sampled_from(WORDS), TEXT)


@st.composite
def corruptions(draw: Draw, lines: list[str]) -> tuple[int, list[str], str]:
    """One corrupted line: (its 0-based index, the new lines, what was done)."""
    index = draw(st.integers(0, len(lines) - 1))
    line = lines[index]
    how = draw(st.sampled_from(["char", "token", "line", "replace", "delete", "duplicate"]))
    new = list(lines)
    if how == "delete":
        del new[index]
    elif how == "duplicate":
        new.insert(index, line)
    elif how == "replace":
        new[index] = draw(TEXT)
    elif how == "line":
        new[index] = " ".join(draw(st.lists(TOKEN, min_size=1, max_size=5)))
    elif how == "token":
        tokens = line.split(" ")
        at = draw(st.integers(0, len(tokens) - 1))
        tokens[at] = draw(TOKEN)
        new[index] = " ".join(tokens)
    else:
        at = draw(st.integers(0, max(len(line) - 1, 0)))
        char = draw(st.one_of(st.sampled_from(SPICE), st.characters(
            exclude_characters="\n", exclude_categories=("Cs",))))
        new[index] = line[:at] + char + line[at + 1 :]
    return index, new, how


@props(150)
@given(st.data())
def test_corrupted_log_stops_at_the_corrupted_line_or_later(data: st.DataObject) -> None:
    played = data.draw(
        st.one_of(winner_games(), card_games(rules_strategy(targets=(1, 2, 3, 5)))), "game"
    )
    checksums = data.draw(st.booleans(), "checksums")
    lines = write_log(played.game, checksums=checksums).split("\n")[:-1]
    index, new, how = data.draw(corruptions(lines), "corruption")
    text = "\n".join(new) + "\n"
    now = new[index] if how != "delete" else "(deleted)"
    note(f"{how} at line {index + 1}: {lines[index]!r} -> {now!r}")
    read = replay(text)  # never raises
    where = "still valid" if read.error is None else (
        "refused there" if read.error.line == index + 1 else "refused later"
    )
    event(f"{how}: {where}")
    if read.error is None:
        assert read.game.entries is not None
        again = replay(write_log(read.game))
        assert again.error is None and again.game.entries == read.game.entries
        return
    error = read.error
    assert isinstance(error.reason, str) and error.reason.strip()
    assert index + 1 <= error.line <= len(new) + 1, (error, index + 1)
    assert str(error) == f"line {error.line}: {error.reason}"
    before = new[: error.line - 1]
    prefix = replay("\n".join(before) + "\n" if before else "")
    if prefix.error is not None:  # nothing but blank or comment lines before it
        assert not prefix.game.entries and not read.game.entries
    assert write_log(prefix.game) == write_log(read.game)
    assert prefix.game.score == read.game.score
    assert prefix.game.expected == read.game.expected


def test_passes_without_an_upcard_then_a_call_are_refused() -> None:
    """Regression: passes with no upcard, then a call in round 1, are refused
    with a reason (check, legal_entries and replay once raised AssertionError)."""
    game = Game()
    game.push(NewGame(Seat.N))
    game.push(Pass(Seat.E))
    reason = game.check(Call(Seat.S, Suit.HEARTS))
    assert isinstance(reason, str) and reason.strip()
    legal = game.legal_entries()
    assert Pass(Seat.S) in legal and Call(Seat.S, Suit.HEARTS) not in legal
    read = replay("euchre-log 1\ngame dealer=N\npass E\ncall S H\n")
    assert read.error is not None and read.error.line == 4
    assert read.error.reason == reason


@props(30)
@example(line="rules target=²")
@example(line="score NS=² EW=0")
@given(
    st.builds(
        "{} {}={}".format,
        st.sampled_from(["rules", "score"]),
        st.sampled_from(["target", "NS", "renege-penalty"]),
        st.text(alphabet=st.sampled_from("0123456789" + ODD_DIGITS[:50]), min_size=1, max_size=3),
    )
)
def test_replay_never_raises_on_odd_digits(line: str) -> None:
    """Regression: ``²`` is a digit to str.isdigit() but not to int()."""
    for text in (f"euchre-log 1\n{line}\n", f"euchre-log 1\ngame dealer=N\n{line} EW=0\n"):
        read = replay(text)
        assert read.error is None or read.error.reason.strip()


# --- 6. a trick check after each hand's last trick, then the next deal ---------


@props(20)
@given(card_games(rules_strategy(targets=(5, 10)), final_trick_checks=True))
def test_card_level_game_with_every_last_trick_checked_plays_to_the_end(played: Played) -> None:
    """Regression: after ``trick X`` checks a hand's last trick, the next
    ``deal`` was refused ('deal must be the first line of a hand')."""
    assert played.stuck is None, played.stuck
    complete(played.game)
    check_game_course(played)
    check_round_trip(played)
