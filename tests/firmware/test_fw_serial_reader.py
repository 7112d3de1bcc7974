"""Another program reading the port (a forgotten terminal), issue 21.

Bytes the device sends go to whichever program reads them first, so a
terminal program left open on PORT (``screen``, ``miniterm --non-exclusive``)
takes some of the answers.  The laptop commands say so, naming the program
when ``/proc`` shows it, and find out what became of an entry whose answer
was taken: ``enter`` asks the device's status once (``enter_answers``: the
answers to the last tagged entries) and exits 0 when the entry was kept;
``status`` and ``export`` ask again.

The reader is a real ``miniterm`` on the laptop's end of a null-modem cable
(the emulator's own pty lets one program in at a time, root aside), and the
laptop command a real process.  Who reads an answer is decided, not raced:
the device holds the answer at a gate while the test stops one program
(SIGSTOP, waited for until /proc says it is stopped) and lets the other go.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest
from support.serial_kit import FULL_GAME, ROOT, TIMEOUT, Device, cabled, wait_for

from euchre_core import parse_event
from firmware.link.client import DeviceLink, NoAnswer, port_users

ENTERED = "game dealer=N (next: the call: who made trump, which suit, alone?)"


def stopped(pid: int) -> bool:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] in ("T", "t")


def stop(pid: int) -> None:
    os.kill(pid, signal.SIGSTOP)
    wait_for(lambda: stopped(pid))


def go(pid: int) -> None:
    os.kill(pid, signal.SIGCONT)
    wait_for(lambda: not stopped(pid))


class Reader:
    """Another program reading the port: a person's ``miniterm`` left open on
    it (``--non-exclusive``: it takes no lock, as ``screen`` takes none).
    What it printed is in :attr:`got`.

    (A plain ``cat PORT`` does not stay: once a pyserial program has set the
    port's VMIN to 0, its next read returns nothing and it exits, taking at
    most one answer with it.)"""

    def __init__(self, port: str) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.child = pexpect.spawn(
            sys.executable, ["-m", "serial.tools.miniterm", "--non-exclusive", port, "115200"],
            env=env, encoding="utf-8", timeout=TIMEOUT)
        self.child.expect("Quit: Ctrl")  # the port is open
        self.pid = self.child.pid
        self.got = ""
        self._done = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while not self._done.is_set():
            try:
                self.got += self.child.read_nonblocking(4096, timeout=0.05)
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                return

    @property
    def named(self) -> str:
        """How the laptop names it: its command line and pid."""
        with open(f"/proc/{self.pid}/cmdline", "rb") as cmdline:
            args = cmdline.read().decode().rstrip("\0").split("\0")
        return f"{' '.join([os.path.basename(args[0]), *args[1:]])} (pid {self.pid})"

    @property
    def words(self) -> str:
        """The laptop's words for it."""
        return ("another program has the port open and may be reading the device's answers: "
                f"{self.named} (close it)")

    def close(self) -> None:
        self._done.set()
        self._reader.join(TIMEOUT)
        self.child.close(force=True)


class Gate:
    """The device's answers held: the first one ``first(line)`` picks waits
    for :attr:`go`, and every answer after it for :attr:`rest`."""

    def __init__(self, device: Device, first: Callable[[str], bool]) -> None:
        self.at = threading.Event()
        self.go = threading.Event()
        self.rest = threading.Event()
        protocol = device.service.protocol
        send = protocol.send
        passed = False

        def held(lines: list[str]) -> None:
            nonlocal passed
            if passed:
                assert self.rest.wait(TIMEOUT)
            elif first(lines[0]):
                self.at.set()
                assert self.go.wait(TIMEOUT)
                passed = True
            send(lines)

        protocol.send = held  # type: ignore[method-assign]

    def open(self) -> None:
        self.go.set()
        self.rest.set()


@pytest.fixture
def cable(tmp_path: Path) -> Iterator[tuple[Device, str, Reader]]:
    with cabled(tmp_path / "state") as (device, port):
        reader = Reader(port)
        stop(reader.pid)  # it reads nothing until the test lets it
        try:
            yield device, port, reader
        finally:
            reader.close()


def laptop(*args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "firmware", *args], cwd=str(ROOT), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def taken_by_reader(reader: Reader, gate: Gate, client: subprocess.Popen[str],
                    words: str, meanwhile: Callable[[], object] = lambda: None) -> None:
    """The answer held at the gate goes to ``reader`` while the client is
    stopped; then ``reader`` stops, ``meanwhile()`` runs and the client goes
    on (the answers after it are its own)."""
    assert gate.at.wait(TIMEOUT)
    stop(client.pid)
    go(reader.pid)
    gate.go.set()
    wait_for(lambda: words in reader.got)
    stop(reader.pid)
    meanwhile()
    go(client.pid)
    gate.rest.set()


