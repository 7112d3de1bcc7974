"""Salvage: every line of a damaged journal whose CRC chain still holds.

SQLite reads a -wal only up to the first frame whose checksum fails (the
checksums are cumulative, so one flipped bit in frame k hides every later
frame), and it refuses a main file whose b-tree is damaged, although the lines
beyond the damage are there.  This module reads the kept-aside files itself,
read-only:

- the -wal's frames (SQLite's format: a 32-byte header, frames of a 24-byte
  header and a page; cumulative checksums, salts), each checked on its own
  against the stored checksum of the frame before it, so that a damaged frame
  is known and the frames after it are still used.  Frames of an older WAL
  generation (other salts) are never used; frames after the last sound commit
  frame (a transaction not known to be committed) only for lines the record
  of acknowledged lines vouches for;
- SQLite first: the main file with every committed frame applied (the damaged
  ones too: what SQLite would read had the checksums been recomputed) is
  opened in memory (``deserialize``) and its tables read;
- then, if that left a gap, every page image (the main file's pages and every
  frame's page, older versions of a page included) cell by cell, in SQLite's
  record format: a page whose cells, free blocks and fragments do not add up
  is also read at every offset (a damaged pointer or page header);
- each line is kept only where its CRC holds against the line before it
  (``chain``), walking the lines in order from CRC 0: a damaged copy of a line
  is passed over for a sound one (an older page version), a damaged CRC field
  is mended when the next line confirms the right CRC, a cell damaged by one
  flipped bit is mended when flipping it back makes its CRC hold.  A game
  keeps its lines up to its first line that cannot be recovered (a game is
  replayed from its start); the games after it are kept.

Never a line that was not written: a line is kept only with a CRC-32 that
holds, chained from the first line.  :func:`salvage_into` gives the store's
:class:`~.audit.Audit` what was salvaged, for the fresh journal.
"""

from __future__ import annotations

import os
import sqlite3
import struct
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from .acks import Acked, read_acks
from .audit import Audit
from .chain import chain_crc, setting_crc
from .files import decode

_HEADER_STRING = b"SQLite format 3\0"
_WAL_MAGIC = 0x377F0682
"""The -wal's magic number; with its last bit set, checksums of big-endian words."""
_WAL_HEADER = 32
_FRAME_HEADER = 24
_PAGE_SIZES = tuple(1 << n for n in range(9, 17))
_MAX_PAGES = 1 << 20
"""No image is built larger than this (a damaged size field)."""
_MEND_BUDGET = 100_000
"""Single-bit trials at most, over all suspect cells: bounded work at a start."""
_MEND_SPAN = 600
_NEWEST = 1 << 40
"""The age of what SQLite read of the latest committed state: newer than any image."""
"""Bytes of a suspect cell whose bits are tried (a line is far shorter)."""

Buffer = bytes | memoryview
"""A page image: the main file's pages are views into it, not copies."""
Value = int | float | bytes | None
Key = tuple[int, int]
"""(game_id, seq): a line's place in the chain."""


class Salvaged(NamedTuple):
    """What :func:`salvage` recovered, ready for a fresh journal."""

    games: list[tuple[int, float, str]]
    """(id, created, flow) of each game kept."""
    good: dict[int, list[bytes]]
    """Each game's lines: a prefix of what was written, the chain holding."""
    settings: list[tuple[str, str]]
    found: int
    """Lines known to have been there: as the record of acknowledged lines
    says or, if more, as many as were read."""
    stranded: int
    """Lines after a game's first lost line whose CRC holds against the line
    before them: not in the fresh journal (a game replays from its start),
    left in the kept files."""
    notes: list[str]
    """How, in words: damaged frames read past, lines mended, lines lost."""

    @property
    def recovered(self) -> int:
        return sum(len(lines) for lines in self.good.values())

    def sentence(self) -> str:
        how = f" ({'; '.join(self.notes)})" if self.notes else ""
        return f"recovered {self.recovered} of {self.found} lines{how}"


# --- the -wal ------------------------------------------------------------------------


def wal_checksum(data: bytes, s0: int, s1: int, big_endian: bool) -> tuple[int, int]:
    """SQLite's WAL checksum of ``data`` (a multiple of 8 bytes), from ``(s0, s1)``."""
    words = struct.unpack(f"{'>' if big_endian else '<'}{len(data) // 4}I", data)
    pairs = iter(words)
    for a, b in zip(pairs, pairs):
        s0 = (s0 + a + s1) & 0xFFFFFFFF
        s1 = (s1 + b + s0) & 0xFFFFFFFF
    return s0, s1


class Frame(NamedTuple):
    number: int
    """1-based, in the -wal."""
    page: int
    commit: int
    """The database's size in pages after this commit; 0: not a commit frame."""
    data: bytes
    sound: bool
    """Its checksum holds against the frame before it (or only its checksum
    field was damaged: the next frame's checksum confirms its content)."""


