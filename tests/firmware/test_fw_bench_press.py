"""The press benches measure what they say (bench/latency_bench.py, whose
table press_instructions.py and flush_bench.py use too): a press is timed from
the mock pin's edge to the panel's last byte, a press after which no byte
reaches the panel is reported as such at once (never waited for), the games
played one after another are the same game, and the flushes are put to their
presses.  The figures themselves are the benches'."""

from __future__ import annotations

import time
from pathlib import Path
from types import ModuleType

import pytest
from support.scripts import load_script
from support.system_tools import needs

from firmware.app import Referee
from firmware.config import Config


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_script("bench/latency_bench.py")


def test_a_press_is_timed_to_the_panels_last_byte_and_one_without_a_frame_is_said(
        bench: ModuleType, tmp_path: Path) -> None:
    table = bench.Table(tmp_path / "state")
    try:
        # The 12th press taps a seat that sits out (refused, said on the
        # screen); the same tap again changes nothing on the screen.
        timed = bench.play(table, bench.SEATS_GAME[:12])
        start = time.monotonic()
        silent = table.press("N")
        waited = time.monotonic() - start
        panel_ok = table.panel_matches()
    finally:
        table.close()
    assert all(p.answered and p.ms is not None and p.ms > 0 and p.data_bytes > 0
               for p in timed), timed
    assert silent == bench.Press("N", None, 0, True)
    assert waited < 1.0
    assert panel_ok


def test_the_games_played_one_after_another_are_the_same_game(
        bench: ModuleType, tmp_path: Path) -> None:
    store = bench.Store(tmp_path)
    referee = Referee(Config(state_dir=tmp_path, result_s=0.0, message_s=3600.0), store,
                      renderer=lambda view: view)
    for name in bench.game_presses(3):
        referee.press(name)
        referee.refresh()
    stored = [store.lines(info[0]) for info in store.games()]
    store.close()
    assert len(stored) == 3
    assert all(lines == bench.SEATS_JOURNAL[1:] for lines in stored)


@needs("strace")
def test_the_flushes_are_put_to_their_presses(bench: ModuleType, tmp_path: Path) -> None:
    flush = load_script("bench/flush_bench.py")
    lines = flush.count(tmp_path / "state", tmp_path)
    assert lines[0].startswith(f"one game, {len(bench.SEATS_GAME)} presses")  # each one traced
    entry = next(line for line in lines if line.strip().startswith("entry"))
    assert "fdatasync journal.sqlite3-wal 1.00" in entry, lines
    assert "fdatasync journal.acks 1.00" in entry, lines
    flow_only = next(line for line in lines if line.strip().startswith("flow only"))
    assert "flushes a press 0.00 (0-0)" in flow_only, lines  # no record without a new line


def test_the_benches_plain_install_is_not_editable(tmp_path: Path) -> None:
    """bench/plain.py installs the checkout as a Pi has it: the packages and the
    euchre-referee script in the venv, no editable finder at start-up."""
    import subprocess

    plain = load_script("bench/plain.py")
    python = plain.install(plain.ROOT, tmp_path / "venv")
    shown = subprocess.run(
        [str(python), "-c", "import sys, firmware, gpiozero; print(firmware.__file__); "
         "print(any('editable' in name for name in sys.modules))"],
        cwd=tmp_path, check=True, capture_output=True, text=True).stdout.split()
    assert Path(shown[0]).is_relative_to(tmp_path / "venv")
    assert shown[1] == "False"
    script = tmp_path / "venv" / "bin" / "euchre-referee"
    assert script.read_text().startswith(f"#!{python}")
    done = subprocess.run([str(script), "--help"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0 and "replay" in done.stdout
