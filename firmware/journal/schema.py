"""The journal's tables, defined once, and a fresh journal made whole.

:data:`TABLES` is the SQL the store makes each table with; the audit checks
a journal's tables against it (:func:`table_forms`: the store's own form, and
those of journals written before lines and settings carried CRCs, as found
and as upgraded), so that a schema SQLite still accepts but that is not ours
(one flipped bit can turn ``id INTEGER PRIMARY KEY`` into a column that is no
longer the row's id) is never read as a journal.

:func:`make_journal` builds a fresh journal complete (WAL mode and every
table) as a temporary file beside it, flushes it, renames it into place and
flushes the directory: a power cut while the journal is first made leaves no
journal or a whole one, never a half-made file with a hot rollback journal.
A temporary left by a power cut holds nothing and is removed
(:func:`remove_unfinished`).  A hot rollback journal (``journal.sqlite3-journal``:
a write of SQLite's cut short, from a journal made before this was so, or a
restored backup switched to WAL) is found by :func:`hot_journal`.
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3
from pathlib import Path
from typing import Final

TABLES: Final = {
    "games": """CREATE TABLE games (
    id INTEGER PRIMARY KEY,
    created REAL NOT NULL,
    flow TEXT NOT NULL DEFAULT ''
)""",
    "lines": """CREATE TABLE lines (
    game_id INTEGER NOT NULL REFERENCES games(id),
    seq INTEGER NOT NULL,
    text TEXT NOT NULL,
    crc INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (game_id, seq)
) WITHOUT ROWID""",
    "settings": """CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    crc INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID""",
}
"""Each table as the store makes it (and as SQLite keeps it in ``sqlite_master``)."""

SCHEMA: Final = "".join(
    sql.replace("CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ", 1) + ";\n"
    for sql in TABLES.values())
"""The tables, made where missing (a journal from before a table existed)."""

CRC_COLUMN: Final = "crc INTEGER NOT NULL DEFAULT 0"
"""The column a journal from before the CRCs is given (``chain.add_crcs``)."""

LEGACY: Final = {
    "lines": """CREATE TABLE lines (
    game_id INTEGER NOT NULL REFERENCES games(id),
    seq INTEGER NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (game_id, seq)
) WITHOUT ROWID""",
    "settings": """CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID""",
}
"""The tables that were made without a ``crc`` column before lines carried CRCs."""

UNFINISHED: Final = ".new"
"""The suffix of a journal being made (``journal.sqlite3.new``)."""


@functools.cache
def table_forms() -> dict[str, frozenset[bytes]]:
    """Every form of each table's SQL a journal of ours can hold: the
    store's, and a legacy table's as made and as upgraded (SQLite rewrites
    the SQL of a table given a column: the form is SQLite's own)."""
    forms = {name: {sql} for name, sql in TABLES.items()}
    db = sqlite3.connect(":memory:")
    try:
        for name, sql in LEGACY.items():
            db.execute(sql)
            db.execute(f"ALTER TABLE {name} ADD COLUMN {CRC_COLUMN}")
            (upgraded,) = db.execute("SELECT sql FROM sqlite_master WHERE name=?",
                                     (name,)).fetchone()
            forms[name] |= {sql, upgraded}
    finally:
        db.close()
    return {name: frozenset(text.encode() for text in texts) for name, texts in forms.items()}


def same_to_sqlite(sql: bytes) -> bytes:
    """``sql`` as SQLite reads it: keywords and names in any case, any run
    of whitespace one space (a table whose SQL differs from ours only so is
    read as ours, though its bytes are damaged)."""
    return re.sub(rb"[ \t\n\v\f\r]+", b" ", sql.lower())


def _unfinished_files(path: Path) -> list[Path]:
    temp = Path(str(path) + UNFINISHED)
    return [Path(str(temp) + suffix) for suffix in ("", "-journal", "-wal", "-shm")]


def remove_unfinished(path: Path) -> None:
    """Remove a journal that was being made when the power went (it holds
    no game: a game is only ever written to a journal in place)."""
    for leftover in _unfinished_files(path):
        leftover.unlink(missing_ok=True)


def make_journal(path: Path) -> None:
    """Make a fresh, empty journal at ``path``, whole or not at all: built
    as ``path.new`` (no rollback journal, no flush: it is nobody's yet), set
    to WAL, flushed, renamed into place, the directory flushed."""
    from .files import fsync_dir

    remove_unfinished(path)
    temp = _unfinished_files(path)[0]
    db = sqlite3.connect(temp, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        db.executescript(f"BEGIN;\n{SCHEMA}COMMIT;")
        (mode,) = db.execute("PRAGMA journal_mode=WAL").fetchone()
        if mode != "wal":
            raise sqlite3.OperationalError(f"the journal could not be set to WAL ({mode})")
    finally:
        db.close()
    leftovers = [p for p in _unfinished_files(path)[1:] if p.exists() and p.stat().st_size]
    if leftovers:
        raise sqlite3.OperationalError(f"{leftovers[0].name} was left while making the journal")
    fd = os.open(temp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temp, path)
    fsync_dir(path.parent)
    remove_unfinished(path)


def hot_journal(path: Path) -> bool:
    """Whether SQLite's rollback journal beside ``path`` is hot: a write cut
    short, which SQLite rolls back on the first read of a read-write
    connection (a read-only one refuses to read the journal at all)."""
    rollback = Path(str(path) + "-journal")
    try:
        with open(rollback, "rb") as handle:
            first = handle.read(1)
    except FileNotFoundError:
        return False
    return first not in (b"", b"\0")  # empty, or its header zeroed: done with
