"""SPEC section 3: the game log, read with ``replay`` and written with ``write_log``."""

from __future__ import annotations

import binascii

import pytest

from euchre_core import (
    RULE_KEYS,
    Game,
    LogSyntaxError,
    Rules,
    Seat,
    Team,
    checksum,
    parse_event,
    replay,
    write_log,
)
from euchre_core.events import Players, SetRules

HEADER = "euchre-log 1"

# dealer N, upcard 9H (kitty JH TC JC)
DEAL_A = "deal N=TH,QH,KH,AH,QC E=AD,KD,QS,KS,AS S=JD,9S,TS,JS,9C W=QD,TD,9D,AC,KC"
DEAL_L = "deal N=9S,TS,JS,QS,KS E=9H,TH,JH,QH,KH S=9D,TD,JD,QD,KD W=9C,TC,JC,QC,KC"

SPEC_EXAMPLE = """euchre-log 1
players N=Ragnar E=Sigríður S=South W=Anna
game dealer=N
upcard 9H
order E alone
trick E
trick S
trick N
trick E
trick S
score NS=2 EW=0
"""


def crc(text: str) -> str:
    """CRC-16/CCITT-FALSE, computed independently of the engine."""
    return f"{binascii.crc_hqx(text.encode('utf-8'), 0xFFFF):04X}"


def text_of(*lines: str) -> str:
    return "\n".join([HEADER, *lines]) + "\n"


def ok(*lines: str) -> Game:
    result = replay(text_of(*lines))
    assert result.error is None, str(result.error)
    return result.game


def state(game: Game) -> tuple[object, ...]:
    return (
        dict(game.score),
        game.hands_played,
        game.dealer,
        game.leader,
        game.expected,
        len(game.entries),
        list(game.entries),
        game.winner,
        game.phase,
        game.rules,
        dict(game.names),
        game.game_number,
    )


def score(game: Game) -> tuple[int, int]:
    return game.score[Team.NS], game.score[Team.EW]


# --- header -----------------------------------------------------------------------------


def test_header_required() -> None:
    result = replay("game dealer=N\nmake N H\n")
    assert result.error is not None
    assert (result.error.line, result.error.reason) == (
        1, "not a game log: the first line must be 'euchre-log 1'"
    )
    assert result.game.entries == []
    assert str(result.error) == "line 1: not a game log: the first line must be 'euchre-log 1'"


@pytest.mark.parametrize("version", ["2", "0", "1.1", "x"])
def test_other_versions_rejected(version: str) -> None:
    result = replay(f"euchre-log {version}\ngame dealer=N\n")
    assert result.error is not None
    assert result.error.line == 1
    assert result.error.reason == (
        f"unsupported log version {version!r} (this referee reads version 1)"
    )
    assert result.game.entries == []


def test_header_only_is_a_valid_empty_log() -> None:
    result = replay("euchre-log 1\n")
    assert result.error is None
    assert result.lines == 1
    assert result.game.entries == []
    assert result.game.expected == "new game: who deals first?"


def test_empty_text() -> None:
    result = replay("")
    assert result.error is not None
    assert (result.error.line, result.error.reason) == (
        1, "empty log: the first line must be 'euchre-log 1'"
    )


def test_empty_log_error_names_a_line_of_the_text() -> None:
    result = replay("# nothing here\n")
    assert result.error is not None
    assert result.error.line == 1


def test_header_with_checksum_and_comment() -> None:
    result = replay(f"{HEADER}*{crc(HEADER)}\ngame dealer=N # first game\n")
    assert result.error is None
    assert result.game.dealer is Seat.N


# --- comments, blank lines, line endings ------------------------------------------------------


def test_comments_and_blank_lines_ignored() -> None:
    text = (
        "euchre-log 1\n"
        "# a table at the club\n"
        "\n"
        "   \n"
        "game dealer=N   # Ragnar deals\n"
        "\t\n"
        "make E H # Sigríður calls hearts\n"
        "    tricks 3    \n"
        "# end\n"
    )
    result = replay(text)
    assert result.error is None
    assert score(result.game) == (0, 1)
    assert len(result.game.entries) == 3
    assert result.lines == 9


def test_crlf_line_endings() -> None:
    result = replay(SPEC_EXAMPLE.replace("\n", "\r\n"))
    assert result.error is None
    assert score(result.game) == (2, 0)


def test_error_line_counts_comments_and_blanks() -> None:
    text = "euchre-log 1\n# one\n\ngame dealer=N\n\n# two\npass S\n"
    result = replay(text)
    assert result.error is not None
    assert result.error.line == 7
    assert result.error.reason == "it is Sigríður's turn to bid, not South's"


