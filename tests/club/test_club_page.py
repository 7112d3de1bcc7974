"""The live page for a whole room (firmware/club/static/), in a real headless
chromium driven by selenium at 1920x1080: a 64-player night (16 tables) from
a real director (tests/support/club_room.py); every name and every table
reaches the screen within the page cycle, at the sizes docs/club.md states,
never run as markup; the honest states (broker lost, a table late, a box
off, the director out of reach, the night final).  And the director's side
of those states: the night called final, the broker link, a restart."""

from __future__ import annotations

import subprocess
import sys
import threading
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from support.broker import Mosquitto, needs_mosquitto
from support.club_room import (
    CHROMEDRIVER,
    CHROMIUM,
    NAMES,
    Clock,
    browser,
    end_night,
    room,
    served,
    wait_for,
)

from firmware.club.director import Director, DirectorError
from firmware.club.protocol import RoundFormat
from firmware.club.simulate import Night

needs_browser = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="chromium and chromedriver are not installed (apt-get install chromium "
           "chromium-driver)")

NAME_PX = 28
"""The smallest a name may be drawn at 1920x1080 (docs/club.md)."""

SHOWN = """
// What the page shown has on the screen: each name, table and seat cell fully
// inside the window and its page's area, with its font size in px.
const page = document.querySelector('#stage .page.shown');
const area = page.querySelector('.body').getBoundingClientRect();
const inside = r => r.width > 0 && r.left >= 0 && r.top >= area.top - 1
  && r.right <= innerWidth && r.bottom <= Math.min(innerHeight, area.bottom + 1);
const seen = [];
for (const cell of page.querySelectorAll(
    '.seats td:first-child, .standings td:nth-child(2), .table .names, .table .number')) {
  const box = cell.getBoundingClientRect();
  seen.push({text: cell.textContent, px: parseFloat(getComputedStyle(cell).fontSize),
             inside: inside(box), clipped: cell.scrollWidth > cell.clientWidth + 1,
             row: cell.parentElement.textContent, view: page.dataset.view});
}
return {view: page.dataset.view, index: document.body.dataset.page,
        pages: Number(document.body.dataset.pages), seen: seen,
        markup: document.querySelectorAll('#stage b, #stage script').length};
"""


def whole_cycle(driver: Any) -> list[dict[str, Any]]:
    """Each page as the cycle shows it, in turn, from page 0 back to page 0;
    the page never steps back (every turn the page makes is recorded)."""
    first = wait_for(driver, "return document.body.dataset.page === '0' && "
                     "document.body.dataset.pages", "the first page")
    driver.execute_script("""
        window.turns = [document.body.dataset.page];
        new MutationObserver(() => {
          const page = document.body.dataset.page;
          if (page !== window.turns[window.turns.length - 1]) window.turns.push(page);
        }).observe(document.body, {attributes: true, attributeFilter: ['data-page']});""")
    shown = []
    for index in range(int(first)):
        wait_for(driver, f"return document.body.dataset.page === '{index}'",
                 f"page {index} shown in turn", timeout=60)
        shown.append(driver.execute_script(SHOWN))
    wait_for(driver, "return document.body.dataset.page === '0'", "the cycle back at page 0")
    turns = driver.execute_script("return window.turns")
    assert turns == [str(i) for i in range(int(first))] + ["0"]
    return shown


@needs_browser
def test_a_whole_room_reaches_the_screen(tmp_path: Path) -> None:
    clock = Clock()
    director = room(tmp_path, clock)
    board = director.board()
    assert len(board["players"]) == 64 and len(board["tables"]) == 16
    changing = threading.Event()

    def change() -> None:  # the night goes on: a new board every 0.2 s
        while not changing.wait(0.2):
            director.broker_state(True)

    poker = threading.Thread(target=change, daemon=True)
    with served(director) as url, browser() as driver:
        driver.get(url + "/?seconds=2")
        poker.start()
        try:
            pages = whole_cycle(driver)
        finally:
            changing.set()
            poker.join()
    views = [page["view"] for page in pages]
    assert views[0] == "seats" and "tables" in views and "standings" in views
    cells = [cell for page in pages for cell in page["seen"]]
    assert all(page["markup"] == 0 for page in pages)  # "<b>Kim</b>" is text, not bold
    for cell in cells:
        assert cell["inside"] and not cell["clipped"], cell
        assert cell["px"] >= NAME_PX, cell
    # find your seat: everyone, alphabetical, with the table and seat the round gives
    seats = {cell["text"]: cell["row"] for cell in cells if cell["view"] == "seats"}
    expected = {t["players"][seat]: f"{t['players'][seat]}{t['table']}{word}"
                for t in board["tables"] for seat, word in
                (("N", "North"), ("E", "East"), ("S", "South"), ("W", "West"))}
    assert seats == expected
    order = [cell["text"] for cell in cells if cell["view"] == "seats"]
    assert order == sorted(order, key=lambda name: "".join(  # letters, accents aside
        c for c in unicodedata.normalize("NFD", name.casefold())
        if not unicodedata.combining(c)))
    standings = [cell["text"] for cell in cells if cell["view"] == "standings"]
    assert standings == [player["name"] for player in board["players"]]
    assert set(standings) == set(NAMES)
    numbers = [cell["text"] for cell in cells
               if cell["view"] == "tables" and cell["text"].startswith("Table ")]
    assert numbers == [f"Table {t}" for t in range(1, 17)]


