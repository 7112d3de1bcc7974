"""Salvage: the lines a damaged journal still holds (issue 21, "salvage what the damage left").

Real journals made by the store (two games from ``examples/``, 99 lines, flows
and settings; a journal of 12 games for a b-tree with interior pages), their
files taken as a power cut leaves them (the -wal, the store still open) or
after a clean stop (everything in the main file).  Then one bit flipped, over
a seeded sample of the -wal's frames (headers and pages), its header, and the
main file's pages; and bytes damaged at random.  Every case:

- never a crash, never a line that was not written: each game recovered is a
  prefix of the game as written (so its CRC chain holds), no other game;
- never fewer lines than SQLite's own reading of the damaged files gives
  (SQLite stops at the first bad -wal frame, refuses a damaged b-tree);
- one flipped bit loses no line (a frame read past, a line mended).
"""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest

from firmware.journal import ACKS_NAME, JOURNAL_NAME, Acked, Store, chain_crc, read_acks
from firmware.journal.salvage import (
    Reader,
    Salvaged,
    parse_record,
    read_wal,
    salvage,
    salvage_bytes,
)

ROOT = Path(__file__).resolve().parents[2]
WAL = JOURNAL_NAME + "-wal"
FRAME = 24 + 4096


def example(name: str) -> list[str]:
    """The lines of an example log as the referee stores them (no header,
    comments or score lines)."""
    return [line for line in (ROOT / "examples" / name).read_text().splitlines()
            if line.strip() and not line.startswith(("#", "euchre-log", "score"))]


@dataclass(frozen=True)
class Journal:
    main: bytes
    wal: bytes
    acked: Acked
    written: dict[int, list[bytes]]
    settings: dict[str, str]
    acks: bytes

    def lay(self, state: Path) -> None:
        """The files in ``state`` as they were taken."""
        state.mkdir(parents=True, exist_ok=True)
        (state / JOURNAL_NAME).write_bytes(self.main)
        if self.wal:
            (state / WAL).write_bytes(self.wal)
        (state / ACKS_NAME).write_bytes(self.acks)

    @property
    def total(self) -> int:
        return sum(len(lines) for lines in self.written.values())


def make_journal(root: Path, *, games: int = 2, stop: bool = False, restart: bool = False,
                 taken_back: bool = False) -> Journal:
    """Games entered line by line through the store (each line with the entry
    flow's position, a cursor move saved between some); the files taken
    while it is open (``stop``: after it closed).  ``restart``: a checkpoint
    by another connection halfway through the last game, so that the -wal
    restarts over older frames.  ``taken_back``: a line committed and taken
    back in the middle of the last game, as the store takes back a refused
    entry (its copy stays in older frames), and one after the last line."""
    live = root / "live"
    store = Store(live)
    written: dict[int, list[str]] = {}
    settings = {"players": "N=Ragnar E=Sigríður S=South W=Anna"}
    store.set_setting("players", settings["players"])
    logs = ("full-game.log", "left-bower.log", "house-rules.log")
    for number in range(games):
        lines = example(logs[number % 3])
        game_id = store.new_game(lines[:1])
        written[game_id] = lines[:1]
        for index, line in enumerate(lines[1:]):
            if taken_back and number == games - 1 and index == 10:
                take_back(live, game_id, "trick W")
            store.append(game_id, line, flow=json.dumps({"entries": index}))
            written[game_id].append(line)
            if index % 4 == 1:
                store.save_flow(game_id, json.dumps({"cursor": index}))
            if restart and number == games - 1 and index == 10:
                other = sqlite3.connect(live / JOURNAL_NAME)
                other.execute("PRAGMA wal_checkpoint(PASSIVE)")
                other.close()
        if number == 0:
            settings["rules"] = "stick=on"
            store.set_setting("rules", settings["rules"])
    if taken_back:
        take_back(live, max(written), "undo")
    if stop:
        store.close()
    wal = live / WAL
    journal = Journal((live / JOURNAL_NAME).read_bytes(), wal.read_bytes() if wal.exists()
                      else b"", read_acks(live / ACKS_NAME) or Acked(0, 0),
                      {gid: [line.encode() for line in lines] for gid, lines in written.items()},
                      settings, (live / ACKS_NAME).read_bytes())
    if not stop:
        store.close()
    return journal


