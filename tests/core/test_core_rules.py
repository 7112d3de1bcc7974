"""SPEC section 1, rule by rule, through ``Game.push`` and ``replay``.

Default names: N=Ragnar E=Sigríður S=South W=Anna.
"""

from __future__ import annotations

import copy

import pytest

from euchre_core import (
    DECK,
    SEATS,
    Card,
    Game,
    IllegalEntry,
    Phase,
    Rules,
    Seat,
    Suit,
    Team,
    parse_event,
    replay,
    write_log,
)
from euchre_core.events import (
    Call,
    Defend,
    Discard,
    Make,
    Misdeal,
    NewGame,
    Order,
    Pass,
    Play,
    Renege,
    Trick,
    Tricks,
    Upcard,
)

HEADER = "euchre-log 1"


# --- helpers ---------------------------------------------------------------------


def game_of(*lines: str) -> Game:
    """The game a log of ``lines`` (header added) gives; the log must be valid."""
    result = replay("\n".join([HEADER, *lines]) + "\n")
    assert result.error is None, str(result.error)
    return result.game


def push(game: Game, *lines: str) -> Game:
    for line in lines:
        game.push(parse_event(line))  # type: ignore[arg-type]
    return game


def state(game: Game) -> tuple[object, ...]:
    return (
        write_log(game),
        dict(game.score),
        game.hands_played,
        game.dealer,
        game.leader,
        game.expected,
        game.expected_kind,
        game.winner,
        game.phase,
        list(game.entries),
        game.pending_trick,
        game.rules,
        dict(game.names),
    )


def rejected(game: Game, line: str) -> str:
    """Push ``line``, expect IllegalEntry, check nothing changed; the reason."""
    entry = parse_event(line)
    before = state(game)
    with pytest.raises(IllegalEntry) as info:
        game.push(entry)  # type: ignore[arg-type]
    assert state(game) == before
    reason = str(info.value)
    assert game.check(entry) == reason  # type: ignore[arg-type]
    return reason


def score(game: Game) -> tuple[int, int]:
    return game.score[Team.NS], game.score[Team.EW]


def hand(maker_line: str, tricks: int) -> list[str]:
    return [maker_line, f"tricks {tricks}"]


# Card-level deals (all 24 cards accounted for in each).
# DEAL_A, dealer N, upcard 9H (kitty JH TC JC): S holds the J♦ and no other diamond.
DEAL_A = "deal N=TH,QH,KH,AH,QC E=AD,KD,QS,KS,AS S=JD,9S,TS,JS,9C W=QD,TD,9D,AC,KC"
# DEAL_A2: as DEAL_A but S holds J♦ and 9♦ (W gets the 9♠).
DEAL_A2 = "deal N=TH,QH,KH,AH,QC E=AD,KD,QS,KS,AS S=JD,9D,TS,JS,9C W=QD,TD,9S,AC,KC"
# DEAL_B, dealer W, upcard AS (kitty JH TC JC): E holds the J♦ and no heart.
DEAL_B = "deal N=AH,KH,9S,TS,9C E=JD,9D,TD,QS,KS S=QH,TH,AD,KD,QD W=9H,JS,QC,KC,AC"
# DEAL_SEED1, dealer S, upcard TH (kitty 9S KH AH): seed 001's worked trick.
DEAL_SEED1 = "deal N=9H,9D,TD,9C,TC E=JD,QD,KD,JC,QC S=JH,AD,KC,AC,QH W=AS,KS,QS,JS,TS"
# DEAL_L, dealer N, upcard AD (kitty AS AH AC): one suit each.
DEAL_L = "deal N=9S,TS,JS,QS,KS E=9H,TH,JH,QH,KH S=9D,TD,JD,QD,KD W=9C,TC,JC,QC,KC"

# S orders diamonds alone, N (the dealer) sits out but picks up and discards;
# S sweeps the three-card tricks.
LONE_DEALER_SITS_OUT = [
    "game dealer=N",
    DEAL_L,
    "upcard AD",
    "order S alone",
    "discard 9S",
    "play E JH", "play S JD", "play W 9C", "trick S",
    "play S 9D", "play W TC", "play E 9H", "trick S",
    "play S TD", "play W JC", "play E TH", "trick S",
    "play S QD", "play W QC", "play E QH", "trick S",
    "play S KD", "play W KC", "play E KH", "trick S",
]


# --- bidding ------------------------------------------------------------------------


@pytest.mark.parametrize("dealer", SEATS)
def test_bidding_starts_left_of_the_dealer(dealer: Seat) -> None:
    game = game_of(f"game dealer={dealer}", "upcard 9H")
    first = dealer.left
    for seat in SEATS:
        if seat is not first:
            assert rejected(game, f"pass {seat}") == (
                f"it is {game.name(first)}'s turn to bid, not {game.name(seat)}'s"
            )
    push(game, f"pass {first}")
    assert game.expected == f"{game.name(first.left)} to bid, round 1"


def test_bidding_goes_round_twice_in_turn() -> None:
    game = game_of("game dealer=N", "upcard 9H")
    assert game.expected == "the call: who made trump, which suit, alone?"
    order = ["E", "S", "W", "N", "E", "S", "W"]
    expected = [
        "South to bid, round 1", "Anna to bid, round 1", "Ragnar to bid, round 1",
        "Sigríður to bid, round 2", "South to bid, round 2", "Anna to bid, round 2",
        "Ragnar to bid, round 2",
    ]
    for seat, text in zip(order, expected):
        push(game, f"pass {seat}")
        assert game.expected == text
        assert game.expected_kind == "bid"


def test_bid_out_of_turn_rejected() -> None:
    game = game_of("game dealer=N", "upcard 9H", "pass E")
    assert rejected(game, "order W") == "it is South's turn to bid, not Anna's"
    assert rejected(game, "make N H") == "it is South's turn to bid, not Ragnar's"
    push(game, "order S")
    assert game.hand.maker is Seat.S
    assert game.hand.trump is Suit.HEARTS
    assert game.hand.round == 1


