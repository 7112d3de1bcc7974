"""Killed processes lose nothing acknowledged (SPEC §7, issue acceptance).

The referee runs as a separate process (``crash_child.py``) entering random
legal lines (bids, tricks, claims, reneges, new games, undos) that this test
sends on its stdin; it prints ``ACK`` after each ``Referee.enter``/``undo``
returned.  The test SIGKILLs it at random moments — while it boots and opens
the journal, 0-5 ms after a batch of lines was written to it (mid-commit),
or 0-5 ms after the j-th ACK — and then checks the journal:

- it passes SQLite's ``quick_check`` and every stored game replays;
- everything entered at the table (all games' lines, setup lines left out)
  up to the record of acknowledged lines (``journal.acks``) is a prefix of
  what was sent, at least as long as what was acknowledged;
- each ACK's ``(game, line number, text)`` is in the journal, forever after;
- a new game confirmed after a win is acknowledged while staged (``ACK
  <game> staged <line>``: kept in the finished game's flow, no line until its
  first real entry, and its UNDO journals nothing): the journal's table lines
  count it, and the next start must resume it (its ``START ... staged``);
- the next process resumes without a notice (nothing moved aside), but for
  "Entry left out" when the kill came between a commit and its record: that
  line was never acknowledged, and the start leaves it out and says so.

``CRASH_KILLS`` sets the number of kills (default 200); ``CRASH_SEED`` the
seed; ``CRASH_REPORT=FILE`` writes the figures as JSON.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest
from support.crash_child import (
    Model,
    make_config,
    resumed_model,
    setup_lines,
    staged_line,
    stored_games,
    table_lines,
)

from euchre_core import replay
from euchre_core.log import HEADER
from firmware.journal import ACKS_NAME, read_acks

CHILD = Path(__file__).resolve().parents[1] / "support" / "crash_child.py"
KILLS = int(os.environ.get("CRASH_KILLS", "200"))
SEED = int(os.environ.get("CRASH_SEED", str(random.SystemRandom().randrange(1 << 30))))


@dataclass
class Figures:
    kills: int = 0
    kills_at_boot: int = 0
    kills_after_write: int = 0
    kills_after_ack: int = 0
    lines_sent: int = 0
    acknowledged: int = 0
    committed_unacknowledged: int = 0
    """Killed between the record of the commit and the ACK: the kill landed
    mid-entry, the entry kept."""
    left_out: int = 0
    """Killed between the commit and its record: never acknowledged, left out
    at the next start (and said)."""
    sent_not_committed: int = 0
    """Killed before the commit finished (allowed: never acknowledged)."""
    lost: int = 0
    """Acknowledged but not in the journal afterwards: must stay 0."""
    games: int = 0
    undos: int = 0
    staged: int = 0
    """New games after a win acknowledged while staged (in the finished
    game's flow, no line yet)."""
    seconds: float = 0.0


class Child:
    """One referee process: its stdin as a pipe, its stdout read by a thread."""

    def __init__(self, pid: int, stdin_fd: int, stdout_fd: int) -> None:
        self.pid = pid
        self.reaped = False
        self.stdin_fd = stdin_fd
        self.lines: list[str] = []
        self.changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, args=(stdout_fd,), daemon=True)
        self._reader.start()

    def _read(self, fd: int) -> None:
        with open(fd, encoding="utf-8") as stream:
            for line in stream:
                with self.changed:
                    self.lines.append(line.rstrip("\n"))
                    self.changed.notify_all()

    def wait_for(self, predicate, timeout: float = 15.0) -> bool:  # type: ignore[no-untyped-def]
        with self.changed:
            return self.changed.wait_for(lambda: predicate(self.lines), timeout)

    def send(self, lines: list[str]) -> None:
        os.write(self.stdin_fd, "".join(line + "\n" for line in lines).encode())

    def finish(self) -> list[str]:
        """After the kill: every line it printed (the pipe is drained to EOF)."""
        os.close(self.stdin_fd)
        self._reader.join(10)
        assert not self._reader.is_alive(), "child's stdout never closed"
        return self.lines


