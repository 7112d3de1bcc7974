"""The replay's fast path against the line-by-line engine, and the engine's new doors.

``replay`` takes whole hands at once (``Game.replay_hands``: a card-level hand's
deal read from its text, the bidding, five tricks checked by the generated
checker of ``euchre_core.play``, or a hand by trick winners); anything else goes
line by line.  The
reference here pushes every line on its own through ``Game.push``, which never
takes the fast path.  On random legal games and on thousands of random
single-line changes to them both must agree: the same verdict, the same first
bad line and reason word for word, the same score, hands, winner and entries,
and a game that goes on the same way (``legal_entries``, ``undo``).
"""

from __future__ import annotations

import pickle
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_core_play_runs import HAND, one_at_a_time
from test_core_prop_games import card_games, rules_strategy, winner_games

from euchre_core import (
    DECK,
    DEFAULT_NAMES,
    Card,
    Game,
    HandResult,
    Players,
    Rules,
    Seat,
    Suit,
    Team,
    name_problem,
    replay,
    score_hand,
    write_log,
)
from euchre_core import play as fast
from euchre_core.codes import CODES, deal_of, read_deal
from euchre_core.events import (
    Deal,
    Misdeal,
    NewGame,
    Order,
    Pass,
    SetRules,
    Upcard,
    parse_event,
)
from euchre_core.game import Phase
from euchre_core.lines import with_checksum
from firmware.flow import RULE_PROFILES

HEADER = "euchre-log 1"


def state(game: Game) -> tuple[object, ...]:
    hand = game.hand
    return (
        game.phase, game.game_number, dict(game.score), dict(game.start_score), game.winner,
        list(game.results),
        dict(game.names), game.rules, game.pending_trick, game.expected,
        hand.number, hand.dealer, hand.start, hand.call_index, hand.held, hand.upcard_suit,
        hand.upcard_card, hand.passes, hand.maker, hand.trump, hand.alone, hand.round,
        hand.lone_defender, hand.sitting_out, hand.discard_pending, hand.discarded,
        list(hand.tricks), list(hand.trick), hand.leader, dict(hand.played),
        dict(hand.showed_out), hand.by_winner, hand.card_level, hand.trick_size, hand.turn,
        hand.led, hand.playable,
    )


def agree(text: str, deep: bool = False) -> str:
    """Assert that ``replay`` and pushing line by line agree; returns the verdict."""
    expected_game, expected_error = one_at_a_time(text)
    result = replay(text)
    error = None if result.error is None else (result.error.line, result.error.reason)
    assert error == expected_error
    game = result.game
    assert game.entries == expected_game.entries
    assert state(game) == state(expected_game)
    if deep:
        assert game.legal_entries() == expected_game.legal_entries()
        if game.entries:
            assert game.undo() == expected_game.undo()
            assert state(game) == state(expected_game)
    return "valid" if error is None else "refused"


# --- the new public names ------------------------------------------------------


def test_players_from_names_names_all_four_seats_in_order() -> None:
    event = Players.from_names({Seat.W: "Anna Maria", Seat.S: "S", Seat.E: "É", Seat.N: "n"})
    assert event.names == ((Seat.N, "n"), (Seat.E, "É"), (Seat.S, "S"), (Seat.W, "Anna Maria"))
    assert Players.from_names(DEFAULT_NAMES).line() == "players N=Ragnar E=Sigríður S=South W=Anna"
    assert parse_event(event.line()) == event


def test_name_problem_is_the_rule_the_players_line_uses() -> None:
    assert name_problem("Sigríður") is None
    assert name_problem("x" * 40) is None
    for bad in ("", "   ", "x" * 41, "tab\there"):
        assert name_problem(bad) == "1 to 40 printable characters"
        result = replay(f'{HEADER}\nplayers N="{bad}"\n')
        assert result.error is not None
        assert result.error.reason == "players: N's name must be 1 to 40 printable characters"


