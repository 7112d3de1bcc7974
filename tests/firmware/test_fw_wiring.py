"""hw/wiring.png and scripts/draw_wiring.py: the picture shows the default wiring.

The script's tables agree with firmware/config.py, hw/README.md and
hw/referee.toml, and redrawing the picture gives the committed file pixel for
pixel.  After an intended change, redraw it with
``.venv/bin/python scripts/draw_wiring.py``, look at it, and commit it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from PIL import Image, ImageChops
from support.scripts import load_script

from firmware.config import CURSOR_PINS, DEFAULT_PINS, parse_config
from firmware.fonts import FontsMissing

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "draw_wiring.py"
PICTURE = REPO / "hw" / "wiring.png"
README = REPO / "hw" / "README.md"


wiring = load_script("scripts/draw_wiring.py")


def readme_rows() -> list[list[str]]:
    """The cells of every markdown table row of hw/README.md."""
    text = README.read_text(encoding="utf-8")
    return [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith("| ")]


def button_table() -> dict[str, tuple[int, int, int]]:
    """Button -> (GPIO, header pin, ground pin), from rows like
    ``| N | GPIO5 | 29 | GND (pin 30) | ... |``."""
    table = {}
    for row in readme_rows():
        gpio = re.fullmatch(r"GPIO(\d+)", row[1]) if len(row) > 3 else None
        ground = re.fullmatch(r"GND \(pin (\d+)\)", row[3]) if len(row) > 3 else None
        if gpio and ground and row[2].isdigit():
            table[row[0]] = (int(gpio[1]), int(row[2]), int(ground[1]))
    return table


def test_the_button_pins_are_default_pins_and_the_readme_table() -> None:
    table = button_table()
    assert set(table) == set(DEFAULT_PINS), "hw/README.md's button table vs DEFAULT_PINS"
    rows = wiring.button_rows()
    assert [name for name, *_ in rows] == list(DEFAULT_PINS)
    for name, label, gpio, pin in rows:
        assert gpio == DEFAULT_PINS[name] == table[name][0], name
        assert pin == table[name][1], f"{name}: header pin {pin}, README says {table[name][1]}"
        assert wiring.HEADER[pin] == f"GPIO{gpio}"
        assert label
    labels = " ".join(label for _, label, _, _ in rows)
    assert labels == "N E S W ♠ ♥ ♦ ♣ ALONE UNDO OK"


def test_the_ground_pins_are_gnd() -> None:
    for name, (_, _, ground) in button_table().items():
        assert wiring.HEADER[ground] == "GND", f"{name}: pin {ground} is not GND"
    assert all(wiring.HEADER[pin] == "GND" for pin in wiring.GROUND_PINS)
    assert set(wiring.GROUND_PINS) <= {ground for _, _, ground in button_table().values()}


def test_the_header_table_is_the_readme_picture() -> None:
    """The script's 40-pin table agrees with the ASCII picture of hw/README.md."""
    text = README.read_text(encoding="utf-8")
    pairs = re.findall(r"(\w+)\s+(\d+) \(●\) \(●\) (\d+)\s+(\w+)", text)
    assert len(pairs) == 20
    seen = {}
    for left, odd, even, right in pairs:
        seen[int(odd)], seen[int(even)] = left, right
    assert seen == wiring.HEADER
    assert sorted(wiring.HEADER) == list(range(1, 41))


def section_rows(heading: str) -> list[list[str]]:
    """The cells of the table rows of hw/README.md's section ``heading`` (up to the
    next heading)."""
    text = README.read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1].split("\n#", 1)[0]
    return [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in section.splitlines() if line.startswith("| ")][2:]  # no header


def test_the_spi_panel_pins_are_the_readme_table() -> None:
    """The recommended 2.42" SSD1309 on SPI: the drawn pins are hw/README.md's table,
    SPI0's clock, MOSI and CE0, luma's default DC and RES, 3V3 and a GND."""
    rows = section_rows("### The recommended panel: the 2.42\" SSD1309 on SPI")
    table = [(row[0].split()[0], int(row[2])) for row in rows]
    assert table == list(wiring.SPI_DISPLAY_PINS)
    for row, (name, pin) in zip(rows, wiring.SPI_DISPLAY_PINS):
        assert row[1].split()[0] == wiring.HEADER[pin], (name, row)
    gpios = {name: wiring.HEADER[pin] for name, pin in wiring.SPI_DISPLAY_PINS}
    assert gpios == {"GND": "GND", "VCC": "3V3", "SCL": "GPIO11", "SDA": "GPIO10",
                     "RES": "GPIO25", "DC": "GPIO24", "CS": "GPIO8"}
    # the seven wires land on header pins 17 to 24; 21 (MISO) stays empty
    assert sorted(pin for _, pin in wiring.SPI_DISPLAY_PINS) == [17, 18, 19, 20, 22, 23, 24]


