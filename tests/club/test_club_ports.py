"""The test servers' ports (tests/support/broker.py): a port picked for
mosquitto that another process takes before mosquitto binds it (a rare race
under load) is said as such and a fresh one tried, never mistaken for the
broker; uvicorn gets a socket already bound, so its port cannot be taken."""

from __future__ import annotations

import socket
import urllib.request
from pathlib import Path

import pytest
from support.broker import Mosquitto, PortTaken, listening_socket, needs_mosquitto, on_a_free_port
from support.club_room import served

from firmware.club.director import Director

pytestmark = needs_mosquitto


def test_a_port_taken_before_mosquitto_binds_it_is_tried_again(tmp_path: Path) -> None:
    squatter = listening_socket()  # another process's server, on the port picked first
    taken = int(squatter.getsockname()[1])
    try:
        with pytest.raises(PortTaken, match=f"port {taken} is taken: mosquitto says "
                           "'Address already in use'"):
            Mosquitto(tmp_path / "alone", port=taken)  # not "started" by the squatter's port
        tried: list[int] = []

        def start(port: int) -> Mosquitto:
            tried.append(port)
            return Mosquitto(tmp_path / "broker", port=taken if len(tried) == 1 else port)

        broker = on_a_free_port(start)
        try:
            assert len(tried) == 2 and broker.port == tried[1] != taken
            assert broker.process is not None and broker.process.poll() is None
            with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as peer:
                peer.sendall(bytes([0x10, 12, 0, 4, *b"MQTT", 4, 2, 0, 60, 0, 0]))  # CONNECT
                assert peer.recv(4)[:1] == bytes([0x20])  # CONNACK: mosquitto answers
        finally:
            broker.stop()
    finally:
        squatter.close()


def test_the_page_is_served_on_a_socket_bound_before_uvicorn_starts(tmp_path: Path) -> None:
    with served(Director(tmp_path / "director")) as url:
        with urllib.request.urlopen(url + "/standings.json", timeout=30) as answer:
            assert answer.status == 200