def test_an_entry_whose_answer_another_program_took_is_found_kept(
        cable: tuple[Device, str, Reader]) -> None:
    device, port, reader = cable
    gate = Gate(device, lambda line: " ok game dealer=N " in line)
    client = laptop("enter", "--port", port, "game", "dealer=N")
    try:
        taken_by_reader(reader, gate, client, "ok game dealer=N")
        out, err = client.communicate(timeout=TIMEOUT)
    finally:
        gate.open()
        client.kill()
    assert (client.returncode, out) == (0, ENTERED + "\n"), err
    assert err == (f"euchre-referee: {port}: the answer did not come, though the device answered "
                   f"the request sent after it: {reader.words}; the device's status says "
                   "'enter game dealer=N' was kept\n")
    assert device.journal()[1:] == ["game dealer=N"]


def test_a_refused_entry_whose_answer_another_program_took_is_said_refused(
        cable: tuple[Device, str, Reader]) -> None:
    device, port, reader = cable
    gate = Gate(device, lambda line: " error " in line)
    client = laptop("enter", "--port", port, "trick", "N")
    try:
        taken_by_reader(reader, gate, client, "error ")
        out, err = client.communicate(timeout=TIMEOUT)
    finally:
        gate.open()
        client.kill()
    reason = device.on_main(lambda referee: referee.game.check(parse_event("trick N")))
    assert (client.returncode, out) == (1, "")
    assert err.splitlines() == [
        f"euchre-referee: {port}: the answer did not come, though the device answered the "
        f"request sent after it: {reader.words}; the device's status says 'enter trick N' "
        "was refused:", reason]
    assert device.journal()[1:] == []


def test_when_the_device_cannot_tell_enter_says_how_to_check(
        cable: tuple[Device, str, Reader]) -> None:
    """The device no longer knows the entry's answer (as after a restart):
    neither kept nor refused is claimed."""
    device, port, reader = cable
    gate = Gate(device, lambda line: " ok game dealer=N " in line)
    client = laptop("enter", "--port", port, "game", "dealer=N")
    try:
        taken_by_reader(reader, gate, client, "ok game dealer=N",
                        meanwhile=device.service.protocol.enter_answers.clear)
        out, err = client.communicate(timeout=TIMEOUT)
    finally:
        gate.open()
        client.kill()
    assert (client.returncode, out) == (2, "")
    assert err.endswith("; whether 'enter game dealer=N' was kept is not known: run "
                        f"`euchre-referee status --port {port}` to see whether it was kept\n")
    assert reader.words in err


@pytest.mark.parametrize("command", ["status", "export"])
def test_status_and_export_ask_again_when_another_program_took_the_answer(
        cable: tuple[Device, str, Reader], command: str) -> None:
    device, port, reader = cable
    gate = Gate(device, lambda line: " ok begin " in line)
    client = laptop(command, "--port", port)
    try:
        taken_by_reader(reader, gate, client, "ok end")
        out, err = client.communicate(timeout=TIMEOUT)
    finally:
        gate.open()
        client.kill()
    assert client.returncode == 0, err
    assert err == (f"euchre-referee: {port}: an answer was lost and asked for again: "
                   f"{reader.words}\n")
    if command == "status":
        assert out.splitlines()[:2] == ["game=1", "phase=setup"]
    else:
        assert out == "euchre-log 1\nplayers N=Ragnar E=Sigríður S=South W=Anna\n"


def test_a_load_whose_verdict_another_program_took_can_be_sent_again(
        cable: tuple[Device, str, Reader], tmp_path: Path) -> None:
    device, port, reader = cable
    log = tmp_path / "game.log"
    log.write_bytes(FULL_GAME.read_bytes())
    gate = Gate(device, lambda line: " ok begin " in line)
    client = laptop("send", "--port", port, "--load", "--timeout", "1", str(log))
    try:
        taken_by_reader(reader, gate, client, "ok end")
        out, err = client.communicate(timeout=TIMEOUT)
    finally:
        gate.open()
        client.kill()
    assert (client.returncode, out) == (2, "")
    assert err == (f"euchre-referee: {port}: no answer from the device within 1 s: "
                   f"{reader.words}; sending it again stores no game twice (a game kept "
                   "already is not stored again)\n")
    again = laptop("send", "--port", port, "--load", str(log))
    out, err = again.communicate(timeout=TIMEOUT)
    assert again.returncode == 0
    assert all(line.startswith("euchre-referee: the device is working: ")
               for line in err.splitlines())  # progress, on a slow machine
    assert out.splitlines()[-1] == ("not stored again: game 2 was already kept (the same "
                                    "lines); the current game is still game 2")


def test_no_answer_at_all_names_the_program_that_has_the_port(tmp_path: Path) -> None:
    """Nothing at the other end of the cable, and a terminal on the laptop's end:
    the laptop can only say who else has the port open."""
    from drivers.pseudoterminal import NullModem

    with NullModem() as wire:
        port = wire.paths[1]
        with DeviceLink(port, timeout=0.2) as link, pytest.raises(NoAnswer) as alone:
            link.sync()
        assert str(alone.value) == (f"{port}: no answer from the device within 0.2 s (is the "
                                    "referee running on this port? or another program "
                                    "reading it?)")
        reader = Reader(port)
        try:
            assert port_users(port) == [reader.named]
            with DeviceLink(port, timeout=0.2) as link, pytest.raises(NoAnswer) as shared:
                link.sync()
            assert str(shared.value) == (f"{port}: nothing came from the device within 0.2 s: "
                                         f"{reader.words}")
        finally:
            reader.close()
