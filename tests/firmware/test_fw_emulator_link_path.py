"""The emulator's serial-link path is on its screen for as long as it runs
(issue 20: it was a note that the first frame wiped, so the path could be
read only on stderr, after quitting)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

from PIL import Image

from firmware.emulator.terminal import TerminalDisplay

ROOT = Path(__file__).resolve().parents[2]


def test_the_footer_stays_on_every_frame_and_under_a_note() -> None:
    out = io.BytesIO()
    display = TerminalDisplay(out, size=lambda: (140, 45))
    display.footer = "serial link: /dev/pts/7"
    for _ in range(2):
        display.show(Image.new("1", (128, 64)))
        assert display.out.getvalue().decode().count("serial link: /dev/pts/7") == 1
        out.seek(0)
        out.truncate()
    display.note("x: not a button")
    assert "serial link: /dev/pts/7  │  x: not a button" in out.getvalue().decode()


def test_emulate_draws_the_link_path_under_its_frames(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "firmware", "emulate", "--state-dir", str(tmp_path / "state")],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=60, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "140", "LINES": "45"})
    assert done.returncode == 0, done.stderr
    said = re.search(r"serial link on (\S+)", done.stderr.decode())
    assert said, done.stderr
    assert f"serial link: {said.group(1)}".encode() in done.stdout
