"""A job of the club box that fails never stops the table (firmware/app.py's
main loop, firmware/club/box.py): a handover from the director whose journal
cannot be kept (a line that is not UTF-8 text: the journal's own write would
fail; a line the engine refuses) is refused in one line, in the log and on
the screen; the table plays on and every line it acknowledged is kept."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from support.broker import Mosquitto, needs_mosquitto
from support.club_kit import wait_for
from support.club_table import Table

from euchre_core.events import parse_event
from firmware.club.mqtt import close_client, open_client
from firmware.club.protocol import QOS, VERSION, handover_topic, parse_broker_url
from firmware.journal import Store

pytestmark = needs_mosquitto

PLAYERS = "players N=Anna E=Bo S=Cy W=Dee"


@pytest.mark.parametrize(("bad", "said"), [
    ("# \ud800", "line 3 of its journal is not UTF-8 text"),
    ("trick Z", "line 3 of its journal: "),
], ids=["not-utf8", "refused-by-the-engine"])
def test_a_handover_that_cannot_be_kept_is_refused_in_one_line_and_the_table_plays_on(
        tmp_path: Path, mosquitto: Mosquitto, caplog: pytest.LogCaptureFixture,
        bad: str, said: str) -> None:
    event = f"boxfault{len(bad)}"
    caplog.set_level(logging.INFO)
    spare = Table(tmp_path / "spare", mosquitto.url, 1, event, take_over=True)
    director = open_client(parse_broker_url(mosquitto.url), f"director-{event}",
                           on_message=lambda topic, payload: None, subscriptions=[])
    try:
        wait_for(lambda: spare.box.connected, "the spare connects", timeout=30)
        games = spare.call(lambda r: [g.id for g in r.store.games()])
        handover = {"v": VERSION, "table": 1, "round": 1, "box": spare.box.box_id,
                    "old": "0123456789ab",
                    "lines": [PLAYERS, "game dealer=N", bad]}
        # as JSON may carry it: a lone surrogate escaped ("\\ud800"), valid JSON
        director.publish(handover_topic(event, 1), json.dumps(handover).encode("ascii"),
                         qos=QOS)
        what = "club: the director's handover of table 1 not taken: "
        wait_for(lambda: (spare.referee.message or "").startswith(what), "the refusal said",
                 timeout=30)
        message = spare.referee.message
        assert message is not None and message.startswith(what + said)
        assert spare.referee.message_is_error and "\n" not in message
        assert [r.getMessage() for r in caplog.records if r.name == "euchre.app"] == [message]
        assert "Traceback" not in caplog.text
        assert spare.box.taking_over  # still waiting for a handover it can keep
        # the main loop goes on: the table scores, each line acknowledged and kept
        for line in ["game dealer=E", "make E S alone", "tricks 5"]:
            assert spare.enter(line) is None, line
        assert spare.call(lambda r: [g.id for g in r.store.games()]) == games  # none stored
        game_id = spare.referee.game_id
        kept = spare.call(lambda r: r.store.lines(r.game_id))
        assert kept[-3:] == ["game dealer=E", "make E S alone", "tricks 5"]
    finally:
        close_client(director)
        spare.close()
    store = Store(tmp_path / "spare", readonly=True)
    try:
        assert store.lines(game_id) == kept  # every acknowledged line is durable
    finally:
        store.close()
    assert parse_event(kept[-1]) is not None