def take_back(state: Path, game_id: int, text: str) -> None:
    """Commit ``text`` after the last line, chained, then delete it: a refused
    entry taken back (its frames stay in the -wal)."""
    db = sqlite3.connect(state / JOURNAL_NAME, isolation_level=None)
    try:
        (seq, crc) = db.execute("SELECT seq, crc FROM lines WHERE game_id=? "
                                "ORDER BY seq DESC LIMIT 1", (game_id,)).fetchone()
        db.execute("INSERT INTO lines (game_id, seq, text, crc) VALUES (?, ?, ?, ?)",
                   (game_id, seq + 1, text, chain_crc(crc, game_id, seq + 1, text.encode())))
        db.execute("DELETE FROM lines WHERE game_id=? AND seq=?", (game_id, seq + 1))
    finally:
        db.close()


@pytest.fixture(scope="module")
def wal_journal(tmp_path_factory: pytest.TempPathFactory) -> Journal:
    return make_journal(tmp_path_factory.mktemp("wal"))


@pytest.fixture(scope="module")
def main_journal(tmp_path_factory: pytest.TempPathFactory) -> Journal:
    return make_journal(tmp_path_factory.mktemp("main"), stop=True)


@pytest.fixture(scope="module")
def big_journal(tmp_path_factory: pytest.TempPathFactory) -> Journal:
    journal = make_journal(tmp_path_factory.mktemp("big"), games=12, stop=True)
    assert len(journal.main) // 4096 > 5
    return journal


def flipped(data: bytes, bit: int) -> bytes:
    out = bytearray(data)
    out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def sqlite_alone(root: Path, main: bytes, wal: bytes) -> int:
    """What SQLite's own reading of these files gives: each game's lines up
    to its first whose CRC fails (what the store kept before salvage)."""
    root.mkdir(exist_ok=True)
    (root / JOURNAL_NAME).write_bytes(main)
    (root / WAL).write_bytes(wal)
    (root / (JOURNAL_NAME + "-shm")).unlink(missing_ok=True)
    try:
        db = sqlite3.connect(f"file:{root / JOURNAL_NAME}?mode=ro", uri=True)
        db.text_factory = bytes
        rows = db.execute("SELECT game_id, seq, text, crc FROM lines ORDER BY game_id, seq"
                          ).fetchall()
        db.close()
    except (sqlite3.Error, ValueError):
        return 0
    count, previous, broken = 0, 0, set()
    for game_id, seq, text, crc in rows:
        try:
            holds = crc == chain_crc(previous, game_id, seq, text)
        except TypeError:
            holds = False
        if holds and game_id not in broken:
            count += 1
        else:
            broken.add(game_id)
        previous = crc
    return count


def check(found: Salvaged, journal: Journal, case: str) -> None:
    """Never a line that was not written: each game a prefix of the game as
    written (the chain, recomputed over it, then holds as written), the
    games and settings only those written."""
    assert set(found.good) <= set(journal.written), case
    for game_id, lines in found.good.items():
        assert lines == journal.written[game_id][:len(lines)], f"{case}: game {game_id}"
    previous = 0
    for game_id in sorted(found.good):
        for seq, text in enumerate(found.good[game_id]):
            previous = chain_crc(previous, game_id, seq, text)
    assert {game_id for game_id, _, _ in found.games} >= set(found.good), case
    assert set(found.settings) <= set(journal.settings.items()), case
    assert found.recovered <= found.found, case


# --- nothing damaged -----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["wal", "main"])
def test_an_undamaged_journal_is_recovered_whole(
        kind: str, wal_journal: Journal, main_journal: Journal) -> None:
    journal = wal_journal if kind == "wal" else main_journal
    found = salvage_bytes(journal.main, journal.wal, journal.acked)
    check(found, journal, kind)
    assert found.good == journal.written
    assert (found.recovered, found.found, found.stranded, found.notes) == (99, 99, 0, [])
    assert sorted(found.settings) == sorted(journal.settings.items())
    assert found.sentence() == "recovered 99 of 99 lines"


