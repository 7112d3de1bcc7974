"""The serial protocol end to end: a running referee, pyserial on a real pseudo-terminal.

Every command, exact answer bytes for bad input, a whole game replayed,
exported and replayed again, entries over the link interleaved with button
presses, the live feed, settings for the next game, and the live game left
alone by everything that should not touch it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.app_kit import press
from support.serial_kit import FULL_GAME, TIMEOUT, Device, Host, answer_bytes

from euchre_core import Rules, checksum, replay, write_log
from euchre_core.events import parse_event
from euchre_core.lines import with_checksum
from firmware.config import Config
from firmware.journal import Store
from firmware.link.protocol import MAX_LINE
from firmware.link.service import HELP
from firmware.summary import summary_json, summary_text

FULL_TEXT = FULL_GAME.read_text(encoding="utf-8")

# line 6 is bad: E deals hand 2, so it is South's turn to bid
INVALID = "euchre-log 1\ngame dealer=N\nmake S H\ntricks 4\nupcard 9D\npass N\npass E\n"
INVALID_REASON = "it is South's turn to bid, not Ragnar's"


@pytest.fixture
def device(tmp_path: Path) -> Iterator[Device]:
    dev = Device(tmp_path)
    yield dev
    dev.close()


@pytest.fixture
def host(device: Device) -> Iterator[Host]:
    end = Host(device.path)
    yield end
    end.close()


def send_log(host: Host, text: str, head: str = "replay") -> list[str]:
    """Send a log after ``head`` and end it with '.'; the verdict frame."""
    assert host.ask(head) == ["ok replay: send the log, then '.' (or 'replay end')"]
    host.write(text.encode("utf-8") + b".\r\n")
    return host.answer()


def verdict(frame: list[str]) -> dict[str, object]:
    result: dict[str, object] = json.loads(frame[1])
    return result


# --- line handling: exact bytes -------------------------------------------------------


def test_unknown_command_answer_bytes(host: Host) -> None:
    host.write(b"bogus\r\n")
    assert host.read_bytes(b"\r\n") == answer_bytes("error unknown command 'bogus' (try help)")


def test_bad_checksum_is_refused_and_a_good_one_accepted(device: Device, host: Host) -> None:
    before = device.log()
    host.write(b"enter game dealer=N*0000\r\n")
    expected = checksum("enter game dealer=N")
    assert host.read_bytes(b"\r\n") == answer_bytes(
        f"error checksum mismatch: the line says *0000, its text gives *{expected}")
    assert device.log() == before
    host.write(with_checksum("sync 7").encode() + b"\r\n")
    assert host.read_bytes(b"\r\n") == answer_bytes("ok sync 7")
    host.write(with_checksum("sync 8").lower().encode() + b"\n")  # lower-case hex is fine
    assert host.answer() == ["ok sync 8"]


def test_checksum_hex_is_case_insensitive(host: Host) -> None:
    line = "sync 9*" + checksum("sync 9").lower()
    host.write(line.encode() + b"\n")
    assert host.answer() == ["ok sync 9"]


def test_line_too_long_is_answered_once_and_discarded(device: Device, host: Host) -> None:
    before = device.log()
    host.write(b"enter game dealer=N " + b"x" * MAX_LINE + b" and more\r\n")
    assert host.read_bytes(b"\r\n") == answer_bytes(f"error line too long (max {MAX_LINE} bytes)")
    host.write(b"sync after\r\n")
    assert host.answer() == ["ok sync after"]  # the tail of the long line was discarded
    assert device.log() == before
    exactly = b"sync " + b"y" * (MAX_LINE - 5)
    assert len(exactly) == MAX_LINE
    host.write(exactly + b"\n")
    assert host.answer() == [f"ok sync {'y' * (MAX_LINE - 5)}"]


def test_not_utf8_answer_bytes(host: Host) -> None:
    host.write(b"stat\xffus\r\n")
    assert host.read_bytes(b"\r\n") == answer_bytes("error not UTF-8: byte 5 of the line is 0xFF")


def test_cr_lf_and_crlf_each_end_one_request(host: Host) -> None:
    host.write(b"sync 1\rsync 2\nsync 3\r\nsync 4\n\r")
    assert [host.answer() for _ in range(4)] == [[f"ok sync {n}"] for n in range(1, 5)]
    assert host.before_sync() == b""  # the trailing CR ends an empty line: no request, no answer


def test_blank_lines_comments_and_cancelled_lines_get_no_answer(device: Device,
                                                                 host: Host) -> None:
    before = device.log()
    host.write(b"\r\n\n   \n# a comment\nenter game dealer=N\x03\r\n")
    assert host.before_sync() == b""
    assert device.log() == before


def test_backspace_edits_the_line(host: Host) -> None:
    host.write(b"statx\x7fus json\x08\x08\x08\x08\r\n")
    assert host.answer()[0].startswith("ok begin 16 status")


# --- commands ----------------------------------------------------------------------


def test_help_lists_every_command(host: Host) -> None:
    frame = host.ask("help")
    assert frame == [f"ok begin {len(HELP)} help", *HELP, "ok end"]
    for command in ("help", "status", "enter", "watch", "replay", "export", "games",
                    "players", "rules", "sync"):
        assert any(line.startswith(command + " ") for line in frame), command


def test_status_text_and_json(device: Device, host: Host) -> None:
    for line in ("enter game dealer=N", "enter upcard 9H", "enter order E alone", "enter trick E"):
        assert host.ask(line)[0].startswith("ok ")
    status = json.loads(host.ask("status json")[0][3:])
    assert status == {
        "game_id": 1, "phase": "in game", "score": {"NS": 0, "EW": 0}, "target": 10,
        "hands_played": 0, "hand": 1, "dealer": "N", "leader": "E", "maker": "E",
        "trump": "H", "alone": True, "upcard": "H", "tricks": ["E"], "tricks_ns": 0,
        "tricks_ew": 1, "trick": [], "expected": "who won trick 2?", "expected_kind": "trick",
        "winner": None,
        "names": {"N": "Ragnar", "E": "Sigríður", "S": "South", "W": "Anna"},
    }
    assert host.ask("status") == [
        "ok begin 16 status", "game=1", "phase=in game", "score=NS 0 EW 0", "target=10",
        "hands_played=0", "hand=1", "dealer=N Ragnar", "leader=E Sigríður",
        "maker=E Sigríður", "trump=H", "alone=yes", "tricks=E (NS 0 EW 1)", "trick=-",
        "expected=trick: who won trick 2?", "winner=-",
        "players=N=Ragnar E=Sigríður S=South W=Anna", "ok end",
    ]
    assert host.ask("status please") == ["error status: expected 'status' or 'status json'"]


def test_status_says_a_new_game_is_staged_and_export_keeps_the_finished_one(
        tmp_path: Path) -> None:
    """A new game entered after a win is staged (stored with its first real
    entry): ``status`` says so, who deals and the players, while ``game`` and
    ``export`` stay the finished game's; ``enter undo`` takes the new game back."""
    device = Device(tmp_path, config=Config(state_dir=tmp_path, rules=Rules(target=1)))
    host = Host(device.path)
    try:
        for line in ("game dealer=W", "make N H", "trick N", "trick N", "trick N", "trick E",
                     "trick E"):
            assert host.ask(f"enter {line}")[0].startswith("ok ")
        finished = host.ask("export")
        assert finished[0].startswith("ok begin ") and finished[-2] == "winner NS"
        host.ask("players E=Guðrún")  # the names for the games to come
        assert host.ask("enter game dealer=E")[0].startswith("ok game dealer=E")
        status = json.loads(host.ask("status json")[0][3:])
        assert status["staged"] == {
            "line": "game dealer=E", "dealer": "E", "finished_game_id": 1,
            "names": {"N": "Ragnar", "E": "Guðrún", "S": "South", "W": "Anna"}}
        assert (status["game_id"], status["phase"], status["dealer"], status["hand"]) == (
            1, "in game", "E", 1)  # the live game is the new one; game 1 the stored one
        text = host.ask("status")
        assert text[0] == f"ok begin {len(text) - 2} status" and "game=1" in text
        assert ("staged=a new game, E Guðrún deals, N=Ragnar E=Guðrún S=South W=Anna: stored "
                "with its first entry; till then game 1 is the finished game (export), and "
                "enter undo goes back to it") in text
        assert host.ask("export") == finished  # the finished game, as it was
        assert host.ask("enter undo")[0].startswith("ok Undone: the new game")
        status = json.loads(host.ask("status json")[0][3:])
        assert "staged" not in status and status["winner"] == "NS"
        assert not any(line.startswith("staged=") for line in host.ask("status"))
    finally:
        host.close()
        device.close()


