"""``euchre-referee run``: the referee on a Raspberry Pi.

Opens the panel the config's ``[display]`` names (a luma.oled device on SPI
or I2C: :func:`drivers.open_panel`), the journal in the state directory,
draws the first frame, then the config's pin map to gpiozero buttons and the
optional buzzer and LEDs, and runs the main loop (pinging the systemd
watchdog from it when started by systemd).

Faults at the table keep the referee scoring: a display that is missing at
boot or stops answering is retried (:class:`drivers.RetryingDisplay`, and
``Referee.refresh`` retries a failed frame on the next pass), said in one
line when it goes and when it is back, and shows the state when it is back;
a serial port that cannot be opened is logged (at warning level), marked in
the screen's corner (:data:`SERIAL_FLAG`) while it is missing, retried, and
the buttons go on working.  No GPIO (no pin factory,
lgpio unable to open the chip) or a bad pin map stops the start with one line
saying what is missing and what to do.  A journal that cannot be opened (a
read-only or full card, another referee on the state directory: see
:class:`~firmware.journal.Store`) never stops it either: a game it keeps is
shown read-only, entries refused with the cause, or else the cause is said in
one line in the log and on the screen; either way it is tried again every
:data:`~firmware.start.JOURNAL_RETRY_S` seconds (pinging the watchdog), the
same path as the emulator's (:mod:`firmware.start`): no restart loop.  Nor
does a journal whose first write fails (the first game cannot be stored: the
card gives read/write errors): said the same way, tried again the same way.
A log that cannot be written (standard error on a full card, a closed pipe)
never stops it (:mod:`firmware.stderr`).
"""

from __future__ import annotations

import argparse
import queue
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..app import Inbox, Referee
from ..config import Config
from ..exits import EXIT_OK, EXIT_USAGE
from ..start import journal_keeper, open_referee, show_notice
from ..start import open_journal as open_journal  # (re-exported: tests take it from here)
from ..stderr import guard as guard_stderr
from .systemd import Notifier

if TYPE_CHECKING:
    from drivers import ButtonBank, Indicators, RetryingDisplay
    from drivers.serialport import SerialLink

SERIAL_FLAG: Final = "!serial"
"""``Referee.flags`` while the configured serial port cannot be opened (drawn as
'!' in the corner)."""

NO_CHIP_ADVICE: Final = (
    "is this a Raspberry Pi with /dev/gpiochip0, and is this user in the group gpio "
    "(scripts/install-pi.sh sets it up)?"
)


def hardware_problem(error: Exception) -> str:
    """One line for a hardware fault that stops the start, with what to do."""
    from drivers import GpioChipError, NoGpio

    if isinstance(error, GpioChipError):
        return f"GPIO not available: {error}: {NO_CHIP_ADVICE}"
    if isinstance(error, NoGpio):
        from .advice import no_gpio_advice, python_here

        return f"GPIO not available: {error}; {no_gpio_advice(python_here())}"
    return f"{error} (check the pins in the config file, hw/README.md has the map)"


def open_display(config: Config) -> RetryingDisplay:
    """The panel from the config's ``[display]`` (imports luma and Pillow;
    gpiozero is not imported here).

    A :class:`drivers.RetryingDisplay`: a missing or silent panel does not
    stop the start.  Raises :class:`drivers.DriverConfigError` for settings
    luma refuses or a rotation the screens cannot take (one line naming the
    key), before any bus is opened.
    """
    from drivers import RetryingDisplay, check_panel, open_panel

    from ..view import SCREEN_SIZE

    settings = config.display
    check_panel(settings, SCREEN_SIZE)
    display = RetryingDisplay(lambda: open_panel(settings, SCREEN_SIZE),
                              contrast=settings.contrast, dim_contrast=config.care.dim_contrast)
    display.try_open()  # raises for a bad display config, not for a missing panel
    return display