def test_bidding_round() -> None:
    game = Game()
    assert game.bidding_round is None  # no game yet
    game.push(parse_event("game dealer=N"))  # type: ignore[arg-type]
    assert game.bidding_round == 1
    game.push(Upcard(Suit.HEARTS))
    for seat in (Seat.E, Seat.S, Seat.W, Seat.N):
        assert game.bidding_round == 1
        game.push(Pass(seat))
    assert game.bidding_round == 2
    game.push(Pass(Seat.E))
    assert game.bidding_round == 2
    game.push(parse_event("call S C"))  # type: ignore[arg-type]
    assert game.bidding_round is None  # trump is made
    dealt = Game()
    dealt.push(parse_event("game dealer=N"))  # type: ignore[arg-type]
    dealt.push(parse_event(HAND[0]))  # type: ignore[arg-type]
    assert dealt.bidding_round is None  # the upcard is owed first
    dealt.push(parse_event(HAND[1]))  # type: ignore[arg-type]
    assert dealt.bidding_round == 1


def test_score_hand_is_pure_and_is_what_the_game_scores() -> None:
    rules = Rules()
    made = score_hand(rules, 3, Seat.N, Seat.E, Suit.HEARTS, maker_tricks=4)
    assert made == HandResult(3, Seat.N, "made", Team.EW, 1, Seat.E, Suit.HEARTS, False, None, 4)
    march = score_hand(rules, 1, Seat.N, Seat.E, Suit.HEARTS, alone=True, maker_tricks=5)
    assert (march.how, march.team, march.points) == ("march", Team.EW, 4)
    euchred = score_hand(rules.replace(defenders_sweep=4), 1, Seat.N, Seat.E, Suit.HEARTS,
                         maker_tricks=0)
    assert (euchred.how, euchred.team, euchred.points) == ("euchred", Team.NS, 4)
    renege = score_hand(rules.replace(renege_vs_loner=4), 1, Seat.N, Seat.E, Suit.HEARTS,
                        alone=True, reneger=Seat.S)
    assert (renege.how, renege.team, renege.points) == ("renege", Team.EW, 4)
    thrown = score_hand(rules, 1, Seat.N, None, None)
    assert (thrown.how, thrown.team, thrown.points) == ("thrown in", None, 0)
    game = replay("\n".join([HEADER, "game dealer=N", *HAND]) + "\n").game
    result = game.results[0]
    assert result == score_hand(rules, 1, Seat.N, result.maker, result.trump, result.alone,
                                maker_tricks=result.maker_tricks)


def test_a_players_line_between_hands_leaves_the_next_deal_first() -> None:
    """docs/log-format.md: ``players`` may appear anywhere."""
    text = "\n".join([
        HEADER, "game dealer=N", *HAND, "players N=Ann E=Bo S=Cy W=Di", *HAND[:1],
    ]) + "\n"
    result = replay(text)
    assert result.error is None, result.error
    assert result.game.names[Seat.N] == "Ann"
    assert result.game.hand.number == 2 and result.game.hand.held is not None
    agree(text, deep=True)


def test_a_players_line_in_a_hand_still_keeps_a_late_deal_out() -> None:
    text = "\n".join([HEADER, "game dealer=N", "upcard TH", "players N=Ann", HAND[0]]) + "\n"
    result = replay(text)
    assert result.error is not None
    assert (result.error.line, result.error.reason) == (5, "deal must be the first line of a hand")


# --- the tables and the generated checker -------------------------------------


def test_the_tables_come_from_effective_suit_and_card_power() -> None:
    from euchre_core import card_power, effective_suit

    for t, trump in enumerate(Suit):
        for code in range(96):
            card, seat = DECK[code % 24], code // 24
            assert fast.SUITS[fast.EFFECTIVE[t][code]] is effective_suit(card, trump)
            for led_index, led in enumerate(Suit):
                power = card_power(card, trump, led)
                assert fast.RANK_KEY[t][led_index][code] == 4 * (power + 1) + seat


