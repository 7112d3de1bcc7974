# mypy: disable-error-code="import-untyped"
"""Serial ports for a line protocol: opened by URL, read by a thread, written from a queue.

Nothing here knows the game.  A port is anything pyserial opens with
:func:`serial.serial_for_url` (``/dev/ttyGS0``, ``/dev/serial0``, a
pseudo-terminal's path, ``socket://host:port``, ``loop://``), or the master
side of a pseudo-terminal this process created (:class:`drivers.pseudoterminal.PtyEndpoint`,
what the emulator offers to a laptop: that module has the pseudo-terminals).

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
import logging
import os
import queue
import re
import select
import termios
import threading
import time
from dataclasses import dataclass
from typing import Any, Final, Protocol, Self

import serial
import serial.serialposix

__all__ = [
    "Endpoint",
    "LineAssembler",
    "LineProtocol",
    "SerialLink",
    "TooLong",
    "UrlEndpoint",
]

READ_POLL_S: Final = 0.2
"""Read timeout: how often the reader looks up from a silent port."""
WRITE_TIMEOUT_S: Final = 5.0
"""A write that the peer does not take in this time is dropped."""

_log = logging.getLogger(__name__)
_TERMINATOR: Final = re.compile(rb"[\r\n]")
PORT_ERRORS: Final = (serial.SerialException, OSError)


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
        with contextlib.suppress(*PORT_ERRORS):
            port.close()

    def __repr__(self) -> str:
        return f"UrlEndpoint({self.url!r}, {self.baudrate})"


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
            except PORT_ERRORS as error:
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
            except PORT_ERRORS as failure:
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
        with contextlib.suppress(*PORT_ERRORS, AttributeError, termios.error):
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
                except PORT_ERRORS as error:
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
