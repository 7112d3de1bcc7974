"""A season: a list of nights, each a director's ``--state-dir``, and the
season's standings and per-player statistics replayed from them.

``euchre-referee club season --nights DIR1 DIR2 ... --out SEASON/``: each
night is opened as its director opens it (:class:`.director.Director`:
every table's journal lines, as the boxes sent them, replayed by the engine;
the night's correction records applied), never from a stored total.  A club
keeps one ``--state-dir`` per night (``nights/2026-12-04/``...) and lists
them; nothing else is kept.  Written into ``--out``:

- ``season.csv``: rank, name, nights, rounds played, rounds won, points,
  loners made, loners set, euchres, euchred (ranked by points, then rounds
  won, loners and euchres; level players share a rank);
- ``players.csv``: the same and each player's best partner;
- ``players/index.html`` and a page per player (``players/<n>.html``, with
  ``players/<n>.json``): the statistics, the partners, and each night's
  scorecard (:mod:`.scorecards`), names escaped (never markup).

Per player, from the hands that count in each round (a round of N hands:
its first N): **loners made** (the player went alone and the makers scored),
**loners set** (the player's side euchred a lone maker), **euchres** (the
player's side euchred the makers), **euchred** (the player's side were
euchred as makers); rounds won and points are the night's standings' (a
result correction counts as the night counts it).  **Partners**: per
partner, rounds together and rounds won together; the best partner is the
one with the most rounds won together (then the fewest rounds, then name).
"""

from __future__ import annotations

import csv
import html
import io
import json
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from euchre_core import SEATS, Seat, Team

from .director import DB_NAME, Director
from .names import csv_cell
from .scorecards import CARD_HEAD, row_cells
from .standings import Totals, rank


class SeasonError(ValueError):
    """A night that cannot be read; says which and why."""


@dataclass
class PlayerSeason:
    name: str
    nights: int = 0
    rounds: int = 0
    rounds_won: int = 0
    points: int = 0
    loners_made: int = 0
    loners_set: int = 0
    euchres: int = 0
    euchred: int = 0
    rank: str = ""
    together: Counter[str] = field(default_factory=Counter)
    won_together: Counter[str] = field(default_factory=Counter)
    cards: list[dict[str, Any]] = field(default_factory=list)
    """Per night: ``{"night", "card"}`` (the night's scorecard)."""

    def best_partner(self) -> str:
        if not self.together:
            return ""
        return min(self.together, key=lambda p: (-self.won_together[p], self.together[p],
                                                 p.casefold()))

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "name": self.name, "nights": self.nights,
                "rounds": self.rounds, "rounds_won": self.rounds_won, "points": self.points,
                "loners_made": self.loners_made, "loners_set": self.loners_set,
                "euchres": self.euchres, "euchred": self.euchred,
                "best_partner": self.best_partner(),
                "partners": [{"name": p, "rounds": n, "won": self.won_together[p]}
                             for p, n in sorted(self.together.items(),
                                                key=lambda i: (-i[1], i[0].casefold()))],
                "nights_cards": self.cards}


def open_night(path: Path) -> Director:
    """A night's director over its state directory (replaying every table)."""
    if not (Path(path) / DB_NAME).is_file():
        raise SeasonError(f"{path}: no {DB_NAME} here (not a club serve --state-dir)")
    try:
        return Director(Path(path))
    except sqlite3.Error as error:
        raise SeasonError(f"{path}/{DB_NAME}: {error}") from None


def season(nights: Sequence[Path]) -> list[PlayerSeason]:
    """The season's players, ranked, from ``nights`` (state directories) in order."""
    players: dict[str, PlayerSeason] = {}

    def of(name: str) -> PlayerSeason:
        return players.setdefault(name, PlayerSeason(name))

    for path in nights:
        director = open_night(path)
        try:
            board = director.board()
            for totals in board["players"]:
                mine = of(totals["name"])
                mine.nights += 1 if totals["rounds_played"] or totals["byes"] else 0
                mine.rounds += totals["rounds_played"]
                mine.rounds_won += totals["rounds_won"]
                mine.points += totals["points"]
            for card in director.scorecards():
                of(card["name"]).cards.append({"night": Path(path).name, "card": card})
            _hands(director, of)
        finally:
            director.close()
    ranked = rank([Totals(p.name, table_points=p.points, rounds_won=p.rounds_won,
                          loners=p.loners_made, euchres=p.euchres) for p in players.values()],
                  [], ("points", "rounds_won", "loners", "euchres"))
    for totals in ranked:
        players[totals.name].rank = totals.rank
    return [players[t.name] for t in ranked]