def test_the_written_out_tables_are_build_tables() -> None:
    """euchre_core/play_tables.py is build_tables() and the trick blocks'
    source written out, byte for byte what scripts/make_play_tables.py writes
    today (the blocks' agreement with the engine is proven below)."""
    from pathlib import Path

    from support.scripts import load_script

    assert (fast.EFFECTIVE, fast.SUIT_MASK, fast.FOLLOW, fast.RANK_KEY,
            fast.BIT_FOR) == fast.build_tables()
    root = Path(__file__).resolve().parents[2]
    maker = load_script("scripts/make_play_tables.py")
    written = (root / "euchre_core" / "play_tables.py").read_text(encoding="utf-8")
    assert written == maker.render(), f"stale tables: run {maker.COMMAND}"
    from euchre_core import play_tables

    for size, tricks in fast.WRITTEN_BLOCKS:  # the written blocks are the ones used
        assert fast.trick_block(size, tricks) is play_tables.BLOCKS[size, tricks]


def test_read_deal_takes_only_the_canonical_form_and_deal_of_every_spelling() -> None:
    held = read_deal(HAND[0])
    deal = parse_event(HAND[0])
    assert isinstance(deal, Deal)
    assert held == fast.lanes([[fast.CARD_INDEX[c] for c in cards] for cards in deal.hands])
    assert read_deal(HAND[0].lower()) is None
    assert read_deal(HAND[0].replace("KS", "9S")) is None  # a card twice
    assert read_deal(HAND[0].replace(" E=", "  E")) is None
    for spelling in (with_checksum(HAND[0]), f"{HAND[0]}  # the deal", f"  {HAND[0]}\r"):
        assert read_deal(spelling) is None
        assert deal_of(spelling) == (deal, held)  # any spelling the parser takes
    assert deal_of(HAND[0].replace("KS", "9S")) is None  # the parser says why, line by line
    assert deal_of(HAND[1]) is None


def test_a_deal_line_s_seat_labels_are_read_as_written() -> None:
    """Each seat's head is checked at its place: a seat named twice, two seats'
    labels swapped, the seats in another order all replay as the engine says."""
    head, *fields = HAND[0].split(" ")
    north, east, south, west = fields
    east_twice = " ".join([head, north, east, south, "E=" + west[2:]])
    swapped = " ".join([head, north, "W=" + east[2:], south, "E=" + west[2:]])
    assert read_deal(east_twice) is None and read_deal(swapped) is None
    game = ["euchre-log 1", "game dealer=N"]
    assert agree("\n".join([*game, east_twice, *HAND[1:]]) + "\n") == "refused"
    assert replay("\n".join([*game, east_twice])).error.reason == "deal: seat E dealt twice"  # type: ignore[union-attr]
    assert agree("\n".join([*game, swapped, *HAND[1:]]) + "\n") == "refused"
    from itertools import permutations

    for order in permutations(fields):  # the same deal, the seats in any order: valid
        line = " ".join([head, *order])
        assert agree("\n".join([*game, line, *HAND[1:]]) + "\n", deep=True) == "valid"


def test_a_deal_made_from_its_line_is_the_parsed_deal() -> None:
    parsed, lazy = parse_event(HAND[0]), Deal.from_line(HAND[0])
    assert lazy.line() == HAND[0]
    assert (lazy, hash(lazy), repr(lazy)) == (parsed, hash(parsed), repr(parsed))
    assert pickle.loads(pickle.dumps(Deal.from_line(HAND[0]))) == parsed
    assert Deal.from_line(HAND[0]).hands == parsed.hands  # type: ignore[union-attr]
    with pytest.raises(AttributeError, match="events do not change"):
        lazy.hands = parsed.hands  # type: ignore[misc, union-attr]


