"""Journal faults injected for real (the journal-fault tests and ``bench/faults.py``).

- :func:`session` runs the referee as its own process (``crash_child.py``),
  enters random legal lines until each is acknowledged, then SIGKILLs it (the
  -wal left as a power cut leaves it) or lets it stop cleanly (checkpointed:
  everything in the main file).
- :func:`flip_bytes` / :func:`truncate` damage a file in place.
- :func:`judge` resumes a referee on the damaged journal and says what came of
  it: ``intact`` (every acknowledged line, no notice), ``reported`` (a notice on
  the screen and in ``notices()``, the damaged files kept byte for byte, and
  whatever was recovered a prefix of each game as acknowledged), ``silently
  wrong`` (anything else that resumed) or ``crashed`` (an exception).
- :func:`rechain` forges a journal's CRCs after an edit (to test what lies
  beyond the CRC checks).
"""

from __future__ import annotations

import errno
import os
import random
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from firmware.journal import ACKS_NAME, JOURNAL_NAME, chain_crc, reset_acks
from support.crash_child import Model, make_config, open_referee, setup_lines, stored_games

CHILD = Path(__file__).resolve().with_name("crash_child.py")
Games = list[tuple[int, list[str]]]

INTACT, REPORTED, SILENTLY_WRONG, CRASHED = "intact", "reported", "silently wrong", "crashed"


def session(state_dir: Path, count: int, rng: random.Random, *, kill: bool,
            lines: list[str] | None = None, timeout: float = 60.0) -> Games:
    """Enter ``count`` random legal lines (or ``lines``) through a referee
    process, each acknowledged; then SIGKILL it (``kill``) or close its input
    (a clean stop).  Returns every stored game's lines: what was acknowledged."""
    if lines is None:
        setup = setup_lines(make_config(state_dir))
        before = stored_games(state_dir)
        model = Model(setup, before[-1][1][len(setup):] if before else [])
        lines = []
        for _ in range(count):
            line = model.random_line(rng, undo_p=0.05)
            model.apply(line)
            lines.append(line)
    count = len(lines)
    process = subprocess.Popen([sys.executable, str(CHILD), str(state_dir)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    try:
        first = process.stdout.readline()
        assert first.startswith("START"), first
        process.stdin.write("".join(line + "\n" for line in lines))
        process.stdin.flush()
        acks = 0
        while acks < count:
            answer = process.stdout.readline()
            assert answer.startswith("ACK"), answer
            acks += 1
        if kill:
            process.send_signal(signal.SIGKILL)
        else:
            process.stdin.close()
        process.wait(timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return stored_games(state_dir)


def flip_bytes(path: Path, rng: random.Random, count: int, *, start: int = 0) -> list[int]:
    """XOR ``count`` random bytes of ``path`` at or after ``start`` with a
    random non-zero mask; returns the offsets."""
    data = bytearray(path.read_bytes())
    offsets = [rng.randrange(start, len(data)) for _ in range(count)]
    for offset in offsets:
        data[offset] ^= rng.randrange(1, 256)
    path.write_bytes(bytes(data))
    return offsets


def truncate(path: Path, rng: random.Random) -> int:
    """Cut ``path`` to a random shorter length; returns it."""
    size = rng.randrange(0, path.stat().st_size)
    with open(path, "r+b") as handle:
        handle.truncate(size)
    return size


def journal_bytes(state_dir: Path) -> dict[str, bytes]:
    """The journal's main file and -wal as they are (before a referee opens them)."""
    out = {}
    for suffix in ("", "-wal"):
        path = Path(state_dir) / (JOURNAL_NAME + suffix)
        if path.exists():
            out[suffix] = path.read_bytes()
    return out


@dataclass(frozen=True)
class Verdict:
    kind: str
    detail: str = ""


def judge(state_dir: Path, acknowledged: Games, damaged: dict[str, bytes]) -> Verdict:
    """Resume a referee on ``state_dir`` and compare with what was acknowledged."""
    try:
        referee = open_referee(state_dir)
    except Exception as error:  # noqa: BLE001 - the verdict names it
        return Verdict(CRASHED, f"{type(error).__name__}: {error}")
    try:
        store = referee.store
        games = [(info.id, store.lines(info.id)) for info in store.games()]
        notes = referee.notices()
        if referee.notice is None and not notes:
            if games == acknowledged or _same_but_new_game(games, acknowledged):
                return Verdict(INTACT)
            return Verdict(SILENTLY_WRONG, f"resumed without a notice: {games[-1:]} vs "
                                           f"{acknowledged[-1:]}")
        if referee.notice is None or not notes:
            return Verdict(SILENTLY_WRONG, f"screen {referee.notice} but status {notes}")
        kept = store.damage.kept_as if store.damage is not None else store.moved_aside
        for suffix, data in damaged.items():
            if kept is None or Path(str(kept) + suffix).read_bytes() != data:
                return Verdict(SILENTLY_WRONG, f"journal{suffix} not kept byte for byte")
        original = dict(acknowledged)
        for game_id, lines in games:
            if game_id in original and lines != original[game_id][: len(lines)]:
                return Verdict(SILENTLY_WRONG, f"game {game_id} recovered altered")
        return Verdict(REPORTED, "; ".join(notes))
    except Exception as error:  # noqa: BLE001
        return Verdict(CRASHED, f"{type(error).__name__}: {error}")
    finally:
        referee.store.close()


def _same_but_new_game(games: Games, acknowledged: Games) -> bool:
    """The referee started a fresh game on top (the last one was over)."""
    return games[: len(acknowledged)] == acknowledged and len(games) == len(acknowledged) + 1


def rechain(state_dir: Path) -> int:
    """Recompute every line's chained CRC and the record of acknowledged lines
    as if the journal had been written as it is now (a forger's edit: the
    journal's own checks cannot tell).  Returns the number of lines."""
    db = sqlite3.connect(Path(state_dir) / JOURNAL_NAME)
    try:
        previous = 0
        rows = db.execute("SELECT game_id, seq, CAST(text AS BLOB) FROM lines "
                          "ORDER BY game_id, seq").fetchall()
        for game_id, seq, text in rows:
            previous = chain_crc(previous, game_id, seq, bytes(text))
            db.execute("UPDATE lines SET crc=? WHERE game_id=? AND seq=?",
                       (previous, game_id, seq))
        db.commit()
    finally:
        db.close()
    reset_acks(Path(state_dir) / ACKS_NAME, len(rows), previous)
    return len(rows)


def is_root() -> bool:
    return os.geteuid() == 0


@contextmanager
def small_card(directory: Path, size: str = "1m") -> Iterator[Path]:
    """A ``size`` tmpfs mounted at ``directory/card``, standing in for the SD
    card (a real full disk with :func:`fill`).  Mounting needs root: the
    test skips otherwise, saying so."""
    if not is_root():
        pytest.skip("mounting a tmpfs needs root")
    mount = Path(directory) / "card"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)


def fill(directory: Path) -> Path:
    """Fill the file system of ``directory`` to the last byte; returns the
    filler (unlink it and the space is back)."""
    filler = Path(directory) / "filler"
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(bytes(4096))
                handle.flush()
        except OSError as error:
            assert error.errno == errno.ENOSPC
    return filler


HOLDER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.read()
db.execute("ROLLBACK")
"""
"""A second process holding the journal's write lock: ``python -c HOLDER PATH``
prints ``held`` once it has it and lets go when its standard input ends."""
