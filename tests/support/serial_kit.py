"""Shared helpers for the test_fw_serial* tests (this module holds no tests).

A :class:`Device` is a real :class:`~firmware.app.Referee` (its journal in a
temporary directory, frames kept as views) running its main loop in a thread,
with the serial service on a real pseudo-terminal.  The host side is pyserial
on the pseudo-terminal's path: raw (:class:`Host`) or the laptop tool's own
client (:class:`firmware.link.client.DeviceLink`).

Barriers, not sleeps: a :class:`Host` starts with the link's handshake (``sync
TOKEN`` until it is answered, as the laptop tool does), :meth:`Device.peer`
returns once the referee has taken the new peer's session, and an absence
check reads up to the answer of a ``sync`` sent after the thing that must not
answer (:meth:`Host.before_sync`).  Timeouts only bound a failure: they are
long (:data:`TIMEOUT`), so a loaded machine is slow, never wrong.
"""

from __future__ import annotations

import contextlib
import errno
import queue
import random
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import serial

from drivers.pseudoterminal import NullModem, PtyEndpoint
from euchre_core import Game, checksum, write_log
from euchre_core.events import Undo
from euchre_core.log import HEADER
from firmware.app import Referee
from firmware.config import Config
from firmware.journal import Store
from firmware.link.protocol import DEFAULT_BAUDRATE, EVENT, WORKING
from firmware.link.service import SerialService

__all__ = ["ROOT", "FULL_GAME", "TIMEOUT", "Device", "Host", "answer_bytes", "cabled",
           "random_games_log", "wait_for"]

ROOT = Path(__file__).resolve().parents[2]
FULL_GAME = ROOT / "examples" / "full-game.log"
T = TypeVar("T")
TIMEOUT = 30.0
"""How long a test waits for the device before it fails (seconds).  Only a
failure waits this long; under CPU load an answer can take seconds."""
SYNC_AGAIN_S = 1.0
"""How long a handshake waits for its ``sync`` before it sends another."""


def answer_bytes(*lines: str) -> bytes:
    """What the device sends for these lines: each with its checksum, CR LF."""
    return b"".join(f"{line}*{checksum(line)}\r\n".encode() for line in lines)


def random_game(rng: random.Random) -> Game:
    """A whole game to its winner, each entry a random legal one (no undo)."""
    game = Game()
    while game.winner is None:
        game.push(rng.choice([entry for entry in game.legal_entries()
                              if not isinstance(entry, Undo)]))
    return game


def random_games_log(games: int, seed: int = 21) -> str:
    """One log of ``games`` random whole games (``euchre_core.write_log`` of
    each, one header), as a night's games exported one after another."""
    rng = random.Random(seed)
    lines = [HEADER]
    for _ in range(games):
        lines.extend(write_log(random_game(rng)).splitlines()[1:])
    return "\n".join(lines) + "\n"


