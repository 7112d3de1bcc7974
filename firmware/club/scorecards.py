"""Personal scorecards: per player, each round's table, seat, partner,
opponents, points and running total, with byes and corrections.

Derived, like the standings, from the same :class:`.standings.Outcome` list
(each table's round as it counts: the replayed journal, or a result
correction in its place), the byes of each round's assignment and the
correction records; a card's last running total is the player's points in
the standings (a test holds them equal).  Nothing is stored.

Exports: :func:`cards_csv` (one row per line of every card) and
:func:`cards_html` (a printable page, a card per player, names escaped).
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from euchre_core import SEATS, Seat

from .corrections import Correction
from .names import csv_cell
from .standings import Bonuses, Outcome, Totals


def _partner(seat: Seat) -> Seat:
    return SEATS[(SEATS.index(seat) + 2) % 4]


def scorecards(ranked: Sequence[Totals], outcomes: Iterable[Outcome],
               byes: Mapping[int, Sequence[str]], corrections: Iterable[Correction],
               bonus: Bonuses) -> list[dict[str, Any]]:
    """One card per player, in the standings' order: ``{"name", "rank",
    "points", "withdrawn", "rows": [...]}``; a row is a round at a table
    (``"kind": "table"``: round, table, seat, partner, opponents, us, them,
    won (null while the round is not done), points, note), a bye, or a
    penalty, each with the running ``total``."""
    rows: dict[str, list[dict[str, Any]]] = {t.name: [] for t in ranked}
    why = {c.id: c for c in corrections}
    for played in sorted(outcomes, key=lambda o: (o.round, o.table)):
        for seat in SEATS:
            name = played.seats[seat]
            us_score = played.score[seat.team]
            them_score = sum(v for team, v in played.score.items() if team is not seat.team)
            won = seat.team in played.winners if played.done else None
            points = us_score + (bonus.round_won if won else 0)
            points += bonus.loner * sum(1 for maker in played.loners if maker is seat)
            points += bonus.euchre * sum(1 for team in played.euchres if team is seat.team)
            fixed = why.get(played.corrected_by) if played.corrected_by else None
            rows.setdefault(name, []).append({
                "kind": "table", "round": played.round, "table": played.table,
                "seat": str(seat), "partner": played.seats[_partner(seat)],
                "opponents": [played.seats[s] for s in SEATS if s.team is not seat.team],
                "us": us_score, "them": them_score, "won": won, "points": points,
                "note": (f"result corrected (correction {fixed.id}: {fixed.reason})"
                         if fixed is not None else "" if played.done else "playing"),
            })
    totals = {t.name: t for t in ranked}
    for number in sorted(byes):
        for name in byes[number]:
            mine = totals.get(name)
            value = mine.bye_points // mine.byes if mine is not None and mine.byes else 0
            rows.setdefault(name, []).append({"kind": "bye", "round": number, "points": value,
                                              "note": "bye"})
    for fix in corrections:
        if fix.kind == "penalty" and fix.player is not None and fix.points is not None:
            rows.setdefault(fix.player, []).append({
                "kind": "penalty", "round": None, "points": -fix.points,
                "note": f"penalty (correction {fix.id}: {fix.reason})"})
    cards = []
    for mine in ranked:
        mine_rows = sorted(rows.get(mine.name, []), key=lambda r: (
            r["round"] is None, r["round"] or 0, r["kind"] != "table"))
        total = 0
        for row in mine_rows:
            total += row["points"]
            row["total"] = total
        cards.append({"name": mine.name, "rank": mine.rank, "points": mine.points,
                      "withdrawn": mine.withdrawn, "rows": mine_rows})
    return cards


_CSV_HEAD = ["player", "rank", "round", "kind", "table", "seat", "partner", "opponent 1",
             "opponent 2", "us", "them", "won", "points", "total", "note"]


def cards_csv(cards: Iterable[Mapping[str, Any]]) -> str:
    """Every card's rows as CSV (a name's cell kept from running as a formula)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(_CSV_HEAD)
    for card in cards:
        for row in card["rows"]:
            opponents = row.get("opponents", ["", ""])
            won = row.get("won")
            writer.writerow([
                csv_cell(card["name"]), card["rank"], row["round"] or "", row["kind"],
                row.get("table", ""), row.get("seat", ""), csv_cell(row.get("partner", "")),
                csv_cell(opponents[0]), csv_cell(opponents[1]), row.get("us", ""),
                row.get("them", ""), "" if won is None else "yes" if won else "no",
                row["points"], row["total"], csv_cell(row["note"])])
    return out.getvalue()


def row_cells(row: Mapping[str, Any]) -> list[str]:
    """A row as the printable page shows it (plain text, escaped by the caller)."""
    if row["kind"] == "table":
        won = row["won"]
        return [str(row["round"]), f"table {row['table']} {row['seat']}", row["partner"],
                " & ".join(row["opponents"]), f"{row['us']}-{row['them']}",
                "" if won is None else "won" if won else "lost", str(row["points"]),
                str(row["total"]), row["note"]]
    return [str(row["round"] or ""), row["note"], "", "", "", "", str(row["points"]),
            str(row["total"]), ""]


CARD_HEAD = ["Round", "Table, seat", "Partner", "Opponents", "Score", "", "Points", "Total",
             "Note"]


def cards_html(event: str, cards: Iterable[Mapping[str, Any]]) -> str:
    """A printable page: a card per player, one to a printed page (every name
    and note escaped: never markup)."""
    esc = html.escape
    parts = [
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>Scorecards: {esc(event)}</title><style>",
        "body{font-family:'DejaVu Sans',Verdana,sans-serif;margin:1.5rem}"
        "section{break-after:page;margin-bottom:2rem}"
        "table{border-collapse:collapse;width:100%}"
        "th,td{border:1px solid #999;padding:.2rem .4rem;text-align:left}"
        "td.n{text-align:right}",
        "</style></head><body>"]
    for card in cards:
        withdrawn = " (withdrawn)" if card["withdrawn"] else ""
        parts.append(f"<section class=\"card\"><h1>{esc(card['name'])}{withdrawn}</h1>"
                     f"<p>{esc(event)} · rank {esc(str(card['rank']))} · "
                     f"{card['points']} points</p><table><thead><tr>")
        parts.extend(f"<th>{esc(h)}</th>" for h in CARD_HEAD)
        parts.append("</tr></thead><tbody>")
        for row in card["rows"]:
            cells = row_cells(row)
            parts.append("<tr>" + "".join(
                ("<td class=\"n\">" if i in (6, 7) else "<td>") + f"{esc(cell)}</td>"
                for i, cell in enumerate(cells)) + "</tr>")
        parts.append("</tbody></table></section>")
    parts.append("</body></html>\n")
    return "".join(parts)
