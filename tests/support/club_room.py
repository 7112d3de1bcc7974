"""A whole room for the live page: a real director (its own SQLite) filled
with random legal rounds as the boxes would send them, served over real HTTP
by uvicorn, and a real headless chromium driven by selenium (the page's tests
and ``scripts/club_screenshot.py``).

The director's clock is a :class:`Clock` the caller moves, so "silent", the
round's clock and the states are reproducible.
"""

from __future__ import annotations

import random
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from euchre_core import Game
from euchre_core.events import Players, SetRules
from firmware.club.director import Director
from firmware.club.protocol import (
    Assignment,
    EntryMessage,
    RoundFormat,
    Status,
    entries_topic,
    status_topic,
)
from firmware.club.simulate import WINNER_LEVEL
from support.broker import listening_socket

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

NAMES = [
    "Anna", "Bo", "Cy", "Dee", "Eve", "Finn", "Gus", "Hal", "Ines", "Jo", "Kai", "Lena", "Mo",
    "Nils", "Ola", "Pia", "Quinn", "Ragnar", "Sigríður", "Tove", "Ulf", "Vera", "Wim", "Xena",
    "Yann", "Zoë", "Åsa", "Björn", "Camille Dubois", "Dagfinn", "Elif Yılmaz", "Fiona",
    "Grzegorz Brzęczyszczykiewicz", "Hanne", "Ivar", "Jóhanna", "Kirsten", "Lars-Erik",
    "Maximilian Oberhuber", "Nadia", "Oskar", "Paula", "Rasmus", "Solveig", "Torbjørn", "Una",
    "Valdemar", "Wilhelmina van der Berg", "Yusuf", "Zeynep", "Agnes", "Birgit", "Conor",
    "Dorothea", "Einar", "Frida", "Gunnhild", "Halvard", "Ingrid", "Jens", "<b>Kim</b>",
    "Liv", "Magnus", "Nora",
]
"""64 names: long ones, letters beyond ASCII, and one that is markup if run as such."""


class Clock:
    """The director's clock, moved by hand."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def round_lines(assignment: Assignment, table: int, hands: int, seed: int,
                extra: int = 0) -> list[str]:
    """A table's journal lines: setup, then random legal entries up to ``hands``
    hands, then ``extra`` entries of the next hand (a hand in play)."""
    seats = assignment.tables[table]
    rules = assignment.format.rules(assignment.rules)
    lines = [SetRules(rules).line(), Players.from_names(seats).line()]
    game = Game(rules=rules, names=dict(seats))
    rng = random.Random(seed)
    while game.hands_played < hands or extra:
        if game.hands_played >= hands:
            extra -= 1
        entry = rng.choice([e for e in game.legal_entries() if isinstance(e, WINNER_LEVEL)])
        game.push(entry)
        lines.append(entry.line())
    return lines


def play(director: Director, assignment: Assignment, table: int, hands: int, seed: int
         ) -> None:
    """Table ``table``'s box (online) sends its round's lines up to ``hands`` hands."""
    box = f"box{table}"
    director.receive(status_topic(director.event, table),
                     Status(table, box, True, assignment.round, assignment.round).encode())
    for seq, line in enumerate(round_lines(assignment, table, hands, seed)):
        director.receive(entries_topic(director.event, table),
                         EntryMessage(table, box, assignment.round, assignment.round, seq,
                                      line).encode())


def room(state_dir: Path, clock: Clock, *, players: int = 64, rounds: int = 3,
         hands: int = 4, minutes: float | None = 20) -> Director:
    """A night of ``players`` (NAMES first): ``rounds - 1`` rounds played out, the
    last one under way (timed when ``minutes``): each table's box online at
    hand 2, except table 2 done, table 3 silent for 5 minutes and table 4's box
    offline."""
    director = Director(state_dir, event="friday", clock=clock)
    names = NAMES + [f"Player {i}" for i in range(len(NAMES), players)]
    for name in names[:players]:
        director.register(name)
    director.broker_state(True)
    for number in range(1, rounds + 1):
        last = number == rounds
        assignment = director.start_round(RoundFormat(hands=hands,
                                                      minutes=minutes if last else None))
        if not last:
            for table in sorted(assignment.tables):
                play(director, assignment, table, hands, seed=100 * number + table)
            clock.now += 900
            continue
        play(director, assignment, 2, hands, seed=2)  # done
        play(director, assignment, 3, 1, seed=3)  # then silent
        play(director, assignment, 4, 1, seed=4)  # then its box goes offline
        clock.now += 300
        for table in sorted(assignment.tables):
            if table not in (2, 3, 4):
                play(director, assignment, table, 2, seed=table)
        director.receive(status_topic(director.event, 4),
                         Status(4, "box4", False, number, number).encode())
        clock.now += 10
    return director


def end_night(director: Director, clock: Clock) -> None:
    """The last round played out but at table 3 (silent), the night called
    final (forced: table 3's hand in progress is void), then every box
    switched off (their last wills)."""
    clock.now += 600
    number = director.current_round
    assignment = director.rounds[number]
    for table in sorted(assignment.tables):
        if table != 3:
            play(director, assignment, table, assignment.format.hands or 1, seed=table)
    director.finish(force=True)
    for table in sorted(director.rounds[number].tables):
        clock.now += 5
        director.receive(status_topic(director.event, table),
                         Status(table, f"box{table}", False, number, number).encode())


@contextmanager
def served(director: Director) -> Iterator[str]:
    """The director's web side on a port of its own (uvicorn, a thread, on a
    socket bound before it starts: no race for the port): its URL."""
    import uvicorn

    from firmware.club.web import build_app

    sock = listening_socket()
    port = int(sock.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(build_app(director, "token"), host="127.0.0.1",
                                           port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:  # uvicorn's own flag, set once it listens
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = server.force_exit = True  # open streams closed, not awaited
        thread.join(30)
        sock.close()


@contextmanager
def browser(width: int = 1920, height: int = 1080) -> Iterator[Any]:
    """Headless chromium through selenium and Debian's chromedriver, its
    viewport exactly ``width`` x ``height`` CSS pixels."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert CHROMIUM is not None and CHROMEDRIVER is not None
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--no-first-run", "--hide-scrollbars",
                     f"--window-size={width},{height}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        yield driver
    finally:
        driver.quit()


def wait_for(driver: Any, script: str, what: str, timeout: float = 60) -> Any:
    """Run ``script`` in the page until it returns something true; that."""
    deadline = time.monotonic() + timeout
    while True:
        value = driver.execute_script(script)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"the page: {what} (waited {timeout} s)")
        time.sleep(0.1)
