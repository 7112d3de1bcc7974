"""A command that needs an optional part (a pip extra) that is not installed
says so in one line, naming the extra and the command that installs it, and
exits 2 (issue 20: ``club serve`` without the ``club`` extra stopped with a
``ModuleNotFoundError`` traceback)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from firmware.exits import EXIT_USAGE
from firmware.optional import EXTRA_OF_MODULE

ROOT = Path(__file__).resolve().parents[2]

# The interpreter as it is without the club extra: its modules cannot be imported.
WITHOUT_CLUB = """
import sys
from importlib.abc import MetaPathFinder

class Missing(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {"starlette", "sse_starlette", "uvicorn"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Missing())
from firmware.cli import main
sys.argv[0] = "euchre-referee"
raise SystemExit(main())
"""


def test_club_serve_without_the_club_extra_says_what_to_install(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_CLUB, "club", "serve", "--broker", "mqtt://127.0.0.1:9",
         "--state-dir", str(tmp_path / "night")],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (done.returncode, done.stdout) == (EXIT_USAGE, ""), done.stderr
    assert done.stderr.splitlines() == [
        "euchre-referee: club serve needs the optional part 'club' (uvicorn is not installed): "
        "pip install 'euchre-referee[club]'"]
    assert not (tmp_path / "night").exists()


def test_each_optional_module_is_of_its_extra_in_pyproject() -> None:
    """The table of optional modules and pyproject.toml's extras agree (a
    distribution's module is its name with '-' as '_')."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["optional-dependencies"]
    for extra in set(EXTRA_OF_MODULE.values()):
        modules = {re.split(r"[<>=!~; \[]", requirement)[0].replace("-", "_").lower()
                   for requirement in extras[extra]}
        assert modules == {m for m, e in EXTRA_OF_MODULE.items() if e == extra}, extra
