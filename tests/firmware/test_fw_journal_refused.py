"""A refused entry is never part of the game (issue 21, defect 1; SPEC §7).

A commit whose flush the card refuses (EIO, ENOSPC) is refused on the screen
and the link, but SQLite has already written its frames to the -wal, whole:
it does not count them, but reads them back after a restart.  And a commit
whose record of acknowledged lines (``journal.acks``) cannot be flushed was
acknowledged all the same.  Now every acknowledgement waits for both flushes,
a failing record refuses the entry too (and the commit is taken back), and at
a start the lines beyond the record — never acknowledged — are left out,
written aside first and said in one line.

Faults injected for real: ``strace -e inject=fdatasync:error=EIO:when=N`` on a
referee process (``crash_child.py``; ``emulate --pty-link`` end to end), at
each flush of a short game, once or from then on; the referee killed with
SIGKILL after its last answer, then started again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from support.crash_child import open_referee, table_lines
from support.journal_kit import is_root
from support.serial_kit import Host
from support.strace_kit import (
    ROOT,
    child_session,
    commit_of,
    flushes,
    strace_command,
    strace_problem,
)

from firmware.cli import main as cli_main
from firmware.journal import ACKS_NAME, JOURNAL_NAME, LOCK_NAME, read_acks

# The SPEC's example hand: E orders up hearts alone and is euchred.
HAND = ["game dealer=N", "upcard 9H", "order E alone", "trick E", "trick S", "trick N",
        "trick E", "trick S"]
EIO = "the card gives read/write errors: nothing new can be kept"

pytestmark = pytest.mark.skipif(strace_problem() is not None,
                                reason=strace_problem() or "")


def resumed(state: Path) -> tuple[list[str], list[str], tuple[str, tuple[str, ...]] | None]:
    """Start a referee on ``state`` as at boot: (the lines entered at the
    table, every game together; its notes; the notice on its screen)."""
    referee = open_referee(state)
    try:
        store = referee.store
        games = [(info.id, store.lines(info.id)) for info in store.games()]
        return table_lines(games), referee.notes, referee.notice
    finally:
        referee.store.close()


def clean_trace(tmp_path: Path, lines: list[str]) -> list:  # type: ignore[type-arg]
    """The flushes of the session with nothing injected."""
    log = tmp_path / "clean.strace"
    session = child_session(tmp_path / "clean", lines, log)
    assert session.started and session.acked == lines
    return flushes(log)


def test_a_refused_commit_left_in_the_wal_never_comes_back(tmp_path: Path) -> None:
    """The issue's case: the third entry's commit flush fails, the referee is
    killed, started again: the entry is not in the game, and that is said."""
    lines = HAND[:3]
    number = commit_of(clean_trace(tmp_path, lines), 4)  # 1: the game, 2-4: the entries
    state, log = tmp_path / "state", tmp_path / "eio.strace"
    session = child_session(state, lines, log, f"fdatasync:error=EIO:when={number}")
    assert session.acked == lines[:2]
    assert session.answers[2] == (lines[2], f"REFUSED {EIO}")
    (injected,) = [f for f in flushes(log) if f.injected]
    assert injected.name == JOURNAL_NAME + "-wal"
    # Its frames are in the -wal, whole: a reader that recovers the -wal sees it.
    assert (state / (JOURNAL_NAME + "-wal")).stat().st_size > 0
    kept = [JOURNAL_NAME, JOURNAL_NAME + "-wal", ACKS_NAME]  # (the -shm is SQLite's index)
    before = {name: (state / name).read_bytes() for name in kept}
    listing = sorted(p.name for p in state.iterdir())
    # games (read-only) never shows it either, and changes nothing.
    assert cli_main(["games", "--state-dir", str(state), "--export", "--raw"]) == 0
    assert {name: (state / name).read_bytes() for name in kept} == before
    assert sorted(p.name for p in state.iterdir()) == listing
    entered, notes, notice = resumed(state)
    assert entered == lines[:2]
    (note,) = notes
    assert note.startswith("the last entry (order E alone) was never confirmed (refused, or "
                           "the power went first): left out; kept in journal.sqlite3.unconfirmed-")
    assert notice is not None and notice[0] == "Entry left out"
    assert "The last entry (order E alone) was never confirmed" in notice[1]
    (kept,) = state.glob("journal.sqlite3.unconfirmed-*.reason")
    assert kept.read_text().splitlines()[-1] == "game 1 line 4: order E alone"
    record = read_acks(state / ACKS_NAME)
    assert record is not None and record.lines == 3 and record.problem is None
    assert resumed(state) == (lines[:2], [], None)  # said once; the next start is plain


def test_games_shows_no_refused_entry_and_backs_up_without_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = HAND[:3]
    number = commit_of(clean_trace(tmp_path, lines), 4)
    state = tmp_path / "state"
    child_session(state, lines, tmp_path / "eio.strace", f"fdatasync:error=EIO:when={number}")
    capsys.readouterr()
    assert cli_main(["games", "--state-dir", str(state), "--export", "--raw"]) == 0
    shown = capsys.readouterr()
    out = shown.out
    assert out.splitlines()[-2:] == lines[:2] and "order E alone" not in out
    assert shown.err.splitlines() == [  # said, not hidden silently (games never writes)
        "euchre-referee: warning: the last entry (order E alone) was never confirmed "
        "(refused, or the power went first): not shown"]
    backup = tmp_path / "backup.sqlite3"
    assert cli_main(["games", "--state-dir", str(state), "--backup", str(backup)]) == 0
    restored = tmp_path / "restored"
    restored.mkdir()
    backup.rename(restored / JOURNAL_NAME)
    assert resumed(restored)[0] == lines[:2]


def test_a_record_that_cannot_be_flushed_refuses_the_entry(tmp_path: Path) -> None:
    """The commit was made, its record of acknowledged lines not: refused
    (it used to be acknowledged, 'the record only lags'), taken back at once,
    and the entries after it build on the game without it."""
    lines = [*HAND[:3], HAND[2], HAND[3]]  # the table enters the refused order again
    number = commit_of(clean_trace(tmp_path, HAND[:4]), 4) + 1  # the third entry's record
    state, log = tmp_path / "state", tmp_path / "eio.strace"
    session = child_session(state, lines, log, f"fdatasync:error=EIO:when={number}")
    (injected,) = [f for f in flushes(log) if f.injected]
    assert injected.name == ACKS_NAME
    assert session.answers[2] == (lines[2], f"REFUSED {EIO}")
    assert session.acked == HAND[:4]
    assert resumed(state) == (HAND[:4], [], None)  # taken back at once: nothing to say


def test_a_record_failing_while_the_take_back_fails_too(tmp_path: Path) -> None:
    """A card that refuses every flush from the record on: the entry and all
    after it are refused (each write would take the refused commit back
    first: none is kept), and the next start finds the game without it
    (the take-back's frames came through, or it is left out and said)."""
    lines = [*HAND[:2], HAND[1], HAND[1]]  # the table tries the refused upcard again
    number = commit_of(clean_trace(tmp_path, HAND[:2]), 3) + 1  # the second entry's record
    state, log = tmp_path / "state", tmp_path / "eio.strace"
    session = child_session(state, lines, log, f"fdatasync:error=EIO:when={number}+")
    assert session.acked == lines[:1]
    assert [answer for _, answer in session.answers[1:]] == [f"REFUSED {EIO}"] * 3
    tried = [f for f in flushes(log) if f.injected]
    assert tried[0].name == ACKS_NAME and len(tried) >= 4  # the record, then writes tried
    entered, notes, notice = resumed(state)
    assert entered == lines[:1]
    assert notes in ([], [notes[0]]) and all("(upcard 9H) was never confirmed" in note
                                             for note in notes)
    assert (notice is None) == (not notes)


@pytest.mark.parametrize("call", ["fdatasync", "fsync"])
@pytest.mark.parametrize("error", ["EIO", "ENOSPC"])
@pytest.mark.parametrize("persistent", [False, True], ids=["once", "from then on"])
def test_every_flush_of_a_game_refused_no_refused_entry_comes_back(
        tmp_path: Path, call: str, error: str, persistent: bool) -> None:
    """A flush refused at each flush of a first start and a short game in
    turn (once, or from then on), the referee killed after its last answer
    (or dead at a start it could not make) and started again: the game is
    exactly the acknowledged entries, every time; whatever was left out is
    said, and nothing else is."""
    lines = HAND[:5]
    total = len([f for f in clean_trace(tmp_path, lines) if f.call == call])
    outcomes: Counter[str] = Counter()
    for number in range(1, total + 1):
        state = tmp_path / f"state-{number}"
        inject = f"{call}:error={error}:when={number}{'+' if persistent else ''}"
        session = child_session(state, lines, tmp_path / f"{number}.strace", inject)
        acked = session.acked if session.started else []
        entered, notes, notice = resumed(state)
        assert entered == acked, (number, session.answers, entered)
        assert all(note.startswith("the last ") and "never confirmed" in note
                   for note in notes), (number, notes)
        assert (notice is None) == (not notes), (number, notice)
        outcomes["refused" if session.refused or not session.started else "all acknowledged"] += 1
        outcomes["left out at the start" if notes else "nothing to leave out"] += 1
    # The sweep did refuse: entries (fdatasync), the start (fsync; a directory's is best effort).
    assert outcomes["refused"] >= (len(lines) if call == "fdatasync" else 1)
    print(f"{call} {error} {'from then on' if persistent else 'once'}: {total} cases: "
          f"{dict(outcomes)}")


def _emulate(state: Path, link: Path, log: Path | None, inject: str | None = None
             ) -> subprocess.Popen[bytes]:
    """``emulate --pty-link`` (under strace when ``log``), its input kept open."""
    command = [sys.executable, "-m", "firmware", "emulate", "--state-dir", str(state),
               "--pty-link", str(link)]
    return subprocess.Popen(
        [*strace_command(log, inject), *command] if log is not None else command,
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "140", "LINES": "45"})


