"""Shared helpers for the test_fw_serial* tests (this module holds no tests).

A :class:`Device` is a real :class:`~firmware.app.Referee` (its journal in a
temporary directory, frames kept as views) running its main loop in a thread,
with the serial service on a real pseudo-terminal.  The host side is pyserial
on the pseudo-terminal's path: raw (:class:`Host`) or the laptop tool's own
client (:class:`firmware.link.client.DeviceLink`).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import serial

from drivers.serialport import PtyEndpoint
from euchre_core import checksum, write_log
from firmware.app import Referee
from firmware.config import Config
from firmware.journal import Store
from firmware.link.protocol import DEFAULT_BAUDRATE
from firmware.link.service import SerialService

__all__ = ["ROOT", "FULL_GAME", "Device", "Host", "answer_bytes", "wait_for"]

ROOT = Path(__file__).resolve().parents[2]
FULL_GAME = ROOT / "examples" / "full-game.log"
T = TypeVar("T")


def answer_bytes(*lines: str) -> bytes:
    """What the device sends for these lines: each with its checksum, CR LF."""
    return b"".join(f"{line}*{checksum(line)}\r\n".encode() for line in lines)


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for a condition")
        time.sleep(0.005)


class Device:
    """A referee with its main loop in a thread and its serial link on a pty.

    ``port`` None: a pseudo-terminal the device owns (the emulator's setup; the
    host opens ``self.path``).  A string: a path or URL the service opens itself.
    """

    def __init__(self, state_dir: Path, port: str | None = None, *,
                 config: Config | None = None, retry_s: float = 0.02,
                 write_timeout: float | None = None) -> None:
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
        if port is None:
            self.endpoint = (PtyEndpoint(DEFAULT_BAUDRATE) if write_timeout is None else
                             PtyEndpoint(DEFAULT_BAUDRATE, write_timeout=write_timeout))
            self.path = self.endpoint.slave_path
            self.service = SerialService.open(self.endpoint, 115200, self.events, self.referee,
                                              retry_s=retry_s)
        else:
            self.path = port
            self.service = SerialService.open(port, 115200, self.events, self.referee,
                                              retry_s=retry_s)

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
        assert done.wait(5.0), "the main loop did not run the job"
        return box[0]  # type: ignore[no-any-return]

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


class Host:
    """pyserial on the host end: raw bytes out, checksummed lines in."""

    def __init__(self, path: str) -> None:
        self.port = serial.Serial(path, 115200, timeout=0.02)
        self._buffer = b""
        self.events: list[str] = []
        """Live-feed lines (``event LINE``: the LINE) seen while reading answers."""

    def close(self) -> None:
        self.port.close()

    def write(self, data: bytes) -> None:
        self.port.write(data)

    def read_bytes(self, ending: bytes, timeout: float = 5.0) -> bytes:
        """Everything up to and including ``ending``."""
        deadline = time.monotonic() + timeout
        while ending not in self._buffer:
            if time.monotonic() > deadline:
                raise AssertionError(f"no {ending!r} from the device; got {self._buffer!r}")
            self._buffer += self.port.read(max(1, self.port.in_waiting))
        index = self._buffer.index(ending) + len(ending)
        data, self._buffer = self._buffer[:index], self._buffer[index:]
        return data

    def line(self, timeout: float = 5.0) -> str:
        """The next line, its checksum checked and removed."""
        raw = self.read_bytes(b"\r\n", timeout)[:-2].decode("utf-8")
        body, star, given = raw.rpartition("*")
        assert star and checksum(body) == given, f"bad checksum on {raw!r}"
        return body

    def answer(self, timeout: float = 5.0) -> list[str]:
        """The next answer's lines (events skipped): one line, or a whole frame."""
        first = self.line(timeout)
        while first.startswith("event "):
            self.events.append(first[6:])
            first = self.line(timeout)
        head = first.split(" ", 1)[1] if first.startswith("@") else first  # a tagged answer
        if not head.startswith("ok begin "):
            return [first]
        count = int(head.split()[2])
        lines = [first, *(self.line(timeout) for _ in range(count + 1))]
        assert lines[-1] == "ok end", lines
        return lines

    def feed(self, count: int, timeout: float = 5.0) -> list[str]:
        """Read on until ``count`` live-feed lines have been seen in all; them."""
        while len(self.events) < count:
            line = self.line(timeout)
            assert line.startswith("event "), f"not a feed line: {line!r}"
            self.events.append(line[6:])
        return self.events

    def ask(self, request: str, timeout: float = 5.0) -> list[str]:
        self.write(request.encode("utf-8") + b"\r\n")
        return self.answer(timeout)

    def quiet(self, wait: float = 0.1) -> bytes:
        """Whatever arrives in ``wait`` seconds (expected: nothing)."""
        time.sleep(wait)
        data = self._buffer + self.port.read(self.port.in_waiting)
        self._buffer = b""
        return data