def test_enter_is_durable_when_acknowledged(device: Device, host: Host) -> None:
    assert host.ask("enter game dealer=W") == [
        "ok game dealer=W (next: the call: who made trump, which suit, alone?)"]
    # Read the journal through a second connection to the file: the line is committed.
    other = Store(device.store.state_dir, readonly=True)  # one writer per state dir
    try:
        assert other.lines(device.referee.game_id)[-1] == "game dealer=W"
    finally:
        other.close()


def test_status_json_tells_the_answers_to_the_last_tagged_entries(host: Host) -> None:
    """A program whose answer to ``@TAG enter ...`` was lost (another program
    reading the port took it) finds it in ``status json``: ``enter_answers``,
    the answers to the last 64 tagged entries by tag.  Untagged entries (a
    person's) are not kept there."""
    assert host.ask("@t1 enter game dealer=N")[0].startswith("@t1 ok game dealer=N")
    assert host.ask("@t2 enter trick Q") == ["@t2 error not a seat: 'Q' (use N E S W)"]
    assert host.ask("enter make E H")[0].startswith("ok make E H")
    status = json.loads(host.ask("status json")[0][3:])
    assert status["enter_answers"] == {
        "t1": "ok game dealer=N (next: the call: who made trump, which suit, alone?)",
        "t2": "error not a seat: 'Q' (use N E S W)"}
    for number in range(3, 71):
        assert host.ask(f"@t{number} enter")[0].startswith(f"@t{number} error enter:")
    answers = json.loads(host.ask("status json")[0][3:])["enter_answers"]
    assert list(answers) == [f"t{number}" for number in range(7, 71)]
    assert answers["t70"] == ("error enter: expected 'enter EVENT' (enter trick N, enter make "
                              "E H alone)")


