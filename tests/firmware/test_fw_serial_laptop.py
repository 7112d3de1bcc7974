"""The laptop side against a running referee on a real pseudo-terminal.

``euchre-referee send/status/export/enter`` through ``firmware.cli.main``;
``watch`` as a process stopped with Ctrl-C; a person at
``python -m serial.tools.miniterm``; and the emulator's ``--pty-link``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from support.app_kit import press
from support.serial_kit import FULL_GAME, ROOT, TIMEOUT, Device, Host, cabled, wait_for

from euchre_core import replay, write_log
from firmware.cli import main
from firmware.summary import summary_json, summary_text

FULL_TEXT = FULL_GAME.read_text(encoding="utf-8")
INVALID = "euchre-log 1\ngame dealer=N\nmake S H\ntricks 4\nupcard 9D\npass N\npass E\n"
INVALID_REASON = "it is South's turn to bid, not Ragnar's"


@pytest.fixture
def device(tmp_path: Path) -> Iterator[Device]:
    dev = Device(tmp_path / "state")
    yield dev
    dev.close()


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_send_prints_what_replay_prints(device: Device, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "send", "--port", device.path, str(FULL_GAME))
    assert (code, err) == (0, "")
    assert out == summary_text(str(FULL_GAME), replay(FULL_TEXT)) + "\n"
    assert cli(capsys, "replay", str(FULL_GAME))[1] == out  # the same, checked on the laptop


def test_send_json_is_the_replay_json_object(device: Device, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "bad.log", INVALID)
    for log, status in ((str(FULL_GAME), 0), (path, 1)):
        code, out, err = cli(capsys, "send", "--port", device.path, "--json", log)
        text = Path(log).read_text(encoding="utf-8")
        assert (code, err) == (status, "")
        assert out == json.dumps(summary_json(log, replay(text)), ensure_ascii=False) + "\n"
        assert out == cli(capsys, "replay", "--json", log)[1]


def test_send_invalid_names_file_and_line(device: Device, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "bad.log", INVALID)
    assert cli(capsys, "send", "--port", device.path, path) == (
        1, f"{path}:6: {INVALID_REASON}\n", "")


def test_send_load_makes_it_the_current_game(device: Device,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "send", "--port", device.path, "--load", str(FULL_GAME))
    assert code == 0
    assert out.splitlines()[-1] == "loaded as game 2: it is now the current game"
    code, out, _ = cli(capsys, "export", "--port", device.path)
    assert (code, out) == (0, write_log(replay(FULL_TEXT).game))
    code, out, _ = cli(capsys, "export", "--port", device.path, "--game", "1")
    assert out == "euchre-log 1\nplayers N=Ragnar E=Sigríður S=South W=Anna\n"


def test_send_usage_and_port_errors(device: Device, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "nope.log")
    assert cli(capsys, "send", "--port", device.path, missing) == (
        2, "", f"{missing}: no such file\n")
    code, out, err = cli(capsys, "send", "--port", str(tmp_path / "ttyNONE"), str(FULL_GAME))
    assert (code, out) == (2, "")
    assert err.startswith(f"euchre-referee: {tmp_path / 'ttyNONE'}: cannot open: ")
    cr = tmp_path / "cr.log"
    cr.write_bytes(b"euchre-log 1\r\ngame\rdealer=N\r\n")
    assert cli(capsys, "send", "--port", device.path, str(cr)) == (
        2, "", f"{cr}: line 2: a carriage return inside the line (the serial link would "
        "split it)\n")


def test_send_a_file_that_is_not_utf8(device: Device, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.log"
    path.write_bytes(b"euchre-log 1\nplayers W=Bj\xf6rn\n")
    code, out, _ = cli(capsys, "send", "--port", device.path, str(path))
    assert (code, out) == (1, f"{path}:2: not UTF-8: byte 13 of the line is 0xF6\n")


def test_status_json_and_text(device: Device, capsys: pytest.CaptureFixture[str]) -> None:
    device.events.put(press("W"))
    code, out, _ = cli(capsys, "status", "--port", device.path, "--json")
    status = json.loads(out)
    assert code == 0
    assert {key: status[key] for key in ("score", "hands_played", "dealer", "winner",
                                         "expected", "expected_kind")} == {
        "score": {"NS": 0, "EW": 0}, "hands_played": 0, "dealer": "W", "winner": None,
        "expected": "the call: who made trump, which suit, alone?", "expected_kind": "bid"}
    code, out, _ = cli(capsys, "status", "--port", device.path)
    assert out.splitlines()[:3] == ["game=1", "phase=in game", "score=NS 0 EW 0"]


def test_enter_acknowledged_and_refused(device: Device,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(capsys, "enter", "--port", device.path, "game", "dealer=S") == (
        0, "game dealer=S (next: the call: who made trump, which suit, alone?)\n", "")
    reason = device.on_main(lambda referee: referee.game.check(
        __import__("euchre_core").parse_event("trick N")))
    assert cli(capsys, "enter", "--port", device.path, "trick", "N") == (1, "", reason + "\n")
    assert cli(capsys, "enter", "--port", device.path, "undo") == (
        0, "Undone: the new game (South to deal)\n", "")
    assert device.journal()[1:] == ["game dealer=S", "undo"]


def test_export_unknown_game_is_refused(device: Device,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(capsys, "export", "--port", device.path, "--game", "7") == (
        1, "", "euchre-referee: no game 7 (stored games: 1-1)\n")


def test_a_stale_half_line_does_not_spoil_the_next_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # On a port two programs may have open at once (the emulator's own pty lets
    # one in at a time): another program left half a line and is still there.
    with cabled(tmp_path / "state") as (device, port):
        other = Host(port)
        try:
            half = b"enter game dea"
            arrived = device.service.link.bytes_in
            other.write(half)
            wait_for(lambda: device.service.link.bytes_in >= arrived + len(half))  # it has it
            assert cli(capsys, "enter", "--port", port, "game", "dealer=E")[0] == 0
            assert device.journal()[1:] == ["game dealer=E"]
        finally:
            other.close()


def spawn(*args: str, **options: object) -> pexpect.spawn:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    return pexpect.spawn(sys.executable, list(args), cwd=str(ROOT), env=env,
                         encoding="utf-8", timeout=TIMEOUT, **options)


def test_watch_follows_the_feed_until_ctrl_c(device: Device) -> None:
    child = spawn("-m", "firmware", "watch", "--port", device.path)
    try:
        wait_for(lambda: device.service.protocol.watching)
        device.events.put(press("N"))
        child.expect_exact("game dealer=N\r\n")
        device.on_main(lambda referee: referee.enter(
            __import__("euchre_core").parse_event("make E C")))
        child.expect_exact("make E C\r\n")
        child.sendintr()
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        wait_for(lambda: not device.service.protocol.watching)
    finally:
        child.close(force=True)


def test_a_person_at_miniterm(device: Device) -> None:
    child = spawn("-m", "serial.tools.miniterm", device.path, "115200")
    try:
        child.expect("Quit: Ctrl")
        child.send("status\r")
        child.expect(r"ok begin 16 status\*[0-9A-F]{4}")
        child.expect(r"expected=game: new game: who deals first\?\*[0-9A-F]{4}")
        child.expect(r"ok end\*22FA")
        child.send("enter game dealer=N\r")
        child.expect(r"ok game dealer=N \(next: the call")
        child.send("frobnicate\r")
        child.expect_exact("error unknown command 'frobnicate' (try help)*")
        child.send("\x1d")  # Ctrl-], miniterm's quit
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert device.journal()[1:] == ["game dealer=N"]


def test_emulator_pty_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    link = tmp_path / "ttyREFEREE"
    os.symlink("/dev/pts/does-not-exist", link)  # a stale link from an earlier run
    child = spawn("-m", "firmware", "emulate", "--state-dir", str(tmp_path / "state"),
                  "--pty-link", str(link), dimensions=(45, 140))
    drained = threading.Event()

    def drain() -> None:  # keep reading the emulator's screen so it never blocks on it
        try:
            child.expect(pexpect.EOF, timeout=30)
        finally:
            drained.set()

    try:
        child.expect("serial link on (/dev/pts/[0-9]+)")
        slave = child.match.group(1)
        assert os.readlink(link) == slave
        child.expect("Tap the first dealer")  # a fresh box's first screen
        threading.Thread(target=drain, daemon=True).start()
        child.send("w")  # the W key: West deals first
        wait_for(lambda: '"dealer": "W"' in cli(capsys, "status", "--port", str(link),
                                                "--json")[1])
        assert cli(capsys, "enter", "--port", str(link), "make", "N", "S")[0] == 0
        code, out, _ = cli(capsys, "export", "--port", str(link))
        assert out.splitlines()[-2:] == ["game dealer=W", "make N S"]
        child.send("q")
        assert drained.wait(10)
    finally:
        child.close(force=True)
    assert not os.path.lexists(link)  # removed on the way out
