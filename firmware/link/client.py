"""The laptop's end of the serial link: :class:`DeviceLink`.

It opens PORT (anything pyserial's ``serial_for_url`` opens: a device path
such as ``/dev/ttyACM0``, the emulator's pseudo-terminal, ``socket://``,
``loop://``) exclusively (a second laptop command on the same port is told
the port is in use), skips whatever the device had in flight with a ``sync``
request, sends each request with a tag of its own and takes only the answer
that carries it, and checks the checksum of every line the device sends back
(the wire is :mod:`firmware.link.protocol`).
"""

# mypy: disable-error-code="import-untyped"
from __future__ import annotations

import errno
import itertools
import os
import re
import secrets
import stat
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Final

from drivers.serialport import LineAssembler, TooLong
from euchre_core.lines import CONTROL_CODES, control_reason, with_checksum

from .protocol import (
    CANCEL,
    DEFAULT_BAUDRATE,
    DEFAULT_TIMEOUT_S,
    EOL,
    EVENT,
    MAX_LINE,
    MAX_REPLAY_LINES,
    REPLAY_IDLE_S,
    WORKING,
    Answer,
    ProtocolError,
    answer_tag,
    carries_checksum,
    frame_size,
    read_answer,
    request,
    too_long_reason,
    too_many_lines_reason,
    verified,
)

BUSY_RETRY_S: Final = 2.0
"""How long a port marked exclusive (EBUSY) is tried again before it is "in use"."""
EMPTY_READS: Final = 50
"""Empty reads in a row from a port that said it had data: it has hung up."""
IN_USE: Final = "the port is in use by another program"
"""Said when PORT is open in another laptop command, picocom or the like."""
_IN_USE_ERRNOS: Final = (errno.EAGAIN, errno.EWOULDBLOCK, errno.EBUSY)


class LinkError(Exception):
    """The port cannot be used, or the device did not answer properly."""


class AnswerLost(LinkError):
    """A request's answer did not come (whole), though the device answered: the
    answer to a request sent after it came first, or lines of it came torn
    or missing.  Another program reading the port takes such answers."""


class NoAnswer(LinkError):
    """Nothing came for a request within the timeout (nor any progress line)."""


def _open_error(port: str, error: BaseException) -> LinkError:
    """One line for a port that would not open; "in use" when another program has it."""
    number = getattr(error, "errno", None)
    text = str(error)
    if number in _IN_USE_ERRNOS or "exclusively lock" in text or "busy" in text.lower():
        return LinkError(f"{port}: {IN_USE} (close it there, or wait for it to finish)")
    return LinkError(f"{port}: cannot open: {error}")


def port_users(port: str) -> list[str] | None:
    """The other programs that have PORT (a device path) open, each as
    ``COMMAND LINE (pid N)``, from ``/proc`` (Linux; another user's programs only
    when run as root); None where that cannot be told (no ``/proc``, a
    URL).  A program holding the master of PORT's pseudo-terminal (the
    emulator: the device's own end) is not one of them."""
    try:
        info = os.stat(port)
    except (OSError, ValueError):
        return None
    if not stat.S_ISCHR(info.st_mode) or not os.path.isdir("/proc/self/fd"):
        return None
    real = os.path.realpath(port)
    index = real.rsplit("/", 1)[1] if real.startswith("/dev/pts/") else None
    users = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        holds = master = False
        try:
            fds = list(os.scandir(f"{entry.path}/fd"))
        except OSError:
            continue
        for fd in fds:
            try:
                held = os.stat(fd.path)
                if held.st_rdev == info.st_rdev and stat.S_ISCHR(held.st_mode):
                    holds = True
                elif index is not None and os.readlink(fd.path) == "/dev/ptmx":
                    with open(f"{entry.path}/fdinfo/{fd.name}", encoding="ascii") as fdinfo:
                        master = master or f"tty-index:\t{index}\n" in fdinfo.read()
            except OSError:
                continue
        if holds and not master:
            users.append(f"{_command_line(entry.path)} (pid {entry.name})")
    return users


