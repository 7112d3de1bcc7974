"""The check of the journal's files at open, before anything is written.

Through a read-only connection: SQLite's ``quick_check``, our schema (each
table's SQL as ``schema`` makes it, nothing else in ``sqlite_master``), the
types and the line numbering (a journal that fails these cannot be read at
all: ``sqlite3.DatabaseError``), then each line's chained CRC and the record
of acknowledged lines (damage: kept in the :class:`Audit`, with what can
still be trusted; lines beyond the record: :class:`Unconfirmed`, never
acknowledged; a damaged record alone: ``record_damaged``, every line kept).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from .acks import Acked, read_acks
from .chain import chain_crc, setting_crc
from .files import ACKS_NAME, decode
from .schema import same_to_sqlite, table_forms


class Damage(NamedTuple):
    """A damaged journal found at open: kept aside, and what was recovered."""

    kept_as: Path
    reason: str
    recovered: int
    """Lines recovered into the fresh journal."""
    acknowledged: int
    """Lines the record said were acknowledged (or found, if it said fewer)."""

    def sentence(self) -> str:
        return (f"journal damaged ({self.reason}): kept aside as {self.kept_as.name}; "
                f"recovered {self.recovered} of {self.acknowledged} lines")


class Unconfirmed(NamedTuple):
    """Lines the journal holds beyond the record of acknowledged lines: never
    acknowledged (their commit refused, or the power gone before their record
    was kept), so never part of the game."""

    last: tuple[int, int] | None
    """The last acknowledged line (game, seq); None: there is none."""
    lines: list[tuple[int, int, str]]
    """Each line beyond it: game, seq, text."""
    games: frozenset[int]
    """The games made by them (their first line is beyond it)."""
    kept_as: Path | None = None
    """Where they were written before they were left out (None: not left
    out, only not shown: a journal opened read-only)."""

    def entries(self) -> str:
        """``the last entry (trick W) was`` / ``the last 3 entries (a … c) were``."""
        texts = [text for _, _, text in self.lines]
        if len(texts) == 1:
            return f"the last entry ({texts[0]}) was"
        return f"the last {len(texts)} entries ({texts[0]} … {texts[-1]}) were"

    def sentence(self) -> str:
        """What happened, in one line (``status``, the log)."""
        said = (f"{self.entries()} never confirmed (refused, or the power went first): "
                f"{'left out' if self.kept_as else 'not shown'}")
        return said + (f"; kept in {self.kept_as.name}" if self.kept_as else "")

    def listing(self, acknowledged: int) -> str:
        """The ``.reason`` file's text: why, then each line left out."""
        count = len(self.lines)
        return "\n".join([
            f"{count} line{'s' if count != 1 else ''} beyond the record of acknowledged "
            f"lines ({ACKS_NAME}: {acknowledged}), never confirmed, left out of the journal:",
            *(f"game {game_id} line {seq + 1}: {text}" for game_id, seq, text in self.lines)])


class Audit:
    """The journal as the read-only check found it: ``legacy`` when written
    before lines carried CRCs (nothing to check them against); ``good`` each
    game's lines up to its first damaged one (and the last acknowledged)."""

    def __init__(self) -> None:
        self.tables: set[str] = set()
        self.unconfirmed: Unconfirmed | None = None
        self.record_damaged: str | None = None
        """The record of acknowledged lines is damaged (the journal may not be)."""
        self.rows = 0
        self.tail_crc = 0
        self.legacy = False
        self.damage: list[str] = []
        self.unchecked: str | None = None
        self.good: dict[int, list[bytes]] = {}
        self.games: list[tuple[int, float, str]] = []
        self.settings: list[tuple[str, str]] = []
        self.acknowledged = 0

    def damage_found(self, kept_as: Path) -> Damage:
        """The damage found, its files kept as ``kept_as``; recovered: the good lines."""
        return Damage(kept_as, "; ".join(self.damage),
                      sum(len(lines) for lines in self.good.values()), self.acknowledged)


