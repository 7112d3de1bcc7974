"""Whole nights with real processes: `club serve` (the director and its page),
`club box --autoplay` boxes, a real mosquitto; the page in a real headless
chromium; a box SIGKILLed and the broker restarted mid-round, and the
director's standings equal those computed from each box's own journal."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from support.broker import Mosquitto, needs_mosquitto
from support.club_room import CHROMIUM

from euchre_core import SEATS, Team, replay
from firmware.club.protocol import HANDS_ROUND_TARGET
from firmware.club.simulate import Night
from firmware.journal import Store

pytestmark = [needs_mosquitto, pytest.mark.timeout(600)]  # real processes, a loaded CI


def dump_dom(url: str, profile: Path) -> str:
    """The page as headless chromium has drawn it from /board.json (its first draw,
    before the live stream opens; the stream is checked in test_the_stream_...)."""
    assert CHROMIUM is not None
    result = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", f"--user-data-dir={profile}", "--virtual-time-budget=300",
         "--dump-dom", url], capture_output=True, timeout=120, check=True)
    return result.stdout.decode()


STANDINGS_KEYS = {"event", "round", "tables", "players", "corrections"}
TABLE_KEYS = {"table", "round", "hand", "score", "players", "online"}
PLAYER_KEYS = {"rank", "name", "points", "rounds_won", "loners", "rounds_played"}


def get_json(url: str) -> object:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install "
                    "chromium)")
def test_the_live_page_in_a_real_browser(tmp_path: Path, mosquitto: Mosquitto) -> None:
    night = Night(mosquitto.url, tmp_path, tables=1, event="page", pace=0.05).start()
    try:
        names = night.register(4)
        night.start_round(hands=2)
        night.wait(lambda: night.board()["tables"][0]["online"], 60, "the box online")
        first = dump_dom(night.url + "/", tmp_path / "chromium")
        assert "Round 1 (2 hands)" in first
        assert 'data-table="1"' in first
        for name in names:
            assert f"<td>{name}</td>" in first
        night.wait(lambda: night.round_done(1), 120, "round 1")
        standings = get_json(night.url + "/standings.json")
        assert isinstance(standings, dict) and set(standings) == STANDINGS_KEYS
        assert all(set(t) == TABLE_KEYS for t in standings["tables"])
        assert all(set(p) == PLAYER_KEYS for p in standings["players"])
        leader = standings["players"][0]
        assert leader["points"] > 0
        second = dump_dom(night.url + "/", tmp_path / "chromium")
        row = re.search(r'<tr><td class="n">=?1</td><td>([^<]*)</td><td class="n">(\d+)</td>',
                        second)
        assert row is not None and (row.group(1), int(row.group(2))) == (
            leader["name"], leader["points"])
        points = re.findall(r'<span class="points">(\d+)</span>', second)
        assert len(points) == 2 and sum(map(int, points)) > 0  # the table's score moved on
    finally:
        night.stop()


def test_the_stream_pushes_each_change(tmp_path: Path, mosquitto: Mosquitto) -> None:
    night = Night(mosquitto.url, tmp_path, tables=0, event="stream").start()
    try:
        with urllib.request.urlopen(night.url + "/events", timeout=30) as stream:
            def next_board() -> dict[str, object]:
                for raw in stream:
                    line = raw.decode().strip()
                    if line.startswith("data: "):
                        board: dict[str, object] = json.loads(line[len("data: "):])
                        return board
                raise AssertionError("the stream ended")

            assert next_board()["players"] == []
            night.post("/players", {"name": "Zoë"})
            assert [p["name"] for p in next_board()["players"]] == ["Zoë"]  # type: ignore
        with pytest.raises(ValueError, match="'zoë' is registered already"):
            night.post("/players", {"name": "zoë"})
        with pytest.raises(ValueError, match="a round needs at least 4 players, not 1"):
            night.post("/rounds", {"hands": 8})
    finally:
        night.stop()


def journal_standings(box_dirs: list[Path], hands: int) -> dict[str, tuple[int, int, int]]:
    """Points, rounds won, loners per player, from each box's own journal:
    every round game exported as a clean log and replayed."""
    totals: Counter[str] = Counter()
    won: Counter[str] = Counter()
    loners: Counter[str] = Counter()
    for box_dir in box_dirs:
        rounds = json.loads((box_dir / "club.json").read_text())["rounds"]
        store = Store(box_dir, readonly=True)
        try:
            for game_id in rounds:
                result = replay(store.export(int(game_id)))
                assert result.error is None
                game = result.game
                assert game.rules.target == HANDS_ROUND_TARGET
                counted = game.results[:hands]
                assert len(counted) == hands
                score = {team: sum(r.points for r in counted if r.team is team) for team in Team}
                for seat in SEATS:
                    name = game.names[seat]
                    totals[name] += score[seat.team]
                    if score[seat.team] >= score[seat.team.other]:  # a tie: shared
                        won[name] += 1
                for r in counted:
                    if r.alone and r.maker is not None and r.team is r.maker.team:
                        loners[game.names[r.maker]] += 1
        finally:
            store.close()
    return {name: (totals[name], won[name], loners[name]) for name in totals}


def hands_in_round(box_dir: Path, round_number: int) -> int:
    """Hands the box's journal holds for a round (read while the box is dead)."""
    rounds = json.loads((box_dir / "club.json").read_text())["rounds"]
    game_id = next(int(g) for g, r in rounds.items() if r == round_number)
    store = Store(box_dir, readonly=True)
    try:
        return store.load(game_id).hands_played
    finally:
        store.close()


