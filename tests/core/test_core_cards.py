"""Cards, suits, seats and teams: parse/format pairs, reprs, and the trump rules
(SPEC section 1: bowers, effective suit, trick winners)."""

from __future__ import annotations

import pickle

import pytest

from euchre_core import (
    DECK,
    SEATS,
    Card,
    Rank,
    Seat,
    Suit,
    Team,
    card_power,
    effective_suit,
    is_left_bower,
    trick_winner,
)

C = Card.from_str
S, H, D, CL = Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS


def plays(*pairs: str) -> list[tuple[Seat, Card]]:
    """``plays("W AS", "N 9H")`` -> [(Seat.W, AS), (Seat.N, 9H)]."""
    out = []
    for pair in pairs:
        seat, card = pair.split()
        out.append((Seat.from_str(seat), C(card)))
    return out


# --- Card: parse/format ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical", "pretty"),
    [
        ("JH", "JH", "J♥"),
        ("TS", "TS", "10♠"),
        ("10S", "TS", "10♠"),
        ("J♥", "JH", "J♥"),
        ("10♦", "TD", "10♦"),
        ("9♣", "9C", "9♣"),
        ("AS", "AS", "A♠"),
        ("jh", "JH", "J♥"),
        ("qd", "QD", "Q♦"),
        ("Kc", "KC", "K♣"),
    ],
)
def test_card_parse_and_format(text: str, canonical: str, pretty: str) -> None:
    card = C(text)
    assert str(card) == canonical
    assert card.pretty == pretty
    assert repr(card) == f"Card.from_str('{canonical}')"
    assert C(str(card)) is card


def test_card_repr_is_valid_python() -> None:
    card = C("10S")
    assert repr(card) == "Card.from_str('TS')"
    assert eval(repr(card), {"Card": Card}) is card


def test_card_fields_and_interning() -> None:
    card = C("JH")
    assert card.rank is Rank.JACK
    assert card.suit is Suit.HEARTS
    assert Card(Rank.JACK, Suit.HEARTS) is card
    assert C("J♥") is card
    assert pickle.loads(pickle.dumps(card)) is card


def test_card_is_immutable() -> None:
    card = C("AS")
    with pytest.raises(AttributeError, match="cards are immutable"):
        card.rank = Rank.NINE  # type: ignore[misc]


@pytest.mark.parametrize("text", ["1S", "8H", "JX", "", "J", "AHH", "11S", "10", "JO", "♥J"])
def test_card_bad_input_names_the_text(text: str) -> None:
    with pytest.raises(ValueError) as info:
        C(text)
    assert str(info.value) == f"not a card: {text!r} (rank 9 T J Q K A, then suit S H D C)"


def test_deck_is_the_24_card_euchre_deck() -> None:
    assert len(DECK) == 24
    assert len(set(DECK)) == 24
    assert [str(card) for card in DECK[:6]] == ["9S", "TS", "JS", "QS", "KS", "AS"]
    assert {card.rank for card in DECK} == set(Rank)
    for suit in Suit:
        assert sum(1 for card in DECK if card.suit is suit) == 6


# --- Suit, Rank ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "suit"),
    [
        ("S", S), ("H", H), ("D", D), ("C", CL),
        ("s", S), ("h", H), ("d", D), ("c", CL),
        ("♠", S), ("♥", H), ("♦", D), ("♣", CL),
    ],
)
def test_suit_parse(text: str, suit: Suit) -> None:
    assert Suit.from_str(text) is suit


def test_suit_format_repr_symbol_word() -> None:
    assert [str(s) for s in Suit] == ["S", "H", "D", "C"]
    assert [s.symbol for s in Suit] == ["♠", "♥", "♦", "♣"]
    assert [s.word for s in Suit] == ["spades", "hearts", "diamonds", "clubs"]
    assert repr(H) == "Suit.from_str('H')"
    assert eval(repr(H), {"Suit": Suit}) is H
    assert [s.is_red for s in Suit] == [False, True, True, False]


@pytest.mark.parametrize("text", ["X", "", "HS", "hearts", "♡"])
def test_suit_bad_input(text: str) -> None:
    with pytest.raises(ValueError) as info:
        Suit.from_str(text)
    assert str(info.value) == f"not a suit: {text!r} (use S H D C)"


def test_suit_sister() -> None:
    assert S.sister is CL
    assert CL.sister is S
    assert H.sister is D
    assert D.sister is H
    for suit in Suit:
        assert suit.sister.sister is suit
        assert suit.sister.is_red == suit.is_red


