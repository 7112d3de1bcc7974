"""Faults injected for real with strace: a flush the card refuses (EIO,
ENOSPC), a process killed at a flush, on a real referee process.

- :func:`strace_command` is ``strace`` with an ``inject`` expression, tracing
  ``fsync`` and ``fdatasync`` with the files' paths (``-y``) into a log;
- :func:`flushes` reads that log: each flush in order, with its file;
- :func:`child_session` runs ``crash_child.py`` (the referee as a process:
  ``ACK``/``REFUSED`` for each line) under it, enters lines, then kills it
  with SIGKILL, as a power cut would (the -wal left as it is);
- :func:`commit_of` finds the flush of the k-th commit that added lines (the
  -wal's flush just before the k-th flush of ``journal.acks``).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from firmware.journal import ACKS_NAME, JOURNAL_NAME, LOCK_NAME

from .system_tools import missing

CHILD = Path(__file__).resolve().with_name("crash_child.py")
ROOT = CHILD.parents[2]
STRACE = shutil.which("strace")
_FLUSH = re.compile(r"^(?:\d+ +)?(fsync|fdatasync)\(\d+<([^>]*)>\) += (-?\d+)(.*)$")


def strace_problem() -> str | None:
    """Why strace cannot inject faults here (None: it can)."""
    if STRACE is None:
        return missing("strace")
    done = subprocess.run([STRACE, "-qq", "-o", os.devnull, "-e", "inject=fdatasync:error=EIO",
                           "true"], capture_output=True, text=True, check=False)
    if done.returncode:
        return f"strace cannot trace here: {done.stderr.strip()}"
    return None


def strace_command(log: Path, inject: str | None = None) -> list[str]:
    """``strace`` tracing every flush into ``log``, with ``inject`` (an
    expression such as ``fdatasync:error=EIO:when=9``) if given."""
    assert STRACE is not None
    command = [STRACE, "-f", "-qq", "-y", "-o", str(log), "-e", "trace=fsync,fdatasync",
               "-e", "signal=none"]
    if inject:
        command += ["-e", f"inject={inject}"]
    return command


@dataclass(frozen=True)
class Flush:
    call: str
    path: str
    result: int
    injected: bool

    @property
    def name(self) -> str:
        return Path(self.path).name


def flushes(log: Path) -> list[Flush]:
    """Every flush in ``log``, in order."""
    out = []
    for line in log.read_text().splitlines():
        match = _FLUSH.match(line)
        if match:
            out.append(Flush(match[1], match[2], int(match[3]), "INJECTED" in match[4]))
    return out


def commit_of(trace: list[Flush], k: int, call: str = "fdatasync") -> int:
    """The 1-based number, among the ``call`` flushes of ``trace``, of the
    -wal's flush of the k-th commit that added lines (1: the first game's)."""
    numbered = [f for f in trace if f.call == call]
    acks = [i for i, f in enumerate(numbered) if f.name == ACKS_NAME]
    record = acks[k - 1]
    assert numbered[record - 1].name == JOURNAL_NAME + "-wal", numbered[record - 1]
    return record  # the flush before the record, counted from 1


@dataclass
class Session:
    """What a traced referee process answered."""

    started: bool
    answers: list[tuple[str, str]] = field(default_factory=list)
    """Each line sent and its answer (``ACK ...`` or ``REFUSED ...``)."""
    first: str = ""

    @property
    def acked(self) -> list[str]:
        return [line for line, answer in self.answers if answer.startswith("ACK")]

    @property
    def refused(self) -> list[str]:
        return [line for line, answer in self.answers if answer.startswith("REFUSED")]


def child_session(state: Path, lines: list[str], log: Path, inject: str | None = None,
                  *, timeout: float = 60.0) -> Session:
    """Run the referee (``crash_child.py``) on ``state`` under strace, enter
    ``lines`` one by one (each answered), then SIGKILL it.  A referee that
    dies first (an injected SIGKILL) ends the session: the lines answered
    so far are in it."""
    process = subprocess.Popen(
        [*strace_command(log, inject), sys.executable, str(CHILD), str(state)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert process.stdin is not None and process.stdout is not None
    try:
        first = process.stdout.readline()
        while first.startswith("NOTICE"):
            first = process.stdout.readline()
        if not first.startswith("START"):
            return Session(False, first=first)
        session = Session(True, first=first)
        for line in lines:
            try:
                process.stdin.write(line + "\n")
                process.stdin.flush()
            except BrokenPipeError:
                break
            answer = process.stdout.readline().strip()
            if not answer:  # killed (an injected SIGKILL) before it answered
                break
            assert answer.startswith(("ACK", "REFUSED")), (line, answer)
            session.answers.append((line, answer))
        else:
            pid = int((state / LOCK_NAME).read_text().split()[0])
            os.kill(pid, signal.SIGKILL)  # the referee itself (strace's tracee): a power cut
        process.wait(timeout)
        return session
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
