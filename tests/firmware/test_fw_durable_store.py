"""The journal in the state directory (issue items 1 and 2; SPEC §2, §7).

SQLite in WAL mode with synchronous=FULL; several games kept, listed and
exported as logs; a journal that cannot be read is moved aside (never
deleted), said on the screen, and the referee starts clean; a journal that is
only unreachable (locked, not openable) is never moved aside.
"""

from __future__ import annotations

import random
import sqlite3
import threading
from pathlib import Path

import pytest
from support.crash_child import Model, make_config, open_referee, setup_lines, stored_games
from support.journal_kit import rechain

from euchre_core import SEATS, Phase, Seat, replay
from euchre_core.events import NewGame
from euchre_core.log import HEADER, parse_line
from euchre_core.rules import Rules
from firmware.journal import JOURNAL_NAME, JournalError, Store


def play(referee, rng: random.Random, count: int, *, undo_p: float = 0.0) -> list[str]:  # type: ignore[no-untyped-def]
    """Enter ``count`` random legal lines through the referee; returns them."""
    model = Model(setup_lines(referee.config))
    model.game = referee.game
    model.base = referee.base_entries
    lines = []
    for _ in range(count):
        line = Model.random_line(model, rng, undo_p)
        if line == "undo":
            assert referee.undo() is None
        else:
            assert referee.enter(parse_line(line)) is None, line
        model.game = referee.game
        lines.append(line)
    return lines


def play_to_the_end(referee, rng: random.Random) -> None:  # type: ignore[no-untyped-def]
    while referee.game.phase is not Phase.GAME_OVER:
        play(referee, rng, 1)


def test_journal_is_wal_with_full_sync(tmp_path: Path) -> None:
    store = Store(tmp_path)
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    game = store.new_game(["players N=a E=b S=c W=d"])
    store.append(game, "game dealer=N")
    # Committed means visible to another connection at once (no open transaction).
    other = sqlite3.connect(tmp_path / JOURNAL_NAME)
    assert other.execute("SELECT COUNT(*) FROM lines").fetchone()[0] == 2
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # persistent
    other.close()
    store.close()


def test_every_entry_is_committed_before_enter_returns(tmp_path: Path) -> None:
    """``Referee.enter`` returns (the screen or the link may acknowledge) only
    once the line is in the journal for any other reader."""
    referee = open_referee(tmp_path)
    reader = sqlite3.connect(tmp_path / JOURNAL_NAME)
    rng = random.Random(1)
    for _ in range(40):
        (line,) = play(referee, rng, 1, undo_p=0.1)
        (text,) = reader.execute(
            "SELECT text FROM lines WHERE game_id=? ORDER BY seq DESC LIMIT 1",
            (referee.game_id,)).fetchone()
        assert text == line
    reader.close()


def test_several_games_are_kept_listed_and_exported(tmp_path: Path) -> None:
    rng = random.Random(7)
    referee = open_referee(tmp_path)
    finals = []
    for _ in range(3):
        play(referee, rng, 1)  # the first dealer
        play_to_the_end(referee, rng)
        assert referee.undo() is None  # undo the winning entry, and play on
        play_to_the_end(referee, rng)
        finals.append((dict(referee.game.score), referee.game.winner))
        assert referee.enter(NewGame(rng.choice(SEATS))) is None
    play(referee, rng, 1)  # the new game's first entry stores it (till then UNDO reaches back)
    referee.store.close()

    store = Store(tmp_path)
    games = store.games()
    assert len(games) == 4  # three finished, one just started
    assert [g.id for g in games] == sorted(g.id for g in games)
    assert all(g.lines == len(store.lines(g.id)) for g in games)
    for info, (score, winner) in zip(games, finals):
        exported = store.export(info.id)
        assert "undo" not in exported.split("\n")  # the clean log has undos applied
        result = replay(exported)
        assert result.error is None
        assert result.game.score == score and result.game.winner is winner
        assert result.game.score[winner] >= Rules().target
        # The journal text keeps the undos, as entered, and replays the same.
        journal = store.journal_text(info.id)
        assert journal.startswith(HEADER + "\n")
        assert replay(journal).game.score == score
    assert store.latest() == games[-1].id
    store.close()


def _garbage(path: Path, size: int = 8192) -> bytes:
    data = random.Random(3).randbytes(size)
    path.write_bytes(data)
    return data


