"""``euchre-referee emulate``: the referee without hardware.

The same :class:`~firmware.app.Referee` runs with the terminal standing in for
the box: its OLED frames are drawn with Unicode block characters
(:class:`~firmware.terminal.TerminalDisplay`) and the keyboard is the buttons
(a :class:`~firmware.terminal.KeyReader` thread puts a
:class:`~firmware.app.Press` on the main loop's queue for each key).  The main
loop stays single-threaded: everything that changes the referee or the screen
goes through the queue.

Wiring is split from running so that other services (the serial link over a
pseudo-terminal) can be started on the same queue between the two:
:func:`build_emulator` makes ``(referee, events, display)`` and
:func:`run_emulator` runs the loop until ``q``, Ctrl-C, SIGTERM/SIGHUP or the
end of input.
"""

from __future__ import annotations

import argparse
import os
import queue
import signal
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO

from .app import Press, Referee
from .config import Config, ConfigError, load_config
from .store import Store
from .terminal import (
    SCREEN_ENTER,
    SCREEN_LEAVE,
    Key,
    KeyReader,
    TerminalDisplay,
    raw_terminal,
    status_lines,
)

DEFAULT_STATE_DIR = Path("state")
"""Where games are kept unless --state-dir or the config file says otherwise."""

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
frame: the score, the hand and the prompt in words, and these keys.  Runs in
any terminal or tmux (plain ANSI, no curses); with stdin not a terminal it
reads keys from the pipe and quits at its end.

Games are kept in the state directory: --state-dir, else the config file's
table.state_dir, else ./state (relative to where it is started).  The newest
game there is resumed; --players and --rules apply to new games.
"""


def emulator_config(args: argparse.Namespace) -> Config:
    """The Config from --config and the flags that override it (ConfigError if bad)."""
    from euchre_core import Rules, RulesError
    from euchre_core.events import Players
    from euchre_core.log import parse_line

    config = load_config(Path(args.config)) if args.config else Config()
    if args.state_dir:
        config = replace(config, state_dir=Path(args.state_dir))
    if args.layout:
        config = replace(config, layout=args.layout)
    if args.rules is not None:
        tokens = args.rules.split()
        if tokens[:1] == ["rules"]:
            tokens = tokens[1:]
        try:
            config = replace(config, rules=Rules.from_tokens(tokens))
        except RulesError as error:
            raise ConfigError(f"--rules: {error}") from None
    if args.players is not None:
        text = args.players.strip()
        if not text.startswith("players "):
            text = "players " + text
        try:
            event = parse_line(text)
        except ValueError as error:
            raise ConfigError(f"--players: {error}") from None
        if not isinstance(event, Players):
            raise ConfigError("--players: seat=name pairs, e.g. N=Ragnar E=Sigríður")
        names = dict(config.names)
        names.update(event.names)
        config = replace(config, names=names)
    return config


def build_emulator(args: argparse.Namespace, *, out: BinaryIO | None = None
                   ) -> tuple[Referee, queue.Queue[Any], TerminalDisplay]:
    """The referee on the terminal: its queue and display, not yet running.

    Raises ConfigError for bad options and FontsMissing without the fonts."""
    from .fonts import load_fonts

    config = emulator_config(args)
    load_fonts()  # fail here, before the terminal is changed, if the fonts are missing
    events: queue.Queue[Any] = queue.Queue()
    store = Store(Path(config.state_dir))
    display = TerminalDisplay(out if out is not None else sys.stdout.buffer,
                              blocks=getattr(args, "blocks", "auto"))
    referee = Referee(config, store, display=display)
    display.status = lambda: status_lines(referee.view())
    return referee, events, display


def run_emulator(referee: Referee, events: queue.Queue[Any], display: TerminalDisplay, *,
                 stdin: int = 0) -> int:
    """Run the main loop with the keyboard on ``stdin`` as the buttons until quit.

    The terminal's mode, screen and signal handlers are restored on the way
    out, also after an exception or SIGTERM."""
    quitting = threading.Event()
    resized = threading.Event()

    def quit_after_queued(_: Referee) -> None:
        quitting.set()

    def on_key(key: Key) -> None:  # the reader thread: only queue things
        if key.name == "QUIT":
            events.put(quit_after_queued)
        elif key.name:
            events.put(Press(key.name, time=time.monotonic()))
        else:
            events.put(lambda _referee, text=key.text: display.note(
                f"{text}: not a button (? shows the keys, q quits)"))

    def on_signal(signum: int, frame: Any) -> None:
        if signum == signal.SIGWINCH:
            resized.set()
        else:
            quitting.set()

    def on_loop() -> None:
        if resized.is_set():
            resized.clear()
            display.redraw(clear=True)

    wanted = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGWINCH]
    previous = {signum: signal.signal(signum, on_signal) for signum in wanted}
    out = display.out
    screen = _isatty(out)
    try:
        with raw_terminal(stdin):
            if screen:
                out.write(SCREEN_ENTER.encode())
                out.flush()
            reader = KeyReader(stdin, on_key, lambda: events.put(quit_after_queued))
            reader.start()
            try:
                referee.run(events, stop=quitting.is_set, on_loop=on_loop, poll=0.25)
            finally:
                reader.stop()
                if screen:
                    _leave_screen(out)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0


def _leave_screen(out: BinaryIO) -> None:
    try:
        out.write(SCREEN_LEAVE.encode())
        out.flush()
    except OSError:  # the terminal is gone (a closed tmux pane): nothing to restore
        pass


def _isatty(out: Any) -> bool:
    try:
        return os.isatty(out.fileno())
    except (OSError, ValueError, AttributeError):
        return False


def _cmd_emulate(args: argparse.Namespace) -> int:
    from .fonts import FontsMissing

    try:
        referee, events, display = build_emulator(args)
    except (ConfigError, FontsMissing) as error:
        print(f"euchre-referee: {error}", file=sys.stderr)
        return 2
    # Services sharing the queue (the serial link on a pseudo-terminal) start here.
    # --- serial link (firmware.serial_service): a pseudo-terminal, --pty-link ---
    from .serial_service import SerialService

    try:
        serial_link = SerialService.open_pty(events, referee, link=args.pty_link)
    except OSError as error:
        print(f"euchre-referee: --pty-link {args.pty_link}: {error}", file=sys.stderr)
        referee.store.close()
        return 2
    where = f"{serial_link.slave_path}" + (f" (link: {args.pty_link})" if args.pty_link else "")
    print(f"euchre-referee: serial link on {where}", file=sys.stderr, flush=True)
    display.note(f"serial link: {where}")
    # --- end serial link ---
    try:
        code = run_emulator(referee, events, display)
    finally:
        serial_link.close()
        referee.store.close()
    try:
        print(f"euchre-referee: stopped; games kept in {referee.store.state_dir}/ "
              "(start again to resume)", file=sys.stderr)
    except OSError:
        pass
    return code


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
    parser.add_argument("--pty-link", metavar="PATH",  # serial link (firmware.serial_service)
                        help="the serial link is a pseudo-terminal (its path is printed); also "
                        "make PATH a symlink to it, replacing an old link")
    parser.set_defaults(run=_cmd_emulate)
