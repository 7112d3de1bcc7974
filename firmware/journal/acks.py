"""The record of acknowledged lines, ``journal.acks``: a second, independent
witness outside SQLite.

It knows how many lines were acknowledged and the chain's CRC at the last of
them: a small preallocated file of 16-byte records, each written and fsynced
after its commit and before the acknowledgement.  A journal shorter than that
(a damaged -wal that SQLite silently stops reading at, a truncated file) or
whose chain does not end on that CRC is found at open (see ``audit``); lines
beyond it were never acknowledged (a commit refused, or the power gone before
its record was kept), and are left out.

A record is 16 bytes at a multiple of 16 (never across a sector): one that
does not check is damage, never a torn write.
"""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path
from typing import NamedTuple

from .files import ACKS_NAME, fsync_dir

_RECORD = struct.Struct("<QII")
"""count of lines (u64), the chain's CRC at the last of them (u32), the
record's own CRC-32 over those 12 bytes (u32): 16 bytes."""
_ACKS_CHUNK = 4096
"""Bytes the record file is extended by (zeros), before a commit that needs room."""


class Acked(NamedTuple):
    """What ``journal.acks`` says: ``lines`` acknowledged, the last with chain
    CRC ``crc``; ``problem`` if the file itself is damaged."""

    lines: int
    crc: int
    problem: str | None = None


def read_acks(path: Path) -> Acked | None:
    """The last good record in ``path`` (None: no such file).

    The file as the store writes it: whole chunks of :data:`_ACKS_CHUNK`
    bytes (one torn while it was being added holds zeros only), records
    from the first byte on, each checking, the counts never going down, only
    zeros after the last.  Anything else is damage (``problem``), with the
    last good record before it: the file was cut or altered, and the lines
    beyond it cannot be told from lines never acknowledged."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if data[:_RECORD.size].strip(b"\0") == b"":
        return Acked(0, 0, f"{ACKS_NAME} holds no record")
    torn = len(data) % _ACKS_CHUNK
    if torn and data[-torn:].strip(b"\0"):
        return _damaged(data[:len(data) - len(data) % _RECORD.size], len(data))
    return _damaged(data, None)


def _damaged(data: bytes, cut: int | None) -> Acked:
    """The last good record of ``data``, and its damage (``cut``: the file's
    length, which is not the store's)."""
    best = Acked(0, 0)
    ended = False
    for offset in range(0, len(data) - len(data) % _RECORD.size, _RECORD.size):
        chunk = data[offset:offset + _RECORD.size]
        if chunk == bytes(_RECORD.size):
            ended = True
            continue
        count, crc, check = _RECORD.unpack(chunk)
        if check != zlib.crc32(chunk[:12]) or ended or count < best.lines:
            return Acked(best.lines, best.crc, f"{ACKS_NAME} damaged at byte {offset}")
        best = Acked(count, crc)
    if cut is not None:
        return Acked(best.lines, best.crc, f"{ACKS_NAME} cut short ({cut} bytes)")
    return best


def reset_acks(path: Path, count: int, crc: int) -> None:
    """Write ``path`` afresh saying ``count`` lines were acknowledged, the
    last with chain CRC ``crc`` (tests and repair tools; the Store keeps its own)."""
    AckFile(path, count, crc).close()


class AckFile:
    """``journal.acks`` open for writing: records go into preallocated zeros
    (so a full card cannot fail one after its commit), fsynced each."""

    def __init__(self, path: Path, count: int, crc: int) -> None:
        """Start it afresh with one record (write a temporary, fsync, rename)."""
        self.path = path
        temp = path.with_name(path.name + ".new")
        with open(temp, "wb") as handle:
            handle.write(self._pack(count, crc) + bytes(_ACKS_CHUNK - _RECORD.size))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
        fsync_dir(path.parent)
        self.fd = os.open(path, os.O_RDWR)
        self.next = _RECORD.size
        self.size = _ACKS_CHUNK
        self.last = (count, crc)
        """The last record made durable: a commit that added no line (the flow's
        position) records and flushes nothing (one flush a press less)."""

    @staticmethod
    def _pack(count: int, crc: int) -> bytes:
        head = struct.pack("<QI", count, crc)
        return head + struct.pack("<I", zlib.crc32(head))

    def reserve(self) -> None:
        """Room for the next record, made before the commit (OSError: no room)."""
        if self.next + _RECORD.size <= self.size:
            return
        os.pwrite(self.fd, bytes(_ACKS_CHUNK), self.size)
        os.fsync(self.fd)
        self.size += _ACKS_CHUNK

    def record(self, count: int, crc: int) -> None:
        """Make ``count`` lines ending in ``crc`` the acknowledged ones, durably
        (nothing when that is already the last record).  OSError: they are
        not (the store refuses their entry)."""
        if (count, crc) == self.last:
            return
        try:
            os.pwrite(self.fd, self._pack(count, crc), self.next)
            os.fdatasync(self.fd)
        except BaseException:
            # Not acknowledged (a failed flush, or anything else raised on the
            # way): the record is taken back where it can be (a restart reads
            # the page cache, which the failed flush kept), and the next
            # record goes in its place, so none is left between.
            try:
                os.pwrite(self.fd, bytes(_RECORD.size), self.next)
            except OSError:
                pass
            raise
        self.next += _RECORD.size
        self.last = (count, crc)

    def close(self) -> None:
        os.close(self.fd)