def test_rank_format_and_order() -> None:
    assert [str(r) for r in Rank] == ["9", "T", "J", "Q", "K", "A"]
    assert [r.order for r in Rank] == [0, 1, 2, 3, 4, 5]
    assert repr(Rank.TEN) == "Rank('T')"


# --- Seat, Team -----------------------------------------------------------------


def test_seats_clockwise_left() -> None:
    assert SEATS == (Seat.N, Seat.E, Seat.S, Seat.W)
    assert Seat.N.left is Seat.E
    assert Seat.E.left is Seat.S
    assert Seat.S.left is Seat.W
    assert Seat.W.left is Seat.N


def test_seat_partner_and_team() -> None:
    assert Seat.N.partner is Seat.S
    assert Seat.S.partner is Seat.N
    assert Seat.E.partner is Seat.W
    assert Seat.W.partner is Seat.E
    assert Seat.N.team is Team.NS
    assert Seat.S.team is Team.NS
    assert Seat.E.team is Team.EW
    assert Seat.W.team is Team.EW


def test_seat_parse_format_repr() -> None:
    for seat in SEATS:
        assert Seat.from_str(str(seat)) is seat
        assert Seat.from_str(str(seat).lower()) is seat
        assert repr(seat) == f"Seat.from_str('{seat}')"
        assert eval(repr(seat), {"Seat": Seat}) is seat


@pytest.mark.parametrize("text", ["X", "", "NE", "north"])
def test_seat_bad_input(text: str) -> None:
    with pytest.raises(ValueError) as info:
        Seat.from_str(text)
    assert str(info.value) == f"not a seat: {text!r} (use N E S W)"


def test_team_parse_format_other() -> None:
    assert Team.from_str("NS") is Team.NS
    assert Team.from_str("ew") is Team.EW
    assert Team.NS.other is Team.EW
    assert Team.EW.other is Team.NS
    assert str(Team.EW) == "EW"
    assert repr(Team.NS) == "Team.from_str('NS')"
    with pytest.raises(ValueError) as info:
        Team.from_str("NE")
    assert str(info.value) == "not a team: 'NE' (use NS or EW)"


# --- effective suit -------------------------------------------------------------


@pytest.mark.parametrize("trump", list(Suit))
def test_left_bower_is_trump_for_every_trump_suit(trump: Suit) -> None:
    left = Card(Rank.JACK, trump.sister)
    right = Card(Rank.JACK, trump)
    assert effective_suit(left, trump) is trump
    assert effective_suit(right, trump) is trump
    assert is_left_bower(left, trump)
    assert not is_left_bower(right, trump)
    for other in Suit:
        if other not in (trump, trump.sister):
            jack = Card(Rank.JACK, other)
            assert effective_suit(jack, trump) is other
            assert not is_left_bower(jack, trump)


@pytest.mark.parametrize("trump", list(Suit))
def test_only_the_left_bower_changes_suit(trump: Suit) -> None:
    changed = [card for card in DECK if effective_suit(card, trump) is not card.suit]
    assert changed == [Card(Rank.JACK, trump.sister)]
    assert sum(1 for card in DECK if effective_suit(card, trump) is trump) == 7
    assert sum(1 for card in DECK if effective_suit(card, trump) is trump.sister) == 5


def test_effective_suit_examples() -> None:
    assert effective_suit(C("JD"), H) is H
    assert effective_suit(C("JH"), D) is D
    assert effective_suit(C("JC"), S) is S
    assert effective_suit(C("JS"), CL) is CL
    assert effective_suit(C("JD"), S) is D
    assert effective_suit(C("JC"), H) is CL
    assert effective_suit(C("AD"), H) is D


# --- card power ------------------------------------------------------------------


@pytest.mark.parametrize("trump", list(Suit))
def test_trump_ranking(trump: Suit) -> None:
    """Right bower, left bower, A K Q 10 9 of trump, whatever suit is led."""
    order = [
        Card(Rank.JACK, trump), Card(Rank.JACK, trump.sister), Card(Rank.ACE, trump),
        Card(Rank.KING, trump), Card(Rank.QUEEN, trump), Card(Rank.TEN, trump),
        Card(Rank.NINE, trump),
    ]
    for led in Suit:
        powers = [card_power(card, trump, led) for card in order]
        assert powers == sorted(powers, reverse=True)
        assert len(set(powers)) == 7
        assert powers[0] == 20
        assert powers[1] == 19
        # any trump beats any card of any other suit
        best_plain = max(
            card_power(card, trump, led)
            for card in DECK
            if effective_suit(card, trump) is not trump
        )
        assert min(powers) > best_plain


