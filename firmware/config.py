"""The referee's config file (TOML): players, house rules, pin map, display, serial.

Every key is optional; :data:`DEFAULT_PINS` is the wiring documented in ``hw/``.
A bad value raises :class:`ConfigError` naming the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final, NamedTuple

from drivers.display import PanelSettings
from euchre_core import DEFAULT_NAMES, Rules, RulesError, Seat

from .buttons import BUTTONS, SEAT_BUTTONS, Layout
from .defaults import DEFAULT_EVENT, DEFAULT_STATE_DIR
from .link.protocol import DEFAULT_BAUDRATE
from .view import SCREEN_SIZE

DEFAULT_PINS: dict[str, int] = {
    "N": 5, "E": 6, "S": 13, "W": 19,
    "SPADES": 17, "HEARTS": 27, "DIAMONDS": 22, "CLUBS": 23,
    "ALONE": 20, "UNDO": 21, "OK": 26,
}
"""BCM GPIO numbers of the default layout (each button between the pin and GND).
They leave the display's pins free, for either panel: SPI0 (GPIO 7-11) with DC on
GPIO 24 and RST on GPIO 25 (luma's defaults), and I2C (GPIO 2, 3)."""


CURSOR_PINS: dict[str, int] = {"PREV": 5, "NEXT": 6, "OK": 26, "UNDO": 21}
"""The minimal layout: four buttons (or ``encoder`` pins instead of PREV/NEXT)."""

BCM_PINS: Final = range(0, 28)
"""The GPIO numbers on the 40-pin header (BCM 0 to 27)."""


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the key."""


KNOWN_KEYS: Final[dict[str, frozenset[str]]] = {
    "table": frozenset({"players", "rules", "state_dir", "confirm_result"}),
    "buttons": frozenset({"layout", "pins", "encoder", "bounce_ms", "hold_s"}),
    "display": frozenset({
        "controller", "interface", "port", "address", "device", "bus_speed_hz", "gpio_DC",
        "gpio_RST", "width", "height", "rotate", "options", "contrast", "dim_contrast",
        "dim_after_s", "blank_after_s", "shift_every_s"}),
    "extras": frozenset({"buzzer", "status_led", "seat_leds"}),
    "serial": frozenset({"port", "baudrate"}),
    "club": frozenset({"broker", "table", "event", "username", "password", "cafile"}),
}
"""Every table of the config file and the keys it takes (``hw/referee.toml``
shows each); anything else is refused, naming the closest known one."""

RENAMED_KEYS: Final[dict[tuple[str, str], str]] = {
    ("display", "i2c_port"): 'port (with interface = "i2c": the default interface is SPI)',
}
"""Keys of older configs, by what took their place: said in one line."""


def _closest(name: str, known: list[str] | frozenset[str]) -> str:
    """``; did you mean 'x'?`` for the known name closest to ``name``, or ``''``."""
    from difflib import get_close_matches  # only for a config with a typo

    close = get_close_matches(name, sorted(known), n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


def _check_known_keys(data: dict[str, Any]) -> None:
    """Refuse a table or key the config does not have (``[serail]``,
    ``prot = ...``): left unnoticed, it would leave a setting at its default."""
    for table, keys in data.items():
        if table not in KNOWN_KEYS:
            known = ", ".join(f"[{name}]" for name in KNOWN_KEYS)
            raise ConfigError(f"[{table}]: no such table{_closest(table, list(KNOWN_KEYS))} "
                              f"(the tables: {known})")
        if not isinstance(keys, dict):
            continue  # _expect says what is wrong
        for key in keys:
            if (table, key) in RENAMED_KEYS:
                raise ConfigError(f"{table}.{key}: no longer a key; now "
                                  f"{table}.{RENAMED_KEYS[table, key]} (hw/referee.toml)")
            if key not in KNOWN_KEYS[table]:
                raise ConfigError(f"{table}.{key}: no such key{_closest(key, KNOWN_KEYS[table])} "
                                  f"(in [{table}]: {', '.join(sorted(KNOWN_KEYS[table]))})")


class CareConfig(NamedTuple):
    """Care for the screen against OLED burn-in (``[display]``; :mod:`firmware.care`)."""

    dim_after_s: float = 300.0
    """Seconds without a press or a change on the screen before it dims (0: never)."""
    blank_after_s: float = 1800.0
    """Seconds without a press or a change before it blanks (0: never); the
    press that wakes a blank screen does nothing else."""
    dim_contrast: int = 0
    """The contrast (0-255) of a dimmed screen: luma's ``contrast``."""
    shift_every_s: float = 120.0
    """Seconds between the picture's one-pixel moves (0: it never moves)."""


class Config(NamedTuple):
    """The referee's settings.  A changed setting is a new config
    (``config._replace(rules=...)``): the dicts are never changed in place, so
    configs share the defaults.  (NamedTuples, here and in the other modules the
    start imports, cost a fifth of a dataclass to make.)"""

    names: dict[Seat, str] = DEFAULT_NAMES
    rules: Rules = Rules()
    layout: Layout = "seats"
    pins: dict[str, int] = DEFAULT_PINS
    encoder: tuple[int, int] | None = None
    """BCM pins A, B of a rotary encoder standing in for PREV/NEXT."""
    bounce_s: float = 0.02
    hold_s: float = 1.0
    """A press this long is a long press (seconds): it opens the help pages."""
    display: PanelSettings = PanelSettings()
    """``[display]``: the panel, in luma.oled's and luma.core's names."""
    care: CareConfig = CareConfig()
    """``[display]``: dimming, blanking and moving the picture."""
    buzzer_pin: int | None = None
    status_led_pin: int | None = None
    seat_led_pins: dict[str, int] = {}
    state_dir: Path = DEFAULT_STATE_DIR
    serial_port: str | None = None
    baudrate: int = DEFAULT_BAUDRATE
    message_s: float = 2.5
    """How long a rejection or notice stays on the screen (seconds)."""
    result_s: float = 3.0
    """How long a hand's result stays on the screen (seconds)."""
    confirm_result: bool = False
    """``[table] confirm_result``: off a club night, a game's end is accepted
    by the losing side with a press, as a club round's is (:mod:`firmware.round_end`)."""
    club_broker: str | None = None
    """``[club] broker``: the club night's MQTT broker (mqtt://HOST[:PORT]); None: alone."""
    club_table: int | None = None
    """``[club] table``: this box's table number at the club night."""
    club_event: str = DEFAULT_EVENT
    """``[club] event``: the night's event id (the MQTT topics' root)."""
    club_username: str | None = None
    """``[club] username``: this box's login on the broker (``club setup`` makes it)."""
    club_password: str | None = None
    """``[club] password``: with ``username``."""
    club_cafile: str | None = None
    """``[club] cafile``: the CA certificate a TLS broker (``mqtts://``) is checked with."""
    club_take_over: bool = False
    """``--take-over`` (the command line only): a spare box taking its table over
    in the round in play (``firmware/club/control.py``)."""


def _expect(value: Any, kind: type | tuple[type, ...], key: str) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise ConfigError(f"{key}: expected {getattr(kind, '__name__', kind)}, got {value!r}")
    return value


def _pin(value: Any, key: str) -> int:
    """A BCM GPIO number on the header; ConfigError naming ``key`` if not."""
    pin: int = _expect(value, int, key)
    if pin not in BCM_PINS:
        raise ConfigError(f"{key}: a BCM GPIO number from {BCM_PINS[0]} to {BCM_PINS[-1]}, "
                          f"not {pin} (hw/README.md has the pin map)")
    return pin


def _pins(table: Any, key: str) -> dict[str, int]:
    _expect(table, dict, key)
    pins = {}
    for name, pin in table.items():
        if name not in BUTTONS:
            raise ConfigError(f"{key}.{name}: unknown button (known: {' '.join(BUTTONS)})")
        pins[name] = _pin(pin, f"{key}.{name}")
    return pins


def _check_shared_pins(config: Config) -> None:
    """Every pin drives one thing: a button, an encoder line, the buzzer, an LED."""
    owners: dict[int, str] = {}
    wanted = [(f"buttons.pins.{name}", pin) for name, pin in config.pins.items()]
    if config.encoder is not None:
        wanted += [("buttons.encoder[0]", config.encoder[0]),
                   ("buttons.encoder[1]", config.encoder[1])]
    if config.buzzer_pin is not None:
        wanted.append(("extras.buzzer", config.buzzer_pin))
    if config.status_led_pin is not None:
        wanted.append(("extras.status_led", config.status_led_pin))
    wanted += [(f"extras.seat_leds.{seat}", pin) for seat, pin in config.seat_led_pins.items()]
    if config.display.interface == "spi":
        wanted += [("display.gpio_DC", config.display.gpio_DC),
                   ("display.gpio_RST", config.display.gpio_RST)]
    for key, pin in wanted:
        if pin in owners:
            raise ConfigError(f"{key}: pin {pin} is already {owners[pin]}")
        owners[pin] = key


_PANEL_WORDS: Final = ("controller", "interface")
_PANEL_NUMBERS: Final = ("port", "address", "device", "bus_speed_hz", "width", "height", "rotate",
                         "contrast")
_CARE_SECONDS: Final = ("dim_after_s", "blank_after_s", "shift_every_s")


def _display(table: dict[str, Any]) -> tuple[PanelSettings, CareConfig]:
    """``[display]``: the panel as luma takes it (checked against the installed
    luma, which is imported here: only for a config with a display table), and
    the care of the screen."""
    panel: dict[str, Any] = {}
    for key in _PANEL_WORDS:
        if key in table:
            panel[key] = _expect(table[key], str, f"display.{key}")
    for key in _PANEL_NUMBERS:
        if key in table:
            panel[key] = _expect(table[key], int, f"display.{key}")
    for key in ("gpio_DC", "gpio_RST"):
        if key in table:
            panel[key] = _pin(table[key], f"display.{key}")
    if "options" in table:
        options = _expect(table["options"], dict, "display.options")
        panel["options"] = tuple(sorted(options.items()))
    care: dict[str, Any] = {}
    for key in _CARE_SECONDS:
        if key in table:
            seconds = float(_expect(table[key], (int, float), f"display.{key}"))
            if seconds < 0:
                raise ConfigError(f"display.{key}: seconds, 0 or more (0: never), not {seconds:g}")
            care[key] = seconds
    if "dim_contrast" in table:
        level = _expect(table["dim_contrast"], int, "display.dim_contrast")
        if not 0 <= level <= 255:
            raise ConfigError(f"display.dim_contrast: 0 to 255, not {level}")
        care["dim_contrast"] = level
    settings = PanelSettings(**panel)
    from drivers.display import check_panel  # imports luma: only for a config with a display
    from drivers.errors import DriverConfigError

    try:
        check_panel(settings, SCREEN_SIZE)
    except DriverConfigError as error:
        raise ConfigError(str(error)) from None
    return settings, CareConfig(**care)


def parse_config(data: dict[str, Any], *, base: Path = Path(".")) -> Config:
    """A Config from a parsed TOML document (paths relative to ``base``)."""
    _check_known_keys(data)
    values: dict[str, Any] = {}
    table = _expect(data.get("table", {}), dict, "table")
    if "players" in table:
        names = dict(DEFAULT_NAMES)
        for seat_text, name in _expect(table["players"], dict, "table.players").items():
            try:
                seat = Seat.from_str(seat_text)
            except ValueError as error:
                raise ConfigError(f"table.players.{seat_text}: {error}") from None
            name = _expect(name, str, f"table.players.{seat_text}").strip()
            from .fonts import screen_name_problem  # only for a config with names

            problem = screen_name_problem(name)
            if problem is not None:
                raise ConfigError(f"table.players.{seat_text}: {problem}")
            names[seat] = name
        values["names"] = names
    if "rules" in table:
        rules = _expect(table["rules"], dict, "table.rules")
        tokens = []
        for key, value in rules.items():
            if isinstance(value, bool):
                value = "on" if value else "off"
            tokens.append(f"{key}={value}")
        try:
            values["rules"] = Rules.from_tokens(tokens)
        except RulesError as error:
            raise ConfigError(f"table.rules: {error}") from None
    if "state_dir" in table:
        values["state_dir"] = base / _expect(table["state_dir"], str, "table.state_dir")
    if "confirm_result" in table:
        values["confirm_result"] = _expect(table["confirm_result"], bool,
                                           "table.confirm_result")
    buttons = _expect(data.get("buttons", {}), dict, "buttons")
    if "layout" in buttons:
        layout = buttons["layout"]
        if layout not in ("seats", "cursor"):
            raise ConfigError(f"buttons.layout: 'seats' or 'cursor', not {layout!r}")
        values["layout"] = layout
        if layout == "cursor":
            values["pins"] = dict(CURSOR_PINS)
    if "pins" in buttons:
        values["pins"] = _pins(buttons["pins"], "buttons.pins")
    if "encoder" in buttons:
        pair = _expect(buttons["encoder"], list, "buttons.encoder")
        if len(pair) != 2 or not all(isinstance(pin, int) for pin in pair):
            raise ConfigError("buttons.encoder: two BCM pin numbers, [A, B]")
        values["encoder"] = (_pin(pair[0], "buttons.encoder[0]"),
                             _pin(pair[1], "buttons.encoder[1]"))
        if "pins" not in buttons:  # the encoder stands in for PREV and NEXT
            pins = dict(values.get("pins", DEFAULT_PINS))
            pins.pop("PREV", None)
            pins.pop("NEXT", None)
            values["pins"] = pins
    if "bounce_ms" in buttons:
        values["bounce_s"] = _expect(buttons["bounce_ms"], (int, float), "buttons.bounce_ms") / 1000
    if "hold_s" in buttons:
        values["hold_s"] = float(_expect(buttons["hold_s"], (int, float), "buttons.hold_s"))
    display = _expect(data.get("display", {}), dict, "display")
    if display:
        values["display"], values["care"] = _display(display)
    extras = _expect(data.get("extras", {}), dict, "extras")
    if "buzzer" in extras:
        values["buzzer_pin"] = _pin(extras["buzzer"], "extras.buzzer")
    if "status_led" in extras:
        values["status_led_pin"] = _pin(extras["status_led"], "extras.status_led")
    if "seat_leds" in extras:
        leds = _expect(extras["seat_leds"], dict, "extras.seat_leds")
        for seat_text, pin in leds.items():
            if seat_text not in SEAT_BUTTONS:
                raise ConfigError(f"extras.seat_leds.{seat_text}: a seat N E S W")
            _pin(pin, f"extras.seat_leds.{seat_text}")
        values["seat_led_pins"] = dict(leds)
    serial = _expect(data.get("serial", {}), dict, "serial")
    if "port" in serial:
        values["serial_port"] = _expect(serial["port"], str, "serial.port")
    if "baudrate" in serial:
        values["baudrate"] = _expect(serial["baudrate"], int, "serial.baudrate")
    club = _expect(data.get("club", {}), dict, "club")
    if "broker" in club:
        values["club_broker"] = _expect(club["broker"], str, "club.broker")
    if "table" in club:
        values["club_table"] = _expect(club["table"], int, "club.table")
    if "event" in club:
        values["club_event"] = _expect(club["event"], str, "club.event")
    for key in ("username", "password", "cafile"):
        if key in club:
            values[f"club_{key}"] = _expect(club[key], str, f"club.{key}")
    config = Config(**values)
    _check_shared_pins(config)
    return config


def load_config(path: Path) -> Config:
    """Read a TOML config file; raises ConfigError with the file's name."""
    import tomllib  # only when there is a file: the start without one is quicker

    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read ({error.strerror})") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        column = error.start - (raw.rfind(b"\n", 0, error.start) + 1) + 1
        raise ConfigError(
            f"{path}: line {line}, column {column}: byte 0x{raw[error.start]:02X} is not UTF-8 "
            "(save the file as UTF-8)") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: {error}") from None
    try:
        return parse_config(data, base=path.parent)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None