def _hands(director: Director, of: Any) -> None:
    """Loners, euchres and partners from the hands that count at each table."""
    for table_round in director.tables.values():
        seats = table_round.players
        for result in table_round.counted:
            maker: Seat | None = result.maker
            if maker is None or result.team is None:
                continue
            defenders = [s for s in SEATS if s.team is not maker.team]
            if result.alone and result.team is maker.team:
                of(seats[maker]).loners_made += 1
            if result.how == "euchred":
                for seat in defenders:
                    of(seats[seat]).euchres += 1
                    if result.alone:
                        of(seats[seat]).loners_set += 1
                for seat in SEATS:
                    if seat.team is maker.team:
                        of(seats[seat]).euchred += 1
        if not table_round.done:
            continue
        winners: frozenset[Team] = table_round.winners
        for seat in SEATS:
            partner = seats[SEATS[(SEATS.index(seat) + 2) % 4]]
            mine = of(seats[seat])
            mine.together[partner] += 1
            if seat.team in winners:
                mine.won_together[partner] += 1


HEAD = ["rank", "name", "nights", "rounds", "rounds_won", "points", "loners_made",
        "loners_set", "euchres", "euchred"]


def standings_csv(players: Sequence[PlayerSeason], *, partners: bool = False) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(HEAD + (["best_partner"] if partners else []))
    for mine in players:
        data = mine.to_json()
        writer.writerow([csv_cell(str(data[key])) for key in HEAD]
                        + ([csv_cell(mine.best_partner())] if partners else []))
    return out.getvalue()


_STYLE = ("body{font-family:'DejaVu Sans',Verdana,sans-serif;margin:1rem;max-width:60rem}"
          "table{border-collapse:collapse;margin-bottom:1rem}"
          "th,td{border:1px solid #999;padding:.2rem .4rem;text-align:left}")


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    esc = html.escape
    return ("<table><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head)
            + "</tr></thead><tbody>" + "".join(
                "<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in row) + "</tr>"
                for row in rows) + "</tbody></table>")


def player_page(mine: PlayerSeason) -> str:
    """A player's season page (every name escaped)."""
    esc = html.escape
    data = mine.to_json()
    parts = [f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
             f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
             f"<title>{esc(mine.name)}</title><style>{_STYLE}</style></head><body>",
             f"<p><a href=\"index.html\">The season</a></p><h1>{esc(mine.name)}</h1>",
             _table(HEAD[:1] + HEAD[2:], [[data[k] for k in HEAD[:1] + HEAD[2:]]]),
             "<h2>Partners</h2>",
             _table(["partner", "rounds", "won"],
                    [[p["name"], p["rounds"], p["won"]] for p in data["partners"]])]
    for night in mine.cards:
        card = night["card"]
        parts.append(f"<h2 class=\"night\">{esc(night['night'])}: rank {esc(str(card['rank']))},"
                     f" {card['points']} points</h2>")
        parts.append(_table(CARD_HEAD, [row_cells(row) for row in card["rows"]]))
    parts.append("</body></html>\n")
    return "".join(parts)


def write(players: Sequence[PlayerSeason], out: Path) -> None:
    """``season.csv``, ``players.csv`` and the players' pages into ``out``."""
    pages = out / "players"
    pages.mkdir(parents=True, exist_ok=True)
    (out / "season.csv").write_text(standings_csv(players), encoding="utf-8")
    (out / "players.csv").write_text(standings_csv(players, partners=True), encoding="utf-8")
    rows = []
    for number, mine in enumerate(players, 1):
        (pages / f"{number}.html").write_text(player_page(mine), encoding="utf-8")
        (pages / f"{number}.json").write_text(
            json.dumps(mine.to_json(), ensure_ascii=False, indent=1), encoding="utf-8")
        rows.append((number, mine))
    esc = html.escape
    index = "".join(
        f"<tr><td>{esc(mine.rank)}</td><td><a href=\"{number}.html\">{esc(mine.name)}</a></td>"
        f"<td>{mine.points}</td><td>{mine.rounds_won}</td><td>{mine.rounds}</td></tr>"
        for number, mine in rows)
    (pages / "index.html").write_text(
        f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>The season"
        f"</title><style>{_STYLE}</style></head><body><h1>The season</h1><table><thead><tr>"
        "<th>#</th><th>player</th><th>points</th><th>rounds won</th><th>rounds</th></tr>"
        f"</thead><tbody>{index}</tbody></table></body></html>\n", encoding="utf-8")


def run(nights: Sequence[str], out: str) -> int:
    """``club season``: 0, or 1 with one line naming the night that cannot be read."""
    import sys

    from ..exits import EXIT_INVALID, EXIT_OK

    try:
        players = season([Path(n) for n in nights])
        write(players, Path(out))
    except (SeasonError, OSError) as error:
        print(f"euchre-referee: {error}", file=sys.stderr)
        return EXIT_INVALID
    print(f"{len(nights)} nights, {len(players)} players: {out}/season.csv, players.csv, "
          f"players/index.html")
    return EXIT_OK
