"""Summaries of a game, in one place: the ``replay`` table and JSON object,
the one-line listing of ``games``, a hand's result as the screen says it, the
hands so far, the house rules in words, and what an undo took back."""

from __future__ import annotations

from typing import Any, Final

from euchre_core import SEATS, Game, HandResult, Replay, Rules, Seat, Team
from euchre_core.events import (
    Call,
    Deal,
    Defend,
    Discard,
    Entry,
    Make,
    Misdeal,
    NewGame,
    Order,
    Pass,
    Play,
    Players,
    Renege,
    SetRules,
    Trick,
    Tricks,
    Upcard,
)

SUMMARY_KEYS: Final = ("file", "score", "hands_played", "dealer", "winner", "error")
"""The keys of ``euchre-referee replay --json`` (and ``send --json``), in order."""


def summary_json(path: str, result: Replay) -> dict[str, Any]:
    """The ``replay --json`` object for one file."""
    game = result.game
    dealer = game.dealer
    error = result.error
    return dict(zip(SUMMARY_KEYS, (
        path,
        {"NS": game.score[Team.NS], "EW": game.score[Team.EW]},
        game.hands_played,
        str(dealer) if dealer is not None else None,
        str(game.winner) if game.winner is not None else None,
        None if error is None else {"line": error.line, "reason": error.reason},
    ), strict=True))


def count_words(count: int, thing: str) -> str:
    """``1 trick``, ``3 tricks``, ``1 point``: the one place a count is worded."""
    return f"{count} {thing}" if count == 1 else f"{count} {thing}s"


def play_on_reason(game: Game) -> str | None:
    """Why play goes on although a side has the target (win by two), else None."""
    rules = game.rules
    if not rules.win_by_two or game.winner is not None:
        return None
    ns, ew = game.score[Team.NS], game.score[Team.EW]
    if max(ns, ew) < rules.target:
        return None
    return "Win by two: play on"  # (the score is beside it)


def describe_result(game: Game, result: HandResult) -> tuple[str, ...]:
    """Two or three short lines saying how a hand ended (the result screen)."""
    if result.how == "thrown in":
        return ("All passed:", "thrown in", f"{game.name(result.dealer.left)} deals")
    points = f"{result.team} +{result.points}"
    if result.how == "renege" and result.reneger is not None:
        return (f"{game.name(result.reneger)} reneged", points)
    assert result.maker is not None
    maker = game.name(result.maker)
    tricks = count_words(result.maker_tricks or 0, "trick")
    if result.how == "euchred":
        return (f"{maker} euchred", tricks, points)
    if result.how == "march":
        return (f"{maker} marched" + (" alone" if result.alone else ""), points)
    return (f"{maker} made it", tricks, points)


def result_line(game: Game, result: HandResult) -> str:
    """One line for a hand's end: ``Anna euchred, EW +2`` (the last hand, the
    hands page)."""
    if result.how == "thrown in":
        return "all passed, thrown in"
    points = f"{result.team} +{result.points}"
    if result.how == "renege" and result.reneger is not None:
        return f"{game.name(result.reneger)} reneged, {points}"
    assert result.maker is not None
    maker = game.name(result.maker)
    if result.how == "euchred":
        return f"{maker} euchred, {points}"
    if result.how == "march":
        return f"{maker} marched" + (" alone" if result.alone else "") + f", {points}"
    return f"{maker} made it, {points}"


def last_hand_text(game: Game) -> str:
    """``Last hand: Anna euchred, EW +2`` until the next hand has an entry
    (from the game, so it survives a restart); "" otherwise.  (Why play goes
    on at the target is said on the hand's result screen and the rules page.)"""
    if not game.results or game.hand.start != len(game.entries) or game.winner is not None:
        return ""
    return "Last hand: " + result_line(game, game.results[-1])


def start_words(game: Game) -> str:
    """``NS 6, EW 4``: the score the game under way started from ("" from 0-0)."""
    ns, ew = game.start_score[Team.NS], game.start_score[Team.EW]
    return f"NS {ns}, EW {ew}" if ns or ew else ""


def misdeal_words(game: Game) -> str:
    """What a misdeal did: ``Misdeal: Anna deals hand 3 again`` (``game`` after it)."""
    dealer = game.dealer
    assert dealer is not None  # a misdeal is taken only during a game
    return f"Misdeal: {game.name(dealer)} deals hand {game.hand.number} again"


def hands_lines(game: Game) -> tuple[str, ...]:
    """The hands page: the hands so far, the last one first (and, for a game
    started from a score, that score last)."""
    started = start_words(game)
    start = (f"Started at {started}",) if started else ()
    if not game.results:
        return ("No hand finished yet", *start)
    lines = []
    for result in reversed(game.results):
        trump = f" {result.trump.symbol}" if result.trump is not None else ""
        lines.append(f"{result.number}{trump}: {result_line(game, result)}")
    return (*lines, *start)


_RULE_WORDS: Final[dict[str, tuple[str, Any]]] = {
    "target": ("Target", lambda v: count_words(v, "point")),
    "win_by_two": ("Win by two", None),
    "stick_the_dealer": ("Stick the dealer", None),
    "defend_alone": ("Defend alone", None),
    "lone_defender_euchre": ("Lone defender euchre", lambda v: count_words(v, "point")),
    "defenders_sweep": ("Defenders take all 5", lambda v: count_words(v, "point")),
    "lone_lead": ("Lone hand led", lambda v: "left of the maker" if v == "maker-left"
                  else "left of the dealer"),
    "canadian_loner": ("Canadian loner", None),
    "renege_penalty": ("Renege", lambda v: count_words(v, "point")),
    "renege_vs_loner": ("Renege vs a loner", lambda v: count_words(v, "point")),
}
"""Each house rule's words on the rules page (``None``: on/off)."""


