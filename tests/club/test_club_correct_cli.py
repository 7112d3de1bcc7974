"""`euchre-referee club correct ...` against a real director process (`club
serve`), a real box and mosquitto: each kind kept with who and why, bad input
refused in one line with nothing kept, the standings and the next round
replayed from the records, the audit list on the page's data and in `club
export`'s corrections.csv (firmware/club/correct.py, corrections.py)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from support.broker import Mosquitto, needs_mosquitto
from test_club_night import CHROMIUM, dump_dom

from firmware.club.simulate import Night

pytestmark = [needs_mosquitto, pytest.mark.timeout(300)]


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def club(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "firmware", "club", *arguments],
                          capture_output=True, text=True, timeout=60)


def test_corrections_from_the_terminal(tmp_path: Path, mosquitto: Mosquitto) -> None:
    night = Night(mosquitto.url, tmp_path, tables=1, event="correct", pace=0.05).start()
    try:
        names = night.register(5)  # Player 01..05: one bye a round
        first = night.start_round(hands=1)
        night.wait(lambda: night.round_done(1), 120, "round 1")
        where = ["--director", night.url, "--state-dir", str(tmp_path / "director")]
        before = {p["name"]: p for p in get_json(night.url + "/standings.json")["players"]}

        def correct(*arguments: str) -> subprocess.CompletedProcess[str]:
            return club("correct", arguments[0], *where, "--by", "Kim", *arguments[1:])

        refused = [
            (correct("penalty", "Nobody", "--points", "2", "--reason", "late"),
             "euchre-referee: penalty: 'Nobody' is not a registered player"),
            (correct("penalty", "Player 01", "--points", "2"),
             "euchre-referee: penalty: a reason is needed"),
            (correct("result", "--round", "2", "--table", "1", "--ns", "3", "--ew", "0",
                     "--reason", "paper"),
             "euchre-referee: result: round 2 has not been played"),
            (club("correct", "bye", "--director", night.url, "--token", "wrong",
                  "Player 02", "--reason", "ill"),
             "euchre-referee: the organiser's token is wrong"),
        ]
        for result, line in refused:
            assert (result.returncode, result.stderr, result.stdout) == (1, line + "\n", "")
        assert get_json(night.url + "/corrections.json") == []

        kept = correct("penalty", "player 01", "--points", "2", "--reason", "late")
        assert kept.returncode == 0, kept.stderr
        assert kept.stdout == "correction 1 kept: Player 01: 2 points off (by Kim: late)\n"
        table = first["tables"][0]["players"]
        for arguments in [
                ("result", "--round", "1", "--table", "1", "--ns", "5", "--ew", "0",
                 "--reason", "the box died; the score sheet"),
                ("withdraw", "Player 03", "--reason", "went home"),
                ("add", "Zoë", "--reason", "came late"),
                ("bye", "Player 02", "--reason", "asked to sit out"),
                ("reseat", "Player 01", "Player 02", "--reason", "Player 01 must leave")]:
            result = correct(*arguments)
            assert result.returncode == 0, result.stderr
        standings = get_json(night.url + "/standings.json")
        points = {p["name"]: p["points"] for p in standings["players"]}
        north, east = table["N"], table["E"]
        assert points[north] == 5 - (2 if north == "Player 01" else 0)
        assert points[east] == 0 - (2 if east == "Player 01" else 0)
        assert [c["kind"] for c in standings["corrections"]] == [
            "penalty", "result", "withdraw", "add", "bye", "reseat"]
        assert all(c["who"] == "Kim" for c in standings["corrections"])
        assert before != {p["name"]: p for p in standings["players"]}

        listed = club("correct", "list", "--director", night.url)
        assert listed.returncode == 0
        assert len(listed.stdout.splitlines()) == 6
        assert "Kim: round 1, table 1: result set to NS 5, EW 0 (the box died; the score sheet)" \
            in listed.stdout

        preview = club("round", *where, "--hands", "1", "--preview")
        assert preview.returncode == 0, preview.stderr
        assert preview.stdout.startswith("round 2 would be (nothing started):\n")
        assert "  bye: Player 01\n" in preview.stdout
        assert get_json(night.url + "/standings.json")["round"] == 1
        second = night.start_round(hands=1)  # Player 03 out, Zoë in, Player 02's bye swapped
        seated = {name for t in second["tables"] for name in t["players"].values()}
        assert second["byes"] == ["Player 01"]
        assert seated == {"Player 02", "Player 04", "Player 05", "Zoë"}

        exported = club("export", "--director", night.url, "--out", str(tmp_path / "out"))
        assert exported.returncode == 0, exported.stderr
        with open(tmp_path / "out" / "corrections.csv", newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        assert [(r["id"], r["by"], r["kind"], r["reason"]) for r in rows][:2] == [
            ("1", "Kim", "penalty", "late"),
            ("2", "Kim", "result", "the box died; the score sheet")]
        assert rows[0]["what"] == "Player 01: 2 points off"
        standings_csv = (tmp_path / "out" / "standings.csv").read_text(encoding="utf-8")
        assert standings_csv.splitlines()[0].startswith(
            "rank,name,points,rounds_won,loners,euchres,rounds_played,byes")
        del names
    finally:
        night.stop()


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install "
                    "chromium)")
def test_the_page_lists_the_corrections(tmp_path: Path, mosquitto: Mosquitto) -> None:
    night = Night(mosquitto.url, tmp_path, tables=0, event="audit").start()
    try:
        night.register(4)
        page = dump_dom(night.url + "/", tmp_path / "chromium")
        assert 'id="audit"' not in page  # no corrections: no list
        night.post("/corrections", {"kind": "penalty", "player": "Player 01", "points": 2,
                                    "by": "Kim", "reason": "late"})
        page = dump_dom(night.url + "/", tmp_path / "chromium")
        assert '<section id="audit">' in page
        assert "Player 01: 2 points off (Kim: late)</li>" in page
        assert "<th>Played</th>" in page  # the rounds-played column
    finally:
        night.stop()


def test_every_option_of_club_correct_has_help() -> None:
    import argparse

    from firmware.cli import build_parser

    def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        action = next(a for a in parser._actions
                      if isinstance(a, argparse._SubParsersAction))
        return dict(action.choices)

    kinds = subparsers(subparsers(subparsers(build_parser())["club"])["correct"])
    assert sorted(kinds) == sorted(
        ["result", "penalty", "withdraw", "add", "bye", "reseat", "list"])
    for kind, parser in kinds.items():
        for action in parser._actions:
            assert action.help, f"club correct {kind}: {action.dest} has no help text"
    shown = club("correct", "penalty", "--help")
    assert shown.returncode == 0 and "--points N" in shown.stdout and "--reason" in shown.stdout


def test_a_setting_that_is_not_one_stops_club_serve_in_one_line(tmp_path: Path) -> None:
    result = club("serve", "--broker", "mqtt://127.0.0.1:1", "--state-dir", str(tmp_path),
                  "--http", "127.0.0.1:0", "--tie-breaks", "points,luck")
    assert (result.returncode, result.stderr) == (2, (
        "euchre-referee: --tie-breaks: 'luck' is not one of points, rounds_won, loners, "
        "euchres, head_to_head\n"))
    kept = club("serve", "--broker", "mqtt://127.0.0.1:1", "--state-dir", str(tmp_path),
                "--http", "127.0.0.1:0", "--bye-points", "lots")
    assert kept.stderr == ("euchre-referee: --bye-points: 'lots' is not none, average or a "
                           "number from 0 to 99\n")
    from firmware.club.director import Director

    director = Director(tmp_path)  # nothing was kept by the refused starts
    assert director.settings.tie_breaks[1] == "rounds_won"
    assert director.settings.bye_points == "none"
    director.close()
