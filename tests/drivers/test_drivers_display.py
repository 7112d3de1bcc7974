"""drivers.display: luma.oled devices built from the settings, on I2C and SPI.

The bytes are checked where luma hands them to the bus: a recording smbus2-like
bus under luma's ``i2c``, a recording spidev under luma's ``spi`` with DC and
RST on gpiozero's mock pins (:class:`support.driver_fakes.GpiozeroGpio`), and
the controllers' RAM replayed from them.  Frames of another size go to luma's
``dummy`` device.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import luma.oled.device
import pytest
from gpiozero.pins.mock import MockFactory
from luma.core.device import device as luma_device
from luma.core.device import dummy
from luma.core.interface.serial import i2c
from PIL import Image, ImageChops, ImageDraw
from support.driver_fakes import (
    COMMAND,
    DATA,
    FakeBus,
    FakeSpi,
    GpiozeroGpio,
    Sh1106Ram,
    Ssd1306Ram,
)

from drivers import DisplayError, DriverConfigError, Panel, PanelSettings, RetryingDisplay
from drivers.display import check_panel, device_options, luma_devices, open_panel

pytestmark = pytest.mark.filterwarnings(
    "ignore:Image.Image.getdata is deprecated:DeprecationWarning")  # inside luma.oled

FRAME = (128, 64)


def frame(*lit: tuple[int, int], size: tuple[int, int] = FRAME) -> Image.Image:
    image = Image.new("1", size)
    for xy in lit:
        image.putpixel(xy, 1)
    return image


def picture() -> Image.Image:
    image = frame()
    draw = ImageDraw.Draw(image)
    draw.rectangle((3, 2, 40, 20), fill=1)
    draw.text((50, 30), "Ragnar 10", fill=1)
    return image


def same(a: Image.Image, b: Image.Image) -> bool:
    return ImageChops.difference(a.convert("1"), b.convert("1")).getbbox() is None


def i2c_panel(controller: str, bus: FakeBus, **settings: Any) -> Panel:
    return open_panel(PanelSettings(controller=controller, interface="i2c", **settings), bus=bus)


@pytest.fixture
def pins() -> Iterator[MockFactory]:
    factory = MockFactory()
    try:
        yield factory
    finally:
        factory.reset()
        factory.close()


def spi_panel(controller: str, pins: MockFactory, **settings: Any
              ) -> tuple[Panel, FakeSpi, GpiozeroGpio]:
    gpio = GpiozeroGpio(pins)
    dc = settings.get("gpio_DC", 24)
    spi = FakeSpi(dc=lambda: gpio.level(dc))
    panel = open_panel(PanelSettings(controller=controller, interface="spi", **settings),
                       spi=spi, gpio=gpio)
    return panel, spi, gpio


def writes(bus: FakeBus) -> list[tuple[int, bytes]]:
    """The bus's log as (control, bytes), a run of RAM writes as one (luma's
    ``i2c`` on a given bus cuts them into 32-byte blocks, its ``spi`` not)."""
    merged: list[tuple[int, bytes]] = []
    for _, control, data in bus.log:
        if merged and control == DATA and merged[-1][0] == DATA:
            merged[-1] = (DATA, merged[-1][1] + data)
        else:
            merged.append((control, data))
    return merged


def luma_constructor_bytes(cls: type, **options: Any) -> list[tuple[int, bytes]]:
    """What luma's own constructor sends on a bus of its own (control, bytes)."""
    bus = FakeBus()
    twin = cls(i2c(bus=bus), **options)
    twin.persist = True
    return writes(bus)


# -- luma's devices ------------------------------------------------------------


def test_the_devices_are_luma_oleds_own() -> None:
    devices = luma_devices()
    assert {"ssd1306", "ssd1309", "sh1106", "sh1107", "ssd1322", "ssd1327",
            "ssd1351"} <= set(devices)
    assert set(devices) <= set(luma.oled.device.__all__)
    assert all(issubclass(cls, luma_device) for cls in devices.values())
    assert devices["ssd1309"] is luma.oled.device.ssd1309


def test_the_options_are_the_constructors_own() -> None:
    devices = luma_devices()
    assert device_options(devices["sh1106"]) == {"page_address_offset": 2}
    assert device_options(devices["ssd1309"]) == {}
    assert device_options(devices["ssd1351"]) == {"h_offset": 0, "v_offset": 0, "bgr": False}


