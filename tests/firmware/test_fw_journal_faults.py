"""Journal faults injected for real (issue 10, items 1-3 and 9; SPEC §7).

- A write that fails — a full card (a small tmpfs), a read-only card (a
  read-only bind mount; ``chmod`` for a user who is not root), the journal
  locked by another process holding ``BEGIN IMMEDIATE`` — is refused on the
  screen and over the serial link with its cause in words, changes nothing,
  keeps the referee running, and works again once the fault is gone.
- A journal that cannot be opened at start: one line naming the cause, no
  traceback (``emulate``, ``run``'s patient open).
- Damage to the journal's files (bytes flipped in the -wal and the main file,
  truncation) is detected: the referee resumes intact, or says so on the
  screen and in ``status`` with the damaged files kept byte for byte.
- One referee per state directory; ``games`` never writes; ``games --backup``;
  ``replay load`` stores each game of a log, one main-loop job per game.
"""

from __future__ import annotations

import json
import os
import random
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.clock import FakeClock
from support.crash_child import Model, open_referee, setup_lines, stored_games
from support.journal_kit import (
    CHILD,
    HOLDER,
    INTACT,
    REPORTED,
    fill,
    flip_bytes,
    is_root,
    journal_bytes,
    judge,
    session,
    small_card,
    truncate,
)
from support.serial_kit import FULL_GAME, Device, Host

from euchre_core.log import parse_line
from firmware.app import Referee
from firmware.cli import main as cli_main
from firmware.config import Config
from firmware.journal import ACKS_NAME, JOURNAL_NAME, LOCK_NAME, JournalError, JournalInUse, Store
from firmware.pi.run import open_journal
from firmware.pi.systemd import Notifier

ROOT = Path(__file__).resolve().parents[2]
FULL = "the card is full: nothing new can be kept"
READ_ONLY = "the card is read-only: nothing new can be kept"
LOCKED = "the journal is locked by another program: nothing new can be kept"
# The SPEC's example hand: E orders up hearts alone and is euchred.
EXAMPLE = ["game dealer=N", "upcard 9H", "order E alone", "trick E", "trick S", "trick N",
           "trick E", "trick S"]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, check=False)


def enter_until_refused(referee: Referee, rng: random.Random, limit: int
                        ) -> tuple[list[str], str | None]:
    """Enter random legal lines until one is refused; (the acknowledged, the reason)."""
    model = Model(setup_lines(referee.config))
    model.game, model.base = referee.game, referee.base_entries
    acked = []
    for _ in range(limit):
        line = model.random_line(rng, undo_p=0.0)
        before = [entry.line() for entry in referee.game.entries]
        reason = referee.enter(parse_line(line))  # type: ignore[arg-type]
        if reason is not None:
            assert [entry.line() for entry in referee.game.entries] == before  # unchanged
            return acked, reason
        acked.append(line)
        model.game = referee.game
    return acked, None


def table(state_dir: Path) -> list[list[str]]:
    return [lines for _, lines in stored_games(state_dir)]


# --- item 1: a write that fails ------------------------------------------------------