@needs_browser
def test_the_states_are_honest(tmp_path: Path) -> None:
    clock = Clock()
    director = room(tmp_path, clock)
    with browser() as driver:
        with served(director) as url:
            driver.get(url + "/?page=1")  # the tables
            states = wait_for(driver, """
                const cards = document.querySelectorAll('#stage .table');
                return cards.length === 16 && [...cards].map(c => [c.dataset.table,
                  c.querySelector('.state').textContent, c.className]);""", "the tables")
            by_table = {int(table): (words, classes) for table, words, classes in states}
            assert by_table[2] == ("done", "table is-done")
            assert by_table[3] == ("late: silent 5 min", "table is-warn")
            assert by_table[4] == ("box offline", "table is-alert")
            assert by_table[1] == ("playing", "table is-ok")
            clock_text = driver.find_element("id", "clock").text
            assert clock_text.startswith("ends ") and clock_text.endswith(" left")
            assert driver.find_element("id", "link").text == "live"
            director.broker_state(False)
            wait_for(driver, "const link = document.getElementById('link');"
                     "return link.className === 'alert' && "
                     "link.textContent.startsWith('broker lost since ')", "broker lost")
            director.broker_state(True)
            wait_for(driver, "return document.getElementById('link').textContent === 'live'",
                     "the broker back")
        # the director out of reach: the page says so and keeps what it had
        wait_for(driver, "return document.getElementById('link').textContent"
                 ".startsWith('director not reached')", "the director gone")
        assert len(driver.find_elements("css selector", "#stage .table")) == 16


@needs_browser
def test_the_night_ends_final_not_offline(tmp_path: Path) -> None:
    clock = Clock()
    director = room(tmp_path, clock)
    with pytest.raises(DirectorError, match=r"round 3 is still being played at table\(s\) 1 "
                       r"\(hand 3\), 3 \(hand 2\).*or force the end"):
        director.finish()
    end_night(director, clock)
    board = director.board()
    assert board["final"] is not None and not any(t["online"] for t in board["tables"])
    with pytest.raises(DirectorError, match="the night is final: no round starts after it"):
        director.start_round(RoundFormat(hands=1))
    with served(director) as url, browser() as driver:
        driver.get(url + "/?page=0")
        wait_for(driver, "return document.querySelector('#stage .page.shown h2')"
                 "?.textContent === 'Final standings (1/2)'", "the final standings first")
        assert driver.find_element("id", "round").text == "Final · after round 3"
        assert driver.find_element("id", "link").text == "final"
        assert driver.find_elements("css selector", "#stage [data-view=seats]") == []
        states = driver.execute_script(
            "return [...document.querySelectorAll('#stage .table .state')]"
            ".map(s => [s.textContent, s.className])")
        assert len(states) == 16
        assert states[2] == ["ended by the director", "state warn"]  # table 3: forced
        assert all(state == ["done", "state done"] for i, state in enumerate(states) if i != 2)
        assert driver.find_elements("css selector", "#stage .alert") == []


def test_after_a_restart_live_tables_are_not_unheard_of(tmp_path: Path) -> None:
    clock = Clock()
    room(tmp_path, clock).close()
    again = Director(tmp_path, event="friday", clock=clock)
    states = {t["table"]: t["state"] for t in again.board()["tables"]}
    assert "not heard from yet" not in states.values()
    assert states[3] == "silent" and states[2] == "done"


@needs_mosquitto
@pytest.mark.timeout(300)
def test_the_director_says_when_its_broker_is_lost(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path / "broker")
    night = Night(broker.url, tmp_path / "night", tables=0, event="link").start()
    try:
        night.wait(lambda: (night.board()["broker"] or {}).get("connected") is True, 60,
                   "the director on its broker")
        broker.stop()
        night.wait(lambda: night.board()["broker"]["connected"] is False, 60,
                   "the broker lost, said")
        broker.start()
        night.wait(lambda: night.board()["broker"]["connected"] is True, 60,
                   "the broker back, said")
        night.register(4)

        def final(*options: str) -> subprocess.CompletedProcess[str]:  # club final
            return subprocess.run(
                [sys.executable, "-m", "firmware", "club", "final", "--director", night.url,
                 "--token", str(night.token), *options], capture_output=True, text=True,
                timeout=60)

        refused = final()
        assert refused.returncode != 0
        assert "no round has been played: nothing to call final" in refused.stderr
        night.start_round(hands=1)
        refused = final()
        assert refused.returncode != 0 and "force the end" in refused.stderr
        assert night.board()["final"] is None
        done = final("--force")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "the night is final: the page shows the final standings\n"
        assert night.board()["final"] is not None
        with pytest.raises(ValueError, match="the night is final: no round starts after it"):
            night.start_round(hands=1)
    finally:
        night.stop()
        broker.stop()


@needs_browser
def test_a_new_round_turns_to_find_your_seat(tmp_path: Path) -> None:
    """The page shown when the round starts gives way to "find your seat" at
    once (not after the other pages' turns); the night called final, to the
    final standings."""
    director = Director(tmp_path, event="turns", clock=Clock())
    for name in NAMES[:9]:
        director.register(name)
    shown = "return document.querySelector('#stage .page.shown h2')?.textContent"
    with served(director) as url, browser() as driver:
        driver.get(url + "/?seconds=600")  # no turn by time in this test
        wait_for(driver, f"{shown} === 'Standings'", "the standings before round 1")
        director.start_round(RoundFormat(hands=1))
        wait_for(driver, f"{shown} === 'Find your seat: round 1'", "find your seat, at once")
        assert driver.execute_script(
            "return [...document.querySelectorAll('#stage .seats td.bye')].length") == 1
        director.finish(force=True)
        wait_for(driver, f"{shown} === 'Final standings'", "the final standings, at once")