def wait_for(condition: Callable[[], bool], timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for a condition")
        time.sleep(0.005)


class Device:
    """A referee with its main loop in a thread and its serial link on a pty.

    ``port`` None: a pseudo-terminal the device owns (the emulator's setup; the
    host opens ``self.path``), made here or given as ``endpoint`` (made before,
    so that peers can open it before the link starts).  A string: a path or
    URL the service opens itself.
    """

    endpoint: PtyEndpoint

    def __init__(self, state_dir: Path, port: str | None = None, *,
                 config: Config | None = None, retry_s: float = 0.02,
                 write_timeout: float | None = None,
                 endpoint: PtyEndpoint | None = None,
                 working_every: float | None = None) -> None:
        self.store = Store(state_dir)
        self.referee = Referee(config or Config(state_dir=state_dir), self.store,
                               renderer=lambda view: view)
        self.events: queue.Queue[Any] = queue.Queue()
        self._stop = threading.Event()
        self.thread = threading.Thread(
            target=self.referee.run, args=(self.events,),
            kwargs={"stop": self._stop.is_set, "poll": 0.05}, daemon=True,
        )
        self.thread.start()
        options: dict[str, Any] = {"retry_s": retry_s}
        if working_every is not None:
            options["working_every"] = working_every
        if port is None:
            if endpoint is None:
                endpoint = (PtyEndpoint(DEFAULT_BAUDRATE) if write_timeout is None else
                            PtyEndpoint(DEFAULT_BAUDRATE, write_timeout=write_timeout))
            self.endpoint = endpoint
            self.path = self.endpoint.slave_path
            self.service = SerialService.open(self.endpoint, 115200, self.events, self.referee,
                                              **options)
        else:
            self.path = port
            self.service = SerialService.open(port, 115200, self.events, self.referee,
                                              **options)

    def on_main(self, fn: Callable[[Referee], T]) -> T:
        """Run ``fn(referee)`` on the main loop (after everything queued before it)."""
        done = threading.Event()
        box: list[Any] = []

        def job(referee: Referee) -> None:
            try:
                box.append(fn(referee))
            finally:
                done.set()

        self.events.put(job)
        assert done.wait(TIMEOUT), "the main loop did not run the job"
        return box[0]  # type: ignore[no-any-return]

    def peer(self) -> Host:
        """A new peer on the device's own pseudo-terminal, returned once the
        device has taken its session, with no handshake (for tests of what a
        session's first bytes do).

        The open is tried again while it is refused with EBUSY, as the laptop
        tool does: the device keeps the pty exclusive (TIOCEXCL) until it has
        seen the last peer go, and only root may open it before that.  Then it
        waits until the device has marked the pty exclusive for this peer: it
        has read the master since the peer opened the slave, so what the peer
        writes now is never dropped with what a departed peer left (the
        reader drops the master's input when it sees a hang-up)."""
        host = Host(self.path, sync=False, busy_s=TIMEOUT)
        try:
            wait_for(lambda: self.endpoint.peer_watch.own > 0)
        except BaseException:
            host.close()
            raise
        return host

    def log(self) -> str:
        """The live game's canonical log (read on the main loop)."""
        return self.on_main(lambda referee: write_log(referee.game))

    def journal(self) -> list[str]:
        return self.on_main(lambda referee: referee.store.lines(referee.game_id))

    def close(self) -> None:
        self.service.close()
        self._stop.set()
        self.thread.join(5.0)
        self.store.close()


@contextlib.contextmanager
def cabled(state_dir: Path) -> Iterator[tuple[Device, str]]:
    """A device on one end of a null-modem cable, as a Pi on ``/dev/ttyGS0``, and
    the path of the laptop's end (its ``/dev/ttyACM0``): a port any number of
    programs may open at once, unlike the emulator's own pty, which the device
    keeps exclusive for its peer.  Yielded once the device has its end open."""
    with NullModem() as cable:
        device = Device(state_dir, cable.paths[0])
        try:
            wait_for(lambda: device.service.link.connected)
            yield device, cable.paths[1]
        finally:
            device.close()


class Host:
    """pyserial on the host end: raw bytes out, checksummed lines in.

    With ``sync`` (the default) it starts as the laptop tool does, with the
    link's handshake (:meth:`sync`).  ``busy_s``: how long an open refused with
    EBUSY (a pty still exclusive for the last peer) is tried again."""

    def __init__(self, path: str, *, sync: bool = True, busy_s: float = 0.0) -> None:
        busy_until = time.monotonic() + busy_s
        while True:
            try:
                self.port = serial.Serial(path, 115200, timeout=0.02)
                break
            except serial.SerialException as error:
                if error.errno != errno.EBUSY or time.monotonic() > busy_until:
                    raise
                time.sleep(0.01)
        self._buffer = b""
        self.events: list[str] = []
        """Live-feed lines (``event LINE``: the LINE) seen while reading answers."""
        self.progress: list[str] = []
        """Progress lines (``[@TAG ]working TEXT``, whole) seen while reading answers:
        a request that takes long (a long ``replay load``, a slow machine) is
        said to be under way about once a second, before its answer."""
        if sync:
            try:
                self.sync()
            except BaseException:
                self.port.close()
                raise

    def sync(self, timeout: float = TIMEOUT) -> None:
        """The link's handshake: ``sync TOKEN``, sent again each
        :data:`SYNC_AGAIN_S` without its answer, until one is answered;
        everything that came before that answer is dropped.

        Needed on a pty the device owns: a peer that writes at once after
        opening it can lose its first bytes, when the device's reader saw the
        pty without a peer just before the open and drops the master's input
        just after (what a departed peer left).  Answers come in order, so the
        answer to the last ``sync`` sent is the last one owed."""
        deadline = time.monotonic() + timeout
        while True:
            token = f"hello-{secrets.token_hex(4)}"
            self.write(f"sync {token}\r\n".encode())
            wait = min(SYNC_AGAIN_S, deadline - time.monotonic())
            try:
                self.read_bytes(answer_bytes(f"ok sync {token}"), wait)
                return
            except AssertionError:
                if time.monotonic() >= deadline:
                    raise

    def before_sync(self, timeout: float = TIMEOUT) -> bytes:
        """Everything the device sends before it answers a ``sync`` sent now (an
        absence check expects nothing).  The answer to any request sent before,
        and any feed line written before, comes ahead of the sync's answer."""
        token = f"barrier-{secrets.token_hex(4)}"
        self.write(f"sync {token}\r\n".encode())
        ending = answer_bytes(f"ok sync {token}")
        return self.read_bytes(ending, timeout)[:-len(ending)]

    def close(self) -> None:
        self.port.close()

    def write(self, data: bytes) -> None:
        self.port.write(data)

    def read_bytes(self, ending: bytes, timeout: float = TIMEOUT) -> bytes:
        """Everything up to and including ``ending``."""
        deadline = time.monotonic() + timeout
        while ending not in self._buffer:
            if time.monotonic() > deadline:
                raise AssertionError(f"no {ending!r} from the device; got {self._buffer!r}")
            self._buffer += self.port.read(max(1, self.port.in_waiting))
        index = self._buffer.index(ending) + len(ending)
        data, self._buffer = self._buffer[:index], self._buffer[index:]
        return data

    def line(self, timeout: float = TIMEOUT) -> str:
        """The next line, its checksum checked and removed."""
        raw = self.read_bytes(b"\r\n", timeout)[:-2].decode("utf-8")
        body, star, given = raw.rpartition("*")
        assert star and checksum(body) == given, f"bad checksum on {raw!r}"
        return body

    def answer(self, timeout: float = TIMEOUT) -> list[str]:
        """The next answer's lines (feed and progress lines set aside): one line,
        or a whole frame."""
        while True:
            first = self.line(timeout)
            head = first.split(" ", 1)[1] if first.startswith("@") else first  # a tagged answer
            if first.startswith(EVENT):
                self.events.append(first[len(EVENT):])
            elif head.startswith(WORKING):
                self.progress.append(first)
            else:
                break
        if not head.startswith("ok begin "):
            return [first]
        count = int(head.split()[2])
        lines = [first, *(self.line(timeout) for _ in range(count + 1))]
        assert lines[-1] == "ok end", lines
        return lines

    def feed(self, count: int, timeout: float = TIMEOUT) -> list[str]:
        """Read on until ``count`` live-feed lines have been seen in all; them."""
        while len(self.events) < count:
            line = self.line(timeout)
            assert line.startswith("event "), f"not a feed line: {line!r}"
            self.events.append(line[6:])
        return self.events

    def ask(self, request: str, timeout: float = TIMEOUT) -> list[str]:
        self.write(request.encode("utf-8") + b"\r\n")
        return self.answer(timeout)
