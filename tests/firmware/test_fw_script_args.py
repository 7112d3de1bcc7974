"""The repository's picture and table scripts take their arguments through
argparse: ``--help`` prints the usage and writes nothing, an unknown option is
refused (issue 20: ``render_screens.py --help`` wrote its PNGs into a folder
named ``--help``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ["render_screens.py", "club_screenshot.py"]


def _run(tmp_path: Path, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / script), *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_prints_the_usage_and_writes_nothing(tmp_path: Path, script: str) -> None:
    done = _run(tmp_path, script, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {script} "), done.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("script", SCRIPTS)
def test_an_unknown_option_is_refused(tmp_path: Path, script: str) -> None:
    done = _run(tmp_path, script, "--bogus")
    assert done.returncode == 2
    assert "unrecognized arguments: --bogus" in done.stderr
    assert list(tmp_path.iterdir()) == []
