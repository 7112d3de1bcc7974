"""Readable and JSON summaries of a replayed log (for ``euchre-referee replay``)."""

from __future__ import annotations

from typing import Any

from euchre_core import Game, HandResult, Replay, Seat, Team


def summary_json(path: str, result: Replay) -> dict[str, Any]:
    """The ``replay --json`` object for one file."""
    game = result.game
    dealer = game.dealer
    return {
        "file": path,
        "score": {"NS": game.score[Team.NS], "EW": game.score[Team.EW]},
        "hands_played": game.hands_played,
        "dealer": str(dealer) if dealer is not None else None,
        "winner": str(game.winner) if game.winner is not None else None,
        "error": (
            None
            if result.error is None
            else {"line": result.error.line, "reason": result.error.reason}
        ),
    }


def _describe_result(game: Game, result: HandResult) -> tuple[str, str, str, str, str]:
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
    rows += [_describe_result(game, hand) for hand in game.results]
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

