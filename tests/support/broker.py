"""A real mosquitto broker for the club-night tests (no tests here).

:class:`Mosquitto` runs Debian's ``mosquitto`` on a free localhost port with
its own config and persistence file in a temporary directory; ``restart()``
stops it (SIGTERM, so it saves its retained messages) and starts it again on
the same port, as a broker restarted mid-round would be.  The
``mosquitto`` fixture is one broker for the whole session; tests that restart
the broker make their own with ``Mosquitto(tmp_path)``.  Without mosquitto
installed the tests that need it skip, saying so.
"""

from __future__ import annotations

import getpass
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

MOSQUITTO = shutil.which("mosquitto") or next(
    (str(p) for p in (Path("/usr/sbin/mosquitto"),) if p.exists()), None)

needs_mosquitto = pytest.mark.skipif(
    MOSQUITTO is None, reason="mosquitto is not installed (apt-get install mosquitto)")


PORT_TRIES = 20
"""Fresh ports tried by :func:`on_a_free_port` before it gives up."""

T = TypeVar("T")


class PortTaken(RuntimeError):
    """The port picked was taken by another process before the server bound it."""


def listening_socket(host: str = "127.0.0.1") -> socket.socket:
    """A TCP socket bound and listening on a port the kernel picked (port 0):
    handed to a server that takes a socket (uvicorn's ``Server.run(sockets=)``),
    so no other process can take the port in between."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((host, 0))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def on_a_free_port(start: Callable[[int], T], tries: int = PORT_TRIES) -> T:
    """``start(port)`` on a port the kernel says is free now, for a server that
    binds the port itself (mosquitto has no port 0): when it raises
    :class:`PortTaken` (the port was taken between the pick and its bind, a
    rare race under load) a fresh port is tried, up to ``tries`` times."""
    for _ in range(tries - 1):
        try:
            return start(_unused_port())
        except PortTaken:
            continue
    return start(_unused_port())


def _unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Mosquitto:
    """A mosquitto process on 127.0.0.1:``port`` (``url`` is ``mqtt://...``).

    With ``include``, a directory of ``*.conf`` files (``club setup``'s
    ``mosquitto/``), the listeners, logins and ACL are theirs (``port`` must
    be one of their listeners): only persistence and logging are the test's."""

    def __init__(self, directory: Path, port: int | None = None,
                 include: Path | None = None) -> None:
        if MOSQUITTO is None:
            pytest.skip("mosquitto is not installed (apt-get install mosquitto)")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.config = self.directory / "mosquitto.conf"
        self.log = self.directory / "mosquitto.log"
        self.process: subprocess.Popen[bytes] | None = None
        if port is None:  # a port of its own: a fresh one if another process takes it first
            on_a_free_port(lambda free: self._start_on(free, include))
        else:
            self._start_on(port, include)

    def _start_on(self, port: int, include: Path | None) -> None:
        self.port = port
        self.url = f"mqtt://127.0.0.1:{self.port}"
        own = (f"include_dir {include}\n" if include is not None else
               f"listener {self.port} 127.0.0.1\nallow_anonymous true\n")
        self.config.write_text(
            own +
            # as root mosquitto would become user mosquitto, who may not write here
            f"user {getpass.getuser()}\n"
            "persistence true\n"
            f"persistence_location {self.directory}/\n"
            "max_queued_messages 100000\n"
            "log_dest stderr\n"
            # information: its "running" once every listener is bound (start's barrier)
            "log_type error\nlog_type warning\nlog_type notice\nlog_type information\n",
            encoding="utf-8",
        )
        self.start()

    def start(self) -> None:
        """Start mosquitto and wait until it listens; :class:`PortTaken` when
        another process has its port (its log says "Address already in use")."""
        assert MOSQUITTO is not None
        logged = self.log.stat().st_size if self.log.exists() else 0
        log = open(self.log, "ab")
        self.process = subprocess.Popen([MOSQUITTO, "-c", str(self.config)],
                                        stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            said = self.log.read_bytes()[logged:].decode("utf-8", "replace")
            if self.process.poll() is not None:
                if "Address already in use" in said:
                    raise PortTaken(f"port {self.port} is taken: mosquitto says "
                                    "'Address already in use'")
                raise RuntimeError(f"mosquitto exited: {said[-500:]}")
            if re.search(r"mosquitto version \S+ running", said):
                return  # its listeners are bound: its own, not another process's port
            time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not listen on {self.port}: {said[-500:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def restart(self, down_s: float = 0.5) -> None:
        self.stop()
        time.sleep(down_s)
        self.start()


@pytest.fixture(scope="session")
def mosquitto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mosquitto]:
    """One real broker for the session's club tests."""
    broker = Mosquitto(tmp_path_factory.mktemp("mosquitto"))
    try:
        yield broker
    finally:
        broker.stop()