# --- checksums --------------------------------------------------------------------------------


def test_checksum_function_is_crc16_ccitt_false() -> None:
    assert checksum("123456789") == "29B1"  # the catalogue check value
    assert checksum("pass E") == crc("pass E")
    assert checksum("players E=Sigríður") == crc("players E=Sigríður")
    assert checksum("") == "FFFF"


def test_valid_checksums_on_every_line() -> None:
    lines = SPEC_EXAMPLE.rstrip("\n").split("\n")
    text = "\n".join(f"{line}*{crc(line)}" for line in lines) + "\n"
    result = replay(text)
    assert result.error is None
    assert score(result.game) == (2, 0)


def test_lower_case_checksum_accepted() -> None:
    result = replay(text_of("game dealer=N", f"make E H*{crc('make E H').lower()}", "tricks 3"))
    assert result.error is None
    assert score(result.game) == (0, 1)


def test_checksum_covers_the_comment() -> None:
    body = "make E H # a comment"
    result = replay(text_of("game dealer=N", f"{body}*{crc(body)}"))
    assert result.error is None
    assert result.game.hand.maker is Seat.E


def test_checksum_covers_everything_before_the_star() -> None:
    # the space before the * is part of the checksummed text
    result = replay(text_of("game dealer=N", f"make E H *{crc('make E H')}", "tricks 3"))
    assert result.error is not None
    assert result.error.line == 3
    assert result.error.reason == (
        f"checksum mismatch: the line says *{crc('make E H')}, its text gives *{crc('make E H ')}"
    )
    result = replay(text_of("game dealer=N", f"make E H *{crc('make E H ')}", "tricks 3"))
    assert result.error is None


def test_wrong_checksum_reported_at_its_line() -> None:
    good = crc("make E H")
    bad = "0000" if good != "0000" else "0001"
    result = replay(text_of("game dealer=N", f"make E H*{bad}", "tricks 3"))
    assert result.error is not None
    assert result.error.line == 3
    assert result.error.reason == f"checksum mismatch: the line says *{bad}, its text gives *{good}"
    assert result.game.hand.maker is None
    assert len(result.game.entries) == 1


def test_non_ascii_line_checksum() -> None:
    line = 'players E=Sigríður S="Mary Ann"'
    result = replay(text_of(f"{line}*{crc(line)}"))
    assert result.error is None
    assert result.game.name(Seat.E) == "Sigríður"
    # a checksum over some other encoding does not match
    latin = f"{binascii.crc_hqx(line.encode('latin-1'), 0xFFFF):04X}"
    result = replay(text_of(f"{line}*{latin}"))
    assert result.error is not None
    assert result.error.line == 2
    assert result.error.reason.startswith("checksum mismatch")


# --- players ---------------------------------------------------------------------------------


def test_quoted_names_with_spaces_and_non_ascii() -> None:
    game = ok('players N="Mary Ann" E=Sigríður S="Jean-Luc Picard" W="Ólöf Þóra"')
    assert game.names == {
        Seat.N: "Mary Ann", Seat.E: "Sigríður", Seat.S: "Jean-Luc Picard", Seat.W: "Ólöf Þóra",
    }


def test_quoted_names_with_quotes_hash_and_star() -> None:
    game = ok(r'players N="Say \"hi\"" E="No #1" S="A*B" # comment')
    assert game.names[Seat.N] == 'Say "hi"'
    assert game.names[Seat.E] == "No #1"
    assert game.names[Seat.S] == "A*B"
    assert game.names[Seat.W] == "Anna"
    round_trip = replay(write_log(game))
    assert round_trip.error is None
    assert round_trip.game.names == game.names


def test_partial_players_keep_default_names() -> None:
    game = ok("players S=Bob")
    assert game.names == {Seat.N: "Ragnar", Seat.E: "Sigríður", Seat.S: "Bob", Seat.W: "Anna"}


def test_names_in_messages() -> None:
    result = replay(text_of('players N="Mary Ann" E=Björk', "game dealer=W", "pass E"))
    assert result.error is not None
    assert result.error.reason == "it is Mary Ann's turn to bid, not Björk's"


def test_players_event_line_quotes_when_needed() -> None:
    event = parse_event('players N="Mary Ann" E=Sigríður')
    assert event == Players(((Seat.N, "Mary Ann"), (Seat.E, "Sigríður")))
    assert event.line() == 'players N="Mary Ann" E=Sigríður'


# --- rules -------------------------------------------------------------------------------------


def test_rule_keys() -> None:
    assert RULE_KEYS == (
        "target", "win-by-two", "stick-the-dealer", "defend-alone", "lone-defender-euchre",
        "defenders-sweep", "lone-lead", "canadian-loner", "renege-penalty", "renege-vs-loner",
    )


