"""The organiser's control of a round (firmware/club/control.py): a round
refused while tables play and forced by the written rule, a spare box taking a
table over mid-round, timed rounds.  The director alone, a real referee on a
real mosquitto, and whole nights of real processes (`club serve`, `club box`)."""

from __future__ import annotations

import json
import queue
import re
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from support.broker import Mosquitto, needs_mosquitto
from support.club_kit import replayed
from support.club_room import round_lines
from support.club_table import Table

from euchre_core import SEATS, Team, replay
from firmware.club.control import FORCED_RULE, ahead
from firmware.club.director import Director, DirectorError
from firmware.club.mqtt import close_client, open_client
from firmware.club.protocol import (
    QOS,
    Assignment,
    EntryMessage,
    RoundFormat,
    entries_topic,
    parse_broker_url,
)
from firmware.club.simulate import Night
from firmware.journal import Store

REFUSAL = re.compile(
    r"round 1 is still being played at table\(s\) 1 \(hand \d+\), 2 \(hand \d+\): wait for "
    r"them, or force the next round \(the hands completed count, the hand in progress is "
    r"void\)")


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.05)


def send(director: Director, assignment: Assignment, table: int, lines: list[str],
         box: str, first: int = 0) -> None:
    for seq in range(first, len(lines)):
        message = EntryMessage(table, box, assignment.round, 1, seq, lines[seq])
        director.receive(entries_topic("club", table), message.encode())


def players_of(director: Director) -> dict[str, tuple[int, int]]:
    return {p["name"]: (p["points"], p["rounds_won"]) for p in director.board()["players"]}


# --- the director alone ------------------------------------------------------------------


def test_a_round_is_refused_naming_the_tables_then_forced_by_the_written_rule(
        tmp_path: Path) -> None:
    director = Director(tmp_path)
    for name in "ABCDEFGH":
        director.register(name)
    first = director.start_round(RoundFormat(hands=4))
    table1 = round_lines(first, 1, hands=1, extra=2, seed=4)  # hand 2 in play
    send(director, first, 1, table1, "box1")
    with pytest.raises(DirectorError) as refused:
        director.start_round(RoundFormat(hands=1))
    assert str(refused.value) == (
        "round 1 is still being played at table(s) 1 (hand 2), 2 (not started): wait for "
        f"them, or force the next round ({FORCED_RULE})")
    assert director.current_round == 1 and director.board()["notes"] == []  # nothing changed

    director.start_round(RoundFormat(hands=1), force=True)
    game = replay("\n".join(["euchre-log 1", *table1])).game
    hand1 = game.results[0]
    score = {team: hand1.points if hand1.team is team else 0 for team in Team}
    done = director.tables[(1, 1)]
    assert done.done and done.score == score and len(done.counted) == 1
    notes = [
        "round 1, table 1: ended by the director; hand 1 counts "
        f"(NS {score[Team.NS]}, EW {score[Team.EW]}), hand 2 is void",
        "round 1, table 2: ended by the director; no hand was completed (NS 0, EW 0)"]
    assert sorted(director.board()["notes"]) == notes
    seats = first.tables[1]
    standings = players_of(director)
    for seat in SEATS:  # the completed hand counts, the round is won by the side ahead
        won = int(score[seat.team] > score[seat.team.other])
        assert standings[seats[seat]] == (score[seat.team], won)
    board = director.board()
    director.close()
    again = Director(tmp_path)  # the forced ends are records: they survive a restart
    assert sorted(again.board()["notes"]) == notes
    assert again.board()["players"] == board["players"]