def test_round_one_only_the_upcard_suit() -> None:
    game = game_of("game dealer=N", "upcard 9H", "pass E")
    assert rejected(game, "call S D") == (
        "round 1: only hearts (the upcard) can be ordered up; South may order up or pass"
    )
    assert rejected(game, "make S D") == (
        "round 1: only hearts (the upcard) can be ordered up; South may order up or pass"
    )
    push(game, "make S H")
    assert game.hand.round == 1
    assert game.hand.trump is Suit.HEARTS


def test_dealer_may_order_up_in_round_one() -> None:
    game = game_of("game dealer=N", "upcard 9H", "pass E", "pass S", "pass W", "order N")
    assert game.hand.maker is Seat.N
    assert game.leader is Seat.E


@pytest.mark.parametrize("bid", ["order E", "call E H", "make E H", "call E ♥ alone"])
def test_turned_down_suit_is_dead_in_round_two(bid: str) -> None:
    game = game_of("game dealer=N", "upcard 9H", "pass E", "pass S", "pass W", "pass N")
    assert rejected(game, bid) == "hearts was turned down: name another suit"


def test_turned_down_suit_dead_for_every_seat_in_round_two() -> None:
    game = game_of("game dealer=N", "upcard JH", *(f"pass {s}" for s in "ESWNESW"))
    assert rejected(game, "call N H") == "hearts was turned down: name another suit"
    push(game, "call N D")
    assert game.hand.trump is Suit.DIAMONDS
    assert game.hand.round == 2


def test_turned_down_suit_dead_when_passes_not_recorded() -> None:
    game = game_of("game dealer=S", "upcard KS")
    assert rejected(game, "call E S") == "spades was turned down: name another suit"
    push(game, "call E C")
    assert game.hand.round == 2


def test_round_two_other_suits_accepted() -> None:
    for suit in "SDC":
        game = game_of("game dealer=N", "upcard 9H", "pass E", "pass S", "pass W", "pass N")
        push(game, f"call E {suit}")
        assert game.hand.trump is Suit.from_str(suit)
        assert game.hand.maker is Seat.E
        assert game.expected == "who won trick 1?"


def test_stick_the_dealer() -> None:
    game = game_of("game dealer=N", "upcard 9H", *(f"pass {s}" for s in "ESWNESW"))
    assert game.expected == "Ragnar to bid, round 2"
    assert rejected(game, "pass N") == "stick the dealer: Ragnar must name a suit"
    assert rejected(game, "call N H") == "hearts was turned down: name another suit"
    push(game, "call N S")
    assert game.hand.maker is Seat.N


def test_stick_the_dealer_other_dealer() -> None:
    game = game_of("game dealer=W", *(f"pass {s}" for s in "NESWNES"))
    assert rejected(game, "pass W") == "stick the dealer: Anna must name a suit"


def test_stick_the_dealer_off_throws_the_hand_in() -> None:
    game = game_of(
        "rules stick-the-dealer=off", "game dealer=N", "upcard 9H",
        *(f"pass {s}" for s in "ESWNESW"),
    )
    assert game.hands_played == 0
    push(game, "pass N")
    assert score(game) == (0, 0)
    assert game.hands_played == 1
    assert game.dealer is Seat.E
    assert game.leader is Seat.S
    assert game.hand.number == 2
    result = game.results[0]
    assert (result.how, result.team, result.points, result.maker) == ("thrown in", None, 0, None)
    assert game.expected == "the call: who made trump, which suit, alone?"
    # the next hand is an ordinary hand
    push(game, "make S C", "tricks 3")
    assert score(game) == (1, 0)
    assert game.dealer is Seat.S


def test_thrown_in_hand_without_upcard() -> None:
    passes = (f"pass {s}" for s in "NESWNESW")
    game = game_of("rules stick-the-dealer=off", "game dealer=W", *passes)
    assert (game.hands_played, game.dealer, score(game)) == (1, Seat.N, (0, 0))


# --- going alone ----------------------------------------------------------------------


def test_partner_sits_out_default_names() -> None:
    game = game_of("game dealer=N", "make S H alone")
    assert game.is_sitting_out(Seat.N)
    assert not game.is_sitting_out(Seat.S)
    assert rejected(game, "trick N") == "Ragnar sits out: South went alone"
    assert rejected(game, "renege N") == "Ragnar sits out: South went alone"


def test_partner_sits_out_anna() -> None:
    game = game_of("game dealer=N", "upcard 9H", "order E alone")
    assert rejected(game, "trick W") == "Anna sits out: Sigríður went alone"
    push(game, "trick E")
    assert rejected(game, "trick W") == "Anna sits out: Sigríður went alone"


def test_sits_out_message_uses_set_names() -> None:
    game = game_of('players N="Mary Ann" S=Bjørn', "game dealer=E", "make S D alone")
    assert rejected(game, "trick N") == "Mary Ann sits out: Bjørn went alone"


def test_only_the_maker_goes_alone_no_defending_alone_by_default() -> None:
    game = game_of("game dealer=N", "make S H alone")
    assert rejected(game, "defend E") == (
        "defending alone is not played here (house rule defend-alone=off)"
    )


def test_alone_is_declared_with_the_call() -> None:
    game = game_of("game dealer=N", "upcard 9H", "order E alone")
    assert game.hand.alone is True
    game = game_of("game dealer=N", "upcard 9H", "order E")
    assert game.hand.alone is False
    assert game.hand.sitting_out == ()


# --- who leads --------------------------------------------------------------------------


@pytest.mark.parametrize("dealer", SEATS)
def test_left_of_dealer_leads(dealer: Seat) -> None:
    game = game_of(f"game dealer={dealer}")
    assert game.leader is dealer.left
    push(game, "make N C")
    assert game.leader is dealer.left


def test_lead_skips_the_sitting_out_partner() -> None:
    # dealer N: left of the dealer is E, who sits out while W plays alone
    game = game_of("game dealer=N", "make W H alone")
    assert game.leader is Seat.S
    game = game_of("game dealer=N", "make S H alone")
    assert game.leader is Seat.E


