"""Instructions from the device's start to its first frame (callgrind), on a
non-editable install.

    apt-get install valgrind                 # once
    .venv/bin/python bench/first_frame_instructions.py [--root DIR]

Each checkout counted is installed as a Pi has it (``pip install --no-deps
--target`` into a fresh venv without system packages; its dependencies are
this interpreter's, reached by a ``.pth`` line), so the counts have no
editable-install finder or ``.pth`` of this machine in them.  Counted, each
run once to warm the caches and once under ``valgrind --tool=callgrind``
(with ``$NOTIFY_SOCKET`` and ``$WATCHDOG_USEC`` set, as systemd sets them):

- ``python -c pass`` in that venv;
- **run to first frame**: ``euchre-referee run`` as on a Pi with an empty
  config file and a fresh state directory, buttons on gpiozero's mock pins, the
  panel the checkout's default (here the SSD1309 on luma's ``spi``, its
  ``spidev`` and ``RPi.GPIO`` two small stand-ins; before, an SSD1306 on a
  recording I2C bus), to the first whole frame on the panel
  (``tests/support/pi_start_child.py`` of the checkout counted); and the same
  **resuming** a game (a journal holding a whole game to 10 but its last trick);
- **referee on dummy**: ``latency_bench.py``'s program (import the firmware,
  build the Referee on luma's ``dummy`` device, draw the first frame), and the
  same program stopped after its imports.

``--root`` counts another checkout side by side (``git worktree add /tmp/old REV``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from latency_bench import FIRST_FRAME, SEATS_GAME  # noqa: E402

from firmware.app import Referee  # noqa: E402
from firmware.config import Config  # noqa: E402
from firmware.journal import Store  # noqa: E402

IMPORTS_ONLY = FIRST_FRAME.split("state = ")[0]
START_CHILD = Path("tests") / "support" / "pi_start_child.py"  # in the checkout counted


def install(root: Path, where: Path) -> Path:
    """A venv at ``where`` with ``root`` installed in it, not editable; its python."""
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(where)
    python = where / "bin" / "python"
    site = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip())
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--target", str(site), str(root)], check=True, capture_output=True)
    dependencies = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    (site / "dependencies.pth").write_text("\n".join(dependencies) + "\n", encoding="utf-8")
    return python


def game_in_progress(state: Path) -> None:
    """A journal in ``state`` holding a whole game to 10 but its winning trick."""
    referee = Referee(Config(state_dir=state, result_s=0.0), Store(state),
                      renderer=lambda view: view)
    for name in SEATS_GAME[:-1]:
        referee.press(name)
    referee.store.close()


def instructions(python: Path, args: list[str], work: Path, resume: Path | None,
                 root: Path) -> int:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GPIOZERO_PIN_FACTORY": "mock",
           # as under systemd (Type=notify, a watchdog); nobody listens, so messages are dropped
           "NOTIFY_SOCKET": str(work / "notify"), "WATCHDOG_USEC": "10000000"}
    config = work / "referee.toml"
    config.write_text("", encoding="utf-8")
    counts = []
    for run in ("warm", "count"):
        state = work / f"state-{run}"
        if resume is not None:
            shutil.copytree(resume, state)
        fill = {"{state}": str(state), "{config}": str(config), "{out}": str(work / "bus"),
                "{child}": str(root / START_CHILD)}
        command = [str(python), *(fill.get(arg, arg) for arg in args)]
        if run == "count":
            command = ["valgrind", "--tool=callgrind",
                       f"--callgrind-out-file={work}/cg.out", *command]
        done = subprocess.run(command, cwd=work, env=env, check=True, capture_output=True,
                              text=True)
        found = re.search(r"refs:\s+([\d,]+)", done.stderr)
        counts.append(int(found.group(1).replace(",", "")) if found else 0)
    return counts[-1]


RUN = ["{child}", "{out}", "--first-frame", "--",
       "--config", "{config}", "--state-dir", "{state}"]
PROGRAMS = {  # name: (arguments of python, resume a game)
    "pass": (["-c", "pass"], False),
    "run to first frame": (RUN, False),
    "the same, resuming": (RUN, True),
    "referee on dummy": (["-c", FIRST_FRAME, "{state}"], False),
    "its imports": (["-c", IMPORTS_ONLY, "{state}"], False),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, action="append",
                        help="another checkout to count beside this one (repeatable)")
    args = parser.parse_args()
    roots = [ROOT, *(args.root or [])]
    print("| checkout | " + " | ".join(PROGRAMS) + " |")
    print("| --- |" + " --- |" * len(PROGRAMS))
    with tempfile.TemporaryDirectory() as made:
        resumed = Path(made) / "state"
        game_in_progress(resumed)
        for root in roots:
            with tempfile.TemporaryDirectory() as work:
                python = install(root, Path(work) / "venv")
                counts = []
                for name, (program, resume) in PROGRAMS.items():
                    (Path(work) / name).mkdir()
                    counts.append(instructions(python, program, Path(work) / name,
                                               resumed if resume else None, root))
            print(f"| {root} | " + " | ".join(f"{count / 1e6:.0f}M" for count in counts) + " |",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