def test_enter_refused_with_the_engine_reason_and_nothing_changes(device: Device,
                                                                  host: Host) -> None:
    host.ask("enter game dealer=N")
    before, journal = device.log(), device.journal()
    reason = device.on_main(lambda referee: referee.game.check(parse_event("trick N")))
    assert reason is not None
    assert host.ask("enter trick N") == [f"error {reason}"]
    assert host.ask("enter trick Q") == ["error not a seat: 'Q' (use N E S W)"]
    assert host.ask("enter florp") == ["error unknown event 'florp'"]
    assert host.ask("enter") == [
        "error enter: expected 'enter EVENT' (enter trick N, enter make E H alone)"]
    assert device.log() == before
    assert device.journal() == journal


def test_enter_undo_and_check_lines(device: Device, host: Host) -> None:
    host.ask("enter game dealer=N")
    host.ask("enter make E H alone")
    assert host.ask("enter undo") == ["ok Undone: Sigríður's call (♥ alone)"]
    assert host.ask("enter undo") == ["ok Undone: the new game (Ragnar to deal)"]
    assert host.ask("enter undo") == ["error nothing to undo: this is the start of the game"]
    assert host.ask("enter score NS=0 EW=0") == ["ok score NS=0 EW=0: checked"]
    assert host.ask("enter score NS=1 EW=0") == [
        "error score check: the score is NS 0, EW 0, not NS 1, EW 0"]
    assert device.journal()[-2:] == ["undo", "undo"]


