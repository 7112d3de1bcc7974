"""``euchre-referee run``: the referee on a Raspberry Pi.

Wires the config's pin map to gpiozero buttons, the OLED through
:class:`drivers.PageDiffDisplay`, the optional buzzer and LEDs, the journal in
the state directory, and runs the main loop (pinging the systemd watchdog
from it when started by systemd).
"""

from __future__ import annotations

import queue
import signal
import sys
from pathlib import Path
from typing import Any

from .app import Referee
from .config import Config
from .store import Store
from .systemd import Notifier


def build_hardware(config: Config, events: queue.Queue[Any], *, pin_factory: Any = None
                   ) -> tuple[Any, Any, Any]:
    """Buttons, display and indicators from the config (imports gpiozero/luma)."""
    from drivers import ButtonBank, Indicators, PageDiffDisplay, open_oled

    buttons = ButtonBank(
        config.pins, events, bounce_time=config.bounce_s, hold_time=config.hold_s,
        encoder=config.encoder, pin_factory=pin_factory,
    )
    display_config = config.display
    device = open_oled(
        display_config.controller, port=display_config.i2c_port,
        address=display_config.address, rotate=display_config.rotate, init=False,
    )
    display = PageDiffDisplay(device)
    indicators = None
    if config.buzzer_pin is not None or config.status_led_pin is not None or (
        config.seat_led_pins
    ):
        indicators = Indicators(
            buzzer=config.buzzer_pin, status_led=config.status_led_pin,
            leds=config.seat_led_pins or None, pin_factory=pin_factory,
        )
    return buttons, display, indicators


def run(config: Config) -> int:
    """Run the referee until SIGTERM/SIGINT."""
    events: queue.Queue[Any] = queue.Queue()
    buttons, display, indicators = build_hardware(config, events)
    store = Store(Path(config.state_dir))
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
    notifier.ready()
    serial_service = None
    if config.serial_port:
        from .serial_service import SerialService

        serial_service = SerialService.open(config.serial_port, config.baudrate, events,
                                            referee)
    try:
        referee.run(events, stop=lambda: stopping, on_loop=notifier.watchdog, poll=0.5)
    finally:
        notifier.stopping()
        if serial_service is not None:
            serial_service.close()
        buttons.close()
        store.close()
    print("euchre-referee: stopped", file=sys.stderr)
    return 0
