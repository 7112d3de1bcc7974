"""A start whose first write fails, and a log that cannot be written (issue
21, defect 4): both said and survived.

- The journal opens but the card refuses the referee's first write (its
  first game cannot be stored: EIO at the first flush): ``run`` used to stop
  with a traceback and nothing on the screen.  Now it is said (the screen,
  one line in the log, systemd's STATUS) and tried again every 5 s, as a
  journal that does not open (:func:`firmware.start.open_referee`).
- Standard error that cannot be written (a full card under ``2>>file``: here
  ``/dev/full``, ENOSPC on every write; a pipe whose reader is gone, EPIPE;
  closed): the first line the referee logged killed it.  Now nothing written
  there can raise (:mod:`firmware.stderr`).

Faults injected for real: strace's ``inject=fdatasync:error=EIO``, the kernel's
``/dev/full``, a closed pipe; ``run`` with gpiozero's mock pins and no panel,
reporting to a stand-in for systemd's notify socket.
"""

from __future__ import annotations

import io
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from support.strace_kit import ROOT, strace_command, strace_problem

from firmware.emulator.terminal import TerminalDisplay
from firmware.journal import ACKS_NAME, Store
from firmware.screens import render
from firmware.view import View

EIO = "the card gives read/write errors: nothing new can be kept"
NOT_WRITTEN = f"journal not written: {EIO} (the game could not be stored)"
needs_strace = pytest.mark.skipif(strace_problem() is not None, reason=strace_problem() or "")


class Systemd:
    """The notify socket systemd gives a service: what the referee tells it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.messages: list[str] = []

    def until(self, done: Callable[[list[str]], bool], timeout: float = 30.0) -> list[str]:
        deadline = time.monotonic() + timeout
        while not done(self.messages):
            left = deadline - time.monotonic()
            assert left > 0, self.messages
            self.sock.settimeout(left)
            try:
                self.messages += self.sock.recv(4096).decode().splitlines()
            except TimeoutError:
                continue
        return self.messages

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def systemd(tmp_path: Path) -> Iterator[Systemd]:
    stand_in = Systemd(tmp_path / "notify")
    yield stand_in
    stand_in.close()


def _run(tmp_path: Path, state: Path, systemd: Systemd, *, stderr: Any = subprocess.PIPE,
         inject: str | None = None, preexec: Callable[[], None] | None = None
         ) -> subprocess.Popen[str]:
    """``euchre-referee run`` (mock pins, no panel) as systemd starts it."""
    config = tmp_path / "referee.toml"
    config.write_text('[display]\ninterface = "i2c"\nport = 99  # no such bus here\n',
                      encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WATCHDOG_", "NOTIFY_"))}
    env.update(GPIOZERO_PIN_FACTORY="mock", NOTIFY_SOCKET=str(systemd.path),
               WATCHDOG_USEC="2000000", PYTHONUNBUFFERED="1", PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "firmware", "run", "--config", str(config),
               "--state-dir", str(state)]
    if inject is not None:
        command = [*strace_command(tmp_path / "run.strace", inject), *command]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=stderr, text=True, preexec_fn=preexec)


def _stop(process: subprocess.Popen[str]) -> str:
    """SIGTERM (to the referee, strace's tracee or not); its log."""
    try:
        os.kill(_referee_pid(process), signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return err or ""


def _referee_pid(process: subprocess.Popen[str]) -> int:
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
    if Path(process.args[0]).name == "strace" and children.exists():  # type: ignore[index]
        return int(children.read_text().split()[0])
    return process.pid


def _count(messages: list[str], text: str) -> int:
    return sum(1 for message in messages if message == text)


@needs_strace
def test_run_whose_first_write_fails_says_it_and_stays_up(
        tmp_path: Path, systemd: Systemd) -> None:
    """Every flush refused from the first on: the first game is never
    stored; it says why once, stays up (READY, the watchdog pinged) and
    stops cleanly."""
    process = _run(tmp_path, tmp_path / "state", systemd, inject="fdatasync:error=EIO:when=1+")
    messages = systemd.until(lambda m: "READY=1" in m and _count(m, "WATCHDOG=1") >= 3)
    assert f"STATUS={NOT_WRITTEN}" in messages
    assert process.poll() is None  # still up, trying again every 5 s
    err = _stop(process)
    assert process.returncode == 0, err
    lines = err.splitlines()
    assert lines == [f"euchre-referee: {NOT_WRITTEN}; trying again every 5 s",
                     "euchre-referee: stopped"], err


@needs_strace
def test_run_whose_first_write_fails_once_takes_up_the_journal(
        tmp_path: Path, systemd: Systemd) -> None:
    """One refused flush: said, and 5 s later the first game is stored and
    the referee runs as ever."""
    state = tmp_path / "state"
    process = _run(tmp_path, state, systemd, inject="fdatasync:error=EIO:when=1")
    systemd.until(lambda m: _count(m, "READY=1") >= 2)  # the wait, then the start
    assert process.poll() is None
    err = _stop(process)
    assert process.returncode == 0, err
    assert err.splitlines()[0] == f"euchre-referee: {NOT_WRITTEN}; trying again every 5 s"
    assert "Traceback" not in err
    store = Store(state, readonly=True)
    try:
        assert [info.lines for info in store.games()] == [1]  # the first game, stored
        assert store.unconfirmed is None
    finally:
        store.close()


@needs_strace
def test_emulate_whose_first_write_fails_shows_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [*strace_command(tmp_path / "emulate.strace", "fdatasync:error=EIO:when=1+"),
         sys.executable, "-m", "firmware", "emulate", "--state-dir", str(tmp_path / "state")],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=60, cwd=ROOT, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "140", "LINES": "45"})
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        f"euchre-referee: {NOT_WRITTEN}; trying again every 5 s",
        "euchre-referee: stopped before the journal opened"], done.stderr
    # The screen: the notice, drawn as the emulator draws every frame.
    expected = io.BytesIO()
    TerminalDisplay(expected, size=lambda: (140, 45)).show(render(View(
        kind="notice", title="Journal not written",
        lines=(f"{EIO} (the game could not be stored)", "Trying again..."))))
    drawn = _frame_rows(expected.getvalue().decode())
    assert drawn and _frame_rows(done.stdout)[:len(drawn)] == drawn