def _link_up(process: subprocess.Popen[bytes]) -> None:
    assert process.stderr is not None
    line = process.stderr.readline().decode()
    assert "serial link on" in line, line


def test_over_the_link_a_refused_entry_is_refused_and_stays_out(tmp_path: Path) -> None:
    """End to end as the issue found it: ``emulate --pty-link``, three
    ``enter``s over the link with every flush from the third's commit on
    refused, ``export`` while it runs, kill -9, start again: ``status``."""
    if not is_root() and not os.access("/dev/ptmx", os.W_OK):
        pytest.skip("no pseudo-terminals here")
    entries = ["game dealer=N", "make E H", "trick E"]
    link = tmp_path / "link"

    def session(state: Path, log: Path, inject: str | None) -> list[list[str]]:
        process = _emulate(state, link, log, inject)
        try:
            _link_up(process)
            host = Host(str(link), busy_s=10)
            try:
                answers = [host.ask(f"enter {entry}", timeout=30) for entry in entries]
                answers.append(host.ask("export", timeout=30))
            finally:
                host.close()
            pid = int((state / LOCK_NAME).read_text().split()[0])
            os.kill(pid, signal.SIGKILL)
            process.wait(30)
            return answers
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()

    clean = tmp_path / "clean.strace"
    session(tmp_path / "clean", clean, None)  # traced, nothing refused
    number = commit_of(flushes(clean), 4)
    state = tmp_path / "state"
    answers = session(state, tmp_path / "eio.strace", f"fdatasync:error=EIO:when={number}+")
    assert [a[0].split()[0] for a in answers[:3]] == ["ok", "ok", "error"]
    assert answers[2] == [f"error {EIO}"]
    assert "trick E" not in answers[3]  # never read back while it runs
    process = _emulate(state, link, None)
    try:
        _link_up(process)
        host = Host(str(link), busy_s=10)
        try:
            status = json.loads(host.ask("status json", timeout=30)[0][3:])
            exported = host.ask("export", timeout=30)
        finally:
            host.close()
    finally:
        process.terminate()
        process.wait(30)
    (notice,) = status["notices"]
    assert notice.startswith("the last entry (trick E) was never confirmed")
    assert "trick E" not in exported and "make E H" in exported
