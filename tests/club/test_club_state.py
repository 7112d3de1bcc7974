"""A club box's ``club.json`` damaged for real (issue 21): every flipped bit
of a real one (a seeded sample) is detected, kept aside byte for byte, said,
and the box comes back against a real mosquitto and director with its id, its
rounds and the game in progress, and is never refused
(``tests/support/club_kit.py``); the file is written atomically (seen with
strace); a lost ``club.json`` and a round started just before a power cut
come back from the journal and the director's assignment."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.broker import Mosquitto, needs_mosquitto
from support.club_kit import ClubFlips
from support.system_tools import needs

from firmware.club.box import RECORD_KEY, STATE_NAME, BoxState, ClubStateError, set_aside
from firmware.journal import Store

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = 300
"""Bits flipped per run (of about 900): a seeded sample; bench/faults.py --only
club.json runs more."""


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory, mosquitto: Mosquitto) -> Iterator[ClubFlips]:
    # An event of its own: the session's broker keeps the retained assignments of a
    # night set up before (this fixture again, when the module's tests run apart).
    workdir = tmp_path_factory.mktemp("club-flips")
    yield ClubFlips(mosquitto.url, workdir, event=workdir.name).prepare()


@needs_mosquitto
@pytest.mark.timeout(900)
def test_every_flipped_bit_is_said_kept_aside_and_rebuilt(night: ClubFlips) -> None:
    bits = random.Random(21).sample(range(night.bits), min(SAMPLE, night.bits))
    verdicts = [night.case(bit) for bit in bits]
    bad = [verdict.describe() for verdict in verdicts if not verdict.ok]
    assert not bad, f"{len(bad)} of {len(bits)}:\n" + "\n".join(bad[:10])
    said = verdicts[0].notes
    assert len(said) == 1 and said[0].startswith("club: club.json damaged (")
    assert "kept aside as club.json.damaged-" in said[0]
    assert said[0].endswith("and the director's assignments")


@needs_mosquitto
def test_a_lost_club_json_comes_back_from_the_journal(night: ClubFlips) -> None:
    verdict = night.case(None, damage=lambda box: (box / STATE_NAME).unlink())
    assert verdict.ok, verdict.describe()


@needs_mosquitto
def test_a_round_started_just_before_a_power_cut_is_taken_up(night: ClubFlips) -> None:
    """club.json and the journal's record written before round 2's game was
    (a kill between the game and its record): the director's assignment
    names the players and rules of the game in progress, so it is taken up as
    round 2's, with no new game."""

    def before_round_2(box: Path) -> None:
        state = BoxState.decode((box / STATE_NAME).read_bytes())
        round_2 = max(state.rounds, key=lambda game: state.rounds[game])
        del state.rounds[round_2]
        state.acked.pop(round_2, None)
        state.save(box / STATE_NAME)
        store = Store(box)
        try:
            key = RECORD_KEY.format(event=night.event, table=night.TABLE)
            record = json.loads(store.settings()[key])
            del record["rounds"][str(round_2)]
            store.set_setting(key, json.dumps(record))
        finally:
            store.close()

    verdict = night.case(None, damage=before_round_2)
    assert verdict.ok, verdict.describe()


def test_club_json_reads_back_exactly_or_is_damaged(tmp_path: Path) -> None:
    state = BoxState("abc123", "club", 3, {2: 1, 5: 2}, {2: 40, 5: 7})
    path = tmp_path / STATE_NAME
    state.save(path)
    assert BoxState.decode(path.read_bytes()) == state
    assert json.loads(path.read_text())["rounds"] == {"2": 1, "5": 2}  # still plain JSON
    assert not (tmp_path / (STATE_NAME + ".tmp")).exists()
    legacy = json.dumps({"box": "abc123", "event": "club", "table": 3, "rounds": {"2": 1},
                         "acked": {"2": 4}}).encode()
    assert BoxState.decode(legacy) == BoxState("abc123", "club", 3, {2: 1}, {2: 4})
    raw = path.read_bytes()
    for bad in (b"", b"\0" * len(raw), raw[:-9], raw.replace(b'"5":7', b'"5":8'),
                raw.replace(b'"acked":{"2":40', b'"acked":{"2":41'), b"[1]", b"\xff" + raw,
                legacy.replace(b'"table": 3', b'"table": true'),
                legacy.replace(b'"2": 4', b'"02": 4')):
        with pytest.raises(ClubStateError):
            BoxState.decode(bad)


def test_a_damaged_club_json_is_set_aside_with_its_reason(tmp_path: Path) -> None:
    path = tmp_path / STATE_NAME
    path.write_bytes(b"\x00garbage")
    first = set_aside(path, "why")
    path.write_bytes(b"more")
    second = set_aside(path, "again")
    assert first != second and not path.exists()
    assert first.read_bytes() == b"\x00garbage" and second.read_bytes() == b"more"
    assert first.with_name(first.name + ".reason").read_text() == "why\n"


@needs("strace")
def test_club_json_is_written_atomically(tmp_path: Path) -> None:
    """A temporary, written and fsynced, renamed over club.json, then the
    directory fsynced: seen in the system calls themselves."""
    path = tmp_path / STATE_NAME
    trace = tmp_path / "trace"
    code = ("import sys; from pathlib import Path; from firmware.club.box import BoxState; "
            "BoxState('abc', 'club', 1, {2: 1}, {2: 3}).save(Path(sys.argv[1]))")
    subprocess.run(["strace", "-f", "-qq", "-o", str(trace), "-e",
                    "trace=openat,write,fsync,fdatasync,rename,renameat,renameat2,close",
                    "-P", str(path), "-P", f"{path}.tmp", "-P", str(tmp_path),
                    sys.executable, "-c", code, str(path)], check=True, cwd=ROOT)
    calls = [line.split("(")[0].split()[-1] for line in trace.read_text().splitlines()]
    opened = [n for n, line in enumerate(trace.read_text().splitlines())
              if "O_DIRECTORY" in line]
    assert calls[:4] == ["openat", "write", "fsync", "close"], calls
    assert calls[4].startswith("rename"), calls
    assert opened and opened[0] > 4 and "fsync" in calls[opened[0]:], calls
    assert BoxState.decode(path.read_bytes()).acked == {2: 3}
