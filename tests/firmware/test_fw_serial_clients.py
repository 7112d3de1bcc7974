"""Two programs on one port, and logs the link cannot carry as they are.

- The laptop commands open the port exclusively: a second one is told the port
  is in use, and ``watch --enter`` enters on the same connection.
- Every request carries a tag its answer echoes, so another program's answers
  (a person at miniterm, a script writing the port) are never taken for ours:
  tested with a second, real process writing requests to the same port (the
  laptop's end of a null-modem cable: the emulator's own pty lets one program
  in at a time).
- A counted replay takes a 0x03 byte as data; the laptop refuses control
  characters and what passes the device's limits before sending anything; and
  ``send`` and a local ``replay`` give the same verdict for every file
  (hypothesis, over a real pty).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.serial_kit import FULL_GAME, ROOT, TIMEOUT, Device, Host, cabled, wait_for

from euchre_core import replay
from firmware.cli import main
from firmware.link.client import IN_USE, log_lines
from firmware.link.protocol import MAX_LINE, MAX_REPLAY_LINES, split_tag, tagged
from firmware.logcheck import LogCheck, check_bytes, file_lines


@pytest.fixture
def device(tmp_path: Path) -> Iterator[Device]:
    dev = Device(tmp_path / "state")
    yield dev
    dev.close()


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def spawn(*args: str, **options: object) -> pexpect.spawn:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    return pexpect.spawn(sys.executable, list(args), cwd=str(ROOT), env=env,
                         encoding="utf-8", timeout=TIMEOUT, **options)


# --- tags ------------------------------------------------------------------------------


def test_tags_are_echoed_and_untagged_requests_still_work(device: Device) -> None:
    host = Host(device.path)
    try:
        assert host.ask("@a1 sync x") == ["@a1 ok sync x"]
        assert host.ask("@b2 export 99") == ["@b2 error no game 99 (stored games: 1-1)"]
        frame = host.ask("@c3 status")
        assert frame[0] == "@c3 ok begin 16 status" and frame[-1] == "ok end"
        assert host.ask("sync plain") == ["ok sync plain"]  # a person at miniterm
        host.write(b"@d4 stat\xffus\r\n")  # the tag is read before the bytes are
        assert host.answer() == ["@d4 error not UTF-8: byte 9 of the line is 0xFF"]
        host.write(b"@e5 status*0000\r\n")  # the checksum covers the tag
        assert host.answer()[0].startswith("@e5 error checksum mismatch")
        assert host.ask("@f6 replay 1") == ["@f6 ok replay: send the log's 1 lines"]
        host.write(b"euchre-log 1\r\n")
        assert host.answer()[0] == "@f6 ok begin 4 valid"  # the verdict carries it too
    finally:
        host.close()
    assert split_tag(b"@x status") == ("x", b"status")
    assert tagged("", "ok") == "ok"


ROGUE = """\
import serial, sys, time
port = serial.Serial(sys.argv[1], 115200, timeout=0)
print("ready", flush=True)
while True:  # requests of its own; it never reads (a second reader would steal bytes)
    port.write(b"export 99\\r\\n")
    time.sleep(0.005)
