"""``euchre-referee club round`` on the command line against a real director
process (``club serve``), a box and mosquitto: ``--minutes M`` alone is a
round bounded by time alone; with ``--hands`` (or ``--target``) whichever
comes first; neither, 8 hands (firmware/club/__init__.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.broker import Mosquitto, needs_mosquitto

from firmware.club.simulate import Night

pytestmark = [needs_mosquitto, pytest.mark.timeout(300)]


def club(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "firmware", "club", *arguments],
                          capture_output=True, text=True, timeout=60)


def test_minutes_alone_is_a_round_bounded_by_time_alone(tmp_path: Path,
                                                         mosquitto: Mosquitto) -> None:
    night = Night(mosquitto.url, tmp_path, tables=1, event="timecli", pace=0.2).start()
    try:
        night.register(4)
        where = ["--director", night.url, "--state-dir", str(tmp_path / "director")]
        for arguments, described in [
                (["--minutes", "30"], "30 minutes"),
                (["--minutes", "30", "--hands", "2", "--force"], "2 hands or 30 minutes"),
                (["--minutes", "30", "--target", "5", "--force"], "a game to 5 or 30 minutes"),
                (["--force"], "8 hands")]:
            started = club("round", *where, *arguments)
            assert started.returncode == 0, started.stderr
            timed = re.search(r"^  time is called at \d\d:\d\d:\d\d \(30 minutes\)$",
                              started.stdout, re.M)
            assert (timed is not None) == ("--minutes" in arguments), started.stdout
            board = night.board()
            assert board["format"] == described, arguments
            assert (board["clock"] is not None) == ("--minutes" in arguments)
    finally:
        night.stop()
    helped = club("round", "--help")
    assert "alone, the round is bounded by time only" in " ".join(helped.stdout.split())