@dataclass
class Wal:
    """The current generation of a -wal's frames, each checked on its own."""

    page_size: int
    frames: list[Frame] = field(default_factory=list)
    committed: int = 0
    """Frames up to the last sound commit frame: committed transactions."""
    sqlite_reads: int = 0
    """Frames SQLite's own recovery reads (it stops at the first bad one)."""
    header_sound: bool = True

    @property
    def damaged(self) -> list[int]:
        return [frame.number for frame in self.frames if not frame.sound]


def read_wal(data: bytes, page_size: int | None) -> Wal | None:
    """The -wal ``data`` as frames (None: too short for a header, or no page
    size); ``page_size``: the main file's, used when the -wal's own is damaged."""
    if len(data) < _WAL_HEADER:
        return None
    magic, _version, size, _seq, salt1, salt2, c1, c2 = struct.unpack(
        ">8I", data[:_WAL_HEADER])
    orders = [bool(magic & 1)] if magic >> 1 == _WAL_MAGIC >> 1 else [False, True]
    header_sound = False
    big = orders[0]
    for order in orders:
        if wal_checksum(data[:24], 0, 0, order) == (c1, c2):
            header_sound, big = True, order
            break
    if size not in _PAGE_SIZES or not header_sound:
        size = page_size if page_size in _PAGE_SIZES else size
    if size not in _PAGE_SIZES:
        return None
    step = _FRAME_HEADER + size
    count = (len(data) - _WAL_HEADER) // step  # (a torn last frame is left out)
    raw = [data[_WAL_HEADER + i * step:_WAL_HEADER + (i + 1) * step] for i in range(count)]
    wal = Wal(size, header_sound=header_sound)
    if not raw:
        return wal
    salts = (salt1, salt2) if header_sound else struct.unpack(">II", raw[0][8:16])
    # The generation ends with its last frame carrying its salts; after it,
    # frames of an older generation (the -wal restarted after a checkpoint).
    end = 0
    for i, frame in enumerate(raw):
        if struct.unpack(">II", frame[8:16]) == salts:
            end = i + 1
    # A frame after it whose checksum continues the chain is of this
    # generation too, its salts damaged (the checksums do not cover them).
    while end < len(raw):
        seed = struct.unpack(">II", raw[end - 1][16:24]) if end else (c1, c2)
        body = raw[end][:8] + raw[end][_FRAME_HEADER:]
        if wal_checksum(body, seed[0], seed[1], big) != struct.unpack(">II", raw[end][16:24]):
            break
        end += 1
    seeds: list[tuple[tuple[int, int], int]] = [((c1, c2), 0)]
    if not header_sound:
        seeds.append((wal_checksum(data[:24], 0, 0, big), 0))
    sound = [False] * end
    prefix = True
    for i in range(end):
        frame = raw[i]
        stored = struct.unpack(">II", frame[16:24])
        body = frame[:8] + frame[_FRAME_HEADER:]
        computed: tuple[int, int] | None = None
        for seed, source in seeds:
            check = wal_checksum(body, seed[0], seed[1], big)
            if computed is None:
                computed = check
            if check == stored:
                sound[i] = True
                if source:
                    sound[source - 1] = True  # only its checksum field was damaged
                break
        prefix = prefix and sound[i] and struct.unpack(">II", frame[8:16]) == salts
        if prefix:
            wal.sqlite_reads = i + 1
        assert computed is not None
        seeds = [(stored, 0)] if sound[i] else [(stored, 0), (computed, i + 1)]
    if not header_sound:
        wal.sqlite_reads = 0  # SQLite ignores a -wal whose header is bad
    for i in range(end):
        page, commit = struct.unpack(">II", raw[i][:8])
        wal.frames.append(Frame(i + 1, page, commit, raw[i][_FRAME_HEADER:], sound[i]))
        if sound[i] and commit:
            wal.committed = i + 1
    return wal


# --- SQLite's record format ----------------------------------------------------------


class _Text(bytes):
    """A record's text value (its bytes), told apart from a blob."""


def _varint(buf: Buffer, at: int) -> tuple[int, int]:
    """SQLite's varint at ``at``: (value, the offset after it); IndexError past the end."""
    value = 0
    for n in range(8):
        byte = buf[at + n]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + n + 1
    return (value << 8) | buf[at + 8], at + 9


_INT_SIZES = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


def parse_record(payload: Buffer) -> list[Value] | None:
    """A record's values (text as :class:`_Text`), or None when ``payload`` is
    not exactly one record."""
    try:
        size, at = _varint(payload, 0)
        if size < 1 or size > len(payload):
            return None
        types = []
        while at < size:
            kind, at = _varint(payload, at)
            types.append(kind)
        if at != size:
            return None
        values: list[Value] = []
        for kind in types:
            if kind == 0:
                values.append(None)
            elif kind in _INT_SIZES:
                width = _INT_SIZES[kind]
                if at + width > len(payload):
                    return None
                values.append(int.from_bytes(payload[at:at + width], "big", signed=True))
                at += width
            elif kind == 7:
                if at + 8 > len(payload):
                    return None
                values.append(struct.unpack(">d", payload[at:at + 8])[0])
                at += 8
            elif kind in (8, 9):
                values.append(kind - 8)
            elif kind >= 12:
                width = (kind - 12) // 2
                if at + width > len(payload):
                    return None
                chunk = payload[at:at + width]
                values.append(_Text(chunk) if kind % 2 else bytes(chunk))
                at += width
            else:
                return None
        return values if at == len(payload) else None
    except IndexError:
        return None