def test_plain_suit_ranking_a_k_q_j_10_9() -> None:
    order = [C("AC"), C("KC"), C("QC"), C("JC"), C("TC"), C("9C")]
    powers = [card_power(card, H, CL) for card in order]
    assert powers == [5, 4, 3, 2, 1, 0]


def test_same_colour_suit_lacks_its_jack() -> None:
    """Hearts trump: diamonds rank A K Q 10 9; the J♦ is a heart."""
    diamonds = [card for card in DECK if effective_suit(card, H) is D]
    assert [str(card) for card in diamonds] == ["9D", "TD", "QD", "KD", "AD"]
    powers = [card_power(card, H, D) for card in diamonds]
    assert powers == sorted(powers)
    assert len(set(powers)) == 5
    assert card_power(C("JD"), H, D) == 19  # it is trump, not a diamond
    # spades trump: clubs lose their jack
    clubs = [str(card) for card in DECK if effective_suit(card, S) is CL]
    assert clubs == ["9C", "TC", "QC", "KC", "AC"]


def test_off_suit_cards_never_win() -> None:
    for trump in Suit:
        for led in Suit:
            if led is trump:
                continue
            for card in DECK:
                suit = effective_suit(card, trump)
                if suit not in (trump, led):
                    assert card_power(card, trump, led) == -1


def test_left_bower_beats_ace_of_trump() -> None:
    assert card_power(C("JD"), H, H) > card_power(C("AH"), H, H)
    assert trick_winner(plays("N AH", "E JD"), H) is Seat.E
    assert trick_winner(plays("N JD", "E AH", "S KH", "W JH"), H) is Seat.W


# --- trick winners ------------------------------------------------------------------


def test_seed_001_worked_trick() -> None:
    """Hearts trump: W leads A♠, N ruffs 9♥, E overtrumps with the left bower
    J♦, S takes it with the right bower J♥."""
    trick = plays("W AS", "N 9H", "E JD", "S JH")
    assert trick_winner(trick, H) is Seat.S
    assert trick_winner(trick[:3], H) is Seat.E
    assert trick_winner(trick[:2], H) is Seat.N
    assert trick_winner(trick[:1], H) is Seat.W


def test_seed_004_spades_trump_example() -> None:
    """Spades trump: A♦ led, 9♦, 10♦, then 9♠ trumps and wins."""
    trick = plays("N A♦", "E 9♦", "S 10♦", "W 9♠")
    assert trick_winner(trick, S) is Seat.W
    assert trick_winner(trick[:3], S) is Seat.N


def test_highest_card_of_the_led_suit_wins_without_trump() -> None:
    assert trick_winner(plays("N 9C", "E AS", "S TC", "W AD"), H) is Seat.S
    assert trick_winner(plays("N KC", "E AC", "S QC", "W JC"), H) is Seat.E


def test_off_suit_ace_does_not_win() -> None:
    assert trick_winner(plays("E 9D", "S AS", "W AC", "N AH"), S) is Seat.S
    assert trick_winner(plays("E 9D", "S AC", "W AS", "N AH"), H) is Seat.N
    assert trick_winner(plays("E 9D", "S AC", "W AS", "N KD"), H) is Seat.N
    assert trick_winner(plays("E 9D", "S AC", "W AS", "N KH"), CL) is Seat.S


def test_left_bower_led_leads_trump() -> None:
    """Hearts trump: J♦ led is a heart lead; the A♦ is off-suit and cannot win,
    the A♥ follows but ranks below the left bower."""
    assert trick_winner(plays("N JD", "E AD", "S AH", "W KD"), H) is Seat.N
    assert trick_winner(plays("N JD", "E AD", "S JH", "W KD"), H) is Seat.S


def test_left_bower_on_its_printed_suit_lead_is_a_trump() -> None:
    """Hearts trump, diamonds led: the J♦ is a trump and beats the A♦."""
    assert trick_winner(plays("N AD", "E JD", "S KD", "W QD"), H) is Seat.E


def test_jack_of_other_colour_is_plain() -> None:
    """Hearts trump, clubs led: the J♣ is an ordinary club below the A♣."""
    assert trick_winner(plays("N JC", "E AC", "S 9C", "W TC"), H) is Seat.E
    assert trick_winner(plays("N JC", "E 9C", "S QC", "W JS"), H) is Seat.S


def test_three_card_trick_in_a_lone_hand() -> None:
    assert trick_winner(plays("E 9S", "S TS", "W 9H"), H) is Seat.W
    assert trick_winner(plays("E 9S", "S TS", "W QS"), D) is Seat.W
