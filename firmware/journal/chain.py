"""The checksums every stored line and setting carries.

Each line's CRC-32 is chained to the line before it (all games' lines in
``(game_id, seq)`` order; etcd's write-ahead log is the model), so an altered
or missing line breaks the chain; a setting's CRC is its own.
"""

from __future__ import annotations

import sqlite3
import zlib

from .schema import CRC_COLUMN


def chain_crc(previous: int, game_id: int, seq: int, text: bytes) -> int:
    """The CRC-32 a stored line carries: its game, number and UTF-8 text,
    chained to the CRC of the line before it (0 before the first)."""
    return zlib.crc32(b"%d %d " % (game_id, seq) + text, previous)


def setting_crc(key: str, value: bytes) -> int:
    """The CRC-32 a kept setting carries (its own, not chained)."""
    return zlib.crc32(key.encode("utf-8") + b"=" + value)


def add_crcs(tx: sqlite3.Connection) -> None:
    """A journal written before lines carried CRCs: add them (trusted as is),
    inside the caller's transaction ``tx``."""
    for table in ("lines", "settings"):
        names = {row[1] for row in tx.execute(f"PRAGMA table_info({table})")}
        if "crc" not in names:
            tx.execute(f"ALTER TABLE {table} ADD COLUMN {CRC_COLUMN}")
    previous = 0
    rows = tx.execute("SELECT game_id, seq, CAST(text AS BLOB) FROM lines "
                      "ORDER BY game_id, seq").fetchall()
    for game_id, seq, text in rows:
        previous = chain_crc(previous, game_id, seq, bytes(text))
        tx.execute("UPDATE lines SET crc=? WHERE game_id=? AND seq=?",
                   (previous, game_id, seq))
    for key, value in tx.execute(
            "SELECT key, CAST(value AS BLOB) FROM settings").fetchall():
        tx.execute("UPDATE settings SET crc=? WHERE key=?",
                   (setting_crc(key, bytes(value)), key))