def test_a_timed_round_ends_once_the_hand_in_play_is_finished(tmp_path: Path) -> None:
    now = [1000.0]
    director = Director(tmp_path, clock=lambda: now[0])
    for name in "ABCD":
        director.register(name)
    assignment = director.start_round(RoundFormat(hands=8, minutes=1))
    assert assignment.ends == 1060.0 and assignment.format.describe() == "8 hands or 1 minute"
    clock = director.board()["clock"]
    assert clock == {"round": 1, "ends": 1060.0, "remaining": 60.0, "words": "1:00 left"}
    lines = round_lines(assignment, 1, hands=2, extra=0, seed=8)
    in_play = round_lines(assignment, 1, hands=2, extra=3, seed=8)  # hand 3 begun
    send(director, assignment, 1, in_play[:-3], "box1")
    send(director, assignment, 1, in_play, "box1", first=len(in_play) - 3)
    now[0] = 1061.0  # time is called with hand 3 in play: it is finished
    board = director.board()
    assert board["clock"]["words"] == "time called" and not board["tables"][0]["done"]
    with pytest.raises(DirectorError, match=r"table\(s\) 1 \(hand 3\)"):
        director.start_round(RoundFormat(hands=1))
    full = round_lines(assignment, 1, hands=3, extra=0, seed=8)
    assert full[:len(in_play)] == in_play and lines == full[:len(lines)]
    send(director, assignment, 1, full, "box1", first=len(in_play))
    table = director.tables[(1, 1)]
    assert table.done and len(table.counted) == 3  # no new hand after it: the round is over
    director.start_round(RoundFormat(hands=1))  # not refused


def test_a_spare_is_handed_the_journal_and_the_old_box_refused(tmp_path: Path) -> None:
    from firmware.club.protocol import Handover, Status, Takeover, status_topic, takeover_topic

    sent: list[tuple[str, bytes, bool]] = []
    director = Director(tmp_path, publish=lambda *message: sent.append(message))
    for name in "ABCD":
        director.register(name)
    first = director.start_round(RoundFormat(hands=2))
    lines = round_lines(first, 1, hands=2, extra=0, seed=5)
    send(director, first, 1, lines[:7], "boxA")
    director.receive(status_topic("club", 1), Status(1, "boxA", online=False).encode())

    def ask(box: str) -> Handover:
        sent.clear()
        director.receive(takeover_topic("club", 1), Takeover(1, box).encode())
        (topic, payload, retain), = [m for m in sent if m[0].endswith("/handover")]
        assert topic == "euchre/club/table/1/handover" and retain
        return Handover.decode(payload)

    assert ask("boxB") == Handover(1, 1, "boxB", "boxA", tuple(lines[:7]))
    assert ask("boxB") == Handover(1, 1, "boxB", "boxA", tuple(lines[:7]))  # asked again
    for _ in range(2):
        send(director, first, 1, lines[:8], "boxA", first=7)  # the old box comes back
    refused = "box boxA was replaced at table 1 by spare box boxB in round 1: its lines are refused"
    assert [p.partition(" ")[2] for p in director.problems].count(
        "euchre/club/table/1/entries: refused: " + refused) == 1  # said once
    director.receive(status_topic("club", 1), Status(1, "boxB", online=True).encode())
    director.receive(status_topic("club", 1), Status(1, "boxA", online=False).encode())
    assert director.board()["tables"][0]["online"]  # the old box's word does not count
    for seq, line in enumerate(lines):  # the spare's game: the journal it got, then on
        director.receive(entries_topic("club", 1),
                         EntryMessage(1, "boxB", 1, 9, seq, line).encode())
    table = director.tables[(1, 1)]
    assert (table.box, table.game, table.lines, table.done) == ("boxB", 9, lines, True)
    assert director.table_logs()[(1, 1)] == "\n".join(["euchre-log 1", *lines]) + "\n"
    second = director.start_round(RoundFormat(hands=1))
    send(director, second, 1, round_lines(second, 1, hands=0, extra=2, seed=6), "boxB")
    assert ask("boxB") == Handover(1, 2, "boxB", None, ())  # its own table: nothing handed


def test_a_game_to_a_target_with_a_clock_is_won_by_the_side_ahead_at_time(
        tmp_path: Path) -> None:
    now = [500.0]
    director = Director(tmp_path, clock=lambda: now[0])
    for name in "ABCD":
        director.register(name)
    assignment = director.start_round(RoundFormat(hands=None, target=10, minutes=20))
    assert assignment.format.describe() == "a game to 10 or 20 minutes"
    assert Assignment.decode(assignment.encode()) == assignment  # the wire keeps it all
    lines = round_lines(assignment, 1, hands=3, extra=0, seed=2)
    send(director, assignment, 1, lines, "box1")
    table = director.tables[(1, 1)]
    assert not table.done and director.board()["clock"]["words"] == "20:00 left"
    now[0] += 20 * 60  # time: no hand in play, so the game ends here
    assert director.board()["tables"][0]["done"] and table.winner is ahead(table.score)
    assert len(table.counted) == 3


# --- a real referee on a real broker -----------------------------------------------------