def audit_journal(read_only: Callable[[], sqlite3.Connection], acks: Path) -> Audit:
    """Check the journal through connections from ``read_only`` and the
    record ``acks``:
    SQLite's ``quick_check``, our schema, the types, the line numbering
    (raise ``sqlite3.DatabaseError`` if it is not a journal that can be
    read; whatever else reading it raises means the same to the caller),
    then each line's CRC and the record of acknowledged lines (damage, the
    lines beyond the record, a damaged record: in the audit).

    Read-only, so that a bad journal is found exactly as it was: a
    read-write connection that fails to read the database still
    checkpoints its -wal into the file when it is closed, and deletes
    the -wal.
    """
    audit = Audit()
    # The record first: a referee writing meanwhile (``games`` reads while
    # it runs) only adds lines after it, never the other way round.
    acked = read_acks(acks)
    ro = read_only()
    ro.text_factory = bytes
    try:
        check = ro.execute("PRAGMA quick_check").fetchone()
        if check is None or check[0] != b"ok":
            raise sqlite3.DatabaseError(f"quick_check: {check}")
        tables = audit.tables = _check_schema(ro, audit)
        # Our schema (a table may be missing from a journal made before the
        # journal was made whole: the store makes it), every value of the
        # type we wrote, and each game's lines numbered 0, 1, 2... with no gap.
        columns = {}
        for table in tables & {"games", "lines", "settings"}:
            columns[table] = {row[1].decode().lower() for row in ro.execute(
                f"PRAGMA table_info({table})")}
        if "games" in tables:
            ro.execute("SELECT id, created, flow FROM games LIMIT 0")
            _check_type(ro, "games", "flow")
            audit.games = [(gid, created, decode(flow)) for gid, created, flow in
                           ro.execute("SELECT id, created, flow FROM games ORDER BY id")]
        audit.legacy = bool(tables) and "crc" not in columns.get("lines", {"crc"})
        if "lines" in tables:
            ro.execute("SELECT game_id, seq, text FROM lines LIMIT 0")
            _check_type(ro, "lines", "text")
            (gaps,) = ro.execute(
                "SELECT COUNT(*) FROM (SELECT COUNT(*) AS n, MIN(seq) AS lo, "
                "MAX(seq) AS hi FROM lines GROUP BY game_id) "
                "WHERE lo != 0 OR hi != n - 1").fetchone()
            if gaps:
                raise sqlite3.DatabaseError(f"{gaps} games with lines out of sequence")
            _check_lines(ro, audit)
        if "settings" in tables:
            ro.execute("SELECT key, value FROM settings LIMIT 0")
            _check_type(ro, "settings", "value")
            _check_settings(ro, audit, "crc" in columns["settings"])
    finally:
        ro.close()
    _check_acks(audit, acked, read_only)
    return audit


def _check_lines(ro: sqlite3.Connection, audit: Audit) -> None:
    """Each line's CRC against its text and the line before it."""
    query = ("SELECT game_id, seq, text, crc FROM lines ORDER BY game_id, seq"
             if not audit.legacy else
             "SELECT game_id, seq, text, 0 FROM lines ORDER BY game_id, seq")
    previous = 0
    bad_games: set[int] = set()
    for game_id, seq, text, crc in ro.execute(query):
        audit.rows += 1
        if not audit.legacy and crc != chain_crc(previous, game_id, seq, text):
            if game_id not in bad_games:
                audit.damage.append(f"game {game_id} line {seq + 1} altered")
            bad_games.add(game_id)
        elif game_id not in bad_games:
            audit.good.setdefault(game_id, []).append(text)
        previous = crc
        audit.tail_crc = crc


def _check_settings(ro: sqlite3.Connection, audit: Audit, has_crc: bool) -> None:
    rows = ro.execute("SELECT key, value, crc FROM settings" if has_crc
                      else "SELECT key, value, 0 FROM settings")
    for key, value, crc in rows:
        name = decode(key)
        if has_crc and crc != setting_crc(name, value):
            audit.damage.append(f"setting {name} altered")
            continue
        audit.settings.append((name, decode(value)))