class Zygote:
    """crash_child.py --zygote: forks a fresh referee process per request."""

    def __init__(self, state_dir: Path) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.control = ours
        self.process = subprocess.Popen(
            [sys.executable, str(CHILD), "--zygote", str(theirs.fileno()), str(state_dir)],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
        )
        theirs.close()
        self.control.settimeout(30)

    def spawn(self) -> Child:
        child_in_r, child_in_w = os.pipe()
        child_out_r, child_out_w = os.pipe()
        socket.send_fds(self.control, [b"spawn"], [child_in_r, child_out_w])
        os.close(child_in_r)
        os.close(child_out_w)
        answer = self.control.recv(64).decode()
        assert answer.startswith("PID "), answer
        return Child(int(answer.split()[1]), child_in_w, child_out_r)

    def reap(self, child: Child) -> None:
        self.control.sendall(f"reap {child.pid}".encode())
        assert self.control.recv(64) == b"REAPED"
        child.reaped = True

    def close(self, child: Child | None = None) -> None:
        """Stop the zygote; a child not yet reaped (a failed check) is killed
        first, by its pid, which cannot have been reused while unreaped."""
        if child is not None and not child.reaped:
            os.kill(child.pid, signal.SIGKILL)
            self.reap(child)
        self.control.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _confirmed(state_dir: Path) -> tuple[list[tuple[int, list[str]]], int]:
    """The stored games as a start resumes them: the lines up to the record
    of acknowledged lines (those beyond it are left out); and how many
    lines lie beyond it."""
    games = stored_games(state_dir)
    record = read_acks(state_dir / ACKS_NAME)
    total = sum(len(lines) for _, lines in games)
    if record is None or record.problem is not None or record.lines >= total:
        return games, 0
    kept, left = [], record.lines
    for game_id, lines in games:
        if left <= 0:
            break
        kept.append((game_id, lines[:left]))
        left -= len(lines)
    return kept, total - record.lines


def _check_journal(state_dir: Path, forms: list[list[str]], acked: int,
                   acks: list[tuple[int, int | str, str]]
                   ) -> tuple[list[tuple[int, list[str]]], str | None, int, int]:
    """The journal after a kill: returns (games as a start resumes them, the
    new game staged in the newest one's flow, how many lines of the batch it
    holds, lines a start leaves out).

    ``forms[k]``: everything entered at the table, as the journal holds it,
    once the batch's first ``k`` lines are in (:attr:`Model.table`); the
    journal holds one of them with ``k`` at least ``acked`` (the lines
    acknowledged in the batch).  Not a prefix of the lines sent: a new game
    after a win is staged in the finished game's flow, and its UNDO takes
    the staged line away (journalling nothing) instead of adding ``undo``."""
    games, beyond = _confirmed(state_dir)
    staged = staged_line(state_dir, games)
    truth = table_lines(games) + ([staged] if staged is not None else [])
    held = [k for k in range(acked, len(forms)) if forms[k] == truth]
    assert held, (
        f"the journal is not what the table entered with at least {acked} of the batch's "
        f"lines:\n{truth[-5:]}\nvs\n{forms[acked][-5:]}"
    )
    by_id = dict(games)
    for game_id, number, text in acks:
        if isinstance(number, int):  # a stored line stays where it was acknowledged
            assert number <= len(by_id.get(game_id, ())), (game_id, number, text)
            assert by_id[game_id][number - 1] == text, (game_id, number, text)
    for game_id, lines in games:
        result = replay("\n".join([HEADER, *lines]) + "\n")
        assert result.error is None, f"game {game_id} does not replay: {result.error}"
    return games, staged, held[-1], beyond


def _first_line_fits(first: str, beyond: int) -> None:
    """A start's first line: START, or the notice of the lines it left out
    when the journal held lines beyond its record."""
    if first.startswith("NOTICE"):
        assert beyond and first.startswith("NOTICE Entry left out | "), (beyond, first)
    else:
        assert first.startswith("START"), first


def run_crash_test(state_dir: Path, kills: int, seed: int) -> Figures:
    rng = random.Random(seed)
    config = make_config(state_dir)
    setup = setup_lines(config)
    figures = Figures()
    started = time.monotonic()
    zygote = Zygote(state_dir)
    sent_total: list[str] = []  # the lines sent that the journal took, in order
    acks_ever: list[tuple[int, int | str, str]] = []
    model = Model(setup)
    child: Child | None = None
    beyond = 0
    staged: str | None = None  # the new game staged in the journal: a start resumes it
    try:
        while figures.kills < kills:
            child = zygote.spawn()
            scenario = rng.random()
            batch: list[str] = []
            forms = [list(model.table)]  # the journal's table lines after k of the batch
            ack_target = 0
            if scenario < 0.12:  # while it boots: opens the journal, resumes
                figures.kills_at_boot += 1
                time.sleep(rng.uniform(0, 0.004))
            else:
                assert child.wait_for(lambda lines: any(
                    line.startswith(("START", "NOTICE")) for line in lines)), child.lines
                _first_line_fits(child.lines[0], beyond)
                start = next(line for line in child.lines if line.startswith("START"))
                assert start.partition(" staged ")[2] == (staged or ""), (start, staged)
                for _ in range(rng.randint(1, 30)):  # the model runs ahead of the
                    line = model.random_line(rng)  # child; rebuilt from the journal below
                    model.apply(line)
                    batch.append(line)
                    forms.append(list(model.table))
                child.send(batch)
                figures.lines_sent += len(batch)
                if scenario < 0.55:
                    figures.kills_after_write += 1
                else:
                    figures.kills_after_ack += 1
                    ack_target = rng.randint(0, len(batch))
                    assert child.wait_for(lambda lines, target=ack_target: sum(
                        line.startswith("ACK") for line in lines) >= target), child.lines
                time.sleep(rng.uniform(0, 0.005))
            os.kill(child.pid, signal.SIGKILL)
            zygote.reap(child)
            figures.kills += 1
            output = child.finish()
            refused = [line for line in output if line.startswith("REFUSED")]
            assert not refused, refused
            if output:
                _first_line_fits(output[0], beyond)
            acks: list[tuple[int, int | str, str]] = []
            for line in output:
                if line.startswith("ACK "):
                    _, game_id, number, text = line.split(" ", 3)
                    acks.append((int(game_id), int(number) if number.isdigit() else number,
                                 text))
            assert [text for _, _, text in acks] == batch[: len(acks)], "ACKs out of order"
            acks_ever.extend(acks)
            games, staged, committed, beyond = _check_journal(state_dir, forms, len(acks),
                                                              acks_ever)
            figures.left_out += beyond
            figures.acknowledged += len(acks)
            figures.staged += sum(number == "staged" for _, number, _ in acks)
            figures.committed_unacknowledged += committed - len(acks)
            figures.sent_not_committed += len(batch) - committed
            sent_total += batch[:committed]
            model = resumed_model(setup, games, staged)
        figures.games = len(stored_games(state_dir))
        figures.undos = sent_total.count("undo")
        # A last, gentle start: the journal resumes with no notice (but the left-out one).
        child = zygote.spawn()
        assert child.wait_for(lambda lines: any(line.startswith("START") for line in lines))
        child.send([])
        os.close(child.stdin_fd)
        child._reader.join(10)
        zygote.reap(child)
        _first_line_fits(child.lines[0], beyond)
    finally:
        zygote.close(child)
    figures.lost = 0  # every check above passed: no acknowledged entry is missing
    leftovers = sorted(p.name for p in state_dir.iterdir()
                       if ".unreadable-" in p.name or ".orphan-" in p.name)
    assert not leftovers, f"journal was moved aside: {leftovers}"
    figures.seconds = round(time.monotonic() - started, 1)
    return figures


@contextmanager
def seed_on_failure(**settings: int) -> Iterator[None]:
    """Any failure inside (an assertion, an error from sqlite3, a timeout)
    is reported with the settings that replay it."""
    try:
        yield
    except Exception as error:
        given = " ".join(f"{key}={value}" for key, value in settings.items())
        raise AssertionError(f"{given}: {type(error).__name__}: {error}") from error


def test_sigkill_at_random_moments_loses_no_acknowledged_entry(tmp_path: Path) -> None:
    with seed_on_failure(CRASH_SEED=SEED, CRASH_KILLS=KILLS):
        figures = run_crash_test(tmp_path / "state", KILLS, SEED)
    report = {"seed": SEED, **asdict(figures)}
    print("\ncrash test:", json.dumps(report))
    if os.environ.get("CRASH_REPORT"):
        Path(os.environ["CRASH_REPORT"]).write_text(json.dumps(report, indent=2) + "\n")
    assert figures.kills == KILLS
    assert figures.lost == 0
    assert figures.acknowledged > 0
    # The kills did land between the commit and the ACK and before the commit.
    if KILLS >= 100:
        assert figures.committed_unacknowledged > 0, report
        assert figures.sent_not_committed > 0, report


@pytest.mark.parametrize("kills", [6])
def test_sigkill_of_a_fresh_interpreter(tmp_path: Path, kills: int) -> None:
    """The plain mode: ``python crash_child.py STATE_DIR`` as a new process
    each time (imports included), killed while it boots or works."""
    with seed_on_failure(CRASH_SEED=SEED):
        _fresh_interpreters(tmp_path / "state", kills)


def _fresh_interpreters(state_dir: Path, kills: int) -> None:
    rng = random.Random(SEED)
    setup = setup_lines(make_config(state_dir))
    model = Model(setup)
    beyond = 0
    for round_ in range(kills):
        process = subprocess.Popen(
            [sys.executable, str(CHILD), str(state_dir)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        assert process.stdin is not None and process.stdout is not None
        first = process.stdout.readline()
        _first_line_fits(first, beyond)
        while not first.startswith("START"):
            first = process.stdout.readline()
        forms, batch = [list(model.table)], []
        for _ in range(20):
            line = model.random_line(rng)
            model.apply(line)
            batch.append(line)
            forms.append(list(model.table))
        process.stdin.write("".join(line + "\n" for line in batch))
        process.stdin.flush()
        if round_ % 2:
            process.stdout.readline()  # one ACK, then kill a few ms later
        time.sleep(rng.uniform(0, 0.005))
        process.send_signal(signal.SIGKILL)
        rest, _ = process.communicate()
        acked = sum(line.startswith("ACK") for line in rest.splitlines()) + round_ % 2
        games, staged, _, beyond = _check_journal(state_dir, forms, acked, [])
        model = resumed_model(setup, games, staged)
    process = subprocess.run([sys.executable, str(CHILD), str(state_dir)], input="",
                             capture_output=True, text=True, timeout=30)
    _first_line_fits(process.stdout, beyond)
    assert "START" in process.stdout, process.stdout + process.stderr
