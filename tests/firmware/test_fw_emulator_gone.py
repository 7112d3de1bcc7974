"""The emulator's terminal goes away (a tmux pane closed, an ssh link dropped):
it quits cleanly, with no traceback, and everything entered is kept."""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

import pexpect
from support.serial_kit import ROOT

from firmware.journal import Store


def test_the_terminal_going_away_ends_the_emulator_cleanly(tmp_path: Path) -> None:
    state, errors = tmp_path / "state", tmp_path / "stderr.txt"
    command = (f"exec {shlex.quote(sys.executable)} -m firmware emulate --state-dir "
               f"{shlex.quote(str(state))} 2>{shlex.quote(str(errors))}")
    child = pexpect.spawn("sh", ["-c", command], cwd=str(ROOT), timeout=30,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), dimensions=(45, 140))
    child.expect("Tap the first dealer")  # a fresh box's first screen
    child.send("n")  # North deals first: one entry in the journal
    child.expect("Ragnar")
    os.close(child.child_fd)  # the pane is closed: hang-up, then EIO on the terminal
    child.child_fd = -1
    deadline = time.monotonic() + 30
    status = None
    while time.monotonic() < deadline:
        done, status = os.waitpid(child.pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(child.pid, 9)
        raise AssertionError("the emulator did not quit when its terminal went away")
    assert os.waitstatus_to_exitcode(status) == 0
    text = errors.read_text(encoding="utf-8")
    assert "Traceback" not in text and "stopped; games kept" in text, text
    store = Store(state)
    try:
        assert store.lines(store.latest() or 0)[-1] == "game dealer=N"
    finally:
        store.close()