def _assert_moved_aside_and_clean(tmp_path: Path, garbage: bytes | None = None) -> Path:
    referee = open_referee(tmp_path)
    view = referee.view()
    assert view.kind == "notice", view
    assert view.title == "Journal unreadable"
    moved = referee.store.moved_aside
    assert moved is not None and moved.exists() and moved.parent == tmp_path
    assert any("moved aside" in text for text in view.lines), view.lines
    if garbage is not None:
        assert moved.read_bytes() == garbage  # moved, byte for byte: never deleted
    assert "reason" not in moved.name
    assert (tmp_path / (moved.name + ".reason")).read_text().strip()
    # Starts clean: a new game with only its setup lines, waiting for a dealer.
    assert referee.game.phase is Phase.SETUP
    assert [g.lines for g in referee.store.games()] == [1]
    referee.press("OK")  # any button dismisses the notice; nothing else happens
    assert referee.view().kind != "notice"
    assert referee.game.phase is Phase.SETUP
    referee.press("N")  # and the table goes on: N deals
    assert referee.game.phase is Phase.IN_GAME
    referee.store.close()
    again = open_referee(tmp_path)  # the next boot resumes that game, no notice
    assert again.view().kind == "table" and again.game.phase is Phase.IN_GAME
    again.store.close()
    return moved


def _assert_moved_aside_and_salvaged(tmp_path: Path, stored: list[tuple[int, list[str]]],
                                     found: bytes | None = None) -> Path:
    """A journal SQLite cannot read, whose lines are still there: moved aside
    as it was (``found``: its bytes), and the lines whose CRC chain holds are
    the fresh journal (each game as stored, up to its first line lost);
    said as damage, how many were recovered."""
    referee = open_referee(tmp_path)
    view = referee.view()
    assert view.kind == "notice" and view.title == "Journal damaged", view
    damage = referee.store.damage
    assert damage is not None and referee.store.moved_aside is None
    kept = damage.kept_as
    assert ".unreadable-" in kept.name and damage.reason.startswith("unreadable by SQLite (")
    if found is not None:
        assert kept.read_bytes() == found  # moved, byte for byte: never deleted
    assert "salvaged: recovered" in (tmp_path / (kept.name + ".reason")).read_text()
    assert any(f"Recovered {damage.recovered} of" in text for text in view.lines), view.lines
    before = dict(stored)
    for info in referee.store.games():
        lines = referee.store.lines(info.id)
        assert lines == before[info.id][:len(lines)]
    assert 0 < damage.recovered <= damage.acknowledged
    referee.store.close()
    again = open_referee(tmp_path)  # the next boot: the fresh journal, no notice
    assert again.store.damage is None and again.store.moved_aside is None
    again.store.close()
    return kept


def test_garbage_over_the_database_is_moved_aside_and_shown(tmp_path: Path) -> None:
    referee = open_referee(tmp_path)
    play(referee, random.Random(2), 10)
    referee.store.close()
    garbage = _garbage(tmp_path / JOURNAL_NAME)
    _assert_moved_aside_and_clean(tmp_path, garbage)


def test_garbage_over_the_pages_the_wal_holds_loses_nothing(tmp_path: Path) -> None:
    """Never checkpointed, the -wal holds the pages written since the
    journal was made: SQLite reads them from there, so garbage over the main
    file's copies of them changes nothing (nothing to move)."""
    referee = open_referee(tmp_path)
    lines = play(referee, random.Random(4), 10)
    wal = (tmp_path / (JOURNAL_NAME + "-wal")).read_bytes()  # as a power cut leaves it
    referee.store.close()  # (a clean close checkpoints and removes the -wal)
    (tmp_path / (JOURNAL_NAME + "-wal")).write_bytes(wal)
    page = 4096
    held = {int.from_bytes(wal[at:at + 4], "big")
            for at in range(32, len(wal), 24 + page)}  # each frame's page number
    assert held and 1 not in held  # the journal was made whole: its schema page never changed
    path = tmp_path / JOURNAL_NAME
    data = bytearray(path.read_bytes())
    for number in held:
        data[(number - 1) * page:number * page] = random.Random(number).randbytes(page)
    path.write_bytes(bytes(data))
    referee = open_referee(tmp_path)
    assert referee.store.moved_aside is None and referee.view().kind == "table"
    assert referee.store.lines(referee.game_id)[1:] == lines
    referee.store.close()


