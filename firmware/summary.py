"""Summaries of a game, in one place: the ``replay`` table and JSON object,
the one-line listing of ``games``, and a hand's result as the screen says it."""

from __future__ import annotations

from typing import Any, Final

from euchre_core import Game, HandResult, Replay, Seat, Team

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


def describe_result(game: Game, result: HandResult) -> tuple[str, ...]:
    """Two or three short lines saying how a hand ended (the result screen)."""
    if result.how == "thrown in":
        return ("All passed:", "thrown in", f"{game.name(result.dealer.left)} deals")
    points = f"{result.team} +{result.points}"
    if result.how == "renege" and result.reneger is not None:
        return (f"{game.name(result.reneger)} reneged", points)
    assert result.maker is not None
    maker = game.name(result.maker)
    tricks = result.maker_tricks
    if result.how == "euchred":
        return (f"{maker} euchred", f"({tricks} tricks)", points)
    if result.how == "march":
        return (f"{maker} marched" + (" alone" if result.alone else ""), points)
    return (f"{maker} made it", f"({tricks} tricks)", points)


def summary_line(game: Game) -> str:
    """``NS 7 EW 5, 9 hands, NS won`` for listings."""
    text = f"NS {game.score[Team.NS]} EW {game.score[Team.EW]}, {game.hands_played} hands"
    if game.winner is not None:
        text += f", {game.winner} won"
    elif game.dealer is None:
        text += ", not started"
    return text


def _result_row(game: Game, result: HandResult) -> tuple[str, str, str, str, str]:
    maker = "-"
    if result.maker is not None and result.trump is not None:
        maker = f"{game.name(result.maker)} ({result.maker}) {result.trump.symbol}"
        if result.alone:
            maker += " alone"
        if result.lone_defender is not None:
            maker += f" vs {game.name(result.lone_defender)} alone"
    tricks = "-" if result.maker_tricks is None else str(result.maker_tricks)
    if result.how == "renege" and result.reneger is not None:
        outcome = f"renege by {game.name(result.reneger)}"
    else:
        outcome = result.how
    points = "-" if result.team is None else f"{result.team} +{result.points}"
    return (str(result.number), f"{game.name(result.dealer)} ({result.dealer})", maker, tricks,
            f"{outcome}: {points}" if result.team else outcome)


def summary_text(path: str, result: Replay) -> str:
    """A readable summary: hands table, score, next dealer, winner."""
    game = result.game
    rows = [("hand", "dealer", "maker, trump", "tricks", "result")]
    rows += [_result_row(game, hand) for hand in game.results]
    widths = [max(len(row[column]) for row in rows) for column in range(5)]
    lines = [f"{path}: game {max(game.game_number, 1)}, {game.hands_played} hands"]
    for row in rows:
        lines.append("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)))
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