@needs_mosquitto
def test_the_box_finishes_the_hand_in_play_and_refuses_a_new_one_after_time(
        tmp_path: Path, mosquitto: Mosquitto, director_on: Callable[[str, str], Director]
) -> None:
    director = director_on(mosquitto.url, "timed")
    table = Table(tmp_path / "box", mosquitto.url, 1, "timed")
    try:
        wait_for(lambda: table.box.connected, "the box connects")
        assignment = director.start_round(RoundFormat(hands=8, minutes=0.02))
        assert assignment.ends is not None
        wait_for(lambda: 1 in table.box.state.rounds.values(), "the round's game")
        for line in ["game dealer=N", "make E H", "trick E"]:  # hand 1 in play
            assert table.enter(line) is None
        ends = assignment.ends
        wait_for(lambda: time.time() >= ends, "the round's time")
        director.tick()  # as `club serve` does every few seconds: the clock, time called
        wait_for(lambda: table.box.time_called(1), "time called on the box")
        title, lines = table.call(lambda r: r.notice)
        assert title == "Round 1: time" and lines[-1] == "Time: finish this hand."
        for line in ["trick E", "trick E", "trick N", "trick W"]:  # the hand is finished
            assert table.enter(line) is None
        kept = table.call(lambda r: r.store.lines(r.game_id))
        wait_for(lambda: table.call(lambda r: r.notice)[0] == "Round 1 over", "the round's end")
        assert table.call(lambda r: r.notice)[1][1:] == (
            "Time was called.", "Wait for the director's next round.")
        assert table.enter("make S C") == "time was called in round 1: no new hand starts"
        assert table.call(lambda r: r.store.lines(r.game_id)) == kept  # nothing changed
        wait_for(lambda: replayed(director, 1, 1, kept), "every line at the director, replayed")
        assert director.tables[(1, 1)].done and len(director.tables[(1, 1)].counted) == 1
        assert director.board()["clock"]["words"] == "time called"
    finally:
        table.close()


@needs_mosquitto
def test_the_replaced_box_is_told_on_its_screen_and_refuses_entries(
        tmp_path: Path, mosquitto: Mosquitto, director_on: Callable[[str, str], Director]
) -> None:
    from firmware.club.protocol import Takeover, takeover_topic

    director = director_on(mosquitto.url, "replaced")
    table = Table(tmp_path / "box", mosquitto.url, 1, "replaced")
    spare = open_client(parse_broker_url(mosquitto.url), "a-spare", on_message=lambda t, p: None,
                        subscriptions=[])
    try:
        wait_for(lambda: table.box.connected, "the box connects")
        director.start_round(RoundFormat(hands=2))
        wait_for(lambda: 1 in table.box.state.rounds.values(), "the round's game")
        for line in ["game dealer=N", "make E H"]:
            assert table.enter(line) is None
        wait_for(lambda: len(director.tables[(1, 1)].lines) == 4, "the lines at the director")
        spare.publish(takeover_topic("replaced", 1), Takeover(1, "sparebox").encode(), qos=QOS)
        wait_for(lambda: table.box.replaced == "sparebox", "the handover seen by the old box")
        assert table.call(lambda r: r.notice) == ("Table 1: replaced", (
            "Spare box sparebox plays this table since round 1.",
            "This box is refused: take it to the director."))
        kept = table.call(lambda r: r.store.lines(r.game_id))
        assert table.enter("trick E") == (
            "this box was replaced by spare box sparebox: see the director")
        assert table.call(lambda r: r.store.lines(r.game_id)) == kept  # nothing changed
        assert director.tables[(1, 1)].box == "sparebox"
    finally:
        close_client(spare)
        table.close()


# --- whole nights: real director and box processes ------------------------------------


def journal_standings(games: list[tuple[Path, dict[int, int]]]
                      ) -> dict[str, tuple[int, int, int]]:
    """Points, rounds won and rounds level per player from the boxes' own
    journals: ``(state dir, {game id: hands the round counts})``; each game
    exported as a clean log and replayed, its completed hands up to that count."""
    points: Counter[str] = Counter()
    won: Counter[str] = Counter()
    level: Counter[str] = Counter()
    for box_dir, counts in games:
        store = Store(box_dir, readonly=True)
        try:
            for game_id, hands in counts.items():
                result = replay(store.export(game_id))
                assert result.error is None
                counted = result.game.results[:hands]
                score = {team: sum(r.points for r in counted if r.team is team) for team in Team}
                for seat in SEATS:
                    name = result.game.names[seat]
                    points[name] += score[seat.team]
                    won[name] += score[seat.team] > score[seat.team.other]
                    level[name] += score[seat.team] == score[seat.team.other]
        finally:
            store.close()
    return {name: (points[name], won[name], level[name]) for name in points}