@given(st.permutations(DECK), st.integers(0, 19), st.integers(0, 19))
def test_read_deal_refuses_any_card_twice(deck: list[Card], at: int, copy: int) -> None:
    """The deal line's fields are added, not or-ed: a card twice, in one seat or
    two, must still be refused (and a deal of twenty cards read exactly)."""
    hands = tuple(tuple(deck[5 * seat:5 * seat + 5]) for seat in range(4))
    line = Deal(hands).line()  # type: ignore[arg-type]
    assert read_deal(line) == fast.lanes([[fast.CARD_INDEX[c] for c in cards] for cards in hands])
    twice = list(deck[:20])
    twice[at] = twice[copy]
    bad = Deal(tuple(tuple(twice[5 * seat:5 * seat + 5]) for seat in range(4))).line()  # type: ignore[arg-type]
    assert (read_deal(bad) is None) == (at != copy)


def test_the_fast_path_takes_whole_hands_and_their_check_lines() -> None:
    game = Game()
    game.push(parse_event("game dealer=N"))  # type: ignore[arg-type]
    lines = [*HAND, "score NS=0 EW=2", "score NS=0 EW=2", "pass E"]
    codes = list(map(CODES.__getitem__, lines))
    assert game.replay_hands(lines, codes, 0) == len(HAND) + 2  # stops at a line on its own
    assert game.hands_played == 1 and game.hand.start == len(game.entries) == 1 + len(HAND)
    assert game.replay_hands(lines, codes, 0) == 0  # not at a hand's start: nothing
    wrong = [*HAND[:-1], HAND[-2]]  # the last card played twice
    fresh = Game()
    fresh.push(parse_event("game dealer=N"))  # type: ignore[arg-type]
    assert fresh.replay_hands(wrong, list(map(CODES.__getitem__, wrong)), 0) == 0
    assert fresh.entries == [parse_event("game dealer=N")]


def test_the_hands_the_fast_path_took_become_entries_and_results_when_first_asked() -> None:
    text = "\n".join([HEADER, "game dealer=N", *HAND, "score NS=0 EW=2"]) + "\n"
    read = replay(text)
    assert read.ok and read.game._owed  # a replay that only checks makes no entries nor results
    pushed, error = one_at_a_time(text)
    assert error is None
    assert read.game.hand.start == 1 + len(HAND) == pushed.hand.start
    assert read.game.results == pushed.results and read.game._owed_count  # the results alone
    assert read.game.entries == pushed.entries and not read.game._owed
    both = replay(text).game
    assert both.entries == pushed.entries and both._owed and both.results == pushed.results
    assert not both._owed
    again = replay(text)
    again.game.push(parse_event(HAND[0]))  # type: ignore[arg-type]  # after the owed hand
    assert again.game.entries == [*pushed.entries, parse_event(HAND[0])]
    assert again.game.undo() == parse_event(HAND[0]) and again.game.entries == pushed.entries
    assert replay(text).game == pushed  # equal games: the same rules, names and entries


# --- differential: the fast path against pushing line by line -------------------


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(card_games(rules_strategy()), winner_games()), st.booleans())
def test_random_legal_games_replay_as_pushed_line_by_line(played: object, checksums: bool) -> None:
    text = write_log(played.game, checksums=checksums)  # type: ignore[attr-defined]
    assert agree(text, deep=True) == "valid"


