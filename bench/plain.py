"""The benches' plain install: a checkout installed as a Pi has it, not editable.

An editable install's start is not a Pi's: its finder and ``.pth`` files cost
about 100M instructions at every start (``python -c pass``: 144M in this
repo's ``.venv``, 38M in a plain venv), and every import goes through them.
So the benches measure in a fresh venv without system packages where the
checkout is installed by ``pip --python VENV/bin/python install --no-deps
CHECKOUT`` (a wheel built from the checkout, its ``euchre-referee`` script
written for that venv, as ``pip install`` on a Pi writes it); the
dependencies (gpiozero, pyserial, open-spiel...) are this interpreter's,
reached by one ``.pth`` line per site directory.

:func:`rerun` runs a bench again inside such an install (made in a temporary
folder, removed after); the bench's ``--here`` skips that and measures in the
interpreter it was started with.  :func:`packages` imports the project's
packages from the install the bench runs in, then makes ``tests/`` reachable
(``support.*``) without letting ``tests/drivers`` hide the real ``drivers``.
"""

from __future__ import annotations

import os
import site
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
PLAIN = "EUCHRE_BENCH_PLAIN"
"""Set to the plain venv's folder in a bench run again inside it."""


def dependency_dirs() -> list[str]:
    """This interpreter's site directories (a venv's, and the system's if it sees them)."""
    dirs = [*site.getsitepackages()]
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        dirs.append(site.getusersitepackages())
    return list(dict.fromkeys(dirs))


def install(root: Path, where: Path, python: str | None = None) -> Path:
    """A venv at ``where`` (of ``python``, else this interpreter's base) with
    ``root`` installed in it, not editable; returns its python."""
    base = python or getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(where)], check=True,
                   capture_output=True)
    venv_python = where / "bin" / "python"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv_python), "install", "--quiet",
         "--no-deps", "--no-warn-script-location", str(root)],
        capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"pip could not install {root} into {where}:\n{done.stderr[-2000:]}")
    purelib = subprocess.run(
        [str(venv_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / "bench-dependencies.pth").write_text(
        "\n".join(dependency_dirs()) + "\n", encoding="utf-8")
    return venv_python


def in_plain_install() -> bool:
    return os.environ.get(PLAIN) == sys.prefix


def rerun(script: str, argv: Sequence[str], root: Path = ROOT,
          python: str | None = None) -> int:
    """Run ``script`` with ``argv`` in a fresh plain install of ``root``; its exit code."""
    with tempfile.TemporaryDirectory(prefix="euchre-bench-") as work:
        where = Path(work) / "venv"
        venv_python = install(root, where, python)
        version = subprocess.run([str(venv_python), "-c", "import platform; "
                                  "print(platform.python_version())"],
                                 check=True, capture_output=True, text=True).stdout.strip()
        print(f"[plain install of {root} (not editable), Python {version}, in {where}; "
              "--here measures in this interpreter instead]", flush=True)
        env = {**os.environ, PLAIN: str(where)}
        return subprocess.run([str(venv_python), script, *argv], env=env,
                              check=False).returncode


def packages() -> None:
    """Import ``euchre_core``, ``drivers`` and ``firmware`` from the install
    (the checkout's folder if none has them), then put ``tests/`` last on
    ``sys.path`` for ``support.*``."""
    try:
        import drivers  # noqa: F401
        import euchre_core  # noqa: F401
        import firmware  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(ROOT))
        import drivers  # noqa: F401
        import euchre_core  # noqa: F401
        import firmware  # noqa: F401
    if str(TESTS) not in sys.path:
        sys.path.append(str(TESTS))


def where_from() -> str:
    """Where ``firmware`` was imported from, for a bench's header."""
    import firmware

    kind = "plain install" if in_plain_install() else "this interpreter"
    return f"{Path(firmware.__file__).parent.parent} ({kind})"


def percentile(ordered: Sequence[float], fraction: float) -> float:
    """The nearest-rank value at ``fraction`` of ``ordered`` (sorted)."""
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def spread(values: Sequence[float], scale: float = 1.0, digits: int = 2,
           unit: str = "") -> str:
    """``median (min–max)`` of ``values`` times ``scale``."""
    low, mid, high = min(values), statistics.median(values), max(values)
    return (f"{mid * scale:.{digits}f}{unit} ({low * scale:.{digits}f}–"
            f"{high * scale:.{digits}f}{unit})")