def test_garbage_over_the_database_with_its_wal_moves_both(tmp_path: Path) -> None:
    referee = open_referee(tmp_path)
    play(referee, random.Random(4), 10)
    referee.store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    play(referee, random.Random(5), 3)  # the -wal now holds only the last pages
    wal = (tmp_path / (JOURNAL_NAME + "-wal")).read_bytes()  # as a power cut leaves it
    referee.store.close()
    stored = stored_games(tmp_path)
    (tmp_path / (JOURNAL_NAME + "-wal")).write_bytes(wal)
    _garbage(tmp_path / JOURNAL_NAME)
    # The -wal's pages hold the lines still: salvaged (issue 21).
    moved = _assert_moved_aside_and_salvaged(tmp_path, stored)
    assert Path(str(moved) + "-wal").read_bytes() == wal


def test_a_corrupt_page_is_moved_aside(tmp_path: Path) -> None:
    referee = open_referee(tmp_path)
    play(referee, random.Random(5), 60)
    referee.store.close()
    stored = stored_games(tmp_path)
    path = tmp_path / JOURNAL_NAME
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) >= 3 * page
    data[page + 100 : 2 * page] = random.Random(6).randbytes(page - 100)
    path.write_bytes(bytes(data))
    # The lines are on other pages: salvaged (issue 21).
    _assert_moved_aside_and_salvaged(tmp_path, stored, bytes(data))


def test_lines_out_of_sequence_are_moved_aside(tmp_path: Path) -> None:
    referee = open_referee(tmp_path)
    play(referee, random.Random(8), 12)
    game_id = referee.game_id
    referee.store.close()
    db = sqlite3.connect(tmp_path / JOURNAL_NAME)
    stored = stored_games(tmp_path)
    db.execute("DELETE FROM lines WHERE game_id=? AND seq=3", (game_id,))
    db.commit()
    db.close()
    # The game up to the line missing is salvaged (issue 21).
    _assert_moved_aside_and_salvaged(tmp_path, stored)
    referee = open_referee(tmp_path)
    assert len(referee.store.lines(game_id)) == 3
    referee.store.close()


def test_values_of_the_wrong_kind_are_moved_aside(tmp_path: Path) -> None:
    referee = open_referee(tmp_path)
    play(referee, random.Random(9), 5)
    referee.store.close()
    db = sqlite3.connect(tmp_path / JOURNAL_NAME)
    stored = stored_games(tmp_path)
    db.execute("UPDATE lines SET text=x'00ff41' WHERE seq=2")  # a BLOB, not text
    db.commit()
    db.close()
    # Each game up to its line 3 (a BLOB's CRC does not hold) is salvaged (issue 21).
    _assert_moved_aside_and_salvaged(tmp_path, stored)


def test_a_line_that_is_not_utf8_is_a_line_that_does_not_replay(tmp_path: Path) -> None:
    referee = open_referee(tmp_path)
    play(referee, random.Random(9), 5)
    bad_id = referee.game_id
    referee.store.close()
    db = sqlite3.connect(tmp_path / JOURNAL_NAME)
    db.execute("UPDATE lines SET text=CAST(x'ff41' AS TEXT) WHERE seq=2")
    db.commit()
    db.close()
    rechain(tmp_path)  # as if stored so: the journal's CRCs would catch the edit
    referee = open_referee(tmp_path)
    assert referee.view().kind == "notice" and referee.view().title == "Game not resumed"
    assert referee.store.lines(bad_id)[2] == "\ufffdA"  # readable, kept, not raised
    assert referee.game_id != bad_id and referee.game.phase is Phase.SETUP
    referee.store.close()


def test_a_foreign_database_is_moved_aside(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / JOURNAL_NAME)
    db.execute("CREATE TABLE games (id INTEGER PRIMARY KEY, name TEXT)")  # not ours
    db.commit()
    db.close()
    _assert_moved_aside_and_clean(tmp_path)


