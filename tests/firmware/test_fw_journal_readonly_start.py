"""A card that is read-only at the start, holding a game (issue 20): the
referee comes up and shows the kept game, refuses each entry with the cause,
and tries again until the card can be written, then keeps entries; the
emulator takes the device's path (:mod:`firmware.start`), where it used to
exit.  A real read-only file system: a tmpfs remounted read-only (root only)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.clock import FakeClock

from euchre_core import parse_event
from firmware.app import Referee
from firmware.config import Config
from firmware.journal import Store
from firmware.pi.systemd import Notifier
from firmware.start import JOURNAL_RETRY_S, KeptJournal, journal_keeper, open_journal

ROOT = Path(__file__).resolve().parents[2]
READ_ONLY = "the card is read-only: nothing new can be kept"


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=30)


@pytest.fixture
def card(tmp_path: Path) -> Iterator[tuple[Path, Callable[[bool], None]]]:
    """A tmpfs mounted at ``card``, and a function that remounts it read-only
    (True) or read-write (False)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs and remounting it read-only needs root")
    mount = tmp_path / "card"
    mount.mkdir()
    done = _run("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount))
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")

    def set_read_only(on: bool) -> None:
        result = _run("mount", "-o", "remount," + ("ro" if on else "rw"), str(mount))
        assert result.returncode == 0, result.stderr

    yield mount, set_read_only
    _run("umount", "-l", str(mount))


class Frames:
    def __init__(self) -> None:
        self.shown: list[Any] = []

    def show(self, image: Any) -> int:
        self.shown.append(image)
        return 0


def a_kept_game(state: Path) -> list[str]:
    """A game with its first dealer, as the table left it; its lines."""
    store = Store(state)
    referee = Referee(Config(state_dir=state), store, renderer=lambda view: view)
    referee.press("N")
    lines = store.lines(referee.game_id)
    store.close()
    return lines


def test_the_kept_game_is_shown_entries_refused_and_kept_once_writable(
        card: tuple[Path, Callable[[bool], None]]) -> None:
    mount, set_read_only = card
    state = mount / "state"
    lines = a_kept_game(state)
    set_read_only(True)
    store = open_journal(state, Frames(), Notifier(None), lambda: True)
    assert isinstance(store, KeptJournal) and store.cause == "the card is read-only"
    clock = FakeClock()
    referee = Referee(Config(state_dir=state), store, renderer=lambda view: view, clock=clock)
    keep = journal_keeper(referee, clock=clock, say=lambda text: None)
    assert referee.view().title == "Journal read-only"  # said over the game, first
    assert referee.notices() == [f"journal writes failing: {READ_ONLY}"]  # status says it
    assert referee.page_screens() == 2  # (its title and four lines: two screens, each seen)
    referee.press("OK")
    assert referee.view().kind == "notice" and referee.view().cursor == 1  # its second screen
    referee.press("OK")  # dismisses the notice
    view = referee.view()
    assert view.kind == "table" and view.dealer == "Ragnar"  # the kept game
    order = parse_event("make E H")
    assert referee.enter(order) == READ_ONLY  # refused with the cause
    assert store.lines(referee.game_id) == lines
    clock.advance(JOURNAL_RETRY_S)
    assert keep() is False  # tried again: still read-only
    set_read_only(False)
    assert keep() is False  # not yet time
    clock.advance(JOURNAL_RETRY_S)
    assert keep() is True and not isinstance(referee.store, KeptJournal)
    assert referee.enter(order) is None  # kept now
    referee.store.close()
    again = Store(state)
    assert again.lines(again.latest() or 0) == [*lines, order.line()]
    again.close()


def _emulate(state: Path, keys: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "firmware", "emulate", "--state-dir", str(state)],
        input=keys, capture_output=True, timeout=60, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "140", "LINES": "45"})


def test_emulate_on_a_read_only_card_shows_the_kept_game_and_refuses_entries(
        card: tuple[Path, Callable[[bool], None]]) -> None:
    mount, set_read_only = card
    state = mount / "state"
    lines = a_kept_game(state)
    set_read_only(True)
    done = _emulate(state, b"xxeH\r")  # the notice's two screens; East makes hearts: OK
    assert done.returncode == 0, done.stderr
    err = done.stderr.decode().splitlines()
    assert err[0].startswith("euchre-referee: journal read-only: the card is read-only")
    assert "Traceback" not in done.stderr.decode()
    screen = done.stdout.decode()
    assert "Journal read-only" in screen and "Ragnar deals" in screen
    assert READ_ONLY in screen
    set_read_only(False)
    store = Store(state)
    assert store.lines(store.latest() or 0) == lines  # nothing was kept
    store.close()


def test_run_on_a_read_only_card_stays_up_and_takes_the_journal_when_writable(
        card: tuple[Path, Callable[[bool], None]], tmp_path: Path) -> None:
    """``run`` end to end (mock pins, no display): the same path, the retry
    from its main loop."""
    mount, set_read_only = card
    state = mount / "state"
    a_kept_game(state)
    set_read_only(True)
    config = tmp_path / "referee.toml"
    config.write_text('[display]\ninterface = "i2c"\nport = 99  # no such bus here\n',
                      encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WATCHDOG_", "NOTIFY_"))}
    process = subprocess.Popen(
        [sys.executable, "-m", "firmware", "run", "--config", str(config), "--state-dir",
         str(state)], cwd=ROOT, text=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**env, "GPIOZERO_PIN_FACTORY": "mock", "PYTHONPATH": str(ROOT),
             "PYTHONUNBUFFERED": "1"})
    assert process.stderr is not None
    try:
        seen = [process.stderr.readline()]
        assert seen[0].startswith("euchre-referee: journal read-only: the card is read-only"), seen
        set_read_only(False)
        while "journal opened" not in seen[-1]:  # within JOURNAL_RETRY_S of its main loop
            line = process.stderr.readline()
            assert line, seen
            seen.append(line)
        assert seen[-1].strip() == (f"euchre-referee: journal opened: {state} can be written "
                                    "again, entries are kept")
        process.terminate()
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    store = Store(state)  # it let go of the journal: a writer can open it
    store.close()
