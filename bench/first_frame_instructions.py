"""Instructions from the device's start to its first frame (callgrind), and the
imports' share of them.

    apt-get install valgrind                 # once
    .venv/bin/python bench/first_frame_instructions.py [--root DIR]

The child is ``latency_bench.py``'s first-frame program (import the firmware,
build the Referee with the real renderer on luma's ``dummy`` device, draw the
first frame), run once to write byte-code caches (into a temporary
``PYTHONPYCACHEPREFIX``, as an installed package has them) and once under
``valgrind --tool=callgrind``; ``python -c pass`` is counted beside it, and the
same program stopped after its imports.  ``--root`` counts another checkout
side by side (``git worktree add /tmp/old REV``).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from latency_bench import FIRST_FRAME  # noqa: E402

IMPORTS_ONLY = FIRST_FRAME.split("state = ")[0]


def instructions(root: Path, code: str, state: Path, cache: str) -> int:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(root),
           "PYTHONPYCACHEPREFIX": cache}
    command = [sys.executable, "-c", code, str(state)]
    subprocess.run(command, cwd=root, env=env, check=True, capture_output=True)  # caches
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run(["valgrind", "--tool=callgrind",
                               f"--callgrind-out-file={out}/cg.out", *command],
                              cwd=root, env=env, check=True, capture_output=True, text=True)
    found = re.search(r"refs:\s+([\d,]+)", done.stderr)
    assert found is not None, done.stderr
    return int(found.group(1).replace(",", ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=HERE.parent)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        cache = f"{work}/pycache"
        counts = {
            name: instructions(args.root, code, Path(work) / name, cache)
            for name, code in (("pass", "pass"), ("imports", IMPORTS_ONLY),
                               ("first frame", FIRST_FRAME))
        }
    base = counts["pass"]
    print(f"{args.root}: start to first frame {counts['first frame'] / 1e6:.0f}M instructions "
          f"(imports {counts['imports'] / 1e6:.0f}M; python -c pass {base / 1e6:.0f}M)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
