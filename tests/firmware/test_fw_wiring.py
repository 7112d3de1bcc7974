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

from firmware.config import DEFAULT_PINS, parse_config
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


def test_the_display_pins_are_the_readme_table() -> None:
    rows = {row[0]: row for row in readme_rows() if row[0] in ("GND", "VCC", "SCL", "SDA")}
    assert [name for name, _ in wiring.DISPLAY_PINS] == ["GND", "VCC", "SCL", "SDA"]
    for name, pin in wiring.DISPLAY_PINS:
        assert rows[name][2] == str(pin), name
    assert dict(wiring.DISPLAY_PINS) == {"GND": 6, "VCC": 1, "SCL": 5, "SDA": 3}


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
