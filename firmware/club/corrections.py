"""The organiser's corrections: records, each with who, when and why.

A correction never edits what the boxes sent or any total: it is a record in
the director's SQLite (table ``corrections``, never updated or deleted), and
the standings and the next rounds' seating are derived from the journals
*and* these records, in the order they were made:

==========  ===========================================================  ==================
kind        what it does                                                 applies to
==========  ===========================================================  ==================
result      sets a table's score for a round (``ns``, ``ew``); the       round R, table T
            round's winner follows from it (level: the round is shared)  (a round started)
penalty     ``points`` off a player's total                              the night
withdraw    the player is seated no more (their rounds so far count)     from the next round
add         a new player, or a withdrawn one back, seated from the       from the next round
            next round
bye         the player sits out the next round (a bye, compensated by    the next round
            the night's bye rule)
reseat      two players swap places in the next round's seating (one     the next round
            of them may be on a bye: they then swap that too)
==========  ===========================================================  ==================

Every correction names ``who`` made it (the organiser's name or id, as
given) and a ``reason``; the director stamps when.  :func:`check` refuses,
in one line and with nothing kept, an unknown kind or player, a round not
played, a table not in the round, a missing reason.
"""

from __future__ import annotations

import heapq
import sqlite3
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Final

from euchre_core import Seat
from euchre_core.events import name_problem

KINDS: Final = ("result", "penalty", "withdraw", "add", "bye", "reseat")

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS corrections (
    id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, made REAL NOT NULL,
    who TEXT NOT NULL, reason TEXT NOT NULL, round INTEGER, table_no INTEGER,
    player TEXT, other TEXT, points INTEGER, ns INTEGER, ew INTEGER);
"""
_COLUMNS: Final = ("id", "kind", "made", "who", "reason", "round", "table_no", "player",
                   "other", "points", "ns", "ew")
MAX_TEXT: Final = 200
"""Characters in ``who`` and ``reason`` at most."""


def stamp(made: float) -> str:
    """When a correction was made, as the page and the CSV show it (local time)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(made))


class CorrectionError(ValueError):
    """A correction the director refuses; says why in one line."""


@dataclass(frozen=True)
class Correction:
    """One correction (see the module's docstring for the kinds)."""

    kind: str
    who: str
    reason: str
    round: int | None = None
    table: int | None = None
    player: str | None = None
    other: str | None = None
    points: int | None = None
    ns: int | None = None
    ew: int | None = None
    id: int = 0
    made: float = 0.0

    def describe(self) -> str:
        """What it does, in words (the audit list)."""
        if self.kind == "result":
            return (f"round {self.round}, table {self.table}: result set to "
                    f"NS {self.ns}, EW {self.ew}")
        if self.kind == "penalty":
            return f"{self.player}: {self.points} points off"
        if self.kind == "withdraw":
            return f"{self.player} withdrawn from round {self.round} on"
        if self.kind == "add":
            return f"{self.player} added from round {self.round} on"
        if self.kind == "bye":
            return f"{self.player}: a bye in round {self.round}"
        return f"round {self.round}: {self.player} and {self.other} swap places"

    def to_json(self) -> dict[str, Any]:
        data = {key: value for key, value in asdict(self).items() if value is not None}
        data["what"] = self.describe()
        data["when"] = stamp(self.made)
        return data

    @classmethod
    def from_request(cls, data: Any) -> Correction:
        """A correction from a request's JSON (``{"kind": "penalty", "player":
        "Anna", "points": 2, "by": "Kim", "reason": "..."}``); the shape
        only: :func:`check` judges it against the night."""
        if not isinstance(data, dict):
            raise CorrectionError('send {"kind": ..., "by": ..., "reason": ..., ...}')
        kind = data.get("kind")
        if kind not in KINDS:
            raise CorrectionError(f"kind {kind!r}: one of {', '.join(KINDS)}")
        unknown = set(data) - {"kind", "by", "reason", "round", "table", "player", "other",
                               "points", "ns", "ew"}
        if unknown:
            raise CorrectionError(f"{kind}: unknown field {sorted(unknown)[0]!r}")
        texts = {}
        for key in ("by", "reason", "player", "other"):
            value = data.get(key)
            if value is not None and not isinstance(value, str):
                raise CorrectionError(f"{kind}: {key!r} is text, not {value!r}")
            texts[key] = value.strip() if isinstance(value, str) else None
        numbers = {}
        for key in ("round", "table", "points", "ns", "ew"):
            value = data.get(key)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise CorrectionError(f"{kind}: {key!r} is a whole number, not {value!r}")
            numbers[key] = value
        return cls(kind, texts["by"] or "", texts["reason"] or "", numbers["round"],
                   numbers["table"], texts["player"], texts["other"], numbers["points"],
                   numbers["ns"], numbers["ew"])


