"""The referee on a Raspberry Pi: the hardware wiring and the ``run`` command
(:mod:`.run`), the systemd notifications (:mod:`.systemd`).  Importing this
package is cheap; ``run`` imports luma and Pillow for the panel, and
gpiozero after its first frame."""

from __future__ import annotations

import argparse
from typing import Any, Final


def _run(args: argparse.Namespace) -> int:
    from .run import run_command

    return run_command(args)


COMMANDS: Final = ("run",)
"""The ``euchre-referee`` commands :func:`register` adds."""


def register(commands: Any) -> None:
    """Add ``run`` to the ``euchre-referee`` subcommands."""
    parser = commands.add_parser(
        "run", help="run the referee on a Raspberry Pi",
        description="Run the referee with real buttons and OLED, as configured.",
    )
    parser.add_argument("--config", required=True, metavar="FILE",
                        help="TOML config (see hw/referee.toml)")
    parser.add_argument("--state-dir", metavar="DIR", help="where games are kept")
    from ..club import add_join_options

    add_join_options(parser)
    parser.set_defaults(run=_run)