@pytest.mark.parametrize(("settings", "message"), [
    (PanelSettings(controller="ssd1300"), "display.controller: luma.oled has no device 'ssd1300' "
                                          "(its devices: 'ch1115', 'sh1106', "),
    (PanelSettings(interface="usb"), "display.interface: 'i2c', 'spi', not 'usb'"),
    (PanelSettings(bus_speed_hz=7_000_000), "display.bus_speed_hz: luma's spi takes 0.5, 1, 2, "
                                            "4, 8, 16, 20, "),
    (PanelSettings(width=96), "display.width, display.height: luma.oled's ssd1309 has no "
                              "96x64 panel (Unsupported display mode: 96 x 64)"),
    (PanelSettings(rotate=1), "display.rotate: the screens are 128x64; a 128x64 ssd1309 turned 1 "
                              "is 64x128 and cannot show them (rotate = 1 or 3 turns it on its "
                              "side: rotate 0 or 2)"),
    (PanelSettings(rotate=4), "display.rotate: 0, 1, 2 or 3 quarter turns clockwise, not 4"),
    (PanelSettings(contrast=256), "display.contrast: 0 to 255, not 256"),
    (PanelSettings(options=(("page_address_offset", 0),)),
     "display.options.page_address_offset: luma.oled's ssd1309 has no such option "
     "(its options: none)"),
    (PanelSettings(controller="sh1106", options=(("page_address_offset", "0"),)),
     "display.options.page_address_offset: luma.oled's sh1106 takes a whole number "
     "(its default 2), not '0'"),
])
def test_what_luma_refuses_is_said_in_one_line_before_any_bus(settings: PanelSettings,
                                                              message: str) -> None:
    with pytest.raises(DriverConfigError) as info:
        open_panel(settings, bus=FakeBus())
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_a_panel_on_its_side_fits_when_it_is_tall() -> None:
    """An SH1107 is 64x128: turned a quarter it shows the 128x64 screens."""
    assert check_panel(PanelSettings(controller="sh1107", width=64, height=128, rotate=1),
                       FRAME) == (128, 64)
    with pytest.raises(DriverConfigError, match="^display.rotate: the screens are 128x64; "
                       "a 64x128 sh1107 turned 0 is 64x128 and cannot show them "
                       r"\(rotate = 1 or 3 stands it the other way\)$"):
        check_panel(PanelSettings(controller="sh1107", width=64, height=128), FRAME)


# -- the bytes on I2C ----------------------------------------------------------------


@pytest.mark.parametrize(("controller", "ram"), [
    ("ssd1306", Ssd1306Ram), ("ssd1309", Ssd1306Ram), ("sh1106", Sh1106Ram)])
def test_on_i2c_the_panel_gets_luma_s_set_up_then_the_frame(controller: str, ram: type) -> None:
    bus = FakeBus()
    panel = i2c_panel(controller, bus)
    cls = luma_devices()[controller]
    set_up = luma_constructor_bytes(cls)
    assert writes(bus) == [*set_up, (COMMAND, bytes([0x81, 0xCF]))]  # and the configured contrast
    assert {address for address, _, _ in bus.log} == {0x3C}
    mark = bus.mark()
    assert panel.show(picture()) == 1024
    assert bus.data_bytes(mark) == 1024
    screen = ram()
    screen.replay(bus)
    assert screen.on and same(screen.image(), picture())


@pytest.mark.parametrize("offset", [2, 0])
def test_an_sh1106_with_its_column_offset(offset: int) -> None:
    bus = FakeBus()
    panel = i2c_panel("sh1106", bus, options=(("page_address_offset", offset),), address=0x3D)
    panel.show(picture())
    assert {address for address, _, _ in bus.log} == {0x3D}
    screen = Sh1106Ram(offset=offset)
    screen.replay(bus)
    assert same(screen.image(), picture())
    assert bus.commands()[-1] == bytes([0xB7, offset, 0x10])  # the last page's address


def test_an_unchanged_frame_sends_nothing() -> None:
    """luma's framebuffer (diff_to_previous) says nothing changed."""
    bus = FakeBus()
    panel = i2c_panel("ssd1306", bus)
    panel.show(picture())
    mark = bus.mark()
    assert panel.show(picture().copy()) == 0 and bus.mark() == mark
    assert panel.show(frame((5, 5))) == 1024  # luma's SSD1306 sends a changed frame whole


