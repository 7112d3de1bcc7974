"""A real referee joined to the club on a real mosquitto, and a director in
this process (``tests/club/test_club_box.py``, ``test_club_control.py``).

:class:`Table` is a :class:`~firmware.app.Referee` on its main loop in a
thread, joined by :class:`~firmware.club.box.ClubBox`; the ``director_on``
fixture (registered in ``tests/club/conftest.py``) starts a
:class:`~firmware.club.director.Director` with the four players registered.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from euchre_core.events import Entry, parse_event
from firmware.app import Referee
from firmware.club.box import ClubBox
from firmware.club.director import Director
from firmware.club.mqtt import close_client, open_client
from firmware.club.protocol import QOS, parse_broker_url
from firmware.config import Config
from firmware.journal import Store


class Table:
    """A referee on its main loop in a thread, joined to the club."""

    def __init__(self, state_dir: Path, broker: str, table: int, event: str, *,
                 take_over: bool = False) -> None:
        self.events: queue.Queue[Any] = queue.Queue()
        self.store = Store(state_dir)
        self.referee = Referee(Config(state_dir=state_dir), self.store,
                               renderer=lambda view: view)
        self.box = ClubBox(self.referee, self.events, broker=broker, table=table, event=event,
                           resend_s=1.0, take_over=take_over).start()
        self.stopping = threading.Event()
        self.thread = threading.Thread(
            target=self.referee.run, args=(self.events,),
            kwargs={"stop": self.stopping.is_set, "poll": 0.05}, daemon=True)
        self.thread.start()

    def call(self, fn: Callable[[Referee], Any]) -> Any:
        """Run ``fn`` on the main loop and return what it returned."""
        done: queue.Queue[Any] = queue.Queue()
        self.events.put(lambda referee: done.put(fn(referee)))
        return done.get(timeout=20)

    def enter(self, line: str) -> str | None:
        """Enter a journal line (``"make E H"``) on the main loop: the refusal, or None."""
        entry: Entry = parse_event(line)  # type: ignore[assignment]
        reason: str | None = self.call(lambda r: r.enter(entry))
        return reason

    def close(self) -> None:
        self.stopping.set()
        self.thread.join(10)
        self.box.close()
        self.store.close()


@pytest.fixture
def director_on(tmp_path: Path) -> Iterator[Callable[[str, str], Director]]:
    """``director_on(url, event)``: a director on the broker, Anna, Bo, Cy and Dee registered."""
    clients: list[Any] = []

    def start(url: str, event: str) -> Director:
        holder: list[Any] = []
        director = Director(tmp_path / "director", event=event,
                            publish=lambda t, p, r: holder[0].publish(t, p, qos=QOS, retain=r))
        client = open_client(parse_broker_url(url), f"director-{event}",
                             on_message=director.receive, subscriptions=[f"euchre/{event}/#"])
        holder.append(client)
        clients.append(client)
        for name in ["Anna", "Bo", "Cy", "Dee"]:
            director.register(name)
        return director

    yield start
    for client in clients:
        close_client(client)
