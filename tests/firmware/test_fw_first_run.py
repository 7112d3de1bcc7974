"""A first run anywhere: the screens' fonts come with the install.

The project is built into a wheel as ``pip install .`` would install it,
unpacked into a folder of its own, and ``euchre-referee emulate`` is started
from there in a real pseudo-terminal with the distribution's font folder
hidden (a tmpfs mounted over ``/usr/share/fonts`` in a private mount
namespace: no ``fonts-terminus-otb``, no ``fonts-dejavu``).  The first frame
must be drawn.  The mount needs root and ``unshare``; the wheel and the
package data are checked without them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pexpect
import pytest

ROOT = Path(__file__).resolve().parents[2]
FONT_FILES = ("firmware/fontfiles/terminus-normal.otb", "firmware/fontfiles/terminus-bold.otb",
              "firmware/fontfiles/OFL.txt")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project as ``pip install .`` installs it (no dependencies: those are
    the venv's), in a folder of its own; returns that folder."""
    wheels = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],
        capture_output=True, text=True, timeout=300, check=False)
    if built.returncode != 0:
        pytest.fail(f"pip wheel failed:\n{built.stderr[-2000:]}")
    (wheel,) = wheels.glob("euchre_referee-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert set(FONT_FILES) <= names, "the wheel lacks the screens' fonts"
    site = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
         str(wheel)], capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        pytest.fail(f"pip install --target failed:\n{done.stderr[-2000:]}")
    return site


def _env(site: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    env.update(PYTHONPATH=str(site), TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    return env


def test_the_installed_referee_uses_its_own_fonts(installed: Path, tmp_path: Path) -> None:
    shown = subprocess.run(
        [sys.executable, "-c", "import firmware.fonts as f; print(f.load_fonts().big.path)"],
        cwd=tmp_path, env=_env(installed), capture_output=True, text=True, timeout=60,
        check=True)
    assert shown.stdout.strip() == str(installed / "firmware" / "fontfiles" /
                                       "terminus-bold.otb")


@pytest.mark.skipif(os.geteuid() != 0, reason="hiding /usr/share/fonts needs root (a mount)")
@pytest.mark.skipif(shutil.which("unshare") is None, reason="unshare (util-linux) is missing")
@pytest.mark.timeout(120)
def test_first_run_without_the_distributions_fonts(installed: Path, tmp_path: Path) -> None:
    script = (
        "mount -t tmpfs -o size=1m none /usr/share/fonts && "
        "test -z \"$(ls -A /usr/share/fonts)\" && "
        f"exec {sys.executable} -m firmware emulate --state-dir {tmp_path / 'state'}"
    )
    child = pexpect.spawn("unshare", ["--mount", "--propagation", "private", "sh", "-c", script],
                          cwd=str(tmp_path), env=_env(installed), dimensions=(40, 140),
                          timeout=60, encoding="utf-8")
    try:
        child.expect_exact("┌─ OLED 128x64 ─")  # the first frame, drawn with the shipped fonts
        child.expect_exact("» Tap the first dealer · ALONE: names, rules")
        child.send("q")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before
    assert "is missing" not in (child.before or "")
