"""A plain paho client for the club's security tests and bench/club_attacks.py
(no tests here): it connects with a login or none, says what the broker
answered, and keeps what it receives in a queue."""

from __future__ import annotations

import queue
import threading
from typing import Any

from firmware.club.auth import BrokerLogin


class Peer:
    """A paho client: connected (or refused: ``result`` says how), its messages in a queue.

    ``subscribe`` is subscribed on connect, and waited for (its SUBACK).
    ``dropped`` is set when the connection ends.  With ``reconnect=False`` a
    dropped client stays off: paho would otherwise reconnect and send its
    unacknowledged QoS 1 messages again, so a message the broker closes the
    connection for (one over ``max_packet_size``) would have it closed again
    at every reconnect, the client back on for a moment each second."""

    def __init__(self, port: int, who: BrokerLogin | None = None, client_id: str = "",
                 subscribe: str | None = None, reconnect: bool = True) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.results: queue.Queue[str] = queue.Queue()
        self.messages: queue.Queue[tuple[str, bytes]] = queue.Queue()
        self.subscribed: queue.Queue[list[Any]] = queue.Queue()
        self.disconnects = 0
        self.dropped = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                                  reconnect_on_failure=reconnect)
        if who is not None:
            self.client.username_pw_set(who.username, who.password)

        def connected(client: Any, userdata: Any, flags: Any, reason: Any,
                      properties: Any) -> None:
            if not reason.is_failure and subscribe is not None:
                client.subscribe(subscribe, qos=1)
            self.results.put("connected" if not reason.is_failure else str(reason))

        def disconnected(*args: Any) -> None:
            self.disconnects += 1
            self.dropped.set()

        self.client.on_connect = connected
        self.client.on_disconnect = disconnected
        self.client.on_subscribe = lambda c, u, mid, codes, p: self.subscribed.put(codes)
        self.client.on_message = lambda c, u, m: self.messages.put((m.topic, bytes(m.payload)))
        self.client.connect_async("127.0.0.1", port, keepalive=10)
        self.client.loop_start()
        self.result = self.results.get(timeout=60)
        self.granted = (self.subscribed.get(timeout=60)
                        if subscribe is not None and self.result == "connected" else None)

    def publish(self, topic: str, payload: bytes, retain: bool = False) -> None:
        self.client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(30)

    def until(self, marker: bytes) -> list[tuple[str, bytes]]:
        """Every message received before ``marker`` (a barrier: one client's
        messages arrive in the order it sent them)."""
        seen = []
        while True:
            topic, payload = self.messages.get(timeout=60)
            if payload == marker:
                return seen
            seen.append((topic, payload))

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