def assert_standings_equal(night: Night, journals: dict[str, tuple[int, int, int]]) -> None:
    """The director's points equal the journals'; its rounds won too, a level
    round counted won or not (the tied-round rule decides, standings.py)."""
    director = {p["name"]: (p["points"], p["rounds_won"]) for p in night.board()["players"]}
    for name, (points, won, level) in journals.items():
        assert director[name][0] == points, name
        assert won <= director[name][1] <= won + level, name
    assert all(value == (0, 0) for name, value in director.items() if name not in journals)
    assert sum(points for points, _ in director.values()) > 0


def round_games(box_dir: Path) -> dict[int, int]:
    """The box's round -> game id, from its club.json."""
    rounds = json.loads((box_dir / "club.json").read_text())["rounds"]
    return {number: int(game) for game, number in rounds.items()}


def club(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "firmware", "club", *arguments],
                          capture_output=True, text=True, timeout=60)


@needs_mosquitto
@pytest.mark.timeout(300)
def test_a_round_started_while_tables_play_is_refused_then_forced(
        tmp_path: Path, mosquitto: Mosquitto) -> None:
    night = Night(mosquitto.url, tmp_path, tables=2, event="forced", pace=0.5).start()
    try:
        night.register(8)
        night.start_round(hands=8)
        night.wait(lambda: all(t["hand"] >= 2 for t in night.board()["tables"]), 120,
                   "both tables in hand 2")
        organiser = ["--director", night.url, "--state-dir", str(tmp_path / "director")]
        refused = club("round", *organiser, "--hands", "1")
        assert refused.returncode != 0
        assert refused.stderr.count("\n") == 1 and refused.stderr.startswith("euchre-referee: ")
        assert REFUSAL.fullmatch(refused.stderr[len("euchre-referee: "):].strip())
        with pytest.raises(ValueError) as by_http:
            night.post("/rounds", {"hands": 1})
        assert REFUSAL.fullmatch(str(by_http.value))
        assert night.board()["round"] == 1  # nothing changed
        forced = club("round", *organiser, "--hands", "1", "--force")
        assert forced.returncode == 0, forced.stderr
        night.wait(lambda: night.round_done(2), 120, "round 2")
        notes = night.board()["notes"]
        for table in (1, 2):  # the page and the box say the same of each game
            said = [n for n in notes if n.startswith(f"round 1, table {table}: ended by")]
            assert len(said) == 1 and said[0] in (tmp_path / f"box-{table}.log").read_text()
            assert re.fullmatch(r"round 1, table \d: ended by the director; hands? 1(-\d)? "
                                r"counts? \(NS \d+, EW \d+\)(, hand \d is void)?", said[0])
        assert_standings_equal(night, journal_standings([
            (night.box_dir(t), {game: (8 if number == 1 else 1)
                                for number, game in round_games(night.box_dir(t)).items()})
            for t in (1, 2)]))
    finally:
        night.stop()


