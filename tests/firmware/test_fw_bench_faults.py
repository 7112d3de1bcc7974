"""bench/faults.py measures what it says (issue 21): ``--quick`` prints one
table with a row for every system-call kind and fault, every stored file's
bit flips and the older faults, in the documented columns; and its judge
fails what must fail: a refused entry found in the game after a real restart,
an acknowledged one missing, a line never sent, a run that crashed or hung, a
restart that does not open its journal or take an entry, damage not said."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from support.crash_child import make_config, setup_lines
from support.scripts import ROOT, load_script
from support.system_tools import needs

from firmware.journal import Store


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_script("bench/faults.py")


@needs("strace")
@pytest.mark.timeout(600)
def test_quick_prints_one_table_with_every_row(bench: ModuleType) -> None:
    result = subprocess.run([sys.executable, "bench/faults.py", "--quick", "--json"],
                            capture_output=True, text=True, cwd=ROOT, timeout=580, check=False)
    lines = result.stdout.splitlines()
    assert re.fullmatch(r"fault +cases +reported +silently wrong +crashed +lost acknowledged "
                        r"+refused-but-kept +stuck", lines[0]), result.stdout
    rows = {}
    for line in lines[1:]:
        if re.fullmatch(r"\d+ cases in \d+ s.*", line):
            break
        name, _, rest = line.partition("  ")
        cells = rest.split()
        if cells[0] == "skipped:":
            rows[name.strip()] = None
            continue
        assert len(cells) == len(bench.COLUMNS) and all(c.isdigit() for c in cells), line
        rows[name.strip()] = dict(zip(bench.COLUMNS, map(int, cells), strict=True))
    expected = {f"{kind} {fault}" for kind in bench.KINDS for fault in bench.FAULTS}
    expected |= {name for name, _, _ in bench.FLIP_FILES} | {name for name, _, _ in bench.OLDER}
    expected.add(bench._ClubCases.ROW)
    assert expected <= set(rows), expected - set(rows)
    ran = {name: row for name, row in rows.items() if row is not None}
    assert sum(row["cases"] for name, row in ran.items() if name.split()[0] in bench.KINDS) >= 8
    for name, _, _ in bench.FLIP_FILES:
        assert ran[name]["cases"] == 3
    assert all(row["reported"] <= row["cases"] for row in ran.values())
    assert re.search(r"^\d+ cases in \d+ s", result.stdout, re.M)
    table = [row["fault"] for row in json.loads(lines[-1])]
    assert set(table) == set(rows)
    assert result.returncode == (1 if any(row[c] for row in ran.values()
                                          for c in bench.FAILURES) else 0)


def test_a_refused_entry_kept_after_a_real_restart_is_found(bench: ModuleType,
                                                          tmp_path: Path) -> None:
    """A journal holding a line the referee had refused (what the failed
    fsync of issue 21 left): the real restart, then the judge."""
    config = make_config(tmp_path)
    store = Store(tmp_path)
    game = store.new_game(setup_lines(config))
    for line in ("game dealer=N", "make E H", "trick E"):
        store.append(game, line)
    store.close()
    said = [("game dealer=N", "ack"), ("make E H", "ack"), ("trick E", "refused")]
    report = bench.restart(tmp_path)
    assert report["opened"] and report["takes"] is None, report
    outcome = bench.judge_run([], bench.Transcript(started={}, sent=said, returncode=0),
                              report, killed=False)
    assert outcome.refused_kept and outcome.failed
    assert outcome.wrong == (not outcome.reported)  # said nothing of it: silently wrong too
    fine = bench.judge_run([], bench.Transcript(started={}, sent=said[:2] + [
        ("trick E", "none")], returncode=0), report, killed=True)
    assert not fine.failed, fine.detail  # sent, no answer: it may be kept


def _report(games: list[list[object]], **changes: object) -> dict[str, object]:
    return {"opened": True, "read_only": False, "notice": None, "notes": [],
            "games": games, "kept_as": None, "takes": None, **changes}


SETUP = "players N=North E=East S=South W=West"


def test_the_judge_fails_what_must_fail(bench: ModuleType) -> None:
    sent = [("game dealer=N", "ack"), ("make E H", "ack"), ("trick E", "refused")]
    good = _report([[1, [SETUP, "game dealer=N", "make E H"]]])

    def judge(report: dict[str, object], sent: list[tuple[str, str]] = sent,
              prior: list[str] | None = None, **transcript: object) -> object:
        kept = {"started": {}, "sent": sent, "returncode": 0, **transcript}
        return bench.judge_run(prior or [], bench.Transcript(**kept), report, killed=False)

    assert not judge(good).failed
    lost = judge(_report([[1, [SETUP, "game dealer=N"]]]))
    assert lost.lost and lost.wrong
    said = judge(_report([[1, [SETUP, "game dealer=N"]]], notes=["journal damaged"]))
    assert said.lost and said.reported and not said.wrong
    assert judge(good, prior=["game dealer=E"]).lost  # a line acknowledged before the run
    stranger = judge(_report([[1, [SETUP, "game dealer=N", "make E H", "trick W"]]]))
    assert stranger.wrong and not stranger.refused_kept
    assert judge(good, stderr="Traceback (most recent call last):\n  ...\nKeyError: 1").crashed
    assert judge(good, returncode=1).crashed
    assert judge(good, hung="no answer within 30 s").crashed
    assert judge({"error": "exit 1: Traceback"}).crashed
    assert judge({"opened": False}).stuck
    assert judge(_report(good["games"], read_only=True)).stuck  # type: ignore[arg-type]
    assert judge(_report(good["games"], takes="the card is full")).stuck  # type: ignore[arg-type]


def test_a_flip_judge_fails_unsaid_damage_and_lost_intact_lines(bench: ModuleType,
                                                                tmp_path: Path) -> None:
    acknowledged = [(1, [SETUP, "game dealer=N", "make E H", "trick E"])]
    copies = [[("journal.sqlite3", 100 * n, 100 * n + 20)] for n in range(4)]
    stored = bench.Stored(tmp_path, acknowledged, copies)
    damaged = b"damaged"
    (tmp_path / "journal.sqlite3").write_bytes(damaged)
    short = [[1, [SETUP, "game dealer=N"]]]
    unsaid = bench.judge_flip(stored, "journal.sqlite3", 210, damaged, tmp_path,
                              _report(short))
    assert unsaid.wrong and unsaid.lost  # line 4's bytes were intact: it should be back
    (tmp_path / "journal.sqlite3.damaged-1").write_bytes(damaged)
    said = bench.judge_flip(stored, "journal.sqlite3", 210, damaged, tmp_path,
                            _report(short, notice=["Journal damaged", []]))
    assert said.reported and not said.wrong and said.lost
    only_the_flipped = bench.judge_flip(stored, "journal.sqlite3", 310, damaged, tmp_path,
                                        _report([[1, acknowledged[0][1][:3]]],
                                                notice=["Journal damaged", []]))
    assert not only_the_flipped.failed  # the flip was in line 4's only copy
    (tmp_path / "journal.sqlite3.damaged-1").unlink()
    assert bench.judge_flip(stored, "journal.sqlite3", 310, damaged, tmp_path, _report(
        [[1, acknowledged[0][1][:3]]], notice=["Journal damaged", []])).wrong  # not kept


def test_line_records_are_found_in_a_real_journal(bench: ModuleType, tmp_path: Path) -> None:
    store = Store(tmp_path)
    game = store.new_game(setup_lines(make_config(tmp_path)))
    for line in ("game dealer=N", "make E H", "trick E", "trick E"):
        store.append(game, line)
    store.close()
    copies = bench.stored_copies(tmp_path)
    assert len(copies) == 5 and all(copies), copies
