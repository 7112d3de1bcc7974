"""``euchre-referee``: the command line of the referee and its laptop tools.

``replay`` and ``games`` are here; each wing adds its own commands through
its ``register(commands)``: :mod:`firmware.pi` (``run``),
:mod:`firmware.emulator` (``emulate``), :mod:`firmware.link` (``send``,
``status``, ``export``, ``enter``, ``watch``), :mod:`firmware.club` (``club
serve|register|round|export|simulate|box``, and ``--club`` for ``run`` and
``emulate``).  Exit codes: :mod:`firmware.exits`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from euchre_core import replay

from . import club, emulator, link, pi
from .defaults import DEFAULT_STATE_DIR
from .exits import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from .logcheck import LogFileError, check_bytes, read_log
from .summary import summary_json, summary_line, summary_text


def _cmd_replay(args: argparse.Namespace) -> int:
    """Check each log; print a summary (or JSON lines, or only what is wrong);
    exit 1 if any is invalid."""
    status = EXIT_OK
    for path in args.files:
        try:
            data = read_log(path)
        except LogFileError as error:
            print(error, file=sys.stderr)
            return EXIT_USAGE
        try:
            result = replay(data.decode("utf-8"))
        except UnicodeDecodeError:  # line by line, as the serial link reads it
            result = check_bytes(data)
        if result.error is not None:
            status = EXIT_INVALID
        if args.json:
            import json  # only for --json

            print(json.dumps(summary_json(path, result), ensure_ascii=False))
        elif result.error is not None:
            print(f"{path}:{result.error.line}: {result.error.reason}")
        elif not args.quiet:
            print(summary_text(path, result))
    return status


def _cmd_games(args: argparse.Namespace) -> int:
    """List the games kept in a state directory, export one as a log, or back
    the journal up.  Read-only: it never writes, checkpoints or moves the
    journal, so it is safe while the referee runs."""
    import sqlite3

    from .journal import JOURNAL_NAME, JournalError, Store

    state_dir = Path(args.state_dir)
    if not (state_dir / JOURNAL_NAME).exists():
        print(f"euchre-referee: no journal in {state_dir}", file=sys.stderr)
        return EXIT_USAGE
    try:
        store = Store(state_dir, readonly=True)
    except JournalError as error:
        print(f"euchre-referee: {error}", file=sys.stderr)
        return EXIT_INVALID
    for problem in (store.damage.sentence() if store.damage else None, store.unchecked,
                    store.unconfirmed.sentence() if store.unconfirmed else None):
        if problem:
            print(f"euchre-referee: warning: {problem}", file=sys.stderr)
    try:
        if args.backup is not None:
            try:
                count = store.backup(Path(args.backup))
            except (OSError, sqlite3.Error) as error:
                print(f"euchre-referee: --backup {args.backup}: {error}", file=sys.stderr)
                return EXIT_USAGE
            print(f"{args.backup}: {count} lines of {len(store.games())} games", file=sys.stderr)
            return EXIT_OK
        if args.stats:
            from .stats import kept_logs, stats_lines, stats_of

            stats = stats_of(kept_logs(store))
            if args.json:
                import json

                print(json.dumps(stats.as_json(), ensure_ascii=False))
            else:
                print("\n".join(stats_lines(stats)))
            return EXIT_OK
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
        kept = {info.id: info for info in store.games()}
        if game_id is None or game_id not in kept:
            print(f"euchre-referee: no game {args.export} in {state_dir}", file=sys.stderr)
            return EXIT_USAGE
        if args.format == "egn":
            return _export_egn(store, kept[game_id], raw=args.raw)
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


def _export_egn(store: Any, info: Any, *, raw: bool) -> int:
    """``games --export ID --format egn``: the game as EGN 1.4 on stdout, what
    EGN cannot hold in one line on stderr."""
    from .egn import EgnError, print_egn, to_egn
    from .journal import JournalError

    if raw:
        print("euchre-referee: --raw exports the log as kept; EGN is made from the clean "
              "game (leave out --raw)", file=sys.stderr)
        return EXIT_USAGE
    try:
        egn = to_egn(store.load(info.id), game_id=f"game {info.id}", created=info.created)
    except (JournalError, EgnError) as error:
        print(f"euchre-referee: {error}", file=sys.stderr)
        return EXIT_INVALID
    print_egn(egn)
    return EXIT_OK


def _cmd_egn(args: argparse.Namespace) -> int:
    """An EGN file as a game log, every call and card checked by the engine."""
    import json

    from .egn import egn_log

    try:
        with open(args.file, encoding="utf-8") as handle:
            document = json.load(handle)
        text = egn_log(document)
    except OSError as error:
        print(f"euchre-referee: {args.file}: {error.strerror}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as error:
        what = f"missing {error}" if isinstance(error, KeyError) else str(error)
        print(f"{args.file}: {what}", file=sys.stderr)
        return EXIT_INVALID
    sys.stdout.write(text)
    return EXIT_OK


COMMANDS: Final = ("replay", "games", "egn")
"""The commands added here; each wing lists its own in its ``COMMANDS``."""

WINGS: Final = (pi, emulator, link, club)


def _add_replay(commands: Any) -> None:
    replay_parser = commands.add_parser(
        "replay", help="check game logs and summarise them",
        description="Check each game log; print a summary, or FILE:LINE: reason. "
        "Exit 0 when all are valid, 1 when any is invalid, 2 on usage errors.",
    )
    output = replay_parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="one JSON object per file per line")
    output.add_argument("-q", "--quiet", action="store_true",
                        help="print only the invalid files' FILE:LINE: reason (checking many)")
    replay_parser.add_argument("files", nargs="+", metavar="FILE")
    replay_parser.set_defaults(run=_cmd_replay)


def _add_games(commands: Any) -> None:
    games_parser = commands.add_parser(
        "games", help="list the games kept in a state directory, or export one",
        description="List the games the referee keeps (the journal in the state directory), "
        "or export one as a clean log (undos applied, score lines after each hand).",
    )
    games_parser.add_argument("--state-dir", default=str(DEFAULT_STATE_DIR), metavar="DIR",
                              help=f"where games are kept (default: ./{DEFAULT_STATE_DIR})")
    games_parser.add_argument("--export", type=int, nargs="?", const=0, metavar="ID",
                              help="print game ID as a log (no ID: the newest)")
    games_parser.add_argument("--format", choices=("log", "egn"), default="log",
                              help="with --export: a game log (the default) or EGN 1.4, "
                              "Euchre Game Notation's JSON (what EGN cannot hold: one "
                              "line on stderr)")
    games_parser.add_argument("--raw", action="store_true",
                              help="with --export: the lines as entered, undos included")
    games_parser.add_argument("--stats", action="store_true",
                              help="each player's statistics over the kept games (replayed)")
    games_parser.add_argument("--json", action="store_true",
                              help="with --stats: one JSON object")
    games_parser.add_argument("--backup", metavar="FILE",
                              help="copy the whole journal, consistently, into the one file "
                              "FILE (SQLite's backup API; safe while the referee runs)")
    games_parser.set_defaults(run=_cmd_games)


def terminal_columns() -> int:
    """The terminal's width, found as ``shutil.get_terminal_size`` finds it
    (``$COLUMNS``, else standard output's terminal, else 80) without importing
    :mod:`shutil`, which argparse's help formatter imports for it: 8M
    instructions of the device's start (``bench/first_frame_instructions.py``)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, as wide as the terminal (:func:`terminal_columns`)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        if width is None:
            width = terminal_columns() - 2  # what argparse takes off the terminal's width
        super().__init__(prog, indent_increment, max_help_position, width)


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose help is made by :class:`HelpFormatter` unless
    told otherwise; its subcommands' parsers are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``euchre-referee`` parser; given the ``command`` about to run, only
    the parsers of the wing that has it are made (making every command's
    parser cost a twelfth of ``run``'s start to its first frame).  An unknown
    command gets the whole parser, whose error lists them all."""
    parser = Parser(
        prog="euchre-referee",
        description="Euchre table referee: the device (run, or emulate without the box), "
        "its game logs and kept games (replay, games, egn), the laptop's end of its serial link "
        "(send, status, export, stats, enter, watch) and club nights of many tables (club).",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    known = command in COMMANDS or any(command in wing.COMMANDS for wing in WINGS)
    every = command is None or not known
    if every or command == "replay":
        _add_replay(commands)
    if every or command == "games":
        _add_games(commands)
    if every or command == "egn":
        egn = commands.add_parser(
            "egn", help="an EGN file (Euchre Game Notation) as a game log",
            description="Read an EGN file (Euchre Game Notation, JSON) and print it as a game "
            "log, every call and card checked by the engine. Exit 0 when it replays, 1 when "
            "it does not (the deal and the reason), 2 when the file cannot be read.")
        egn.add_argument("file", metavar="FILE")
        egn.set_defaults(run=_cmd_egn)
    for wing in WINGS:
        if every or command in wing.COMMANDS:
            wing.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = argv[0] if argv and not argv[0].startswith("-") else None
    parser = build_parser(command)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        code: int = args.run(args)
        sys.stdout.flush()
    except ModuleNotFoundError as error:
        from .optional import missing_part

        words = " ".join(filter(None, (args.command, getattr(args, "club_command", None))))
        problem = missing_part(error, words)
        if problem is None:
            raise
        print(f"euchre-referee: {problem}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (`... | head`): nothing more to say, and no
        # traceback; stdout points at /dev/null so the exit's flush is quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_OK
    return code