@needs_mosquitto
@pytest.mark.timeout(300)
def test_a_spare_box_takes_a_table_over_and_the_old_box_is_refused(
        tmp_path: Path, mosquitto: Mosquitto) -> None:
    night = Night(mosquitto.url, tmp_path, tables=1, event="spare", pace=0.1).start()
    spare_dir = tmp_path / "spare-1"
    try:
        night.register(4)
        night.start_round(hands=4)
        night.wait(lambda: night.board()["tables"][0]["hand"] >= 2, 120, "hand 2 in play")
        night.kill_box(1)  # the box dies mid-round
        night.start_box(1, spare=True)
        spare = night.boxes[1]
        night.wait(lambda: night.round_done(1), 120, "round 1 on the spare")
        notes = night.board()["notes"]
        took = [re.fullmatch(r"round 1, table 1: spare box \w+ took over from box \w+ "
                             r"after (\d+) lines", n) for n in notes]
        assert len([m for m in took if m]) == 1, notes
        handed = int(next(m for m in took if m).group(1))
        spare_game = round_games(spare_dir)[1]
        store = Store(spare_dir, readonly=True)
        try:
            spare_lines = store.lines(spare_game)
            journal = store.journal_text(spare_game)
        finally:
            store.close()
        with urllib.request.urlopen(f"{night.url}/logs/1/1", timeout=10) as answer:
            assert answer.read().decode() == journal  # the director holds the spare's journal
        old_store = Store(night.box_dir(1), readonly=True)
        try:
            old_lines = old_store.lines(round_games(night.box_dir(1))[1])
        finally:
            old_store.close()
        assert handed > 2 and spare_lines[:handed] == old_lines[:handed]
        assert len(spare_lines) > handed  # the spare went on from there
        # the old box comes back: told on its screen (its log says the same) and refused
        night.start_box(1)
        night.boxes[-1], night.boxes[1] = night.boxes[1], spare  # stop() ends both
        night.wait(lambda: "replaced at table 1 by spare box" in (
            tmp_path / "box-1.log").read_text(), 60, "the old box told")
        night.start_round(hands=1)  # round 2 is the spare's
        night.wait(lambda: night.round_done(2), 120, "round 2")
        board = night.board()
        assert board["tables"][0]["online"] and board["tables"][0]["state"] == "done"
        assert 2 in round_games(spare_dir) and 2 not in round_games(night.box_dir(1))
        assert_standings_equal(night, journal_standings([
            (spare_dir, {game: 4 if number == 1 else 1
                         for number, game in round_games(spare_dir).items()})]))
    finally:
        night.stop()


@needs_mosquitto
@pytest.mark.timeout(300)
def test_a_timed_round_ends_by_time_on_real_processes(tmp_path: Path,
                                                      mosquitto: Mosquitto) -> None:
    night = Night(mosquitto.url, tmp_path, tables=1, event="clock", pace=0.1).start()
    try:
        night.register(4)
        started = club("round", "--director", night.url, "--state-dir",
                       str(tmp_path / "director"), "--hands", "24", "--minutes", "0.1")
        assert started.returncode == 0, started.stderr
        assert re.search(r"^  time is called at \d\d:\d\d:\d\d \(0\.1 minutes\)$",
                         started.stdout, re.M), started.stdout
        assert night.board()["format"] == "24 hands or 0.1 minutes"
        night.wait(lambda: night.round_done(1), 120, "the round ends by time")
        assert night.board()["clock"]["words"] == "time called"
        game_id = round_games(night.box_dir(1))[1]
        store = Store(night.box_dir(1), readonly=True)
        try:
            game = store.load(game_id)
        finally:
            store.close()
        assert 0 < game.hands_played < 24  # ended by time, not by the count
        assert game.dealer is None or len(game.entries) == game.hand.start  # no hand begun
        assert_standings_equal(night, journal_standings([(night.box_dir(1), {game_id: 24})]))
    finally:
        night.stop()


def holders_journals(night: Night, spares: dict[int, int]) -> dict[tuple[int, int], tuple[Path,
                                                                                         int]]:
    """(round, table) -> (state dir, game id) of the box that holds the table's
    journal: the table's own box, or from round ``spares[table]`` on its spare."""
    held: dict[tuple[int, int], tuple[Path, int]] = {}
    for table in range(1, night.tables + 1):
        for number, game in round_games(night.box_dir(table)).items():
            if table not in spares or number < spares[table]:
                held[(number, table)] = (night.box_dir(table), game)
        if table in spares:
            spare_dir = night.workdir / f"spare-{table}"
            for number, game in round_games(spare_dir).items():
                held[(number, table)] = (spare_dir, game)
    return held


