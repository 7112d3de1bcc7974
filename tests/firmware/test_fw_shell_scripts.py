"""Every shell script of the repository passes shellcheck (issue 20: the
check never ran, shellcheck was not among scripts/system-deps.sh's packages)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support.system_tools import PACKAGES, missing

ROOT = Path(__file__).resolve().parents[2]


def shell_scripts() -> list[Path]:
    """The scripts at the top, in scripts/ and .ci/: a shell's #! line, or *.sh."""
    found = []
    for folder in (ROOT, ROOT / "scripts", ROOT / ".ci"):
        for path in sorted(folder.iterdir()):
            if not path.is_file():
                continue
            with open(path, "rb") as handle:
                first = handle.readline()
            if path.suffix == ".sh" or (first.startswith(b"#!") and first.rstrip().endswith(
                    (b"sh", b"bash"))):
                found.append(path)
    return found


def test_the_scripts_are_found() -> None:
    names = {str(path.relative_to(ROOT)) for path in shell_scripts()}
    assert {"referee", "test", ".ci/run", "scripts/venv.sh", "scripts/install-pi.sh",
            "scripts/system-deps.sh"} <= names


def test_system_deps_installs_shellcheck() -> None:
    text = (ROOT / "scripts" / "system-deps.sh").read_text(encoding="utf-8")
    [line] = [line for line in text.splitlines() if line.startswith("packages=(")]
    assert "shellcheck" in line.removeprefix("packages=(").rstrip(")").split()


def test_system_deps_installs_every_program_the_tests_run() -> None:
    """Each package a skip names (support.system_tools) is one the script
    installs as root: strace, nodejs and openssl were run by tests but not
    installed, so a fresh machine without them skipped those tests for good."""
    text = (ROOT / "scripts" / "system-deps.sh").read_text(encoding="utf-8")
    [listed] = re.findall(r"^packages=\(([^)]*)\)", text, re.MULTILINE)
    assert set(PACKAGES.values()) <= set(listed.split())


@pytest.mark.parametrize("script", shell_scripts(), ids=lambda path: str(path.relative_to(ROOT)))
def test_shellcheck_finds_nothing(script: Path) -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip(missing("shellcheck"))
    done = subprocess.run(["shellcheck", "-x", str(script.relative_to(ROOT))], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout
