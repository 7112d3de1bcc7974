"""Faults injected for real, and what the referee made of each (SPEC §7, issue 21).

One table, a row per fault: cases; reported (a notice on the screen or a note
in ``status``); then the failures, each of which must be 0:

- *silently wrong*: after the fault (and a restart) the game is not what was
  acknowledged and nothing says so, or damaged files were not kept byte for
  byte, or a line was recovered altered;
- *crashed*: a traceback, or an exit not as designed (a hang; an exit code
  other than 0 where no kill was injected), in the run or in the restart;
- *lost acknowledged*: an acknowledged line is not in the journal after the
  restart (for a flipped bit: a line whose stored bytes the flip left intact
  somewhere in the files, since only a line whose every copy the flip
  touched cannot be salvaged);
- *refused-but-kept*: a line refused at the time (the journal's refusal) is
  in the game after the restart;
- *stuck*: once the fault is gone the restarted referee does not take an
  entry (its journal not opened, opened read-only, or the entry refused).

The columns overlap: a case counts in each that applies.

The faults:

- **system calls** (``strace -f -e inject=SYSCALL:error=E:when=N`` or
  ``:signal=SIGKILL:when=N``, only on the calls that touch the state
  directory's files, ``-P``): for each kind (openat, read, pread64, write,
  pwrite64, fsync, fdatasync, ftruncate, rename, unlink, mkdir), each call
  number N of a run, and each of EIO, ENOSPC, EROFS and SIGKILL.  A run is
  the referee started as ``run`` and ``emulate`` start it (``--child``:
  :func:`firmware.start.open_referee`, or ``open_journal`` before it) on a
  fresh state directory (*first start*) and on one holding a game (*restart*),
  then a short game entered line by line (each ``ACK`` or ``REFUSED``, as
  ``tests/support/crash_child.py`` answers), then a clean stop (standard
  error a file in the state directory, as under ``2>>file``).  The calls are
  first counted under strace; then one case per call number per kind per
  fault; each case is judged by restarting the referee (``--restart``: the
  same start, its games as JSON, and one new entry).
- **bit flips**: one bit of a stored file (``journal.sqlite3`` after a clean
  stop; its ``-wal``, ``-shm`` and ``journal.acks`` after a kill; a club
  box's ``club.json`` against a real mosquitto and director, see
  ``tests/support/club_kit.py``), a seeded sample of bit positions.
- the faults this bench ran before: flipped bytes and truncation of the
  ``-wal`` and the main file, a full card (a tmpfs), a read-only card (ext4,
  ``remount,abort``), the journal locked (``BEGIN IMMEDIATE``), a second
  referee, SIGKILL during entry.

Needs strace (the system-call rows), mosquitto (club.json), root (the tmpfs
and the ext4 image); rows that cannot run say why.  ``--budget`` bounds the
whole run (cases are run in a seeded order across kinds, so a run cut short
still samples each row; the table says how many ran); ``--quick`` is a small
sample for the test.

    .venv/bin/python bench/faults.py [--quick] [--budget S] [--jobs N]
        [--flips N] [--trials N] [--game-lines N] [--only TEXT] [--json]
"""

from __future__ import annotations

import argparse
import errno
import json
import logging
import os
import queue
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))  # support.*, after the packages (tests/drivers is tests)

from support.crash_child import (  # noqa: E402
    Model,
    make_config,
    null_renderer,
    open_referee,
    setup_lines,
    stored_games,
)
from support.journal_kit import (  # noqa: E402
    CHILD,
    CRASHED,
    HOLDER,
    REPORTED,
    SILENTLY_WRONG,
    flip_bytes,
    journal_bytes,
    judge,
    session,
    truncate,
)

from euchre_core.events import Undo  # noqa: E402
from euchre_core.lines import strip_line  # noqa: E402
from euchre_core.log import parse_line  # noqa: E402
from firmware.app import Referee  # noqa: E402
from firmware.journal import ACKS_NAME, JOURNAL_NAME, LOCK_NAME, JournalInUse, Store  # noqa: E402

SETUP_PREFIXES = ("players ", "rules")
KINDS = ("openat", "read", "pread64", "write", "pwrite64", "fsync", "fdatasync", "ftruncate",
         "rename", "unlink", "mkdir")
"""The system calls injected (``--kinds`` for others, e.g. fcntl, close)."""
ERRORS = ("EIO", "ENOSPC", "EROFS")
FAULTS = (*ERRORS, "SIGKILL")
SCENARIOS = ("first start", "restart")
STDERR_NAME = "referee.log"
"""The child's standard error, in its state directory (a full card under ``2>>file``)."""
OPEN_WAIT_S = 4.0
"""How long a start keeps trying a journal that does not open (a fault is one call)."""
ANSWER_S = 30.0
"""How long the driver waits for each answer of a child (else: hung)."""
COLUMNS = ("cases", "reported", "silently wrong", "crashed", "lost acknowledged",
           "refused-but-kept", "stuck")
FAILURES = COLUMNS[2:]


# --- the verdict --------------------------------------------------------------------------


@dataclass
class Outcome:
    """What one case came to; each flag but ``reported`` is a failure."""

    reported: bool = False
    wrong: bool = False
    crashed: bool = False
    lost: bool = False
    refused_kept: bool = False
    stuck: bool = False
    detail: list[str] = field(default_factory=list)

    def fail(self, flag: str, why: str) -> Outcome:
        setattr(self, flag, True)
        self.detail.append(why)
        return self

    @property
    def failed(self) -> bool:
        return self.wrong or self.crashed or self.lost or self.refused_kept or self.stuck

    def counts(self) -> dict[str, int]:
        return {"cases": 1, "reported": int(self.reported), "silently wrong": int(self.wrong),
                "crashed": int(self.crashed), "lost acknowledged": int(self.lost),
                "refused-but-kept": int(self.refused_kept), "stuck": int(self.stuck)}


def from_kind(kind: str, why: str = "") -> Outcome:
    """An :class:`Outcome` from the verdicts of ``journal_kit`` and the older trials."""
    outcome = Outcome(reported=kind == REPORTED)
    if kind == SILENTLY_WRONG:
        outcome.fail("wrong", why or "silently wrong")
    elif kind == CRASHED:
        outcome.fail("crashed", why or "crashed")
    return outcome


def table_lines(games: Iterable[tuple[int, list[str]]]) -> list[str]:
    """Every game's lines in order, without each game's set-up lines."""
    return [line for _, lines in games for line in lines if not line.startswith(SETUP_PREFIXES)]


def subsequence(needles: list[str], haystack: list[str]) -> tuple[bool, list[int]]:
    """Is ``needles`` a subsequence of ``haystack`` (matched greedily)?  And
    the positions of ``haystack`` left unmatched."""
    matched: set[int] = set()
    position = 0
    for needle in needles:
        while position < len(haystack) and haystack[position] != needle:
            position += 1
        if position == len(haystack):
            return False, []
        matched.add(position)
        position += 1
    return True, [i for i in range(len(haystack)) if i not in matched]


def compare_lines(actual: list[str], acknowledged: list[str], refused: list[str],
                  in_flight: str | None, outcome: Outcome) -> None:
    """The journal's lines after a restart against what was acknowledged,
    refused, and sent without an answer (``in_flight``: may be there or not)."""
    whole, extra = subsequence(acknowledged, actual)
    if not whole:
        missing = next((line for n, line in enumerate(acknowledged)
                        if not subsequence(acknowledged[: n + 1], actual)[0]), "?")
        outcome.fail("lost", f"acknowledged {len(acknowledged)} lines, the journal holds "
                     f"{len(actual)}; lost from {missing!r} on")
        return
    unclaimed = list(refused)
    for index in extra:
        line = actual[index]
        if in_flight is not None and line == in_flight and index == len(actual) - 1:
            continue  # sent, no answer: it may be kept or not
        if line in unclaimed:
            unclaimed.remove(line)
            outcome.fail("refused_kept", f"refused {line!r} is line {index + 1} of the game")
        else:
            outcome.fail("wrong", f"line {index + 1}, {line!r}, was never acknowledged")


# --- the referee as a child process: as run and emulate start it ------------------------------


class _NullDisplay:
    is_open = True

    def show(self, frame: Any) -> None:
        return None


class _NullNotifier:
    interval = None

    def ready(self) -> None: ...

    def status(self, text: str) -> None: ...

    def watchdog(self) -> None: ...


def start_referee(state_dir: Path, wait_s: float = OPEN_WAIT_S) -> Referee | None:
    """The referee on ``state_dir`` as ``run`` and ``emulate`` start it (the
    journal retried every 0.2 s for ``wait_s`` s); None if it did not start."""
    from firmware import start

    deadline = time.monotonic() + wait_s
    config = make_config(state_dir)

    def make(store: Store) -> Referee:
        return Referee(config, store, renderer=null_renderer)

    def stopping() -> bool:
        return time.monotonic() > deadline

    opener = getattr(start, "open_referee", None)
    if opener is not None:
        referee: Referee | None = opener(state_dir, _NullDisplay(), _NullNotifier(), stopping,
                                         make, retry_s=0.2)
        return referee
    store = start.open_journal(state_dir, _NullDisplay(), _NullNotifier(),  # type: ignore[arg-type]
                               stopping, retry_s=0.2)
    return None if store is None else make(store)


def _guard_stderr() -> None:
    try:
        from firmware import stderr  # type: ignore[attr-defined]
    except ImportError:
        return
    stderr.guard()


def child_main(state_dir: Path) -> int:
    """``--child DIR``: start, say ``START {json}``, then enter each line of
    standard input and answer ``ACK line`` or ``REFUSED reason``; a clean
    stop at its end."""
    from firmware.start import journal_keeper

    _guard_stderr()
    referee = start_referee(state_dir)
    out = sys.stdout
    if referee is None:
        out.write("UNOPENED\n")
        out.flush()
        print("euchre-referee: stopped", file=sys.stderr)
        return 0
    keep = journal_keeper(referee, retry_s=0.2)
    for note in referee.notes:
        print(f"euchre-referee: {note}", file=sys.stderr)
    out.write("START " + json.dumps({"pid": os.getpid(), "game": referee.game_id,
                                     "lines": referee.store.lines(
        referee.game_id), "notice": referee.notice, "notes": referee.notices()}) + "\n")
    out.flush()
    for raw in sys.stdin:
        line = raw.strip()
        if not line:
            continue
        keep()
        referee.retry_journal()
        event = parse_line(strip_line(line))
        reason = referee.undo() if isinstance(event, Undo) else referee.enter(
            event)  # type: ignore[arg-type]
        out.write(f"ACK {line}\n" if reason is None else f"REFUSED {reason}\n")
        out.flush()
    referee.store.close()
    print("euchre-referee: stopped", file=sys.stderr)
    return 0


def restart_report(state_dir: Path) -> dict[str, Any]:
    """``--restart DIR``: the referee started again (as ``run``), what it
    shows and keeps, and whether it takes a new entry."""
    from firmware.start import KeptJournal, journal_keeper

    referee = start_referee(state_dir)
    if referee is None:
        return {"opened": False}
    journal_keeper(referee, retry_s=0.2, say=lambda text: None)
    store = referee.store
    damage = getattr(store, "damage", None)
    kept = getattr(damage, "kept_as", None) or getattr(store, "moved_aside", None)
    report: dict[str, Any] = {
        "opened": True, "read_only": isinstance(store, KeptJournal),
        "notice": referee.notice, "notes": referee.notices(),
        "games": [[info.id, store.lines(info.id)] for info in store.games()],
        "kept_as": None if kept is None else str(kept),
    }
    legal = referee.game.legal_entries()
    report["takes"] = referee.enter(legal[0]) if legal else "no legal entry"
    store.close()
    return report


# --- system calls, injected -----------------------------------------------------------