def test_lone_lead_maker_left() -> None:
    game = game_of("rules lone-lead=maker-left", "game dealer=N", "make S H alone")
    assert game.leader is Seat.W
    game = game_of("rules lone-lead=maker-left", "game dealer=N", "make W H alone")
    assert game.leader is Seat.N
    game = game_of("rules lone-lead=maker-left", "game dealer=S", "make N H alone")
    assert game.leader is Seat.E
    # not a lone hand: left of the dealer as usual
    game = game_of("rules lone-lead=maker-left", "game dealer=N", "make W H")
    assert game.leader is Seat.E


def test_trick_winner_leads_next() -> None:
    game = game_of("game dealer=N", "make E H", "trick W")
    assert game.leader is Seat.W
    push(game, "trick S")
    assert game.leader is Seat.S


# --- dealer sitting out still picks up and discards ----------------------------------------


def test_dealer_sitting_out_picks_up_and_discards() -> None:
    game = game_of("game dealer=N", DEAL_L, "upcard AD", "order S alone")
    assert game.is_sitting_out(Seat.N)
    assert game.expected_kind == "discard"
    assert game.expected == "Ragnar (dealer) to discard"
    assert game.hand.cards is not None
    assert {str(c) for c in game.hand.cards[Seat.N]} == {"9S", "TS", "JS", "QS", "KS", "AD"}
    assert rejected(game, "play E JH") == "Ragnar (dealer) must discard first"
    assert rejected(game, "discard AS") == "Ragnar (dealer) does not hold AS"
    push(game, "discard 9S")
    assert rejected(game, "discard TS") == "Ragnar (dealer) already discarded"
    assert game.leader is Seat.E
    assert game.expected == "Sigríður to play to trick 1"


def test_lone_hand_three_card_tricks_and_march() -> None:
    game = game_of(*LONE_DEALER_SITS_OUT[:6])
    assert game.hand.trick == [Play(Seat.E, Card.from_str("JH"))]
    push(game, "play S JD")
    assert rejected(game, "play N TS") == "Ragnar sits out: South went alone"
    push(game, "play W 9C")
    assert game.pending_trick is Seat.S
    assert game.hand.tricks == [Seat.S]
    game = game_of(*LONE_DEALER_SITS_OUT)
    assert score(game) == (4, 0)
    assert game.results[0].how == "march"
    assert game.results[0].alone is True
    assert game.hands_played == 1
    assert game.dealer is Seat.E


def test_discard_rules() -> None:
    game = game_of("game dealer=N", "upcard 9H", "pass E", "pass S", "pass W", "pass N", "call E S")
    assert rejected(game, "discard 9S") == "the upcard was turned down: nobody discards"
    game = game_of("game dealer=N", "upcard 9H")
    assert rejected(game, "discard 9S") == "no trump yet: enter the call first"
    game = game_of("game dealer=N", "upcard 9H", "order E", "trick E")
    assert rejected(game, "discard 9S") == "too late to discard: play has begun"
    game = game_of("game dealer=N", "upcard 9H", "order E", "discard 9S")
    assert rejected(game, "discard TS") == "Ragnar (dealer) already discarded"


# --- scoring --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "tricks", "team", "points", "how"),
    [
        ("make N H", 3, Team.NS, 1, "made"),
        ("make N H", 4, Team.NS, 1, "made"),
        ("make N H", 5, Team.NS, 2, "march"),
        ("make N H", 2, Team.EW, 2, "euchred"),
        ("make N H", 1, Team.EW, 2, "euchred"),
        ("make N H", 0, Team.EW, 2, "euchred"),
        ("make N H alone", 3, Team.NS, 1, "made"),
        ("make N H alone", 4, Team.NS, 1, "made"),
        ("make N H alone", 5, Team.NS, 4, "march"),
        ("make N H alone", 2, Team.EW, 2, "euchred"),
        ("make N H alone", 0, Team.EW, 2, "euchred"),
        ("make W D", 3, Team.EW, 1, "made"),
        ("make W D", 5, Team.EW, 2, "march"),
        ("make W D alone", 5, Team.EW, 4, "march"),
        ("make W D alone", 1, Team.NS, 2, "euchred"),
    ],
)
def test_scoring(call: str, tricks: int, team: Team, points: int, how: str) -> None:
    game = game_of("game dealer=E", call, f"tricks {tricks}")
    expected = {Team.NS: 0, Team.EW: 0}
    expected[team] = points
    assert game.score == expected
    result = game.results[0]
    assert (result.how, result.team, result.points, result.maker_tricks) == (
        how, team, points, tricks,
    )
    assert result.number == 1
    assert result.dealer is Seat.E


def test_scoring_by_trick_lines() -> None:
    game = game_of("game dealer=N", "make E H", "trick E", "trick W", "trick N", "trick W",
                   "trick S")
    assert score(game) == (0, 1)
    game = game_of("game dealer=N", "make E H", *(["trick N"] * 3), "trick E", "trick W")
    assert score(game) == (2, 0)
    game = game_of("game dealer=N", "make E H alone", *(["trick E"] * 5))
    assert score(game) == (0, 4)


def test_spec_section_3_example() -> None:
    game = game_of(
        "players N=Ragnar E=Sigríður S=South W=Anna", "game dealer=N", "upcard 9H",
        "order E alone", "trick E", "trick S", "trick N", "trick E", "trick S",
        "score NS=2 EW=0",
    )
    assert score(game) == (2, 0)
    assert game.results[0].how == "euchred"
    assert game.dealer is Seat.E


# --- deal rotation, target, winner ---------------------------------------------------------


def test_deal_passes_left_each_hand() -> None:
    game = game_of("game dealer=W")
    dealers = []
    for _ in range(6):
        dealers.append(game.dealer)
        push(game, "make E C", "tricks 4")
    assert dealers == [Seat.W, Seat.N, Seat.E, Seat.S, Seat.W, Seat.N]
    assert game.hands_played == 6
    assert game.hand.number == 7
    assert score(game) == (0, 6)