def test_salvage_only_reads(tmp_path: Path, wal_journal: Journal) -> None:
    """The kept files stay byte for byte (no -shm made, no checkpoint)."""
    kept = tmp_path / "journal.sqlite3.damaged-20260101-000000"
    kept.write_bytes(wal_journal.main)
    Path(str(kept) + "-wal").write_bytes(flipped(wal_journal.wal, 8 * (32 + 5 * FRAME + 900)))
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    found = salvage(kept, wal_journal.acked)
    assert found.recovered == 99
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before
    main_only = tmp_path / "main-only.sqlite3"
    main_only.write_bytes(wal_journal.main)
    assert salvage(main_only).recovered == 0  # (every line is in the -wal)
    assert not Path(str(main_only) + "-shm").exists()


# --- one flipped bit -----------------------------------------------------------------


def test_one_flipped_bit_in_a_wal_frame_loses_no_line(
        tmp_path: Path, wal_journal: Journal) -> None:
    """250 cases over the -wal's frames: 50 bits of frame headers (page
    number, commit size, salts, checksums), 200 of their pages.  SQLite stops
    at the damaged frame; every line after it is recovered all the same."""
    frames = read_wal(wal_journal.wal, 4096)
    assert frames is not None and frames.committed == len(frames.frames) > 150
    rng = random.Random(21)
    hidden = 0
    for case in range(250):
        frame = rng.randrange(len(frames.frames))
        bit = rng.randrange(24 * 8) if case < 50 else 24 * 8 + rng.randrange(4096 * 8)
        wal = flipped(wal_journal.wal, 8 * (32 + frame * FRAME) + bit)
        name = f"frame {frame + 1} bit {bit}"
        found = salvage_bytes(wal_journal.main, wal, wal_journal.acked)
        check(found, wal_journal, name)
        assert found.recovered == 99, f"{name}: {found.sentence()}"
        if case % 5 == 0:  # what SQLite alone gives, on a fifth of them
            hidden += sqlite_alone(tmp_path / "alone", wal_journal.main, wal) < 99
    assert hidden > 25  # most flips hide lines from SQLite itself


def test_one_flipped_bit_in_the_wal_header_loses_no_line(wal_journal: Journal) -> None:
    """Every other bit of the -wal's 32-byte header (SQLite then ignores the
    whole -wal: here every frame)."""
    for bit in range(0, 32 * 8, 2):
        found = salvage_bytes(wal_journal.main, flipped(wal_journal.wal, bit), wal_journal.acked)
        check(found, wal_journal, f"header bit {bit}")
        assert found.recovered == 99, f"header bit {bit}: {found.sentence()}"


def test_a_restarted_wal_is_read_without_its_older_frames(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """A checkpoint halfway: the -wal starts over its older frames (other
    salts, left in the file); 150 flips over the new ones."""
    journal = make_journal(tmp_path_factory.mktemp("restart"), restart=True)
    frames = read_wal(journal.wal, 4096)
    assert frames is not None
    assert len(frames.frames) < (len(journal.wal) - 32) // FRAME  # older frames after them
    rng = random.Random(22)
    for _ in range(150):
        frame = rng.randrange(len(frames.frames))
        bit = rng.randrange(FRAME * 8)
        name = f"frame {frame + 1} bit {bit}"
        found = salvage_bytes(journal.main, flipped(journal.wal, 8 * (32 + frame * FRAME) + bit),
                              journal.acked)
        check(found, journal, name)
        assert found.recovered == 99, f"{name}: {found.sentence()}"


@pytest.mark.parametrize("kind", ["main", "big"])
def test_one_flipped_bit_in_the_main_file_loses_no_line(
        kind: str, tmp_path: Path, main_journal: Journal, big_journal: Journal) -> None:
    """200 flips over every page of a checkpointed journal (the schema page,
    the tables' leaves, a b-tree's interior pages): SQLite refuses some of
    these files outright; every line is recovered."""
    journal = main_journal if kind == "main" else big_journal
    rng = random.Random(23 if kind == "main" else 24)
    refused = 0
    for case in range(200):
        bit = rng.randrange(len(journal.main) * 8)
        main = flipped(journal.main, bit)
        found = salvage_bytes(main, b"", journal.acked)
        check(found, journal, f"bit {bit}")
        assert found.recovered == journal.total, f"bit {bit}: {found.sentence()}"
        if case % 4 == 0:
            refused += sqlite_alone(tmp_path / "alone", main, b"") < journal.total
    assert refused  # SQLite alone loses lines on some of them


# --- more damage ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["wal", "main"])
def test_bytes_damaged_at_random_never_give_a_line_not_written(
        kind: str, tmp_path: Path, wal_journal: Journal, main_journal: Journal) -> None:
    """1 to 8 bytes each XORed with a random mask (as ``bench/faults.py``
    damages a file), 120 cases: never a crash or a line not written, never
    fewer lines than SQLite's own reading; what is lost is said."""
    journal = wal_journal if kind == "wal" else main_journal
    rng = random.Random(25 if kind == "wal" else 26)
    recovered = alone = 0
    for case in range(120):
        data = bytearray(journal.wal if kind == "wal" else journal.main)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] ^= rng.randrange(1, 256)
        main, wal = (journal.main, bytes(data)) if kind == "wal" else (bytes(data), b"")
        found = salvage_bytes(main, wal, journal.acked)
        check(found, journal, f"case {case}")
        by_sqlite = sqlite_alone(tmp_path / "alone", main, wal)
        assert found.recovered >= by_sqlite, f"case {case}: {found.sentence()}"
        if found.recovered < journal.total:
            assert any(note.startswith("lost game") for note in found.notes), found.notes
        recovered += found.recovered
        alone += by_sqlite
    assert recovered > alone


