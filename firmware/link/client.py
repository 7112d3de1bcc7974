"""The laptop's end of the serial link: :class:`DeviceLink`.

It opens PORT (anything pyserial's ``serial_for_url`` opens: a device path
such as ``/dev/ttyACM0``, the emulator's pseudo-terminal, ``socket://``,
``loop://``), skips whatever the device had in flight with a ``sync`` request,
sends requests and checks the checksum of every line the device sends back
(the wire is :mod:`firmware.link.protocol`).
"""

# mypy: disable-error-code="import-untyped"
from __future__ import annotations

import secrets
import time
from collections import deque
from collections.abc import Callable

from drivers.serialport import LineAssembler, TooLong
from euchre_core.log import with_checksum

from .protocol import (
    CANCEL,
    DEFAULT_BAUDRATE,
    DEFAULT_TIMEOUT_S,
    EOL,
    EVENT,
    MAX_LINE,
    Answer,
    ProtocolError,
    carries_checksum,
    read_answer,
    request,
    verified,
)


class LinkError(Exception):
    """The port cannot be used, or the device did not answer properly."""


def checked(line: str) -> str:
    """A line from the device without its checksum; LinkError if it fails."""
    try:
        return verified(line)
    except ProtocolError as error:
        raise LinkError(str(error)) from None


class DeviceLink:
    """A connection to a referee over a serial port (client side)."""

    def __init__(self, port: str, baudrate: int = DEFAULT_BAUDRATE,
                 timeout: float = DEFAULT_TIMEOUT_S,
                 on_event: Callable[[str], None] | None = None) -> None:
        import serial

        self.port_name = port
        self.timeout = timeout
        self.on_event = on_event
        """Called with each live-feed line (``event LINE``) that arrives."""
        try:
            self.serial = serial.serial_for_url(port, baudrate=baudrate, timeout=0.05,
                                                write_timeout=timeout)
        except (serial.SerialException, OSError, ValueError) as error:
            raise LinkError(f"{port}: cannot open: {error}") from None
        self._lines: deque[str] = deque()
        self._assembler = LineAssembler(max_line=1 << 20)

    def __enter__(self) -> DeviceLink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.serial.close()
        except Exception:  # noqa: BLE001 - closing a port that already failed
            pass

    # --- bytes ---------------------------------------------------------------

    def write(self, data: bytes) -> None:
        import serial

        try:
            self.serial.write(data)
        except serial.SerialTimeoutException:
            raise LinkError(f"{self.port_name}: the device is not reading "
                            f"(nothing taken for {self.timeout:g} s)") from None
        except (serial.SerialException, OSError) as error:
            raise LinkError(f"{self.port_name}: {error}") from None

    def read_line(self, deadline: float | None) -> str | None:
        """The next line the device sent (checksum not yet checked), or None
        at the deadline (None: wait for ever)."""
        import serial

        while not self._lines:
            if deadline is not None and time.monotonic() >= deadline:
                return None
            try:
                data = self.serial.read(1)
                if data and self.serial.in_waiting:
                    data += self.serial.read(self.serial.in_waiting)
            except (serial.SerialException, OSError) as error:
                raise LinkError(f"{self.port_name}: the device went away ({error})") from None
            for item in self._assembler.feed(data):
                if isinstance(item, TooLong):
                    continue
                if item:
                    try:
                        self._lines.append(item.decode("utf-8"))
                    except UnicodeDecodeError:
                        self._lines.append(item.decode("utf-8", "replace"))
        return self._lines.popleft()

    def _next(self, deadline: float | None) -> str:
        """The next verified line that is not a live-feed event."""
        while True:
            raw = self.read_line(deadline)
            if raw is None:
                raise LinkError(f"{self.port_name}: no answer from the device within "
                                f"{self.timeout:g} s")
            line = checked(raw)
            if line.startswith(EVENT):
                if self.on_event is not None:
                    self.on_event(line[len(EVENT):])
                continue
            return line

    # --- requests --------------------------------------------------------------

    def sync(self) -> None:
        """Skip whatever the device had in flight: a stale half line, a replay
        left open, old answers.  Returns once ``sync TOKEN`` is answered."""
        token = secrets.token_hex(4)
        try:
            self.serial.reset_input_buffer()
        except Exception:  # noqa: BLE001 - not every URL handler can
            pass
        self.write(CANCEL + EOL + request(f"sync {token}"))
        deadline = time.monotonic() + self.timeout
        wanted = f"ok sync {token}"
        while True:
            raw = self.read_line(deadline)
            if raw is None:
                raise LinkError(f"{self.port_name}: no answer from the device within "
                                f"{self.timeout:g} s (is the referee running on this port?)")
            try:
                if verified(raw) == wanted:
                    return
            except ProtocolError:
                continue  # the tail of an old line

    def read_answer(self, timeout: float | None = None) -> Answer:
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        try:
            return read_answer(lambda: self._next(deadline),
                               lambda: checked(self._raw(deadline)))
        except ProtocolError as error:
            raise LinkError(str(error)) from None

    def _raw(self, deadline: float) -> str:
        raw = self.read_line(deadline)
        if raw is None:
            raise LinkError(f"{self.port_name}: the device stopped in the middle of an answer")
        return raw

    def request(self, line: str, timeout: float | None = None) -> Answer:
        """Send one request (with its checksum) and read its answer."""
        self.write(request(line))
        return self.read_answer(timeout)

    def replay(self, lines: list[bytes], *, load: bool = False) -> Answer:
        """Send a log (its lines, without line ends) to be checked; the verdict."""
        count = len(lines)
        head = "replay" + (" load" if load else "") + (f" {count}" if count else "")
        answer = self.request(head)
        if not answer.ok:
            return answer
        body = [armoured(line) + EOL for line in lines] or [b"." + EOL]
        chunk: list[bytes] = []
        size = 0
        for line in body:
            chunk.append(line)
            size += len(line)
            if size >= 4096:
                self.write(b"".join(chunk))
                chunk, size = [], 0
        if chunk:
            self.write(b"".join(chunk))
        return self.read_answer()


def armoured(line: bytes) -> bytes:
    """A log line with a checksum added for the trip over the wire, unless it
    has one, is not UTF-8 or would pass the device's line limit."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return line
    if carries_checksum(text) or len(line) + 5 > MAX_LINE:
        return line
    return with_checksum(text).encode("utf-8")


def log_lines(data: bytes) -> list[bytes]:
    """A file's lines as the log reader sees them (split at LF, a CR before it
    dropped); ValueError for a CR inside a line (the link would split it)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = []
    for number, line in enumerate(lines, start=1):
        if line.endswith(b"\r"):
            line = line[:-1]
        if b"\r" in line:
            raise ValueError(f"line {number}: a carriage return inside the line "
                             "(the serial link would split it)")
        out.append(line)
    return out
