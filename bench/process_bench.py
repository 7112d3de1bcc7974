"""Whole processes, side by side: start-up, and a replay over many files.

    .venv/bin/pip install 'open-spiel>=1.5'  # the bench extra, once
    .venv/bin/python bench/process_bench.py [--games 495] [--rounds 11] [--instructions]
                                            [--python PATH] [--here]

Both measures run real processes, every command once a round, in turn, for
``--rounds`` rounds (wall time); each figure is the median over the rounds
with the spread (min–max), each ratio taken within a round, then its median
and spread.  They run in a plain install of the checkout (``bench/plain.py``:
not editable, its ``euchre-referee`` script written by pip for that venv, as
on a Pi), unless ``--here``: an editable install's finder costs every start
about 100M instructions (``python -c pass`` 144M against 38M), which no
installed referee pays.  ``--python`` makes that venv with another
interpreter of the same minor version (``/usr/bin/python3``: Debian's).

* start-up: ``euchre-referee replay one.log`` (a small log), the engine alone
  (``python -m euchre_core.check one.log``-like: import ``euchre_core``, read the
  file, replay it) and ``python -c pass``;
* many files: the games of ``replay_bench.py`` written as one card-level log a
  file; ``euchre-referee replay --quiet`` (only the bad files said) and
  ``euchre-referee replay`` (every file's hands table printed) over all of them,
  the engine alone over all of them, and a process that loads OpenSpiel and
  applies each game's actions, read from one file a game too.

Byte-code caches are written to a temporary ``PYTHONPYCACHEPREFIX`` and warmed
first, as an installed package has them (this environment may set
``PYTHONDONTWRITEBYTECODE``, which would compile every module on every start).
With ``--instructions`` the start-up commands also run once under callgrind.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:  # loaded by a test
    sys.path.append(str(HERE))
import plain  # noqa: E402

plain.packages()

ENGINE_ONLY = (
    "import sys\n"
    "from euchre_core import replay\n"
    "bad = 0\n"
    "for path in sys.argv[1:]:\n"
    "    with open(path, encoding='utf-8') as file:\n"
    "        bad += replay(file.read()).error is not None\n"
    "sys.exit(1 if bad else 0)\n"
)
OPENSPIEL = (
    "import json, sys\n"
    "import pyspiel\n"
    "game = pyspiel.load_game('euchre', {'stick_the_dealer': True, 'allow_lone_defender': False})\n"
    "for path in sys.argv[1:]:\n"
    "    with open(path, encoding='utf-8') as file:\n"
    "        hands = json.load(file)\n"
    "    for hand in hands:\n"
    "        state = game.new_initial_state()\n"
    "        for action in hand:\n"
    "            state.apply_action(action)\n"
)


def timed_rounds(rounds: int, commands: list[list[str]], env: dict[str, str]
                 ) -> list[list[float]]:
    """Wall time (s) of each command in each round, every command once a
    round, in turn: ``[command][round]``."""
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(rounds):
        for index, command in enumerate(commands):
            start = time.perf_counter()
            subprocess.run(command, env=env, check=False, stdout=subprocess.DEVNULL)
            times[index].append(time.perf_counter() - start)
    return times


def ratios(ours: list[float], theirs: list[float]) -> list[float]:
    return [a / b for a, b in zip(ours, theirs, strict=True)]


def instructions(command: list[str], env: dict[str, str]) -> int:
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
        env=env, capture_output=True, text=True, check=False,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    return int(found.group(1)) if found else -1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=495)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--instructions", action="store_true",
                        help="also count the start-up commands' instructions (callgrind)")
    parser.add_argument("--python", help="the interpreter of the plain install's venv")
    parser.add_argument("--here", action="store_true",
                        help="measure in this interpreter, not in a plain install")
    args = parser.parse_args()
    if not args.here and not plain.in_plain_install():
        rest = [arg for arg in sys.argv[1:] if not arg.startswith("--python")]
        if args.python and args.python in rest:
            rest.remove(args.python)
        return plain.rerun(__file__, rest, python=args.python)
    python = sys.executable
    referee = str(Path(python).with_name("euchre-referee"))
    small = str(ROOT / "examples" / "left-bower.log")
    with tempfile.TemporaryDirectory() as folder:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "pycache")
        startup = [
            [referee, "replay", small],
            [python, "-c", ENGINE_ONLY, small],
            [python, "-c", "pass"],
        ]
        for command in startup:  # warm the byte-code caches
            subprocess.run(command, env=env, check=False, stdout=subprocess.DEVNULL)
        t_cli, t_engine, t_pass = timed_rounds(args.rounds, startup, env)

        def ms(times: list[float]) -> str:
            return plain.spread(times, 1e3, 1, " ms")

        def x(times: list[float]) -> str:
            return plain.spread(times, 1.0, 2, "x")

        print(f"python {sys.version.split()[0]}, firmware from {plain.where_from()}")
        print(f"start-up, {args.rounds} rounds in turn, median (min–max); one small log: "
              f"{Path(small).name}")
        print(f"  python -c pass                      {ms(t_pass)}")
        print(f"  engine alone: import, read, replay  {ms(t_engine)}"
              f"   {x(ratios(t_engine, t_pass))} python -c pass")
        print(f"  euchre-referee replay one.log       {ms(t_cli)}"
              f"   {x(ratios(t_cli, t_pass))} python -c pass  (budget: 4x)")
        if args.instructions and shutil.which("valgrind"):
            counts = [instructions(command, env) for command in startup]
            print("  instructions (callgrind): "
                  f"euchre-referee {counts[0] / 1e6:.0f}M ({counts[0] / counts[2]:.2f}x), "
                  f"engine alone {counts[1] / 1e6:.0f}M ({counts[1] / counts[2]:.2f}x), "
                  f"python -c pass {counts[2] / 1e6:.0f}M")
        try:
            from openspiel_euchre import generate_games
        except ImportError as error:
            print(f"many files: needs open-spiel: .venv/bin/pip install 'open-spiel>=1.5' "
                  f"({error})")
            return 2
        games = generate_games(args.games, args.seed)
        logs, actions = [], []
        for number, game in enumerate(games):
            log = Path(folder) / f"game{number:04d}.log"
            log.write_text(game.log_text, encoding="utf-8")
            logs.append(str(log))
            moves = Path(folder) / f"game{number:04d}.json"
            moves.write_text(json.dumps(game.hands), encoding="utf-8")
            actions.append(str(moves))
        hands = sum(len(game.hands) for game in games)
        many = [
            [python, "-c", OPENSPIEL, *actions],
            [python, "-c", ENGINE_ONLY, *logs],
            [referee, "replay", "--quiet", *logs],
            [referee, "replay", *logs],
        ]
        for command in many:
            done = subprocess.run(command, env=env, check=False, stdout=subprocess.DEVNULL)
            if done.returncode != 0:
                print(f"failed: {' '.join(command[:3])} ... (exit {done.returncode})")
                return 1
        t_spiel, t_ours, t_quiet, t_cli_many = timed_rounds(args.rounds, many, env)

        def s(times: list[float]) -> str:
            return plain.spread(times, 1.0, 3, " s")

        print(f"many files: {args.games} games, {hands} hands, one file a game, "
              f"{args.rounds} rounds in turn, median (min–max)")
        print(f"  OpenSpiel process (apply_action)    {s(t_spiel)}")
        print(f"  engine alone over the logs          {s(t_ours)}"
              f"   {x(ratios(t_ours, t_spiel))} OpenSpiel  (budget: 0.8x)")
        print(f"  euchre-referee replay -q FILES      {s(t_quiet)}"
              f"   {x(ratios(t_quiet, t_spiel))} OpenSpiel  (budget: 0.8x)")
        print(f"  euchre-referee replay FILES         {s(t_cli_many)}"
              f"   {x(ratios(t_cli_many, t_spiel))} OpenSpiel  (and every file's hands table)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
