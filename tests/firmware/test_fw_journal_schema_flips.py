"""One flipped bit in the schema page never crashes a start nor starts a new
game silently (issue 21, defect 3).

Page 1 of the journal's main file holds SQLite's header and
``sqlite_master``, the tables' SQL.  Some flips turned ``id INTEGER PRIMARY
KEY`` into SQL that SQLite still accepts (a column that is no longer the
row's id: every game's id read as NULL, and the box started a new game over
the kept ones, silently); others made the check at the start raise
``UnicodeDecodeError`` or ``TypeError`` (a crash, the journal not moved
aside).  Now the check compares each table's SQL with the store's own
(``firmware.journal.schema``), and any exception from it means the journal
cannot be read: moved aside and said.

The test flips, one at a time, every bit of page 1 that SQLite reads (the
header, the b-tree page header and cell pointers, every cell: the unused
middle of the page is zeros SQLite never reads; a sample of it is flipped
too) of a small journal, after a checkpoint (everything in the main file),
and starts a referee on each: it resumes every acknowledged line with
nothing to say, or says what it found with the files kept byte for byte
(``support.journal_kit.judge``); never a crash, never silently wrong.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.journal_kit import CRASHED, INTACT, REPORTED, SILENTLY_WRONG, judge, session

from firmware.journal import ACKS_NAME, JOURNAL_NAME

PAGE = 4096


@pytest.fixture
def quick_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory on a tmpfs when there is one (/dev/shm: a start's
    flushes cost nothing), else ``tmp_path``."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    path = Path(tempfile.mkdtemp(prefix="euchre-schema-", dir=shm))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def read_bytes_of_page_one(page: bytes) -> list[int]:
    """The offsets of page 1 SQLite reads: the 100-byte header, the b-tree
    page header (8 bytes: a leaf), the cell pointer array, the cell content
    area to the end of the page."""
    assert page[100] == 13, "sqlite_master fits in one leaf page"
    cells = int.from_bytes(page[103:105], "big")
    content = int.from_bytes(page[105:107], "big")
    assert not page[108 + 2 * cells:content].strip(b"\0")  # the middle: zeros
    return [*range(108 + 2 * cells), *range(content, PAGE)]


def test_every_bit_of_the_schema_page_flipped(quick_dir: Path) -> None:
    source = quick_dir / "source"
    acknowledged = session(source, 12, random.Random(3), kill=False)  # checkpointed
    assert not (source / (JOURNAL_NAME + "-wal")).exists()
    main = (source / JOURNAL_NAME).read_bytes()
    record = (source / ACKS_NAME).read_bytes()
    page = main[:PAGE]
    offsets = read_bytes_of_page_one(page)
    cells = int.from_bytes(page[103:105], "big")
    middle = range(108 + 2 * cells, int.from_bytes(page[105:107], "big"))
    sample = random.Random(7).sample(list(middle), min(64, len(middle)))
    verdicts: Counter[str] = Counter()
    wrong = []
    for offset in [*offsets, *sample]:
        for bit in range(8):
            state = quick_dir / "flip"
            state.mkdir()
            data = bytearray(main)
            data[offset] ^= 1 << bit
            (state / JOURNAL_NAME).write_bytes(bytes(data))
            (state / ACKS_NAME).write_bytes(record)
            verdict = judge(state, acknowledged, {"": bytes(data)})
            verdicts[verdict.kind] += 1
            if verdict.kind not in (INTACT, REPORTED) or (
                    offset in sample and verdict.kind != INTACT):
                wrong.append((offset, bit, verdict))
            shutil.rmtree(state)
    print(f"{8 * len(offsets)} flips read by SQLite, {8 * len(sample)} of the unused middle: "
          f"{dict(verdicts)}")
    assert wrong == [], wrong[:10]
    assert verdicts[CRASHED] == verdicts[SILENTLY_WRONG] == 0
    assert verdicts[REPORTED] > 0 and verdicts[INTACT] > 0
