"""The club night's wire: topics and messages round-trip; anything else is
refused with a reason (firmware/club/protocol.py)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from euchre_core import Rules, Seat
from firmware.club.protocol import (
    Ack,
    Assignment,
    EntryMessage,
    MessageError,
    RoundFormat,
    Status,
    assignment_topic,
    entries_topic,
    parse_broker_url,
    topic_kind,
)

SEATS4 = {Seat.N: "Anna", Seat.E: "Bo", Seat.S: "Cy", Seat.W: "Dee"}


def test_messages_round_trip() -> None:
    entry = EntryMessage(3, "ab12", 2, 7, 0, "players N=Anna E=Bo S=Cy W=Dee")
    assert EntryMessage.decode(entry.encode()) == entry
    status = Status(3, "ab12", True, 2, 7)
    assert Status.decode(status.encode()) == status
    assignment = Assignment(2, RoundFormat(hands=4), Rules(stick_the_dealer=False),
                            {1: SEATS4}, ("Eve",))
    back = Assignment.decode(assignment.encode())
    assert (back.round, back.format, back.rules, back.tables, back.byes) == (
        2, RoundFormat(hands=4), Rules(stick_the_dealer=False), {1: SEATS4}, ("Eve",))
    assert Ack.decode(Ack("ab12", {7: 41}).encode()) == Ack("ab12", {7: 41})


def test_topics_are_the_events_own() -> None:
    assert topic_kind("club", entries_topic("club", 4)) == ("entries", "4")
    assert topic_kind("club", assignment_topic("club", 2)) == ("assignment", "2")
    with pytest.raises(MessageError, match="not one of event 'club'"):
        topic_kind("club", "euchre/other/table/4/entries")
    with pytest.raises(MessageError, match="not one of event"):
        topic_kind("club", "euchre/club/table/4/chat")


@pytest.mark.parametrize(("payload", "reason"), [
    (b"hello", "not JSON text"),
    (b"[1, 2]", "not a JSON object"),
    (json.dumps({"v": 2}).encode(), "version 2"),
    (json.dumps({"v": 1, "table": 0, "box": "a", "round": 1, "game": 1, "seq": 0,
                 "line": "x"}).encode(), "'table': a whole number from 1"),
    (json.dumps({"v": 1, "table": 1, "box": "a b", "round": 1, "game": 1, "seq": 0,
                 "line": "x"}).encode(), "box id 'a b'"),
    (json.dumps({"v": 1, "table": 1, "box": "a", "round": 1, "game": 1, "seq": 0,
                 "line": "x\ny"}).encode(), "one line"),
    (b"\xff\xfe", "not JSON text"),
])
def test_malformed_entries_say_why(payload: bytes, reason: str) -> None:
    with pytest.raises(MessageError, match=reason):
        EntryMessage.decode(payload)


def test_assignment_checks_seats_and_rules() -> None:
    good = json.loads(Assignment(1, RoundFormat(), Rules(), {1: SEATS4}).encode())
    bad_seats = {**good, "tables": [{"table": 1, "players": {"N": "A", "E": "B", "S": "C"}}]}
    with pytest.raises(MessageError, match="table 1: 'players' names each of N E S W"):
        Assignment.decode(json.dumps(bad_seats).encode())
    bad_rules = {**good, "rules": ["target=0"]}
    with pytest.raises(MessageError, match="target is a whole number from 1 to 99"):
        Assignment.decode(json.dumps(bad_rules).encode())
    bad_format = {**good, "format": {"hands": 8, "target": 10}}
    with pytest.raises(MessageError, match="'format'"):
        Assignment.decode(json.dumps(bad_format).encode())


def test_a_round_of_hands_has_no_reachable_target() -> None:
    assert RoundFormat(hands=8).rules(Rules()).target == 99
    assert RoundFormat(hands=None, target=7).rules(Rules(win_by_two=True)) == Rules(
        target=7, win_by_two=True)


def test_broker_urls() -> None:
    assert str(parse_broker_url("mqtt://laptop")) == "mqtt://laptop:1883"
    assert str(parse_broker_url("10.0.0.2:1884")) == "mqtt://10.0.0.2:1884"
    with pytest.raises(ValueError, match="expected mqtt://HOST"):
        parse_broker_url("http://laptop")


@settings(deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_are_a_message_or_a_message_error(payload: bytes) -> None:
    for kind in (EntryMessage, Status, Assignment, Ack):
        try:
            kind.decode(payload)
        except MessageError:
            pass


@settings(deadline=None)
@given(st.dictionaries(st.sampled_from(["v", "table", "box", "round", "game", "seq", "line",
                                        "online", "format", "tables", "rules", "acked"]),
                       st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=5),
                                 st.booleans(), st.lists(st.integers(), max_size=2),
                                 st.dictionaries(st.text(max_size=3), st.integers(),
                                                 max_size=2))))
def test_any_json_object_is_a_message_or_a_message_error(data: dict[str, object]) -> None:
    payload = json.dumps({"v": 1, **data}).encode()
    for kind in (EntryMessage, Status, Assignment, Ack):
        try:
            kind.decode(payload)
        except MessageError:
            pass
