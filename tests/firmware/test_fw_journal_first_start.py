"""A power cut while the journal is first made never bricks the box (issue
21, defect 2).

The journal used to be made in place: SQLite's first transactions went
through a rollback journal, and a power cut at the 4th flush left
``journal.sqlite3`` with a hot ``-journal``; every later start opened it
read-only to check it, SQLite refused ("attempt to write a readonly
database"), and the box said forever "the journal is read-only" (the card
was fine); ``emulate`` exited, ``games`` printed a traceback.  Now the first
journal is built whole as a temporary file and renamed into place, a hot
rollback journal found at a start (an older referee's, a restored backup's)
is rolled back and said, and "read-only" is said only of a card that is.

Faults injected for real: ``strace -e inject=...:signal=SIGKILL:when=N`` at
every flush of a first start, of this referee and of the older one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from support.crash_child import open_referee, table_lines
from support.journal_kit import is_root
from support.strace_kit import ROOT, child_session, flushes, strace_command, strace_problem

from firmware.cli import main as cli_main
from firmware.journal import JOURNAL_NAME, JournalError, Store
from firmware.journal.schema import hot_journal

needs_strace = pytest.mark.skipif(strace_problem() is not None, reason=strace_problem() or "")
LINES = ["game dealer=N", "upcard 9H", "order E alone"]

OLDER_START = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=FULL")
db.executescript('''
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    created REAL NOT NULL,
    flow TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS lines (
    game_id INTEGER NOT NULL REFERENCES games(id),
    seq INTEGER NOT NULL,
    text TEXT NOT NULL,
    crc INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (game_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    crc INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
''')
"""
"""How the referee made its journal before (firmware/journal/store.py at
0d6a739: ``Store._open`` on a state directory with no journal)."""


def _starts_and_keeps(state: Path, acked: list[str], sent: list[str] = LINES) -> list[str]:
    """A start on ``state`` after the cut: it opens, every acknowledged line
    is there (and at most the one being written when it was cut: never
    answered, neither acknowledged nor refused), an entry is kept; ``games``
    answers without a traceback.  Returns the referee's notes."""
    referee = open_referee(state)
    try:
        store = referee.store
        games = [(info.id, store.lines(info.id)) for info in store.games()]
        assert table_lines(games) in (acked, sent[:len(acked) + 1])
        assert not any("read-only" in note for note in referee.notes), referee.notes
        assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        if referee.game.phase.name == "SETUP":
            from euchre_core import parse_event

            assert referee.enter(parse_event("game dealer=E")) is None  # the table goes on
        notes = list(referee.notes)
    finally:
        referee.store.close()
    assert not hot_journal(state / JOURNAL_NAME)
    assert cli_main(["games", "--state-dir", str(state)]) == 0
    return notes


@needs_strace
@pytest.mark.parametrize("call", ["fsync", "fdatasync"])
def test_a_power_cut_at_any_flush_of_a_first_start_never_bricks_the_box(
        tmp_path: Path, call: str) -> None:
    clean = tmp_path / "clean.strace"
    child_session(tmp_path / "clean", LINES, clean)
    total = len([f for f in flushes(clean) if f.call == call])
    assert total >= 2
    for number in range(1, total + 1):
        state = tmp_path / f"cut-{number}"
        session = child_session(state, LINES, tmp_path / f"{number}.strace",
                                f"{call}:signal=SIGKILL:when={number}")
        notes = _starts_and_keeps(state, session.acked)
        # A whole journal or none; at most the line whose commit was cut, never
        # answered, is said to be left out.
        assert len(notes) <= 1 and all(
            note.startswith("the last entry (") and "never confirmed" in note
            for note in notes), (number, notes)


def _older_cut(tmp_path: Path, number: int) -> Path:
    """The older referee's first start, killed at its ``number``-th fdatasync."""
    state = tmp_path / f"older-{number}"
    state.mkdir()
    subprocess.run([*strace_command(tmp_path / f"older-{number}.strace",
                                    f"fdatasync:signal=SIGKILL:when={number}"),
                    sys.executable, "-c", OLDER_START, str(state / JOURNAL_NAME)],
                   capture_output=True, check=False, timeout=60)
    return state


@needs_strace
def test_a_box_bricked_by_an_older_first_start_comes_up(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every cut of the older first start: the box comes up; the hot
    journal it left is rolled back and said; ``games`` says in one line why
    it cannot read it meanwhile, and writes nothing."""
    clean = tmp_path / "clean.strace"
    subprocess.run([*strace_command(clean), sys.executable, "-c", OLDER_START,
                    str(tmp_path / JOURNAL_NAME)], check=True, timeout=60)
    total = len([f for f in flushes(clean) if f.call == "fdatasync"])
    hot = 0
    for number in range(1, total + 1):
        state = _older_cut(tmp_path, number)
        if hot_journal(state / JOURNAL_NAME):
            hot += 1
            before = {p.name: p.read_bytes() for p in state.iterdir()}
            capsys.readouterr()
            assert cli_main(["games", "--state-dir", str(state)]) == 1
            err = capsys.readouterr().err.splitlines()
            assert len(err) == 1 and "cut short by a power cut" in err[0], err
            assert "read-only" not in err[0]
            assert {p.name: p.read_bytes() for p in state.iterdir()} == before
            notes = _starts_and_keeps(state, [])
            assert notes == ["journal repaired: a write cut short by a power cut "
                             "(journal.sqlite3-journal) was rolled back: nothing acknowledged "
                             "was in it"], (number, notes)
        else:
            _starts_and_keeps(state, [])
    assert hot >= 1  # the brick the issue found is among them (the 4th flush)


@needs_strace
def test_emulate_on_a_bricked_box_comes_up_and_says_it(tmp_path: Path) -> None:
    """``emulate`` used to exit ("the journal is read-only") here."""
    state = next(s for s in (_older_cut(tmp_path, n) for n in range(1, 9))
                 if hot_journal(s / JOURNAL_NAME))
    done = subprocess.run(
        [sys.executable, "-m", "firmware", "emulate", "--state-dir", str(state)],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=60, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "140", "LINES": "45"})
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr and b"read-only" not in done.stderr
    assert b"Journal repaired" in done.stdout


def test_a_journal_another_user_made_is_no_permission_not_read_only(tmp_path: Path) -> None:
    """SQLite opens a journal this user may not write read-only, and refuses
    the write (SQLITE_READONLY): the card is not read-only, the permission
    is named."""
    if not is_root():
        pytest.skip("making a journal another user cannot write needs root")
    top = Path(tempfile.mkdtemp(prefix="euchre-perm-"))  # (pytest's own is root's alone)
    try:
        state = top / "state"
        state.mkdir()
        Store(state).close()  # root's journal (0644)
        for path in (top, state):
            path.chmod(0o777)
        message = _open_as_nobody(state)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    assert "read-only" not in message, message
    assert message.startswith(f"no permission to write {state / JOURNAL_NAME}"), message


def _open_as_nobody(state: Path) -> str:
    """What a write to the journal in ``state`` says to a forked child that
    became nobody."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: another user
        code = 1
        try:
            os.close(read)
            os.setgid(65534)
            os.setuid(65534)
            try:
                store = Store(state)
                try:
                    store.new_game(["players N=Nora"])
                    message = "written"
                finally:
                    store.close()
            except Exception as error:  # noqa: BLE001 - the test reads what it says
                message = f"{type(error).__name__ if not isinstance(error, JournalError) else ''}"
                message += str(error)
            os.write(write, message.encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        message = answer.read().decode()
    os.waitpid(pid, 0)
    return message