def test_rules_line_sets_every_key() -> None:
    game = ok(
        "rules target=11 win-by-two=on stick-the-dealer=off defend-alone=on "
        "lone-defender-euchre=3 defenders-sweep=4 lone-lead=maker-left canadian-loner=on "
        "renege-penalty=3 renege-vs-loner=4"
    )
    assert game.rules == Rules(
        target=11, win_by_two=True, stick_the_dealer=False, defend_alone=True,
        lone_defender_euchre=3, defenders_sweep=4, lone_lead="maker-left", canadian_loner=True,
        renege_penalty=3, renege_vs_loner=4,
    )


def test_rules_line_states_the_whole_profile() -> None:
    game = ok("rules target=7 win-by-two=on", "rules defenders-sweep=3")
    assert game.rules == Rules(defenders_sweep=3)
    game = ok("rules target=7", "rules")
    assert game.rules == Rules()


def test_no_rules_line_is_the_standard_profile() -> None:
    game = ok("game dealer=N")
    assert game.rules == Rules()
    assert Rules().target == 10
    assert Rules().stick_the_dealer is True


def test_rules_event_round_trip() -> None:
    event = parse_event("rules stick-the-dealer=off target=15")
    assert event == SetRules(Rules(target=15, stick_the_dealer=False))
    assert event.line() == "rules target=15 stick-the-dealer=off"
    assert parse_event("rules").line() == "rules"


def test_rules_between_games() -> None:
    game = ok("game dealer=N", "make N H alone", "tricks 5", "make N H alone", "tricks 5",
              "make N H alone", "tricks 5", "winner NS", "rules target=5", "game dealer=E",
              "make W S alone", "tricks 5", "make W S", "tricks 3", "winner EW")
    assert game.rules.target == 5
    assert score(game) == (0, 5)


# --- check lines ---------------------------------------------------------------------------


def test_score_and_winner_checks_verified() -> None:
    game = ok("game dealer=N", "score NS=0 EW=0", "make N H", "tricks 3", "score NS=1 EW=0",
              "make E H alone", "tricks 5", "score NS=1 EW=4",
              *(["make S C alone", "tricks 5"] * 3), "score NS=13 EW=4", "winner NS")
    assert game.winner is Team.NS


def test_check_lines_add_no_entries() -> None:
    game = ok("game dealer=N", "make N H", "tricks 3", "score NS=1 EW=0", "score NS=1 EW=0")
    assert len(game.entries) == 3


# --- undo lines ---------------------------------------------------------------------------


def test_undo_lines() -> None:
    game = ok("game dealer=N", "upcard 9H", "order E", "undo", "pass E", "order S")
    assert game.hand.maker is Seat.S
    assert [e.line() for e in game.entries] == [
        "game dealer=N", "upcard 9H", "pass E", "order S",
    ]


def test_undo_lines_across_hands_and_games() -> None:
    game = ok("game dealer=N", "make N H", "tricks 3", "score NS=1 EW=0", "undo",
              "score NS=0 EW=0", "tricks 1", "score NS=0 EW=2", "undo", "undo", "undo",
              "game dealer=S", "make E D", "tricks 5", "score NS=0 EW=2")
    assert game.dealer is Seat.W
    assert [e.line() for e in game.entries] == [
        "game dealer=S", "make E D", "tricks 5",
    ]


def test_undo_a_game_over() -> None:
    game = ok("game dealer=N", *(["make N H alone", "tricks 5"] * 3), "winner NS", "undo",
              "tricks 4", "score NS=9 EW=0", "make E S", "tricks 5", "score NS=9 EW=2")
    assert game.winner is None
    assert game.hands_played == 4
    assert game.dealer is Seat.N


def test_undo_at_the_start_is_an_error() -> None:
    result = replay(text_of("players N=Bob", "undo", "undo", "game dealer=N"))
    assert result.error is not None
    assert (result.error.line, result.error.reason) == (4, "nothing to undo: this is the start")
    assert result.game.entries == []


# --- several games -----------------------------------------------------------------------------


def test_several_games_in_one_log() -> None:
    text = text_of(
        "game dealer=N", *(["make N H alone", "tricks 5"] * 3), "score NS=12 EW=0", "winner NS",
        "game dealer=W", "score NS=0 EW=0", *(["make E C", "tricks 5"] * 5), "winner EW",
        "game dealer=S", "make N D", "tricks 0", "score NS=0 EW=2",
    )
    result = replay(text)
    assert result.error is None
    game = result.game
    assert game.game_number == 3
    assert score(game) == (0, 2)
    assert game.hands_played == 1
    assert game.dealer is Seat.W
    assert game.winner is None


