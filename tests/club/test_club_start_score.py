"""The club director honours a game started from a score (``game dealer=W
NS=6 EW=4``: a table that kept score on paper, or whose box was swapped) and a
misdeal: it replays the box's lines with the same engine, so the table's score,
the standings and ``/standings.json`` start from the score the box started from."""

from __future__ import annotations

from pathlib import Path

from euchre_core import Team
from euchre_core.events import Players, SetRules
from firmware.club.director import Director, standings_json
from firmware.club.protocol import EntryMessage, RoundFormat, entries_topic


def test_the_director_counts_from_the_box_s_starting_score(tmp_path: Path) -> None:
    director = Director(tmp_path, publish=lambda *message: None)
    for name in ["Anna", "Bo", "Cy", "Dee"]:
        director.register(name)
    assignment = director.start_round(RoundFormat(hands=None, target=10))
    seats = assignment.tables[1]
    lines = [
        SetRules(assignment.format.rules(assignment.rules)).line(),
        Players.from_names(seats).line(),
        "game dealer=W NS=6 EW=4",
        "upcard H", "pass N", "misdeal",  # Anna deals again
        "upcard S", "order N", *["trick N"] * 5,  # NS march: +2
    ]
    for seq, line in enumerate(lines):
        message = EntryMessage(1, "box1", assignment.round, 1, seq, line)
        director.receive(entries_topic("club", 1), message.encode())
    game = director.game_of(assignment.round, 1)
    assert game is not None and game.hands_played == 1
    assert game.score == {Team.NS: 8, Team.EW: 4}
    board = director.board()
    assert board["tables"][0]["score"] == {"NS": 8, "EW": 4}
    assert standings_json(board)["tables"][0]["score"] == {"NS": 8, "EW": 4}
    points = {player["name"]: player["points"] for player in board["players"]}
    ns = {seats[seat] for seat in seats if seat.team is Team.NS}
    assert {points[name] for name in ns} == {8}
    assert {points[name] for name in seats.values() if name not in ns} == {4}
    assert board["problems"] == []
