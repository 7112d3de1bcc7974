"""The serial link, both ends: the wire (:mod:`.protocol`), the device's end
(:mod:`.service`), the laptop's end (:mod:`.client`) and the laptop commands
(:mod:`.commands`).  Importing this package is cheap: the commands' modules
(and pyserial) are imported when a command runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from .protocol import DEFAULT_BAUDRATE, DEFAULT_TIMEOUT_S

if TYPE_CHECKING:  # the device imports this package (for the wire's limits), not argparse
    import argparse


def _send(args: argparse.Namespace) -> int:
    from .commands import send

    return send(args)


def _status(args: argparse.Namespace) -> int:
    from .commands import status

    return status(args)


def _export(args: argparse.Namespace) -> int:
    from .commands import export

    return export(args)


def _enter(args: argparse.Namespace) -> int:
    from .commands import enter

    return enter(args)


def _watch(args: argparse.Namespace) -> int:
    from .commands import watch

    return watch(args)


def _stats(args: argparse.Namespace) -> int:
    from .commands import stats

    return stats(args)


def _port_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", required=True, metavar="PORT",
                        help="the device's serial port: a path (/dev/ttyACM0, the emulator's "
                        "pseudo-terminal) or a pyserial URL (socket://HOST:PORT)")
    parser.add_argument("--baudrate", type=int, default=DEFAULT_BAUDRATE, metavar="N",
                        help=f"bits per second (default {DEFAULT_BAUDRATE})")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                        help=f"seconds to wait for each answer (default {DEFAULT_TIMEOUT_S:g})")


COMMANDS: Final = ("send", "status", "export", "enter", "watch", "stats")
"""The ``euchre-referee`` commands :func:`register` adds."""


def register(commands: Any) -> None:
    """Add the laptop commands to ``euchre-referee``."""
    exits = "Exit 0 done, 1 refused by the device, 2 usage or port errors."
    send = commands.add_parser(
        "send", help="replay a log on the device over a serial port; print its verdict",
        description="Send FILE to the referee on PORT to be checked line by line; print the "
        "verdict like 'replay' does (or its --json object). Exit 0 when the log is valid, 1 "
        "when it is invalid, 2 on usage or port errors.",
    )
    _port_options(send)
    send.add_argument("--json", action="store_true", help="print the 'replay --json' object")
    send.add_argument("--load", action="store_true",
                      help="when valid, make the log the device's current game")
    send.add_argument("file", metavar="FILE", help="a game log ('-': standard input)")
    send.set_defaults(run=_send)
    status = commands.add_parser(
        "status", help="the device's live game", description="Print the live game on the "
        "referee at PORT: score, hand, dealer, leader, call, tricks, what comes next. " + exits)
    _port_options(status)
    status.add_argument("--json", action="store_true", help="one JSON object")
    status.set_defaults(run=_status)
    export = commands.add_parser(
        "export", help="a game from the device as a log",
        description="Print the device's current game (or stored game ID) as a clean log. "
        + exits)
    _port_options(export)
    export.add_argument("--game", type=int, metavar="ID", help="a stored game (default: current)")
    export.add_argument("--format", choices=("log", "egn"), default="log",
                        help="a game log (the default) or EGN 1.4, Euchre Game Notation's JSON "
                        "(what EGN cannot hold: one line on stderr)")
    export.set_defaults(run=_export)
    stats = commands.add_parser(
        "stats", help="each player's statistics over the device's kept games",
        description="Print each player's statistics (games, wins, calls, loners, euchres, "
        "points per call), replayed by the referee at PORT from the games it keeps. " + exits)
    _port_options(stats)
    stats.add_argument("--json", action="store_true", help="one JSON object")
    stats.set_defaults(run=_stats)
    enter = commands.add_parser(
        "enter", help="enter one table event on the device",
        description="Enter one table event on the referee at PORT, as its buttons would "
        "(e.g. 'trick N', 'make E H alone', 'undo'). Exit 0 once it is durable, 1 when the "
        "device refuses it (the reason on stderr), 2 on port errors. When its answer is lost "
        "(another program reading the port took it) it asks the device's status whether the "
        "entry was kept and exits accordingly; 2 when that cannot be told.",
    )
    _port_options(enter)
    enter.add_argument("event", nargs="+", metavar="EVENT", help="the event's words")
    enter.set_defaults(run=_enter)
    watch = commands.add_parser(
        "watch", help="follow the device's live feed",
        description="Print each table event as it is entered on the referee at PORT (by its "
        "buttons or over the link), one log line each, until Ctrl-C. With --enter, each line "
        "typed on standard input is entered too, on the same connection (the port is opened "
        "exclusively, so a second command cannot share it): 'entered: ...' or 'refused: "
        "REASON' on stderr; the watch ends at the end of the input, exit 0 when every entry "
        "was durable, 1 when any was refused.",
    )
    _port_options(watch)
    watch.add_argument("--enter", action="store_true",
                       help="also enter each line of standard input (e.g. 'trick N')")
    watch.set_defaults(run=_watch)