def rules_lines(rules: Rules) -> tuple[str, ...]:
    """The rules page: each setting that is not standard, in words
    (``Win by two: on``); the standard profile says so."""
    standard = Rules()
    lines = []
    for name, (words, value_words) in _RULE_WORDS.items():
        value = getattr(rules, name)
        if value == getattr(standard, name):
            continue
        shown = ("on" if value else "off") if value_words is None else value_words(value)
        lines.append(f"{words}: {shown}")
    if not lines:
        return ("Standard rules", f"to {rules.target}, stick the dealer")
    if rules.win_by_two:
        lines.append(f"At {rules.target} or more, play on until two ahead")
    return tuple(lines)


def _entry_words(game: Game, entry: Entry) -> str:
    """An entry in words with names: ``Anna's trick``, ``Ragnar's call (♥ alone)``."""
    if isinstance(entry, (Order, Call, Make)):
        suit = entry.suit if isinstance(entry, (Call, Make)) else game.hand.upcard_suit
        what = (suit.symbol if suit is not None else "the upcard") + (
            " alone" if entry.alone else "")
        return f"{game.name(entry.seat)}'s call ({what})"
    if isinstance(entry, Pass):
        return f"{game.name(entry.seat)}'s pass"
    if isinstance(entry, Trick):
        return f"{game.name(entry.seat)}'s trick"
    if isinstance(entry, Tricks):
        return f"the claim (makers took {entry.count})"
    if isinstance(entry, Renege):
        return f"{game.name(entry.seat)}'s renege"
    if isinstance(entry, Defend):
        return f"{game.name(entry.seat)} defending alone"
    if isinstance(entry, Upcard):
        return f"the upcard ({entry.card or entry.suit.symbol})"
    if isinstance(entry, NewGame):
        started = f", from NS {entry.ns}, EW {entry.ew}" if entry.ns or entry.ew else ""
        return f"the new game ({game.name(entry.dealer)} to deal{started})"
    if isinstance(entry, Misdeal):
        return "the misdeal"
    if isinstance(entry, Play):
        return f"{game.name(entry.seat)}'s card ({entry.card})"
    if isinstance(entry, Discard):
        return f"the discard ({entry.card})"
    if isinstance(entry, Deal):
        return "the deal"
    if isinstance(entry, Players):
        return "the players' names"
    if isinstance(entry, SetRules):
        return "the house rules"
    return "the last entry"  # pragma: no cover - every table entry is named above


def undo_words(game: Game, removed: Entry, taken_back: HandResult | None,
               was_won: bool = False) -> str:
    """What an undo took back, in words: ``Undone: Anna's trick — hand 3
    reopened, EW −1``.  ``game`` is the game after the undo; ``taken_back``
    the hand result the undo removed (None if no hand was reopened)."""
    text = f"Undone: {_entry_words(game, removed)}"
    if taken_back is None:
        return text
    text += f" — hand {taken_back.number} reopened"
    if taken_back.team is not None and taken_back.points:
        text += f", {taken_back.team} \u2212{taken_back.points}"
    if was_won:
        text += ", game on again"
    return text


def summary_line(game: Game) -> str:
    """``NS 7 EW 5, 9 hands, NS won`` for listings."""
    text = f"NS {game.score[Team.NS]} EW {game.score[Team.EW]}, {game.hands_played} hands"
    if game.winner is not None:
        text += f", {game.winner} won"
    elif game.dealer is None:
        text += ", not started"
    return text


def _result_rows(game: Game) -> list[tuple[str, str, str, str, str]]:
    """The hands table's rows: number, dealer, maker and trump, tricks, result."""
    seat = {each: f"{game.name(each)} ({each})" for each in SEATS}  # "Anna (N)", once a game
    rows = []
    for result in game.results:
        maker = "-"
        if result.maker is not None and result.trump is not None:
            maker = f"{seat[result.maker]} {result.trump.symbol}"
            if result.alone:
                maker += " alone"
            if result.lone_defender is not None:
                maker += f" vs {game.name(result.lone_defender)} alone"
        tricks = "-" if result.maker_tricks is None else str(result.maker_tricks)
        if result.how == "renege" and result.reneger is not None:
            outcome = f"renege by {game.name(result.reneger)}"
        else:
            outcome = result.how
        if result.team is not None:
            outcome = f"{outcome}: {result.team} +{result.points}"
        rows.append((str(result.number), seat[result.dealer], maker, tricks, outcome))
    return rows


def summary_text(path: str, result: Replay) -> str:
    """A readable summary: hands table, score, next dealer, winner."""
    game = result.game
    rows = [("hand", "dealer", "maker, trump", "tricks", "result")]
    rows += _result_rows(game)
    widths = [max(map(len, column)) for column in zip(*rows)]
    lines = [f"{path}: game {max(game.game_number, 1)}, {game.hands_played} hands"]
    started = start_words(game)
    if started:
        lines[0] += f", started at {started}"
    lines += ["  " + "  ".join(map(str.ljust, row, widths)) for row in rows]
    ns, ew = game.score[Team.NS], game.score[Team.EW]
    names = game.names
    lines.append(
        f"  score: NS {ns} ({names[Seat.N]} & {names[Seat.S]}), "
        f"EW {ew} ({names[Seat.E]} & {names[Seat.W]})"
    )
    if game.winner is not None:
        lines.append(f"  winner: {game.winner}")
    elif game.dealer is not None:
        lines.append(f"  next: {game.expected} (dealer {game.name(game.dealer)})")
    return "\n".join(lines)