@dataclass(frozen=True)
class Night:
    """What :func:`check` needs to know of the night."""

    players: Sequence[str]
    """Everyone registered or added (withdrawn players too)."""
    withdrawn: frozenset[str]
    rounds: dict[int, set[int]]
    """Round -> its tables, for every round started."""
    next_round: int
    forced_byes: frozenset[str]
    """The byes already forced for the next round."""


def _need(condition: bool, problem: str) -> None:
    if not condition:
        raise CorrectionError(problem)


def check(correction: Correction, night: Night) -> Correction:
    """``correction`` as it is kept (names as registered, its round filled in),
    or CorrectionError saying in one line why it is refused."""
    c, kind = correction, correction.kind
    _need(kind in KINDS, f"kind {kind!r}: one of {', '.join(KINDS)}")
    _need(bool(c.who), f"{kind}: say who makes it (\"by\": the organiser's name)")
    _need(bool(c.reason), f"{kind}: a reason is needed")
    for what, text in (("by", c.who), ("reason", c.reason)):
        _need(len(text) <= MAX_TEXT and text.isprintable(),
              f"{kind}: {what!r}: at most {MAX_TEXT} printable characters")
    expected = {"result": {"round", "table", "ns", "ew"}, "penalty": {"player", "points"},
                "withdraw": {"player"}, "add": {"player"}, "bye": {"player"},
                "reseat": {"player", "other"}}[kind]
    given = {key for key in ("round", "table", "player", "other", "points", "ns", "ew")
             if getattr(c, key) is not None}
    missing = sorted(expected - given - ({"round"} if kind != "result" else set()))
    _need(not missing, f"{kind}: {', '.join(repr(m) for m in missing)} needed")
    extra = sorted(given - expected - ({"round"} if kind == "penalty" else set()))
    _need(not extra, f"{kind}: {', '.join(repr(e) for e in extra)} does not belong here")
    by_fold = {name.casefold(): name for name in night.players}

    def known(name: str | None) -> str:
        assert name is not None
        found = by_fold.get(name.casefold())
        _need(found is not None, f"{kind}: {name!r} is not a registered player")
        assert found is not None
        return found

    if kind == "result":
        assert c.round is not None and c.table is not None
        _need(c.round in night.rounds, f"result: round {c.round} has not been played")
        _need(c.table in night.rounds[c.round],
              f"result: round {c.round} has no table {c.table}")
        for side, points in (("ns", c.ns), ("ew", c.ew)):
            _need(points is not None and 0 <= points <= 999,
                  f"result: {side!r}: points from 0 to 999, not {points!r}")
        return c
    if kind == "penalty":
        player = known(c.player)
        _need(c.points is not None and 1 <= c.points <= 999,
              f"penalty: 'points': from 1 to 999 taken off, not {c.points!r}")
        _need(c.round is None or c.round in night.rounds,
              f"penalty: round {c.round} has not been played")
        return replace(c, player=player)
    if kind == "add":
        assert c.player is not None
        name = c.player.strip()
        problem = name_problem(name)
        _need(problem is None, f"add: name {name!r}: {problem}")
        found = by_fold.get(name.casefold())
        _need(found is None or found in night.withdrawn,
              f"add: {found!r} is playing already")
        return replace(c, player=found or name, round=night.next_round)
    player = known(c.player)
    _need(player not in night.withdrawn, f"{kind}: {player} has withdrawn")
    if kind == "withdraw":
        return replace(c, player=player, round=night.next_round)
    if kind == "bye":
        _need(player not in night.forced_byes,
              f"bye: {player} has a bye in round {night.next_round} already")
        return replace(c, player=player, round=night.next_round)
    other = known(c.other)
    _need(other != player, f"reseat: {player} cannot swap with themselves")
    _need(other not in night.withdrawn, f"reseat: {other} has withdrawn")
    return replace(c, player=player, other=other, round=night.next_round)


# --- the store ------------------------------------------------------------------------------


def keep(db: sqlite3.Connection, correction: Correction) -> Correction:
    """Insert ``correction`` (checked) and return it with its id."""
    c = correction
    cursor = db.execute(
        "INSERT INTO corrections (kind, made, who, reason, round, table_no, player, other, "
        "points, ns, ew) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (c.kind, c.made, c.who, c.reason, c.round, c.table, c.player, c.other, c.points,
         c.ns, c.ew))
    assert cursor.lastrowid is not None
    return replace(c, id=cursor.lastrowid)