@dataclass
class Transcript:
    """What a child said: its start, each line sent and its answer."""

    started: dict[str, Any] | None = None
    sent: list[tuple[str, str]] = field(default_factory=list)
    """(line, "ack" | "refused" | "none": no answer, the child gone)."""
    reasons: list[str] = field(default_factory=list)
    returncode: int | None = None
    killed: bool = False
    """Killed by the driver (SIGKILL at a refusal)."""
    hung: str = ""
    stderr: str = ""


def _read_lines(stream: Any, into: queue.Queue[str | None]) -> None:
    for line in stream:
        into.put(line.rstrip("\n"))
    into.put(None)


def drive(command: list[str], state_dir: Path, count: int, seed: int, *,
          kill_on_refusal: bool = False) -> Transcript:
    """Run ``command`` (the child, under strace or not) and enter up to
    ``count`` legal lines, each chosen from what was acknowledged so far;
    ``kill_on_refusal``: SIGKILL the child at its first refusal (a power cut
    right after a refused entry), else a clean stop at the end."""
    transcript = Transcript()
    log_path = state_dir / STDERR_NAME
    with open(log_path, "ab") as log:
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=log, text=True, cwd=ROOT)
    assert child.stdin is not None and child.stdout is not None
    answers: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_read_lines, args=(child.stdout, answers), daemon=True).start()

    def answer() -> str | None:
        try:
            return answers.get(timeout=ANSWER_S)
        except queue.Empty:
            transcript.hung = f"no answer within {ANSWER_S:g} s"
            return None

    try:
        first = answer()
        if first is not None and first.startswith("START "):
            transcript.started = json.loads(first[len("START "):])
            lines = transcript.started["lines"]
            setup = [line for line in lines if line.startswith(SETUP_PREFIXES)]
            model = Model(setup, lines[len(setup):])
            rng = random.Random(seed)
            for _ in range(count):
                line = model.random_line(rng, undo_p=0.1)
                try:
                    child.stdin.write(line + "\n")
                    child.stdin.flush()
                except OSError:
                    break
                said = answer()
                if said is None:
                    transcript.sent.append((line, "none"))
                    break
                if said.startswith("ACK "):
                    transcript.sent.append((line, "ack"))
                    model.apply(line)
                else:
                    transcript.sent.append((line, "refused"))
                    transcript.reasons.append(said)
                    if kill_on_refusal:
                        os.kill(transcript.started["pid"], signal.SIGKILL)
                        transcript.killed = True
                        break
        try:
            child.stdin.close()
        except OSError:
            pass
        try:
            transcript.returncode = child.wait(ANSWER_S)
        except subprocess.TimeoutExpired:
            transcript.hung = transcript.hung or f"no exit within {ANSWER_S:g} s"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    transcript.stderr = log_path.read_text(errors="replace") if log_path.exists() else ""
    return transcript


def restart(state_dir: Path) -> dict[str, Any]:
    """:func:`restart_report` in a process of its own (a crash is a verdict)."""
    result = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--restart",
                             str(state_dir)], capture_output=True, text=True,
                            timeout=120, cwd=ROOT, check=False)
    last = result.stdout.strip().splitlines()[-1:] if result.stdout.strip() else []
    if result.returncode != 0 or not last:
        return {"error": f"exit {result.returncode}: {result.stderr.strip()[-300:]}"}
    report: dict[str, Any] = json.loads(last[0])
    return report


def judge_run(prior: list[str], transcript: Transcript, report: dict[str, Any], *,
              killed: bool) -> Outcome:
    """One system-call case: the run's transcript and the restart's report
    against what was acknowledged (``prior``: the lines acknowledged before
    the run, set-up lines left out)."""
    outcome = Outcome()
    if transcript.hung:
        outcome.fail("crashed", f"the run hung: {transcript.hung}")
    elif "Traceback" in transcript.stderr:
        outcome.fail("crashed", "the run: " + transcript.stderr.strip().splitlines()[-1])
    elif not killed and not transcript.killed and transcript.returncode != 0:
        outcome.fail("crashed", f"the run exited {transcript.returncode}")
    if "error" in report:
        return outcome.fail("crashed", f"the restart: {report['error']}")
    if not report.get("opened"):
        return outcome.fail("stuck", "the restart did not open the journal")
    outcome.reported = bool(report["notice"] or report["notes"])
    if report["read_only"]:
        outcome.fail("stuck", "the restart opened the journal read-only")
    if report["takes"] is not None:
        outcome.fail("stuck", f"the restart refused an entry: {report['takes']}")
    acknowledged = prior + [line for line, said in transcript.sent if said == "ack"]
    refused = [line for line, said in transcript.sent if said == "refused"]
    in_flight = next((line for line, said in transcript.sent if said == "none"), None)
    before = len(outcome.detail)
    compare_lines(table_lines(report["games"]), acknowledged, refused, in_flight, outcome)
    if len(outcome.detail) > before and not outcome.reported:
        outcome.wrong = True  # (each failure above is said in detail)
    return outcome


@dataclass
class Scenario:
    """A state directory to start from, and the lines acknowledged in it."""

    name: str
    state: Path
    prior: list[str]
    counts: dict[str, int] = field(default_factory=dict)


def watched_paths(state_dir: Path) -> list[str]:
    """The paths strace injects into (``-P``): the state directory and its files."""
    names = [JOURNAL_NAME + suffix for suffix in ("", "-wal", "-shm", "-journal")]
    names += [ACKS_NAME, ACKS_NAME + ".new", LOCK_NAME, STDERR_NAME]
    return [str(state_dir), *(str(state_dir / name) for name in names)]


def child_command(state_dir: Path, trace: list[str]) -> list[str]:
    paths = [arg for path in watched_paths(state_dir) for arg in ("-P", path)]
    return ["strace", "-f", "-qq", *paths, *trace, sys.executable,
            str(Path(__file__).resolve()), "--child", str(state_dir)]


