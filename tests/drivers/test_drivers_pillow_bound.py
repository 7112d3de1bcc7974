"""Pillow is bound below 14 (pyproject.toml): luma.oled 3.16 draws with
``Image.getdata``, which Pillow 14 removes.  Here, on the Pillow the bound lets
in, luma's own ``display()`` runs for both controllers over the recording bus."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest
from luma.core.interface.serial import i2c
from luma.oled.device import sh1106, ssd1306
from PIL import Image, ImageDraw
from support.driver_fakes import FakeBus, Sh1106Ram, Ssd1306Ram

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def pillow_bound() -> int:
    """The major version Pillow must stay below, from pyproject.toml."""
    match = re.search(r'"Pillow>=[0-9.]+,<([0-9]+)"', PYPROJECT.read_text(encoding="utf-8"))
    assert match is not None, "pyproject.toml bounds Pillow from above"
    return int(match.group(1))


def test_the_installed_pillow_is_within_the_bound() -> None:
    assert pillow_bound() == 14
    assert int(version("Pillow").split(".")[0]) < pillow_bound()
    assert hasattr(Image.Image, "getdata")


@pytest.mark.filterwarnings("ignore:Image.Image.getdata is deprecated:DeprecationWarning")
@pytest.mark.parametrize(("controller", "ram"), [(ssd1306, Ssd1306Ram), (sh1106, Sh1106Ram)])
def test_luma_draws_a_frame_with_this_pillow(controller: type, ram: type) -> None:
    bus = FakeBus()
    device = controller(i2c(bus=bus))
    image = Image.new("1", (128, 64))
    ImageDraw.Draw(image).rectangle((10, 5, 40, 20), fill=1)
    device.display(image)  # luma calls image.getdata()
    screen = ram()
    screen.replay(bus)
    assert screen.image().tobytes() == image.tobytes()
