"""``euchre-referee emulate``: the referee without hardware.

The same :class:`~firmware.app.Referee` runs with the terminal standing in for
the box: its OLED frames are drawn with Unicode block characters
(:class:`~firmware.emulator.terminal.TerminalDisplay`) and the keyboard is the
buttons (a :class:`~firmware.emulator.terminal.KeyReader` thread puts a
:class:`drivers.ButtonEvent` on the main loop's queue for each key).  The main
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
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from drivers import PRESS, ButtonEvent

from ..app import Referee
from ..config import Config, ConfigError, load_config
from ..exits import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from ..fonts import screen_name_problem
from ..start import journal_keeper, open_referee
from ..stderr import guard as guard_stderr
from .terminal import (
    SCREEN_ENTER,
    SCREEN_LEAVE,
    Key,
    KeyReader,
    TerminalDisplay,
    raw_terminal,
    status_lines,
)


def emulator_config(args: argparse.Namespace) -> Config:
    """The Config from --config and the flags that override it (ConfigError if bad)."""
    from euchre_core import Rules, RulesError
    from euchre_core.events import Players
    from euchre_core.log import parse_line

    config = load_config(Path(args.config)) if args.config else Config()
    if args.state_dir:
        config = config._replace(state_dir=Path(args.state_dir))
    if args.layout:
        config = config._replace(layout=args.layout)
    if args.rules is not None:
        tokens = args.rules.split()
        if tokens[:1] == ["rules"]:
            tokens = tokens[1:]
        try:
            config = config._replace(rules=Rules.from_tokens(tokens))
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
        for seat, name in event.names:
            problem = screen_name_problem(name)
            if problem is not None:
                raise ConfigError(f"--players: {seat}'s name must be {problem}")
        names = dict(config.names)
        names.update(event.names)
        config = config._replace(names=names)
    from ..club import join_config

    return join_config(config, args)


class StoppedWaiting(Exception):
    """Quit while the journal could not be opened (nothing was entered)."""


@contextmanager
def _quit_keys(stdin: int) -> Iterator[Callable[[], bool]]:
    """A ``stopping()`` for the wait for a journal: true once q or Ctrl-C is
    typed, the input ends, or SIGTERM/SIGHUP/SIGINT comes.  The keyboard is
    read (raw) only from the first call: a journal that opens at once
    changes nothing."""
    quit_now = threading.Event()
    watching = False

    def on_key(key: Key) -> None:
        if key.name == "QUIT":
            quit_now.set()

    def on_signal(signum: int, frame: Any) -> None:
        quit_now.set()

    with ExitStack() as stack:

        def stopping() -> bool:
            nonlocal watching
            if not watching:
                watching = True
                for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                    stack.callback(signal.signal, signum, signal.signal(signum, on_signal))
                stack.enter_context(raw_terminal(stdin))
                reader = KeyReader(stdin, on_key, quit_now.set)
                reader.start()
                stack.callback(reader.join, 1.0)
                stack.callback(reader.stop)
            return quit_now.is_set()

        yield stopping


def build_emulator(args: argparse.Namespace, *, out: BinaryIO | None = None, stdin: int = 0
                   ) -> tuple[Referee, queue.Queue[Any], TerminalDisplay]:
    """The referee on the terminal: its queue and display, not yet running.

    The journal is opened as the device opens it (:func:`firmware.start.open_referee`):
    one that cannot be written but keeps a game is shown read-only; else the
    cause is on the screen and it is tried again until it opens, or until q,
    Ctrl-C or the end of input (:class:`StoppedWaiting`).
    Raises ConfigError for bad options and FontsMissing without the fonts."""
    from ..fonts import load_fonts
    from ..pi.systemd import Notifier

    config = emulator_config(args)
    load_fonts()  # fail here, before the terminal is changed, if the fonts are missing
    events: queue.Queue[Any] = queue.Queue()
    display = TerminalDisplay(out if out is not None else sys.stdout.buffer,
                              blocks=getattr(args, "blocks", "auto"))
    with _quit_keys(stdin) as stopping:
        referee = open_referee(Path(config.state_dir), display, Notifier(None), stopping,
                               lambda store: Referee(config, store, display=display))
    if referee is None:
        raise StoppedWaiting
    display.status = lambda: status_lines(referee.view())
    return referee, events, display


def run_emulator(referee: Referee, events: queue.Queue[Any], display: TerminalDisplay, *,
                 stdin: int = 0, each_pass: Callable[[], object] | None = None) -> int:
    """Run the main loop with the keyboard on ``stdin`` as the buttons until quit
    (calling ``each_pass`` on each pass of the loop).

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
            events.put(ButtonEvent(key.name, PRESS, time.monotonic()))
        else:
            events.put(lambda _referee, text=key.text: display.note(
                f"{text}: not a button (? shows the keys, q quits)"))

    def on_signal(signum: int, frame: Any) -> None:
        if signum == signal.SIGWINCH:
            resized.set()
        else:
            quitting.set()

    def on_loop() -> None:
        if each_pass is not None:
            each_pass()
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
        _let_go_of_a_lost_terminal(out)
    return EXIT_OK


def _let_go_of_a_lost_terminal(out: BinaryIO) -> None:
    """When the terminal went away (EIO), point stdout and stderr at /dev/null
    so that nothing written on the way out turns into a traceback: every entry
    is already in the journal."""
    try:
        out.flush()
        sys.stderr.flush()
        return
    except OSError:
        pass
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):
            pass
    os.close(devnull)


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


def emulate(args: argparse.Namespace) -> int:
    """``euchre-referee emulate``: build the emulator, open its serial link, run it."""
    from ..fonts import FontsMissing

    guard_stderr()  # a log that cannot be written never stops the referee
    try:
        referee, events, display = build_emulator(args)
    except (ConfigError, FontsMissing) as error:
        print(f"euchre-referee: {error}", file=sys.stderr)
        return EXIT_USAGE
    except StoppedWaiting:  # the journal could not be opened, and the table quit
        print("euchre-referee: stopped before the journal opened", file=sys.stderr)
        return EXIT_INVALID
    # A kept game shown read-only (a read-only card): tried again, as on the device.
    keep_journal = journal_keeper(referee, say=display.note)
    # Services sharing the queue (the serial link on a pseudo-terminal) start here.
    # The serial link (firmware.link.service) on a pseudo-terminal, --pty-link.
    from ..link.service import SerialService

    try:
        serial_link = SerialService.open_pty(events, referee, link=args.pty_link)
    except OSError as error:
        print(f"euchre-referee: --pty-link {args.pty_link}: {error}", file=sys.stderr)
        referee.store.close()
        return EXIT_USAGE
    where = f"{serial_link.slave_path}" + (f" (link: {args.pty_link})" if args.pty_link else "")
    print(f"euchre-referee: serial link on {where}", file=sys.stderr, flush=True)
    display.footer = f"serial link: {where}"  # on the screen for as long as it runs
    from ..club.box import join as join_club  # --club URL --table N: a club night

    club_box = join_club(referee, events, say=display.note)
    if club_box is None:  # [table] confirm_result: a game's end accepted
        from ..round_end import house_round_end

        house_round_end(referee)
    try:
        code = run_emulator(referee, events, display, each_pass=keep_journal)
    finally:
        if club_box is not None:
            club_box.close()
        serial_link.close()
        referee.store.close()
    try:
        print(f"euchre-referee: stopped; games kept in {referee.store.state_dir}/ "
              "(start again to resume)", file=sys.stderr)
    except OSError:
        pass
    return code