def test_a_wal_without_its_journal_is_moved_aside(tmp_path: Path) -> None:
    """A move aside cut short by a power cut leaves the -wal behind: it must
    not be replayed into the fresh journal."""
    referee = open_referee(tmp_path)
    play(referee, random.Random(10), 10)
    wal = (tmp_path / (JOURNAL_NAME + "-wal")).read_bytes()
    referee.store.close()
    (tmp_path / JOURNAL_NAME).rename(tmp_path / (JOURNAL_NAME + ".unreadable-x"))
    (tmp_path / (JOURNAL_NAME + "-wal")).write_bytes(wal)
    referee = open_referee(tmp_path)
    moved = referee.store.moved_aside
    assert moved is not None and ".orphan-" in moved.name
    assert Path(str(moved) + "-wal").read_bytes() == wal
    assert referee.view().kind == "notice"
    assert referee.game.phase is Phase.SETUP and len(referee.store.games()) == 1
    referee.store.close()


def test_a_game_whose_lines_do_not_replay_is_kept_and_shown(tmp_path: Path) -> None:
    """The database is fine but the latest game's lines do not replay (a line
    the engine refuses): the notice says so, the referee starts a clean game,
    and the bad game stays in the journal, untouched, listed and readable."""
    referee = open_referee(tmp_path)
    play(referee, random.Random(11), 1)
    while referee.game.hand.trump is None:
        play(referee, random.Random(12), 1)
    bad_id = referee.game_id
    referee.store.append(bad_id, "upcard 9H")  # bidding is over: refused on replay
    referee.store.append(bad_id, "trick N")
    before = referee.store.lines(bad_id)
    referee.store.close()

    referee = open_referee(tmp_path)
    view = referee.view()
    assert view.kind == "notice" and view.title == "Game not resumed"
    assert any("line" in text for text in view.lines), view.lines
    assert referee.game_id != bad_id and referee.game.phase is Phase.SETUP
    assert referee.store.lines(bad_id) == before  # never deleted nor changed
    assert [g.id for g in referee.store.games()] == [bad_id, referee.game_id]
    with pytest.raises(JournalError):
        referee.store.export(bad_id)
    referee.press("OK")
    assert referee.view().kind != "notice"
    referee.press("W")
    referee.store.close()
    again = open_referee(tmp_path)  # the clean game is the one resumed now
    assert again.view().kind == "table" and again.game.phase is Phase.IN_GAME
    again.store.close()


@pytest.mark.parametrize("garbage", ["trick Q", "game dealer=N extra", "\x00\x01",
                                     "score NS=9 EW=9"])
def test_unparsable_lines_do_not_stop_the_referee(tmp_path: Path, garbage: str) -> None:
    referee = open_referee(tmp_path)
    play(referee, random.Random(13), 4)
    referee.store.append(referee.game_id, garbage)
    referee.store.close()
    referee = open_referee(tmp_path)
    assert referee.view().kind == "notice"
    assert referee.game.phase is Phase.SETUP
    referee.store.close()


def test_an_unopenable_journal_is_not_moved_aside(tmp_path: Path) -> None:
    (tmp_path / JOURNAL_NAME).mkdir()  # SQLITE_CANTOPEN: not the file's fault
    with pytest.raises(JournalError):
        Store(tmp_path)
    assert (tmp_path / JOURNAL_NAME).is_dir()
    assert not [p for p in tmp_path.iterdir() if ".unreadable-" in p.name]


def test_a_locked_journal_is_not_moved_aside(tmp_path: Path) -> None:
    """Another process holding the journal (an export tool, a second
    referee) makes the open fail after SQLite's busy timeout; the journal
    is good and must stay where it is."""
    referee = open_referee(tmp_path)
    play(referee, random.Random(14), 6)
    referee.store.close()
    holder = sqlite3.connect(tmp_path / JOURNAL_NAME, isolation_level=None,
                             check_same_thread=False)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE games SET flow=flow")
    try:
        with pytest.raises(JournalError, match="locked"):
            Store(tmp_path, busy_timeout=0.2)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert not [p for p in tmp_path.iterdir() if ".unreadable-" in p.name]
    store = Store(tmp_path)
    assert store.moved_aside is None and len(store.lines(store.latest() or 0)) == 7
    store.close()