def build_inputs(config: Config, events: Inbox, *, pin_factory: Any = None
                 ) -> tuple[ButtonBank, Indicators | None]:
    """The buttons, and the buzzer and LEDs when the config has any (imports
    gpiozero).  Raises :class:`drivers.PinError` (:class:`drivers.NoGpio`: no
    GPIO here) or :class:`drivers.DriverConfigError` for a bad pin map."""
    from drivers import ButtonBank, Indicators

    buttons = ButtonBank(
        config.pins, events, bounce_time=config.bounce_s, hold_time=config.hold_s,
        encoder=config.encoder, pin_factory=pin_factory,
    )
    indicators: Indicators | None = None
    if config.buzzer_pin is not None or config.status_led_pin is not None or (
        config.seat_led_pins
    ):
        try:
            indicators = Indicators(
                buzzer=config.buzzer_pin, status_led=config.status_led_pin,
                leds=config.seat_led_pins or None, pin_factory=pin_factory,
            )
        except BaseException:
            buttons.close()
            raise
    return buttons, indicators


def run_command(args: argparse.Namespace) -> int:
    """``euchre-referee run --config FILE [--state-dir DIR]``."""
    from ..config import ConfigError, load_config

    try:
        config = load_config(Path(args.config))
    except ConfigError as error:
        print(f"euchre-referee: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.state_dir:
        config = config._replace(state_dir=Path(args.state_dir))
    from ..club import join_config

    return run(join_config(config, args))


def show_serial_state(referee: Referee, link: SerialLink) -> None:
    """The corner flag follows the serial port: set while it cannot be opened."""
    missing = link.open_error is not None
    if missing != (SERIAL_FLAG in referee.flags):
        others = tuple(flag for flag in referee.flags if flag != SERIAL_FLAG)
        referee.flags = (*others, SERIAL_FLAG) if missing else others


def run(config: Config) -> int:
    """Run the referee until SIGTERM/SIGINT.

    The first frame comes before the buttons: the display needs luma and
    Pillow, the journal and the referee Python's standard library, the
    buttons gpiozero, whose import is the largest part of the start
    (``bench/first_frame_instructions.py``).  Nothing is lost by it: a press
    before the buttons exist was never seen.
    """
    from drivers import DriverConfigError, PinError

    guard_stderr()  # a log that cannot be written never stops the referee
    events: Inbox = queue.Queue()
    try:
        display = open_display(config)
    except DriverConfigError as error:
        print(f"euchre-referee: {error} (check [display] in the config file)", file=sys.stderr)
        return EXIT_USAGE
    stopping = False

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    notifier = Notifier.from_environment()
    referee = open_referee(Path(config.state_dir), display, notifier, lambda: stopping,
                           lambda store: Referee(config, store, display=display))
    if referee is None:
        notifier.stopping()
        display.close()
        notifier.close()
        print("euchre-referee: stopped", file=sys.stderr)
        return EXIT_OK
    keep_journal = journal_keeper(referee)  # a kept game shown read-only: retried
    for note in referee.notes:
        print(f"euchre-referee: {note}", file=sys.stderr)
    referee.refresh()  # the first frame
    try:
        buttons, indicators = build_inputs(config, events)
    except (PinError, DriverConfigError) as error:
        problem = hardware_problem(error)
        print(f"euchre-referee: {problem}", file=sys.stderr)
        show_notice(display, "No buttons", (problem,))
        display.close()
        notifier.close()
        referee.store.close()
        return EXIT_USAGE
    referee.attach_inputs(indicators=indicators, is_pressed=buttons.is_pressed)
    if not display.is_open:
        print(f"euchre-referee: display not answering, retrying every {display.retry_s:g} s: "
              f"{display.last_error}", file=sys.stderr)
    display.say = lambda text: print(f"euchre-referee: {text}", file=sys.stderr, flush=True)
    if indicators is not None:
        indicators.status(True)
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
        if club_box is None:  # [table] confirm_result: a game's end accepted
            from ..round_end import house_round_end

            house_round_end(referee)
        notifier.ready()
        # The loop passes at least every `poll` seconds even when idle, and
        # pings on each pass: keep that well inside half the watchdog timeout.
        poll = 0.5 if notifier.interval is None else min(0.5, notifier.interval / 2)

        def on_loop() -> None:
            notifier.watchdog()
            keep_journal()
            if serial_service is not None:
                show_serial_state(referee, serial_service.link)

        referee.run(events, stop=lambda: stopping, on_loop=on_loop, poll=poll)
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
        referee.store.close()
    print("euchre-referee: stopped", file=sys.stderr)
    return EXIT_OK
