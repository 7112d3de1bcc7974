"""``euchre-referee``: the command line of the referee and its laptop tools.

``replay`` and ``games`` are here; each wing adds its own commands through
its ``register(commands)``: :mod:`firmware.pi` (``run``),
:mod:`firmware.emulator` (``emulate``), :mod:`firmware.link` (``send``,
``status``, ``export``, ``enter``, ``watch``).  Exit codes: :mod:`firmware.exits`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from euchre_core import replay

from . import club, emulator, link, pi
from .config import DEFAULT_STATE_DIR
from .exits import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from .summary import summary_json, summary_line, summary_text


def _cmd_replay(args: argparse.Namespace) -> int:
    """Check each log; print a summary (or JSON lines); exit 1 if any is invalid."""
    status = EXIT_OK
    for path in args.files:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except FileNotFoundError:
            print(f"{path}: no such file", file=sys.stderr)
            return EXIT_USAGE
        except UnicodeDecodeError as error:
            text = None
            reason = f"not UTF-8 text (byte {error.start})"
        except OSError as error:
            print(f"{path}: {error.strerror}", file=sys.stderr)
            return EXIT_USAGE
        if text is None:
            line = 1
            result = None
        else:
            result = replay(text)
        if result is None or result.error is not None:
            status = EXIT_INVALID
        if args.json:
            if result is None:
                obj = {"file": path, "score": {"NS": 0, "EW": 0}, "hands_played": 0,
                       "dealer": None, "winner": None, "error": {"line": line, "reason": reason}}
            else:
                obj = summary_json(path, result)
            print(json.dumps(obj, ensure_ascii=False))
        elif result is None:
            print(f"{path}:{line}: {reason}")
        elif result.error is not None:
            print(f"{path}:{result.error.line}: {result.error.reason}")
        else:
            print(summary_text(path, result))
    return status


def _cmd_games(args: argparse.Namespace) -> int:
    """List the games kept in a state directory, or export one as a log."""
    from .store import JournalError, Store

    state_dir = Path(args.state_dir)
    if not (state_dir / "journal.sqlite3").exists():
        print(f"euchre-referee: no journal in {state_dir}", file=sys.stderr)
        return EXIT_USAGE
    store = Store(state_dir)
    try:
        if args.export is None:
            for info in store.games():
                try:
                    game = store.load(info.id)
                except JournalError as error:
                    print(f"{info.id:4d}  {error}")
                    continue
                stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.created))
                print(f"{info.id:4d}  {stamp}  {summary_line(game)}")
            return EXIT_OK
        game_id = store.latest() if args.export == 0 else args.export
        if game_id is None or game_id not in {info.id for info in store.games()}:
            print(f"euchre-referee: no game {args.export} in {state_dir}", file=sys.stderr)
            return EXIT_USAGE
        if args.raw:
            sys.stdout.write(store.journal_text(game_id))
        else:
            try:
                sys.stdout.write(store.export(game_id))
            except JournalError as error:
                print(f"euchre-referee: {error} (--raw prints it as kept)", file=sys.stderr)
                return EXIT_INVALID
        return EXIT_OK
    finally:
        store.close()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="euchre-referee",
        description="Euchre table referee: the device app and its laptop tools.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    replay_parser = commands.add_parser(
        "replay", help="check game logs and summarise them",
        description="Check each game log; print a summary, or FILE:LINE: reason. "
        "Exit 0 when all are valid, 1 when any is invalid, 2 on usage errors.",
    )
    replay_parser.add_argument("--json", action="store_true",
                               help="one JSON object per file per line")
    replay_parser.add_argument("files", nargs="+", metavar="FILE")
    replay_parser.set_defaults(run=_cmd_replay)
    games_parser = commands.add_parser(
        "games", help="list the games kept in a state directory, or export one",
        description="List the games the referee keeps (the journal in the state directory), "
        "or export one as a clean log (undos applied, score lines after each hand).",
    )
    games_parser.add_argument("--state-dir", default=str(DEFAULT_STATE_DIR), metavar="DIR",
                              help=f"where games are kept (default: ./{DEFAULT_STATE_DIR})")
    games_parser.add_argument("--export", type=int, nargs="?", const=0, metavar="ID",
                              help="print game ID as a log (no ID: the newest)")
    games_parser.add_argument("--raw", action="store_true",
                              help="with --export: the lines as entered, undos included")
    games_parser.set_defaults(run=_cmd_games)
    for wing in (pi, emulator, link, club):
        wing.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    code: int = args.run(args)
    return code