def load(db: sqlite3.Connection) -> list[Correction]:
    """Every correction, the first made first."""
    rows = db.execute(f"SELECT {', '.join(_COLUMNS)} FROM corrections ORDER BY id")
    out = []
    for row in rows:
        data = dict(zip(_COLUMNS, row))
        data["table"] = data.pop("table_no")
        out.append(Correction(**data))
    return out


# --- what the records make -----------------------------------------------------------------


def withdrawn(corrections: Iterable[Correction]) -> frozenset[str]:
    """Who is withdrawn now (a later ``add`` brings a player back)."""
    out: set[str] = set()
    for c in corrections:
        if c.kind == "withdraw" and c.player is not None:
            out.add(c.player)
        elif c.kind == "add" and c.player is not None:
            out.discard(c.player)
    return frozenset(out)


def added(corrections: Iterable[Correction]) -> list[str]:
    """Players added by a correction (not registered otherwise), in order."""
    return list(dict.fromkeys(c.player for c in corrections
                              if c.kind == "add" and c.player is not None))


def forced_byes(corrections: Iterable[Correction], round_number: int) -> list[str]:
    return [c.player for c in corrections
            if c.kind == "bye" and c.round == round_number and c.player is not None]


def penalties(corrections: Iterable[Correction]) -> Counter[str]:
    out: Counter[str] = Counter()
    for c in corrections:
        if c.kind == "penalty" and c.player is not None and c.points is not None:
            out[c.player] += c.points
    return out


def results(corrections: Iterable[Correction]) -> dict[tuple[int, int], Correction]:
    """The result correction in force per (round, table): the last made."""
    return {(c.round, c.table): c for c in corrections
            if c.kind == "result" and c.round is not None and c.table is not None}


def reseat(tables: list[dict[Seat, str]], byes: list[str],
           corrections: Iterable[Correction], round_number: int
           ) -> tuple[list[dict[Seat, str]], list[str]]:
    """The seating with round ``round_number``'s reseats applied in order:
    each swaps two players' places (a seat, or a bye)."""
    tables = [dict(seats) for seats in tables]
    byes = list(byes)
    for c in corrections:
        if c.kind != "reseat" or c.round != round_number:
            continue
        spots: dict[str, tuple[int, Seat | None]] = {}
        for index, seats in enumerate(tables):
            for seat, name in seats.items():
                spots[name] = (index, seat)
        for index, name in enumerate(byes):
            spots[name] = (index, None)
        if c.player not in spots or c.other not in spots:
            continue  # one of them is not in this round (withdrawn since): nothing to swap
        assert c.player is not None and c.other is not None
        for name, (index, place) in ((c.other, spots[c.player]), (c.player, spots[c.other])):
            if place is None:
                byes[index] = name
            else:
                tables[index][place] = name
    return tables, byes


DISPUTE: Final = "dispute"
"""The ``kind`` of a corrections CSV row that is a result disputed at its
table: not a correction (no id, nothing changed) but the organiser's to
settle, with a ``result`` correction (``club correct result``)."""


def csv_rows(corrections: Iterable[Correction],
             disputes: Iterable[Mapping[str, Any]] = ()) -> list[list[Any]]:
    """The corrections CSV: a header, then one row per correction and per
    result disputed at its table (``disputes``: the director's board's, kind
    :data:`DISPUTE`, no id, ``by`` the side that disputed, ``ns``/``ew`` the
    result as the table had it), in the order they came (a dispute by when
    the director got it)."""
    rows: list[list[Any]] = [["id", "made", "by", "kind", "what", "reason", "round", "table",
                              "player", "other", "points", "ns", "ew"]]
    fixes = ((c.made, [c.id, stamp(c.made), c.who, c.kind, c.describe(), c.reason,
                       *("" if v is None else v for v in (c.round, c.table, c.player, c.other,
                                                           c.points, c.ns, c.ew))])
             for c in corrections)
    said = sorted(((d["at"], ["", stamp(d["at"]), d["by"], DISPUTE, d["what"], "", d["round"],
                              d["table"], "", "", "", d["score"]["NS"], d["score"]["EW"]])
                   for d in disputes), key=lambda item: item[0])
    rows.extend(row for _, row in heapq.merge(fixes, said, key=lambda item: item[0]))
    return rows
