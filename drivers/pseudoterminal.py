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
    """Who else has a pseudo-terminal's slave open (Linux), and this process's
    own descriptor of it (:meth:`hold`), which keeps the slave exclusive.

    Counted from inotify's open and close events on the slave's path.  inotify
    merges an event into the one before it when both are alike and unread
    (inotify(7)), so two closes (or two opens) between two looks would count as
    one.  Two things keep the count true:

    - the slave's directory is watched too: each open or close then queues two
      events, the directory's (named) and the file's, so no two in a row are
      alike (only the file's are counted).  Events of two programs at the same
      instant on two processors can still interleave and merge;
    - the truth comes from the master (``master``): it polls POLLHUP while no
      descriptor of the slave is open (Linux sets TTY_OTHER_CLOSED at the
      slave's last close and clears it at its next open).  After every close
      (or lost events) the count is checked against it (:meth:`_anyone`):
      nobody there sets it to zero; somebody there while it says nobody sets
      it to one, pending: a newcomer who got in while the mark was off for the
      check (its open, when read, says the last peer left) or opens that
      merged (no open comes by the next check).  inotify reports a close just
      before the closing program's descriptor is let go, so a check that finds
      somebody is made once more :data:`SETTLE_S` later.

    Counting starts when nobody has the slave open.  :meth:`left` says whether
    the count fell to zero since the last call: a peer left, even if another
    (or the same program) opened it again at once.
    """

    _IN_OPEN: Final = 0x20
    _IN_CLOSE: Final = 0x08 | 0x10  # IN_CLOSE_WRITE | IN_CLOSE_NOWRITE
    _IN_Q_OVERFLOW: Final = 0x4000
    _EVENTS: Final = _IN_OPEN | _IN_CLOSE
    _EVENT: Final = struct.Struct("iIII")
    SETTLE_S: Final = 0.5
    """How long after a check that found somebody it is made again (a closing
    program's descriptor is let go a moment after inotify reports the close)."""

    def __init__(self, path: str, master: int = -1, *, directory: bool = True) -> None:
        """``directory``: watch the slave's directory too (False: the file only,
        its merged events set right by the master alone)."""
        self.path = path
        self._master = master
        self._others = 0
        self._own_fd = -1
        self._opens_ours = 0
        """Open events still to come that this process caused itself."""
        self._closes_ours = 0
        self._left = False
        self._emptied = False
        """The events brought the count to zero, and the master said somebody
        was there: a newcomer who got in while the mark was off for the
        check (its open event still to come), or opens that inotify merged."""
        self._check_at: float | None = None
        self._lock = threading.RLock()
        self._fd = -1
        self._file_wd = -1
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
            if fd >= 0:
                self._file_wd = int(libc.inotify_add_watch(fd, os.fsencode(path), self._EVENTS))
                if self._file_wd < 0:
                    os.close(fd)
                    fd = -1
                elif directory:  # see the class's docstring (no watch, no harm)
                    libc.inotify_add_watch(fd, os.fsencode(os.path.dirname(path)), self._EVENTS)
        except (OSError, AttributeError):  # no inotify here: hang-ups are still seen
            fd = -1
        self._fd = fd

    @property
    def watching(self) -> bool:
        return self._fd >= 0

    @property
    def own(self) -> int:
        """1 while this process holds its own descriptor of the slave (:meth:`hold`);
        a check against the master (which lets it go for a moment) is waited for."""
        with self._lock:
            return int(self._own_fd >= 0)

    def others(self) -> int:
        """How many other programs have the slave open now: never 0 while one
        has it, 0 once the last has let it go (two opens or closes that inotify
        merged into one may leave the number one off until then)."""
        with self._lock:
            self._look()
            return self._others

    def left(self) -> bool:
        """Whether the last peer closed the slave since the last call."""
        with self._lock:
            self._look()
            left, self._left = self._left, False
            return left

    def hold(self) -> bool:
        """Open this process's own descriptor of the slave and mark the slave
        exclusive (TIOCEXCL) through it; False if either was refused (the
        descriptor is kept when only the mark was)."""
        with self._lock:
            if self._own_fd >= 0:
                return True
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
            except OSError:  # already exclusive (another program set it), or not ours
                return False
            self._opens_ours += 1
            self._own_fd = fd
            try:
                fcntl.ioctl(fd, termios.TIOCEXCL)
            except OSError:
                return False
            return True

    def release(self) -> None:
        """Take the mark off and close the own descriptor, dropping what the
        slave holds unread (answers nobody read: not for the next peer)."""
        with self._lock:
            if self._own_fd < 0:
                return
            self._close_own(flush=True)
            self._check_at = time.monotonic() + self.SETTLE_S  # a close may merge with ours

    def close(self) -> None:
        with self._lock:
            self.release()
            if self._fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = -1

    def _close_own(self, *, flush: bool) -> None:
        fd, self._own_fd = self._own_fd, -1
        with contextlib.suppress(OSError):
            fcntl.ioctl(fd, termios.TIOCNXCL)
        if flush:
            with contextlib.suppress(OSError, termios.error):
                termios.tcflush(fd, termios.TCIFLUSH)
        self._closes_ours += 1
        with contextlib.suppress(OSError):
            os.close(fd)

    def _look(self) -> None:
        """Count the events read now; check the count against the master after
        a close (or lost events), and once more when a check is due."""
        closed = self._read()
        due = self._check_at is not None and time.monotonic() >= self._check_at
        if not (closed or due):
            return
        self._check_at = None
        rechecked = self._emptied and not closed
        if not self._anyone():
            self._left = self._left or closed or self._others > 0 or self._emptied
            self._others, self._emptied = 0, False
            return
        if self._read():  # (a newcomer's open is read here; another close: look again)
            self._check_at = time.monotonic()
        if self._others == 0:  # the count says nobody, the master somebody
            self._others = 1
            self._emptied = True  # a newcomer whose open is still to come, or merged opens
        elif rechecked and self._emptied:  # no open came: the opens had merged
            self._emptied = False
        if closed or self._emptied:
            self._check_at = self._check_at or time.monotonic() + self.SETTLE_S

    def _read(self) -> bool:
        """Apply the unread events; whether a peer closed (or events were lost)."""
        closed = False
        while self._fd >= 0:
            try:
                data = os.read(self._fd, 4096)
            except OSError:  # BlockingIOError: nothing more
                break
            offset = 0
            while offset + self._EVENT.size <= len(data):
                wd, mask, _, length = self._EVENT.unpack_from(data, offset)
                offset += self._EVENT.size + length
                if wd not in (self._file_wd, -1):
                    continue  # the directory's watch: only there to keep events apart
                if mask & self._IN_Q_OVERFLOW:
                    self._opens_ours = self._closes_ours = 0
                    closed = True
                elif mask & self._IN_OPEN:
                    if self._opens_ours:
                        self._opens_ours -= 1
                    elif self._emptied:  # the last peer went, then one came
                        self._left, self._emptied = True, False
                        self._others = 1  # (it may be counted already: _look)
                    else:
                        self._others += 1
                elif mask & self._IN_CLOSE:
                    if self._closes_ours:
                        self._closes_ours -= 1
                        continue
                    closed = True
                    self._others = max(0, self._others - 1)
                    self._emptied = self._others == 0
        return closed

    def _anyone(self) -> bool:
        """Whether another program has the slave open, from the master: the own
        descriptor (and its mark) is let go for the moment of the poll, then
        taken again if somebody is there.  Without a master, the count says."""
        if self._master < 0:
            return self._others > 0
        held = self._own_fd >= 0
        if held:
            self._close_own(flush=False)
        poller = select.poll()
        poller.register(self._master, select.POLLIN)
        anyone = not any(mask & select.POLLHUP for _, mask in poller.poll(0))
        if anyone:
            if held:
                self.hold()
        elif held:  # what the peers left unread is not for the next one
            with contextlib.suppress(OSError):
                fd = os.open(self.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
                self._opens_ours += 1
                with contextlib.suppress(termios.error):
                    termios.tcflush(fd, termios.TCIFLUSH)
                self._closes_ours += 1
                os.close(fd)
        return anyone


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
        self.peer_watch = PeerWatch(self.slave_path, master)
        self._port = PtyMasterSerial(master, self.slave_path, baudrate=baudrate,
                                     timeout=timeout, write_timeout=write_timeout)
        self._port.open()
        self._closed = False
        self._exclusive_refused = False

    def guard(self) -> None:
        """One client per port, where the OS allows: while a peer has the slave
        open it is marked exclusive (TIOCEXCL), so a second program's open fails
        with EBUSY (root is exempt); when the peer has gone the mark is taken off
        (what it left unread is flushed) so the next peer can open it.

        TIOCEXCL can only be set and cleared through a descriptor of the slave
        itself, and it outlives the last close: so this process holds one while
        it is set (:meth:`PeerWatch.hold`).  Called by the link's reader after
        every read."""
        watch = self.peer_watch
        if not watch.watching or self._closed:
            return
        others = watch.others()
        if others and not watch.own and not self._exclusive_refused:
            self._exclusive_refused = not watch.hold()
        elif not others:
            self._exclusive_refused = False
            watch.release()

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