def _frame_rows(text: str) -> list[str]:
    """The rows of the drawn OLED frames in a terminal's output."""
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    return [line for line in plain.splitlines() if line.startswith("│")]


def _dev_full() -> IO[str]:
    return open("/dev/full", "w", encoding="utf-8")  # noqa: SIM115 - the child's stderr


@pytest.mark.parametrize("kind", ["full", "broken pipe", "closed"])
def test_run_with_a_log_it_cannot_write_keeps_running(
        tmp_path: Path, systemd: Systemd, kind: str) -> None:
    """Standard error on a full card (``/dev/full``: ENOSPC), a pipe whose
    reader has gone (EPIPE), or closed; a start that has things to say (no
    panel; a damaged record of acknowledged lines): the referee starts,
    pings the watchdog, and stops cleanly."""
    if kind == "full" and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    state = tmp_path / "state"
    store = Store(state)
    store.new_game(["players N=Nora E=Sigríður S=South W=Anna"])
    store.close()
    acks = state / ACKS_NAME
    acks.write_bytes(b"\x01" + acks.read_bytes()[1:])  # said at the start
    stderr: Any
    preexec = None
    read = None
    if kind == "full":
        stderr = _dev_full()
    elif kind == "broken pipe":
        read, stderr = os.pipe()
        os.close(read)
    else:
        stderr, preexec = subprocess.DEVNULL, (lambda: os.close(2))
    try:
        process = _run(tmp_path, state, systemd, stderr=stderr, preexec=preexec)
    finally:
        if kind == "full":
            stderr.close()
        elif kind == "broken pipe":
            os.close(stderr)
    messages = systemd.until(lambda m: "READY=1" in m and _count(m, "WATCHDOG=1") >= 3)
    assert "READY=1" in messages and process.poll() is None
    _stop(process)
    assert process.returncode == 0
    again = Store(state)  # it started: the record was said damaged, kept aside, made afresh
    try:
        assert list(state.glob("journal.sqlite3.record-damaged-*.acks"))
    finally:
        again.close()