def test_the_i2c_panel_pins_are_the_readme_table() -> None:
    rows = section_rows("### I2C panels, the alternative")
    assert [(row[0], int(row[2])) for row in rows] == list(wiring.I2C_DISPLAY_PINS)
    assert dict(wiring.I2C_DISPLAY_PINS) == {"GND": 6, "VCC": 1, "SCL": 5, "SDA": 3}
    assert [wiring.HEADER[pin] for _, pin in wiring.I2C_DISPLAY_PINS] == [
        "GND", "3V3", "GPIO3", "GPIO2"]


SPI0 = {7, 8, 9, 10, 11}
"""SPI0: CE1, CE0 (both held by the kernel once dtparam=spi=on), MISO, MOSI, SCLK."""
DC_RST = {24, 25}
"""The SPI panel's DC and RES: luma's defaults, hw/README.md's wiring."""
I2C1 = {2, 3}


@pytest.mark.parametrize("layout", ["seats", "cursor", "optional parts"])
def test_the_default_map_leaves_the_display_pins_free(layout: str) -> None:
    """No button or optional part on SPI0, the SPI panel's DC and RES, or I2C: either
    panel goes on without moving a wire."""
    pins = {"seats": DEFAULT_PINS, "cursor": CURSOR_PINS,
            "optional parts": wiring.OPTIONAL_PINS}[layout]
    assert not set(pins.values()) & (SPI0 | DC_RST | I2C1), pins
    drawn = {int(wiring.HEADER[pin].removeprefix("GPIO"))
             for _, pin in (*wiring.SPI_DISPLAY_PINS, *wiring.I2C_DISPLAY_PINS)
             if wiring.HEADER[pin].startswith("GPIO")}
    assert drawn == {2, 3, 8, 10, 11, 24, 25}
    assert not set(pins.values()) & drawn


def test_buttons_and_optional_parts_never_share_a_pin() -> None:
    """The default buttons and the documented optional parts are one config: every
    pin once, and only seat LEDs on the UART's pins."""
    config = parse_config({"extras": {
        "buzzer": wiring.OPTIONAL_PINS["buzzer"],
        "status_led": wiring.OPTIONAL_PINS["status LED"],
        "seat_leds": {name[-1]: gpio for name, gpio in wiring.OPTIONAL_PINS.items()
                      if name.startswith("seat")}}})
    assert config.pins == DEFAULT_PINS  # parse_config checks every pin is used once
    on_uart = {name for name, gpio in wiring.OPTIONAL_PINS.items() if gpio in wiring.UART_PINS}
    assert on_uart == {"seat LED N", "seat LED E"}
    assert not set(DEFAULT_PINS.values()) & set(wiring.UART_PINS)


def test_the_optional_pins_are_the_readme_table_and_referee_toml() -> None:
    readme = {}
    for row in readme_rows():
        gpio = re.fullmatch(r"GPIO(\d+)", row[1]) if len(row) > 4 else None
        if gpio and row[3].startswith("`extras."):
            readme[row[0].lower()] = (int(gpio[1]), int(row[2]))
    assert readme == {name.lower(): (gpio, wiring.header_pin(gpio))
                      for name, gpio in wiring.OPTIONAL_PINS.items()}
    # hw/referee.toml's commented-out [extras], uncommented, is the same wiring
    toml = (REPO / "hw" / "referee.toml").read_text(encoding="utf-8")
    extras = toml.split("[extras]", 1)[1].split("\n[", 1)[0]
    lines = [re.sub(r"\s+#.*", "", line[2:]) for line in extras.splitlines()
             if re.match(r"# \w+ = ", line)]
    config = parse_config({"extras": tomllib.loads("\n".join(lines))})
    assert config.buzzer_pin == wiring.OPTIONAL_PINS["buzzer"]
    assert config.status_led_pin == wiring.OPTIONAL_PINS["status LED"]
    assert config.seat_led_pins == {name[-1]: gpio for name, gpio in
                                    wiring.OPTIONAL_PINS.items() if name.startswith("seat")}


def test_the_picture_is_the_committed_one(tmp_path: Path) -> None:
    try:
        wiring.Fonts()
    except FontsMissing as error:
        pytest.skip(f"the picture's font is not installed (Debian package "
                    f"fonts-dejavu-core): {error}")
    out = tmp_path / "wiring.png"
    done = subprocess.run([sys.executable, str(SCRIPT), str(out)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert PICTURE.is_file(), "hw/wiring.png is missing: run scripts/draw_wiring.py"
    with Image.open(out) as new, Image.open(PICTURE) as committed:
        assert new.size == committed.size == (wiring.WIDTH, wiring.HEIGHT)
        difference = ImageChops.difference(new.convert("RGB"), committed.convert("RGB"))
        assert difference.getbbox() is None, (
            f"hw/wiring.png differs from a fresh drawing in {difference.getbbox()}: "
            "redraw it with scripts/draw_wiring.py and look at it"
        )


def test_bad_arguments_print_the_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert wiring.main(["a.png", "b.png"]) == 2
    assert "usage: scripts/draw_wiring.py [OUT]" in capsys.readouterr().err