"""


def test_another_process_on_the_port_never_steals_an_answer(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with cabled(tmp_path / "state") as (device, port):
        rogue = subprocess.Popen([sys.executable, "-c", ROGUE, port],
                                 stdout=subprocess.PIPE, text=True)
        try:
            assert rogue.stdout is not None and rogue.stdout.readline() == "ready\n"
            entered = 0
            for round_ in range(8):
                code, out, err = cli(capsys, "enter", "--port", port, "trick", "Q")
                assert (code, out, err) == (1, "", "not a seat: 'Q' (use N E S W)\n"), round_
                line = "game dealer=N" if round_ % 2 == 0 else "undo"
                code, out, err = cli(capsys, "enter", "--port", port, *line.split())
                expected = ("game dealer=N (next: the call: who made trump, which suit, alone?)"
                            if line != "undo" else "Undone: the new game (Ragnar to deal)")
                assert (code, out, err) == (0, expected + "\n", ""), round_
                entered += 1
                assert len(device.journal()) == 1 + entered  # exit 0 exactly when durable
        finally:
            rogue.kill()
            rogue.wait()


def test_a_second_laptop_command_is_told_the_port_is_in_use(
        device: Device, capsys: pytest.CaptureFixture[str]) -> None:
    child = spawn("-m", "firmware", "watch", "--enter", "--port", device.path)
    try:
        wait_for(lambda: device.service.protocol.watching)
        code, out, err = cli(capsys, "status", "--port", device.path)
        assert (code, out) == (2, "")
        assert err == f"euchre-referee: {device.path}: {IN_USE} (close it there, or wait " \
            "for it to finish)\n"
        # As root that command's open got past the exclusive mark (the lock refused
        # it).  The device reads from the watch after it closed the port, so it has
        # counted that close before the watch's own: two closes it has not read yet
        # are counted as one (test_two_closes_in_a_row_are_both_counted), and it
        # would never see the watch go.
        child.sendline("trick Q")
        child.expect_exact("refused: not a seat: 'Q' (use N E S W)")
        child.sendintr()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    wait_for(lambda: not device.service.protocol.watching)
    assert cli(capsys, "status", "--port", device.path)[0] == 0  # free again


def test_watch_enters_on_the_same_connection(device: Device) -> None:
    child = spawn("-m", "firmware", "watch", "--enter", "--port", device.path)
    try:
        wait_for(lambda: device.service.protocol.watching)
        child.sendline("game dealer=S")
        child.expect_exact("entered: game dealer=S (next: the call")
        child.sendline("trick Q")
        child.expect_exact("refused: not a seat: 'Q' (use N E S W)")
        device.on_main(lambda referee: referee.enter(
            __import__("euchre_core").parse_event("make W C")))
        child.expect_exact("make W C")  # the feed goes on between entries
        child.sendeof()
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 1  # one entry was refused
    finally:
        child.close(force=True)
    assert device.journal()[1:] == ["game dealer=S", "make W C"]


# --- 0x03 and the device's limits ----------------------------------------------------------


def test_a_counted_replay_takes_0x03_as_data(device: Device) -> None:
    host = Host(device.path)
    before = device.on_main(lambda referee: (referee.config.names, referee.config.rules))
    lines = [b"euchre-log 1", b"# scanned \x03 from paper", b"players N=Mallory",
             b"rules target=5", b"game dealer=E"]
    try:
        assert host.ask(f"replay {len(lines)}")[0].startswith("ok replay")
        host.write(b"".join(line + b"\r\n" for line in lines))
        frame = host.answer()  # the whole log was read as data: line 2 is judged, not obeyed
        assert frame[0].endswith(" invalid"), frame
        assert json.loads(frame[1])["error"]["line"] == 2
        assert frame[2] == "-:2: a control character (0x03) in the line: a log line holds none"
        assert host.before_sync() == b""  # nothing of the log was taken as a request
        assert host.ask("players") == [
            "ok next game: players N=Ragnar E=Sigríður S=South W=Anna"]
    finally:
        host.close()
    assert device.on_main(lambda referee: (referee.config.names, referee.config.rules)) == before


def test_the_laptop_refuses_what_the_link_cannot_carry(
        device: Device, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = {
        "ctrl-c.log": (b"euchre-log 1\n# x \x03 y\ngame dealer=N\n",
                       "line 2: a control character (0x03) in the line: a log line holds "
                       "none (nothing sent)"),
        "long.log": (b"euchre-log 1\n# " + b"z" * MAX_LINE + b"\n",
                     f"line 2: line too long (max {MAX_LINE} bytes): the device cannot take "
                     "it (nothing sent)"),
        "many.log": (b"euchre-log 1\n" + b"# c\n" * MAX_REPLAY_LINES,
                     f"{MAX_REPLAY_LINES + 1} lines: too long a log (max {MAX_REPLAY_LINES} "
                     "lines): the device cannot take it (nothing sent)"),
    }
    sent = device.service.link.bytes_in
    for name, (data, reason) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        assert cli(capsys, "send", "--port", device.path, str(path)) == (
            2, "", f"{path}: {reason}\n")
    assert device.service.link.bytes_in == sent  # the port was not even opened
    exactly = tmp_path / "exactly.log"  # at the limits: sent, and valid as locally
    exactly.write_bytes(b"euchre-log 1\n# " + b"z" * (MAX_LINE - 2) + b"\n")
    assert cli(capsys, "send", "--port", device.path, str(exactly))[:2] == cli(
        capsys, "replay", str(exactly))[:2]


# --- one verdict: send and replay --------------------------------------------------------


LOG_LINES = [
    b"euchre-log 1", b"players N=Ragnar E=Sigr\xc3\xad\xc3\xb0ur", b"rules target=5",
    b"game dealer=N", b"game dealer=E", b"upcard 9H", b"pass E", b"order S", b"make N H alone",
    b"trick N", b"trick E", b"tricks 3", b"undo", b"score NS=1 EW=0", b"winner NS",
    b"deal N=9S,TS,JS,QS,KS", b"# a comment", b"", b"   ", b"trick N*0000", b"trick N*7C06",
    b"frobnicate", b".", b"replay end", b"status",
]
line_strategy = st.one_of(
    st.sampled_from(LOG_LINES),
    st.sampled_from(LOG_LINES).map(lambda line: line + b"  # note"),
    st.binary(max_size=20).map(lambda data: data.replace(b"\n", b"")),
    st.integers(MAX_LINE - 3, MAX_LINE + 3).map(lambda size: b"#" + b"w" * (size - 1)),
    st.sampled_from([b"trick \xff", b"# \x03", b"players W=\x07", b"game\rdealer=N"]),
)
file_strategy = st.tuples(
    st.lists(line_strategy, max_size=14),
    st.sampled_from([b"\n", b"\r\n"]), st.booleans(),
).map(lambda parts: parts[1].join(parts[0]) + (parts[1] if parts[2] and parts[0] else b""))
game_lines = FULL_GAME.read_bytes().splitlines()


@pytest.fixture(scope="module")
def shared_device(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Device]:
    dev = Device(tmp_path_factory.mktemp("verdicts"))
    yield dev
    dev.close()


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(file_strategy, st.tuples(st.integers(0, len(game_lines)), file_strategy).map(
    lambda pair: b"\n".join(game_lines[:pair[0]]) + b"\n" + pair[1])))
def test_send_and_replay_give_the_same_verdict_for_every_file(
        shared_device: Device, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        data: bytes) -> None:
    path = tmp_path / "random.log"
    path.write_bytes(data)
    local = cli(capsys, "replay", "--json", str(path))
    try:
        log_lines(data)
    except ValueError as error:  # the link cannot carry it: refused, nothing sent
        assert cli(capsys, "send", "--json", "--port", shared_device.path, str(path)) == (
            2, "", f"{path}: {error}\n")
        return
    assert cli(capsys, "send", "--json", "--port", shared_device.path, str(path)) == local


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(game_lines + LOG_LINES[:17]), max_size=60),
       st.integers(1, 7))
def test_checking_a_chunk_at_a_time_is_replay(lines: list[bytes], chunk: int) -> None:
    data = b"\n".join(lines) + b"\n"
    check = LogCheck(chunk_lines=chunk)
    for line in file_lines(data):
        check.add_bytes(line)
    got, expected = check.verdict(), replay(data.decode("utf-8"))
    assert got.error == expected.error
    assert got.game.entries == expected.game.entries
    whole = check_bytes(data)
    assert (whole.error, whole.lines) == (expected.error, got.lines)
    assert whole.game.entries == expected.game.entries


# --- small edges ------------------------------------------------------------------------


def test_numbers_are_ascii_digits(device: Device) -> None:
    host = Host(device.path)
    try:
        assert host.ask("export ²") == [
            "error export: expected 'export' or 'export ID' (see games)"]
        assert host.ask("replay ²") == ["error replay: expected 'replay [begin] [load] [LINES]'"]
        assert host.ask("replay ١٢") == [
            "error replay: expected 'replay [begin] [load] [LINES]'"]
    finally:
        host.close()


def test_status_into_a_closed_pipe_exits_quietly(device: Device) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = subprocess.Popen([sys.executable, "-m", "firmware", "export", "--port", device.path],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # `| head` that has gone before the first line
    error = child.stderr.read()
    assert child.wait(timeout=30) == 0
    assert error == b""


# --- the emulator's pty: one opener at a time, where the OS allows ------------------------

HOLDER = """\
import serial, sys
port = serial.Serial(sys.argv[1], 115200, timeout=1)
for _ in range(60):  # the link's handshake: sync again until it is answered
    port.write(b"sync held\\r\\n")
    line = port.read_until(b"\\r\\n")
    if line.startswith(b"ok sync held*"):
        break