def test_first_to_ten_wins() -> None:
    game = game_of("game dealer=N", *(hand("make N H", 5) * 4), *(hand("make E H", 3) * 9))
    assert score(game) == (8, 9)
    assert game.winner is None
    push(game, "make N H", "tricks 5")
    assert score(game) == (10, 9)
    assert game.winner is Team.NS
    assert game.phase is Phase.GAME_OVER
    assert game.dealer is None
    assert game.leader is None
    assert game.expected == "game over: NS won 10-9: new game?"
    assert game.expected_kind == "game"


def test_game_won_past_ten() -> None:
    game = game_of("game dealer=N", *(hand("make E H", 3) * 9), "make E H alone", "tricks 5")
    assert score(game) == (0, 13)
    assert game.winner is Team.EW


def test_after_the_win_only_a_new_game_or_undo() -> None:
    game = game_of("game dealer=N", *(hand("make N H alone", 5) * 3))
    assert game.winner is Team.NS
    reason = "game over: NS won 12-0: start a new game or undo"
    for line in ["make N H", "upcard 9H", "pass E", "trick N", "tricks 3", "renege E",
                 "play E AS", "discard 9S", "deal " + DEAL_L[5:]]:
        assert rejected(game, line) == reason
    assert {type(e) for e in game.legal_entries()} == {NewGame}
    before = state(game)
    removed = game.undo()
    assert removed == Tricks(5)
    assert game.winner is None
    assert score(game) == (8, 0)
    push(game, "tricks 5")
    assert state(game) == before
    push(game, "game dealer=S")
    assert score(game) == (0, 0)
    assert game.dealer is Seat.S
    assert game.hands_played == 0
    assert game.winner is None
    assert game.game_number == 2


def test_win_by_two() -> None:
    lines = ["rules win-by-two=on", "game dealer=N", *(hand("make N H", 5) * 4),
             *(hand("make E H", 5) * 4), *hand("make N H", 3), *hand("make E H", 3)]
    game = game_of(*lines)
    assert score(game) == (9, 9)
    push(game, "make N H", "tricks 3")
    assert score(game) == (10, 9)
    assert game.winner is None
    assert game.phase is Phase.IN_GAME
    push(game, "make E H", "tricks 3")
    assert (score(game), game.winner) == ((10, 10), None)
    push(game, "make N H", "tricks 3")
    assert (score(game), game.winner) == ((11, 10), None)
    push(game, "make N H", "tricks 3")
    assert (score(game), game.winner) == ((12, 10), Team.NS)
    # standard: 10-9 wins
    game = game_of(*lines[1:], "make N H", "tricks 3")
    assert (score(game), game.winner) == ((10, 9), Team.NS)


@pytest.mark.parametrize("target", [5, 7, 11, 15])
def test_target_scores(target: int) -> None:
    game = game_of(f"rules target={target}", "game dealer=N", *(hand("make N H", 3) * (target - 1)))
    assert score(game) == (target - 1, 0)
    assert game.winner is None
    push(game, "make S H", "tricks 3")
    assert score(game) == (target, 0)
    assert game.winner is Team.NS


def test_both_sides_never_reach_ten_in_one_hand() -> None:
    game = game_of("game dealer=N", *(hand("make N H", 3) * 9), *(hand("make E H", 3) * 9))
    assert score(game) == (9, 9)
    push(game, "make E H", "tricks 2")
    assert score(game) == (11, 9)
    assert game.winner is Team.NS


# --- defend alone -----------------------------------------------------------------------------


def test_defend_alone() -> None:
    game = game_of("rules defend-alone=on", "game dealer=N", "make S H alone", "defend E")
    assert game.hand.lone_defender is Seat.E
    assert set(game.hand.sitting_out) == {Seat.N, Seat.W}
    assert game.leader is Seat.E
    assert rejected(game, "trick W") == "Anna sits out: Sigríður defends alone"
    assert rejected(game, "trick N") == "Ragnar sits out: South went alone"
    assert rejected(game, "defend E") == "Sigríður already defends alone"


@pytest.mark.parametrize(
    ("rules", "tricks", "expected"),
    [
        ("rules defend-alone=on", 2, (0, 4)),
        ("rules defend-alone=on", 0, (0, 4)),
        ("rules defend-alone=on lone-defender-euchre=3", 2, (0, 3)),
        ("rules defend-alone=on lone-defender-euchre=3", 1, (0, 3)),
        ("rules defend-alone=on", 3, (1, 0)),
        ("rules defend-alone=on", 4, (1, 0)),
        ("rules defend-alone=on", 5, (4, 0)),
    ],
)
def test_lone_defender_scoring(rules: str, tricks: int, expected: tuple[int, int]) -> None:
    game = game_of(rules, "game dealer=N", "make S H alone", "defend E", f"tricks {tricks}")
    assert score(game) == expected


def test_defend_alone_refusals() -> None:
    on = "rules defend-alone=on"
    game = game_of(on, "game dealer=N")
    assert rejected(game, "defend E") == "no trump yet: enter the call first"
    game = game_of(on, "game dealer=N", "make S H")
    assert rejected(game, "defend E") == "a defender may go alone only against a lone maker"
    game = game_of(on, "game dealer=N", "make S H alone")
    assert rejected(game, "defend N") == "Ragnar is on the makers' side"
    assert rejected(game, "defend S") == "South is on the makers' side"
    game = game_of(on, "game dealer=N", "make S H alone", "trick S")
    assert rejected(game, "defend E") == "defending alone is declared right after the lone call"


def test_defend_alone_lead() -> None:
    # dealer N, W alone (E out), N defends alone (S out): left of dealer E and
    # S both sit out, so W leads.
    game = game_of("rules defend-alone=on", "game dealer=N", "make W H alone", "defend N")
    assert game.leader is Seat.W