def mutate(rng: random.Random, lines: list[str]) -> list[str]:
    """One random change to one line (or one line inserted, deleted, moved)."""
    new = list(lines)
    index = rng.randrange(1, len(new))
    line = new[index]
    how = rng.randrange(11)
    seats, cards = "NESW", [f"{r}{s}" for s in "SHDC" for r in "9TJQKA"]
    if how == 0:
        del new[index]
    elif how == 1:
        new.insert(index, line)
    elif how == 2 and index + 1 < len(new):
        new[index], new[index + 1] = new[index + 1], new[index]
    elif how == 3:
        tokens = line.split(" ")
        at = rng.randrange(len(tokens))
        tokens[at] = rng.choice([*seats, *cards, "alone", "S", "H", "pass", "play", "trick"])
        new[index] = " ".join(tokens)
    elif how == 4:  # a card changed anywhere in the line (deal lines too)
        present = [card for card in cards if card in line]
        if present:
            new[index] = line.replace(rng.choice(present), rng.choice(cards), 1)
    elif how == 5:
        new.insert(index, rng.choice([
            f"trick {rng.choice(seats)}", f"pass {rng.choice(seats)}", "undo",
            f"play {rng.choice(seats)} {rng.choice(cards)}", "players N=Ann",
            f"order {rng.choice(seats)} alone", f"discard {rng.choice(cards)}", "misdeal",
            f"game dealer={rng.choice(seats)} NS={rng.randrange(12)} EW={rng.randrange(12)}",
        ]))
    elif how == 6:
        new[index] = line + " alone" if " alone" not in line else line.replace(" alone", "")
    elif how == 7:
        new[index] = line.lower() if rng.random() < 0.5 else line + "  # note"
    elif how == 8:
        seat = rng.choice(seats)
        new[index] = line[:5] + seat + line[6:] if len(line) > 6 else line
    elif how == 9:  # any field's label or value: a seat named twice, a label swapped, ...
        tokens = line.split(" ")
        labelled = [at for at, token in enumerate(tokens) if "=" in token]
        if labelled:
            at = rng.choice(labelled)
            label, _, value = tokens[at].partition("=")
            if rng.random() < 0.5:
                label = rng.choice([*seats, "NS", "EW", "dealer", label.lower()])
            else:
                value = rng.choice([value.lower(), value[::-1], value.replace(",", "", 1),
                                    ",".join(rng.sample(cards, 5)), "3"])
            tokens[at] = f"{label}={value}"
            new[index] = " ".join(tokens)
    else:  # a line's labelled fields in another order, or two fields' labels swapped
        head, *fields = line.split(" ")
        if len(fields) > 1 and all("=" in field for field in fields):
            if rng.random() < 0.5:
                rng.shuffle(fields)
            else:
                a, b = rng.sample(range(len(fields)), 2)
                (la, _, va), (lb, _, vb) = fields[a].partition("="), fields[b].partition("=")
                fields[a], fields[b] = f"{lb}={va}", f"{la}={vb}"
            new[index] = " ".join([head, *fields])
    return new


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(card_games(rules_strategy(targets=(1, 2, 3, 5))), winner_games()),
       st.integers(0, 2**32 - 1))
def test_random_single_line_changes_replay_as_pushed_line_by_line(
    played: object, seed: int
) -> None:
    """60 changes a game, 40 games a run: 2,400 changed logs, each replayed both ways."""
    rng = random.Random(seed)
    lines = write_log(played.game).split("\n")[:-1]  # type: ignore[attr-defined]
    verdicts = set()
    for _ in range(60):
        verdicts.add(agree("\n".join(mutate(rng, lines)) + "\n"))
    assert verdicts  # each one compared


@pytest.mark.parametrize("profile", sorted(RULE_PROFILES))
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_rules_profile_replays_changed_logs_as_pushed_line_by_line(
    profile: str, data: st.DataObject
) -> None:
    """Each profile the set-up menu offers (stick the dealer off, defend alone,
    Canadian loner...): 10 games of each kind, 60 changes each, both ways
    (9,600 changed logs over the eight profiles), some valid, most refused."""
    rules = st.just(RULE_PROFILES[profile])
    for games in (card_games(rules), winner_games(rules)):
        played = data.draw(games)
        rng = random.Random(data.draw(st.integers(0, 2**32 - 1)))
        lines = write_log(played.game).split("\n")[:-1]
        assert agree("\n".join(lines) + "\n") == "valid"
        verdicts = [agree("\n".join(mutate(rng, lines)) + "\n") for _ in range(60)]
        assert "refused" in verdicts


def test_every_example_log_replays_as_pushed_line_by_line() -> None:
    from pathlib import Path

    for path in sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.log")):
        agree(path.read_text(encoding="utf-8"), deep=True)