@needs_mosquitto
@pytest.mark.timeout(300)  # 16 box processes; about 30 s here
def test_a_night_of_16_tables_with_a_spare_a_forced_round_a_correction_and_a_withdrawal(
        tmp_path: Path, mosquitto: Mosquitto) -> None:
    """16 tables x 8 rounds, 64 players (one hand a round; round 3 of 3 hands,
    round 5 of 8 cut short by a forced start), table 5's box killed in round 3
    and a spare taking over, round 2 table 3's result corrected by the
    organiser, a player withdrawn after round 6: the director holds exactly
    each table's journal as the box holding it kept it, and the standings
    equal what those journals and the correction record give."""
    night = Night(mosquitto.url, tmp_path, tables=16, event="night16", pace=0.05,
                  resend_s=2.0).start()
    hands = {number: {3: 3, 5: 8}.get(number, 1) for number in range(1, 9)}
    try:
        names = night.register(64)
        for number in range(1, 9):
            if number == 5:  # round 2's result at table 3 corrected from a score sheet
                night.post("/corrections", {"kind": "result", "round": 2, "table": 3,
                                            "ns": 7, "ew": 1, "by": "Kim",
                                            "reason": "the score sheet says 7-1"})
            if number == 7:
                night.post("/corrections", {"kind": "withdraw", "player": names[16],
                                            "by": "Kim", "reason": "went home"})
            forced = number == 6
            assignment = night.post("/rounds", {"hands": hands[number],
                                                **({"force": True} if forced else {})})
            if number >= 7:
                assert len(assignment["tables"]) == 15 and names[16] not in (
                    name for t in assignment["tables"] for name in t["players"].values())
            if number == 3:  # table 5's box dies mid-hand; a spare takes the table over
                night.wait(lambda: night.board()["tables"][4]["entries"] >= 4, 60,
                           "table 5 in play")
                night.kill_box(5)
                store = Store(night.box_dir(5), readonly=True)
                try:  # killed mid-round: the spare takes over round 3
                    assert store.load(round_games(night.box_dir(5))[3]).hands_played < 3
                finally:
                    store.close()
                night.start_box(5, spare=True)
            if number == 5:  # the next round is forced while tables play
                night.wait(lambda: any(t["hand"] >= 2 for t in night.board()["tables"]), 60,
                           "round 5 under way")
                assert not night.round_done(5)
                continue
            night.wait(lambda n=number: night.round_done(n), 120, f"round {number}")
        notes = night.board()["notes"]
        assert any(n.startswith("round 5, table ") and "ended by the director" in n
                   for n in notes), notes
        assert any(n.startswith("round 3, table 5: spare box ") for n in notes), notes
        held = holders_journals(night, {5: 3})
        assert len(held) == 16 * 6 + 15 * 2
        games: dict[Path, dict[int, int]] = {}
        for (number, table), (box_dir, game) in sorted(held.items()):
            store = Store(box_dir, readonly=True)
            try:
                expected = store.journal_text(game)
                if (number, table) == (2, 3):
                    corrected = replay(store.export(game)).game.names
            finally:
                store.close()
            with urllib.request.urlopen(f"{night.url}/logs/{number}/{table}",
                                        timeout=10) as answer:
                assert answer.read().decode() == expected, (number, table)
            if (number, table) != (2, 3):
                games.setdefault(box_dir, {})[game] = hands[number]
        journals = journal_standings(sorted(games.items()))
        for seat in SEATS:  # the correction record: 7-1 for NS at round 2, table 3
            points, won, level = journals.get(corrected[seat], (0, 0, 0))
            ns = seat.team is Team.NS
            journals[corrected[seat]] = (points + (7 if ns else 1), won + ns, level)
        assert_standings_equal(night, journals)
    finally:
        night.stop()


@needs_mosquitto
def test_an_emulated_box_started_with_take_over_asks_for_its_table(
        tmp_path: Path, mosquitto: Mosquitto) -> None:
    """``emulate``/``run --club URL --table N --take-over``: the box asks the
    director for table N (the director's answer is the spare tests' above)."""
    from firmware.club.protocol import Takeover, takeover_topic

    asked: queue.Queue[Takeover] = queue.Queue()
    watcher = open_client(parse_broker_url(mosquitto.url), "takeover-watcher",
                          on_message=lambda t, p: asked.put(Takeover.decode(p)),
                          subscriptions=[takeover_topic("emu-spare", 7)])
    process = subprocess.Popen(
        [sys.executable, "-m", "firmware", "emulate", "--state-dir", str(tmp_path),
         "--club", mosquitto.url, "--table", "7", "--club-event", "emu-spare", "--take-over"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        request = asked.get(timeout=60)
        assert request.table == 7
        assert process.stdin is not None
        process.stdin.write(b"q")
        process.stdin.close()
        assert process.wait(30) == 0
        club = json.loads((tmp_path / "club.json").read_text())
        assert club["box"] == request.box  # the box that asked is this one
    finally:
        if process.poll() is None:
            process.kill()
        close_client(watcher)
