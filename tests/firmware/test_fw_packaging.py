"""pyproject.toml builds without setuptools' warnings (issue 20: the first
./referee scrolled ~95 lines of them past a newcomer): the licence an SPDX
expression (PEP 639, with a setuptools that reads it), and every file of the
packages that is not Python declared as package data of the package it is in
(the data folders are packages too, found by setuptools' discovery)."""

from __future__ import annotations

import fnmatch
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_licence_is_an_spdx_expression_read_by_the_setuptools_required() -> None:
    assert isinstance(PYPROJECT["project"]["license"], str)
    assert "setuptools>=77" in PYPROJECT["build-system"]["requires"]
    for pattern in PYPROJECT["project"].get("license-files", []):
        assert list(ROOT.glob(pattern)), pattern


def tracked(folder: str) -> list[str]:
    done = subprocess.run(["git", "ls-files", "--", folder], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    return done.stdout.splitlines()


def test_every_data_file_of_the_packages_is_declared() -> None:
    setuptools = PYPROJECT["tool"]["setuptools"]
    tops = [pattern.rstrip("*") for pattern in setuptools["packages"]["find"]["include"]]
    data = setuptools["package-data"]
    undeclared = []
    for top in tops:
        for name in tracked(top):
            path = Path(name)
            if path.suffix == ".py":
                continue
            package = ".".join(path.parent.parts)
            if not any(fnmatch.fnmatch(path.name, glob) for glob in data.get(package, [])):
                undeclared.append(name)
    assert undeclared == []
