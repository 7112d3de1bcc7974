"""Replay cost in CPU instructions: our engine against OpenSpiel, without the noise.

    .venv/bin/pip install -e '.[bench]'      # open-spiel, once
    apt-get install valgrind                 # once
    .venv/bin/python bench/replay_instructions.py [--games 40] [--baseline ab65d18]

Wall times on shared machines move by a factor of two from run to run;
instruction counts from ``valgrind --tool=callgrind`` do not.  Each workload
of ``replay_bench.py`` runs in its own process under callgrind, once with one
pass over the games and once with three; the difference, halved, is the cost
of one pass without the start-up (imports, loading the games).  Instructions
are not time: the interpreter runs fewer of them per cycle than OpenSpiel's
C++ does, so the time ratio is larger than the instruction ratio.

``--baseline REV`` also counts the card-level replay of ``euchre_core`` as it was
at commit ``REV`` (extracted with ``git archive`` into a temporary folder), so
the old and the new engine are counted side by side on the same games.
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
if "--root" in sys.argv:  # a worker counting another euchre_core (--baseline)
    sys.path.insert(0, sys.argv[sys.argv.index("--root") + 1])
else:
    sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

WORKLOADS = {
    "openspiel": "OpenSpiel apply_action (C++)",
    "openspiel-checked": "OpenSpiel, legality-checked",
    "cards": "ours, card-level log replay",
    "winners": "ours, winner-level log replay",
    "reading": "ours, reading only (no rules)",
}


def workload(name: str, data: Path) -> Callable[[], None]:
    """The function that replays every game once, for ``name``."""
    from openspiel_euchre import replay_openspiel, replay_openspiel_checked

    from euchre_core import replay

    with data.open("rb") as file:
        games = pickle.load(file)
    if name == "openspiel":
        return lambda: replay_openspiel(games)
    if name == "openspiel-checked":
        return lambda: replay_openspiel_checked(games)
    if name == "reading":
        from replay_bench import read_only

        texts = [game.log_text for game in games]
        return lambda: [read_only(text) for text in texts] and None
    if name == "winners":
        from replay_bench import winner_level

        texts = [winner_level(game.log_text) for game in games]
    else:
        texts = [game.log_text for game in games]

    def ours() -> None:
        for text in texts:
            replay(text)

    return ours


def count(name: str, data: Path, passes: int, root: Path | None = None) -> int:
    """Instructions callgrind collected for a process that runs ``passes`` passes."""
    command = [
        "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
        sys.executable, __file__, "--worker", name, "--data", str(data), "--passes", str(passes),
        *(("--root", str(root)) if root is not None else ()),
    ]
    # One hash seed for every count: string hashes decide how often dict look-ups
    # collide, which moves the counts by about 1% from run to run otherwise.
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count from callgrind:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--worker", choices=WORKLOADS, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--passes", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--baseline", metavar="REV",
                        help="also count the card-level replay of euchre_core at commit REV")
    args = parser.parse_args()
    if args.worker:
        run = workload(args.worker, args.data)
        for _ in range(args.passes):
            run()
        return 0
    if shutil.which("valgrind") is None:
        print("needs valgrind: apt-get install valgrind")
        return 2
    try:
        from openspiel_euchre import generate_games
    except ImportError as error:
        print(f"needs open-spiel: .venv/bin/pip install -e '.[bench]' ({error})")
        return 2
    games = generate_games(args.games, args.seed)
    hands = sum(len(game.hands) for game in games)
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "games.pickle"
        with data.open("wb") as file:
            pickle.dump(games, file)
        per_hand = {}
        labels = dict(WORKLOADS)
        for name in WORKLOADS:
            one, three = count(name, data, 1), count(name, data, 3)
            per_hand[name] = (three - one) / 2 / hands
        if args.baseline:
            root = Path(folder) / "baseline"
            root.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(HERE.parent), "archive", args.baseline, "euchre_core"],
                capture_output=True, check=True,
            )
            subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
            one, three = count("cards", data, 1, root), count("cards", data, 3, root)
            per_hand["baseline"] = (three - one) / 2 / hands
            labels["baseline"] = f"euchre_core at {args.baseline}, card-level"
    print(f"{args.games} games, {hands} hands, instructions per hand (callgrind)")
    for name, label in labels.items():
        ratio = per_hand[name] / per_hand["openspiel"]
        print(f"{label:34} {per_hand[name]:9.0f}   {ratio:5.2f}x OpenSpiel")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
