"""The referee without hardware: the OLED drawn in the terminal, the keyboard as
the buttons (:mod:`.terminal`), a pseudo-terminal as the serial port
(:mod:`.run`).  Importing this package is cheap; ``emulate`` imports the rest."""

from __future__ import annotations

import argparse
from typing import Any, Final

from ..defaults import DEFAULT_STATE_DIR

EPILOG = """\
keys (the box's buttons):
  n e s w        seat buttons N E S W: first dealer, maker, trick winner
  S H D C        suit buttons: spades hearts diamonds clubs (upcard, trump)
  a              ALONE: the maker goes alone (during tricks: a renege)
  Enter          OK: confirm a call, pass, claim the rest; random first dealer
  Backspace      UNDO: one entry back, as far as the start of the game
  arrow keys     left/up = PREV, right/down = NEXT: the first press shows the
                 choices, the next ones move the cursor, Enter picks (all
                 input with --layout cursor)
  ? or h         HELP: show or hide the help screen
  q or Ctrl-C    quit (every entry is already saved; starting again resumes)

a hand, typed:  n (North deals first)  H (upcard hearts)  s H Enter (South
  orders up hearts)  s s n s e (who won each trick)  ->  NS 1  EW 0

The OLED is drawn with half blocks (one character = 1x2 pixels) in a
terminal of 130x40 or more; a narrower one gets quadrant blocks (2x2 pixels,
66 columns), a shorter one a half-size picture (see --blocks).  Under the
frame: the score, the hand and the prompt in words, these keys, and the
serial link's path.  Runs in any terminal or tmux (plain ANSI, no curses);
with stdin not a terminal it reads keys from the pipe and quits at its end.

Games are kept in the state directory: --state-dir, else the config file's
table.state_dir, else ./state (relative to where it is started).  The newest
game there is resumed; --players and --rules apply to new games.
"""



def _emulate(args: argparse.Namespace) -> int:
    from .run import emulate

    return emulate(args)


COMMANDS: Final = ("emulate",)
"""The ``euchre-referee`` commands :func:`register` adds."""


def register(commands: Any) -> None:
    """Add ``emulate`` to the ``euchre-referee`` subcommands."""
    parser = commands.add_parser(
        "emulate", help="run the referee in a terminal (no hardware needed)",
        description="Run the referee with the OLED drawn in the terminal and the keyboard as "
        "its buttons.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--state-dir", metavar="DIR",
                        help=f"where games are kept (default: ./{DEFAULT_STATE_DIR}, or the "
                        "config file's table.state_dir)")
    parser.add_argument("--config", metavar="FILE",
                        help="a referee TOML config (players, rules, layout); pins are ignored")
    parser.add_argument("--rules", metavar="SETTINGS",
                        help='house rules for new games, e.g. "target=11 stick-the-dealer=off"')
    parser.add_argument("--layout", choices=("seats", "cursor"),
                        help="button layout (default seats; cursor: arrows and Enter only)")
    parser.add_argument("--players", metavar="NAMES",
                        help='names for new games, e.g. "N=Ragnar E=Sigríður W=\\"Anna K\\""')
    parser.add_argument("--blocks", choices=("auto", "half", "quad", "small"), default="auto",
                        help="how the frame is drawn: half blocks (130 columns), quadrants "
                        "(66), half size, or auto by terminal size (default)")
    parser.add_argument("--pty-link", metavar="PATH",
                        help="the serial link is a pseudo-terminal (its path is shown under the "
                        "frame); also make PATH a symlink to it, replacing an old link")
    from ..club import add_join_options

    add_join_options(parser)
    parser.set_defaults(run=_emulate)
