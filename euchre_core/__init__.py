"""The Euchre rules engine and game log: standard library only.

>>> from euchre_core import Card, Suit, effective_suit
>>> effective_suit(Card.from_str("JD"), Suit.HEARTS)
Suit.from_str('H')
"""

from .cards import (
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
from .events import Event, LogSyntaxError, Players, name_problem, parse_event
from .game import DEFAULT_NAMES, Game, HandResult, IllegalEntry, Phase, score_hand
from .lines import checksum
from .log import LogError, Replay, replay, write_log
from .rules import RULE_KEYS, Rules, RulesError

__all__ = [
    "DECK", "SEATS", "Card", "Rank", "Seat", "Suit", "Team", "card_power", "effective_suit",
    "is_left_bower", "trick_winner", "Event", "LogSyntaxError", "Players", "name_problem",
    "parse_event", "DEFAULT_NAMES", "Game", "HandResult", "IllegalEntry", "Phase", "score_hand",
    "LogError", "Replay",
    "checksum", "replay", "write_log", "RULE_KEYS", "Rules", "RulesError",
]