def test_eight_tables_four_rounds_with_a_killed_box_and_a_restarted_broker(
        tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path / "broker")
    hands = 2
    night = Night(broker.url, tmp_path / "night", tables=8, event="e2e", pace=0.1,
                  resend_s=2.0).start()
    try:
        night.register(33)  # 33 players: one bye each round
        for round_number in range(1, 5):
            night.start_round(hands)
            if round_number == 2:  # a box killed mid-round, then started again
                night.wait(lambda: night.board()["tables"][2]["hand"] == 1, 60, "table 3 plays")
                night.kill_box(3)
                assert hands_in_round(night.box_dir(3), 2) < hands  # killed mid-round
                time.sleep(1.0)
                night.start_box(3)
            if round_number == 3:  # the broker restarted mid-round
                night.wait(lambda: any(0 < t["hand"] for t in night.board()["tables"]), 60,
                           "round 3 under way")
                assert not night.round_done(3)
                broker.restart(down_s=1.0)
            night.wait(lambda n=round_number: night.round_done(n), 180,
                       f"round {round_number}")
        director = {p["name"]: (p["points"], p["rounds_won"], p["loners"])
                    for p in night.board()["players"]}
        boxes = journal_standings([night.box_dir(t) for t in range(1, 9)], hands)
        assert {name: value for name, value in director.items() if value != (0, 0, 0)} == {
            name: value for name, value in boxes.items() if value != (0, 0, 0)}
        assert sum(points for points, _, _ in director.values()) > 0
        for table in range(1, 9):  # the director keeps exactly each box's journal
            box_dir = night.box_dir(table)
            rounds = json.loads((box_dir / "club.json").read_text())["rounds"]
            store = Store(box_dir, readonly=True)
            try:
                for game_id, round_number in rounds.items():
                    expected = store.journal_text(int(game_id))
                    with urllib.request.urlopen(
                            f"{night.url}/logs/{round_number}/{table}", timeout=10) as answer:
                        assert answer.read().decode() == expected
            finally:
                store.close()
        logs = get_json(night.url + "/logs")
        assert isinstance(logs, list) and len(logs) == 32
        exported = subprocess.run(
            [sys.executable, "-m", "firmware", "club", "export", "--director", night.url,
             "--out", str(tmp_path / "export")], capture_output=True, text=True, timeout=60)
        assert exported.returncode == 0, exported.stderr
        csv_rows = (tmp_path / "export" / "standings.csv").read_text().splitlines()
        assert len(csv_rows) == 1 + 33
        assert len(list((tmp_path / "export").glob("round-*-table-*.log"))) == 32
    finally:
        night.stop()
        broker.stop()


def test_club_simulate_runs_a_night(mosquitto: Mosquitto, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "firmware", "club", "simulate", "--broker", mosquitto.url,
         "--event", "rehearsal", "--tables", "2", "--rounds", "2", "--hands", "1",
         "--workdir", str(tmp_path)], capture_output=True, text=True, timeout=110)
    assert result.returncode == 0, result.stderr
    assert "round 1: all 2 tables done" in result.stdout
    assert "round 2: all 2 tables done" in result.stdout
    assert "  1  Player " in result.stdout


def test_the_director_killed_mid_round_loses_nothing(tmp_path: Path,
                                                     mosquitto: Mosquitto) -> None:
    night = Night(mosquitto.url, tmp_path, tables=2, event="dkill", pace=0.1,
                  resend_s=1.0).start()
    try:
        night.register(8)
        night.start_round(hands=3)
        night.wait(lambda: all(t["hand"] >= 2 for t in night.board()["tables"]), 120,
                   "round 1 under way")
        night.kill_director()  # SIGKILL: whatever it had not committed is gone
        time.sleep(1.5)  # the boxes play on
        night.start_director()
        night.wait(lambda: night.round_done(1), 120, "round 1, after the restart")
        director = {p["name"]: (p["points"], p["rounds_won"], p["loners"])
                    for p in night.board()["players"]}
        assert director == journal_standings([night.box_dir(1), night.box_dir(2)], 3)
    finally:
        night.stop()
