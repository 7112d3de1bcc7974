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
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

MOSQUITTO = shutil.which("mosquitto") or next(
    (str(p) for p in (Path("/usr/sbin/mosquitto"),) if p.exists()), None)

needs_mosquitto = pytest.mark.skipif(
    MOSQUITTO is None, reason="mosquitto is not installed (apt-get install mosquitto)")


def free_port() -> int:
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
        self.port = port or free_port()
        self.url = f"mqtt://127.0.0.1:{self.port}"
        self.config = self.directory / "mosquitto.conf"
        self.log = self.directory / "mosquitto.log"
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
            "log_type error\nlog_type warning\nlog_type notice\n",
            encoding="utf-8",
        )
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        assert MOSQUITTO is not None
        log = open(self.log, "ab")
        self.process = subprocess.Popen([MOSQUITTO, "-c", str(self.config)],
                                        stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.log.read_text()[-500:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not listen on {self.port}")

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
