"""A damaged record of acknowledged lines alone (issue 21, defects 1 and 4).

``journal.acks`` says how many lines were acknowledged; lines beyond it are
left out at a start (never acknowledged).  So a record damaged by itself —
every line of the journal fine, its CRC chain whole — must never make lines
be left out: it is said as such ("the record of acknowledged lines was
damaged: every line checked and kept"), the damaged record kept aside, and
not as a damaged journal (which would set the whole journal aside).
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.crash_child import open_referee
from support.journal_kit import session

from firmware.journal import ACKS_NAME, JOURNAL_NAME, read_acks


@pytest.fixture
def quick_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory on a tmpfs when there is one (/dev/shm: a flush costs
    nothing, and each flip's start makes several), else ``tmp_path``."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    path = Path(tempfile.mkdtemp(prefix="euchre-record-", dir=shm))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _kept_journal(tmp_path: Path) -> tuple[Path, list[tuple[int, list[str]]], bytes]:
    """A journal of a killed referee (its -wal as a power cut leaves it) and
    its record, kept once for every flip."""
    source = tmp_path / "source"
    acknowledged = session(source, 8, random.Random(21), kill=True)
    return source, acknowledged, (source / ACKS_NAME).read_bytes()


def _copy(source: Path, target: Path) -> None:
    target.mkdir()
    for path in source.iterdir():
        if path.name.startswith(JOURNAL_NAME) or path.name == ACKS_NAME:
            (target / path.name).write_bytes(path.read_bytes())


def test_every_bit_of_the_record_flipped_keeps_every_line(quick_dir: Path) -> None:
    """Each bit of the records written, and of the first zeros after them,
    flipped in turn: every acknowledged line resumes, and a damaged record is
    said as such, never as a damaged journal."""
    source, acknowledged, record = _kept_journal(quick_dir)
    used = len(record.rstrip(b"\0")) + 16
    said = 0
    for bit in range(used * 8):
        state = quick_dir / f"flip-{bit}"
        _copy(source, state)
        data = bytearray(record)
        data[bit // 8] ^= 1 << (bit % 8)
        (state / ACKS_NAME).write_bytes(bytes(data))
        referee = open_referee(state)
        try:
            store = referee.store
            games = [(info.id, store.lines(info.id)) for info in store.games()]
            assert games[:len(acknowledged)] == acknowledged, bit
            assert store.damage is None and store.moved_aside is None, bit
            assert store.unconfirmed is None, bit  # nothing left out
            if store.record_damaged is not None:
                said += 1
                assert referee.notice is not None and referee.notice[0] == "Record damaged"
                (note,) = referee.notes
                assert note.startswith("the record of acknowledged lines was damaged (")
                assert "every line checked and kept" in note
                (copy,) = state.glob("journal.sqlite3.record-damaged-*.acks")
                assert copy.read_bytes() == bytes(data)  # kept aside as it was found
            else:
                assert referee.notice is None and referee.notes == [], bit
            fresh = read_acks(state / ACKS_NAME)  # a fresh record: the next start is plain
            assert fresh is not None and fresh.problem is None
            assert fresh.lines == sum(len(lines) for _, lines in games)
        finally:
            referee.store.close()
        shutil.rmtree(state)
    assert said == used * 8  # every flip is found: the records' CRCs and the zeros after them


@pytest.mark.parametrize("seed", range(4))
def test_a_record_cut_short_keeps_every_line(tmp_path: Path, seed: int) -> None:
    """The record file cut within its records (or emptied): its length is
    not one the store writes, so it is said damaged and every line kept,
    never taken for a record that lags behind lines never acknowledged."""
    source, acknowledged, record = _kept_journal(tmp_path)
    used = len(record.rstrip(b"\0"))
    cut = [0, 7, 16, random.Random(seed).randrange(17, used)][seed]
    state = tmp_path / "cut"
    _copy(source, state)
    (state / ACKS_NAME).write_bytes(record[:cut])
    referee = open_referee(state)
    try:
        store = referee.store
        games = [(info.id, store.lines(info.id)) for info in store.games()]
        assert games[:len(acknowledged)] == acknowledged
        assert store.damage is None and store.unconfirmed is None
        assert store.record_damaged is not None and "every line checked and kept" in (
            store.record_damaged)
        assert referee.notice is not None and referee.notice[0] == "Record damaged"
    finally:
        referee.store.close()
