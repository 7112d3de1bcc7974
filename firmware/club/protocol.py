"""The club night's wire, once: MQTT topics and the JSON messages on them.

Everything lives under one event id (``euchre/<event>/...``):

=============================================  =====  ========  =================================
topic                                          QoS    retained  from -> to: what
=============================================  =====  ========  =================================
``euchre/<event>/table/<n>/entries``           1      no        box -> director: one journal line
``euchre/<event>/table/<n>/status``            1      yes       box -> director: online, round,
                                                                game (the broker's last will says
                                                                offline)
``euchre/<event>/round/<r>/assignment``        1      yes       director -> boxes: the round
``euchre/<event>/box/<box>/ack``               1      yes       director -> box: lines kept, per
                                                                game (the box's outbox watermark)
=============================================  =====  ========  =================================

A journal line travels with the box's id, its game id and its sequence number
in that game (the journal's own numbering, from 0), so the director keeps
exactly the box's journal: duplicates are dropped by ``(box, game, seq)`` and
lines that arrive early wait for the gap before them.

Every parser here raises :class:`MessageError` with one line saying what is
wrong; a message that fails changes nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from euchre_core import SEATS, Rules, RulesError, Seat
from euchre_core.events import name_problem

VERSION: Final = 1
"""``"v"`` of every message; a message of another version is refused."""
ROOT: Final = "euchre"
DEFAULT_PORT: Final = 1883
DEFAULT_HANDS: Final = 8
"""Hands in a round when the organiser names no format (``club round``, ``POST /rounds``)."""
DEFAULT_TLS_PORT: Final = 8883
QOS: Final = 1
MAX_PAYLOAD: Final = 64 * 1024
"""Bytes in one message (an assignment of 20 tables is about 3 KB); the
broker refuses larger ones too (``club setup``'s ``max_packet_size``)."""
MAX_DEPTH: Final = 8
"""Nesting of JSON arrays and objects in one message (ours have 4 at most),
checked before parsing."""
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
TIED_ROUND_RULES: Final = ("shared", "extra-hand")
"""What a tie after a round's N hands comes to (``firmware/club/standings.py``)."""
HANDS_ROUND_TARGET: Final = 99
"""The target a round of N hands is played with: no side reaches it in a round
(at most 4 points a hand), so the round ends by the count, not by a winner."""

_EVENT_ID = re.compile(r"[A-Za-z0-9_-]{1,40}\Z")
_BOX_ID = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
_MAX_TABLE: Final = 999


class MessageError(ValueError):
    """A message that is not one of ours, or not well formed; says why in one line."""


def check_event_id(event: str) -> str:
    if not _EVENT_ID.match(event):
        raise MessageError(f"event id {event!r}: 1 to 40 letters, digits, - or _")
    return event


def check_box_id(box: str) -> str:
    if not _BOX_ID.match(box):
        raise MessageError(f"box id {box!r}: 1 to 64 letters, digits, - or _")
    return box


# --- topics -------------------------------------------------------------------------


def entries_topic(event: str, table: int | str) -> str:
    return f"{ROOT}/{event}/table/{table}/entries"


def status_topic(event: str, table: int | str) -> str:
    return f"{ROOT}/{event}/table/{table}/status"


def assignment_topic(event: str, round_number: int | str) -> str:
    return f"{ROOT}/{event}/round/{round_number}/assignment"


def ack_topic(event: str, box: str) -> str:
    return f"{ROOT}/{event}/box/{box}/ack"


def takeover_topic(event: str, table: int | str) -> str:
    return f"{ROOT}/{event}/table/{table}/takeover"


def handover_topic(event: str, table: int | str) -> str:
    return f"{ROOT}/{event}/table/{table}/handover"


def clock_topic(event: str, round_number: int | str) -> str:
    return f"{ROOT}/{event}/round/{round_number}/clock"


def topic_kind(event: str, topic: str) -> tuple[str, str]:
    """``("entries" | "status" | "takeover" | "handover" | "assignment" |
    "clock" | "ack", the number or box id)`` for one of the event's topics;
    MessageError for any other topic."""
    parts = topic.split("/")
    if len(parts) == 5 and parts[:2] == [ROOT, event]:
        kind = {("table", "entries"): "entries", ("table", "status"): "status",
                ("table", "takeover"): "takeover", ("table", "handover"): "handover",
                ("round", "assignment"): "assignment", ("round", "clock"): "clock",
                ("box", "ack"): "ack"}.get((parts[2], parts[4]))
        if kind is not None:
            return kind, parts[3]
    raise MessageError(f"topic {topic!r} is not one of event {event!r}")


# --- the broker's address -----------------------------------------------------------


@dataclass(frozen=True)
class BrokerAddress:
    host: str
    port: int
    tls: bool = False
    """``mqtts://``: the connection is TLS (the broker's certificate checked)."""

    def __str__(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"


def parse_broker_url(url: str) -> BrokerAddress:
    """``mqtt://HOST[:PORT]`` (or ``HOST[:PORT]``), or ``mqtts://HOST[:PORT]``
    for TLS (default port 8883); ValueError naming the URL if not."""
    text = url if "://" in url else f"mqtt://{url}"
    parts = urlsplit(text)
    if parts.scheme not in ("mqtt", "tcp", "mqtts") or not parts.hostname:
        raise ValueError(f"broker {url!r}: expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
    tls = parts.scheme == "mqtts"
    try:
        port = parts.port or (DEFAULT_TLS_PORT if tls else DEFAULT_PORT)
    except ValueError:
        raise ValueError(f"broker {url!r}: the port is not a number from 1 to 65535") from None
    return BrokerAddress(parts.hostname, port, tls)


# --- messages -----------------------------------------------------------------------


def _depth(text: str) -> int:
    """How deep ``[`` and ``{`` nest in JSON text (strings set aside)."""
    depth = deepest = 0
    for char in _JSON_STRING.sub("", text):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _load(payload: bytes) -> dict[str, Any]:
    if len(payload) > MAX_PAYLOAD:
        raise MessageError(f"{len(payload)} bytes: more than {MAX_PAYLOAD}")
    try:
        text = payload.decode("utf-8")
        if _depth(text) > MAX_DEPTH:
            raise MessageError(f"JSON nested deeper than {MAX_DEPTH}")
        data = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise MessageError(f"not JSON text: {error}") from None
    if not isinstance(data, dict):
        raise MessageError("not a JSON object")
    if data.get("v") != VERSION:
        raise MessageError(f"version {data.get('v')!r}: this director speaks {VERSION}")
    return data


def _dump(data: dict[str, Any]) -> bytes:
    return json.dumps({"v": VERSION, **data}, ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")


def _int(data: dict[str, Any], key: str, low: int = 0, high: int = 2**53) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise MessageError(f"{key!r}: a whole number from {low} to {high}, not {value!r}")
    return value


def _str(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise MessageError(f"{key!r}: text, not {value!r}")
    return value


@dataclass(frozen=True)
class EntryMessage:
    """One line of a box's journal."""

    table: int
    box: str
    round: int
    game: int
    """The box's own game id."""
    seq: int
    """The line's number in that game, from 0 (the journal's numbering)."""
    line: str

    def encode(self) -> bytes:
        return _dump({"table": self.table, "box": self.box, "round": self.round,
                      "game": self.game, "seq": self.seq, "line": self.line})

    @classmethod
    def decode(cls, payload: bytes) -> EntryMessage:
        data = _load(payload)
        line = _str(data, "line")
        if "\n" in line or "\r" in line:
            raise MessageError("'line': one line, no line breaks")
        return cls(_int(data, "table", 1, _MAX_TABLE), check_box_id(_str(data, "box")),
                   _int(data, "round", 1, 999), _int(data, "game", 1), _int(data, "seq"), line)


@dataclass(frozen=True)
class Status:
    """A box's status on its table (retained; the last will has ``online`` false)."""

    table: int
    box: str
    online: bool
    round: int | None = None
    game: int | None = None

    def encode(self) -> bytes:
        return _dump({"table": self.table, "box": self.box, "online": self.online,
                      "round": self.round, "game": self.game})

    @classmethod
    def decode(cls, payload: bytes) -> Status:
        data = _load(payload)
        online = data.get("online")
        if not isinstance(online, bool):
            raise MessageError(f"'online': true or false, not {online!r}")
        round_number = None if data.get("round") is None else _int(data, "round", 1, 999)
        game = None if data.get("game") is None else _int(data, "game", 1)
        return cls(_int(data, "table", 1, _MAX_TABLE), check_box_id(_str(data, "box")),
                   online, round_number, game)


@dataclass(frozen=True)
class RoundFormat:
    """A round of ``hands`` hands, or a game to ``target`` (at most one is
    set), and/or of ``minutes`` (timed: :data:`.control.TIME_RULE`)."""

    hands: int | None = DEFAULT_HANDS
    target: int | None = None
    minutes: float | None = None
    """Minutes from the round's start to the call of time (a fraction: a rehearsal)."""

    def to_json(self) -> dict[str, float]:
        out: dict[str, float] = (
            {"hands": self.hands} if self.hands is not None else
            {"target": self.target} if self.target is not None else {})
        return out if self.minutes is None else {**out, "minutes": self.minutes}

    @classmethod
    def from_json(cls, data: Any) -> RoundFormat:
        keys = set(data) if isinstance(data, dict) else set()
        if not keys or not keys <= {"hands", "target", "minutes"} or {"hands", "target"} <= keys:
            raise MessageError(f"'format': {{\"hands\": N}} or {{\"target\": N}}, and/or "
                               f"{{\"minutes\": N}}, not {data!r}")
        minutes = data.get("minutes")
        if minutes is not None and (not isinstance(minutes, (int, float)) or isinstance(
                minutes, bool) or not 0 < minutes <= 600):
            raise MessageError(f"'minutes': a number of minutes above 0, at most 600, "
                               f"not {minutes!r}")
        if "hands" in data:
            return cls(hands=_int(data, "hands", 1, 24), minutes=minutes)
        if "target" in data:
            return cls(hands=None, target=_int(data, "target", 1, 99), minutes=minutes)
        return cls(hands=None, minutes=minutes)

    def rules(self, house: Rules) -> Rules:
        """The rules the round's game is played by: the house rules, and the
        round's target (a round of N hands: :data:`HANDS_ROUND_TARGET`)."""
        target = self.target if self.target is not None else HANDS_ROUND_TARGET
        return house.replace(target=target)

    def describe(self) -> str:
        kind = (f"{self.hands} hands" if self.hands is not None else
                f"a game to {self.target}" if self.target is not None else "")
        timed = ("" if self.minutes is None else
                 f"{self.minutes:g} minute{'' if self.minutes == 1 else 's'}")
        return " or ".join(part for part in (kind, timed) if part)


@dataclass(frozen=True)
class Assignment:
    """A round: who sits where at each table, the format and the house rules."""

    round: int
    format: RoundFormat
    rules: Rules
    tables: dict[int, dict[Seat, str]]
    byes: tuple[str, ...] = ()
    moves: dict[str, str] = field(default_factory=dict)
    """Per player, in words, where they sit this round (for the boxes' screens)."""
    tied_round: str = "shared"
    """A tie after the round's N hands: ``"shared"`` (both sides won it) or
    ``"extra-hand"`` (one more hand, unscored, decides it: the box asks for it)."""
    ends: float | None = None
    """A timed round: when time is called, the director's Unix time (the
    boxes count down from the director's :class:`Clock` messages instead)."""

    def encode(self) -> bytes:
        return _dump({
            **({"tied": self.tied_round} if self.tied_round != "shared" else {}),
            "round": self.round, "format": self.format.to_json(),
            "rules": self.rules.to_tokens(),
            "tables": [{"table": number, "players": {str(s): n for s, n in seats.items()}}
                       for number, seats in sorted(self.tables.items())],
            "byes": list(self.byes),
            **({"ends": self.ends} if self.ends is not None else {}),
        })

    @classmethod
    def decode(cls, payload: bytes) -> Assignment:
        data = _load(payload)
        tokens = data.get("rules", [])
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            raise MessageError("'rules': a list of key=value settings")
        try:
            rules = Rules.from_tokens(tokens)
        except RulesError as error:
            raise MessageError(f"'rules': {error}") from None
        tables: dict[int, dict[Seat, str]] = {}
        raw_tables = data.get("tables")
        if not isinstance(raw_tables, list):
            raise MessageError("'tables': a list of {table, players}")
        for item in raw_tables:
            if not isinstance(item, dict):
                raise MessageError("'tables': a list of {table, players}")
            number = _int(item, "table", 1, _MAX_TABLE)
            players = item.get("players")
            if not isinstance(players, dict) or set(players) != {str(s) for s in SEATS}:
                raise MessageError(f"table {number}: 'players' names each of N E S W")
            seats: dict[Seat, str] = {}
            for seat in SEATS:
                name = players[str(seat)]
                if not isinstance(name, str) or name_problem(name) is not None:
                    raise MessageError(f"table {number}, seat {seat}: not a player's name")
                seats[seat] = name
            if number in tables:
                raise MessageError(f"table {number} is given twice")
            tables[number] = seats
        byes = data.get("byes", [])
        if not isinstance(byes, list) or not all(isinstance(b, str) for b in byes):
            raise MessageError("'byes': a list of names")
        tied = data.get("tied", "shared")
        if tied not in TIED_ROUND_RULES:
            raise MessageError(f"'tied': one of {', '.join(TIED_ROUND_RULES)}, not {tied!r}")
        ends = data.get("ends")
        if ends is not None and (not isinstance(ends, (int, float)) or isinstance(ends, bool)):
            raise MessageError(f"'ends': a Unix time, not {ends!r}")
        return cls(_int(data, "round", 1, 999), RoundFormat.from_json(data.get("format")),
                   rules, tables, tuple(byes), tied_round=tied,
                   ends=None if ends is None else float(ends))


@dataclass(frozen=True)
class Ack:
    """What the director keeps of one box: per game, every line up to ``seq``."""

    box: str
    acked: dict[int, int]

    def encode(self) -> bytes:
        return _dump({"box": self.box, "acked": {str(g): s for g, s in self.acked.items()}})

    @classmethod
    def decode(cls, payload: bytes) -> Ack:
        data = _load(payload)
        acked = data.get("acked")
        if not isinstance(acked, dict):
            raise MessageError("'acked': an object of game id -> seq")
        result: dict[int, int] = {}
        for key, seq in acked.items():
            if not key.isdigit() or not isinstance(seq, int) or isinstance(seq, bool):
                raise MessageError(f"'acked': game {key!r} -> {seq!r} is not id -> seq")
            result[int(key)] = seq
        return cls(check_box_id(_str(data, "box")), result)


@dataclass(frozen=True)
class Takeover:
    """A spare box asks for a table (``club box --take-over``): the director
    answers with a :class:`Handover`."""

    table: int
    box: str

    def encode(self) -> bytes:
        return _dump({"table": self.table, "box": self.box})

    @classmethod
    def decode(cls, payload: bytes) -> Takeover:
        data = _load(payload)
        return cls(_int(data, "table", 1, _MAX_TABLE), check_box_id(_str(data, "box")))


@dataclass(frozen=True)
class Handover:
    """The director gives table ``table``'s round ``round`` to box ``box``
    (retained): its journal so far, as the director has it; ``old`` is the
    box it replaces, refused from then on."""

    table: int
    round: int
    box: str
    old: str | None
    lines: tuple[str, ...]

    def encode(self) -> bytes:
        return _dump({"table": self.table, "round": self.round, "box": self.box,
                      "old": self.old, "lines": list(self.lines)})

    @classmethod
    def decode(cls, payload: bytes) -> Handover:
        data = _load(payload)
        lines = data.get("lines")
        if not isinstance(lines, list) or not all(
                isinstance(line, str) and "\n" not in line and "\r" not in line
                for line in lines):
            raise MessageError("'lines': a list of journal lines")
        old = data.get("old")
        return cls(_int(data, "table", 1, _MAX_TABLE), _int(data, "round", 1, 999),
                   check_box_id(_str(data, "box")),
                   None if old is None else check_box_id(_str(data, "old")), tuple(lines))


@dataclass(frozen=True)
class Clock:
    """A timed round's clock (every few seconds while it runs): seconds left
    by the director's clock, 0 once time is called."""

    round: int
    remaining: float

    def encode(self) -> bytes:
        return _dump({"round": self.round, "remaining": round(self.remaining, 1)})

    @classmethod
    def decode(cls, payload: bytes) -> Clock:
        data = _load(payload)
        remaining = data.get("remaining")
        if not isinstance(remaining, (int, float)) or isinstance(remaining, bool) or not (
                0 <= remaining <= 600 * 60):
            raise MessageError(f"'remaining': seconds from 0 to {600 * 60}, not {remaining!r}")
        return cls(_int(data, "round", 1, 999), float(remaining))