# --- defenders sweep ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sweep", "tricks", "expected"),
    [
        (None, 0, (0, 2)),
        (4, 0, (0, 4)),
        (3, 0, (0, 3)),
        (4, 1, (0, 2)),
        (3, 2, (0, 2)),
        (4, 5, (2, 0)),
    ],
)
def test_defenders_sweep(sweep: int | None, tricks: int, expected: tuple[int, int]) -> None:
    rules = [] if sweep is None else [f"rules defenders-sweep={sweep}"]
    game = game_of(*rules, "game dealer=N", "make N S", f"tricks {tricks}")
    assert score(game) == expected


def test_defenders_sweep_by_trick_lines() -> None:
    game = game_of("rules defenders-sweep=4", "game dealer=N", "make N S",
                   "trick E", "trick W", "trick W", "trick E", "trick E")
    assert score(game) == (0, 4)


# --- canadian loner ---------------------------------------------------------------------


def test_canadian_loner() -> None:
    on = "rules canadian-loner=on"
    game = game_of(on, "game dealer=N", "upcard 9H")
    assert rejected(game, "order S") == (
        "Canadian loner: South ordered up partner Ragnar and must go alone"
    )
    assert rejected(game, "make S H") == (
        "Canadian loner: South ordered up partner Ragnar and must go alone"
    )
    push(game, "order S alone")
    assert game.hand.alone is True
    # other seats order up as usual
    game = game_of(on, "game dealer=N", "upcard 9H", "order E")
    assert game.hand.maker is Seat.E
    # round 2 calls by the dealer's partner are ordinary
    game = game_of(on, "game dealer=N", "upcard 9H", *(f"pass {s}" for s in "ESWNE"), "call S D")
    assert game.hand.alone is False
    # standard: an ordinary team call
    game = game_of("game dealer=N", "upcard 9H", "order S")
    assert game.hand.alone is False


def test_canadian_loner_in_turn() -> None:
    game = game_of("rules canadian-loner=on", "game dealer=E", "upcard 9C", "pass S")
    assert rejected(game, "order W") == (
        "Canadian loner: Anna ordered up partner Sigríður and must go alone"
    )


# --- renege -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "call", "reneger", "expected"),
    [
        ([], "make N H", "E", (2, 0)),
        ([], "make N H", "S", (0, 2)),
        ([], "make N H alone", "E", (2, 0)),
        (["rules renege-vs-loner=4"], "make N H alone", "E", (4, 0)),
        (["rules renege-vs-loner=4"], "make N H alone", "W", (4, 0)),
        (["rules renege-vs-loner=4"], "make N H alone", "N", (0, 2)),
        (["rules renege-vs-loner=4"], "make N H", "E", (2, 0)),
        (["rules renege-penalty=3"], "make W C", "W", (3, 0)),
    ],
)
def test_renege(rules: list[str], call: str, reneger: str, expected: tuple[int, int]) -> None:
    game = game_of(*rules, "game dealer=N", call, "trick N")
    push(game, f"renege {reneger}")
    assert score(game) == expected
    result = game.results[0]
    assert result.how == "renege"
    assert result.reneger is Seat.from_str(reneger)
    assert game.hands_played == 1
    assert game.dealer is Seat.E
    assert game.expected == "the call: who made trump, which suit, alone?"


def test_renege_refusals() -> None:
    game = game_of("game dealer=N", "upcard 9H")
    assert rejected(game, "renege E") == "no trump yet: a renege is called during play"
    game = game_of("game dealer=N", "make N H alone")
    assert rejected(game, "renege S") == "South sits out: Ragnar went alone"


def test_renege_can_win_the_game() -> None:
    game = game_of("game dealer=N", *(hand("make N H", 3) * 9), "make E S", "renege W")
    assert score(game) == (11, 0)
    assert game.winner is Team.NS


# --- tricks claims ---------------------------------------------------------------------------


def test_tricks_claim_range() -> None:
    game = game_of("game dealer=N", "make N H", "trick N", "trick S")
    assert rejected(game, "tricks 1") == (
        "the makers have 2 tricks with 3 to play: they finish with 2 to 5, not 1"
    )
    game = game_of("game dealer=N", "make N H", "trick E", "trick W", "trick E")
    assert rejected(game, "tricks 3") == (
        "the makers have 0 tricks with 2 to play: they finish with 0 to 2, not 3"
    )
    game = game_of("game dealer=N", "make N H", "trick N")
    assert rejected(game, "tricks 0") == (
        "the makers have 1 trick with 4 to play: they finish with 1 to 5, not 0"
    )
    push(game, "tricks 4")
    assert score(game) == (1, 0)
    game = game_of("game dealer=N", "upcard 9H")
    assert rejected(game, "tricks 3") == "no trump yet: enter the call first"
    assert rejected(game, "trick E") == "no trump yet: enter the call first"


def test_tricks_claim_after_some_tricks_counts_the_total() -> None:
    game = game_of("game dealer=N", "make E H", "trick E", "trick W", "trick N", "tricks 4")
    assert score(game) == (0, 1)
    assert game.results[0].maker_tricks == 4


# --- card-level plays -------------------------------------------------------------------------


def test_play_in_turn_and_card_in_hand() -> None:
    game = game_of("game dealer=N", DEAL_A, "upcard 9H", "order W", "discard QC")
    assert game.expected == "Sigríður to play to trick 1"
    assert rejected(game, "play S JD") == "it is Sigríður's turn to play, not South's"
    assert rejected(game, "play E 9H") == "Sigríður does not hold 9H"
    push(game, "play E AD")
    assert rejected(game, "play W QD") == "it is South's turn to play, not Anna's"


