"""The test broker is a real mosquitto (tests/support/broker.py): messages
pass through it, and a restart keeps its retained messages."""

from __future__ import annotations

import queue
from pathlib import Path

from support.broker import Mosquitto, needs_mosquitto

from firmware.club.mqtt import close_client, open_client
from firmware.club.protocol import parse_broker_url

pytestmark = needs_mosquitto


def _receive(url: str, topic: str, client_id: str) -> tuple[object, queue.Queue[bytes]]:
    received: queue.Queue[bytes] = queue.Queue()
    client = open_client(parse_broker_url(url), client_id,
                         on_message=lambda t, p: received.put(p), subscriptions=[topic])
    return client, received


def test_a_retained_message_survives_a_broker_restart(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path)
    try:
        connected: queue.Queue[bool] = queue.Queue()
        sender = open_client(parse_broker_url(broker.url), "sender", on_message=lambda t, p: None,
                             subscriptions=[], on_connect=lambda: connected.put(True))
        assert connected.get(timeout=20)
        info = sender.publish("euchre/t/round/1/assignment", b"kept", qos=1, retain=True)
        info.wait_for_publish(10)
        close_client(sender)
        broker.restart()
        client, received = _receive(broker.url, "euchre/t/round/+/assignment", "reader")
        try:
            assert received.get(timeout=20) == b"kept"
        finally:
            close_client(client)
    finally:
        broker.stop()


def test_the_session_broker_passes_messages(mosquitto: Mosquitto) -> None:
    client, received = _receive(mosquitto.url, "euchre/t/table/+/entries", "both")
    try:
        for _ in range(200):
            client.publish("euchre/t/table/1/entries", b"one", qos=1)
            try:
                assert received.get(timeout=0.1) == b"one"
                break
            except queue.Empty:
                continue
        else:
            raise AssertionError("nothing came back through the broker")
    finally:
        close_client(client)