def test_whole_game_replayed_loaded_exported_and_replayed_identically(device: Device,
                                                                      host: Host) -> None:
    local = replay(FULL_TEXT)
    frame = send_log(host, FULL_TEXT)
    assert frame[0] == f"ok begin {len(frame) - 2} valid"
    assert verdict(frame) == summary_json("-", local)
    assert frame[2:-1] == summary_text("-", local).splitlines()
    assert device.referee.game_id == 1  # replaying does not touch the live game

    frame = send_log(host, FULL_TEXT, "replay load")
    assert frame[-2] == "loaded as game 2: it is now the current game"
    assert device.on_main(lambda referee: referee.game_id) == 2
    status = json.loads(host.ask("status json")[0][3:])
    assert (status["score"], status["winner"], status["game_id"]) == (
        {"NS": 11, "EW": 5}, "NS", 2)

    exported = host.ask("export")
    assert exported[0] == f"ok begin {len(exported) - 2} game 2"
    log = "\n".join(exported[1:-1]) + "\n"
    assert log == write_log(local.game)
    again = send_log(host, log)
    assert verdict(again) == verdict(frame)
    assert again[1:-1] == frame[1:-2]  # the same verdict, less the 'loaded' line


def test_replay_never_touches_the_live_game(device: Device, host: Host) -> None:
    for line in ("enter game dealer=S", "enter make N C", "enter trick N"):
        host.ask(line)
    before, journal = device.log(), device.journal()
    assert verdict(send_log(host, FULL_TEXT))["error"] is None
    bad = send_log(host, INVALID, "replay begin load")
    assert verdict(bad)["error"] == {"line": 6, "reason": INVALID_REASON}
    assert bad[-2] == "not loaded: the log is invalid"
    assert device.log() == before
    assert device.journal() == journal


def test_replay_invalid_names_the_line(host: Host) -> None:
    frame = send_log(host, INVALID)
    assert frame[0] == "ok begin 2 invalid"
    assert verdict(frame) == summary_json("-", replay(INVALID))
    assert frame[2] == f"-:6: {INVALID_REASON}"


def test_replay_with_a_count_and_both_terminators(host: Host) -> None:
    lines = FULL_TEXT.splitlines()
    assert host.ask(f"replay {len(lines)}") == [f"ok replay: send the log's {len(lines)} lines"]
    host.write("".join(line + "\n" for line in lines).encode())
    assert verdict(host.answer())["winner"] == "NS"
    host.ask("replay begin")
    host.write(FULL_TEXT.encode() + b"replay end\r\n")
    assert verdict(host.answer())["winner"] == "NS"
    assert host.ask("replay 0") == ["error replay: 1 to 100000 lines"]
    assert host.ask("replay sideways") == ["error replay: expected 'replay [begin] [load] [LINES]'"]


def test_replay_body_checksums_long_lines_and_bad_bytes(host: Host) -> None:
    good = "".join(with_checksum(line) + "\n" for line in INVALID.splitlines()[:5])
    assert verdict(send_log(host, good))["error"] is None
    frame = send_log(host, "euchre-log 1\ngame dealer=N*0000\n")
    assert verdict(frame)["error"] == {
        "line": 2, "reason": "checksum mismatch: the line says *0000, its text gives *8786"}
    host.ask("replay")
    host.write(b"euchre-log 1\n# " + b"z" * MAX_LINE + b"\ngame dealer=N\n.\n")
    assert verdict(host.answer())["error"] == {
        "line": 2, "reason": f"line too long (max {MAX_LINE} bytes)"}
    host.ask("replay")
    host.write(b"euchre-log 1\ngame dealer=N\nmake N \xc3\n.\n")
    assert verdict(host.answer())["error"] == {
        "line": 3, "reason": "not UTF-8: byte 8 of the line is 0xC3"}
    # an earlier error in the engine wins over a later unreadable line
    host.ask("replay")
    host.write(b"euchre-log 1\nmake N H\n\xff\n.\n")
    assert verdict(host.answer())["error"]["line"] == 2  # type: ignore[index]