def test_left_bower_does_not_follow_its_printed_suit() -> None:
    """Hearts trump, diamonds led: S holds the J♦ and no other diamond, so may play anything."""
    game = game_of("game dealer=N", DEAL_A, "upcard 9H", "order W", "discard QC", "play E AD")
    for card in ["JD", "9S", "TS", "JS", "9C"]:
        assert game.check(Play(Seat.S, Card.from_str(card))) is None
    push(game, "play S 9C")
    # W holds three plain diamonds and must follow
    assert rejected(game, "play W AC") == "Anna must follow diamonds (holds 9D TD QD)"
    push(game, "play W QD")
    # N is void in diamonds: trumps in
    push(game, "play N 9H")
    assert game.pending_trick is Seat.N
    assert game.leader is Seat.N
    assert rejected(game, "trick E") == (
        "trick check: Ragnar won that trick (worked out from the plays), not Sigríður"
    )
    push(game, "trick N")
    assert game.entries[-1] == Trick(Seat.N)
    assert game.expected == "Ragnar to play to trick 2"


def test_left_bower_may_not_be_played_as_its_printed_suit() -> None:
    game = game_of("game dealer=N", DEAL_A2, "upcard 9H", "order W", "discard QC", "play E AD")
    assert rejected(game, "play S JD") == (
        "South must follow diamonds (holds 9D); JD is the left bower, a heart"
    )
    push(game, "play S 9D")


def test_left_bower_must_follow_trump() -> None:
    """Hearts trump, hearts led: E holds the J♦ and no other heart, and must play it."""
    game = game_of("game dealer=W", DEAL_B, "upcard AS", "make N H")
    assert game.hand.round == 2
    assert game.leader is Seat.N
    push(game, "play N AH")
    assert rejected(game, "play E 9D") == (
        "Sigríður must follow hearts (holds JD); the left bower is a heart"
    )
    assert rejected(game, "play E QS") == (
        "Sigríður must follow hearts (holds JD); the left bower is a heart"
    )
    push(game, "play E JD", "play S QH", "play W 9H")
    assert game.pending_trick is Seat.E  # the left bower beats the ace of trump


def test_seed_001_worked_trick_card_level() -> None:
    game = game_of("game dealer=S", DEAL_SEED1, "upcard TH", "order W", "discard AD")
    assert game.leader is Seat.W
    push(game, "play W AS", "play N 9H", "play E JD")
    assert game.pending_trick is None
    push(game, "play S JH")
    assert game.pending_trick is Seat.S
    assert game.hand.tricks == [Seat.S]
    assert rejected(game, "trick E") == (
        "trick check: South won that trick (worked out from the plays), not Sigríður"
    )
    push(game, "trick S")
    assert game.leader is Seat.S


def test_card_level_trick_line_without_plays_is_refused() -> None:
    game = game_of("game dealer=N", DEAL_A, "upcard 9H", "order W", "discard QC")
    assert rejected(game, "trick E") == (
        "this hand is entered card by card: enter plays, or claim with 'tricks N'"
    )
    push(game, "play E AD")
    assert rejected(game, "trick E") == "trick 1 is being played: South to play"
    assert rejected(game, "tricks 3") == "trick 1 is being played: South to play"


def test_card_level_claim_after_a_trick() -> None:
    game = game_of("game dealer=N", DEAL_A, "upcard 9H", "order W", "discard QC",
                   "play E AD", "play S 9C", "play W QD", "play N 9H", "tricks 2")
    # W's side made hearts; N won the only trick played, the makers claim 2 in all
    assert score(game) == (2, 0)


def test_plays_cannot_mix_with_trick_lines() -> None:
    game = game_of("game dealer=N", "upcard 9H", "order E", "trick E")
    assert rejected(game, "play E AS") == (
        "this hand's tricks are entered by winner: plays cannot be mixed in"
    )


def test_dealt_hand_needs_its_upcard_card() -> None:
    game = game_of("game dealer=N", DEAL_A)
    assert game.expected_kind == "upcard"
    assert game.expected == "the upcard (this hand was dealt)"
    assert rejected(game, "order E") == "this hand was dealt: enter its upcard first"
    assert rejected(game, "pass E") == "this hand was dealt: enter its upcard first"
    assert rejected(game, "upcard H") == (
        "this hand was dealt: enter the upcard card, not just its suit"
    )
    assert rejected(game, "upcard JD") == "JD was dealt to South: it cannot be the upcard"
    push(game, "upcard JH")
    assert rejected(game, "upcard 9H") == "the upcard is already entered (JH)"


def test_upcard_refusals() -> None:
    game = game_of("game dealer=N", "upcard H")
    assert rejected(game, "upcard D") == "the upcard is already entered (hearts)"
    game = game_of("game dealer=N", "make E S")
    assert rejected(game, "upcard 9S") == "the upcard comes before the bidding"
    assert rejected(game, "make S H") == "trump is already made: Sigríður made spades"
    assert rejected(game, "pass S") == "trump is already made: Sigríður made spades"
    game = game_of("game dealer=N")
    assert rejected(game, "order E") == "order up needs the upcard: enter it first, or use make"
    assert rejected(game, "play E AS") == "no trump yet: enter the call first"


def test_deal_must_start_the_hand() -> None:
    game = game_of("game dealer=N", "upcard 9H")
    assert rejected(game, DEAL_A) == "deal must be the first line of a hand"


def test_second_dealt_hand_after_a_card_level_hand() -> None:
    lines = [line for line in LONE_DEALER_SITS_OUT if not line.startswith("trick")]
    game = game_of(*lines, DEAL_A)
    assert game.expected == "the upcard (this hand was dealt)"
    assert game.dealer is Seat.E


def test_deal_after_a_final_trick_check() -> None:
    result = replay("\n".join([HEADER, *LONE_DEALER_SITS_OUT, DEAL_A]) + "\n")
    assert result.error is None
    assert result.game.expected == "the upcard (this hand was dealt)"


def test_full_card_level_hand_scores() -> None:
    game = game_of(*LONE_DEALER_SITS_OUT)
    assert score(game) == (4, 0)
    assert game.results[0].maker_tricks == 5


# --- plays without a deal -----------------------------------------------------------------------


UNSEEN = ["game dealer=N", "upcard 9H", "order E", "discard 9S"]


