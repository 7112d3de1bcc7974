# mypy: disable-error-code="import-untyped"
"""Pseudo-terminals as serial ports: one this process owns and offers to a
peer (:class:`PtyEndpoint`, the emulator's port for a laptop tool), and two
joined back to back (:class:`NullModem`, a virtual cable for tests and
benches).  Nothing here knows the game; :mod:`drivers.serialport` has the
link that runs on any of them.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import select
import struct
import termios
import threading
import time
import tty
from pathlib import Path
from typing import Any, Final, Self

import serial
import serial.serialposix

from .serialport import PORT_ERRORS, READ_POLL_S, WRITE_TIMEOUT_S

__all__ = ["NullModem", "PeerWatch", "PtyEndpoint", "PtyMasterSerial", "point_link", "raw_pty"]


class PtyMasterSerial(serial.serialposix.Serial):  # type: ignore[misc]
    """pyserial's POSIX port on an already open pseudo-terminal master.

    The master has no path of its own (opening ``/dev/ptmx`` again makes a new
    pair), so this adopts the descriptor.  Reads raise SerialException
    (``EIO``) while nobody has the slave side open."""

    is_open: bool  # set by serial.Serial

    def __init__(self, fd: int, name: str, **settings: Any) -> None:
        self._adopted_fd = fd
        super().__init__(None, **settings)
        self.name = name

    def open(self) -> None:
        if self.is_open:
            raise serial.SerialException("Port is already open.")
        fd = self._adopted_fd
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
        self.fd = fd
        self._reconfigure_port(force_update=True)
        self.pipe_abort_read_r, self.pipe_abort_read_w = os.pipe()
        self.pipe_abort_write_r, self.pipe_abort_write_w = os.pipe()
        fcntl.fcntl(self.pipe_abort_read_r, fcntl.F_SETFL, os.O_NONBLOCK)
        fcntl.fcntl(self.pipe_abort_write_r, fcntl.F_SETFL, os.O_NONBLOCK)
        self.is_open = True

    def forget_cancel(self) -> None:
        """Drop a ``cancel_write``/``cancel_read`` left over from the last peer (the
        port lives on from peer to peer)."""
        for pipe in (self.pipe_abort_read_r, self.pipe_abort_write_r):
            with contextlib.suppress(OSError):
                while os.read(pipe, 1000):
                    pass

    def __repr__(self) -> str:
        return f"PtyMasterSerial(fd={self._adopted_fd}, name={self.name!r}, open={self.is_open})"


def raw_pty() -> tuple[int, str]:
    """A new pseudo-terminal in raw mode (no echo, no line editing, no CR/LF
    mapping): its master descriptor and its slave's path (the slave is closed)."""
    master, slave = os.openpty()
    try:
        tty.setraw(slave)
        path = os.ttyname(slave)
    finally:
        os.close(slave)
    return master, path


