"""Whole processes, side by side: start-up, and a replay over many files.

    .venv/bin/pip install -e '.[bench]'      # open-spiel, once
    .venv/bin/python bench/process_bench.py [--games 495] [--rounds 7]

Both measures run real processes in this venv, alternating, best of
``--rounds`` (wall time):

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
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

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


def best_of(rounds: int, commands: list[list[str]], env: dict[str, str]) -> list[float]:
    best = [float("inf")] * len(commands)
    for _ in range(rounds):
        for index, command in enumerate(commands):
            start = time.perf_counter()
            subprocess.run(command, env=env, check=False, stdout=subprocess.DEVNULL)
            best[index] = min(best[index], time.perf_counter() - start)
    return best


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
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--instructions", action="store_true")
    args = parser.parse_args()
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
        t_cli, t_engine, t_pass = best_of(args.rounds, startup, env)
        print(f"start-up, best of {args.rounds} (one small log: {Path(small).name})")
        print(f"  python -c pass                      {t_pass * 1e3:7.1f} ms   1.00x")
        print(f"  engine alone: import, read, replay  {t_engine * 1e3:7.1f} ms"
              f"   {t_engine / t_pass:4.2f}x")
        print(f"  euchre-referee replay one.log       {t_cli * 1e3:7.1f} ms"
              f"   {t_cli / t_pass:4.2f}x  (budget: 4x)")
        if args.instructions and shutil.which("valgrind"):
            counts = [instructions(command, env) for command in startup]
            print("  instructions (callgrind): "
                  f"euchre-referee {counts[0] / 1e6:.0f}M, engine alone {counts[1] / 1e6:.0f}M, "
                  f"python -c pass {counts[2] / 1e6:.0f}M")
        try:
            from openspiel_euchre import generate_games
        except ImportError as error:
            print(f"many files: needs open-spiel: .venv/bin/pip install -e '.[bench]' ({error})")
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
        t_spiel, t_ours, t_quiet, t_cli_many = best_of(args.rounds, many, env)
        print(f"many files: {args.games} games, {hands} hands, one file a game, "
              f"best of {args.rounds}")
        print(f"  OpenSpiel process (apply_action)    {t_spiel:7.3f} s    1.00x")
        print(f"  engine alone over the logs          {t_ours:7.3f} s    {t_ours / t_spiel:4.2f}x"
              "  (budget: 0.8x)")
        print(f"  euchre-referee replay -q FILES      {t_quiet:7.3f} s    "
              f"{t_quiet / t_spiel:4.2f}x  (budget: 0.8x)")
        print(f"  euchre-referee replay FILES         {t_cli_many:7.3f} s    "
              f"{t_cli_many / t_spiel:4.2f}x  (and every file's hands table)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
