# mypy: disable-error-code="import-untyped"
"""Serial ports for a line protocol: opened by URL, read by a thread, written from a queue.

Nothing here knows the game.  A port is anything pyserial opens with
:func:`serial.serial_for_url` (``/dev/ttyGS0``, ``/dev/serial0``, a
pseudo-terminal's path, ``socket://host:port``, ``loop://``), or the master
side of a pseudo-terminal this process created (:class:`PtyEndpoint`, what
the emulator offers to a laptop).

:class:`SerialLink` runs two threads: a reader that assembles lines (CR, LF
or CR LF end a line; a line longer than the limit is reported once and
discarded up to its end) and hands them to a :class:`LineProtocol`, and a
writer that sends queued bytes, so nobody else ever blocks on the port.
When the port fails (a USB cable pulled, the peer of a pseudo-terminal
closing it) the half line is dropped, the protocol is told, and the port is
opened again every ``retry_s`` seconds until it answers or the link is
closed.  A pseudo-terminal's peer that closes and reopens at once is seen too
(inotify on the slave: the master may never see the hang-up): its half line
is dropped and a new session starts.

Each ``write`` is an answer: it goes out whole, or is dropped whole.  A peer
that stops reading gets nothing new once the port has not taken a write for
``write_timeout`` seconds; an answer already half sent when it stopped is
finished (its tail is kept and sent as soon as the peer reads again), and
what is queued after it is dropped whole meanwhile.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import logging
import os
import queue
import re
import select
import struct
import termios
import threading
import time
import tty
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol, Self

import serial
import serial.serialposix

__all__ = [
    "Endpoint",
    "LineAssembler",
    "LineProtocol",
    "NullModem",
    "PtyEndpoint",
    "PtyMasterSerial",
    "SerialLink",
    "TooLong",
    "UrlEndpoint",
    "point_link",
]

READ_POLL_S: Final = 0.2
"""Read timeout: how often the reader looks up from a silent port."""
WRITE_TIMEOUT_S: Final = 5.0
"""A write that the peer does not take in this time is dropped."""

_log = logging.getLogger(__name__)
_TERMINATOR: Final = re.compile(rb"[\r\n]")
_PORT_ERRORS: Final = (serial.SerialException, OSError)


# --- lines ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TooLong:
    """Marks a line that passed ``limit`` bytes; the rest of it is discarded."""

    limit: int


class LineAssembler:
    """Bytes in, whole lines out.

    A line ends at CR, LF or CR LF (one end, not two).  Empty lines are
    returned too (a protocol may count lines).  When a line passes
    ``max_line`` bytes, :class:`TooLong` is returned in its place, at once,
    and its bytes are dropped up to the next line end.

    >>> lines = LineAssembler(max_line=4)
    >>> lines.feed(b"ab\\r\\ncd\\n\\rtoo long\\nef")
    [b'ab', b'cd', b'', TooLong(limit=4)]
    >>> lines.feed(b"\\r")
    [b'ef']
    """

    def __init__(self, max_line: int) -> None:
        if max_line < 1:
            raise ValueError(f"max_line must be at least 1, not {max_line}")
        self.max_line = max_line
        self._buffer = bytearray()
        self._discarding = False
        self._after_cr = False

    @property
    def partial(self) -> bool:
        """True when part of a line has arrived (or is being discarded)."""
        return bool(self._buffer) or self._discarding

    def feed(self, data: bytes) -> list[bytes | TooLong]:
        out: list[bytes | TooLong] = []
        buffer = self._buffer
        index, size = 0, len(data)
        while index < size:
            if self._after_cr:
                self._after_cr = False
                if data[index] == 0x0A:  # the LF of CR LF
                    index += 1
                    continue
            match = _TERMINATOR.search(data, index)
            end = size if match is None else match.start()
            if not self._discarding:
                buffer += data[index:end]
                if len(buffer) > self.max_line:
                    buffer.clear()
                    self._discarding = True
                    out.append(TooLong(self.max_line))
            if match is None:
                break
            if self._discarding:
                self._discarding = False
            else:
                out.append(bytes(buffer))
                buffer.clear()
            self._after_cr = data[end] == 0x0D
            index = end + 1
        return out

    def reset(self) -> bool:
        """Forget any part line; True when there was one."""
        dropped = self.partial
        self._buffer.clear()
        self._discarding = False
        self._after_cr = False
        return dropped


class Transport(Protocol):
    def write(self, data: bytes) -> None: ...


class LineProtocol:
    """What a :class:`SerialLink` calls, all from its reader thread (the shape of
    ``serial.threaded.LineReader``).  Override what you need."""

    def connection_made(self, transport: Transport) -> None:
        """The port is open and answering; ``transport.write`` sends bytes."""

    def handle_line(self, line: bytes) -> None:
        """One whole line, without its end."""

    def handle_too_long(self, limit: int) -> None:
        """A line passed ``limit`` bytes; it is being discarded up to its end."""

    def handle_idle(self) -> None:
        """Nothing arrived for a read timeout (about :data:`READ_POLL_S` s)."""

    def connection_lost(self, error: Exception | None, partial: bool) -> None:
        """The port failed (``error``) or the link closed (None).  ``partial``
        says a half line was dropped."""


# --- where a port comes from -------------------------------------------------------


class Endpoint(Protocol):
    """Where a link gets its port, again after each failure."""

    name: str

    def open(self) -> Any:
        """An open pyserial port; raises SerialException/OSError while unavailable."""
        ...

    def release(self, port: Any, *, closing: bool) -> None:
        """The link is done with ``port`` (it failed, or the link is closing)."""
        ...


class UrlEndpoint:
    """A port by path or URL (``serial.serial_for_url``), closed and opened again
    after a failure."""

    def __init__(self, url: str, baudrate: int, *,
                 timeout: float = READ_POLL_S, write_timeout: float = WRITE_TIMEOUT_S) -> None:
        self.name = url
        self.url = url
        self.baudrate = baudrate
        self.timeout = timeout
        self.write_timeout = write_timeout

    def open(self) -> Any:
        return serial.serial_for_url(self.url, baudrate=self.baudrate, timeout=self.timeout,
                                     write_timeout=self.write_timeout)

    def release(self, port: Any, *, closing: bool) -> None:
        with contextlib.suppress(*_PORT_ERRORS):
            port.close()

    def __repr__(self) -> str:
        return f"UrlEndpoint({self.url!r}, {self.baudrate})"


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


def _raw_pty() -> tuple[int, str]:
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
        master, self.slave_path = _raw_pty()
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
            with contextlib.suppress(*_PORT_ERRORS):
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


# --- the link ----------------------------------------------------------------------


class SerialLink:
    """A line protocol on a port: a reader thread, a writer thread, reconnection.

    ``write(data)`` never blocks: bytes are queued and the writer thread sends
    them (bytes written while no peer is connected are dropped and counted).
    Each ``write`` is sent whole before the next one starts, so a multi-line
    answer is never split by another writer.
    """

    def __init__(self, endpoint: Endpoint, protocol: LineProtocol, *,
                 max_line: int, retry_s: float = 0.5,
                 name: str = "serial-link") -> None:
        self.endpoint = endpoint
        self.protocol = protocol
        self.retry_s = retry_s
        self.name = name
        self.bytes_in = 0
        self.bytes_out = 0
        self.dropped = 0
        """Bytes not sent: no peer, or the peer stopped reading."""
        self.open_error: str | None = None
        """Why the port cannot be opened, while it cannot (None once it is open)."""
        self._assembler = LineAssembler(max_line)
        self._port: Any = None
        self._port_lock = threading.Lock()
        self._write_lock = threading.Lock()
        """Held while writing: a port is released only between writes."""
        self._writing: Any = None
        self._session = 0
        """Counts sessions (a peer's connection): an answer's tail is owed to one."""
        self._connected = threading.Event()
        self._closing = threading.Event()
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read_loop, name=f"{name}-reader",
                                        daemon=True)
        self._writer = threading.Thread(target=self._write_loop, name=f"{name}-writer",
                                        daemon=True)

    def start(self) -> Self:
        self._reader.start()
        self._writer.start()
        return self

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def wait_connected(self, timeout: float | None = None) -> bool:
        return self._connected.wait(timeout)

    def write(self, data: bytes) -> None:
        if data and not self._closing.is_set():
            self._outbox.put(bytes(data))

    def close(self, timeout: float = 2.0) -> None:
        """Stop both threads and release the port (idempotent)."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._outbox.put(None)
        self._cancel_write()
        if self._writer.is_alive() and self._writer is not threading.current_thread():
            self._writer.join(timeout)
        with self._port_lock:
            port = self._port
        if port is not None:
            with contextlib.suppress(Exception):
                port.cancel_read()
        if self._reader.is_alive() and self._reader is not threading.current_thread():
            self._reader.join(timeout)

    def _cancel_write(self) -> None:
        port = self._writing
        if port is not None:
            with contextlib.suppress(Exception):
                port.cancel_write()

    # --- reader --------------------------------------------------------------

    def _open(self) -> Any:
        """The port, opened (again) as soon as it can be; None once closing.

        The first failure of a run of them is logged at warning level (and kept
        in :attr:`open_error` until the port opens), the retries at debug."""
        while not self._closing.is_set():
            try:
                port = self.endpoint.open()
            except _PORT_ERRORS as error:
                if self.open_error is None:
                    _log.warning("%s: cannot open the serial port: %s (trying again every "
                                 "%g s)", self.endpoint.name, error, self.retry_s)
                else:
                    _log.debug("%s: cannot open: %s", self.endpoint.name, error)
                self.open_error = str(error)
            else:
                if self.open_error is not None:
                    _log.warning("%s: the serial port is open", self.endpoint.name)
                self.open_error = None
                with self._port_lock:
                    self._port = port
                return port
            self._closing.wait(self.retry_s)
        return None

    def _read_loop(self) -> None:
        while not self._closing.is_set():
            port = self._open()
            if port is None:
                break
            error: Exception | None = None
            try:
                self._pump(port)
            except _PORT_ERRORS as failure:
                error = failure
            if error is not None:  # the peer hung up (or the port failed): its session is over
                self._discard_input(port)
            partial = self._assembler.reset()
            was_connected = self._connected.is_set()
            self._connected.clear()
            with self._port_lock:
                self._port = None
            if was_connected:
                self._call(self.protocol.connection_lost, error, partial)
            self._cancel_write()
            with self._write_lock:
                self.endpoint.release(port, closing=self._closing.is_set())
            if error is not None:
                _log.debug("%s: %s", self.endpoint.name, error)
                self._closing.wait(self.retry_s)
        with self._port_lock:
            port, self._port = self._port, None
        if port is not None:
            with self._write_lock:
                self.endpoint.release(port, closing=True)

    @staticmethod
    def _discard_input(port: Any) -> None:
        """Drop what the port still holds of a peer that has gone.  A pty's
        master can report the hang-up while the kernel has not yet handed it
        all the peer's last bytes; read after, they would be taken for the
        next peer's lines (seen once, under load: a half-sent replay's lines
        answered as commands)."""
        with contextlib.suppress(*_PORT_ERRORS, AttributeError, termios.error):
            port.reset_input_buffer()

    def _pump(self, port: Any) -> None:
        """Read lines until the port fails (raises) or the link closes (returns)."""
        assembler = self._assembler
        protocol = self.protocol
        peer_left = getattr(self.endpoint, "peer_left", None)
        guard = getattr(self.endpoint, "guard", None)
        while not self._closing.is_set():
            data = port.read(1)
            if guard is not None:
                guard()
            if not self._connected.is_set():
                with self._port_lock:
                    self._session += 1
                self._connected.set()
                self._call(protocol.connection_made, self)
            if not data:
                self._call(protocol.handle_idle)
                continue
            waiting = port.in_waiting
            if waiting:
                data += port.read(waiting)
            self.bytes_in += len(data)
            if peer_left is not None and peer_left():
                # The peer closed and opened again (or another took its place)
                # before a hang-up was seen: its half line is not the start of
                # the new peer's; a new session starts.
                self._session += 1
                self._call(protocol.connection_lost, None, assembler.reset())
                self._call(protocol.connection_made, self)
            for item in assembler.feed(data):
                if self._closing.is_set():
                    return
                if isinstance(item, TooLong):
                    self._call(protocol.handle_too_long, item.limit)
                else:
                    self._call(protocol.handle_line, item)

    def _call(self, method: Any, *args: Any) -> None:
        """Call the protocol; a bug there is logged, never the end of the link."""
        try:
            method(*args)
        except Exception:  # pragma: no cover - a protocol bug
            _log.exception("%s: %s failed", self.name, getattr(method, "__name__", method))

    # --- writer --------------------------------------------------------------

    def _write_loop(self) -> None:
        owed = b""
        """The tail of an answer half sent when the peer stopped reading."""
        owed_session = -1
        while True:
            try:
                data = self._outbox.get(timeout=READ_POLL_S if owed else None)
            except queue.Empty:
                data = b""  # nothing new: try the owed tail again
            if data is None:
                return
            with self._write_lock:
                with self._port_lock:
                    port = self._port if self._connected.is_set() else None
                    session = self._session
                if owed and (port is None or session != owed_session):
                    self.dropped += len(owed)  # the peer that had its head is gone
                    owed = b""
                if port is None:
                    self.dropped += len(data)
                    continue
                self._writing = port
                try:
                    if owed:
                        owed = owed[self._send(port, owed, READ_POLL_S):]
                        if owed:
                            self.dropped += len(data)  # whole: the peer is not reading
                            continue
                    if not data:
                        continue
                    sent = self._send(port, data, _write_timeout(port))
                    if sent == 0:
                        self.dropped += len(data)
                        _log.warning("%s: the peer is not reading; dropped %d bytes",
                                     self.endpoint.name, len(data))
                    elif sent < len(data):
                        owed, owed_session = data[sent:], session
                except _PORT_ERRORS as error:
                    self.dropped += len(data) + len(owed)
                    owed = b""
                    _log.debug("%s: write failed: %s", self.endpoint.name, error)
                finally:
                    self._writing = None

    def _send(self, port: Any, data: bytes, timeout: float) -> int:
        """Write as much of ``data`` as the port takes within ``timeout`` s;
        the bytes written.  A port without a descriptor (``socket://``) is
        written by pyserial: all of it, or nothing on its write timeout."""
        fd = getattr(port, "fd", None)
        if not isinstance(fd, int) or fd < 0:
            try:
                written = port.write(data)
            except serial.SerialTimeoutException:
                return 0
            sent = len(data) if written is None else int(written)
            self.bytes_out += sent
            return sent
        deadline = time.monotonic() + timeout
        sent = 0
        while sent < len(data) and not self._closing.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            _, ready, _ = select.select([], [fd], [], min(left, READ_POLL_S))
            if not ready:
                continue
            try:
                written = os.write(fd, data[sent:])
            except BlockingIOError:
                continue
            sent += written
            self.bytes_out += written
        return sent


def _write_timeout(port: Any) -> float:
    timeout = getattr(port, "write_timeout", None)
    return WRITE_TIMEOUT_S if timeout is None else float(timeout)


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
        first, path_a = _raw_pty()
        second, path_b = _raw_pty()
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