@pytest.fixture
def card(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs standing in for the SD card (root only)."""
    with small_card(tmp_path) as mount:
        yield mount


def test_a_full_card_refuses_the_entry_in_words_and_recovers(card: Path) -> None:
    state = card / "state"
    clock = FakeClock()
    referee = open_referee(state, clock=clock)
    rng = random.Random(1)
    before, reason = enter_until_refused(referee, rng, 5)
    assert reason is None
    filler = fill(card)
    acked, reason = enter_until_refused(referee, rng, 400)
    assert reason == FULL
    assert referee.view().message == FULL and referee.view().message_is_error
    assert f"journal writes failing: {FULL}" in referee.notices()
    clock.advance(referee.config.result_s)  # a hand's result, if one is showing, has gone
    referee.press("UNDO")  # still running: every press is answered, none crashes
    assert referee.view().message == FULL
    kept = referee.store.lines(referee.game_id)
    assert kept[len(kept) - len(before + acked):] == before + acked  # nothing refused kept
    assert referee.retry_journal() is False  # too soon, and still full
    filler.unlink()
    clock.advance(Referee.JOURNAL_PROBE_S)
    assert referee.retry_journal() is True  # the fault is gone: it says so
    assert referee.notices() == [] and referee.journal_fault is None
    more, reason = enter_until_refused(referee, rng, 3)
    assert reason is None
    referee.store.close()
    again = open_referee(state)
    assert again.notice is None
    assert again.store.lines(again.game_id)[-len(before + acked + more):] == before + acked + more
    again.store.close()


@pytest.fixture
def read_only_later(tmp_path: Path) -> Iterator[tuple[Path, Any]]:
    """A state directory and a function that bind-mounts it read-only over
    itself (``True``) or back read-write (``False``), as the kernel does to a
    failing SD card.  Root only."""
    if not is_root():
        pytest.skip("a read-only bind mount needs root")
    state = tmp_path / "state"
    state.mkdir()
    done = _run("mount", "--bind", str(state), str(state))
    if done.returncode:
        pytest.skip(f"cannot bind-mount here: {done.stderr.strip()}")

    def set_read_only(on: bool) -> None:
        flag = "ro" if on else "rw"
        result = _run("mount", "-o", f"remount,bind,{flag}", str(state))
        assert result.returncode == 0, result.stderr

    yield state, set_read_only
    _run("umount", "-l", str(state))


@pytest.fixture
def ext4_card(tmp_path: Path) -> Iterator[tuple[Path, Any]]:
    """An ext4 image on a loop device, and a function that makes the kernel
    turn it read-only at once, open files and all (``mount -o remount,abort``:
    what ``errors=remount-ro`` does to a failing SD card).  Root only."""
    if not is_root():
        pytest.skip("a loop-mounted ext4 image needs root")
    image, mount = tmp_path / "card.img", tmp_path / "card"
    mount.mkdir()
    with open(image, "wb") as handle:
        handle.truncate(16 << 20)
    made = _run("mkfs.ext4", "-q", str(image))
    if made.returncode:
        pytest.skip(f"mkfs.ext4 is not usable here: {made.stderr.strip()}")
    done = _run("mount", "-o", "loop", str(image), str(mount))
    if done.returncode:
        pytest.skip(f"cannot loop-mount an image here: {done.stderr.strip()}")

    def go_read_only() -> None:
        result = _run("mount", "-o", "remount,abort", str(mount))
        assert result.returncode == 0, result.stderr

    def replace_card() -> None:
        """Unmount, check the file system, mount again (the next boot)."""
        assert _run("umount", str(mount)).returncode == 0
        _run("e2fsck", "-fy", str(image))
        assert _run("mount", "-o", "loop", str(image), str(mount)).returncode == 0

    yield mount, (go_read_only, replace_card)
    _run("umount", "-l", str(mount))


def test_a_card_gone_read_only_refuses_the_entry_and_keeps_running(
        ext4_card: tuple[Path, Any]) -> None:
    card, (go_read_only, replace_card) = ext4_card
    state = card / "state"
    clock = FakeClock()
    referee = open_referee(state, clock=clock)
    rng = random.Random(2)
    before, _ = enter_until_refused(referee, rng, 6)
    go_read_only()
    acked, reason = enter_until_refused(referee, rng, 50)
    assert (acked, reason) == ([], READ_ONLY)
    assert referee.undo() == READ_ONLY
    referee.press("UNDO")  # refused in words, no crash
    assert referee.view().message == READ_ONLY
    assert referee.notices() == [f"journal writes failing: {READ_ONLY}"]
    clock.advance(Referee.JOURNAL_PROBE_S)
    assert referee.retry_journal() is False  # it tries again, and it is still read-only
    referee.store.close()
    replace_card()
    again = open_referee(state)
    assert again.notice is None
    assert again.store.lines(again.game_id)[-len(before):] == before  # every ack is there
    again.store.close()


def test_a_read_only_card_at_start_is_one_line_and_the_referee_waits(
        read_only_later: tuple[Path, Any], capsys: pytest.CaptureFixture[str]) -> None:
    state, set_read_only = read_only_later
    set_read_only(True)
    shown: list[Any] = []

    class Frames:
        def show(self, image: Any) -> int:
            shown.append(image)
            return 0

    attempts = []

    def stopping() -> bool:
        attempts.append(1)
        return len(attempts) > 3

    slept: list[float] = []
    assert open_journal(state, Frames(), Notifier(None), stopping, retry_s=1.0,
                        sleep=slept.append) is None
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("euchre-referee: journal not opened: the card "
                                               "is read-only"), err
    assert "Traceback" not in err[0] and len(shown) == 1  # said once, shown once
    assert sum(slept) >= 1.0  # it waited to try again: no restart loop
    set_read_only(False)
    store = open_journal(state, Frames(), Notifier(None), lambda: False)
    assert store is not None
    store.close()


def _emulate(state: Path, *, user: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "firmware", "emulate", "--state-dir", str(state)],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, cwd=ROOT,
        user=user, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_emulate_on_a_read_only_state_dir_says_one_line(
        read_only_later: tuple[Path, Any]) -> None:
    """No game to show: the cause in one line, then it waits as the device
    does, until the input ends (firmware.start; a kept game is shown instead:
    test_fw_journal_readonly_start.py)."""
    state, set_read_only = read_only_later
    set_read_only(True)
    done = _emulate(state)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        done.stderr.splitlines()[0], "euchre-referee: stopped before the journal opened"]
    assert done.stderr.startswith("euchre-referee: journal not opened: the card is read-only")


def _open_as(user_id: int, state: Path) -> str:
    """What ``Store(state)`` says to a process running as ``user_id`` (a
    forked child that has dropped root: the interpreter here lives in root's
    home, so a fresh one could not start as that user)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            os.close(read)
            os.setgid(user_id)
            os.setuid(user_id)
            try:
                Store(state).close()
                message = "opened"
            except JournalError as error:
                message = str(error)
            os.write(write, message.encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        message = answer.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return message


def test_a_state_dir_the_user_may_not_write_is_named(tmp_path: Path) -> None:
    """``chmod`` and a user who is not root (root writes anyway)."""
    if not is_root():
        pytest.skip("running as another user needs root")
    top = Path(tempfile.mkdtemp(prefix="euchre-perm-"))
    try:
        top.chmod(0o755)
        state = top / "state"
        state.mkdir(mode=0o555)
        state.chmod(0o555)
        message = _open_as(65534, state)  # nobody
        assert message.startswith(f"no permission to write in {state}: "), message
        state.chmod(0o777)
        assert _open_as(65534, state) == "opened"
    finally:
        (top / "state").chmod(stat.S_IRWXU)
        _run("rm", "-rf", str(top))


def test_a_journal_locked_by_another_process_is_refused_over_the_link(tmp_path: Path) -> None:
    device = Device(tmp_path)
    host = Host(device.path)
    try:
        assert host.ask("enter game dealer=N")[0].startswith("ok ")
        journal = device.journal()
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / JOURNAL_NAME)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        try:
            assert host.ask("enter make N S", timeout=30) == [f"error {LOCKED}"]
            assert host.ask("players N=Nora", timeout=30) == [f"error {LOCKED}"]
            status = json.loads(host.ask("status json", timeout=30)[0][3:])
            assert status["notices"] == [f"journal writes failing: {LOCKED}"]
            text = host.ask("status", timeout=30)
            assert f"notice=journal writes failing: {LOCKED}" in text
            assert device.journal() == journal  # nothing kept
        finally:
            holder.communicate("")
        assert host.ask("enter make N S", timeout=30)[0].startswith("ok make N S")
        status = json.loads(host.ask("status json")[0][3:])
        assert "notices" not in status and status["maker"] == "N"
    finally:
        host.close()
        device.close()


# --- item 3: one referee per state directory -----------------------------------------


def test_a_second_referee_on_the_same_state_dir_is_refused_naming_the_first(
        tmp_path: Path) -> None:
    first = subprocess.Popen([sys.executable, str(CHILD), str(tmp_path)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert first.stdout is not None
    try:
        assert first.stdout.readline().startswith("START")
        with pytest.raises(JournalInUse, match=f"pid {first.pid}: .*crash_child.py"):
            Store(tmp_path)
        done = _emulate(tmp_path)  # it waits as the device does, until its input ends
        assert done.returncode == 1
        assert done.stderr.strip().splitlines() == [
            f"euchre-referee: journal not opened: {tmp_path} is in use by another referee "
            f"(pid {first.pid}: {sys.executable} {CHILD} {tmp_path}): "
            "one referee per state directory; trying again every 5 s",
            "euchre-referee: stopped before the journal opened"]
        assert (tmp_path / LOCK_NAME).read_text().strip() == str(first.pid)
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate()
    store = Store(tmp_path)  # the lock died with it
    store.close()
    store = Store(tmp_path)  # and a closed store lets go of it
    with pytest.raises(JournalInUse, match=f"pid {os.getpid()}"):
        Store(tmp_path)
    store.close()


# --- item 2: damage is detected, kept, reported ---------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_flipped_bytes_in_the_wal_are_detected_never_resumed_silently(
        tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    acknowledged = session(tmp_path, 17, rng, kill=True)
    wal = tmp_path / (JOURNAL_NAME + "-wal")
    assert wal.stat().st_size > 0
    flip_bytes(wal, rng, rng.randint(1, 8))
    damaged = journal_bytes(tmp_path)
    verdict = judge(tmp_path, acknowledged, damaged)
    assert verdict.kind in (INTACT, REPORTED), f"seed {seed}: {verdict}"
    if verdict.kind == REPORTED:
        assert "journal damaged" in verdict.detail


def test_one_changed_byte_in_a_stored_line_is_caught(tmp_path: Path) -> None:
    """The tester's case: ``trick E`` became ``trick S`` in the main file."""
    acknowledged = session(tmp_path, 0, random.Random(0), kill=False, lines=EXAMPLE)
    path = tmp_path / JOURNAL_NAME
    data = path.read_bytes()
    assert not (tmp_path / (JOURNAL_NAME + "-wal")).exists() and b"trick E" in data
    path.write_bytes(data.replace(b"trick E", b"trick S"))
    damaged = journal_bytes(tmp_path)
    referee = open_referee(tmp_path)
    try:
        assert referee.notice is not None and referee.notice[0] == "Journal damaged"
        recovered = referee.store.lines(referee.game_id)
        assert recovered == acknowledged[-1][1][: len(recovered)]  # a prefix, unaltered
        assert len(recovered) < len(acknowledged[-1][1])
        damage = referee.store.damage
        assert damage is not None and damage.kept_as.read_bytes() == damaged[""]
        assert (tmp_path / (damage.kept_as.name + ".reason")).read_text().startswith("game 1")
        assert Path(str(damage.kept_as) + ".acks").exists()
    finally:
        referee.store.close()


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("fault", ["flip main", "truncate main", "truncate wal"])
def test_damage_to_any_journal_file_is_detected(tmp_path: Path, fault: str, seed: int) -> None:
    rng = random.Random(seed)
    acknowledged = session(tmp_path, 25, rng, kill=fault.endswith("wal"))
    target = tmp_path / (JOURNAL_NAME + ("-wal" if fault.endswith("wal") else ""))
    if fault.startswith("flip"):
        flip_bytes(target, rng, rng.randint(1, 8), start=100)
    else:
        truncate(target, rng)
    verdict = judge(tmp_path, acknowledged, journal_bytes(tmp_path))
    assert verdict.kind in (INTACT, REPORTED), f"{fault} seed {seed}: {verdict}"


def test_a_deleted_journal_is_noticed_by_its_record(tmp_path: Path) -> None:
    session(tmp_path, 10, random.Random(3), kill=False)
    (tmp_path / JOURNAL_NAME).unlink()
    referee = open_referee(tmp_path)
    try:
        assert referee.notice is not None and referee.notice[0] == "Journal unreadable"
        assert referee.notices()[0].startswith("journal unreadable: moved aside")
        moved = referee.store.moved_aside
        assert moved is not None and Path(str(moved) + ".acks").exists()
    finally:
        referee.store.close()


def test_the_damage_is_in_status_over_the_link(tmp_path: Path) -> None:
    acknowledged = session(tmp_path, 17, random.Random(5), kill=True)
    wal = tmp_path / (JOURNAL_NAME + "-wal")
    flip_bytes(wal, random.Random(5), 1, start=0)  # the WAL header: SQLite drops all of it
    device = Device(tmp_path)
    host = Host(device.path)
    try:
        status = json.loads(host.ask("status json")[0][3:])
        (notice,) = status["notices"]
        assert notice.startswith("journal damaged (") and "recovered" in notice
        assert f"of {sum(len(lines) for _, lines in acknowledged)} lines" in notice
        assert f"notice={notice}" in host.ask("status")
    finally:
        host.close()
        device.close()


# --- games: read-only, and --backup ---------------------------------------------------


def test_games_never_writes_and_backs_up_consistently(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    acknowledged = session(tmp_path, 30, random.Random(6), kill=True)
    names = [JOURNAL_NAME, JOURNAL_NAME + "-wal", ACKS_NAME]
    before = {name: (tmp_path / name).read_bytes() for name in names}
    listing = sorted(p.name for p in tmp_path.iterdir())
    assert cli_main(["games", "--state-dir", str(tmp_path)]) == 0
    assert cli_main(["games", "--state-dir", str(tmp_path), "--export", "--raw"]) == 0
    backup = tmp_path.parent / "backup.sqlite3"
    assert cli_main(["games", "--state-dir", str(tmp_path), "--backup", str(backup)]) == 0
    assert {name: (tmp_path / name).read_bytes() for name in names} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == listing  # nothing renamed or made
    out = capsys.readouterr()
    assert out.out.splitlines()[-len(acknowledged[-1][1]):] == acknowledged[-1][1]
    restored = tmp_path.parent / "restored"
    restored.mkdir()
    backup.rename(restored / JOURNAL_NAME)  # a backup is one whole file
    assert table(restored) == [lines for _, lines in acknowledged]


# --- item 9: replay load of several games --------------------------------------------


class _StoringThreads:
    """Records the thread of each ``Store.new_game`` of a device's journal."""

    def __init__(self, device: Device) -> None:
        self.threads: list[str] = []
        store = device.referee.store
        new_game = store.new_game

        def spy(lines: Any = (), **options: Any) -> int:
            self.threads.append(threading.current_thread().name)
            return new_game(lines, **options)

        store.new_game = spy  # type: ignore[method-assign]
        self.main = device.thread.name


def test_replay_load_stores_each_game_off_the_main_loop(tmp_path: Path) -> None:
    one = FULL_GAME.read_text(encoding="utf-8")
    (dealer_line,) = [line for line in one.splitlines() if line.startswith("game ")]
    body = [line for line in one.splitlines()[1:] if line and not line.startswith("game ")]
    games = 12
    text = "\n".join(["euchre-log 1", *(line for index in range(games) for line in
                                       [dealer_line, *body])]) + "\n"
    device = Device(tmp_path)
    storing = _StoringThreads(device)
    host = Host(device.path)
    try:
        count = len(text.splitlines())
        assert host.ask(f"replay load {count}")[0].startswith("ok replay")
        host.write(text.encode())
        frame = host.answer(timeout=60)
        ids = ", ".join(str(n) for n in range(2, 2 + games))
        assert frame[-2] == f"loaded as games {ids}: game {1 + games} is now the current game"
        # The storing work is never the main loop's (its watchdog pings go on).
        assert len(storing.threads) == games and storing.main not in storing.threads
        listed = host.ask("games")
        assert len(listed) == 2 + 1 + games
        for game_id in range(2, 2 + games):
            exported = host.ask(f"export {game_id}")
            assert exported[-2].startswith("winner "), exported[-3:]
        status = json.loads(host.ask("status json")[0][3:])
        assert (status["game_id"], status["winner"]) == (1 + games, "NS")
    finally:
        host.close()
        device.close()


def test_a_long_single_game_is_stored_off_the_main_loop(
        tmp_path: Path) -> None:
    """50,000 lines of one game (names set over and over): stored by the
    reader thread, while the main loop goes on."""
    lines = ["euchre-log 1", *(f"players N=Nora{index % 10}" for index in range(50_000)),
             "game dealer=N"]
    device = Device(tmp_path)
    storing = _StoringThreads(device)
    host = Host(device.path)
    try:
        assert host.ask(f"replay load {len(lines)}")[0].startswith("ok replay")
        host.write(("\n".join(lines) + "\n").encode())
        frame = host.answer(timeout=120)
        assert frame[-2] == "loaded as game 2: it is now the current game"
        assert storing.threads and storing.main not in storing.threads
        assert len(device.journal()) == len(lines) - 1
        assert host.ask("enter make N S")[0].startswith("ok make N S")
    finally:
        host.close()
        device.close()


def test_a_directory_in_the_journal_s_place_is_named(tmp_path: Path) -> None:
    referee = Referee(Config(state_dir=tmp_path), Store(tmp_path), renderer=lambda view: view)
    try:
        assert referee.notices() == []  # a fresh journal has nothing to say
    finally:
        referee.store.close()
    other = tmp_path / "other"
    (other / JOURNAL_NAME).mkdir(parents=True)
    with pytest.raises(JournalError, match=f"^{other / JOURNAL_NAME} is a directory"):
        Store(other)


LEGACY_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    created REAL NOT NULL,
    flow TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS lines (
    game_id INTEGER NOT NULL REFERENCES games(id),
    seq INTEGER NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (game_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
"""
"""The schema as the store made it before lines carried CRCs (52de668); the
audit takes only the tables as the store makes (or made) them."""


def test_a_journal_from_before_the_crcs_is_upgraded_in_place(tmp_path: Path) -> None:
    import sqlite3

    lines = ["players N=Ragnar E=Sigríður S=South W=Anna", *EXAMPLE]
    db = sqlite3.connect(tmp_path / JOURNAL_NAME)
    db.executescript(LEGACY_SCHEMA)
    db.execute("INSERT INTO games (id, created) VALUES (1, 0)")
    db.executemany("INSERT INTO lines VALUES (1, ?, ?)", list(enumerate(lines)))
    db.execute("INSERT INTO settings VALUES ('rules', 'rules target=7')")
    db.commit()
    db.close()
    for _ in range(2):  # upgraded, then checked like any journal
        referee = open_referee(tmp_path)
        try:
            assert referee.notice is None and referee.notices() == []
            assert referee.store.lines(1) == lines and referee.game_id == 1
            assert referee.config.rules.target == 7
        finally:
            referee.store.close()
    rows = sqlite3.connect(tmp_path / JOURNAL_NAME).execute(
        "SELECT crc FROM lines ORDER BY seq").fetchall()
    assert all(crc for (crc,) in rows)