def _check_schema(ro: sqlite3.Connection, audit: Audit) -> set[str]:
    """The tables in ``sqlite_master``, each exactly as ours (``schema``),
    nothing else; any of them may be missing (made at open).  A table whose
    SQL differs from ours only where SQLite does not read a difference (the
    case of a letter, one whitespace for another) is damage: read as ours,
    then kept aside and written afresh.  Anything else cannot be read as a
    journal (``sqlite3.DatabaseError``)."""
    forms = table_forms()
    tables = set()
    for kind, name, table, sql, types in ro.execute(
            "SELECT type, name, tbl_name, sql, typeof(type) || typeof(name) || "
            "typeof(tbl_name) || typeof(sql) || typeof(rootpage) FROM sqlite_master"):
        text = decode(name).lower() if isinstance(name, bytes) else str(name)
        if types != b"texttexttexttextinteger" or text not in forms:
            raise sqlite3.DatabaseError(f"not the referee's tables: {text!r}")
        ours = forms[text]
        if kind == b"table" and name == table and sql in ours:
            tables.add(text)
            continue
        if (kind.lower() != b"table" or name.lower() != table.lower()
                or same_to_sqlite(sql) not in {same_to_sqlite(form) for form in ours}):
            raise sqlite3.DatabaseError(f"not the referee's tables: {text!r} is not as it "
                                        "makes it")
        audit.damage.append(f"the table {text} altered")
        tables.add(text)
    return tables


def _check_acks(audit: Audit, acked: Acked | None,
                read_only: Callable[[], sqlite3.Connection]) -> None:
    """The journal against ``journal.acks``: at least as many lines, the
    chain's CRC where the record ends, and the lines beyond it (never
    acknowledged: unconfirmed, and out of what can be trusted).  A damaged
    record keeps every line whose CRC holds (``record_damaged``)."""
    audit.acknowledged = audit.rows
    if audit.legacy:
        return
    if acked is None:
        audit.unchecked = f"no {ACKS_NAME}: the journal's length could not be checked"
        return
    if audit.rows < acked.lines:
        audit.acknowledged = acked.lines
        audit.damage.append(f"{acked.lines - audit.rows} acknowledged lines missing")
    elif acked.lines and _crc_at(read_only, acked.lines) != acked.crc:
        audit.damage.append("the lines do not match the record of acknowledged lines")
    if acked.problem is not None:
        if audit.damage:
            audit.damage.append(acked.problem)
        else:
            audit.record_damaged = acked.problem
        return
    if audit.rows <= acked.lines:
        return
    audit.acknowledged = acked.lines
    audit.unconfirmed = _beyond(read_only, acked.lines)
    for game_id, seq, _ in audit.unconfirmed.lines:  # out of what is trusted
        if game_id in audit.good and len(audit.good[game_id]) > seq:
            del audit.good[game_id][seq:]
    for game_id in audit.unconfirmed.games:
        audit.good.pop(game_id, None)
    audit.games = [game for game in audit.games if game[0] not in audit.unconfirmed.games]


def _beyond(read_only: Callable[[], sqlite3.Connection], count: int) -> Unconfirmed:
    """The lines after the first ``count`` (in game, seq order)."""
    ro = read_only()
    ro.text_factory = decode
    try:
        last = ro.execute("SELECT game_id, seq FROM lines ORDER BY game_id, seq "
                          "LIMIT 1 OFFSET ?", (count - 1,)).fetchone() if count else None
        rows = ro.execute("SELECT game_id, seq, text FROM lines ORDER BY game_id, seq "
                          "LIMIT -1 OFFSET ?", (count,)).fetchall()
    finally:
        ro.close()
    lines = [(int(game_id), int(seq), str(text)) for game_id, seq, text in rows]
    return Unconfirmed(None if last is None else (int(last[0]), int(last[1])), lines,
                       frozenset(game_id for game_id, seq, _ in lines if seq == 0))


def _crc_at(read_only: Callable[[], sqlite3.Connection], count: int) -> int | None:
    ro = read_only()
    try:
        row = ro.execute("SELECT crc FROM lines ORDER BY game_id, seq LIMIT 1 OFFSET ?",
                         (count - 1,)).fetchone()
    finally:
        ro.close()
    return None if row is None else int(row[0])


def _check_type(db: sqlite3.Connection, table: str, column: str) -> None:
    (wrong,) = db.execute(
        f"SELECT COUNT(*) FROM {table} WHERE typeof({column}) != 'text'").fetchone()
    if wrong:
        raise sqlite3.DatabaseError(f"{table}.{column}: {wrong} values that are not text")
