"""A tied round with the extra-hand rule, on a real referee joined to a real
mosquitto and a director: the box asks for one more hand, unscored, that
decides the round; the director counts it so (firmware/club/box.py,
standings.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.broker import Mosquitto, needs_mosquitto
from support.club_kit import replayed
from test_club_box import Table, parse, wait_for

from euchre_core import Seat, Team
from firmware.club.director import Director
from firmware.club.mqtt import close_client, open_client
from firmware.club.protocol import QOS, RoundFormat, parse_broker_url

pytestmark = needs_mosquitto

NS_ONE = ["make N H", *["trick N"] * 3, *["trick E"] * 2]  # NS +1
EW_ONE = ["make E S", *["trick E"] * 3, *["trick N"] * 2]  # EW +1
EW_EUCHRE = ["make S D", *["trick E"] * 3, *["trick S"] * 2]  # S euchred: EW +2


def test_a_tied_round_asks_for_one_more_hand_that_decides_it(
        tmp_path: Path, mosquitto: Mosquitto) -> None:
    holder: list[Any] = []
    director = Director(tmp_path / "director", event="tied",
                        settings={"tied_round": "extra-hand"},
                        publish=lambda t, p, r: holder[0].publish(t, p, qos=QOS, retain=r))
    holder.append(open_client(parse_broker_url(mosquitto.url), "director-tied",
                              on_message=director.receive, subscriptions=["euchre/tied/#"]))
    for name in ["Anna", "Bo", "Cy", "Dee"]:
        director.register(name)
    table = Table(tmp_path / "box", mosquitto.url, 1, "tied")
    try:
        wait_for(lambda: table.box.connected, "the box connects")
        assignment = director.start_round(RoundFormat(hands=2))
        wait_for(lambda: table.call(lambda r: r.game.names == assignment.tables[1]),
                 "the round's game")

        def enter(lines: list[str]) -> None:
            for line in lines:
                assert table.call(lambda r, line=line: r.enter(parse(line))) is None

        enter(["game dealer=W", *NS_ONE, *EW_ONE])
        title, lines = table.call(lambda r: r.notice)
        assert (title, lines[0]) == ("Round 1: tied", "Tied round: one more hand decides it.")
        assert lines[1] == "NS 1  EW 1: the extra hand scores nothing."
        assert table.call(lambda r: table.box.awaits_extra_hand(1, r.game))
        table.call(lambda r: setattr(r, "notice", None))
        enter(EW_EUCHRE[:3])  # the extra hand's entries do not ask again
        assert table.call(lambda r: r.notice) is None
        enter(EW_EUCHRE[3:])
        title, lines = table.call(lambda r: r.notice)
        assert (title, lines[0]) == ("Round 1 over", "NS 1  EW 1: EW took the extra hand.")
        kept = table.call(lambda r: r.store.lines(r.game_id))
        wait_for(lambda: replayed(director, 1, 1, kept), "every line at the director, replayed")
        table_round = director.tables[(1, 1)]
        assert table_round.done and table_round.winner is Team.EW
        assert table_round.score == {Team.NS: 1, Team.EW: 1}
        won = {p["name"]: p["rounds_won"] for p in director.board()["players"]}
        seats = assignment.tables[1]
        assert won == {seats[Seat.N]: 0, seats[Seat.S]: 0, seats[Seat.E]: 1, seats[Seat.W]: 1}
    finally:
        table.close()
        close_client(holder[0])
        director.close()