def test_a_deal_with_every_kind_of_bad_play_is_explained_by_the_engine() -> None:
    rng = random.Random(12)
    base = [HEADER, "game dealer=N", *HAND, "score NS=0 EW=2"]
    for index in range(5, len(HAND) + 2):
        for _ in range(30):
            changed = list(base)
            seat = rng.choice("NESW")
            card = rng.choice([c for c in ("9S", "AD", "KH", "JD", "9H", "TC", "QD", "AS")])
            changed[index] = f"play {seat} {card}" if rng.random() < 0.8 else changed[index]
            agree("\n".join(changed) + "\n")


def test_order_pass_and_deal_objects_stay_the_events_pushed() -> None:
    game = replay("\n".join([HEADER, "game dealer=N", *HAND]) + "\n").game
    assert isinstance(game.entries[1], Deal)
    assert game.entries[3] == Pass(Seat.E) and game.entries[4] == Order(Seat.S)


def with_trick_lines(text: str) -> list[str]:
    """A card-level log with each trick's winner checked by a ``trick`` line after it."""
    game, out = Game(), []
    for line in text.split("\n")[:-1]:
        if line.startswith("trick "):
            continue  # a check already there: made again below, after every trick
        out.append(line)
        event = parse_event(line) if line != HEADER else None
        if event is None or type(event).__name__ in ("ScoreCheck", "WinnerCheck"):
            continue
        game.push(event)  # type: ignore[arg-type]
        if line.startswith("play ") and game.pending_trick is not None:
            out.append(f"trick {game.pending_trick}")
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(card_games(rules_strategy(targets=(1, 3, 5))), st.integers(0, 2**32 - 1))
def test_hands_with_trick_check_lines_replay_as_pushed_line_by_line(
    played: object, seed: int
) -> None:
    lines = with_trick_lines(write_log(played.game))  # type: ignore[attr-defined]
    assert agree("\n".join(lines) + "\n", deep=True) == "valid"
    rng = random.Random(seed)
    for _ in range(40):
        agree("\n".join(mutate(rng, lines)) + "\n")


def test_a_hand_with_trick_check_lines_is_taken_whole() -> None:
    lines = with_trick_lines("\n".join([HEADER, "game dealer=N", *HAND]) + "\n")[2:]
    assert sum(line.startswith("trick ") for line in lines) == 5
    game = Game()
    game.push(parse_event("game dealer=N"))  # type: ignore[arg-type]
    assert game.replay_hands(lines, list(map(CODES.__getitem__, lines)), 0) == len(lines)
    assert game.pending_trick is None and game.hand.start == len(game.entries)
    wrong = [line.replace("trick ", "trick N" if line[-1] != "N" else "trick E")[:7]
             if line.startswith("trick ") else line for line in lines]
    assert wrong != lines
    fresh = Game()
    fresh.push(parse_event("game dealer=N"))  # type: ignore[arg-type]
    assert fresh.replay_hands(wrong, list(map(CODES.__getitem__, wrong)), 0) == 0


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(card_games(rules_strategy(targets=(1, 3, 5))), winner_games()),
       st.integers(0, 2**32 - 1), st.integers(1, 400))
def test_a_long_log_read_a_piece_at_a_time_replays_the_same(
    played: object, seed: int, piece: int
) -> None:
    """``replay`` splits a long text into lines a piece at a time (log.PIECE
    characters); a piece may end in the middle of a hand."""
    from euchre_core import log

    rng = random.Random(seed)
    lines = write_log(played.game).split("\n")[:-1]  # type: ignore[attr-defined]
    texts = ["\n".join(lines) + "\n", *("\n".join(mutate(rng, lines)) + "\n" for _ in range(5))]
    whole = [replay(text) for text in texts]
    saved = log.PIECE
    log.PIECE = piece
    try:
        for text, expected in zip(texts, whole):
            result = agree(text)  # against pushing line by line, with short pieces
            got = replay(text)
            assert (got.error, got.lines, got.game.entries) == (
                expected.error, expected.lines, expected.game.entries), result
    finally:
        log.PIECE = saved


