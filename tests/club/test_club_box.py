"""A real referee joined to a real mosquitto: the assignment starts the
round's game, every journal line reaches the director from the journal, and
a broker restart or an outage is caught up (firmware/club/box.py)."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.broker import Mosquitto, needs_mosquitto
from support.club_kit import replayed
from support.club_table import Table

from euchre_core import SEATS, Team
from firmware.app import Referee
from firmware.club.director import Director
from firmware.club.mqtt import close_client, open_client
from firmware.club.protocol import RoundFormat, parse_broker_url
from firmware.club.simulate import AutoPlayer
from firmware.config import Config
from firmware.journal import Store

pytestmark = needs_mosquitto


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.05)


def test_an_assignment_starts_the_round_and_every_line_arrives(
        tmp_path: Path, mosquitto: Mosquitto, director_on: Callable[[str, str], Director]
) -> None:
    director = director_on(mosquitto.url, "boxtest")
    table = Table(tmp_path / "box", mosquitto.url, 1, "boxtest")
    try:
        wait_for(lambda: table.box.connected, "the box connects")
        assignment = director.start_round(RoundFormat(hands=2))
        seats = assignment.tables[1]
        wait_for(lambda: table.call(lambda r: r.game.names == seats), "the round's game")
        assert table.call(lambda r: r.game.rules.target) == 99
        assert table.call(lambda r: r.notice)[0] == "Round 1: table 1"
        for line in ["game dealer=N", "make E H", "trick E", "trick E", "trick E",
                     "trick N", "undo", "trick W"]:
            assert table.call(lambda r, line=line: r.enter(parse(line)) if line != "undo"
                              else r.undo()) is None
        kept = table.call(lambda r: r.store.lines(r.game_id))
        assert len(kept) == 2 + 8
        wait_for(lambda: replayed(director, 1, 1, kept), "every line at the director, replayed")
        game = director.game_of(1, 1)
        assert game is not None and game.hands_played == 0 and game.hand.tricks_of(Team.EW) == 4
        wait_for(lambda: table.box.state.acked.get(table.referee.game_id) == 9, "the ack")
        board = director.board()
        assert board["tables"][0]["online"] and board["tables"][0]["hand"] == 1
        for seat in SEATS:
            assert board["tables"][0]["players"][str(seat)] == seats[seat]
        director.start_round(RoundFormat(hands=2), force=True)  # where each goes next
        second = director.rounds[2].tables[1]
        wait_for(lambda: table.call(lambda r: r.game.names) == second, "round 2's game")
        title, lines = table.call(lambda r: r.notice)
        assert title == "Round 1 ended early"  # forced: hand 1 was in play
        assert lines == ("round 1, table 1: ended by the director; no hand was completed "
                         "(NS 0, EW 0), hand 1 is void", *(
                             f"{seats[seat]}: table 1 {seat_of(second, seats[seat])}"
                             for seat in SEATS))
    finally:
        table.close()
    wait_for(lambda: not director.board()["tables"][0]["online"], "offline after leaving")


def seat_of(seats: dict[Any, str], name: str) -> str:
    return next(str(seat) for seat, who in seats.items() if who == name)


def parse(line: str) -> Any:
    from euchre_core import parse_event

    return parse_event(line)


def test_an_outage_is_caught_up_from_the_journal(
        tmp_path: Path, director_on: Callable[[str, str], Director]) -> None:
    broker = Mosquitto(tmp_path / "broker")
    director = director_on(broker.url, "outage")
    table = Table(tmp_path / "box", broker.url, 1, "outage")
    try:
        wait_for(lambda: table.box.connected, "the box connects")
        director.start_round(RoundFormat(hands=3))
        wait_for(lambda: table.box.state.rounds, "the round starts")
        player = AutoPlayer(table.box, table.events, seed=7, pace=0.01)
        broker.stop()  # the table plays on without a broker, never waiting
        for _ in range(40):
            table.call(player.play_one)
        kept = table.call(lambda r: r.store.lines(r.game_id))
        assert len(kept) > 15 and table.call(lambda r: r.game.hands_played) == 3
        title, lines = table.call(lambda r: r.notice)
        assert title == "Round 1 over" and lines[0].startswith("NS ")
        broker.start()
        wait_for(lambda: replayed(director, 1, 1, kept), "caught up", timeout=60)
    finally:
        table.close()
        broker.stop()


def test_run_and_emulate_join_with_flags_or_config(tmp_path: Path) -> None:
    from firmware.cli import build_parser
    from firmware.club import join_config
    from firmware.club.box import join
    from firmware.config import parse_config

    args = build_parser().parse_args(["emulate", "--club", "mqtt://hall:1884", "--table", "3"])
    config = join_config(Config(), args)
    assert (config.club_broker, config.club_table, config.club_event) == (
        "mqtt://hall:1884", 3, "club")
    pi_args = build_parser().parse_args(["run", "--config", "x.toml", "--club", "hall"])
    from_file = parse_config({"club": {"broker": "mqtt://laptop", "table": 5, "event": "fri"}})
    assert join_config(from_file, pi_args).club_broker == "hall"
    assert (from_file.club_table, from_file.club_event) == (5, "fri")
    said: list[str] = []
    store = Store(tmp_path)
    referee = Referee(join_config(Config(state_dir=tmp_path), pi_args), store,
                      renderer=lambda view: view)
    assert join(referee, queue.Queue(), say=said.append) is None
    assert said == ["club: --table N (1 or more) is needed with --club; not joining"]
    store.close()


def test_emulate_with_club_joins_the_broker(tmp_path: Path, mosquitto: Mosquitto) -> None:
    import subprocess
    import sys

    from firmware.club.protocol import Status, status_topic

    statuses: queue.Queue[Status] = queue.Queue()
    watcher = open_client(parse_broker_url(mosquitto.url), "emulate-watcher",
                          on_message=lambda t, p: statuses.put(Status.decode(p)),
                          subscriptions=[status_topic("emu", 7)])
    process = subprocess.Popen(
        [sys.executable, "-m", "firmware", "emulate", "--state-dir", str(tmp_path),
         "--club", mosquitto.url, "--table", "7", "--club-event", "emu"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        status = statuses.get(timeout=60)
        assert (status.table, status.online) == (7, True)
        assert process.stdin is not None
        process.stdin.write(b"q")
        process.stdin.close()
        assert process.wait(30) == 0
        status = statuses.get(timeout=30)
        assert (status.table, status.online) == (7, False)  # it said goodbye
    finally:
        if process.poll() is None:
            process.kill()
        close_client(watcher)