def test_new_game_resets_score_and_dealer() -> None:
    game = ok("game dealer=N", *(["make E H", "tricks 5"] * 5), "game dealer=E")
    assert score(game) == (0, 0)
    assert game.dealer is Seat.E
    assert game.hands_played == 0


# --- the spec's example and input forms ---------------------------------------------------------


def test_spec_section_3_example() -> None:
    result = replay(SPEC_EXAMPLE)
    assert result.error is None
    assert result.lines == 11
    game = result.game
    assert score(game) == (2, 0)
    assert game.hands_played == 1
    assert game.dealer is Seat.E
    assert game.leader is Seat.S
    assert game.winner is None
    assert game.expected == "the call: who made trump, which suit, alone?"
    assert game.names == {Seat.N: "Ragnar", Seat.E: "Sigríður", Seat.S: "South", Seat.W: "Anna"}


def test_symbols_and_ten_accepted() -> None:
    game = ok("game dealer=N", "upcard J♥", "pass E", "pass S", "pass W", "pass N",
              "call E ♣", "play E 10♠", "play S 9♠", "play W A♠", "play N KS")
    assert game.hand.trump is not None
    assert game.hand.trump.word == "clubs"
    assert game.pending_trick is Seat.W
    assert [e.line() for e in game.entries[1:]] == [
        "upcard JH", "pass E", "pass S", "pass W", "pass N", "call E C",
        "play E TS", "play S 9S", "play W AS", "play N KS",
    ]


def test_upcard_by_suit() -> None:
    game = ok("game dealer=N", "upcard ♦", "pass E", "pass S", "pass W", "pass N")
    assert game.hand.upcard_suit is not None
    assert game.hand.upcard_suit.word == "diamonds"
    result = replay(text_of("game dealer=N", "upcard D", *(f"pass {s}" for s in "ESWN"),
                            "call E D"))
    assert result.error is not None
    assert (result.error.line, result.error.reason) == (
        8, "diamonds was turned down: name another suit"
    )


def test_make_with_upcard_knows_the_round() -> None:
    game = ok("game dealer=N", "upcard 9H", "make W H")
    assert game.hand.round == 1
    game = ok("game dealer=N", "upcard 9H", "make W S")
    assert game.hand.round == 2
    game = ok("game dealer=N", "make W S")
    assert game.hand.round is None


def test_parse_event_errors() -> None:
    with pytest.raises(LogSyntaxError) as info:
        parse_event("")
    assert str(info.value) == "empty line"
    with pytest.raises(LogSyntaxError) as info:
        parse_event("frobnicate N")
    assert str(info.value) == "unknown event 'frobnicate'"


# --- every invalid entry kind: its line, its reason, nothing after it applied -------------------


BASE = [
    "# a table at the club",
    "players N=Ragnar E=Sigríður S=South W=Anna",
    "",
    "game dealer=N",
]
LONE = [*BASE, "upcard 9H", "order E alone", "trick E"]
CARDS = [*BASE, DEAL_A, "upcard 9H", "order W", "discard QC"]
UNSEEN = [*BASE, "upcard 9H", "order E", "play E AD", "play S AC", "play W KD", "play N QD",
          "trick E", "play E 9D"]
WON = [*BASE, *(["make N H alone", "tricks 5"] * 3)]
ROUND2 = [*BASE, "upcard 9H", "pass E", "pass S", "pass W", "pass N"]
DEFEND = ["rules defend-alone=on", *BASE, "make S H alone"]

USAGE_TRICKS = "tricks: expected 'tricks N (the makers' total, 0 to 5)'"

