"""The journal: every game the referee keeps, crash-safe, one job per module.

- ``store``: :class:`Store`, the SQLite journal (open, write, read);
- ``chain``: the CRC each line and setting carries, chained line to line;
- ``acks``: ``journal.acks``, the record of acknowledged lines;
- ``audit``: the read-only check of the files at open (damage, :class:`Damage`);
- ``aside``: damaged, unreadable and orphaned files set aside, never deleted;
- ``faults``: the errors, and a fault of the surroundings in words;
- ``lock``: one referee per state directory (``referee.lock``);
- ``games``: the games as games: the list, a game as a log, backups, a log
  cut into games;
- ``files``: the files' names and two small helpers for them.

Everything outside the package imports from here.
"""

from __future__ import annotations

from .acks import Acked, read_acks, reset_acks
from .audit import Damage
from .chain import chain_crc, setting_crc
from .faults import (
    NOTHING_KEPT,
    JournalError,
    JournalInUse,
    JournalTextError,
    JournalWriteError,
    fault_words,
)
from .files import ACKS_NAME, JOURNAL_FILES, JOURNAL_NAME, LOCK_NAME
from .games import GameInfo, games_of
from .store import Store

__all__ = [
    "ACKS_NAME",
    "JOURNAL_FILES",
    "JOURNAL_NAME",
    "LOCK_NAME",
    "NOTHING_KEPT",
    "Acked",
    "Damage",
    "GameInfo",
    "JournalError",
    "JournalInUse",
    "JournalTextError",
    "JournalWriteError",
    "Store",
    "chain_crc",
    "fault_words",
    "games_of",
    "read_acks",
    "reset_acks",
    "setting_crc",
]