def _line(values: list[Value] | None) -> tuple[Key, bytes, int] | None:
    """A ``lines`` row (WITHOUT ROWID: the key first): (game_id, seq), text, crc."""
    if values is None or len(values) != 4:
        return None
    game_id, seq, text, crc = values
    if (type(game_id) is not int or type(seq) is not int or not isinstance(text, _Text)
            or type(crc) is not int or game_id < 1 or seq < 0 or not 0 <= crc < 1 << 32):
        return None
    return (game_id, seq), bytes(text), crc


def _setting(values: list[Value] | None) -> tuple[bytes, bytes, int] | None:
    """A ``settings`` row (WITHOUT ROWID): key, value, crc."""
    if values is None or len(values) != 3:
        return None
    key, value, crc = values
    if not isinstance(key, _Text) or not isinstance(value, _Text) or type(crc) is not int:
        return None
    return bytes(key), bytes(value), crc


def _game(rowid: int, values: list[Value] | None) -> tuple[int, float, bytes] | None:
    """A ``games`` row: id (the rowid; NULL in the record), created, flow."""
    if values is None or len(values) != 3 or values[0] is not None or rowid < 1:
        return None
    _, created, flow = values
    if not isinstance(created, int | float) or not isinstance(flow, _Text):
        return None
    return rowid, float(created), bytes(flow)


# --- b-tree pages --------------------------------------------------------------------


@dataclass
class _Page:
    """What one page image holds, read through its cell pointers."""

    index: list[tuple[int, bool, Buffer]] = field(default_factory=list)
    """Index b-tree cells: (offset, starts with a child pointer, payload)."""
    table: list[tuple[int, Buffer]] = field(default_factory=list)
    """Table leaf cells: (rowid, payload)."""
    unread: list[tuple[int, bool]] = field(default_factory=list)
    """Index cells whose payload could not be taken: (offset, child)."""
    broken: bool = False
    """Its cells, free blocks and fragments do not add up to the page."""