# (id, lines before the bad one, the bad line, reason)
INVALID = [
    ("unknown keyword", [*BASE, "upcard 9H"], "bid E H", "unknown event 'bid'"),
    ("bad seat", [*BASE, "upcard 9H"], "pass X", "not a seat: 'X' (use N E S W)"),
    ("bad card", [*BASE, "upcard 9H", "order E"], "discard 8S",
     "not a card: '8S' (rank 9 T J Q K A, then suit S H D C)"),
    ("bad card in play", CARDS, "play E 1D",
     "not a card: '1D' (rank 9 T J Q K A, then suit S H D C)"),
    ("bad suit", [*BASE, "upcard 9H"], "call E X", "not a suit: 'X' (use S H D C)"),
    ("bad upcard", BASE, "upcard 8H", "not a suit: '8H' (use S H D C)"),
    ("pass usage", [*BASE, "upcard 9H"], "pass", "pass: expected 'pass SEAT'"),
    ("order usage", [*BASE, "upcard 9H"], "order E now", "order: expected 'order SEAT [alone]'"),
    ("call usage", [*BASE, "upcard 9H"], "call E", "call: expected 'call SEAT SUIT [alone]'"),
    ("game usage", ["players N=Bob"], "game N", "game: expected 'game dealer=SEAT [NS=N EW=N]'"),
    ("tricks usage", [*BASE, "make N H"], "tricks 6", USAGE_TRICKS),
    ("tricks not a number", [*BASE, "make N H"], "tricks three", USAGE_TRICKS),
    ("score usage", [*BASE, "make N H", "tricks 3"], "score NS=1",
     "score: expected 'score NS=N EW=N'"),
    ("winner usage", WON, "winner NE", "winner: expected 'winner NS|EW'"),
    ("undo usage", [*BASE, "make N H"], "undo 2", "undo: expected 'undo'"),
    ("unclosed quote", [], 'players N="Mary Ann', "a quoted name is not closed"),
    ("empty name", [], "players N=", "players: N's name must be 1 to 40 printable characters"),
    ("long name", [], "players N=" + "x" * 41,
     "players: N's name must be 1 to 40 printable characters"),
    ("seat named twice", [], "players N=A N=B", "players: seat N named twice"),
    ("unknown rules key", [], "rules jokers=on",
     "unknown rules setting 'jokers' (known: " + ", ".join(RULE_KEYS) + ")"),
    ("rules bad number", [], "rules target=0", "target is a whole number from 1 to 99, not '0'"),
    ("rules bad bool", [], "rules win-by-two=maybe", "win-by-two is on or off, not 'maybe'"),
    ("rules bad lead", [], "rules lone-lead=right",
     "lone-lead is dealer-left or maker-left, not 'right'"),
    ("rules no value", [], "rules target", "rules takes key=value settings, not 'target'"),
    ("rules key twice", [], "rules target=5 target=7", "rules setting 'target' given twice"),
    ("entry before a game", ["players N=Bob"], "make N H",
     "no game yet: start one with the first dealer (game dealer=SEAT)"),
    ("out-of-turn pass", [*BASE, "upcard 9H"], "pass S",
     "it is Sigríður's turn to bid, not South's"),
    ("out-of-turn order", [*BASE, "upcard 9H", "pass E"], "order W",
     "it is South's turn to bid, not Anna's"),
    ("order without upcard", BASE, "order E",
     "order up needs the upcard: enter it first, or use make"),
    ("round-one call of another suit", [*BASE, "upcard 9H", "pass E"], "call S D",
     "round 1: only hearts (the upcard) can be ordered up; South may order up or pass"),
    ("turned-down suit", ROUND2, "call E H", "hearts was turned down: name another suit"),
    ("order in round two", ROUND2, "order E", "hearts was turned down: name another suit"),
    ("stick the dealer", [*ROUND2, "pass E", "pass S", "pass W"], "pass N",
     "stick the dealer: Ragnar must name a suit"),
    ("second trump call", [*BASE, "make E S"], "make S H",
     "trump is already made: Sigríður made spades"),
    ("upcard twice", [*BASE, "upcard 9H"], "upcard TS", "the upcard is already entered (9H)"),
    ("upcard after bidding", [*BASE, "make E S"], "upcard 9H",
     "the upcard comes before the bidding"),
    ("canadian loner", ["rules canadian-loner=on", *BASE, "upcard 9H"], "order S",
     "Canadian loner: South ordered up partner Ragnar and must go alone"),
    ("sitting-out trick", LONE, "trick W", "Anna sits out: Sigríður went alone"),
    ("sitting-out renege", LONE, "renege W", "Anna sits out: Sigríður went alone"),
    ("trick before the call", [*BASE, "upcard 9H"], "trick E",
     "no trump yet: enter the call first"),
    ("bad tricks count", [*BASE, "make N H", "trick N", "trick S"], "tricks 1",
     "the makers have 2 tricks with 3 to play: they finish with 2 to 5, not 1"),
    ("defend without the house rule", [*BASE, "make S H alone"], "defend E",
     "defending alone is not played here (house rule defend-alone=off)"),
    ("defend against a team call", ["rules defend-alone=on", *BASE, "make S H"], "defend E",
     "a defender may go alone only against a lone maker"),
    ("defend by the makers", DEFEND, "defend N", "Ragnar is on the makers' side"),
    ("defend late", [*DEFEND, "trick S"], "defend E",
     "defending alone is declared right after the lone call"),
    ("discard in round 2", [*ROUND2, "call E S"], "discard 9S",
     "the upcard was turned down: nobody discards"),
    ("discard after play", [*BASE, "upcard 9H", "order E", "trick E"], "discard 9S",
     "too late to discard: play has begun"),
    ("discard not held", [*BASE, DEAL_A, "upcard 9H", "order W"], "discard AS",
     "Ragnar (dealer) does not hold AS"),
    ("play before discard", [*BASE, DEAL_A, "upcard 9H", "order W"], "play E AD",
     "Ragnar (dealer) must discard first"),
    ("deal mid-hand", [*BASE, "upcard 9H"], DEAL_A, "deal must be the first line of a hand"),
    ("deal card twice", BASE, DEAL_A.replace("AS", "9S"), "deal: 9S is dealt twice"),
    ("deal missing seat", BASE, DEAL_A.split(" W=")[0], "deal: every seat gets 5 cards; missing W"),
    ("deal short hand", BASE, DEAL_A.replace("TH,", ""), "deal: N must get 5 cards, not 4"),
    ("upcard dealt", [*BASE, DEAL_A], "upcard JD",
     "JD was dealt to South: it cannot be the upcard"),
    ("upcard suit only after a deal", [*BASE, DEAL_A], "upcard H",
     "this hand was dealt: enter the upcard card, not just its suit"),
    ("bid before the upcard of a deal", [*BASE, DEAL_A], "make E S",
     "this hand was dealt: enter its upcard first"),
    ("play out of turn", CARDS, "play S JD", "it is Sigríður's turn to play, not South's"),
    ("play not in hand", CARDS, "play E 9H", "Sigríður does not hold 9H"),
    ("not following suit", [*CARDS, "play E AD", "play S 9C"], "play W AC",
     "Anna must follow diamonds (holds 9D TD QD)"),
    ("wrong trick check", [*CARDS, "play E AD", "play S 9C", "play W QD", "play N 9H"], "trick E",
     "trick check: Ragnar won that trick (worked out from the plays), not Sigríður"),
    ("trick line in a dealt hand", CARDS, "trick E",
     "this hand is entered card by card: enter plays, or claim with 'tricks N'"),
    ("claim mid-trick", [*CARDS, "play E AD"], "tricks 3",
     "trick 1 is being played: South to play"),
    ("play mixed with trick lines", [*BASE, "make E H", "trick E"], "play E AS",
     "this hand's tricks are entered by winner: plays cannot be mixed in"),
    ("card played twice", UNSEEN, "play S AD", "AD was already played (trick 1, Sigríður)"),
    ("renege by showing out", UNSEEN, "play S TD",
     "renege: South showed out of diamonds on trick 1, then played TD; enter 'renege S'"),
    ("upcard played by another seat", UNSEEN, "play S 9H", "9H went to the dealer, Ragnar"),
    ("bad score check", [*BASE, "make E H", "tricks 3"], "score NS=1 EW=0",
     "score check: the score is NS 0, EW 1, not NS 1, EW 0"),
    ("premature winner check", [*BASE, "make E H", "tricks 3"], "winner EW",
     "winner check: no side has won yet (NS 0, EW 1)"),
    ("wrong winner check", WON, "winner EW", "winner check: NS won, not EW"),
    ("entry after the win", WON, "make N H", "game over: NS won 12-0: start a new game or undo"),
    ("rules change mid-game", [*BASE, "make E H"], "rules target=5",
     "house rules change only between games"),
    ("new game mid-game", [*BASE, "make E H", "tricks 3"], "game dealer=S",
     "a game is in progress (hand 2): finish it or undo"),
    ("undo at the start", ["players N=Bob", "undo"], "undo", "nothing to undo: this is the start"),
]

