"""The config file: a typo or a byte that is not UTF-8 is refused in one line
naming the file, the place and the fix; nothing is silently left at its default."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from euchre_core import Seat
from firmware.config import KNOWN_KEYS, CareConfig, Config, ConfigError, load_config, parse_config

REPO = Path(__file__).resolve().parents[2]


def refusal(tmp_path: Path, text: bytes) -> str:
    path = tmp_path / "referee.toml"
    path.write_bytes(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    return message[len(f"{path}: "):]


def test_a_byte_that_is_not_utf8_is_named_by_line_and_column(tmp_path: Path) -> None:
    latin1 = "# caf\u00e9 ouvert\n[serial]\nport = \"/dev/ttyGS0\"\n".encode("latin-1")
    assert refusal(tmp_path, latin1) == (
        "line 1, column 6: byte 0xE9 is not UTF-8 (save the file as UTF-8)")
    later = b'[table]\nplayers = { N = "Ragn\xe4r" }\n'
    assert refusal(tmp_path, later).startswith("line 2, column 22: byte 0xE4 is not UTF-8")
    utf8 = '# café\n[table]\nplayers = { E = "Sigríður" }\n'.encode()
    path = tmp_path / "good.toml"
    path.write_bytes(utf8)
    assert load_config(path).names[Seat.E] == "Sigríður"


@pytest.mark.parametrize(("text", "expected"), [
    ('[serail]\nport = "/dev/ttyGS0"\n', "[serail]: no such table; did you mean 'serial'?"),
    ('[serial]\nprot = "/dev/ttyGS0"\n', "serial.prot: no such key; did you mean 'port'?"),
    ('[buttons]\nlayuot = "cursor"\n', "buttons.layuot: no such key; did you mean 'layout'?"),
    ('[display]\nrotation = 2\n', "display.rotation: no such key; did you mean 'rotate'?"),
    ('[wifi]\nssid = "x"\n', "[wifi]: no such table (the tables: [table], [buttons], "),
])
def test_an_unknown_table_or_key_is_refused_naming_the_closest(
        tmp_path: Path, text: str, expected: str) -> None:
    assert refusal(tmp_path, text.encode()).startswith(expected)


def test_every_key_the_shipped_config_shows_is_known() -> None:
    """hw/referee.toml shows every key, most commented out: each is known, and
    each known key is shown there (the table and the file say the same)."""
    shown: dict[str, set[str]] = {}
    table = None
    for line in (REPO / "hw/referee.toml").read_text(encoding="utf-8").splitlines():
        text = line.lstrip("# ").strip()
        if text.startswith("[") and text.endswith("]"):
            table = text.strip("[]").split(".")[0]
            if text.count(".") and table in shown:
                shown[table].add(text.strip("[]").split(".")[1])
            shown.setdefault(table, set())
        elif table is not None and " = " in text and line.lstrip().startswith(("#", text[0])):
            key = text.split(" = ")[0].strip()
            if re.fullmatch("[a-z][A-Za-z0-9_]*", key):
                shown[table].add(key)
    for name, keys in KNOWN_KEYS.items():
        assert keys <= shown[name], (name, keys - shown[name])
    assert parse_config({name: {} for name in KNOWN_KEYS}) == parse_config({})


def test_the_command_says_the_config_problem_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "referee.toml"
    path.write_text('[serail]\nport = "/dev/ttyGS0"\n', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "firmware", "emulate", "--config", str(path),
         "--state-dir", str(tmp_path / "state")],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "did you mean 'serial'?" in lines[0], done.stderr
    assert "Traceback" not in done.stderr


# --------------------------------------------------------------------------- [display]


def test_the_display_is_any_panel_luma_has_in_luma_s_names() -> None:
    from drivers.display import PanelSettings

    assert Config().display == PanelSettings()  # the recommended build: SSD1309 on SPI
    assert (Config().display.controller, Config().display.interface) == ("ssd1309", "spi")
    config = parse_config({"display": {
        "controller": "sh1106", "interface": "i2c", "port": 1, "address": 0x3D,
        "options": {"page_address_offset": 0}, "contrast": 100, "dim_after_s": 60,
        "blank_after_s": 0, "dim_contrast": 5, "shift_every_s": 30}})
    assert config.display == PanelSettings(controller="sh1106", interface="i2c", port=1,
                                           address=0x3D, options=(("page_address_offset", 0),),
                                           contrast=100)
    assert config.care == CareConfig(dim_after_s=60, blank_after_s=0, dim_contrast=5,
                                      shift_every_s=30)
    assert parse_config({"display": {"controller": "ssd1322", "width": 256}}).display.width == 256


@pytest.mark.parametrize(("display", "message"), [
    ({"controller": "ssd1300"},
     "display.controller: luma.oled has no device 'ssd1300' (its devices: 'ch1115', 'sh1106', "),
    ({"controller": 1306}, "display.controller: expected str, got 1306"),
    ({"interface": "usb"}, "display.interface: 'i2c', 'spi', not 'usb'"),
    ({"port": "0"}, "display.port: expected int, got '0'"),
    ({"address": "0x3C"}, "display.address: expected int, got '0x3C'"),
    ({"device": 2.0}, "display.device: expected int, got 2.0"),
    ({"bus_speed_hz": 7_000_000},
     "display.bus_speed_hz: luma's spi takes 0.5, 1, 2, 4, 8, 16, 20, 24, 28, 32, 36, 40, 44, "
     "48, 50, 52 MHz, not 7000000 Hz"),
    ({"gpio_DC": 40}, "display.gpio_DC: a BCM GPIO number from 0 to 27, not 40"),
    ({"gpio_RST": 26}, "display.gpio_RST: pin 26 is already buttons.pins.OK"),
    ({"width": 96}, "display.width, display.height: luma.oled's ssd1309 has no 96x64 panel "
                    "(Unsupported display mode: 96 x 64)"),
    ({"height": 32, "controller": "ssd1306"},
     "display.width, display.height: the screens are 128x64; a 128x32 ssd1306 turned 0 is "
     "128x32 and cannot show them"),
    ({"rotate": 1}, "display.rotate: the screens are 128x64; a 128x64 ssd1309 turned 1 is 64x128 "
                    "and cannot show them (rotate = 1 or 3 turns it on its side: rotate 0 or 2)"),
    ({"rotate": 5}, "display.rotate: 0, 1, 2 or 3 quarter turns clockwise, not 5"),
    ({"options": {"page_address_offset": 0}},
     "display.options.page_address_offset: luma.oled's ssd1309 has no such option "
     "(its options: none)"),
    ({"controller": "sh1106", "options": {"page_address_offset": True}},
     "display.options.page_address_offset: luma.oled's sh1106 takes a whole number "
     "(its default 2), not True"),
    ({"options": 2}, "display.options: expected dict, got 2"),
    ({"contrast": 256}, "display.contrast: 0 to 255, not 256"),
    ({"dim_contrast": -1}, "display.dim_contrast: 0 to 255, not -1"),
    ({"dim_after_s": -5}, "display.dim_after_s: seconds, 0 or more (0: never), not -5"),
    ({"blank_after_s": "never"}, "display.blank_after_s: expected (<class 'int'>, "),
    ({"shift_every_s": -1}, "display.shift_every_s: seconds, 0 or more (0: never), not -1"),
    ({"i2c_port": 1}, 'display.i2c_port: no longer a key; now display.port (with interface = '
                      '"i2c": the default interface is SPI) (hw/referee.toml)'),
])
def test_a_display_setting_luma_has_not_is_refused_naming_the_key(display: dict[str, object],
                                                                   message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({"display": display})
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_an_i2c_panel_leaves_dc_and_rst_to_the_buttons() -> None:
    config = parse_config({"display": {"interface": "i2c", "gpio_DC": 26}})
    assert config.display.interface == "i2c"
