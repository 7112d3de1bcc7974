"""The organiser's control of a round: a forced start, a spare box, the clock.

The written rules of the night, each said once here and used by the director
(:mod:`.director`), the boxes (:mod:`.box`) and ``docs/club.md``:

- :data:`FORCED_RULE`: a round started while tables still play ends their
  games: the hands completed count, the hand in progress is void.
- :data:`TIME_RULE`: when a timed round's time is called the hand in play is
  finished and no new hand starts.
- :data:`SPARE_RULE`: a spare box takes over a table with the director's copy
  of its journal; the box it replaces is refused from then on.

The director keeps the forced ends and the handovers as records in its own
SQLite (:data:`SCHEMA`): who (which table, which boxes), when, and the rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from euchre_core import Game, Team

FORCED_RULE: Final = "the hands completed count, the hand in progress is void"
"""What a forced round start does to each unfinished game of the round before."""
TIME_RULE: Final = "the hand in play is finished, no new hand starts"
"""What a timed round's call of time does (a hand is in play once an entry of
it, an upcard, a pass or the call, is on the box)."""
SPARE_RULE: Final = ("the spare goes on from the table's journal as the director has "
                     "it; the box it replaces is refused")
CLOCK_S: Final = 5.0
"""Seconds between the director's clock messages while a timed round runs."""

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS ended (
    round INTEGER NOT NULL, table_no INTEGER NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (round, table_no)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS handovers (
    round INTEGER NOT NULL, table_no INTEGER NOT NULL, new_box TEXT NOT NULL,
    old_box TEXT, old_game INTEGER, lines INTEGER NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (round, table_no, new_box)) WITHOUT ROWID;
"""
"""The director's records: rounds ended by a forced start (``ended``), boxes
replaced by a spare (``handovers``: the first ``lines`` of the old box's game
were handed to the new box)."""


def in_hand(game: Game) -> bool:
    """Is a hand in play: begun (an entry of it on the box) and not scored?"""
    if game.dealer is None:
        return False
    return len(game.entries) > game.hand.start


def starts_hand(game: Game) -> bool:
    """Would the next entry be the first of a hand (the first dealer or a new deal)?"""
    return game.winner is None and not in_hand(game)


def ahead(score: dict[Team, int]) -> Team | None:
    """The side ahead (a round ended by force or by time), None when level."""
    if score[Team.NS] == score[Team.EW]:
        return None
    return Team.NS if score[Team.NS] > score[Team.EW] else Team.EW


def refusal(round_number: int, playing: Iterable[tuple[int, int]]) -> str:
    """The one line that refuses a round start while ``playing`` tables
    (``(table, hand)``, hand 0: not started) still play round ``round_number``."""
    where = ", ".join(f"{table} ({f'hand {hand}' if hand else 'not started'})"
                      for table, hand in playing)
    return (f"round {round_number} is still being played at table(s) {where}: wait for "
            f"them, or force the next round ({FORCED_RULE})")


def ended_words(round_number: int, table: int, score: dict[Team, int], hands: int,
                void: bool) -> str:
    """What a forced start did to one table's game, in words (page and log)."""
    counted = f"hands 1-{hands} count" if hands > 1 else (
        "hand 1 counts" if hands == 1 else "no hand was completed")
    return (f"round {round_number}, table {table}: ended by the director; {counted} "
            f"(NS {score[Team.NS]}, EW {score[Team.EW]})"
            + (f", hand {hands + 1} is void" if void else ""))


def clock_words(remaining: float) -> str:
    """``12:04 left`` or ``time called``."""
    if remaining <= 0:
        return "time called"
    seconds = int(remaining + 0.999)
    return f"{seconds // 60}:{seconds % 60:02d} left"