# Valid lines placed after the bad one: had they been applied, the state would differ.
AFTER = ["make N H", "tricks 5", "game dealer=E", "make W C", "tricks 3"]


@pytest.mark.parametrize(
    ("before", "bad", "reason"),
    [case[1:] for case in INVALID],
    ids=[case[0] for case in INVALID],
)
def test_invalid_line_stops_the_replay(before: list[str], bad: str, reason: str) -> None:
    number = 1 + len(before) + 1
    result = replay(text_of(*before, bad, *AFTER))
    assert result.error is not None
    assert (result.error.line, result.error.reason) == (number, reason)
    assert str(result.error) == f"line {number}: {reason}"
    assert result.lines == number
    assert not result.ok
    reference = replay(text_of(*before))
    assert reference.error is None, str(reference.error)
    assert state(result.game) == state(reference.game)


@pytest.mark.parametrize("line_with_bad_sum", ["pass E", "game dealer=S", "players N=Bob"])
def test_bad_checksum_stops_the_replay(line_with_bad_sum: str) -> None:
    before = [*BASE, "upcard 9H"]
    good = crc(line_with_bad_sum)
    bad = "0000" if good != "0000" else "FFFF"
    number = len(before) + 2
    result = replay(text_of(*before, f"{line_with_bad_sum}*{bad}", *AFTER))
    assert result.error is not None
    assert result.error.line == number
    assert result.error.reason == (
        f"checksum mismatch: the line says *{bad}, its text gives *{good}"
    )
    assert state(result.game) == state(replay(text_of(*before)).game)