def test_no_game_changes_the_shared_hand_of_a_game_not_started() -> None:
    """Every Game starts (and restarts on undo) with the one ``_NO_GAME_YET``
    hand: whatever is entered or refused before the first game, it stays new."""
    from euchre_core.game import _NO_GAME_YET, Hand

    def slots(hand: Hand) -> list[object]:
        return [getattr(hand, name) for name in Hand.__slots__]

    game = Game()
    for line in ["players N=Bo", "rules target=5", "pass N", "play N AS", "trick N",
                 "deal " + HAND[0][5:], "upcard TH", "winner NS", "score NS=0 EW=0"]:
        game.offer(parse_event(line))  # type: ignore[arg-type]
        game.legal_entries()
        assert game.hand is _NO_GAME_YET
    game.push(parse_event("game dealer=E"))  # type: ignore[arg-type]
    while game.entries:
        game.undo()
    assert game.hand is _NO_GAME_YET and slots(_NO_GAME_YET) == slots(Hand(1, Seat.N, 0))



# --- a game started from a score, a misdeal: both ways ------------------------------------


def from_score(played: object, ns: int, ew: int, misdeals: list[int]) -> Game:
    """``played``'s first game started from NS ``ns``, EW ``ew`` (the same entries
    until a side wins), with a misdeal before the entry at each index of
    ``misdeals`` where one is legal: the hand's entries so far are then entered
    again after it, as the table would after the same dealer dealt again."""
    source: Game = played.game  # type: ignore[attr-defined]
    game = Game()
    this_hand: list[object] = []
    for index, entry in enumerate(source.entries):
        if isinstance(entry, (NewGame, SetRules)) and game.phase is not Phase.SETUP:
            break  # the source's first game is over: so is this log
        if isinstance(entry, NewGame):
            game.push(NewGame(entry.dealer, ns, ew))
            this_hand = []
            continue
        if game.phase is Phase.GAME_OVER:
            break  # won sooner: it started nearer the target
        if index in misdeals and game.pending_trick is None and game.check(Misdeal()) is None:
            game.push(Misdeal())
            for again in this_hand:
                game.push(again)  # type: ignore[arg-type]
        game.push(entry)
        this_hand.append(entry)
        if game.hand.start == len(game.entries):
            this_hand = []
    return game


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(card_games(rules_strategy(targets=(5, 7, 10, 11))), winner_games()),
       st.data())
def test_random_starting_scores_and_misdeals_replay_as_pushed_line_by_line(
    played: object, data: st.DataObject
) -> None:
    """A random game started from a random score below the target, with misdeals
    at random points of the bidding, replays the same both ways (verdict, line,
    reason, state); so do 20 random changes to it each."""
    rules = Rules()  # the first game's
    for entry in played.game.entries:  # type: ignore[attr-defined]
        if isinstance(entry, NewGame):
            break
        if isinstance(entry, SetRules):
            rules = entry.rules
    ns = data.draw(st.integers(0, rules.target - 1), label="NS")
    ew = data.draw(st.integers(0, rules.target - 1), label="EW")
    count = len(played.game.entries)  # type: ignore[attr-defined]
    misdeals = data.draw(st.lists(st.integers(1, count), max_size=3), label="misdeals")
    game = from_score(played, ns, ew, misdeals)
    assert game.start_score == {Team.NS: ns, Team.EW: ew}
    text = write_log(game)
    game_line = next(line for line in text.split("\n") if line.startswith("game "))
    assert game_line.endswith(f" NS={ns} EW={ew}") == bool(ns or ew)
    assert agree(text, deep=True) == "valid"
    assert replay(text).game.score == game.score
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1)))
    lines = text.split("\n")[:-1]
    for _ in range(20):
        agree("\n".join(mutate(rng, lines)) + "\n")
