"""scripts/venv.sh, as ./referee and ./test source it, with a fake Python on
PATH (issue 20): a Python without ensurepip (Debian and Ubuntu leave it out
until python3-venv is installed) is found before .venv is made, with the one
package to install; a half-made .venv (no pip, or a first install that never
finished) is made again instead of failing on every later run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FAKE_PYTHON = r"""#!/bin/bash
# Python 3.12 for venv.sh: FAKE_NO_ENSUREPIP=1 has no ensurepip (Debian
# without python3-venv); -m venv makes a venv whose python is FAKE_VENV_PYTHON.
case "$*" in
    *version_info\ \<*) exit 0 ;;
    *ensurepip*) [ -z "${FAKE_NO_ENSUREPIP:-}" ] ;;
    *%d.%d*) echo 3.12 ;;
    "-m venv"*)
        dir="${*: -1}"
        mkdir -p "$dir/bin"
        cp "$FAKE_VENV_PYTHON" "$dir/bin/python"
        echo "venv $*" >>"$FAKE_CALLS"
        ;;
    *) exit 3 ;;
esac
"""

FAKE_VENV_PYTHON = r"""#!/bin/bash
# The venv's python: it has pip; pip install says a lot, and fails with
# FAKE_PIP_STATUS=1.
case "$*" in
    "-c import pip") exit 0 ;;
    "-m pip install"*)
        echo "pip $*" >>"$FAKE_CALLS"
        for n in 1 2 3 4 5 6 7 8 9 10; do echo "pip's line $n"; echo "a warning $n" >&2; done
        exit "${FAKE_PIP_STATUS:-0}"
        ;;
    *) exit 3 ;;
esac
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of what venv.sh reads, and a bin folder with the fake Pythons."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "venv.sh", repo / "scripts" / "venv.sh")
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    fakes = tmp_path / "bin"
    fakes.mkdir()
    for name in ("python3", "python3.13", "python3.12", "python3.11"):
        (fakes / name).write_text(FAKE_PYTHON, encoding="utf-8")
        (fakes / name).chmod(0o755)
    (tmp_path / "venv-python").write_text(FAKE_VENV_PYTHON, encoding="utf-8")
    (tmp_path / "venv-python").chmod(0o755)
    return repo


def source(repo: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``source scripts/venv.sh`` as ./referee does, with the fakes first on PATH."""
    fakes = repo.parent / "bin"
    environment = {
        "PATH": f"{fakes}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "FAKE_VENV_PYTHON": str(repo.parent / "venv-python"),
        "FAKE_CALLS": str(repo.parent / "calls"),
        "HOME": str(repo.parent), **env,
    }
    return subprocess.run(["bash", "-c", "set -euo pipefail; source scripts/venv.sh; echo ready"],
                          cwd=repo, env=environment, capture_output=True, text=True, timeout=60)


def calls(repo: Path) -> list[str]:
    path = repo.parent / "calls"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def test_a_python_without_ensurepip_is_named_before_any_venv_is_made(checkout: Path) -> None:
    done = source(checkout, FAKE_NO_ENSUREPIP="1")
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("euchre-referee: python3 (Python 3.12) cannot make a venv with pip "
                           "(no ensurepip): ")
    if shutil.which("apt-get"):
        assert "sudo apt install python3.12-venv" in line
    assert not (checkout / ".venv").exists() and calls(checkout) == []


def test_a_venv_is_made_and_installed_once(checkout: Path) -> None:
    first = source(checkout)
    assert first.returncode == 0 and first.stdout == "ready\n", first.stderr
    assert [call.split()[0] for call in calls(checkout)] == ["venv", "pip", "pip"]
    again = source(checkout)
    assert (again.returncode, again.stdout, again.stderr) == (0, "ready\n", "")
    assert len(calls(checkout)) == 3  # nothing done the second time


def test_a_real_venv_without_pip_is_made_again(checkout: Path) -> None:
    """What Debian's ``python3 -m venv`` leaves behind without python3-venv."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(checkout / ".venv")],
                   check=True)
    done = source(checkout)
    assert done.returncode == 0, done.stderr
    assert "is half made" in done.stderr
    assert [call.split()[0] for call in calls(checkout)] == ["venv", "pip", "pip"]
    assert (checkout / ".venv" / ".installed-test").is_file()


def test_a_first_install_that_failed_is_made_again(checkout: Path) -> None:
    failed = source(checkout, FAKE_PIP_STATUS="1")
    assert failed.returncode == 1
    assert not (checkout / ".venv" / ".installed-test").exists()
    done = source(checkout)
    assert done.returncode == 0, done.stderr
    assert "is half made" in done.stderr
    assert [call.split()[0] for call in calls(checkout)] == ["venv", "pip", "venv", "pip", "pip"]


def test_a_venv_not_made_here_is_never_removed(checkout: Path) -> None:
    """A .venv the user made, pip in it, no stamp: installed into, kept."""
    (checkout / ".venv" / "bin").mkdir(parents=True)
    shutil.copy(checkout.parent / "venv-python", checkout / ".venv" / "bin" / "python")
    (checkout / ".venv" / "mine").write_text("keep", encoding="utf-8")
    done = source(checkout)
    assert done.returncode == 0, done.stderr
    assert (checkout / ".venv" / "mine").is_file()
    assert [call.split()[0] for call in calls(checkout)] == ["pip", "pip"]


def test_the_first_run_says_one_line_and_keeps_pip_in_its_log(checkout: Path) -> None:
    """pip's output (setuptools' warnings and all) goes to .venv/install.log."""
    done = source(checkout)
    assert done.returncode == 0 and done.stdout == "ready\n"
    [line] = done.stderr.splitlines()
    assert line == ("making .venv with python3 and installing euchre-referee[test] into it "
                    "(once; pip's log: .venv/install.log) ...")
    log = (checkout / ".venv" / "install.log").read_text(encoding="utf-8")
    assert "pip's line 10" in log and "a warning 10" in log


def test_a_failed_install_shows_the_end_of_pips_log(checkout: Path) -> None:
    done = source(checkout, FAKE_PIP_STATUS="1")
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[1] == ("euchre-referee: installing into .venv failed; the end of "
                        f"{checkout / '.venv' / 'install.log'}:")
    assert lines[-2:] == ["pip's line 10", "a warning 10"]