@pytest.mark.parametrize(
    ("before", "bad", "reason"),
    [
        ([], "rules target=\u00b2", "target is a whole number from 1 to 99, not '\u00b2'"),
        ([*BASE, "make N H", "tricks 3"], "score NS=\u00b2 EW=0",
         "score: expected 'score NS=N EW=N'"),
    ],
    ids=["rules", "score"],
)
def test_odd_digits_are_a_line_error(before: list[str], bad: str, reason: str) -> None:
    result = replay(text_of(*before, bad, *AFTER))
    assert result.error is not None
    assert (result.error.line, result.error.reason) == (len(before) + 2, reason)


def test_invalid_kinds_cover_the_brief() -> None:
    ids = {case[0] for case in INVALID}
    assert len(ids) == len(INVALID)
    for kind in ["unknown keyword", "bad seat", "bad card", "out-of-turn pass",
                 "order without upcard", "turned-down suit", "stick the dealer",
                 "second trump call", "sitting-out trick", "bad tricks count",
                 "play not in hand", "not following suit", "wrong trick check",
                 "bad score check", "premature winner check", "rules change mid-game",
                 "new game mid-game", "defend without the house rule", "discard in round 2"]:
        assert kind in ids


# --- write_log ---------------------------------------------------------------------------------


def test_write_log_golden() -> None:
    game = ok('players N="Mary Ann"', "game dealer=N", "upcard J♥", "pass e", "order S alone",
              "trick S", "undo", "trick W", "tricks  4", "make W ♣", "tricks 0")
    assert write_log(game) == (
        "euchre-log 1\n"
        'players N="Mary Ann"\n'
        "game dealer=N\n"
        "upcard JH\n"
        "pass E\n"
        "order S alone\n"
        "trick W\n"
        "tricks 4\n"
        "score NS=1 EW=0\n"
        "make W C\n"
        "tricks 0\n"
        "score NS=3 EW=0\n"
    )


def test_write_log_winner_line() -> None:
    game = ok("game dealer=N", *(["make N H alone", "tricks 5"] * 3), "game dealer=E")
    text = write_log(game)
    assert text.endswith(
        "tricks 5\nscore NS=12 EW=0\nwinner NS\ngame dealer=E\n"
    )


def test_write_log_card_level_trick_checks_before_score() -> None:
    game = ok("game dealer=N", DEAL_L, "upcard AD", "order S alone", "discard 9S",
              "play E JH", "play S JD", "play W 9C", "trick S",
              "play S 9D", "play W TC", "play E 9H",
              "play S TD", "play W JC", "play E TH",
              "play S QD", "play W QC", "play E QH",
              "play S KD", "play W KC", "play E KH", "trick S")
    lines = write_log(game).splitlines()
    assert lines[-3:] == ["play E KH", "trick S", "score NS=4 EW=0"]
    assert lines.count("trick S") == 2


ROUND_TRIP_LOGS = {
    "spec example": SPEC_EXAMPLE.splitlines()[1:],
    "several games": [
        'players N="Mary Ann" W=Ólöf', "rules target=5 win-by-two=on",
        "game dealer=N", "make N H alone", "tricks 5", "make E S", "tricks 5", "make N C",
        "tricks 3", "winner NS", "rules defend-alone=on defenders-sweep=4", "game dealer=W",
        "make N D alone", "defend W", "tricks 1", "make S H", "tricks 0",
    ],
    "card level": [
        "game dealer=N", DEAL_L, "upcard AD", "order S alone", "discard 9S",
        "play E JH", "play S JD", "play W 9C", "trick S", "play S 9D", "play W TC", "play E 9H",
        "renege W",
        DEAL_A, "upcard 9H", "order W", "undo", "order E", "discard QS", "play S JD",
    ],
    "thrown in": [
        "rules stick-the-dealer=off", "game dealer=S", *(f"pass {s}" for s in "WNESWNES"),
        "upcard KC", "pass N", "order E", "trick E", "renege N",
    ],
}