def test_a_line_damaged_beyond_mending_ends_its_game_and_is_said(main_journal: Journal) -> None:
    """Two bits of one line's text: its CRC cannot tell which; the game keeps
    its lines before it (a game replays from its start), the next game is
    whole, and the lines after it that hold their CRCs are counted."""
    reader = Reader(4096, 0, lambda number: None)
    main = bytearray(main_journal.main)
    target = main_journal.written[1][39]
    for number in range(len(main) // 4096):
        page = bytes(main[number * 4096:(number + 1) * 4096])
        for at, _, payload in reader.read(page, number == 0).index:
            values = parse_record(payload)
            if values is not None and values[:3] == [1, 39, target]:
                text = number * 4096 + at + 1 + bytes(payload).index(target)
                main[text] ^= 0x01
                main[text + 2] ^= 0x01
    assert main != bytearray(main_journal.main)
    found = salvage_bytes(bytes(main), b"", main_journal.acked)
    check(found, main_journal, "two bits")
    first = len(found.good[1])
    assert first < len(main_journal.written[1]) and found.good[2] == main_journal.written[2]
    assert f"lost game 1 from line {first + 1}" in found.notes
    assert found.stranded == len(main_journal.written[1]) - first - 1
    assert found.sentence().startswith(f"recovered {found.recovered} of 99 lines (")


# --- what is never recovered ----------------------------------------------------------


def test_a_line_taken_back_never_returns(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A refused entry taken back (its copy in older frames, chained to the
    same line as the entry written in its place) and one after the last
    line: with one flipped bit anywhere in the frames after it, neither
    comes back; the second is counted as beyond the record."""
    journal = make_journal(tmp_path_factory.mktemp("back"), taken_back=True)
    frames = read_wal(journal.wal, 4096)
    assert frames is not None
    found = salvage_bytes(journal.main, journal.wal, journal.acked)
    assert found.good == journal.written and found.notes == []
    rng = random.Random(27)
    for _ in range(80):
        frame = rng.randrange(len(frames.frames) // 2, len(frames.frames))
        bit = rng.randrange(FRAME * 8)
        name = f"frame {frame + 1} bit {bit}"
        found = salvage_bytes(journal.main, flipped(journal.wal, 8 * (32 + frame * FRAME) + bit),
                              journal.acked)
        check(found, journal, name)
        assert found.recovered == 99, f"{name}: {found.sentence()}"
    # With no record, SQLite's reading of the latest state ends the game.
    found = salvage_bytes(journal.main, flipped(journal.wal, 8 * (32 + 3 * FRAME) + 999), None)
    check(found, journal, "no record")
    assert found.recovered == 99


def test_a_last_commit_never_acknowledged_is_not_recovered(wal_journal: Journal) -> None:
    """The last commit's frame damaged (as a power cut tears it): its line is
    recovered when the record says it was acknowledged, never when the
    record ends before it."""
    frames = read_wal(wal_journal.wal, 4096)
    assert frames is not None and frames.frames[-1].commit
    last = len(frames.frames) - 1
    torn = flipped(wal_journal.wal, 8 * (32 + last * FRAME + 24 + 3000))
    found = salvage_bytes(wal_journal.main, torn, wal_journal.acked)
    assert found.recovered == 99
    previous = 0
    for game_id, lines in sorted(wal_journal.written.items()):
        for seq, text in enumerate(lines[:-1] if game_id == 2 else lines):
            previous = chain_crc(previous, game_id, seq, text)
    before = Acked(98, previous)
    found = salvage_bytes(wal_journal.main, torn, before)
    check(found, wal_journal, "torn")
    assert (found.recovered, found.found) == (98, 98)


def test_files_that_are_no_journal_recover_nothing(tmp_path: Path) -> None:
    for data in (b"", b"not a database" * 100, bytes(8192), random.Random(28).randbytes(20000)):
        found = salvage_bytes(data, data, None)
        assert (found.recovered, found.good, found.games) == (0, {}, [])
    found = salvage(tmp_path / "missing.sqlite3", Acked(5, 1))
    assert (found.recovered, found.found) == (0, 5)


# --- the store -----------------------------------------------------------------------


def test_the_store_recovers_past_a_damaged_wal_frame(tmp_path: Path, wal_journal: Journal) -> None:
    """Before: SQLite stopped at the damaged frame and the store kept what it
    read (fewer lines); now every line, the files kept byte for byte
    and the salvage said in the status sentence and the ``.reason``."""
    frame = 60
    wal = flipped(wal_journal.wal, 8 * (32 + frame * FRAME + 24 + 2000))
    journal = Journal(wal_journal.main, wal, wal_journal.acked, wal_journal.written,
                      wal_journal.settings, wal_journal.acks)
    assert sqlite_alone(tmp_path / "alone", journal.main, wal) < 99
    journal.lay(tmp_path / "state")
    store = Store(tmp_path / "state")
    try:
        damage = store.damage
        assert damage is not None and store.moved_aside is None
        assert damage.sentence().endswith("recovered 99 of 99 lines")
        assert "read the -wal past 1 damaged of" in damage.reason
        assert {info.id: [line.encode() for line in store.lines(info.id)]
                for info in store.games()} == journal.written
        assert store.settings() == journal.settings
        assert damage.kept_as.read_bytes() == journal.main
        assert Path(str(damage.kept_as) + "-wal").read_bytes() == wal
        reason = damage.kept_as.with_name(damage.kept_as.name + ".reason").read_text()
        assert "salvaged: recovered 99 of 99 lines" in reason
    finally:
        store.close()
    store = Store(tmp_path / "state")  # the fresh journal is sound
    try:
        assert store.damage is None and sum(info.lines for info in store.games()) == 99
    finally:
        store.close()


def test_the_store_recovers_a_main_file_sqlite_refuses(
        tmp_path: Path, main_journal: Journal) -> None:
    """A flipped bit in the schema's page: SQLite cannot read the journal at
    all; before, it was moved aside and the box started clean; now its lines
    are recovered, and it is said as damage (kept as it was moved)."""
    main = bytearray(main_journal.main)
    main[100 + 3] ^= 0x40  # page 1's cell count: SQLite's schema is unreadable
    journal = Journal(bytes(main), b"", main_journal.acked, main_journal.written,
                      main_journal.settings, main_journal.acks)
    assert sqlite_alone(tmp_path / "alone", journal.main, b"") == 0
    journal.lay(tmp_path / "state")
    store = Store(tmp_path / "state")
    try:
        damage = store.damage
        assert damage is not None and store.moved_aside is None
        assert ".unreadable-" in damage.kept_as.name
        assert damage.reason.startswith("unreadable by SQLite (")
        assert damage.sentence().endswith("recovered 99 of 99 lines")
        assert {info.id: [line.encode() for line in store.lines(info.id)]
                for info in store.games()} == journal.written
        assert damage.kept_as.read_bytes() == journal.main
    finally:
        store.close()


def test_a_journal_with_nothing_to_salvage_still_starts_clean(tmp_path: Path) -> None:
    (tmp_path / JOURNAL_NAME).write_bytes(b"not a database at all" * 300)
    store = Store(tmp_path)
    try:
        assert store.damage is None and store.moved_aside is not None
        assert store.games() == []
    finally:
        store.close()
