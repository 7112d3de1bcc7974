"""The laptop side of the serial link: ``send``, ``status``, ``export``, ``enter``, ``watch``.

Each command opens PORT (anything pyserial's ``serial_for_url`` opens: a device
path such as ``/dev/ttyACM0``, the emulator's pseudo-terminal, ``socket://``,
``loop://``), skips whatever the device had in flight with a ``sync`` request,
sends its requests and checks the checksum of every line the device sends
back.  The protocol is in docs/serial-protocol.md.

Exit status: 0 done (``send``: the log is valid), 1 the device said no (an
invalid log, a refused entry, no such game), 2 usage or port errors.
"""

# mypy: disable-error-code="import-untyped"
from __future__ import annotations

import argparse
import json
import re
import secrets
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TextIO

from drivers.serialport import DEFAULT_BAUDRATE, LineAssembler, TooLong
from euchre_core import checksum
from euchre_core.log import with_checksum

EXIT_OK, EXIT_REFUSED, EXIT_USAGE = 0, 1, 2
DEFAULT_TIMEOUT_S: Final = 10.0
MAX_LINE: Final = 512
"""The device's line limit (firmware.serial_service.MAX_LINE)."""
SUMMARY_KEYS: Final = ("file", "score", "hands_played", "dealer", "winner", "error")
"""The keys of ``euchre-referee replay --json``, in its order."""

_CHECKSUMMED: Final = re.compile(r"\*[0-9A-Fa-f]{4}\s*$")


class LinkError(Exception):
    """The port cannot be used, or the device did not answer properly."""


@dataclass
class Answer:
    """One answer: ``ok``/``error`` and its text; a framed answer has ``lines``."""

    ok: bool
    text: str
    lines: list[str] | None = None


def verified(line: str) -> str:
    """A line from the device without its ``*XXXX``; LinkError if it does not match."""
    if len(line) < 5 or line[-5] != "*":
        raise LinkError(f"a line from the device has no checksum: {line!r}")
    body, given = line[:-5], line[-4:]
    if checksum(body) != given.upper():
        raise LinkError(f"a line from the device fails its checksum (*{given}): {line!r}")
    return body


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
            line = verified(raw)
            if line.startswith("event "):
                if self.on_event is not None:
                    self.on_event(line[6:])
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
        self.write(b"\x03\r\n" + with_checksum(f"sync {token}").encode() + b"\r\n")
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
            except LinkError:
                continue  # the tail of an old line

    def read_answer(self, timeout: float | None = None) -> Answer:
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        line = self._next(deadline)
        word, _, text = line.partition(" ")
        if word == "error":
            return Answer(False, text)
        if word != "ok":
            raise LinkError(f"not an answer from the device: {line!r}")
        parts = text.split(" ", 2)
        if parts[0] == "begin" and len(parts) >= 2 and parts[1].isdigit():
            count = int(parts[1])
            lines = [verified(self._raw(deadline)) for _ in range(count)]
            end = verified(self._raw(deadline))
            if end != "ok end":
                raise LinkError(f"a framed answer did not end with 'ok end': {end!r}")
            return Answer(True, parts[2] if len(parts) > 2 else "", lines)
        return Answer(True, text)

    def _raw(self, deadline: float) -> str:
        raw = self.read_line(deadline)
        if raw is None:
            raise LinkError(f"{self.port_name}: the device stopped in the middle of an answer")
        return raw

    def request(self, line: str, timeout: float | None = None) -> Answer:
        """Send one request (with its checksum) and read its answer."""
        self.write(with_checksum(line).encode("utf-8") + b"\r\n")
        return self.read_answer(timeout)

    def replay(self, lines: list[bytes], *, load: bool = False) -> Answer:
        """Send a log (its lines, without line ends) to be checked; the verdict."""
        count = len(lines)
        head = "replay" + (" load" if load else "") + (f" {count}" if count else "")
        answer = self.request(head)
        if not answer.ok:
            return answer
        body = [armoured(line) + b"\r\n" for line in lines] or [b".\r\n"]
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
    if _CHECKSUMMED.search(text) or len(line) + 5 > MAX_LINE:
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


# --- the commands -----------------------------------------------------------------


def _connect(args: argparse.Namespace, on_event: Callable[[str], None] | None = None
             ) -> DeviceLink:
    link = DeviceLink(args.port, args.baudrate, args.timeout, on_event)
    try:
        link.sync()
    except LinkError:
        link.close()
        raise
    return link


def _fail(message: str) -> int:
    print(f"euchre-referee: {message}", file=sys.stderr)
    return EXIT_USAGE