def test_ctrl_c_abandons_a_replay(device: Device, host: Host) -> None:
    host.ask("replay load")
    host.write(FULL_TEXT.encode() + b"\x03\r\n")
    assert host.answer() == ["error replay abandoned (Ctrl-C): nothing was checked"]
    assert host.ask("sync x") == ["ok sync x"]
    assert device.on_main(lambda referee: referee.game_id) == 1


def test_games_and_export_by_id(device: Device, host: Host) -> None:
    host.ask("enter game dealer=E")
    send_log(host, FULL_TEXT, "replay load")
    frame = host.ask("games")
    assert frame[0] == "ok begin 2 games"
    assert frame[1].startswith("1 created=") and frame[1].endswith(" lines=2")
    assert frame[2].endswith(" lines=" + str(len(device.journal())) + " current")
    first = host.ask("export 1")
    assert first[1:-1] == ["euchre-log 1", "players N=Ragnar E=Sigríður S=South W=Anna",
                           "game dealer=E"]
    assert host.ask("export 9") == ["error no game 9 (stored games: 1-2)"]
    assert host.ask("export last") == ["error export: expected 'export' or 'export ID' (see games)"]


def test_link_and_buttons_interleaved(device: Device, host: Host) -> None:
    assert host.ask("watch on") == ["ok watching: each entry comes as 'event LINE'"]
    steps: list[tuple[str, str]] = [
        ("button", "N"),                      # game dealer=N
        ("link", "upcard 9H"),
        ("button", "E"), ("button", "HEARTS"), ("button", "OK"),   # order E
        ("link", "trick E"), ("button", "S"), ("link", "trick N"),
        ("button", "UNDO"),                   # undo trick N
        ("link", "trick N"), ("button", "E"), ("link", "undo"), ("link", "trick E"),
        ("button", "S"),
    ]
    for kind, what in steps:
        if kind == "button":
            device.events.put(press(what))
        else:
            answer = host.ask(f"enter {what}")
            assert answer[0].startswith("ok "), (what, answer)
    device.on_main(lambda referee: None)  # every press has been handled
    journal = device.journal()
    assert journal[1:] == [
        "game dealer=N", "upcard 9H", "order E", "trick E", "trick S", "trick N", "undo",
        "trick N", "trick E", "undo", "trick E", "trick S",
    ]
    assert host.feed(len(journal) - 1) == journal[1:]  # the feed is the journal, all inputs
    status = json.loads(host.ask("status json")[0][3:])
    assert status["score"] == {"NS": 2, "EW": 0}  # E took 2 of 5 tricks: euchred
    assert device.log() == write_log(device.store.load(device.referee.game_id))


def test_watch_feed_from_buttons_and_off(device: Device, host: Host) -> None:
    assert host.ask("watch") == ["ok not watching"]
    host.ask("watch on")
    device.events.put(press("W"))
    assert host.line() == "event game dealer=W"
    host.ask("enter make N S")
    assert host.ask("watch off") == ["ok not watching"]
    entries = len(device.journal())
    device.events.put(press("N"))
    device.on_main(lambda referee: None)  # the press is handled: a feed line would be queued
    assert host.before_sync() == b""
    assert len(device.journal()) == entries + 1  # an entry was made, and not sent
    assert host.ask("watch sideways") == ["error watch: expected 'watch on' or 'watch off'"]


def test_event_comes_before_the_ok_of_its_own_entry(host: Host) -> None:
    host.ask("watch on")
    host.write(b"enter game dealer=S\r\n")
    assert host.line() == "event game dealer=S"
    assert host.line().startswith("ok game dealer=S")


