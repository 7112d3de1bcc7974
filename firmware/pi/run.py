"""``euchre-referee run``: the referee on a Raspberry Pi.

Wires the config's pin map to gpiozero buttons, the OLED through
:class:`drivers.PageDiffDisplay`, the optional buzzer and LEDs, the journal in
the state directory, and runs the main loop (pinging the systemd watchdog
from it when started by systemd).

Faults at the table keep the referee scoring: a display that is missing at
boot or stops answering is retried (:class:`drivers.RetryingDisplay`, and
``Referee.refresh`` retries a failed frame on the next pass) and shows the
state when it is back; a serial port that cannot be opened is reported in the
log and the buttons go on working.  Only a journal that cannot be opened at
all (locked, read-only, I/O errors: see :class:`~firmware.store.Store`) stops
the start: it is said on the screen and the process exits non-zero, so
systemd starts it again.
"""

from __future__ import annotations

import argparse
import queue
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..app import FrameSink, Inbox, Referee
from ..config import Config
from ..exits import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from ..store import JournalError, Store
from .systemd import Notifier

if TYPE_CHECKING:
    from drivers import ButtonBank, Indicators, PageDiffDisplay, RetryingDisplay


def build_hardware(config: Config, events: Inbox, *, pin_factory: Any = None
                   ) -> tuple[ButtonBank, RetryingDisplay, Indicators | None]:
    """Buttons, display and indicators from the config (imports gpiozero/luma).

    The display is a :class:`drivers.RetryingDisplay`: a missing or silent OLED does
    not stop the start.
    """
    from drivers import ButtonBank, Indicators, PageDiffDisplay, RetryingDisplay, open_oled

    buttons = ButtonBank(
        config.pins, events, bounce_time=config.bounce_s, hold_time=config.hold_s,
        encoder=config.encoder, pin_factory=pin_factory,
    )
    display_config = config.display

    def open_display() -> PageDiffDisplay:
        device = open_oled(
            display_config.controller, port=display_config.i2c_port,
            address=display_config.address, rotate=display_config.rotate, init=False,
        )
        return PageDiffDisplay(device)

    display = RetryingDisplay(open_display)
    try:
        display.try_open()  # raises for a bad display config, not for a missing OLED
        indicators: Indicators | None = None
        if config.buzzer_pin is not None or config.status_led_pin is not None or (
            config.seat_led_pins
        ):
            indicators = Indicators(
                buzzer=config.buzzer_pin, status_led=config.status_led_pin,
                leds=config.seat_led_pins or None, pin_factory=pin_factory,
            )
    except BaseException:
        buttons.close()
        raise
    if not display.is_open:
        print(f"euchre-referee: display not answering, will retry: {display.last_error}",
              file=sys.stderr)
    return buttons, display, indicators


def show_notice(display: FrameSink, title: str, lines: tuple[str, ...]) -> bool:
    """Draw a notice straight on the display (before a Referee exists)."""
    from ..screens import render
    from ..view import View

    try:
        display.show(render(View(kind="notice", title=title, lines=lines)))
    except Exception:  # the message is in the log too
        return False
    return True


def run_command(args: argparse.Namespace) -> int:
    """``euchre-referee run --config FILE [--state-dir DIR]``."""
    from ..config import ConfigError, load_config

    try:
        config = load_config(Path(args.config))
    except ConfigError as error:
        print(f"euchre-referee: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.state_dir:
        config = replace(config, state_dir=Path(args.state_dir))
    from ..club import join_config

    return run(join_config(config, args))


def run(config: Config) -> int:
    """Run the referee until SIGTERM/SIGINT."""
    events: Inbox = queue.Queue()
    buttons, display, indicators = build_hardware(config, events)
    try:
        store = Store(Path(config.state_dir))
    except JournalError as error:
        print(f"euchre-referee: journal not opened: {error}", file=sys.stderr)
        show_notice(display, "Journal not opened", (str(error)[-60:], "Retrying..."))
        buttons.close()
        display.close()
        if indicators is not None:
            indicators.close()
        return EXIT_INVALID  # systemd starts it again
    if store.moved_aside is not None:
        print(f"euchre-referee: unreadable journal moved aside to {store.moved_aside}",
              file=sys.stderr)
    referee = Referee(config, store, display=display, indicators=indicators)
    if indicators is not None:
        indicators.status(True)
    stopping = False

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    notifier = Notifier.from_environment()
    serial_service = None
    club_box = None
    try:
        if config.serial_port:
            try:
                from ..link.service import SerialService

                serial_service = SerialService.open(config.serial_port, config.baudrate,
                                                    events, referee)
            except (ImportError, OSError) as error:
                # The buttons keep scoring; the log says why the link is down.
                print(f"euchre-referee: serial link {config.serial_port} not opened: {error}",
                      file=sys.stderr)
        from ..club.box import join as join_club  # --club URL --table N: a club night

        club_box = join_club(referee, events)
        notifier.ready()
        # The loop passes at least every `poll` seconds even when idle, and
        # pings on each pass: keep that well inside half the watchdog timeout.
        poll = 0.5 if notifier.interval is None else min(0.5, notifier.interval / 2)
        referee.run(events, stop=lambda: stopping, on_loop=notifier.watchdog, poll=poll)
    finally:
        notifier.stopping()
        if club_box is not None:
            club_box.close()
        if serial_service is not None:
            serial_service.close()
        buttons.close()
        display.close()
        if indicators is not None:
            indicators.close()
        notifier.close()
        store.close()
    print("euchre-referee: stopped", file=sys.stderr)
    return EXIT_OK