def _cmd_send(args: argparse.Namespace) -> int:
    path: str = args.file
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except FileNotFoundError:
        print(f"{path}: no such file", file=sys.stderr)
        return EXIT_USAGE
    except OSError as error:
        print(f"{path}: {error.strerror}", file=sys.stderr)
        return EXIT_USAGE
    try:
        lines = log_lines(data)
    except ValueError as error:
        print(f"{path}: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        with _connect(args) as link:
            answer = link.replay(lines, load=args.load)
    except LinkError as error:
        return _fail(str(error))
    if not answer.ok or not answer.lines:
        return _fail(f"the device refused the log: {answer.text}")
    try:
        verdict = json.loads(answer.lines[0])
        summary = {key: verdict[key] for key in SUMMARY_KEYS}
    except (ValueError, KeyError, TypeError):
        return _fail(f"not a verdict from the device: {answer.lines[0]!r}")
    summary["file"] = path
    text = list(answer.lines[1:])
    if text and text[0].startswith(f"{verdict['file']}:"):
        text[0] = path + text[0][len(verdict["file"]):]
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
        for line in text:
            if line.startswith(("loaded ", "not loaded")):
                print(line, file=sys.stderr)
    else:
        print("\n".join(text))
    return EXIT_OK if summary["error"] is None else EXIT_REFUSED


def _cmd_status(args: argparse.Namespace) -> int:
    try:
        with _connect(args) as link:
            answer = link.request("status json" if args.json else "status")
    except LinkError as error:
        return _fail(str(error))
    if not answer.ok:
        return _fail(f"the device said: {answer.text}")
    if args.json:
        try:
            status = json.loads(answer.text)
        except ValueError:
            return _fail(f"not a status from the device: {answer.text!r}")
        print(json.dumps(status, ensure_ascii=False))
    else:
        print("\n".join(answer.lines or [answer.text]))
    return EXIT_OK


def _cmd_export(args: argparse.Namespace) -> int:
    request = "export" if args.game is None else f"export {args.game}"
    try:
        with _connect(args) as link:
            answer = link.request(request)
    except LinkError as error:
        return _fail(str(error))
    if not answer.ok or answer.lines is None:
        print(f"euchre-referee: {answer.text}", file=sys.stderr)
        return EXIT_REFUSED
    sys.stdout.write("".join(line + "\n" for line in answer.lines))
    return EXIT_OK


def _cmd_enter(args: argparse.Namespace) -> int:
    event = " ".join(args.event).strip()
    if not event:
        return _fail("enter: which event? (e.g. enter trick N)")
    try:
        with _connect(args) as link:
            answer = link.request(f"enter {event}")
    except LinkError as error:
        return _fail(str(error))
    if not answer.ok:
        print(answer.text, file=sys.stderr)
        return EXIT_REFUSED
    print(answer.text)
    return EXIT_OK


def follow(link: DeviceLink, out: TextIO, *, stop: Callable[[], bool] = lambda: False) -> None:
    """Print each live-feed line until ``stop()`` or Ctrl-C (turning the feed off)."""

    def show(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    link.on_event = show
    answer = link.request("watch on")
    if not answer.ok:
        raise LinkError(f"the device refused the feed: {answer.text}")
    try:
        while not stop():
            raw = link.read_line(time.monotonic() + 0.2)
            if raw is None:
                continue
            line = verified(raw)
            if line.startswith("event "):
                show(line[6:])
    finally:
        try:
            link.write(with_checksum("watch off").encode() + b"\r\n")
        except LinkError:
            pass


def _cmd_watch(args: argparse.Namespace) -> int:
    try:
        with _connect(args) as link:
            try:
                follow(link, sys.stdout)
            except KeyboardInterrupt:
                pass
    except LinkError as error:
        return _fail(str(error))
    return EXIT_OK


def _port_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", required=True, metavar="PORT",
                        help="the device's serial port: a path (/dev/ttyACM0, the emulator's "
                        "pseudo-terminal) or a pyserial URL (socket://HOST:PORT)")
    parser.add_argument("--baudrate", type=int, default=DEFAULT_BAUDRATE, metavar="N",
                        help=f"bits per second (default {DEFAULT_BAUDRATE})")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                        help=f"seconds to wait for each answer (default {DEFAULT_TIMEOUT_S:g})")


def register(commands: Any) -> None:
    """Add the laptop commands to ``euchre-referee``."""
    exits = "Exit 0 done, 1 refused by the device, 2 usage or port errors."
    send = commands.add_parser(
        "send", help="replay a log on the device over a serial port; print its verdict",
        description="Send FILE to the referee on PORT to be checked line by line; print the "
        "verdict like 'replay' does (or its --json object). Exit 0 when the log is valid, 1 "
        "when it is invalid, 2 on usage or port errors.",
    )
    _port_options(send)
    send.add_argument("--json", action="store_true", help="print the 'replay --json' object")
    send.add_argument("--load", action="store_true",
                      help="when valid, make the log the device's current game")
    send.add_argument("file", metavar="FILE", help="a game log ('-': standard input)")
    send.set_defaults(run=_cmd_send)
    status = commands.add_parser(
        "status", help="the device's live game", description="Print the live game on the "
        "referee at PORT: score, hand, dealer, leader, call, tricks, what comes next. " + exits)
    _port_options(status)
    status.add_argument("--json", action="store_true", help="one JSON object")
    status.set_defaults(run=_cmd_status)
    export = commands.add_parser(
        "export", help="a game from the device as a log",
        description="Print the device's current game (or stored game ID) as a clean log. "
        + exits)
    _port_options(export)
    export.add_argument("--game", type=int, metavar="ID", help="a stored game (default: current)")
    export.set_defaults(run=_cmd_export)
    enter = commands.add_parser(
        "enter", help="enter one table event on the device",
        description="Enter one table event on the referee at PORT, as its buttons would "
        "(e.g. 'trick N', 'make E H alone', 'undo'). Exit 0 once it is durable, 1 when the "
        "device refuses it (the reason on stderr), 2 on port errors.",
    )
    _port_options(enter)
    enter.add_argument("event", nargs="+", metavar="EVENT", help="the event's words")
    enter.set_defaults(run=_cmd_enter)
    watch = commands.add_parser(
        "watch", help="follow the device's live feed",
        description="Print each table event as it is entered on the referee at PORT (by its "
        "buttons or over the link), one log line each, until Ctrl-C.",
    )
    _port_options(watch)
    watch.set_defaults(run=_cmd_watch)