def test_players_and_rules_for_the_next_game(device: Device, host: Host) -> None:
    assert host.ask("players") == ["ok next game: players N=Ragnar E=Sigríður S=South W=Anna"]
    assert host.ask('players W="Anna Maria" E=Zoë') == [
        'ok next game: players N=Ragnar E=Zoë S=South W="Anna Maria"']
    assert host.ask("rules target=5 stick-the-dealer=off") == [
        "ok next game: rules target=5 stick-the-dealer=off"]
    assert host.ask("rules") == ["ok next game: rules target=5 stick-the-dealer=off"]
    assert host.ask("rules target=0") == [
        "error target is a whole number from 1 to 99, not '0'"]
    assert host.ask("players X=Bob") == ["error not a seat: 'X' (use N E S W)"]
    # The current game keeps its names; the next stored game takes the new ones.
    assert [str(name) for name in device.on_main(
        lambda referee: referee.game.names).values()] == ["Ragnar", "Sigríður", "South", "Anna"]
    send_log(host, FULL_TEXT, "replay load")     # a won game ...
    assert host.ask("enter game dealer=E")[0].startswith("ok ")  # ... so a new one starts
    assert host.ask("enter make N H")[0].startswith("ok ")  # stored with its first entry
    exported = host.ask("export")[1:-1]
    assert exported == ["euchre-log 1", "rules target=5 stick-the-dealer=off",
                        'players N=Ragnar E=Zoë S=South W="Anna Maria"', "game dealer=E",
                        "make N H"]
    assert host.ask("rules standard") == ["ok next game: rules (standard)"]


def test_sync_and_requests_with_checksums(host: Host) -> None:
    assert host.ask("sync") == ["ok sync"]
    host.write(with_checksum("status json").encode() + b"\n")
    assert host.answer()[0].startswith('ok {"game_id": 1')


def test_busy_main_loop_is_answered_and_nothing_done(tmp_path: Path) -> None:
    dev = Device(tmp_path)
    dev.service.main_timeout = 0.2
    end = Host(dev.path)
    try:
        import threading

        release = threading.Event()
        dev.events.put(lambda referee: release.wait(TIMEOUT))  # the main loop is held up
        try:
            end.write(b"enter game dealer=N\r\n")
            assert end.answer() == [
                "error busy: the referee did not take the request within 0.2 s; nothing was done"]
        finally:
            release.set()
        dev.on_main(lambda referee: None)
        assert dev.journal() == ["players N=Ragnar E=Sigríður S=South W=Anna"]
        assert end.ask("sync ok") == ["ok sync ok"]
    finally:
        end.close()
        dev.close()


def test_players_and_rules_set_over_the_link_outlive_a_restart(tmp_path: Path) -> None:
    first = Device(tmp_path)
    end = Host(first.path)
    try:
        assert end.ask("players W=Zoë") == [
            "ok next game: players N=Ragnar E=Sigríður S=South W=Zoë"]
        assert end.ask("rules target=7") == ["ok next game: rules target=7"]
        # Acknowledged, so already in the journal, read through another connection.
        other = Store(tmp_path, readonly=True)  # one writer per state dir
        try:
            assert other.settings() == {
                "players": "players N=Ragnar E=Sigríður S=South W=Zoë",
                "rules": "rules target=7",
            }
        finally:
            other.close()
    finally:
        end.close()
        first.close()
    again = Device(tmp_path)  # the power came back
    end = Host(again.path)
    try:
        assert end.ask("players") == ["ok next game: players N=Ragnar E=Sigríður S=South W=Zoë"]
        assert end.ask("rules") == ["ok next game: rules target=7"]
        assert end.ask("rules standard") == ["ok next game: rules (standard)"]
    finally:
        end.close()
        again.close()
    last = Device(tmp_path)
    end = Host(last.path)
    try:
        assert end.ask("rules") == ["ok next game: rules (standard)"]
    finally:
        end.close()
        last.close()