def test_unseen_card_played_twice() -> None:
    game = game_of(*UNSEEN, "play E AS", "play S KS", "play W QS", "play N TS")
    assert game.pending_trick is Seat.E
    assert rejected(game, "play E AS") == "AS was already played (trick 1, Sigríður)"
    assert rejected(game, "play E 9S") == "9S was the dealer's discard"
    assert rejected(game, "play E 9H") == "9H went to the dealer, Ragnar"


def test_unseen_turned_down_upcard_out_of_play() -> None:
    game = game_of("game dealer=N", "upcard 9H", *(f"pass {s}" for s in "ESWN"), "call E S")
    assert rejected(game, "play E 9H") == "9H was turned down: it is out of play"


def test_unseen_dealer_may_play_the_upcard() -> None:
    game = game_of("game dealer=N", "upcard 9H", "order E", "play E AS", "play S KS",
                   "play W QS", "play N 9H")
    assert game.pending_trick is Seat.N


def test_unseen_showing_out_then_playing_the_suit_is_a_renege() -> None:
    game = game_of(*UNSEEN, "play E AD", "play S AC", "play W KD", "play N QD", "trick E",
                   "play E 9D")
    assert rejected(game, "play S TD") == (
        "renege: South showed out of diamonds on trick 1, then played TD; enter 'renege S'"
    )
    push(game, "play S JD")  # the left bower is a heart: no renege
    push(game, "renege S")
    assert score(game) == (0, 2)


def test_unseen_left_bower_shows_out_of_its_printed_suit() -> None:
    """Hearts trump: playing the J♦ on a diamond lead shows out of diamonds."""
    game = game_of(*UNSEEN, "play E AD", "play S JD", "play W KD", "play N QD")
    assert game.pending_trick is Seat.S
    push(game, "play S AS", "play W KS", "play N QS", "play E TS")
    assert game.pending_trick is Seat.S
    assert rejected(game, "play S TD") == (
        "renege: South showed out of diamonds on trick 1, then played TD; enter 'renege S'"
    )


def test_unseen_showing_out_of_trump_then_playing_the_left_bower() -> None:
    """Hearts trump: S shows out of hearts, so S cannot hold the J♦ (a heart)."""
    game = game_of(*UNSEEN, "play E AH", "play S 9C", "play W KH", "play N QH", "play E 9D")
    assert game.hand.tricks == [Seat.E]
    assert rejected(game, "play S JD") == (
        "renege: South showed out of hearts on trick 1, then played JD; enter 'renege S'"
    )
    push(game, "play S TD")


# --- legal_entries() ------------------------------------------------------------------------


def universe() -> list[object]:
    """Every fixed-form entry there is (no players/rules/deal)."""
    out: list[object] = [NewGame(seat) for seat in SEATS]
    out += [Upcard(suit) for suit in Suit]
    out += [Upcard(card.suit, card) for card in DECK]
    for seat in SEATS:
        out += [Pass(seat), Defend(seat), Trick(seat), Renege(seat)]
        for alone in (False, True):
            out.append(Order(seat, alone))
            for suit in Suit:
                out += [Call(seat, suit, alone), Make(seat, suit, alone)]
        out += [Play(seat, card) for card in DECK]
    out += [Discard(card) for card in DECK]
    out += [Tricks(count) for count in range(6)]
    out.append(Misdeal())
    return out


def check_contract(game: Game) -> list[object]:
    """legal_entries() lists exactly the accepted entries, and push takes each."""
    listed = game.legal_entries()
    assert len(listed) == len(set(listed)), "legal_entries() lists an entry twice"
    for entry in listed:
        assert game.check(entry) is None, entry
        copy.deepcopy(game).push(entry)
    accepted = {entry for entry in universe() if game.check(entry) is None}  # type: ignore[arg-type]
    assert accepted == set(listed)
    return listed


def test_legal_entries_at_the_start() -> None:
    listed = check_contract(Game())
    assert listed == [NewGame(seat) for seat in SEATS]


def test_legal_entries_before_the_call() -> None:
    game = game_of("game dealer=N")
    listed = check_contract(game)
    assert len(listed) == 94
    assert listed[-1] == Misdeal()
    assert [e for e in listed if isinstance(e, Pass)] == [Pass(Seat.E)]
    assert [e for e in listed if isinstance(e, Upcard)] == [
        *(Upcard(suit) for suit in Suit), *(Upcard(card.suit, card) for card in DECK)
    ]
    assert not [e for e in listed if isinstance(e, Order)]


def test_legal_entries_in_round_one() -> None:
    game = game_of("game dealer=N", "upcard 9H", "pass E")
    listed = check_contract(game)
    assert set(listed) == {
        Pass(Seat.S), Order(Seat.S), Order(Seat.S, True),
        Make(Seat.S, Suit.HEARTS), Make(Seat.S, Suit.HEARTS, True), Misdeal(),
    }


def test_legal_entries_stick_the_dealer() -> None:
    game = game_of("game dealer=N", "upcard 9H", *(f"pass {s}" for s in "ESWNESW"))
    listed = check_contract(game)
    assert Pass(Seat.N) not in listed
    assert set(listed) == {
        kind(Seat.N, suit, alone)
        for kind in (Call, Make) for suit in (Suit.SPADES, Suit.DIAMONDS, Suit.CLUBS)
        for alone in (False, True)
    } | {Misdeal()}


def test_legal_entries_lone_hand_by_winner() -> None:
    game = game_of("game dealer=N", "upcard 9H", "order S alone", "trick S")
    listed = check_contract(game)
    assert Trick(Seat.N) not in listed
    assert Renege(Seat.N) not in listed
    assert {e for e in listed if isinstance(e, Trick)} == {Trick(Seat.E), Trick(Seat.S),
                                                           Trick(Seat.W)}
    assert {e for e in listed if isinstance(e, Tricks)} == {Tricks(n) for n in range(1, 6)}
    assert not [e for e in listed if isinstance(e, Play)]


