"""``euchre-referee club serve``: the director on the club's laptop.

The :class:`~firmware.club.director.Director` gets the boxes' messages (the
tables' topics, not its own acks and assignments coming back) in batches from
a thread fed by paho's (:func:`keep`), and serves the page with uvicorn on the
main thread; both call it under its lock.  SIGTERM or Ctrl-C stops it;
everything is in the state directory, so starting it again goes on where it
was.  The page's socket is bound before anything else starts (``--http
HOST:0``: a port the system picks, said in the "director of" line and
written to ``--port-file``), so a port that cannot be had changes nothing.
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import queue
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any, Final

from ..exits import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from .auth import organiser_token
from .control import CLOCK_S
from .director import Bonuses, Director
from .mqtt import close_client, open_client
from .protocol import QOS, ROOT, BrokerAddress, check_event_id, parse_broker_url


def parse_http(text: str) -> tuple[str, int]:
    """``HOST:PORT`` -> (host, port); ValueError naming it.  Port 0: one the
    system picks."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--http {text!r}: expected HOST:PORT, e.g. 0.0.0.0:8080 "
                         "(port 0: any free port, said when it listens)")
    return host.strip("[]") or "0.0.0.0", int(port)


PORT_TAKEN: Final = "the port is taken (another program listens on it)"
"""What ``club serve`` says of an ``--http`` port in use (``Night`` then tries another)."""


def listening(host: str, port: int) -> socket.socket:
    """The page's socket, bound to ``host:port`` (0: a free port the system
    picks) and listening; OSError when it cannot be."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=2048)


def write_port(path: Path, port: int) -> None:
    """``port`` in ``path`` (one line), written whole: a temporary renamed
    over it, so a reader waiting for the file never sees half of it."""
    temp = path.with_name(f".{path.name}.{os.getpid()}")
    temp.write_text(f"{port}\n", encoding="ascii")
    os.replace(temp, path)


BATCH: Final = 500
"""Messages kept in one transaction at most (one disk sync for all of them)."""


def keep(director: Director, inbox: queue.Queue[tuple[str, bytes]]) -> None:
    """Hand the messages to the director in batches: whatever has arrived while
    the last batch was being synced goes in the next one (a thread, forever)."""
    while True:
        batch = [inbox.get()]
        while len(batch) < BATCH:
            try:
                batch.append(inbox.get_nowait())
            except queue.Empty:
                break
        try:
            director.receive_many(batch)
        except Exception:  # a disk error: said, and the boxes send again (no ack)
            logging.getLogger("euchre.club.director").exception("keeping %d messages",
                                                               len(batch))


def tick(director: Director) -> None:
    """The timed rounds' clock: :meth:`Director.tick` every :data:`.control.CLOCK_S` (a thread)."""
    while True:
        time.sleep(CLOCK_S)
        try:
            director.tick()
        except Exception:  # said; the clock goes on
            logging.getLogger("euchre.club.director").exception("the round's clock")


def serve(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s",
                        stream=sys.stderr)
    try:
        address = parse_broker_url(args.broker)
        host, port = parse_http(args.http)
        event = check_event_id(args.event)
        from . import read_login

        login = read_login(getattr(args, "login", None))
    except ValueError as error:
        print(f"euchre-referee: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        listener = listening(host, port)
    except OSError as error:
        why = PORT_TAKEN if error.errno == errno.EADDRINUSE else error.strerror or str(error)
        print(f"euchre-referee: --http {args.http}: {why}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return _serve(args, listener, address, event, login)
    finally:
        listener.close()


def _serve(args: argparse.Namespace, listener: socket.socket, address: BrokerAddress, event: str,
           login: Any) -> int:
    """The director, its MQTT client and its page on ``listener``, until stopped."""
    import uvicorn

    from .web import build_app

    host, port = listener.getsockname()[:2]
    client: Any = None

    def publish(topic: str, payload: bytes, retain: bool) -> None:
        if client is not None:
            client.publish(topic, payload, qos=QOS, retain=retain)

    settings = {key: value for key, value in (
        ("tie_breaks", args.tie_breaks), ("tied_round", args.tied_round),
        ("bye_points", args.bye_points)) if value is not None}
    try:
        director = Director(Path(args.state_dir), event=event, publish=publish,
                            bonuses=Bonuses(args.loner_bonus, args.euchre_bonus,
                                            args.round_win_bonus), settings=settings)
    except ValueError as error:  # a setting that is not one: said, nothing kept
        print(f"euchre-referee: --{error}", file=sys.stderr)
        return EXIT_USAGE
    if args.port_file:
        try:
            write_port(Path(args.port_file), port)
        except OSError as error:
            director.close()
            print(f"euchre-referee: --port-file {args.port_file}: {error.strerror or error}",
                  file=sys.stderr)
            return EXIT_USAGE
    logging.getLogger("euchre.club.director").info("the night's standings: %s",
                                                   director.settings.describe())
    inbox: queue.Queue[tuple[str, bytes]] = queue.Queue()
    threading.Thread(target=keep, args=(director, inbox), name="director-keep",
                     daemon=True).start()
    threading.Thread(target=tick, args=(director,), name="director-clock", daemon=True).start()
    client = open_client(address, f"director-{event}",
                         on_message=lambda topic, payload: inbox.put((topic, payload)),
                         subscriptions=[f"{ROOT}/{event}/table/#"],
                         on_connect=director.connected,
                         on_disconnect=lambda: director.broker_state(False), login=login)
    token = organiser_token(director.state_dir)
    where = f"[{host}]" if ":" in host else host
    print(f"euchre-referee: director of {event!r} on http://{where}:{port}/ "
          f"(broker {address}{', as ' + login.username if login else ', no login'})\n"
          f"euchre-referee: the organiser's token: {token} (kept in "
          f"{director.state_dir}/organiser.token)", file=sys.stderr, flush=True)
    server = uvicorn.Server(uvicorn.Config(build_app(director, token), host=host, port=port,
                                           log_level="warning"))
    try:
        server.run(sockets=[listener])
    except KeyboardInterrupt:
        pass
    finally:
        close_client(client)
        director.close()
    return EXIT_OK if server.started else EXIT_INVALID