# -- the bytes on SPI ----------------------------------------------------------------


@pytest.mark.parametrize(("controller", "ram"), [
    ("ssd1306", Ssd1306Ram), ("ssd1309", Ssd1306Ram), ("sh1106", Sh1106Ram)])
def test_on_spi_dc_marks_commands_and_data_and_rst_resets(controller: str, ram: type,
                                                          pins: MockFactory) -> None:
    panel, spi, gpio = spi_panel(controller, pins, bus_speed_hz=16_000_000)
    assert spi.opened == (0, 0) and spi.max_speed_hz == 16_000_000
    reset = [state.state for state in pins.pin(25).states]
    assert reset[-2:] == [False, True]  # RST held low, then let go: before any byte
    set_up = luma_constructor_bytes(luma_devices()[controller])
    # the same bytes as on I2C, DC low for each command and high for the RAM
    assert writes(spi) == [*set_up, (COMMAND, bytes([0x81, 0xCF]))]
    panel.show(picture())
    screen = ram()
    screen.replay(spi)
    assert screen.on and same(screen.image(), picture())
    panel.close()
    assert spi.closed


def test_spi_on_ce1_of_another_port(pins: MockFactory) -> None:
    _, spi, gpio = spi_panel("ssd1309", pins, port=1, device=1, gpio_DC=5, gpio_RST=6)
    assert spi.opened == (1, 1)
    assert set(gpio.pins) == {5, 6}


def test_without_spidev_or_rpi_gpio_the_panel_is_missing_and_says_what_to_install() -> None:
    """This machine has neither module: the start goes on without a panel."""
    with pytest.raises(DisplayError) as info:
        open_panel(PanelSettings())
    assert str(info.value) in (
        "ssd1309 on SPI port 0 device 0: No module named 'RPi' (needed by luma's spi; "
        "scripts/install-pi.sh installs it)",
        "ssd1309 on SPI port 0 device 0: No module named 'spidev' (needed by luma's spi; "
        "scripts/install-pi.sh installs it)")


def test_without_the_i2c_bus_the_panel_is_missing() -> None:
    with pytest.raises(DisplayError, match="^sh1106 on I2C port 99 address 0x3C: I2C device "
                       "not found: /dev/i2c-99$"):
        open_panel(PanelSettings(controller="sh1106", interface="i2c", port=99))


# -- a panel that fails and comes back ------------------------------------------------


@pytest.mark.parametrize("interface", ["i2c", "spi"])
def test_a_panel_that_fails_is_opened_again_and_shows_the_frame(interface: str,
                                                                pins: MockFactory) -> None:
    now = [0.0]
    said: list[str] = []
    gpio = GpiozeroGpio(pins)
    bus = FakeSpi(dc=lambda: gpio.level(24)) if interface == "spi" else FakeBus()
    settings = PanelSettings(controller="sh1106", interface=interface)

    def opener() -> Panel:
        if interface == "spi":
            return open_panel(settings, spi=bus, gpio=gpio)
        return open_panel(settings, bus=bus)

    display = RetryingDisplay(opener, retry_s=5.0, clock=lambda: now[0], say=said.append)
    display.show(picture())
    bus.unplugged = True
    with pytest.raises(DisplayError, match="display not answering"):
        display.show(frame((1, 1)))
    assert not display.is_open
    assert said == [f"display not answering, retrying every 5 s: {said[0].split(': ', 1)[1]}"]
    bus.unplugged = False
    with pytest.raises(OSError, match="^display not open"):
        display.show(frame((1, 1)))  # not before retry_s
    now[0] = 5.0
    mark = bus.mark()
    assert display.show(frame((1, 1))) == 1024
    assert said[1:] == ["display answering again"]
    assert bus.commands(mark)[0][0] == 0xAE  # luma's set-up again, from display off
    screen = Sh1106Ram()
    screen.replay(bus)
    assert screen.on and same(screen.image(), frame((1, 1)))