def test_legal_entries_card_level_must_follow() -> None:
    game = game_of("game dealer=N", DEAL_A, "upcard 9H", "order W", "discard QC",
                   "play E AD", "play S 9C")
    listed = check_contract(game)
    plays = {str(e.card) for e in listed if isinstance(e, Play)}
    assert plays == {"QD", "TD", "9D"}
    assert all(e.seat is Seat.W for e in listed if isinstance(e, Play))
    assert not [e for e in listed if isinstance(e, (Trick, Tricks, Discard))]


def test_legal_entries_discard_pending() -> None:
    game = game_of("game dealer=N", DEAL_L, "upcard AD", "order S alone")
    listed = check_contract(game)
    discards = {str(e.card) for e in listed if isinstance(e, Discard)}
    assert discards == {"9S", "TS", "JS", "QS", "KS", "AD"}
    assert not [e for e in listed if isinstance(e, Play)]


def test_legal_entries_trick_check_pending() -> None:
    game = game_of(*LONE_DEALER_SITS_OUT[:8])
    assert game.pending_trick is Seat.S
    listed = check_contract(game)
    assert [e for e in listed if isinstance(e, Trick)] == [Trick(Seat.S)]
    assert {str(e.card) for e in listed if isinstance(e, Play)} == {
        "9D", "TD", "QD", "KD"
    }


def test_legal_entries_has_no_duplicates_with_a_trick_check_pending() -> None:
    game = game_of(*LONE_DEALER_SITS_OUT[:8])
    listed = game.legal_entries()
    assert listed.count(Trick(Seat.S)) == 1


def test_legal_entries_has_no_duplicates() -> None:
    for lines in (["game dealer=N"], ["game dealer=N", "make E S", "trick W"],
                  LONE_DEALER_SITS_OUT[:6]):
        listed = game_of(*lines).legal_entries()
        assert len(listed) == len(set(listed))


def test_legal_entries_game_over() -> None:
    game = game_of("game dealer=N", *(hand("make N H alone", 5) * 3))
    assert check_contract(game) == [NewGame(seat) for seat in SEATS]


def test_legal_entries_defend_alone() -> None:
    game = game_of("rules defend-alone=on", "game dealer=N", "make S H alone")
    listed = check_contract(game)
    assert {e for e in listed if isinstance(e, Defend)} == {Defend(Seat.E), Defend(Seat.W)}
    push(game, "defend W")
    listed = check_contract(game)
    assert {e for e in listed if isinstance(e, Trick)} == {Trick(Seat.S), Trick(Seat.W)}


# --- undo -----------------------------------------------------------------------------------


UNDO_LINES = [
    "players W=Wanda",
    "rules target=5",
    "game dealer=N",
    "upcard 9H",
    "pass E",
    "order S alone",
    "trick S",
    "trick E",
    "tricks 4",
    "make W C",
    "tricks 0",
    "make N D alone",
    "tricks 5",
    "game dealer=W",
    DEAL_L,
    "upcard AD",
    "order E",
    "discard 9C",
    "play N JS",
]


def undo_state(game: Game) -> tuple[object, ...]:
    return (write_log(game), dict(game.score), game.hands_played, game.dealer, game.expected,
            game.winner, game.rules, dict(game.names), len(game.entries), game.leader)


def test_undo_steps_back_exactly() -> None:
    game = Game()
    states = [undo_state(game)]
    for line in UNDO_LINES:
        push(game, line)
        states.append(undo_state(game))
    # sanity: the states really differ along the way
    assert states[9][1] == {Team.NS: 1, Team.EW: 0}
    assert states[13][5] is Team.NS
    assert states[-1][-1] is Seat.N
    assert states[-1][4] == "Sigríður to play to trick 1"
    entries = list(game.entries)
    for index in range(len(UNDO_LINES), 0, -1):
        removed = game.undo()
        assert removed == entries[index - 1]
        assert undo_state(game) == states[index - 1]
    assert undo_state(game) == undo_state(Game())
    with pytest.raises(IllegalEntry) as info:
        game.undo()
    assert str(info.value) == "nothing to undo: this is the start"


def test_undo_then_redo_gives_the_same_state() -> None:
    game = game_of(*LONE_DEALER_SITS_OUT)
    full = state(game)
    removed = [game.undo() for _ in range(6)]
    assert game.pending_trick is None
    assert game.hands_played == 0
    for entry in reversed(removed):
        game.push(entry)
    assert state(game) == full


def test_undo_keeps_the_starting_setup() -> None:
    game = Game(rules=Rules(target=5), names={**Game().names, Seat.S: "Mary Ann"})
    push(game, "game dealer=E", "make S H", "tricks 5")
    game.undo()
    game.undo()
    game.undo()
    assert game.rules == Rules(target=5)
    assert game.name(Seat.S) == "Mary Ann"
    assert game.entries == []
    with pytest.raises(IllegalEntry, match="^nothing to undo: this is the start$"):
        game.undo()


def test_passes_recorded_without_an_upcard() -> None:
    game = game_of("game dealer=N", "pass E", "pass S")
    assert game.expected == "Anna to bid, round 1"
    assert rejected(game, "pass S") == "it is Anna's turn to bid, not South's"
    assert rejected(game, "order W") == "order up needs the upcard: enter it first, or use make"
    push(game, "make W D")
    assert (game.hand.maker, game.hand.trump, game.hand.round) == (Seat.W, Suit.DIAMONDS, 1)


def test_round_two_call_in_round_one_without_an_upcard_is_refused() -> None:
    game = game_of("game dealer=N", "pass E")
    before = state(game)
    with pytest.raises(IllegalEntry):
        push(game, "call S D")
    assert state(game) == before
    assert Call(Seat.S, Suit.DIAMONDS) not in game.legal_entries()
    result = replay("\n".join([HEADER, "game dealer=N", "pass E", "call S D", "tricks 3"]))
    assert result.error is not None
    assert result.error.line == 4
    assert len(result.game.entries) == 2
