"""A round's result accepted (or disputed) at the table by the other side
(firmware/round_end.py): a real `club serve` and mosquitto, and an emulated
box (`euchre-referee emulate --club ...`) in a pseudo-terminal, its keys the
buttons; one test per path: accepted, disputed (then settled with `club
correct result`), and a box SIGKILLed while it asks (it asks again at its
start).  Off a club night, `[table] confirm_result` asks the same at a game's
end (a Referee in-process)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pexpect
import pytest
from support.broker import Mosquitto, needs_mosquitto

from euchre_core import Rules, Team, parse_event
from firmware.app import Referee
from firmware.buttons import CONFIRM_GUARD_S
from firmware.club.simulate import Night
from firmware.config import Config, parse_config
from firmware.journal import Store
from firmware.round_end import house_round_end, verdict_line, verdict_of

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "EW: do you accept?"
# One hand: N deals, S makes hearts, NS take four tricks -- NS 1, EW 0: EW accepts.
HAND_KEYS = [("n", "Who made trump?"), ("s", "Which trump?"), ("H", "Is that the call?"),
             ("\r", "Trick 1: who won?"), ("s", "Trick 2: who won?"),
             ("s", "Trick 3: who won?"), ("n", "Trick 4: who won?"),
             ("s", "Trick 5: who won?")]


def emulated_box(state_dir: Path, night: Night) -> pexpect.spawn:
    env = dict(os.environ, TERM="xterm", LANG="C.UTF-8", LC_ALL="C.UTF-8",
               PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return pexpect.spawn(sys.executable, [
        "-m", "firmware", "emulate", "--state-dir", str(state_dir), "--club", night.broker,
        "--table", "1", "--club-event", night.event], cwd=str(ROOT), env=env,
        dimensions=(40, 200), timeout=60, encoding="utf-8")


@pytest.fixture
def night(tmp_path: Path, mosquitto: Mosquitto, request: pytest.FixtureRequest
          ) -> Iterator[Night]:
    """A real director (`club serve`) with four players and round 1 (one hand) started."""
    night = Night(mosquitto.url, tmp_path, tables=0, event=request.node.name[5:25]).start()
    try:
        night.register(4)
        night.start_round(hands=1)
        yield night
    finally:
        night.stop()


def play_the_round(box: pexpect.spawn) -> None:
    box.expect_exact("Round 1: table 1")
    # The round's notice (the seats and the format: two screens), a press a screen.
    while box.expect_exact(["any button: page", "any button: back"]) == 0:
        box.send("n")
    box.send("n")
    box.expect_exact("first dealer")
    for key, shown in HAND_KEYS:
        box.send(key)
        box.expect_exact(shown)
    box.send("e")  # trick 5: the round's last entry
    box.expect_exact(QUESTION)
    box.expect_exact("E or W: accept")


@contextmanager
def box_asking(state_dir: Path, night: Night) -> Iterator[pexpect.spawn]:
    """An emulated box with round 1 played, asking EW; closed (forced) at the end."""
    box = emulated_box(state_dir, night)
    try:
        play_the_round(box)
        yield box
    finally:
        box.close(force=True)


def box_lines(state_dir: Path) -> list[str]:
    store = Store(state_dir, readonly=True)
    try:
        latest = store.latest()
        assert latest is not None
        return store.lines(latest)
    finally:
        store.close()


def table_one(night: Night) -> dict[str, object]:
    table: dict[str, object] = night.board()["tables"][0]
    return table


def director_log(night: Night) -> list[str]:
    import urllib.request

    with urllib.request.urlopen(f"{night.url}/logs/1/1", timeout=10) as answer:
        return answer.read().decode().splitlines()


def quit_box(box: pexpect.spawn) -> None:
    box.send("q")
    box.expect(pexpect.EOF)
    box.close()


@needs_mosquitto
@pytest.mark.timeout(180)
def test_the_other_side_accepts_and_the_round_is_final(tmp_path: Path, night: Night) -> None:
    with box_asking(tmp_path / "box", night) as box:
        box.send("n")  # a seat of the side that won: refused in words, nothing kept
        box.expect_exact("E or W (EW) accepts the result")
        assert not any(line.startswith("# result") for line in box_lines(tmp_path / "box"))
        box.send("w")
        box.expect_exact("EW accepted: final.")
        assert box_lines(tmp_path / "box")[-1] == verdict_line("accepted", Team.EW)
        night.wait(lambda: table_one(night)["verdict"] is not None, 60, "the verdict")
        verdict = table_one(night)["verdict"]
        assert isinstance(verdict, dict)
        assert (verdict["verdict"], verdict["by"]) == ("accepted", "EW")
        assert director_log(night)[-1] == "# result accepted by EW"
        assert night.board()["disputes"] == []
        quit_box(box)


@needs_mosquitto
@pytest.mark.timeout(180)
def test_a_disputed_result_is_flagged_then_settled_by_a_correction(
        tmp_path: Path, night: Night) -> None:
    with box_asking(tmp_path / "box", night) as box:
        box.send("\r")
        box.expect_exact("OK again: EW disputes")
        time.sleep(CONFIRM_GUARD_S)  # the pause the rule asks for: a double tap never confirms
        box.send("\r")
        box.expect_exact("the director decides.")
        assert box_lines(tmp_path / "box")[-1] == "# result disputed by EW"
        night.wait(lambda: night.board()["disputes"], 60, "the dispute on the page")
        (dispute,) = night.board()["disputes"]
        assert dispute["what"] == ("round 1, table 1: NS 1 EW 0 disputed by EW at the table; "
                                   "the organiser decides (club correct result)")
        assert dispute["corrected"] is None and dispute["score"] == {"NS": 1, "EW": 0}
        assert table_one(night)["verdict"]["verdict"] == "disputed"  # type: ignore[index]
        fixed = subprocess.run(
            [sys.executable, "-m", "firmware", "club", "correct", "result", "--director",
             night.url, "--state-dir", str(tmp_path / "director"), "--round", "1",
             "--table", "1", "--ns", "0", "--ew", "2", "--by", "Kim",
             "--reason", "a renege not entered"], capture_output=True, text=True, timeout=60)
        assert fixed.returncode == 0, fixed.stderr
        (dispute,) = night.board()["disputes"]
        assert dispute["corrected"] == 1 and dispute["what"].endswith(
            "disputed by EW at the table; settled by correction 1")
        assert table_one(night)["score"] == {"NS": 0, "EW": 2}
        quit_box(box)


@needs_mosquitto
@pytest.mark.timeout(180)
def test_a_box_killed_while_asking_asks_again_at_its_start(
        tmp_path: Path, night: Night) -> None:
    with box_asking(tmp_path / "box", night) as box:
        box.kill(signal.SIGKILL)  # maybe before its last line reached the broker
    lines = box_lines(tmp_path / "box")
    assert lines[-1] == "trick E" and verdict_of(lines) is None
    box = emulated_box(tmp_path / "box", night)
    try:
        box.expect_exact(QUESTION)  # asked again once the round's assignment is heard
        # every line at the director, sent again from the journal if the kill came
        # first; not answered: nothing final yet
        night.wait(lambda: table_one(night)["done"], 60, "the round at the director")
        assert table_one(night)["verdict"] is None
        box.send("e")
        box.expect_exact("EW accepted: final.")
        assert box_lines(tmp_path / "box") == [*lines, "# result accepted by EW"]
        night.wait(lambda: table_one(night)["verdict"] is not None, 60, "the verdict")
        quit_box(box)
    finally:
        box.close(force=True)


# --- off a club night: [table] confirm_result ------------------------------------------


def test_confirm_result_is_a_table_key() -> None:
    assert parse_config({"table": {"confirm_result": True}}).confirm_result
    assert not parse_config({}).confirm_result


def test_off_a_club_night_the_losers_accept_a_games_end(tmp_path: Path) -> None:
    store = Store(tmp_path)
    referee = Referee(Config(state_dir=tmp_path, confirm_result=True,
                             rules=Rules().replace(target=1)), store, renderer=lambda v: v)
    try:
        assert house_round_end(referee) is not None
        for line in ["game dealer=N", "make N H", "tricks 4"]:
            assert referee.enter(parse_event(line)) is None
        assert referee.notice == ("Game over", ("NS 1  EW 0", "EW: do you accept?",
                                                "E or W: accept", "OK: dispute"))
        referee.press("UNDO")  # the table fixes a slip: the question goes, the hand reopens
        assert referee.notice is None and referee.game.winner is None
        assert referee.enter(parse_event("tricks 5")) is None  # NS march: 2 points
        assert referee.notice is not None and referee.notice[1][0] == "NS 2  EW 0"
        referee.press("E")
        assert store.lines(referee.game_id)[-1] == "# result accepted by EW"
        assert referee.notice == ("Game: accepted", ("NS 2  EW 0", "EW accepted: final."))
    finally:
        store.close()
    again = Store(tmp_path)  # the verdict is in the journal: not asked again
    try:
        resumed = Referee(Config(state_dir=tmp_path, confirm_result=True), again,
                          renderer=lambda v: v)
        house_round_end(resumed)
        assert resumed.notice is None
    finally:
        again.close()


def test_without_the_key_a_games_end_asks_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path)
    try:
        referee = Referee(Config(state_dir=tmp_path), store, renderer=lambda v: v)
        assert house_round_end(referee) is None
    finally:
        store.close()