def _command_line(proc: str) -> str:
    """How a process was started (``cat /dev/ttyACM0``), from ``/proc/PID``."""
    try:
        with open(f"{proc}/cmdline", "rb") as cmdline:
            args = cmdline.read().decode("utf-8", "replace").rstrip("\0").split("\0")
        args[0] = os.path.basename(args[0])
        text = " ".join(args)
    except (OSError, IndexError):
        text = ""
    if not text:
        try:
            with open(f"{proc}/comm", encoding="utf-8", errors="replace") as comm:
                text = comm.read().strip()
        except OSError:
            text = "?"
    return text if len(text) <= 80 else text[:79] + "…"


def reader_words(port: str) -> str:
    """Words for answers another program may be taking: who has PORT open."""
    users = port_users(port)
    if users:
        return (f"another program has the port open and may be reading the device's answers: "
                f"{', '.join(users)} (close it)")
    return "another program may be reading the port (a forgotten cat or screen? close it)"


class _Deadline:
    """When a wait ends: ``wait`` seconds from now, or from the last :meth:`again`."""

    def __init__(self, wait: float) -> None:
        self.wait = wait
        self.at = time.monotonic() + wait

    def again(self) -> None:
        self.at = time.monotonic() + self.wait


class DeviceLink:
    """A connection to a referee over a serial port (client side)."""

    def __init__(self, port: str, baudrate: int = DEFAULT_BAUDRATE,
                 timeout: float = DEFAULT_TIMEOUT_S,
                 on_event: Callable[[str], None] | None = None,
                 on_working: Callable[[str], None] | None = None) -> None:
        import serial

        self.port_name = port
        self.timeout = timeout
        """Seconds to wait for an answer, again from each progress line."""
        self.on_event = on_event
        """Called with each live-feed line (``event LINE``) that arrives."""
        self.on_working = on_working
        """Called with the TEXT of each progress line (``working TEXT``) that
        says the request waited for, or one before it, is under way."""
        self.skipped: list[str] = []
        """Lines that were not the answer waited for (another request's, stray, torn)."""
        self.torn = 0
        """Lines that failed their checksum (torn: part of them taken or lost)."""
        self.bytes_in = 0
        """Bytes read from the port."""
        self.lost: list[str] = []
        """Why each answer asked for again (:meth:`ask`) was lost."""
        busy_until = time.monotonic() + BUSY_RETRY_S
        while True:
            try:
                self.serial = serial.serial_for_url(port, baudrate=baudrate, timeout=0.05,
                                                    write_timeout=timeout, exclusive=True)
                break
            except (serial.SerialException, OSError, ValueError) as error:
                # EBUSY: the pseudo-terminal is still marked exclusive for a peer
                # that has just closed it; the referee lifts that in a moment.
                if getattr(error, "errno", None) != errno.EBUSY or (
                        time.monotonic() > busy_until):
                    raise _open_error(port, error) from None
                time.sleep(0.05)
        self._lines: deque[str] = deque()
        self._assembler = LineAssembler(max_line=1 << 20)
        self._empty_reads = 0
        self._session = secrets.token_hex(3)
        self._tags: Iterator[str] = (f"{self._session}{number}"
                                     for number in itertools.count(1))

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
                # pyserial's "readiness to read but returned no data" comes now
                # and then while another program has the port open too (a
                # pseudo-terminal shared with miniterm): a hang-up says it again
                # and again, a shared port only once in a while.
                self._empty_reads += 1
                if "returned no data" not in str(error) or self._empty_reads > EMPTY_READS:
                    raise LinkError(f"{self.port_name}: the device went away ({error})") from None
                time.sleep(0.01)
                continue
            if data:
                self._empty_reads = 0
                self.bytes_in += len(data)
            for item in self._assembler.feed(data):
                if isinstance(item, TooLong):
                    continue
                if item:
                    try:
                        self._lines.append(item.decode("utf-8"))
                    except UnicodeDecodeError:
                        self._lines.append(item.decode("utf-8", "replace"))
        return self._lines.popleft()

    def _working(self, text: str) -> None:
        if self.on_working is not None:
            self.on_working(text)

    def _number(self, tag: str) -> int | None:
        """The number of one of this link's own tags, else None."""
        rest = tag[len(self._session):]
        if tag.startswith(self._session) and rest.isascii() and rest.isdigit():
            return int(rest)
        return None

    def _next(self, deadline: _Deadline, tag: str) -> str:
        """The next verified line that is not a live-feed event and carries
        ``tag`` (which is removed).  Anything else is skipped: a line failing
        its checksum (torn, stray), an answer to another request (a frame
        with its lines).  A progress line (``working TEXT``) with ``tag``
        says the request is under way: the wait starts again.  The answer
        to one of this link's requests sent after it means the answer was
        lost (answers come in order): :class:`AnswerLost`."""
        skip = 0
        number = self._number(tag)
        while True:
            raw = self.read_line(deadline.at)
            if raw is None:
                raise NoAnswer(f"{self.port_name}: no answer from the device within "
                               f"{self.timeout:g} s")
            try:
                line = verified(raw)
            except ProtocolError:
                self.torn += 1
                self.skipped.append(raw)
                continue
            found, body = answer_tag(line)
            if skip:
                if self._number(found) is None:
                    skip -= 1
                    self.skipped.append(line)
                    continue
                skip = 0  # one of ours: that frame's lines did not all come here
            if line.startswith(EVENT):
                if self.on_event is not None:
                    self.on_event(line[len(EVENT):])
                continue
            if found == tag and body.startswith(WORKING):
                deadline.again()
                self._working(body[len(WORKING):])
                continue
            if found == tag:
                return body
            later = self._number(found)
            if number is not None and later is not None and later > number:
                raise AnswerLost(f"{self.port_name}: the answer did not come, though the "
                                 "device answered the request sent after it")
            self.skipped.append(line)
            size = frame_size(body)
            if size is not None:
                skip = size + 1  # its lines and its end

    # --- requests --------------------------------------------------------------

    def sync(self) -> None:
        """Skip whatever the device had in flight: a stale half line, a replay
        left open, old answers.  Returns once ``sync TOKEN`` is answered.

        A counted replay left open by a program that died takes every byte as
        data until it has been quiet for :data:`REPLAY_IDLE_S`: so ``sync`` is
        sent again each time that passes without its answer."""
        try:
            self.serial.reset_input_buffer()
        except Exception:  # noqa: BLE001 - not every URL handler can
            pass
        wanted: set[str] = set()
        deadline = time.monotonic() + self.timeout + REPLAY_IDLE_S
        while True:
            token = secrets.token_hex(4)
            wanted.add(f"ok sync {token}")
            self.write(CANCEL + EOL + request(f"sync {token}"))
            again = min(deadline, time.monotonic() + REPLAY_IDLE_S + 1.0)
            while True:
                raw = self.read_line(again)
                if raw is None:
                    break
                try:
                    line = verified(raw)
                except ProtocolError:
                    continue  # the tail of an old line
                if line in wanted:
                    return
                body = answer_tag(line)[1]
                if body.startswith(WORKING):
                    # Still at an earlier request (another program's long load):
                    # the device is there and will come to this sync.
                    deadline = time.monotonic() + self.timeout + REPLAY_IDLE_S
                    again = min(deadline, time.monotonic() + REPLAY_IDLE_S + 1.0)
                    self._working(f"(an earlier request) {body[len(WORKING):]}")
            if again >= deadline:
                raise NoAnswer(f"{self.port_name}: {self._silence()}")

    def _silence(self) -> str:
        """Words for a device that answered no ``sync``: what came instead."""
        waited = f"within {self.timeout:g} s"
        if self.bytes_in == 0:
            users = port_users(self.port_name)
            if users:
                return f"nothing came from the device {waited}: {reader_words(self.port_name)}"
            return (f"no answer from the device {waited} (is the referee running on this "
                    "port? or another program reading it?)")
        if self.torn:
            return (f"no whole answer from the device {waited} ({self.torn} lines came torn): "
                    f"{reader_words(self.port_name)}")
        return f"no answer from the device {waited}: {reader_words(self.port_name)}"

    def read_answer(self, tag: str, timeout: float | None = None) -> Answer:
        """The answer that carries ``tag`` (others are skipped).  It is waited
        for ``timeout`` s (default :attr:`timeout`), again from each progress
        line of the request.  :class:`AnswerLost` when it is seen not to
        come whole; :class:`NoAnswer` when nothing came in time."""
        deadline = _Deadline(self.timeout if timeout is None else timeout)

        def inside() -> str:
            raw = self.read_line(deadline.at)
            if raw is None:
                raise NoAnswer(f"{self.port_name}: the device stopped in the middle of an "
                               "answer")
            try:
                line = verified(raw)
            except ProtocolError as error:
                self.torn += 1
                raise AnswerLost(f"{self.port_name}: {error}") from None
            if self._number(answer_tag(line)[0]) is not None:
                raise AnswerLost(f"{self.port_name}: an answer came with lines missing")
            return line

        try:
            return read_answer(lambda: self._next(deadline, tag), inside)
        except ProtocolError as error:
            raise AnswerLost(f"{self.port_name}: {error}") from None

    def new_tag(self) -> str:
        return next(self._tags)

    def request(self, line: str, timeout: float | None = None, *, tag: str | None = None,
                barrier: bool = False) -> Answer:
        """Send one request (tagged, with its checksum) and read its answer.

        ``barrier``: a ``sync`` goes right after it, so an answer taken by
        another program reading the port is known lost as soon as the sync's
        answer comes (:class:`AnswerLost`), not at the timeout."""
        tag = self.new_tag() if tag is None else tag
        data = request(line, tag)
        if barrier:
            data += request("sync", self.new_tag())
        self.write(data)
        return self.read_answer(tag, timeout)

    def ask(self, line: str, *, tries: int = 3) -> Answer:
        """A request that changes nothing (``status``, ``export``), asked again
        when its answer is lost, ``tries`` times in all (:attr:`lost` says
        why each was asked again)."""
        attempt = 1
        while True:
            try:
                return self.request(line, barrier=True)
            except AnswerLost as error:
                if attempt >= tries:
                    raise
                self.lost.append(str(error))
                attempt += 1

    def replay(self, lines: list[bytes], *, load: bool = False) -> Answer:
        """Send a log (its lines, without line ends) to be checked; the verdict."""
        count = len(lines)
        head = "replay" + (" load" if load else "") + (f" {count}" if count else "")
        tag = self.new_tag()
        answer = self.request(head, tag=tag)
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
        return self.read_answer(tag)


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


