"""Replay throughput: our engine against OpenSpiel's C++ Euchre, side by side.

    .venv/bin/pip install 'open-spiel>=1.5'  # the bench extra, once
    .venv/bin/python bench/replay_bench.py [--games 200] [--rounds 21] [--python PATH] [--here]

Workload: random whole games to 10 (each hand played by uniformly random legal
actions in OpenSpiel, see ``openspiel_euchre.py``), written as our card-level
logs.  The same games are also written at winner level (the trick winners our
engine worked out, no deal or plays).  Timed in ``--rounds`` rounds, every
workload once in each round, one after the other, so all see the same machine
load; each figure is the median over the rounds with the spread (min–max), and
each ratio is taken within a round (the two workloads side by side), then its
median and spread over the rounds:

* OpenSpiel: ``apply_action`` for every chance and player action of every hand
  (no checks), and ``apply_action_with_legality_check`` (each action checked
  against OpenSpiel's legal actions, as our replay checks each line);
* ours, card level: ``euchre_core.replay(text)`` — parsing every line and
  checking every play (in turn, in hand, follows suit), working out tricks,
  scoring, verifying the ``score``/``winner`` check lines;
* ours, card level with the entries asked for: the same, and then
  ``game.entries`` (the fast path makes the entries of the hands it took only
  when they are first asked for; a replay that checks a log never asks);
* ours, winner level: the same games by trick winners;
* ours, reading only: the card-level logs split into lines and each line
  looked up as a code, each deal line read, with no rule applied — about what
  a replay that reads text line by line cannot go below.

Also checks, before timing, that every game replays valid and that our score
after each hand equals the sum of OpenSpiel's returns.

It runs in a plain install of the checkout (``bench/plain.py``: not editable,
as a Pi has it; open-spiel and the other dependencies this interpreter's),
unless ``--here``; ``--python`` makes that install's venv with another
interpreter of the same minor version (``/usr/bin/python3``: Debian's, the
Pi's).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by a test
    sys.path.append(str(Path(__file__).resolve().parent))
import plain  # noqa: E402

plain.packages()

from euchre_core import Game, Team, replay  # noqa: E402
from euchre_core.codes import CODES, SLOW_CODE, read_deal  # noqa: E402
from euchre_core.lines import strip_line  # noqa: E402
from euchre_core.log import HEADER, parse_line  # noqa: E402


def read_only(text: str) -> int:
    """Read a card-level log the way ``replay`` does, applying nothing: split
    it into lines, look each one up, read the deal lines.

    Returns the number of lines it could not look up: 1 a log here (the
    header).
    """
    lines = text.split("\n")
    codes = list(map(CODES.__getitem__, lines))
    unknown = 0
    for line in lines:
        if line[:5] == "deal ":
            unknown += read_deal(line) is None
    return unknown + sum(code == SLOW_CODE for code in codes)


def winner_level(card_level_log: str) -> str:
    """The same game with each hand's plays replaced by its trick winners."""
    game = Game()
    out = [HEADER]
    for raw in card_level_log.splitlines()[1:]:
        event = parse_line(strip_line(raw))
        if event is None:
            continue
        keyword = raw.split()[0]
        if keyword in ("score", "winner"):
            out.append(raw)
            continue
        game.push(event)  # type: ignore[arg-type]
        if keyword == "play":
            if game.pending_trick is not None:
                out.append(f"trick {game.pending_trick}")
        elif keyword not in ("deal", "discard") and not raw.startswith("upcard"):
            out.append(raw)
        elif raw.startswith("upcard"):
            out.append(f"upcard {raw.split()[1][-1]}")
    return "\n".join(out) + "\n"


def timed_rounds(rounds: int, *jobs: Callable[[], object]) -> list[list[float]]:
    """Wall time (s) of each job in each of ``rounds`` rounds, every job once a
    round, in turn: ``[job][round]``."""
    times: list[list[float]] = [[] for _ in jobs]
    for _ in range(rounds):
        for index, job in enumerate(jobs):
            start = time.perf_counter()
            job()
            times[index].append(time.perf_counter() - start)
    return times