def test_a_panel_missing_at_boot_is_tried_every_retry_s() -> None:
    now = [0.0]
    bus = FakeBus()
    bus.unplugged = True
    tries: list[float] = []

    def opener() -> Panel:
        tries.append(now[0])
        return i2c_panel("ssd1306", bus)

    display = RetryingDisplay(opener, retry_s=5.0, clock=lambda: now[0])
    for _ in range(12):
        assert not display.try_open()
        now[0] += 1.0
    assert tries == [0.0, 5.0, 10.0] and display.open_failures == 3
    bus.unplugged = False
    now[0] = 15.0
    assert display.show(picture()) == 1024


def test_a_bad_setting_is_not_retried() -> None:
    display = RetryingDisplay(lambda: open_panel(PanelSettings(controller="nope")))
    with pytest.raises(ValueError):
        display.try_open()


# -- dim, blank, wake -------------------------------------------------------------------


def test_dim_blank_and_wake_are_luma_s_contrast_hide_and_show() -> None:
    bus = FakeBus()
    display = RetryingDisplay(lambda: i2c_panel("ssd1309", bus), contrast=0xCF, dim_contrast=3)
    display.show(picture())
    mark = bus.mark()
    display.set_level("dim")
    display.set_level("off")
    display.set_level("on")
    assert bus.commands(mark) == [bytes([0x81, 3]), bytes([0xAE]), bytes([0xAF]),
                                  bytes([0x81, 0xCF])]
    assert bus.data_bytes(mark) == 0  # the picture is kept: nothing redrawn


def test_a_panel_opened_again_keeps_the_level() -> None:
    bus = FakeBus()
    now = [0.0]
    display = RetryingDisplay(lambda: i2c_panel("ssd1309", bus), clock=lambda: now[0])
    display.show(picture())
    display.set_level("off")
    bus.unplugged = True
    with pytest.raises(DisplayError):
        display.show(frame((2, 2)))
    bus.unplugged = False
    now[0] = 10.0
    mark = bus.mark()
    display.show(frame((2, 2)))
    assert bus.commands(mark)[-2:] == [bytes([0xAE]), bytes([0x21, 0, 127, 0x22, 0, 7])]


# -- other sizes, the shift ------------------------------------------------------------


@pytest.mark.parametrize(("size", "scale", "origin"), [
    ((128, 64), 1, (0, 0)), ((256, 64), 1, (64, 0)), ((128, 128), 1, (0, 32)),
    ((256, 128), 2, (0, 0)), ((300, 200), 2, (22, 36))])
def test_a_larger_panel_shows_the_screens_scaled_and_centred(
        size: tuple[int, int], scale: int, origin: tuple[int, int]) -> None:
    device = dummy(width=size[0], height=size[1], mode="1")
    device.persist = True
    panel = Panel(device)
    panel.show(picture())
    assert (panel.scale, panel.origin) == (scale, origin)
    expected = Image.new("1", size)
    expected.paste(picture().resize((128 * scale, 64 * scale), Image.Resampling.NEAREST), origin)
    assert device.image is not None and same(device.image, expected)


def test_a_colour_panel_gets_the_frame_in_its_mode() -> None:
    device = dummy(width=128, height=128, mode="RGB")
    device.persist = True
    Panel(device).show(picture())
    assert device.image is not None and device.image.mode == "RGB"
    assert device.image.getpixel((3, 34)) == (255, 255, 255)


def test_the_shift_moves_the_picture_only_where_nothing_lit_is_cut() -> None:
    device = dummy(width=128, height=64, mode="1")
    device.persist = True
    panel = Panel(device)
    panel.shift = (1, 1)
    panel.show(frame((0, 0), (126, 62)))  # the last column and row are dark: it moves
    assert device.image is not None and device.image.getbbox() == (1, 1, 128, 64)
    panel.show(frame((0, 0), (127, 62)))  # a lit last column stays: down only
    assert device.image.getbbox() == (0, 1, 128, 64)
    wide = dummy(width=256, height=64, mode="1")
    wide.persist = True
    panel = Panel(wide)
    panel.shift = (1, 0)
    panel.show(frame((127, 0)))  # the margin takes it
    assert wide.image is not None and wide.image.getbbox() == (64 + 128, 0, 64 + 129, 1)


def test_importing_drivers_loads_no_hardware_library() -> None:
    code = (
        "import sys, drivers; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('gpiozero', 'luma', 'smbus2', 'lgpio', 'PIL', 'spidev', 'RPi')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_data_and_command_bytes_are_luma_s_control_bytes() -> None:
    assert (COMMAND, DATA) == (0x00, 0x40)
