"""``euchre-referee club serve``: the director on the club's laptop.

The :class:`~firmware.club.director.Director` gets the boxes' messages (the
tables' topics, not its own acks and assignments coming back) in batches from
a thread fed by paho's (:func:`keep`), and serves the page with uvicorn on the
main thread; both call it under its lock.  SIGTERM or Ctrl-C stops it;
everything is in the state directory, so starting it again goes on where it
was.
"""

from __future__ import annotations

import argparse
import logging
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any, Final

from ..exits import EXIT_OK, EXIT_USAGE
from .auth import organiser_token
from .control import CLOCK_S
from .director import Bonuses, Director
from .mqtt import close_client, open_client
from .protocol import QOS, ROOT, check_event_id, parse_broker_url


def parse_http(text: str) -> tuple[str, int]:
    """``HOST:PORT`` -> (host, port); ValueError naming it."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--http {text!r}: expected HOST:PORT, e.g. 0.0.0.0:8080")
    return host or "0.0.0.0", int(port)


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
    import uvicorn

    from .web import build_app

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
    print(f"euchre-referee: director of {event!r} on http://{host}:{port}/ "
          f"(broker {address}{', as ' + login.username if login else ', no login'})\n"
          f"euchre-referee: the organiser's token: {token} (kept in "
          f"{director.state_dir}/organiser.token)", file=sys.stderr, flush=True)
    try:
        uvicorn.run(build_app(director, token), host=host, port=port, log_level="warning")
    finally:
        close_client(client)
        director.close()
    return EXIT_OK