_CALL = re.compile(r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?(\w+)\(")


def count_calls(scenario: Scenario, workdir: Path, kinds: tuple[str, ...], lines: int,
                seed: int) -> dict[str, int]:
    """Each kind's calls on the state directory in one run without a fault."""
    state = workdir / "count" / "state"
    _copy_state(scenario.state, state)
    trace = workdir / "count" / "trace"
    transcript = drive(child_command(state, ["-o", str(trace), "-e",
                                             "trace=" + ",".join(kinds)]), state, lines, seed)
    if transcript.started is None or transcript.returncode != 0:
        raise RuntimeError(f"{scenario.name}: the run without a fault failed: "
                           f"{transcript.stderr[-500:]}")
    counts = dict.fromkeys(kinds, 0)
    for line in trace.read_text().splitlines():
        match = _CALL.match(line)
        if match and match.group(1) in counts:
            counts[match.group(1)] += 1
    shutil.rmtree(workdir / "count")
    return counts


def _copy_state(source: Path, target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    if source.exists():
        shutil.copytree(source, target)
    else:
        target.mkdir(parents=True)


def syscall_case(scenario: Scenario, kind: str, fault: str, number: int, workdir: Path,
                 lines: int, seed: int) -> Outcome:
    where = Path(tempfile.mkdtemp(prefix="case-", dir=workdir))
    try:
        state = where / "state"
        _copy_state(scenario.state, state)
        how = "signal=SIGKILL" if fault == "SIGKILL" else f"error={fault}"
        command = child_command(state, ["-o", "/dev/null", "-e", f"trace={kind}", "-e",
                                        f"inject={kind}:{how}:when={number}"])
        transcript = drive(command, state, lines, seed)
        outcome = judge_run(scenario.prior, transcript, restart(state),
                            killed=fault == "SIGKILL")
        if outcome.failed:
            then = "" if fault == "SIGKILL" else ", then a clean stop"
            outcome.detail.insert(0, f"{scenario.name}, {kind} call {number} {fault}{then}")
        if any(said == "refused" for _, said in transcript.sent):
            # Again, killed right after the refusal: the refused entry must not
            # come back from the files as they were left.
            _copy_state(scenario.state, state)
            again = drive(command, state, lines, seed, kill_on_refusal=True)
            killed = judge_run(scenario.prior, again, restart(state), killed=True)
            if killed.failed:
                outcome.detail.append(f"{scenario.name}, {kind} call {number} {fault}, "
                                      "killed at the refusal: " + "; ".join(killed.detail))
            for flag in ("reported", "wrong", "crashed", "lost", "refused_kept", "stuck"):
                setattr(outcome, flag, getattr(outcome, flag) or getattr(killed, flag))
        return outcome
    finally:
        shutil.rmtree(where, ignore_errors=True)


def prepare_scenarios(workdir: Path, seed: int) -> list[Scenario]:
    first = Scenario("first start", workdir / "scenario-first" / "state", [])
    held = workdir / "scenario-restart" / "state"
    held.mkdir(parents=True)
    games = session(held, 9, random.Random(f"{seed}-restart"), kill=False)
    (held / STDERR_NAME).unlink(missing_ok=True)
    return [first, Scenario("restart", held, table_lines(games))]


# --- bit flips ------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.append(0x80 | (value & 0x7F))
        value >>= 7
    return bytes(reversed(out))


def _serial(value: int | str) -> tuple[int, bytes]:
    if isinstance(value, str):
        data = value.encode("utf-8")
        return 13 + 2 * len(data), data
    if value in (0, 1):
        return 8 + value, b""
    for serial, size in ((1, 1), (2, 2), (3, 3), (4, 4), (5, 6), (6, 8)):
        if -(1 << (8 * size - 1)) <= value < (1 << (8 * size - 1)):
            return serial, value.to_bytes(size, "big", signed=True)
    raise ValueError(value)


def line_record(game_id: int, seq: int, text: str, crc: int) -> bytes:
    """The bytes SQLite stores for one row of ``lines`` (its record format)."""
    serials, body = zip(*(_serial(v) for v in (game_id, seq, text, crc)), strict=True)
    header = b"".join(_varint(s) for s in serials)
    size = len(header) + 1
    if size >= 128:
        size += 1
    return _varint(size) + header + b"".join(body)


@dataclass
class Stored:
    """A state directory after a session: its files, the acknowledged lines,
    and where each line's stored bytes are in the files."""

    state: Path
    acknowledged: list[tuple[int, list[str]]]
    copies: list[list[tuple[str, int, int]]]
    """Per acknowledged line (in order): (file, start, end) of each stored copy."""


def stored_copies(state: Path) -> list[list[tuple[str, int, int]]]:
    names = [name for name in (JOURNAL_NAME, JOURNAL_NAME + "-wal")
             if (state / name).exists()]
    data = {name: (state / name).read_bytes() for name in names}
    scratch = Path(tempfile.mkdtemp(prefix="copies-"))
    try:
        for name in (JOURNAL_NAME, JOURNAL_NAME + "-wal", JOURNAL_NAME + "-shm"):
            if (state / name).exists():
                shutil.copy2(state / name, scratch / name)
        db = sqlite3.connect((scratch / JOURNAL_NAME).as_uri() + "?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT game_id, seq, text, crc FROM lines "
                              "ORDER BY game_id, seq").fetchall()
        finally:
            db.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    copies = []
    for game_id, seq, text, crc in rows:
        record = line_record(game_id, seq, text, crc)
        found = []
        for name, blob in data.items():
            start = blob.find(record)
            while start >= 0:
                found.append((name, start, start + len(record)))
                start = blob.find(record, start + 1)
        copies.append(found)
    return copies


def store_session(workdir: Path, name: str, seed: int, *, kill: bool) -> Stored:
    state = workdir / name
    state.mkdir(parents=True)
    acknowledged = session(state, 40, random.Random(f"{seed}-{name}"), kill=kill)
    return Stored(state, acknowledged, stored_copies(state))


def judge_flip(stored: Stored, name: str, offset: int, damaged: bytes, state: Path,
               report: dict[str, Any]) -> Outcome:
    """One flipped bit at byte ``offset`` of file ``name``: the restart's
    report against what was acknowledged."""
    outcome = Outcome()
    if "error" in report:
        return outcome.fail("crashed", f"the restart: {report['error']}")
    if not report.get("opened"):
        return outcome.fail("stuck", "the restart did not open the journal")
    if report["read_only"]:
        outcome.fail("stuck", "the restart opened the journal read-only")
    if report["takes"] is not None:
        outcome.fail("stuck", f"the restart refused an entry: {report['takes']}")
    outcome.reported = bool(report["notice"] or report["notes"])
    games: list[tuple[int, list[str]]] = [(g, lines) for g, lines in report["games"]]
    acknowledged = stored.acknowledged
    if not outcome.reported:
        if games[: len(acknowledged)] != acknowledged or len(games) > len(acknowledged) + 1:
            outcome.fail("wrong", f"resumed without a notice: {table_lines(games)[-3:]} vs "
                         f"{table_lines(acknowledged)[-3:]}")
    else:
        kept = [p for p in state.iterdir() if p.name != name and p.is_file()]
        if not any(p.stat().st_size == len(damaged) and p.read_bytes() == damaged
                   for p in kept):
            outcome.fail("wrong", f"{name} not kept byte for byte")
        original = dict(acknowledged)
        for game_id, lines in games:
            if game_id in original and lines != original[game_id][: len(lines)]:
                outcome.fail("wrong", f"game {game_id} recovered altered")
    # Lost: an acknowledged line missing whose bytes survive somewhere.
    flat = [(game_id, seq, line) for game_id, lines in acknowledged
            for seq, line in enumerate(lines)]
    present = dict(games)
    lost = 0
    for (game_id, seq, line), copies in zip(flat, stored.copies, strict=False):
        held = present.get(game_id, [])
        if seq < len(held) and held[seq] == line:
            continue
        if any(not (file == name and start <= offset < end) for file, start, end in copies):
            lost += 1
    if lost:
        outcome.fail("lost", f"{lost} acknowledged lines intact in the files but not recovered")
    return outcome


def flip_case(stored: Stored, name: str, bit: int, workdir: Path) -> Outcome:
    where = Path(tempfile.mkdtemp(prefix="flip-", dir=workdir))
    try:
        state = where / "state"
        shutil.copytree(stored.state, state)
        path = state / name
        data = bytearray(path.read_bytes())
        data[bit // 8] ^= 1 << (bit % 8)
        path.write_bytes(bytes(data))
        outcome = judge_flip(stored, name, bit // 8, bytes(data), state, restart(state))
        if outcome.failed:
            outcome.detail.insert(0, f"{name} bit {bit}")
        return outcome
    finally:
        shutil.rmtree(where, ignore_errors=True)


# --- the faults this bench ran before ------------------------------------------------------


Trial = Callable[[Path, random.Random], "str | Outcome"]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, check=False)


def flip_wal(state: Path, rng: random.Random) -> Outcome:
    acknowledged = session(state, 17, rng, kill=True)
    flip_bytes(state / (JOURNAL_NAME + "-wal"), rng, rng.randint(1, 8))
    verdict = judge(state, acknowledged, journal_bytes(state))
    return from_kind(verdict.kind, verdict.detail)


def flip_main(state: Path, rng: random.Random) -> Outcome:
    acknowledged = session(state, 40, rng, kill=False)
    flip_bytes(state / JOURNAL_NAME, rng, rng.randint(1, 8), start=100)
    verdict = judge(state, acknowledged, journal_bytes(state))
    return from_kind(verdict.kind, verdict.detail)


def truncate_wal(state: Path, rng: random.Random) -> Outcome:
    acknowledged = session(state, 17, rng, kill=True)
    truncate(state / (JOURNAL_NAME + "-wal"), rng)
    verdict = judge(state, acknowledged, journal_bytes(state))
    return from_kind(verdict.kind, verdict.detail)


def truncate_main(state: Path, rng: random.Random) -> Outcome:
    acknowledged = session(state, 40, rng, kill=False)
    truncate(state / JOURNAL_NAME, rng)
    verdict = judge(state, acknowledged, journal_bytes(state))
    return from_kind(verdict.kind, verdict.detail)


class _Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


def _write_fault(state: Path, rng: random.Random, words: str,
                 inject: Callable[[], None], remove: Callable[[], None],
                 *, recovers: bool = True, acked: list[str] | None = None,
                 refused: list[str] | None = None) -> Outcome:
    """Entries before, during and after a fault: each acknowledged one kept,
    each refused one refused with ``words`` and not kept (``acked`` and
    ``refused`` get the lines)."""
    clock = _Clock()
    try:
        referee = open_referee(state, clock=clock)
    except Exception as error:  # noqa: BLE001 - counted
        return Outcome().fail("crashed", f"open: {error!r}")
    acked = [] if acked is None else acked
    refused = [] if refused is None else refused
    try:
        model = Model(setup_lines(referee.config))
        model.game, model.base = referee.game, referee.base_entries

        def enter(count: int, stop_after: int = 3) -> int:
            """Up to ``count`` entries, or until ``stop_after`` refusals."""
            refusals = 0
            for _ in range(count):
                if refusals >= stop_after:
                    break
                line = model.random_line(rng, undo_p=0.0)
                reason = referee.enter(parse_line(line))  # type: ignore[arg-type]
                if reason is None:
                    acked.append(line)
                    model.game = referee.game
                elif reason != words:
                    raise AssertionError(f"refused with {reason!r}, not {words!r}")
                else:
                    refused.append(line)
                    refusals += 1
            return refusals

        enter(rng.randint(1, 10))
        inject()
        try:
            if not enter(rng.randint(30, 200)):
                return Outcome()  # the fault never reached a write
            if len(referee.game.entries) > referee.base_entries:
                said = referee.undo()  # an undo while failing: refused too, in words
                if said != words or referee.view().message != words:
                    return Outcome().fail("wrong", f"undo said {said!r}, the screen "
                                          f"{referee.view().message!r}")
        finally:
            remove()
        if recovers:
            clock.now += Referee.JOURNAL_PROBE_S
            if not referee.retry_journal():
                return Outcome().fail("stuck", f"no recovery: {referee.journal_fault}")
            if enter(3):
                return Outcome().fail("stuck", "refused after the recovery")
    except AssertionError as error:
        return Outcome().fail("wrong", str(error))
    except Exception as error:  # noqa: BLE001
        return Outcome().fail("crashed", repr(error))
    finally:
        referee.store.close()
    return _kept_exactly(state, acked, refused) if recovers else Outcome(reported=True)


def _kept_exactly(state: Path, acked: list[str], refused: list[str]) -> Outcome:
    outcome = Outcome(reported=True)
    compare_lines(table_lines(stored_games(state)), acked, refused, None, outcome)
    outcome.wrong = outcome.wrong or outcome.lost or outcome.refused_kept  # said nothing of it
    return outcome


def full_card(state: Path, rng: random.Random) -> Outcome:
    card = state / "card"
    card.mkdir()
    if _run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(card)).returncode:
        raise _Skip("cannot mount a tmpfs (root needed)")
    filler = card / "filler"

    def fill() -> None:
        with open(filler, "wb", buffering=0) as handle:
            try:
                while True:
                    handle.write(bytes(4096))
            except OSError as error:
                assert error.errno == errno.ENOSPC

    try:
        return _write_fault(card / "state", rng, "the card is full: nothing new can be kept",
                            fill, lambda: filler.unlink())
    finally:
        _run("umount", "-l", str(card))


def read_only_card(state: Path, rng: random.Random) -> Outcome:
    image, card = state / "card.img", state / "card"
    card.mkdir()
    with open(image, "wb") as handle:
        handle.truncate(16 << 20)
    if _run("mkfs.ext4", "-q", str(image)).returncode or _run(
            "mount", "-o", "loop", str(image), str(card)).returncode:
        raise _Skip("cannot loop-mount an ext4 image (root needed)")
    acked: list[str] = []
    refused: list[str] = []
    try:
        outcome = _write_fault(
            card / "state", rng, "the card is read-only: nothing new can be kept",
            lambda: _run("mount", "-o", "remount,abort", str(card)), lambda: None,
            recovers=False, acked=acked, refused=refused)
        _run("umount", str(card))
        _run("e2fsck", "-fy", str(image))
        _run("mount", "-o", "loop", str(image), str(card))
        if outcome.failed:  # the next boot: every acknowledged entry, nothing refused
            return outcome
        return _kept_exactly(card / "state", acked, refused)
    finally:
        _run("umount", "-l", str(card))


def locked(state: Path, rng: random.Random) -> Outcome:
    Store(state).close()  # the journal exists
    holder: subprocess.Popen[str] | None = None

    def hold() -> None:
        nonlocal holder
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(state / JOURNAL_NAME)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"

    def release() -> None:
        if holder is not None:
            holder.communicate("")

    return _write_fault(state, rng, "the journal is locked by another program: nothing new "
                        "can be kept", hold, release)


def second_referee(state: Path, rng: random.Random) -> str:
    first = subprocess.Popen([sys.executable, str(CHILD), str(state)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert first.stdout is not None
    try:
        if not first.stdout.readline().startswith("START"):
            return CRASHED
        try:
            Store(state).close()
        except JournalInUse as error:
            return REPORTED if f"pid {first.pid}" in str(error) else SILENTLY_WRONG
        except Exception:  # noqa: BLE001
            return CRASHED
        return SILENTLY_WRONG  # two referees on one journal
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate()


def sigkill_during_entry(state: Path, rng: random.Random) -> Outcome:
    setup = setup_lines(make_config(state))
    before = stored_games(state)
    model = Model(setup, before[-1][1][len(setup):] if before else [])
    batch = []
    for _ in range(rng.randint(5, 30)):
        line = model.random_line(rng)
        model.apply(line)
        batch.append(line)
    child = subprocess.Popen([sys.executable, str(CHILD), str(state)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdin is not None and child.stdout is not None
    if not child.stdout.readline().startswith("START"):
        child.kill()
        child.communicate()
        return Outcome().fail("crashed", "the child did not start")
    child.stdin.write("".join(line + "\n" for line in batch))
    child.stdin.flush()
    time.sleep(rng.uniform(0, 0.02))
    child.send_signal(signal.SIGKILL)
    out, _ = child.communicate()
    acks = [line.split(" ", 3)[3] for line in out.splitlines() if line.startswith("ACK ")]
    referee = open_referee(state)
    try:
        said = referee.notice is not None or bool(referee.notices())
        games = [referee.store.lines(info.id) for info in referee.store.games()]
    finally:
        referee.store.close()
    old = sum(len(lines) for _, lines in before)
    new = [line for line in [line for lines in games for line in lines][old:]
           if not line.startswith("players ")]
    outcome = Outcome(reported=said)
    if new[: len(acks)] != acks:
        outcome.fail("lost", f"acknowledged {len(acks)}, kept {len(new)}")
    if new != batch[: len(new)]:
        outcome.fail("wrong", "a line kept that was never sent")
    if said and not outcome.failed:
        # Nothing was damaged: a notice would be wrong too, unless it only says that
        # the line in flight (never acknowledged) was left out.
        notes = referee.notices()
        if not all("acknowledged" in note or "left out" in note for note in notes):
            outcome.fail("wrong", f"a notice after a plain kill: {notes}")
    return outcome


class _Skip(Exception):
    pass


OLDER: list[tuple[str, Trial, bool]] = [
    ("flipped bytes in the -wal", flip_wal, True),
    ("flipped bytes in the main file", flip_main, True),
    ("truncated -wal", truncate_wal, True),
    ("truncated main file", truncate_main, True),
    ("full card (tmpfs)", full_card, True),
    ("read-only card (ext4 abort)", read_only_card, True),
    ("journal locked (BEGIN IMMEDIATE)", locked, True),
    ("second referee", second_referee, True),
    ("SIGKILL during entry", sigkill_during_entry, False),
]
"""(fault, trial, fresh state directory per trial)."""


# --- the run --------------------------------------------------------------------------


@dataclass
class Row:
    fault: str
    outcomes: list[Outcome] = field(default_factory=list)
    planned: int = 0
    skipped: str = ""

    def counts(self) -> dict[str, int]:
        total = dict.fromkeys(COLUMNS, 0)
        for outcome in self.outcomes:
            for key, value in outcome.counts().items():
                total[key] += value
        return total


@dataclass
class Case:
    row: str
    run: Callable[[], Outcome | list[Outcome]]


def run_cases(cases: list[Case], rows: dict[str, Row], *, jobs: int, deadline: float,
              verbose: bool) -> int:
    """Run ``cases`` (in their order) until ``deadline``; returns how many ran."""
    lock = threading.Lock()
    done = 0
    shown: dict[str, int] = {}
    began = said = time.monotonic()

    def one(case: Case) -> None:
        nonlocal done, said
        if time.monotonic() > deadline:
            return
        try:
            result = case.run()
        except Exception as error:  # noqa: BLE001 - a harness failure is a crash too
            result = Outcome().fail("crashed", f"harness: {type(error).__name__}: {error}")
        outcomes = result if isinstance(result, list) else [result]
        with lock:
            rows[case.row].outcomes.extend(outcomes)
            done += 1
            if time.monotonic() - said > 60:
                said = time.monotonic()
                print(f"# {done} of {len(cases)} cases in {said - began:.0f} s", file=sys.stderr,
                      flush=True)
            for outcome in outcomes:
                if outcome.failed and (verbose or shown.get(case.row, 0) < 3):
                    shown[case.row] = shown.get(case.row, 0) + 1
                    print(f"  {case.row}: " + "; ".join(outcome.detail)[:400],
                          file=sys.stderr, flush=True)

    if jobs <= 1:
        for case in cases:
            one(case)
    else:
        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(one, cases))
    return done


def syscall_cases(args: argparse.Namespace, workdir: Path, rows: dict[str, Row],
                  rng: random.Random) -> list[Case]:
    if shutil.which("strace") is None:
        rows["system calls"] = Row("system calls", skipped="strace is not installed")
        return []
    kinds = tuple(args.kinds.split(",")) if args.kinds else KINDS
    for kind in kinds:
        for fault in FAULTS:
            rows[f"{kind} {fault}"] = Row(f"{kind} {fault}")
    cases: list[Case] = []
    for scenario in prepare_scenarios(workdir, args.seed):
        scenario.counts = count_calls(scenario, workdir, kinds, args.game_lines, args.seed)
        print(f"# {scenario.name}: calls on the state directory in a start and a game of "
              f"{args.game_lines} lines: " + ", ".join(f"{k} {n}" for k, n in
                                                       scenario.counts.items()),
              file=sys.stderr, flush=True)
        for kind in kinds:
            plan = [(fault, number) for fault in FAULTS
                    for number in range(1, scenario.counts[kind] + 1)]
            if args.quick:
                plan = rng.sample(plan, min(1, len(plan)))
            for fault, number in plan:
                row = f"{kind} {fault}"
                rows[row].planned += 1
                cases.append(Case(row, lambda s=scenario, k=kind, f=fault, n=number:
                                  syscall_case(s, k, f, n, workdir, args.game_lines,
                                               args.seed)))
        if args.quick:
            break  # the first start only
    return cases


FLIP_FILES = (
    ("bit flips: journal.sqlite3 (clean stop)", "clean", JOURNAL_NAME),
    ("bit flips: journal.sqlite3-wal (killed)", "killed", JOURNAL_NAME + "-wal"),
    ("bit flips: journal.sqlite3-shm (killed)", "killed", JOURNAL_NAME + "-shm"),
    ("bit flips: journal.acks (killed)", "killed", ACKS_NAME),
)


def flip_cases(args: argparse.Namespace, workdir: Path, rows: dict[str, Row],
               rng: random.Random) -> list[Case]:
    sessions = {"clean": store_session(workdir, "flips-clean", args.seed, kill=False),
                "killed": store_session(workdir, "flips-killed", args.seed, kill=True)}
    for stored in sessions.values():
        unfound = sum(1 for copies in stored.copies if not copies)
        if unfound:
            print(f"# {stored.state.name}: {unfound} lines not found in the files (they count "
                  "as destroyed by any flip)", file=sys.stderr)
    cases: list[Case] = []
    for row, which, name in FLIP_FILES:
        stored = sessions[which]
        path = stored.state / name
        if not path.exists():
            rows[row] = Row(row, skipped=f"no {name} after the session")
            continue
        bits = 8 * path.stat().st_size
        sample = rng.sample(range(bits), min(args.flips, bits))
        rows[row] = Row(row, planned=len(sample))
        cases += [Case(row, lambda s=stored, n=name, b=bit: flip_case(s, n, b, workdir))
                  for bit in sample]
    return cases


class _ClubCases:
    """club.json's bit flips (needs mosquitto): a broker and the night, made
    on first use and stopped at the end."""

    ROW = "bit flips: club.json (club box)"

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.broker: Any = None
        self.flips: Any = None
        self.lock = threading.Lock()

    def cases(self, args: argparse.Namespace, rows: dict[str, Row], rng: random.Random
              ) -> list[Case]:
        from support.broker import MOSQUITTO

        if MOSQUITTO is None:
            rows[self.ROW] = Row(self.ROW, skipped="mosquitto is not installed")
            return []
        from support.broker import Mosquitto
        from support.club_kit import ClubFlips

        self.broker = Mosquitto(self.workdir / "broker")
        self.flips = ClubFlips(self.broker.url, self.workdir / "club").prepare()
        sample = rng.sample(range(self.flips.bits), min(args.flips, self.flips.bits))
        rows[self.ROW] = Row(self.ROW, planned=len(sample))
        return [Case(self.ROW, lambda b=bit: self.case(b)) for bit in sample]

    def case(self, bit: int) -> Outcome:
        with self.lock:  # one director and box on the broker at a time
            verdict = self.flips.case(bit)
        outcome = Outcome(reported=verdict.said)
        if verdict.crashed:
            outcome.fail("crashed", verdict.describe())
        if verdict.forgot or verdict.refused or verdict.unsaid:
            # forgot its round or the hand in play, refused by the director, or the
            # damage not said or not kept
            outcome.fail("wrong", verdict.describe())
        return outcome

    def close(self) -> None:
        if self.broker is not None:
            self.broker.stop()


def older_cases(args: argparse.Namespace, workdir: Path, rows: dict[str, Row]) -> list[Case]:
    cases: list[Case] = []
    for name, trial, fresh in OLDER:
        row = Row(name, planned=args.trials)
        rows[name] = row
        shared = workdir / f"older-{len(rows)}"

        def trials(name: str = name, trial: Trial = trial, fresh: bool = fresh,
                   shared: Path = shared, row: Row = row) -> list[Outcome]:
            """A fault's trials, in order (some share one state directory)."""
            outcomes = []
            for number in range(args.trials):
                state = shared / f"trial-{number}" if fresh else shared / "state"
                state.mkdir(parents=True, exist_ok=True)
                try:
                    result = trial(state, random.Random(f"{args.seed}-{name}-{number}"))
                except _Skip as why:
                    row.skipped = str(why)
                    break
                except Exception as error:  # noqa: BLE001 - a crash of the harness is one too
                    result = Outcome().fail("crashed", f"trial {number}: {error!r}")
                outcomes.append(from_kind(result) if isinstance(result, str) else result)
            return outcomes

        cases.append(Case(name, trials))
    return cases


def print_table(rows: list[Row], out: Any = sys.stdout) -> None:
    width = max(len(row.fault) for row in rows)
    heads = "  ".join(f"{name:>{max(len(name), 5)}}" for name in COLUMNS)
    print(f"{'fault':<{width}}  {heads}", file=out)
    for row in rows:
        if row.skipped and not row.outcomes:
            print(f"{row.fault:<{width}}  skipped: {row.skipped}", file=out)
            continue
        counts = row.counts()
        cells = "  ".join(f"{counts[name]:>{max(len(name), 5)}}" for name in COLUMNS)
        ran = "" if not row.planned or len(row.outcomes) >= row.planned else (
            f"  ({len(row.outcomes)} of {row.planned} run)")
        print(f"{row.fault:<{width}}  {cells}{ran}", file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a small sample of every row (one case per system call kind, "
                        "a few flips, one trial of the older faults)")
    parser.add_argument("--budget", type=float, default=3600, metavar="S",
                        help="stop starting cases after S seconds (3600)")
    parser.add_argument("--jobs", type=int, default=1, help="cases run at once (1)")
    parser.add_argument("--flips", type=int, default=200, metavar="N",
                        help="bits flipped per stored file (200)")
    parser.add_argument("--trials", type=int, default=20, help="trials of each older fault (20)")
    parser.add_argument("--game-lines", type=int, default=12, metavar="N",
                        help="lines entered in each system-call case's game (12)")
    parser.add_argument("--kinds", metavar="LIST", help="system calls, comma-separated "
                        f"(default {','.join(KINDS)})")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", metavar="TEXT", help="only the rows whose name has TEXT "
                        "('system calls', 'bit flips', or a row's name)")
    parser.add_argument("--verbose", action="store_true", help="every failure's detail")
    parser.add_argument("--json", action="store_true", help="the table as JSON too")
    parser.add_argument("--child", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--restart", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child_main(Path(args.child))
    if args.restart:
        print(json.dumps(restart_report(Path(args.restart))))
        return 0
    if args.quick:
        args.flips, args.trials, args.game_lines = min(args.flips, 3), min(args.trials, 1), 6

    def wanted(row: str, group: str) -> bool:
        return not args.only or args.only in row or args.only == group

    def group(row: str) -> str:
        return "system calls" if row.split()[-1] in FAULTS else "bit flips"

    logging.getLogger("euchre").setLevel(logging.ERROR)  # a club box's warnings: judged
    began = time.monotonic()
    rng = random.Random(args.seed)
    rows: dict[str, Row] = {}
    club = None
    syscall_rows = [f"{kind} {fault}" for kind in KINDS for fault in FAULTS]
    with tempfile.TemporaryDirectory(prefix="euchre-faults-") as top:
        workdir = Path(top)
        try:
            cases: list[Case] = []
            if any(wanted(row, "system calls") for row in syscall_rows) or args.kinds:
                cases += syscall_cases(args, workdir, rows, rng)
            if any(wanted(row, "bit flips") for row, _, _ in FLIP_FILES):
                cases += flip_cases(args, workdir, rows, rng)
            if wanted(_ClubCases.ROW, "bit flips"):
                club = _ClubCases(workdir / "club-flips")
                cases += club.cases(args, rows, rng)
            cases = [case for case in cases if wanted(case.row, group(case.row))]
            for name in list(rows):
                if not wanted(name, group(name)):
                    rows.pop(name)
            rng.shuffle(cases)  # a run cut short by the budget still samples every row
            cases[:0] = [case for case in older_cases(args, workdir / "older", rows)
                         if wanted(case.row, "older")]  # first: few, each one whole
            for name, _, _ in OLDER:
                if not wanted(name, "older"):
                    rows.pop(name, None)
            planned = sum(row.planned for row in rows.values())
            ran = run_cases(cases, rows, jobs=args.jobs, deadline=began + args.budget,
                            verbose=args.verbose)
        finally:
            if club is not None:
                club.close()
    shown = [row for row in rows.values()]
    print_table(shown)
    elapsed = time.monotonic() - began
    total = sum(len(row.outcomes) for row in shown)
    cut = "" if ran == len(cases) else (
        f"; cut short by --budget {args.budget:g}: {total} of about {planned} cases run")
    print(f"{total} cases in {elapsed:.0f} s{cut}")
    if args.json:
        print(json.dumps([{"fault": row.fault, **row.counts(), "planned": row.planned,
                           **({"skipped": row.skipped} if row.skipped else {})}
                          for row in shown]))
    bad = sum(row.counts()[name] for row in shown for name in FAILURES)
    return 1 if bad else 0


if __name__ == "__main__":
    os.umask(0o022)
    sys.exit(main())
