"""One referee per state directory.

A writing ``Store`` holds an exclusive ``flock`` on ``referee.lock`` (which
holds its pid) for as long as it is open; a second one raises
:class:`JournalInUse` naming the other process.  A read-only ``Store`` takes
no lock.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from .faults import JournalInUse
from .files import LOCK_NAME


def _describe_process(pid_text: str) -> str:
    pid = pid_text.strip().split("\n")[0]
    if not pid.isdigit():
        return "another process"
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return f"pid {pid}"
    command = " ".join(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)
    return f"pid {pid}: {command}" if command else f"pid {pid}"


def lock_state_dir(state_dir: Path) -> int | None:
    """Hold ``referee.lock`` (flock, exclusive); returns its fd.  None when it
    cannot even be made (a read-only card: the journal says why next)."""
    path = state_dir / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        try:
            holder = os.pread(fd, 4096, 0).decode("utf-8", "replace")
        except OSError:
            holder = ""
        os.close(fd)
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise JournalInUse(
                f"{state_dir} is in use by another referee ({_describe_process(holder)}): "
                "one referee per state directory") from None
        return None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError:
        pass  # a read-only card: the lock holds all the same
    return fd


def unlock(fd: int | None) -> None:
    """Let go of the lock taken by :func:`lock_state_dir` (closing its fd)."""
    if fd is not None:
        os.close(fd)  # releases the flock