class Reader:
    """Reads the page images of one database (its page and usable sizes)."""

    def __init__(self, page_size: int, reserved: int,
                 pages: Callable[[int], Buffer | None]) -> None:
        self.usable = page_size - reserved
        self.pages = pages
        """A page by its number, for overflow chains (None: there is none)."""
        self.index_max = (self.usable - 12) * 64 // 255 - 23
        self.table_max = self.usable - 35
        self.min_local = (self.usable - 12) * 32 // 255 - 23

    def _local(self, size: int, index: bool) -> int:
        most = self.index_max if index else self.table_max
        if size <= most:
            return size
        local = self.min_local + (size - self.min_local) % (self.usable - 4)
        return local if local <= most else self.min_local

    def payload(self, page: Buffer, at: int, index: bool) -> tuple[Buffer, int] | None:
        """The payload of the cell whose size varint is at ``at`` (overflow
        pages followed) and the offset after the cell; None if unreadable."""
        try:
            size, start = _varint(page, at)
            if not index:
                _, start = _varint(page, start)
            local = self._local(size, index)
            end = start + local
            if end > len(page) or size > 1 << 24:
                return None
            data = page[start:end]
            if local == size:
                return data, end
            if end + 4 > len(page):
                return None
            (following,) = struct.unpack(">I", page[end:end + 4])
            parts = [bytes(data)]
            got = local
            seen = set()
            while got < size:
                if not following or following in seen:
                    return None
                seen.add(following)
                overflow = self.pages(following)
                if overflow is None or len(overflow) < 4:
                    return None
                (following,) = struct.unpack(">I", overflow[:4])
                part = overflow[4:self.usable][:size - got]
                parts.append(bytes(part))
                got += len(part)
            return b"".join(parts), end + 4
        except IndexError:
            return None

    def read(self, page: Buffer, first: bool) -> _Page:
        """The cells of a b-tree page image (``first``: page 1, after the file header)."""
        out = _Page()
        head = 100 if first else 0
        if len(page) < head + 12:
            out.broken = True
            return out
        kind = page[head]
        if kind not in (2, 5, 10, 13):
            out.broken = any(page)  # a zeroed page is no b-tree page
            return out
        interior = kind in (2, 5)
        index = kind in (2, 10)
        freeblock, count, content, fragments = struct.unpack(">HHHB", page[head + 1:head + 8])
        content = content or 65536
        pointers = head + (12 if interior else 8)
        room = min(content, self.usable)
        if pointers + 2 * count > room:
            out.broken = True
            count = max(0, (room - pointers) // 2)
        used = fragments
        spans = []
        for n in range(count):
            (at,) = struct.unpack(">H", page[pointers + 2 * n:pointers + 2 * n + 2])
            if not content <= at < self.usable:
                out.broken = True
                continue
            if kind == 5:  # an interior table cell: a child and a rowid, no payload
                try:
                    used += _varint(page, at + 4)[1] - at
                except IndexError:
                    out.broken = True
                continue
            child = 4 if interior else 0
            read = self.payload(page, at + child, index)
            if read is None:
                out.broken = True
                if index:
                    out.unread.append((at, interior))
                continue
            payload, end = read
            used += end - at
            spans.append((at, end))
            if index:
                out.index.append((at, interior, payload))
            else:
                out.table.append((_varint(page, _varint(page, at)[1])[0], payload))
        hops = 0
        while freeblock and hops < 1000:
            if not content <= freeblock <= self.usable - 4:
                out.broken = True
                break
            freeblock, size = struct.unpack(">HH", page[freeblock:freeblock + 4])
            used += size
            hops += 1
        spans.sort()
        if used != self.usable - content or any(
                later[0] < earlier[1] for earlier, later in zip(spans, spans[1:])):
            out.broken = True  # (cells that overlap: a pointer moved onto another cell)
        return out

    def carve(self, page: Buffer) -> Iterator[tuple[int, Buffer]]:
        """(offset, payload) of every index cell that parses as a record, at
        any offset: for a page whose pointers or header are damaged."""
        for at in range(len(page) - 2):
            read = self.payload(page, at, True)
            if read is not None and read[0] and parse_record(read[0]) is not None:
                yield at, read[0]


# --- every copy of every row ---------------------------------------------------------


class _Cell(NamedTuple):
    """Where an index cell was read: its page image, offset, whether it starts
    with a child pointer, whether the image is committed."""

    page: Buffer
    at: int
    child: bool
    committed: bool


@dataclass
class _Pool:
    """Every copy of every row read, from every page image (older ones too)."""

    lines: dict[Key, dict[tuple[bytes, int], tuple[bool, int]]] = field(default_factory=dict)
    """A line's copies: (text, crc) -> (committed, age): committed False when
    read only from frames after the last sound commit; age, of the newest
    image holding it (a line taken back, a refused entry, is in older ones)."""
    settings: dict[bytes, list[tuple[int, bytes, int]]] = field(default_factory=dict)
    """key -> copies (age, value, crc); a later image is newer."""
    games: dict[int, tuple[int, float, bytes]] = field(default_factory=dict)
    """id -> (age, created, flow): the newest copy."""
    suspects: list[_Cell] = field(default_factory=list)
    """Index cells that hold no sound row: tried for one flipped bit."""

    def add_line(self, key: Key, text: bytes, crc: int, committed: bool, age: int) -> None:
        copies = self.lines.setdefault(key, {})
        was, newest = copies.get((text, crc), (False, -1))
        copies[(text, crc)] = (was or committed, max(newest, age))

    def add(self, payload: Buffer, age: int, committed: bool
            ) -> tuple[Key, bytes, int] | bool:
        """A row of ``lines`` (returned) or ``settings`` (True) from an index
        cell's payload; False: neither."""
        values = parse_record(payload)
        line = _line(values)
        if line is not None:
            self.add_line(*line, committed, age)
            return line
        setting = _setting(values)
        if setting is None:
            return False
        if committed:
            key, value, crc = setting
            self.settings.setdefault(key, []).append((age, value, crc))
        return True


@dataclass
class _Found:
    """What SQLite read of one database image, and whether it read it all."""

    lines: list[tuple[Key, bytes, int]] = field(default_factory=list)
    games: list[tuple[int, float, bytes]] = field(default_factory=list)
    settings: list[tuple[bytes, bytes, int]] = field(default_factory=list)
    complete: bool = True


def _sqlite_reads(image: bytearray | None, path: Path | None) -> _Found:
    """The tables of a database image (None: the file ``path`` as it is),
    read by SQLite, as far as it can."""
    found = _Found()
    if image is not None and not image.startswith(_HEADER_STRING):
        found.complete = False
        return found
    try:
        if image is None:
            assert path is not None
            # Read-only and immutable: SQLite neither writes nor looks at a -wal.
            db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro&immutable=1", uri=True)
        else:
            db = sqlite3.connect(":memory:")
    except sqlite3.Error:
        found.complete = False
        return found
    try:
        db.text_factory = bytes
        if image is not None:
            image[18:20] = b"\x01\x01"  # a rollback-journal database: no -wal in memory
            db.deserialize(bytes(image))
        db.execute("PRAGMA query_only=1")
        for query, keep in (
                ("SELECT game_id, seq, text, crc FROM lines ORDER BY game_id, seq", _keep_line),
                ("SELECT id, created, flow FROM games ORDER BY id", _keep_game),
                ("SELECT key, value, crc FROM settings", _keep_setting)):
            try:
                for row in db.execute(query):
                    keep(found, row)
            except (sqlite3.Error, ValueError):  # (a damaged name: UnicodeDecodeError)
                found.complete = False
    except (sqlite3.Error, ValueError, OverflowError, MemoryError):
        found.complete = False
    finally:
        db.close()
    return found


def _keep_line(found: _Found, row: tuple[Value, ...]) -> None:
    game_id, seq, text, crc = row
    if (type(game_id) is int and type(seq) is int and isinstance(text, bytes)
            and type(crc) is int and 0 <= crc < 1 << 32):
        found.lines.append(((game_id, seq), text, crc))
    else:
        found.complete = False


def _keep_game(found: _Found, row: tuple[Value, ...]) -> None:
    game_id, created, flow = row
    if type(game_id) is int and isinstance(created, int | float) and isinstance(flow, bytes):
        found.games.append((game_id, float(created), flow))


def _keep_setting(found: _Found, row: tuple[Value, ...]) -> None:
    key, value, crc = row
    if isinstance(key, bytes) and isinstance(value, bytes) and type(crc) is int:
        found.settings.append((key, value, crc))


def _carve_near(reader: Reader, images: dict[Buffer, tuple[int, bool, bool]], pool: _Pool,
                near: set[Key]) -> bool:
    """Read at every offset the pages (not read so already) holding the lines
    ``near`` where the chain broke: a cell lost there with no sign on its page
    (a pointer moved onto a cell of the same size).  True if any was."""
    carved = 0
    for data, (age, committed, first) in images.items():
        page = reader.read(data, first)
        if page.broken or not any(
                (line := _line(parse_record(payload))) is not None and line[0] in near
                for _, _, payload in page.index):
            continue
        for _, payload in reader.carve(data):
            pool.add(payload, age, committed)
        carved += 1
        if carved >= 64:
            break
    return carved > 0


def _scan(reader: Reader, images: dict[Buffer, tuple[int, bool, bool]], pool: _Pool) -> None:
    """Read every page image (bytes -> (age, committed, is page 1)) into ``pool``."""
    where: dict[tuple[Key, bytes, int], _Cell] = {}
    for data, (age, committed, first) in images.items():
        page = reader.read(data, first)
        carved = reader.carve(data) if page.broken else iter(())
        cells = [*page.index, *((at, False, payload) for at, payload in carved)]
        for number, (at, child, payload) in enumerate(cells):
            added = pool.add(payload, age, committed)
            cell = _Cell(data, at, child, committed)
            if added is False and number < len(page.index):  # (not every carved record)
                pool.suspects.append(cell)
            elif not isinstance(added, bool):
                where.setdefault(added, cell)
        pool.suspects += [_Cell(data, at, child, committed) for at, child in page.unread]
        for rowid, payload in page.table:
            game = _game(rowid, parse_record(payload))
            if game is not None and committed and pool.games.get(game[0], (-1,))[0] <= age:
                pool.games[game[0]] = (age, game[1], game[2])
    # Copies of lines whose CRC holds against no copy of the line before them
    # are suspects too.
    previous: set[int] = {0}
    for key in sorted(pool.lines):
        copies = pool.lines[key]
        before = previous if key[1] == 0 else {
            crc for _, crc in pool.lines.get((key[0], key[1] - 1), {})}
        for text, crc in copies:
            place = where.get((key, text, crc))
            if place is not None and not any(
                    chain_crc(base, key[0], key[1], text) == crc for base in before):
                pool.suspects.append(place)
        previous = {crc for _, crc in copies}


# --- the walk along the chain --------------------------------------------------------


class _Walk:
    """The lines in order from CRC 0, each kept where its CRC holds."""

    def __init__(self, pool: _Pool, reader: Reader, acked: Acked | None,
                 end: Key | None = None) -> None:
        self.pool = pool
        self.end = end
        """The last line of the latest committed state, when SQLite read it
        whole: with no sound record, no line after it is taken (lines after
        it in older page images were taken back)."""
        self.reader = reader
        self.acked = acked
        self.good: dict[int, list[bytes]] = {}
        self.count = 0
        self.mended = 0
        self.keys = sorted(pool.lines)
        self.starts = [game_id for game_id, seq in self.keys if seq == 0]
        """Games with a first line read (a damaged key may name a game that never was)."""
        self.ids = sorted({game_id for game_id, _ in self.keys})
        self._mends: list[tuple[bytes, int, bool]] | None = None
        self.accepted: set[tuple[bytes, int]] = set()
        self.beyond = 0
        """Lines whose CRC holds after the last the record counts: left out."""
        self.left_out: set[int] = set()
        """Their CRCs."""
        self.ends_on_record = True
        self.acked_crc = acked.crc if acked is not None else 0

    def _inside(self, key: Key) -> bool:
        sound = self.acked is not None and self.acked.problem is None
        return sound or self.end is None or key <= self.end

    def _allowed(self, committed: bool) -> bool:
        """A line read only after the last commit: kept if the record vouches for it."""
        return committed or (self.acked is not None and self.count < self.acked.lines)

    def _options(self, last: Key | None) -> list[Key]:
        """Where the line after ``last`` may be: the same game's next line, or
        the first line of one of the next two games read."""
        if last is None:
            if not self.keys:
                return []
            return list(dict.fromkeys([(self.keys[0][0], 0)]
                                      + [(game_id, 0) for game_id in self.starts[:2]]))
        at = bisect_right(self.starts, last[0])
        seen = bisect_right(self.ids, last[0])
        following = sorted(set(self.starts[at:at + 2] + self.ids[seen:seen + 2]))
        return [(last[0], last[1] + 1)] + [(game_id, 0) for game_id in following]

    def _holds(self, previous: int, options: list[Key], *, first: bool = False
               ) -> tuple[Key, bytes, int] | None:
        """The line at one of ``options`` whose CRC holds against ``previous``.
        Two may (a line taken back, a refused entry, and the line written in
        its place later): the one the line after it holds against, else the
        one the record ends on, else the newest (``first``: any)."""
        found = [(key, text, crc, age) for key in options if self._inside(key)
                 for (text, crc), (committed, age) in self.pool.lines.get(key, {}).items()
                 if chain_crc(previous, key[0], key[1], text) == crc and self._allowed(committed)]
        if len(found) <= 1 or first:
            return found[0][:3] if found else None
        acked = self.acked
        last = acked is not None and self.count + 1 == acked.lines
        found.sort(key=lambda copy: (
            self._holds(copy[2], self._options(copy[0]), first=True) is not None,
            last and acked is not None and copy[2] == acked.crc, copy[3]))
        return found[-1][:3]

    def _confirmed(self, crc: int, key: Key) -> bool:
        """Does the line after ``key`` hold against ``crc``, or the record end on it?"""
        acked = self.acked
        if acked is not None and self.count + 1 == acked.lines and crc == acked.crc:
            return True
        return self._holds(crc, self._options(key), first=True) is not None

    def _suspect_rows(self) -> list[tuple[bytes, int, bool]]:
        """Every suspect cell read as it is and with each single bit flipped:
        the (text, crc, committed) of each reading that is a line."""
        if self._mends is not None:
            return self._mends
        self._mends = []
        budget = _MEND_BUDGET
        seen: set[tuple[Buffer, int]] = set()
        for page, at, child, committed in self.pool.suspects:
            if (page, at) in seen:
                continue
            seen.add((page, at))
            start = at + (4 if child else 0)
            read = self.reader.payload(page, start, True)
            span = read[1] - start if read is not None else 0
            span = min(max(span, 48), _MEND_SPAN, len(page) - start)
            if budget < span * 8:
                break
            budget -= span * 8
            cell = bytearray(page[start:start + self.reader.index_max + 32])
            trials = [(0, 0)] + [(byte, 1 << bit) for byte in range(span) for bit in range(8)]
            for offset, mask in trials:
                cell[offset] ^= mask
                again = self.reader.payload(bytes(cell), 0, True)
                cell[offset] ^= mask
                line = None if again is None else _line(parse_record(again[0]))
                if line is not None:
                    self._mends.append((line[1], line[2], committed))
        return self._mends

    def _mend(self, previous: int, options: list[Key]) -> tuple[Key, bytes, int] | None:
        """A line at one of ``options`` that is there but damaged: in its CRC
        field (the next line confirms the right CRC), or by one flipped bit
        anywhere in its cell (its CRC holds once the bit is flipped back)."""
        options = [key for key in options if self._inside(key)]
        for key in options:
            for (text, _), (committed, _) in self.pool.lines.get(key, {}).items():
                right = chain_crc(previous, key[0], key[1], text)
                if self._allowed(committed) and self._confirmed(right, key):
                    return key, text, right
        for text, crc, committed in self._suspect_rows():
            for key in options:
                if chain_crc(previous, key[0], key[1], text) == crc and self._allowed(committed):
                    return key, text, crc
        return None

    def _resync(self, broken: Key) -> tuple[Key, bytes, int] | None:
        """After the chain broke at ``broken``: the first line of a later game
        whose CRC holds against the CRC of a line read in between."""
        bases: set[int] = set()
        done = bisect_left(self.keys, broken)
        for game_id in self.starts[bisect_right(self.starts, broken[0]):]:
            upto = bisect_left(self.keys, (game_id, 0))
            for key in self.keys[done:upto]:
                bases |= {crc for _, crc in self.pool.lines[key]}
            done = upto
            for base in bases:
                found = self._holds(base, [(game_id, 0)], first=True)
                if found is not None:
                    return found
        return None

    def breaks(self) -> set[Key]:
        """The lines on each side of each game's first lost line."""
        near = set()
        for game_id in {key[0] for key in self.keys}:
            kept = len(self.good.get(game_id, []))
            if (game_id, kept) in self.pool.lines or (game_id, kept + 1) in self.pool.lines:
                near |= {(game_id, kept - 1), (game_id, kept + 1)}
        return near

    def _beyond(self, previous: int, last: Key | None) -> int:
        count = 0
        while count < 100_000:
            found = self._holds(previous, self._options(last), first=True)
            if found is None:
                break
            last, _, previous = found
            self.left_out.add(previous)
            count += 1
        return count

    def losses(self) -> tuple[list[str], int]:
        """The games read with lines not recovered (from which line), and how
        many lines after the first one lost hold their CRC against the line
        before them (stranded: a game replays only from its start)."""
        lost: dict[int, int] = {}
        stranded = 0
        for game_id, seq in self.keys:
            kept = len(self.good.get(game_id, []))
            copies = [copy for copy in self.pool.lines[(game_id, seq)]
                      if copy not in self.accepted and copy[1] not in self.left_out]
            if seq < kept or not copies:
                continue  # (a copy under a damaged key that was mended in its place)
            before = {crc for _, crc in self.pool.lines.get((game_id, seq - 1), {})}
            holds = any(chain_crc(base, game_id, seq, text) == crc
                        for text, crc in copies for base in before)
            if seq == kept or holds:  # (not a stray record read from a damaged page)
                lost.setdefault(game_id, kept)
            stranded += seq > kept and holds
        return [f"game {game_id} from line {kept + 1}" if kept else f"game {game_id}"
                for game_id, kept in lost.items()], stranded

    def run(self) -> None:
        acked = self.acked
        cap = acked.lines if acked is not None and acked.problem is None else None
        previous = 0
        last: Key | None = None
        while True:
            if cap is not None and self.count >= cap:
                # Lines beyond a sound record were never acknowledged (a
                # refused entry, the power gone before its record): left out.
                self.ends_on_record = previous == self.acked_crc
                self.beyond = self._beyond(previous, last)
                return
            options = self._options(last)
            if not options:
                return
            found = self._holds(previous, options)
            if found is None:
                found = self._mend(previous, options)
                self.mended += found is not None
            if found is None:
                found = self._resync(options[0])
                if found is None:
                    return
            key, text, previous = found
            self.accepted.add((text, previous))
            self.good.setdefault(key[0], []).append(text)
            self.count += 1
            last = key


# --- the salvage ---------------------------------------------------------------------


def _geometry(main: bytes, wal_header: bytes) -> tuple[int, int]:
    """(page size, reserved bytes a page): the main file's header, else the
    -wal's, else SQLite's default."""
    if main.startswith(_HEADER_STRING) and len(main) >= 100:
        (size,) = struct.unpack(">H", main[16:18])
        size = 65536 if size == 1 else size
        if size in _PAGE_SIZES and main[20] < 64:
            return size, main[20]
    if len(wal_header) >= 12:
        (size,) = struct.unpack(">I", wal_header[8:12])
        if size in _PAGE_SIZES:
            return size, 0
    return 4096, 0


def salvage(path: Path, acked: Acked | None = None) -> Salvaged:
    """Recover what a damaged journal's files hold: ``path`` (the main file,
    e.g. kept aside as ``journal.sqlite3.damaged-STAMP``) and ``path-wal``
    beside it; ``acked``: the record of acknowledged lines kept with them.
    Reads the files only; raises only OSError (a file that cannot be read)."""
    main = path.read_bytes() if path.is_file() else b""
    wal_path = Path(str(path) + "-wal")
    wal_data = wal_path.read_bytes() if wal_path.is_file() else b""
    return salvage_bytes(main, wal_data, acked, on_disk=path)


def salvage_bytes(main_data: bytes, wal_data: bytes, acked: Acked | None = None, *,
                  on_disk: Path | None = None) -> Salvaged:
    """:func:`salvage` of a main file's and a -wal's bytes (``on_disk``: the
    main file holding ``main_data``, which SQLite may then read in place)."""
    main = memoryview(main_data)
    page_size, reserved = _geometry(main[:100].tobytes(), wal_data[:_WAL_HEADER])
    wal = read_wal(wal_data, page_size)
    frames = wal.frames if wal is not None else []
    committed = wal.committed if wal is not None else 0
    if wal is not None and main[:16] != _HEADER_STRING:
        page_size, reserved = wal.page_size, 0
    notes: list[str] = []
    if wal is not None and wal.damaged and wal.sqlite_reads < committed:
        notes.append(f"read the -wal past {len(wal.damaged)} damaged of {len(frames)} "
                     f"frames (SQLite stops at frame {wal.sqlite_reads + 1})")
    elif wal is not None and frames and not wal.header_sound:
        notes.append("read the -wal past its damaged header")

    # The latest committed state: the main file with every committed frame.
    pages: dict[int, Buffer] = {n + 1: main[n * page_size:(n + 1) * page_size]
                                for n in range(len(main) // page_size)}
    size = len(pages)
    for frame in frames[:committed]:
        pages[frame.page] = frame.data
        if frame.commit and frame.sound:
            size = frame.commit
    size = min(size, _MAX_PAGES)
    reader = Reader(page_size, reserved, lambda n: pages.get(n) if 0 < n <= size else None)
    zero = bytes(page_size)
    image = (bytearray().join(pages.get(n, zero) for n in range(1, size + 1))
             if committed or on_disk is None else None)
    read = _sqlite_reads(image, on_disk)
    del image
    pool = _Pool()
    for key, text, crc in read.lines:
        pool.add_line(key, text, crc, True, _NEWEST)
    end = max(pool.lines) if read.complete and pool.lines else None
    walk = _Walk(pool, reader, acked, end)
    walk.run()
    if not read.complete or walk.losses()[0] or (
            acked is not None and walk.count < acked.lines):
        # Every page image, cell by cell: the older versions of a page too.
        images: dict[Buffer, tuple[int, bool, bool]] = {}
        for n in range(len(main) // page_size):
            images[main[n * page_size:(n + 1) * page_size]] = (0, True, n == 0)
        for frame in frames:
            age, sure, first = images.get(frame.data, (0, False, False))
            images[frame.data] = (frame.number, sure or frame.number <= committed,
                                  first or frame.page == 1)
        _scan(reader, images, pool)
        walk = _Walk(pool, reader, acked, end)
        walk.run()
        notes.append("read every page cell by cell")
        near = walk.breaks()
        if near and _carve_near(reader, images, pool, near):
            walk = _Walk(pool, reader, acked, end)
            walk.run()
    if walk.mended:
        notes.append(f"mended {walk.mended} damaged lines by their CRCs")
    lost, stranded = walk.losses()
    if lost:
        notes.append("lost " + ", ".join(lost))
    if stranded:
        notes.append(f"{stranded} lines after a lost one hold their CRCs: "
                     "left in the kept files")
    if walk.beyond:
        notes.append(f"{walk.beyond} lines beyond the record of acknowledged lines left out "
                     "(never confirmed)")
    if not walk.ends_on_record:
        notes.append("the lines recovered do not end on the record's CRC")
    if acked is not None and acked.problem is None:
        found = acked.lines  # (more read are lines never acknowledged)
    else:
        found = max(acked.lines if acked is not None else 0, walk.count, len(read.lines))
    return Salvaged(_games(walk.good, read, pool), walk.good, _settings(read, pool), found,
                    stranded, notes)


def _games(good: dict[int, list[bytes]], read: _Found, pool: _Pool
           ) -> list[tuple[int, float, str]]:
    """Each game with lines recovered, and those SQLite read before the last
    of them (a game with no line after it: a new game taken back, or one
    whose every line was lost, would be resumed as the latest); its time and
    flow as SQLite read them, else its newest copy, else now and none."""
    seen = {game_id: (created, flow) for game_id, created, flow in read.games}
    out = []
    last = max(good, default=0)
    for game_id in sorted(set(good) | {game_id for game_id in seen if game_id < last}):
        if game_id in seen:
            created, flow = seen[game_id]
        elif game_id in pool.games:
            _, created, flow = pool.games[game_id]
        else:
            created, flow = time.time(), b""
        out.append((game_id, created, decode(flow)))
    return out


def _settings(read: _Found, pool: _Pool) -> list[tuple[str, str]]:
    """Each setting's newest copy whose own CRC holds."""
    out: dict[bytes, bytes] = {}
    for key, value, crc in read.settings:
        if setting_crc(decode(key), value) == crc:
            out[key] = value
    for key, copies in pool.settings.items():
        for _, value, crc in sorted(copies, reverse=True):
            if key not in out and setting_crc(decode(key), value) == crc:
                out[key] = value
    return sorted((decode(key), decode(value)) for key, value in out.items())


# --- for the store -------------------------------------------------------------------


def salvage_into(audit: Audit, kept: Path, *, unreadable: Exception | None = None) -> bool:
    """A damaged journal's files kept aside as ``kept`` (with ``kept.acks``):
    when salvaging them recovers more lines than ``audit`` trusts, ``audit``
    takes what was salvaged (its lines, games, settings, how many were
    acknowledged) and says how in its damage and the ``.reason`` beside the
    files; True then.  ``unreadable``: why SQLite could not read them at all
    (the audit is empty; it becomes damage once lines are recovered).
    A salvage that fails leaves ``audit`` as it was (the reason says why)."""
    try:
        found = salvage(kept, read_acks(Path(str(kept) + ".acks")))
    except Exception as error:  # a fault of its own must not stop the start
        _add_reason(kept, f"salvage failed: {type(error).__name__}: {error}")
        return False
    if found.recovered <= sum(len(lines) for lines in audit.good.values()):
        return False
    if unreadable is not None:
        audit.damage.append(f"unreadable by SQLite ({unreadable})")
    audit.good = found.good
    audit.games = found.games
    audit.settings = sorted({**dict(audit.settings), **dict(found.settings)}.items())
    audit.acknowledged = max(audit.acknowledged, found.found)
    audit.damage.append("salvaged: " + ("; ".join(found.notes) or "every line's CRC checked"))
    _add_reason(kept, f"salvaged: {found.sentence()}")
    return True


def _add_reason(kept: Path, text: str) -> None:
    """A line added to the ``.reason`` file beside the kept files (best effort)."""
    try:
        with open(kept.with_name(kept.name + ".reason"), "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
            handle.flush()
            os.fsync(handle.fileno())
    except OSError:
        pass