def ratios(ours: list[float], theirs: list[float]) -> list[float]:
    """``ours / theirs`` round by round."""
    return [a / b for a, b in zip(ours, theirs, strict=True)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--python", help="the interpreter of the plain install's venv")
    parser.add_argument("--here", action="store_true",
                        help="measure in this interpreter, not in a plain install")
    args = parser.parse_args()
    try:
        from openspiel_euchre import generate_games, replay_openspiel, replay_openspiel_checked
    except ImportError as error:
        print(f"needs open-spiel: .venv/bin/pip install 'open-spiel>=1.5' ({error})")
        return 2
    if not args.here and not plain.in_plain_install():
        rest = [arg for arg in sys.argv[1:] if not arg.startswith("--python")]
        if args.python and args.python in rest:
            rest.remove(args.python)
        return plain.rerun(__file__, rest, python=args.python)

    games = generate_games(args.games, args.seed)
    card_logs = [game.log_text for game in games]
    winner_logs = [winner_level(text) for text in card_logs]
    hands = sum(len(game.hands) for game in games)
    lines = sum(text.count("\n") for text in card_logs)
    for game, card_text, winner_text in zip(games, card_logs, winner_logs):
        for text in (card_text, winner_text):
            result = replay(text)
            if result.error is not None:
                print(f"replay disagrees with OpenSpiel: {result.error}")
                return 1
            totals = [sum(points[i] for points in game.hand_points) for i in (0, 1)]
            if [result.game.score[Team.NS], result.game.score[Team.EW]] != totals:
                print("final score disagrees with OpenSpiel's returns")
                return 1

    def ours_cards() -> None:
        for text in card_logs:
            replay(text)

    def ours_cards_entries() -> None:
        for text in card_logs:
            replay(text).game.entries  # noqa: B018  # made when asked: the cost of making them

    def ours_winners() -> None:
        for text in winner_logs:
            replay(text)

    def ours_reading() -> None:
        for text in card_logs:
            read_only(text)

    unread = sum(read_only(text) for text in card_logs)
    if unread != len(card_logs):
        print(f"reading only missed {unread - len(card_logs)} lines it should look up")
        return 1
    t_spiel, t_checked, t_cards, t_entries, t_winners, t_reading = timed_rounds(
        args.rounds, lambda: replay_openspiel(games), lambda: replay_openspiel_checked(games),
        ours_cards, ours_cards_entries, ours_winners, ours_reading,
    )
    per_hand = 1e6 / hands

    def us(times: list[float]) -> str:
        return plain.spread(times, per_hand, 1, " us/hand")

    def x(times: list[float]) -> str:
        return plain.spread(times, 1.0, 2, "x")

    best = min(t_cards)
    print(f"python {platform.python_version()} on {platform.machine()}, firmware from "
          f"{plain.where_from()}")
    print(f"{args.games} games, {hands} hands, {lines} card-level lines, {args.rounds} rounds "
          "in turn: median (min–max) over the rounds")
    print(f"OpenSpiel apply_action (C++)        {us(t_spiel)}")
    print(f"OpenSpiel, legality-checked         {us(t_checked)}")
    print(f"ours, card-level log replay         {us(t_cards)}"
          f"   best {hands / best:.0f} hands/s, {lines / best:.0f} lines/s")
    print(f"ours, card-level, entries asked     {us(t_entries)}")
    print(f"ours, winner-level log replay       {us(t_winners)}")
    print(f"ours, reading only (no rules)       {us(t_reading)}")
    print("ratios, each within a round:")
    print(f"card-level / OpenSpiel              {x(ratios(t_cards, t_spiel))}"
          "  (budget: 1.0x; goal: 0.8x)")
    print(f"card-level / OpenSpiel checked      {x(ratios(t_cards, t_checked))}")
    print(f"entries asked / OpenSpiel           {x(ratios(t_entries, t_spiel))}")
    print(f"winner-level / card-level           {x(ratios(t_winners, t_cards))}")
    print(f"reading only / OpenSpiel            {x(ratios(t_reading, t_spiel))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