print(line.decode().strip(), flush=True)
sys.stdin.read()  # hold the port until told to go
"""


def as_other_user() -> list[str]:
    """A command prefix that runs as an unprivileged user (root ignores TIOCEXCL)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root needs setpriv to open the pty as another user")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


def test_the_emulators_pty_refuses_a_second_opener(device: Device) -> None:
    os.chmod(device.path, 0o666)  # the test's users may open it
    prefix = as_other_user()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    second = [*prefix, sys.executable, "-m", "firmware", "status", "--port", device.path]
    for _ in range(2):  # the device can be opened again after each peer has gone
        # (the mark comes off a moment after a peer goes: the reader's next pass)
        wait_for(lambda: device.endpoint.peer_watch.own == 0)
        holder = subprocess.Popen([*prefix, sys.executable, "-c", HOLDER, device.path],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  env=env)
        try:
            assert holder.stdout is not None and holder.stdin is not None
            assert holder.stdout.readline().startswith("ok sync held*")
            wait_for(lambda: device.endpoint.peer_watch.own == 1)
            done = subprocess.run(second, capture_output=True, text=True, env=env, timeout=60)
            assert (done.returncode, done.stdout) == (2, "")
            assert done.stderr == f"euchre-referee: {device.path}: {IN_USE} (close it there, " \
                "or wait for it to finish)\n"
            holder.stdin.close()
            assert holder.wait(timeout=30) == 0
        finally:
            if holder.poll() is None:
                holder.kill()
                holder.wait()
        wait_for(lambda: device.endpoint.peer_watch.own == 0)
        done = subprocess.run(second, capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr  # free again once the holder has gone
        assert done.stdout.startswith("game=1\n")


def test_a_counted_replay_left_open_ends_after_a_quiet_spell(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A program that died halfway through ``replay N`` on a UART (no hang-up,
    here a null-modem cable; the dead program's port is still open, as a stuck
    process's would be): every byte after it is data, so the next program's
    sync is taken as log lines until the replay has been quiet for
    REPLAY_IDLE_S; then it gets through."""
    with cabled(tmp_path / "state") as (device, port):
        stale = Host(port)
        try:
            assert stale.ask("replay 50")[0].startswith("ok replay")
            stale.write(b"euchre-log 1\r\ngame dealer=N\r\n")
            code, out, err = cli(capsys, "status", "--port", port)
            assert (code, err) == (0, "")
            assert out.startswith("game=1\n")
            assert device.service.protocol._replay is None
        finally:
            stale.close()
