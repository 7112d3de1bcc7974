"""``club serve --http HOST:0``: the page on a port the system picks, said in
the director's first line and written to ``--port-file``; a port another
program holds is refused in one line, nothing started.  ``Night`` (most club
tests' night) uses it: no port picked before the director binds it, and a
restarted director gets its port back, or a fresh one if it was taken."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

from support.broker import Mosquitto, listening_socket, needs_mosquitto

from firmware.club.serve import PORT_TAKEN
from firmware.club.simulate import Night

pytestmark = needs_mosquitto


def standings(url: str) -> object:
    with urllib.request.urlopen(url + "/standings.json", timeout=30) as answer:
        assert answer.status == 200
        return json.loads(answer.read())


def test_serve_on_port_0_says_the_port_it_got(tmp_path: Path, mosquitto: Mosquitto) -> None:
    port_file = tmp_path / "port"
    director = subprocess.Popen(
        [sys.executable, "-m", "firmware", "club", "serve", "--broker", mosquitto.url,
         "--event", "zero", "--state-dir", str(tmp_path / "director"),
         "--http", "127.0.0.1:0", "--port-file", str(port_file)],
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert director.stderr is not None
        line = ""
        for line in director.stderr:  # a barrier: the line said once it listens
            if "director of" in line:
                break
        said = re.fullmatch(r"euchre-referee: director of 'zero' on http://127\.0\.0\.1:(\d+)/ "
                            r"\(broker .*\)\n", line)
        assert said is not None, line
        port = int(said[1])
        assert port != 0
        assert port_file.read_text(encoding="ascii") == f"{port}\n"
        assert isinstance(standings(f"http://127.0.0.1:{port}"), dict)
    finally:
        director.terminate()
        director.wait(30)


def test_serve_on_a_port_taken_says_so_and_starts_nothing(tmp_path: Path,
                                                         mosquitto: Mosquitto) -> None:
    squatter = listening_socket()  # another program's server
    taken = int(squatter.getsockname()[1])
    try:
        result = subprocess.run(
            [sys.executable, "-m", "firmware", "club", "serve", "--broker", mosquitto.url,
             "--event", "taken", "--state-dir", str(tmp_path / "director"),
             "--http", f"127.0.0.1:{taken}", "--port-file", str(tmp_path / "port")],
            capture_output=True, text=True, timeout=120)
    finally:
        squatter.close()
    assert result.returncode == 2
    assert result.stderr == f"euchre-referee: --http 127.0.0.1:{taken}: {PORT_TAKEN}\n"
    assert not (tmp_path / "director").exists() and not (tmp_path / "port").exists()


def test_a_restarted_director_gets_its_port_back_or_a_fresh_one(tmp_path: Path,
                                                                 mosquitto: Mosquitto) -> None:
    night = Night(mosquitto.url, tmp_path, tables=0, event="restart").start()
    try:
        first = night.url
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", first) and night.http_port != 0
        night.register(4)
        night.kill_director()
        night.start_director()
        assert night.url == first  # the same page, for whoever has it open
        assert len(standings(night.url)["players"]) == 4  # type: ignore[index]
        night.kill_director()
        # Another program takes the port the director had, before it is back.
        with socket.create_server(("127.0.0.1", night.http_port)):
            night.start_director()
            assert night.url != first  # a fresh port, said; the page is the night's
            assert len(standings(night.url)["players"]) == 4  # type: ignore[index]
        log = (tmp_path / "director.log").read_text(encoding="utf-8")
        assert f"--http 127.0.0.1:{first.rsplit(':', 1)[1]}: {PORT_TAKEN}" in log
    finally:
        night.stop()