@pytest.mark.parametrize("name", list(ROUND_TRIP_LOGS))
def test_write_log_round_trip(name: str) -> None:
    game = ok(*ROUND_TRIP_LOGS[name])
    text = write_log(game)
    again = replay(text)
    assert again.error is None, str(again.error)
    assert again.game.entries == game.entries
    assert state(again.game) == state(game)
    assert write_log(again.game) == text


@pytest.mark.parametrize("name", list(ROUND_TRIP_LOGS))
def test_write_log_with_checksums(name: str) -> None:
    game = ok(*ROUND_TRIP_LOGS[name])
    plain = write_log(game).splitlines()
    text = write_log(game, checksums=True)
    lines = text.splitlines()
    assert text.endswith("\n")
    assert len(lines) == len(plain)
    for line, bare in zip(lines, plain):
        assert line == f"{bare}*{crc(bare)}"
    again = replay(text)
    assert again.error is None
    assert again.game.entries == game.entries
    assert state(again.game) == state(game)


def test_write_log_round_trip_with_starting_setup() -> None:
    game = Game(rules=Rules(target=5), names={**Game().names, Seat.S: "Mary Ann"})
    game.push(parse_event("game dealer=N"))  # type: ignore[arg-type]
    game.push(parse_event("make N H"))  # type: ignore[arg-type]
    again = replay(write_log(game))
    assert again.error is None
    # The starting setup is written as leading rules/players lines (documented).
    assert again.game.entries == [
        parse_event("rules target=5"),
        parse_event('players N=Ragnar E=Sigríður S="Mary Ann" W=Anna'),
        *game.entries,
    ]


def test_write_log_starting_setup_state() -> None:
    game = Game(rules=Rules(target=5), names={**Game().names, Seat.S: "Mary Ann"})
    for line in ["game dealer=N", "make N H alone", "tricks 5"]:
        game.push(parse_event(line))  # type: ignore[arg-type]
    text = write_log(game)
    assert text.splitlines()[:3] == [
        "euchre-log 1", "rules target=5", 'players N=Ragnar E=Sigríður S="Mary Ann" W=Anna',
    ]
    again = replay(text).game
    assert (again.rules, again.names, again.score, again.winner) == (
        game.rules, game.names, game.score, game.winner,
    )


def test_replay_into_a_game_requires_the_header_first() -> None:
    game = ok("game dealer=N", "upcard 9H")
    before = state(game)
    result = replay("pass E\npass S\n", game)
    assert result.error is not None
    assert (result.error.line, result.error.reason) == (
        1, "not a game log: the first line must be 'euchre-log 1'"
    )
    assert state(game) == before


def test_replay_into_a_given_game() -> None:
    game = ok("game dealer=N", "upcard 9H")
    result = replay("euchre-log 1\npass E\npass S\n", game)
    assert result.error is None
    assert result.game is game
    assert game.expected == "Anna to bid, round 1"


def test_a_control_character_is_refused_by_the_replay_as_by_send() -> None:
    """The format holds no control character (a TAB is fine): the replay names the
    line and the character, in the words ``send`` uses (tests/firmware)."""
    from euchre_core.lines import control_reason

    for line in ("# x \x03 y", "pass E\x7f", "game\x00 dealer=N", "pass\rE"):
        result = replay(f"euchre-log 1\n{line}\n")
        assert result.error is not None and result.error.line == 2
        assert result.error.reason == control_reason(line)
        assert result.error.reason.startswith("a control character (0x")
    assert replay("euchre-log 1\ngame\tdealer=N  # a TAB\n").ok
    assert replay("euchre-log 1\r\ngame dealer=N\r\n").ok  # CR LF line ends are fine
    assert control_reason("players N=Ragnar E=Sigríður") is None


def test_undo_after_a_trick_check_line_takes_back_the_check_alone() -> None:
    """A ``trick X`` line after a trick's plays is an entry (the writer writes it
    back); ``undo`` right after it takes back that line, the last card stays
    played.  ``score`` and ``winner`` lines are not entries: undo passes them."""
    from test_core_play_runs import HAND

    head = ["euchre-log 1", "game dealer=N", *HAND[:9]]
    checked = replay("\n".join([*head, "trick W"]) + "\n").game
    assert checked.hand.tricks == [Seat.W] and checked.pending_trick is None
    undone = replay("\n".join([*head, "trick W", "undo"]) + "\n").game
    assert undone.hand.tricks == [Seat.W] and undone.pending_trick is Seat.W
    assert undone.entries == replay("\n".join(head) + "\n").game.entries
    scored = replay("\n".join([*head, "score NS=0 EW=0", "undo"]) + "\n").game
    assert len(scored.hand.trick) == 3  # the score check passed: the last play undone
