"""A season (firmware/club/season.py): three nights of simulated play (real
`club serve` and `club box --autoplay` processes on a real mosquitto), then
`club season --nights ...` as a process; the season's standings equal those
computed here from every box's own journal, and each player's page carries
exactly their scorecards of each night."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.broker import Mosquitto, needs_mosquitto

from euchre_core import SEATS, Team
from firmware.club.simulate import Night
from firmware.journal import Store

HANDS = 2


def play_night(tmp_path: Path, broker: str, number: int) -> dict[str, Any]:
    """A night of 2 tables x 2 rounds (9 players: a bye a round); its cards."""
    night = Night(broker, tmp_path / f"night-{number}", tables=2, event=f"season{number}",
                  pace=0.02, seed=number).start()
    try:
        night.register(9)
        for round_number in (1, 2):
            night.start_round(hands=HANDS)
            night.wait(lambda n=round_number: night.round_done(n), 120, f"round {round_number}")
        cards: dict[str, Any] = night._get("/scorecards.json")
        return {card["name"]: card for card in cards["cards"]}
    finally:
        night.stop()


def from_journals(nights: list[Path]) -> dict[str, Counter[str]]:
    """Each player's points, rounds, rounds won, loners made and euchres, from
    the boxes' own journals (club.json says which game is which round)."""
    totals: dict[str, Counter[str]] = {}
    for workdir in nights:
        for box in sorted(workdir.glob("box-*")):
            if not box.is_dir():
                continue
            rounds = json.loads((box / "club.json").read_text())["rounds"]
            store = Store(box, readonly=True)
            try:
                games = [store.load(int(game)) for game in rounds]
            finally:
                store.close()
            for game in games:
                counted = game.results[:HANDS]
                score = {team: sum(r.points for r in counted if r.team is team) for team in Team}
                for seat in SEATS:
                    mine = totals.setdefault(game.names[seat], Counter())
                    mine["points"] += score[seat.team]
                    mine["rounds"] += 1
                    other = score[Team.EW if seat.team is Team.NS else Team.NS]
                    mine["rounds_won"] += score[seat.team] >= other  # level: shared
                for result in counted:
                    if result.maker is None or result.team is None:
                        continue
                    if result.alone and result.team is result.maker.team:
                        totals[game.names[result.maker]]["loners_made"] += 1
                    if result.how == "euchred":
                        for seat in SEATS:
                            if seat.team is result.team:
                                totals[game.names[seat]]["euchres"] += 1
    return totals


@needs_mosquitto
@pytest.mark.timeout(600)
def test_a_season_of_three_nights_equals_the_boxes_journals(
        tmp_path: Path, mosquitto: Mosquitto) -> None:
    cards = [play_night(tmp_path, mosquitto.url, number) for number in (1, 2, 3)]
    nights = [tmp_path / f"night-{n}" for n in (1, 2, 3)]
    out = tmp_path / "season"
    done = subprocess.run(
        [sys.executable, "-m", "firmware", "club", "season", "--out", str(out), "--nights",
         *(str(n / "director") for n in nights)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    season = list(csv.DictReader((out / "season.csv").open(encoding="utf-8")))
    expected = from_journals(nights)
    assert {row["name"] for row in season} == set(expected)
    for row in season:
        mine = expected[row["name"]]
        for key in ("points", "rounds", "rounds_won", "loners_made", "euchres"):
            assert int(row[key]) == mine[key], (row["name"], key)
        assert row["nights"] == "3"
    points = [int(row["points"]) for row in season]
    assert points == sorted(points, reverse=True)  # ranked by points first
    index = (out / "players" / "index.html").read_text(encoding="utf-8")
    for number, row in enumerate(season, 1):  # each player's page: their cards, night by night
        page = json.loads((out / "players" / f"{number}.json").read_text(encoding="utf-8"))
        assert page["name"] == row["name"] and f'href="{number}.html"' in index
        assert [night["card"] for night in page["nights_cards"]] == [
            night_cards[row["name"]] for night_cards in cards]
        assert sum(night["card"]["points"] for night in page["nights_cards"]) == int(
            row["points"])
        html = (out / "players" / f"{number}.html").read_text(encoding="utf-8")
        assert html.count('<h2 class="night">') == 3


def test_a_folder_that_is_no_night_is_named(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "firmware", "club", "season", "--out", str(tmp_path / "out"),
         "--nights", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (f"euchre-referee: {tmp_path}: no director.sqlite3 here (not a club "
                           "serve --state-dir)\n")
    assert not (tmp_path / "out").exists()