_CONTROL: Final = re.compile(b"[" + re.escape(bytes(sorted(CONTROL_CODES))) + b"]")
"""Bytes no log line holds (``euchre_core.lines.CONTROL_CODES``): never sent."""


def log_lines(data: bytes) -> list[bytes]:
    """A file's lines as the log reader sees them (split at LF, a CR before it
    dropped), checked against what the link carries and the device's limits
    (:data:`MAX_LINE` bytes a line, :data:`MAX_REPLAY_LINES` lines).
    ValueError, in one line naming the line, for what cannot be sent."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if len(lines) > MAX_REPLAY_LINES:
        raise ValueError(f"{len(lines)} lines: {too_many_lines_reason()}: "
                         "the device cannot take it (nothing sent)")
    out = []
    for number, line in enumerate(lines, start=1):
        if line.endswith(b"\r"):
            line = line[:-1]
        if b"\r" in line:
            raise ValueError(f"line {number}: a carriage return inside the line "
                             "(the serial link would split it)")
        if _CONTROL.search(line) is not None:
            reason = control_reason(line.decode("latin-1"))  # the same words as the replay's
            raise ValueError(f"line {number}: {reason} (nothing sent)")
        if len(line) > MAX_LINE:
            raise ValueError(f"line {number}: {too_long_reason()}: the device cannot take it "
                             "(nothing sent)")
        out.append(line)
    return out
