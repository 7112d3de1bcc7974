"""``euchre-referee``: the command line of the referee and its laptop tools."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from euchre_core import replay

from .summary import summary_json, summary_text

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


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


def _cmd_run(args: argparse.Namespace) -> int:
    """The referee on a Raspberry Pi, from its config file."""
    from .config import ConfigError, load_config
    from .device import run

    try:
        config = load_config(Path(args.config))
    except ConfigError as error:
        print(f"euchre-referee: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.state_dir:
        config = replace(config, state_dir=Path(args.state_dir))
    return run(config)


COMMAND_MODULES: tuple[str, ...] = ("firmware.emulator", "firmware.laptop")
"""Modules that add subcommands: each has ``register(commands)``."""


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
    run_parser = commands.add_parser(
        "run", help="run the referee on a Raspberry Pi",
        description="Run the referee with real buttons and OLED, as configured.",
    )
    run_parser.add_argument("--config", required=True, metavar="FILE",
                            help="TOML config (see hw/referee.toml)")
    run_parser.add_argument("--state-dir", metavar="DIR", help="where games are kept")
    run_parser.set_defaults(run=_cmd_run)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    code: int = args.run(args)
    return code
