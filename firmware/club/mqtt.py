"""The MQTT client both ends use (paho-mqtt 2.x), set up once.

paho runs its own network thread (``loop_start``) and reconnects by itself
after a broker restart or a Wi-Fi outage (1 s, doubling to 8 s);
:func:`open_client` returns at once, connected or not: a box never waits for
the broker.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .auth import BrokerLogin
from .protocol import QOS, BrokerAddress

log = logging.getLogger("euchre.club")

OnMessage = Callable[[str, bytes], None]
"""``(topic, payload)``, called on paho's network thread."""


def open_client(address: BrokerAddress, client_id: str, *, on_message: OnMessage,
                subscriptions: list[str], on_connect: Callable[[], None] | None = None,
                on_disconnect: Callable[[], None] | None = None,
                will: tuple[str, bytes] | None = None, keepalive_s: int = 10,
                login: BrokerLogin | None = None) -> Any:
    """A paho client connecting in the background to ``address``; it subscribes
    to ``subscriptions`` (QoS 1) on every (re)connect, then calls ``on_connect``.
    ``will`` is a retained last will ``(topic, payload)``; ``login`` the
    username and password (and a TLS broker's CA certificate) ``club setup``
    made.  A broker that sets the client id from the username
    (``use_username_as_clientid``) ignores ``client_id``."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                         clean_session=True)
    client.reconnect_delay_set(min_delay=1, max_delay=8)
    client.max_queued_messages_set(0)
    if will is not None:
        client.will_set(will[0], will[1], qos=QOS, retain=True)
    if login is not None:
        client.username_pw_set(login.username, login.password)
    if address.tls:
        cafile = login.cafile if login is not None else None
        if cafile is not None and not Path(cafile).is_file():
            raise ValueError(f"cafile {cafile!r}: no such file (the CA certificate that "
                             "signed the broker's)")
        client.tls_set(ca_certs=cafile)

    def connected(client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            log.warning("broker %s refused the connection: %s", address, reason)
            return
        log.info("connected to %s as %s", address, client_id)
        for topic in subscriptions:
            client.subscribe(topic, qos=QOS)
        if on_connect is not None:
            on_connect()

    def disconnected(client: Any, userdata: Any, flags: Any, reason: Any,
                     properties: Any) -> None:
        log.info("disconnected from %s: %s", address, reason)
        if on_disconnect is not None:
            on_disconnect()

    def message(client: Any, userdata: Any, msg: Any) -> None:
        try:
            on_message(msg.topic, bytes(msg.payload))
        except Exception:  # a bug in a handler must not stop paho's thread
            log.exception("handling a message on %s", msg.topic)

    client.on_connect = connected
    client.on_disconnect = disconnected
    client.on_message = message
    client.connect_async(address.host, address.port, keepalive=keepalive_s)
    client.loop_start()
    return client


def close_client(client: Any) -> None:
    """Disconnect cleanly (no last will) and stop paho's thread."""
    try:
        client.disconnect()
    finally:
        client.loop_stop()
