"""The replay hands runs of play lines to ``Game.play_run`` in one call.

Whatever the shape of the log, the result must be what pushing its lines one
at a time gives: the same state, and the same first error at the same line.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from euchre_core import DECK, SEATS, Game, IllegalEntry, LogSyntaxError, Seat, Team, replay
from euchre_core.lines import strip_line
from euchre_core.log import apply_event, parse_line

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEADER = "euchre-log 1"

DEAL = "deal N=9S,KS,QD,9C,AC E=AS,QS,AD,KD,9D S=JH,AH,KH,TS,JS W=JD,9H,QH,TC,KC"
HAND = [  # the left-bower example, without its comments and trick checks
    DEAL, "upcard TH", "pass E", "order S", "discard 9S",
    "play E AD", "play S KH", "play W JD", "play N QD",
    "play W 9H", "play N TH", "play E 9D", "play S AH",
    "play S JH", "play W QH", "play N 9C", "play E KD",
    "play S TS", "play W TC", "play N KS", "play E AS",
    "play E QS", "play S JS", "play W KC", "play N AC",
]


def one_at_a_time(text: str) -> tuple[Game, tuple[int, str] | None]:
    """The reference: every line parsed and pushed on its own, no runs."""
    game = Game()
    for number, raw in enumerate(text.split("\n")[1:], start=2):
        try:
            event = parse_line(strip_line(raw))
            if event is not None:
                apply_event(game, event)
        except (LogSyntaxError, IllegalEntry) as error:
            return game, (number, str(error))
    return game, None


def same_as_one_at_a_time(text: str) -> None:
    expected_game, expected_error = one_at_a_time(text)
    result = replay(text)
    error = None if result.error is None else (result.error.line, result.error.reason)
    assert error == expected_error
    game = result.game
    assert game.entries == expected_game.entries
    assert game.score == expected_game.score
    assert game.hand.number == expected_game.hand.number
    assert game.hand.trick == expected_game.hand.trick
    assert game.hand.tricks == expected_game.hand.tricks
    assert game.hand.turn is expected_game.hand.turn
    assert game.pending_trick is expected_game.pending_trick
    assert game.expected == expected_game.expected


def log(*lines: str) -> str:
    return "\n".join([HEADER, "game dealer=N", *lines]) + "\n"


def test_a_whole_hand_of_plays_is_one_run() -> None:
    result = replay(log(*HAND))
    assert result.error is None
    assert (result.game.score[Team.NS], result.game.score[Team.EW]) == (0, 2)
    same_as_one_at_a_time(log(*HAND))


def test_a_play_refused_in_the_middle_of_a_run_names_its_line() -> None:
    # Ragnar picked up the ten of hearts and still holds the queen of diamonds.
    bad = [*HAND[:5], "play E AD", "play S KH", "play W JD", "play N 9C"]
    result = replay(log(*bad))
    assert result.error is not None
    assert result.error.line == 2 + 1 + 8
    assert result.error.reason == "Ragnar must follow diamonds (holds QD)"
    assert len(result.game.entries) == 1 + 5 + 3  # nothing after the bad line
    same_as_one_at_a_time(log(*bad))


def test_plays_after_the_last_trick_go_to_the_next_hand() -> None:
    text = log(*HAND, "play N 9S")
    result = replay(text)
    assert result.error is not None
    assert result.error.line == 2 + len(HAND) + 1
    assert result.error.reason == "no trump yet: enter the call first"
    assert result.game.results[-1].points == 2
    same_as_one_at_a_time(text)


def test_plays_after_the_game_is_over() -> None:
    rules = "rules target=2"
    text = "\n".join([HEADER, rules, "game dealer=N", *HAND, "play N 9S"]) + "\n"
    result = replay(text)
    assert result.error is not None
    assert result.error.line == 4 + len(HAND)
    assert "start a new game or undo" in result.error.reason
    same_as_one_at_a_time(text)


def test_plays_before_any_game() -> None:
    text = "\n".join([HEADER, "play N 9S", "play E AS"]) + "\n"
    result = replay(text)
    assert result.error is not None
    assert (result.error.line, result.error.reason) == (
        2, "no game yet: start one with the first dealer (game dealer=SEAT)"
    )


def test_a_run_at_the_end_of_a_log_without_a_final_newline() -> None:
    text = log(*HAND[:9]).rstrip("\n")
    result = replay(text)
    assert result.error is None
    assert result.game.hand.tricks == [Seat.W]  # the left bower won trick 1
    assert result.game.pending_trick is Seat.W
    bad = log(*HAND[:9], "play E QS").rstrip("\n")
    error = replay(bad).error
    assert error is not None
    assert (error.line, error.reason) == (
        2 + 9 + 1, "it is Anna's turn to play, not Sigríður's"
    )


def test_trick_checks_and_comments_between_plays() -> None:
    text = (EXAMPLES / "left-bower.log").read_text()
    assert replay(text).error is None
    same_as_one_at_a_time(text)


PLAY_LINES = [f"play {seat} {card}" for seat in SEATS for card in DECK]


@settings(max_examples=300, deadline=None)
@given(
    index=st.integers(min_value=0, max_value=len(HAND) + 1),
    replacement=st.sampled_from([*PLAY_LINES, "trick W", "undo", "score NS=0 EW=2", ""]),
    insert=st.booleans(),
)
def test_a_changed_line_gives_what_one_at_a_time_gives(
    index: int, replacement: str, insert: bool
) -> None:
    lines = list(HAND)
    if insert:
        lines.insert(index, replacement)
    elif index < len(lines):
        lines[index] = replacement
    same_as_one_at_a_time(log(*lines, *HAND))