class PeerWatch:
    """Who has a pseudo-terminal's slave open, from inotify's open and close
    events on its path (Linux).  Counting starts when nobody has it open.

    :meth:`left` says whether the count fell to zero since the last call: a
    peer left, even if another (or the same program) opened it again at once.
    """

    _IN_OPEN: Final = 0x20
    _IN_CLOSE: Final = 0x08 | 0x10  # IN_CLOSE_WRITE | IN_CLOSE_NOWRITE
    _EVENT: Final = struct.Struct("iIII")

    def __init__(self, path: str) -> None:
        self.peers = 0
        """Open descriptions of the slave, this process's own (:attr:`own`) included."""
        self.own = 0
        """How many of :attr:`peers` this process holds itself."""
        self._left = False
        self._fd = -1
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
            if fd >= 0 and int(libc.inotify_add_watch(fd, os.fsencode(path),
                                                      self._IN_OPEN | self._IN_CLOSE)) < 0:
                os.close(fd)
                fd = -1
        except (OSError, AttributeError):  # no inotify here: hang-ups are still seen
            fd = -1
        self._fd = fd

    @property
    def watching(self) -> bool:
        return self._fd >= 0

    def _read(self) -> None:
        while self._fd >= 0:
            try:
                data = os.read(self._fd, 4096)
            except BlockingIOError:
                return
            except OSError:
                return
            offset = 0
            while offset + self._EVENT.size <= len(data):
                _, mask, _, length = self._EVENT.unpack_from(data, offset)
                offset += self._EVENT.size + length
                if mask & self._IN_OPEN:
                    self.peers += 1
                elif mask & self._IN_CLOSE:
                    self.peers = max(0, self.peers - 1)
                    self._left = self._left or self.peers <= self.own

    def others(self) -> int:
        """How many other programs have the slave open now."""
        self._read()
        return max(0, self.peers - self.own)

    def left(self) -> bool:
        """Whether the last peer closed the slave since the last call."""
        self._read()
        left, self._left = self._left, False
        return left

    def close(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1


class PtyEndpoint:
    """A pseudo-terminal this process owns: the link reads its master, and a
    peer (a laptop tool, miniterm, picocom) opens ``slave_path``.

    The pair is made raw, so the line discipline never echoes what the link
    writes back to it.  A peer may close and reopen the slave any number of
    times; the master stays open until :meth:`close`."""

    def __init__(self, baudrate: int, *, timeout: float = READ_POLL_S,
                 write_timeout: float = WRITE_TIMEOUT_S) -> None:
        master, self.slave_path = raw_pty()
        self.name = self.slave_path
        self.peer_watch = PeerWatch(self.slave_path)
        self._port = PtyMasterSerial(master, self.slave_path, baudrate=baudrate,
                                     timeout=timeout, write_timeout=write_timeout)
        self._port.open()
        self._closed = False
        self._exclusive = -1
        """This process's own descriptor of the slave, held while the slave is
        marked exclusive (TIOCEXCL) for the peer that has it."""
        self._exclusive_refused = False

    def guard(self) -> None:
        """One client per port, where the OS allows: while a peer has the slave
        open it is marked exclusive (TIOCEXCL), so a second program's open fails
        with EBUSY (root is exempt); when the peer has gone the mark is taken off
        (what it left unread is flushed) so the next peer can open it.

        TIOCEXCL can only be set and cleared through a descriptor of the slave
        itself, and it outlives the last close: so this process holds one while
        it is set.  Called by the link's reader after every read."""
        watch = self.peer_watch
        if not watch.watching or self._closed:
            return
        others = watch.others()
        if others and self._exclusive < 0 and not self._exclusive_refused:
            try:
                fd = os.open(self.slave_path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
            except OSError:  # already exclusive (another program set it), or not ours
                self._exclusive_refused = True
                return
            watch.own += 1
            try:
                fcntl.ioctl(fd, termios.TIOCEXCL)
            except OSError:
                self._exclusive_refused = True
            self._exclusive = fd
            watch.others()  # counts our own open
        elif not others:
            self._exclusive_refused = False
            self._release_exclusive()

    def _release_exclusive(self) -> None:
        fd, self._exclusive = self._exclusive, -1
        if fd < 0:
            return
        with contextlib.suppress(OSError):
            fcntl.ioctl(fd, termios.TIOCNXCL)
        with contextlib.suppress(OSError, termios.error):
            termios.tcflush(fd, termios.TCIFLUSH)  # answers nobody read: not for the next peer
        self.peer_watch.own -= 1
        with contextlib.suppress(OSError):
            os.close(fd)
        self.peer_watch.others()  # counts our own close

    def open(self) -> Any:
        if self._closed:
            raise serial.SerialException(f"{self.slave_path}: pseudo-terminal closed")
        self._port.forget_cancel()
        self.peer_watch.left()  # a hang-up seen before now is the session that ended
        return self._port

    def peer_left(self) -> bool:
        """Whether the last peer closed the slave since the last call (also when
        it opened it again at once, before the master saw a hang-up)."""
        return self.peer_watch.left()

    def release(self, port: Any, *, closing: bool) -> None:
        if closing:
            self.close()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._release_exclusive()
            self.peer_watch.close()
            with contextlib.suppress(*PORT_ERRORS):
                self._port.close()

    def __repr__(self) -> str:
        return f"PtyEndpoint({self.slave_path!r})"


def point_link(link: str | os.PathLike[str], target: str) -> Path:
    """Make ``link`` a symlink to ``target`` (e.g. a pty's slave path), replacing
    an old symlink there; a regular file or directory there is left alone
    (FileExistsError)."""
    path = Path(link)
    if (path.exists() or path.is_symlink()) and not path.is_symlink():
        raise FileExistsError(errno.EEXIST, "exists and is not a symlink", str(path))
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    os.symlink(target, temporary)
    os.replace(temporary, path)
    return path


# --- a virtual cable ---------------------------------------------------------------


class NullModem:
    """Two pseudo-terminals joined back to back: what one side's peer writes,
    the other side's peer reads (a virtual null-modem cable, like ``socat`` or
    tty0tty).  Open ``paths[0]`` and ``paths[1]`` with pyserial at both ends.

    A side whose peer closes its slave just waits for the next peer; bytes
    for it are kept (up to 64 KiB) until then.  :meth:`close` pulls the cable:
    both slaves see a hang-up.
    """

    BUFFER: Final = 65536

    def __init__(self) -> None:
        first, path_a = raw_pty()
        second, path_b = raw_pty()
        self._masters = (first, second)
        self.paths = (path_a, path_b)
        for fd in self._masters:
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
        self._wake_r, self._wake_w = os.pipe()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="null-modem", daemon=True)
        self._thread.start()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        os.write(self._wake_w, b"x")
        self._thread.join(2.0)
        for fd in (*self._masters, self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _run(self) -> None:
        first, second = self._masters
        peer = {first: second, second: first}
        pending = {first: bytearray(), second: bytearray()}
        resting = {first: 0.0, second: 0.0}  # a master without a peer is not polled until then
        while True:
            now = time.monotonic()
            readable = [fd for fd in peer
                        if resting[fd] <= now and len(pending[peer[fd]]) < self.BUFFER]
            writable = [fd for fd in peer if pending[fd]]
            ready_r, ready_w, _ = select.select([*readable, self._wake_r], writable, [], 0.05)
            if self._wake_r in ready_r:
                return
            for fd in ready_r:
                try:
                    data = os.read(fd, self.BUFFER)
                except BlockingIOError:
                    continue
                except OSError:  # EIO: nobody has this side's slave open
                    data = b""
                if not data:
                    resting[fd] = now + 0.05
                    continue
                pending[peer[fd]] += data
            for fd in ready_w:
                try:
                    written = os.write(fd, pending[fd])
                except BlockingIOError:
                    continue
                except OSError:
                    pending[fd].clear()
                    continue
                del pending[fd][:written]