def test_the_store_is_usable_from_the_serial_thread(tmp_path: Path) -> None:
    """Reads from another thread (the serial link's export) while the main
    loop appends: check_same_thread is off and reads see committed lines."""
    store = Store(tmp_path)
    game = store.new_game(["players N=a E=b S=c W=d"])
    seen: list[int] = []
    thread = threading.Thread(target=lambda: seen.append(len(store.lines(game))))
    store.append(game, "game dealer=N")
    thread.start()
    thread.join()
    assert seen == [2]
    store.close()


def test_random_games_with_restarts_replay_to_the_same_state(tmp_path: Path) -> None:
    """Many short sessions (a restart between each) over several games: the
    journal always replays to the state the referee had when it stopped."""
    rng = random.Random(15)
    config = make_config(tmp_path)
    for _ in range(25):
        referee = open_referee(tmp_path, config=config)
        assert referee.view().kind != "notice"
        play(referee, rng, rng.randint(0, 25), undo_p=0.15)
        state = (dict(referee.game.score), referee.game.winner, referee.game.phase,
                 [e.line() for e in referee.game.entries])
        referee.store.close()
        again = open_referee(tmp_path, config=config)
        assert (dict(again.game.score), again.game.winner, again.game.phase,
                [e.line() for e in again.game.entries]) == state
        again.store.close()
    games = stored_games(tmp_path)
    assert len(games) >= 1
    assert all(replay("\n".join([HEADER, *lines]) + "\n").error is None for _, lines in games)


def test_kept_settings_open_the_next_game_after_a_restart(tmp_path: Path) -> None:
    referee = open_referee(tmp_path)
    referee.set_next_names({Seat.N: "Nora"})
    referee.set_next_rules(Rules(target=5))
    play_to_the_end(referee, random.Random(3))
    referee.store.close()
    referee = open_referee(tmp_path)  # the config file still has the standard setup
    assert referee.config.names[Seat.N] == "Nora"
    assert referee.config.rules == Rules(target=5)
    assert referee.enter(NewGame(Seat.E)) is None
    play(referee, random.Random(3), 1)  # its first entry stores it
    lines = referee.store.lines(referee.game_id)
    assert lines[:2] == ["rules target=5", "players N=Nora E=Sigríður S=South W=Anna"]
    assert referee.game.rules.target == 5
    referee.store.close()


def test_a_damaged_kept_setting_leaves_the_config_files(tmp_path: Path) -> None:
    referee = open_referee(tmp_path)
    referee.store.set_setting("players", "players Q=Nobody")
    referee.store.set_setting("rules", "rules target=7")
    referee.store.close()
    referee = open_referee(tmp_path)
    assert referee.config.names == make_config(tmp_path).names
    assert referee.config.rules == Rules(target=7)
    referee.store.close()


def test_a_setting_of_the_wrong_kind_is_moved_aside(tmp_path: Path) -> None:
    referee = open_referee(tmp_path)
    referee.store.set_setting("rules", "rules target=7")
    referee.store.close()
    db = sqlite3.connect(tmp_path / JOURNAL_NAME)
    stored = stored_games(tmp_path)
    db.execute("UPDATE settings SET value=x'00ff41'")
    db.commit()
    db.close()
    # The lines are sound: salvaged, the setting left out (issue 21).
    _assert_moved_aside_and_salvaged(tmp_path, stored)
    referee = open_referee(tmp_path)
    assert "rules" not in referee.store.settings()
    referee.store.close()


def test_a_commit_without_a_new_line_flushes_no_record_of_acknowledged_lines(
        tmp_path: Path) -> None:
    """The record in ``journal.acks`` is written and flushed once per new line:
    a flow position (a cursor move, a half-made call) costs one flush, not two,
    and the record still says every line acknowledged (read back after close)."""
    from firmware.journal.acks import read_acks

    store = Store(tmp_path)
    game = store.new_game(["players N=a E=b S=c W=d"])
    store.append(game, "game dealer=N")
    acks = store._acks
    assert acks is not None
    before = acks.next
    store.save_flow(game, '{"cursor": 1}')
    store.save_flow(game, '{"cursor": 2}')
    store.probe(game, '{"cursor": 2}')
    assert acks.next == before  # no record written
    store.append(game, "upcard H")
    assert acks.next > before  # a new line: its record
    store.close()
    recorded = read_acks(tmp_path / "journal.acks")
    assert recorded is not None and recorded.lines == 3 and recorded.problem is None
