"""Personal scorecards (firmware/club/scorecards.py): one card per player from
the same outcomes as the standings (a card's last total is the player's
points), each round's table, seat, partner and opponents as the round's
assignment seated them, byes and corrections; the CSV and printable
exports; the QR code; and the phone page in headless chromium (names as
text, never markup)."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from support.club_room import CHROMEDRIVER, CHROMIUM, Clock, browser, room, served, wait_for

from euchre_core import SEATS
from firmware.club.corrections import Correction
from firmware.club.director import Director
from firmware.club.web import qr_svg

needs_browser = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="chromium and chromedriver are not installed (apt-get install chromium "
           "chromium-driver)")


def night(tmp_path: Path) -> Director:
    """17 players (a bye a round), two rounds played and a third under way;
    round 1 table 1's result corrected, a penalty, and a player added whose
    name is markup if run as such."""
    director = room(tmp_path, Clock(), players=17, rounds=3, hands=2, minutes=None)
    director.correct(Correction(kind="result", who="Kim", reason="a renege not entered",
                                round=1, table=1, ns=0, ew=4))
    director.correct(Correction(kind="penalty", who="Kim", reason="slow play",
                                player="Bo", points=2))
    director.correct(Correction(kind="add", who="Kim", reason="came late",
                                player="<b>Mallory</b>"))
    return director


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as answer:
        data: bytes = answer.read()
        return data


def test_a_card_per_player_agrees_with_the_standings_and_the_seating(tmp_path: Path) -> None:
    director = night(tmp_path)
    board = director.board()
    cards = {card["name"]: card for card in director.scorecards()}
    assert [c["name"] for c in director.scorecards()] == [p["name"] for p in board["players"]]
    for player in board["players"]:
        card = cards[player["name"]]
        assert card["points"] == player["points"] and card["rank"] == player["rank"]
        assert (card["rows"][-1]["total"] if card["rows"] else 0) == player["points"]
        tables = [r for r in card["rows"] if r["kind"] == "table"]
        assert len([r for r in card["rows"] if r["kind"] == "bye"]) == player["byes"]
        seated = [(n, t, seat) for n, a in director.rounds.items()
                  for t, seats in a.tables.items() for seat in SEATS
                  if seats[seat] == player["name"]]
        assert [(r["round"], r["table"], r["seat"]) for r in tables] == [
            (n, t, str(seat)) for n, t, seat in seated]
        for row in tables:
            seats = director.rounds[row["round"]].tables[row["table"]]
            mine = next(s for s in SEATS if str(s) == row["seat"])
            assert row["partner"] == seats[SEATS[(SEATS.index(mine) + 2) % 4]]
            assert sorted(row["opponents"]) == sorted(
                seats[s] for s in SEATS if s.team is not mine.team)
    # the corrections are on the cards they touch
    (first,) = [r for r in cards[director.rounds[1].tables[1][SEATS[1]]]["rows"]
                if r["kind"] == "table" and r["round"] == 1]
    assert (first["us"], first["them"], first["won"]) == (4, 0, True)
    assert first["note"] == "result corrected (correction 1: a renege not entered)"
    (penalty,) = [r for r in cards["Bo"]["rows"] if r["kind"] == "penalty"]
    assert penalty["points"] == -2 and penalty["note"] == "penalty (correction 2: slow play)"
    assert cards["<b>Mallory</b>"]["rows"] == []  # added: seated from the next round


def test_the_exports_and_the_qr_code(tmp_path: Path) -> None:
    director = night(tmp_path)
    cards = director.scorecards()
    with served(director) as url:
        csv_bytes = get(url + "/scorecards.csv")
        rows = list(csv.DictReader(io.StringIO(csv_bytes.decode())))
        printable = get(url + "/scorecards.html").decode()
        request = urllib.request.Request(url + "/qr.svg", headers={"Host": "laptop.local:8080"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert answer.headers["Content-Type"] == "image/svg+xml"
            svg = answer.read()
        exported = subprocess.run(
            [sys.executable, "-m", "firmware", "club", "export", "--director", url, "--out",
             str(tmp_path / "export")], capture_output=True, text=True, timeout=60)
        assert exported.returncode == 0, exported.stderr
    assert (tmp_path / "export" / "scorecards.csv").read_bytes() == csv_bytes
    assert (tmp_path / "export" / "scorecards.html").read_text(encoding="utf-8") == printable
    assert len(rows) == sum(len(card["rows"]) for card in cards)
    for card in cards:  # each player's last row carries their points
        mine = [r for r in rows if r["player"] == card["name"]]
        if mine:
            assert int(mine[-1]["total"]) == card["points"]
    assert printable.count('<section class="card">') == len(cards)
    assert "&lt;b&gt;Mallory&lt;/b&gt;" in printable and "<b>Mallory" not in printable
    assert svg == qr_svg("http://laptop.local:8080/cards")  # the address phones reach
    assert svg.startswith(b"<svg") and b"<script" not in svg


@needs_browser
def test_the_phone_page_lists_everyone_and_shows_a_card(tmp_path: Path) -> None:
    director = night(tmp_path)
    cards = director.scorecards()
    with served(director) as url, browser(412, 915) as driver:
        driver.get(url + "/cards")
        wait_for(driver, "return document.body.dataset.loaded", "the list")
        listed: list[dict[str, Any]] = driver.execute_script(
            "return [...document.querySelectorAll('#card a')].map("
            "a => ({text: a.textContent, href: a.href}))")
        assert [a["text"] for a in listed] == [c["name"] for c in cards]
        assert driver.execute_script("return document.querySelectorAll('#card b').length") == 0
        mallory = next(a for a in listed if a["text"] == "<b>Mallory</b>")
        driver.get(mallory["href"])
        wait_for(driver, "return document.body.dataset.loaded", "Mallory's card")
        assert driver.execute_script("return document.getElementById('title').textContent"
                                     ) == "<b>Mallory</b>"
        bo = next(a for a in listed if a["text"] == "Bo")
        driver.get(bo["href"])
        wait_for(driver, "return document.body.dataset.loaded", "Bo's card")
        shown = driver.execute_script(
            "return [...document.querySelectorAll('#card tbody tr')].map("
            "tr => [...tr.cells].map(td => td.textContent))")
        card = next(c for c in cards if c["name"] == "Bo")
        assert len(shown) == len(card["rows"])
        assert [row[-1] for row in shown] == [str(r["total"]) for r in card["rows"]]
        assert shown[-1][1] == "penalty (correction 2: slow play)"
        # the projector's page carries the QR code leading here
        driver.get(url + "/?page=0")
        assert wait_for(driver, "const img = document.querySelector('#scan img');"
                        "return img.complete && img.naturalWidth", "the QR code") > 0
        assert driver.execute_script(
            "return document.getElementById('scan').getAttribute('href')") == "/cards"


@needs_browser
def test_a_result_disputed_at_its_table_is_shown_on_the_page(tmp_path: Path) -> None:
    """The box's verdict line (firmware/round_end.py) on the projector's page:
    the table's card in red and the dispute at the head of the audit list."""
    from firmware.club.protocol import EntryMessage, entries_topic

    director = night(tmp_path)
    table = director.tables[(3, 2)]  # round 3, table 2: done (tests/support/club_room.py)
    assert table.done and table.box is not None and table.game is not None
    director.receive(entries_topic(director.event, 2), EntryMessage(
        2, table.box, 3, table.game, len(table.lines), "# result disputed by EW").encode())
    (dispute,) = director.board()["disputes"]
    score = director.tables[(3, 2)].score
    assert dispute["what"] == (f"round 3, table 2: NS {score[SEATS[0].team]} EW "
                               f"{score[SEATS[1].team]} disputed by EW at the table; the "
                               "organiser decides (club correct result)")
    with served(director) as url, browser() as driver:
        driver.get(url + "/?page=0")
        shown = wait_for(driver, "const s = document.querySelector("
                         "'.table[data-table=\"2\"] .state'); return s && "
                         "[s.textContent, s.className, "
                         "[...document.querySelectorAll('#audit li.dispute')]"
                         ".map(li => li.textContent)]", "the tables' cards")
    assert shown[0] == "disputed by EW: see the director" and "alert" in shown[1]
    assert [text[6:] for text in shown[2]] == [dispute["what"]]
