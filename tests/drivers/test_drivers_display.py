from __future__ import annotations

import random
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from luma.core.device import dummy
from luma.core.interface.serial import i2c
from luma.oled.device import sh1106, ssd1306, ssd1309
from PIL import Image
from support.driver_fakes import COMMAND, DATA, FakeBus, PagedImage, Sh1106Ram, Ssd1306Ram

from drivers import DisplayError, DriverConfigError, OledPanel, PageDiffDisplay, open_oled

# luma.oled's display() still calls Pillow's deprecated Image.getdata().
pytestmark = pytest.mark.filterwarnings("ignore:Image.Image.getdata:DeprecationWarning")

SIZE = (128, 64)
FULL_WINDOW = bytes([0x21, 0, 127, 0x22, 0, 7])


def frame(*pixels: tuple[int, int], size: tuple[int, int] = SIZE) -> Image.Image:
    image = Image.new("1", size)
    for xy in pixels:
        image.putpixel(xy, 1)
    return image


def noise(seed: int) -> Image.Image:
    rng = random.Random(seed)
    return Image.frombytes("1", SIZE, rng.randbytes(SIZE[0] * SIZE[1] // 8))


def same(a: Image.Image, b: Image.Image) -> bool:
    """Pixel-equal as 1-bit images (Pillow keeps "1" pixels as 1 or 255)."""
    return a.size == b.size and a.convert("1").tobytes() == b.convert("1").tobytes()


def luma_init_commands(controller) -> list[bytes]:
    """What luma's constructor sends, minus the RAM clear, display-on last."""
    bus = FakeBus()
    controller(i2c(bus=bus))
    log = bus.log
    groups = [
        b
        for i, (_, c, b) in enumerate(log)
        if c == COMMAND and (i + 1 == len(log) or log[i + 1][1] == COMMAND)
    ]
    assert groups[-1] == b"\xaf"
    return groups


@pytest.fixture
def bus() -> FakeBus:
    return FakeBus()


@pytest.fixture
def oled(bus):
    ram = Ssd1306Ram()
    screen = PageDiffDisplay(open_oled("ssd1306", bus=bus))
    return screen, ram


# -- open_oled ---------------------------------------------------------------


def test_open_oled_persists_and_initialises(bus):
    device = open_oled("ssd1306", bus=bus)
    assert isinstance(device, OledPanel) and device.persist is True
    assert (device.controller, device.size) == ("ssd1306", (128, 64))
    lumas_own = FakeBus()
    ssd1306(i2c(bus=lumas_own))
    assert bus.log == lumas_own.log  # luma's init sequence went out, byte for byte
    assert bus.commands()[0][0] == 0xAE
    assert {address for address, _, _ in bus.log} == {0x3C}


def test_open_oled_sh1106_rotated(bus):
    device = open_oled("sh1106", address=0x3D, rotate=1, bus=bus)
    assert isinstance(device, OledPanel) and device.controller == "sh1106"
    assert device.size == (64, 128) and device.rotate == 1
    lumas_own = FakeBus()
    sh1106(i2c(bus=lumas_own, address=0x3D), rotate=1)
    assert bus.log == lumas_own.log
    assert {address for address, _, _ in bus.log} == {0x3D}


def test_open_oled_ssd1309_the_large_panel(bus):
    """The 2.42" panel's SSD1309: luma's own ssd1309 init, and
    PageDiffDisplay writes its RAM the SSD1306 way, page by page."""
    device = open_oled("ssd1309", bus=bus)
    assert isinstance(device, OledPanel) and device.persist is True
    assert (device.controller, device.kind) == ("ssd1309", "ssd1306")
    lumas_own = FakeBus()
    ssd1309(i2c(bus=lumas_own))
    assert bus.log == lumas_own.log and bus.commands()[0][0] == 0xAE
    bus.log.clear()
    ram = Ssd1306Ram()
    PageDiffDisplay(device).show(frame((0, 0), (127, 63)))
    ram.replay(bus)
    assert ram.on and same(ram.image(), frame((0, 0), (127, 63)))


def test_open_oled_without_init_sends_nothing(bus):
    device = open_oled("ssd1306", bus=bus, init=False)
    assert bus.log == []
    ram = Ssd1306Ram()
    PageDiffDisplay(device).show(frame((0, 0)))
    ram.replay(bus)
    assert ram.on and same(ram.image(), frame((0, 0)))


@pytest.mark.parametrize("controller", ["ssd1306", "sh1106", "ssd1309"])
@pytest.mark.parametrize("rotate", [0, 1])
def test_the_init_recorded_without_init_is_the_constructors(controller, rotate):
    """A device from ``open_oled(init=False)`` is set up from what its own
    constructor recorded, not a second constructor: the same bytes."""
    recorded, sent = FakeBus(), FakeBus()
    first = PageDiffDisplay(open_oled(controller, bus=recorded, init=False, rotate=rotate))
    twin = PageDiffDisplay(open_oled(controller, bus=sent, init=True, rotate=rotate))
    image = frame((3, 5), (60, 40)) if rotate == 0 else Image.new("1", (64, 128), 1)
    start = sent.mark()
    first.show(image)
    twin.show(image)
    assert recorded.log == sent.log[start:]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"controller": "ssd1351"},
            "unknown display controller 'ssd1351'; expected one of 'sh1106', 'ssd1306', "
            "'ssd1309'",
        ),
        ({"rotate": 4}, "rotate must be 0, 1, 2 or 3, not 4"),
        (
            {"width": 100},
            "ssd1306 on I2C port 1 address 0x3C: Unsupported display mode: 100 x 64",
        ),
        (
            {"address": "zz"},
            "ssd1306 on I2C port 1 address 'zz': I2C device address invalid: zz",
        ),
    ],
)
def test_open_oled_bad_config(bus, kwargs, message):
    with pytest.raises(DriverConfigError) as info:
        open_oled(bus=bus, **kwargs)
    assert str(info.value) == message


def test_open_oled_missing_display(bus):
    bus.unplugged = True
    with pytest.raises(DisplayError) as info:
        open_oled(bus=bus)
    assert isinstance(info.value, OSError)
    assert str(info.value) == (
        "ssd1306 on I2C port 1 address 0x3C: display not answering: "
        "I2C device not found on address: 0x3C"
    )


@pytest.mark.parametrize("init", [True, False])
def test_open_oled_missing_bus(init):
    """/dev/i2c-99 is not there: one line says so."""
    with pytest.raises(DisplayError) as info:
        open_oled(port=99, init=init)
    assert str(info.value) == (
        "ssd1306 on I2C port 99 address 0x3C: I2C device not found: /dev/i2c-99"
    )
    assert isinstance(info.value, OSError)


# -- PageDiffDisplay on an SSD1306 -------------------------------------------


def test_first_frame_is_init_then_full_frame_then_display_on(oled, bus):
    screen, ram = oled
    mark = bus.mark()
    assert screen.show(noise(1)) == 1024
    assert bus.data_bytes(mark) == 1024
    init = luma_init_commands(ssd1306)
    assert bus.commands(mark) == init[:-1] + [FULL_WINDOW, b"\xaf"]
    ram.replay(bus)
    assert same(ram.image(), noise(1))


def test_unchanged_frame_sends_nothing(oled, bus):
    screen, _ = oled
    screen.show(noise(2))
    mark = bus.mark()
    assert screen.show(noise(2)) == 0
    assert bus.log[mark:] == []


def test_one_pixel_sends_one_byte_of_one_page(oled, bus):
    screen, ram = oled
    screen.show(frame())
    mark = bus.mark()
    assert screen.show(frame((10, 20))) == 1
    assert bus.log[mark:] == [
        (0x3C, COMMAND, bytes([0x21, 10, 10, 0x22, 2, 2])),
        (0x3C, DATA, bytes([1 << 4])),
    ]
    ram.replay(bus)
    assert same(ram.image(), frame((10, 20)))


def test_only_the_changed_column_span_of_each_page(oled, bus):
    screen, _ = oled
    screen.show(frame())
    mark = bus.mark()
    assert screen.show(frame((3, 0), (7, 1), (127, 63))) == 6
    assert bus.log[mark:] == [
        (0x3C, COMMAND, bytes([0x21, 3, 7, 0x22, 0, 0])),
        (0x3C, DATA, bytes([0x01, 0, 0, 0, 0x02])),
        (0x3C, COMMAND, bytes([0x21, 127, 127, 0x22, 7, 7])),
        (0x3C, DATA, bytes([0x80])),
    ]


def test_lost_display_raises_then_recovers_with_init_and_full_frame(oled, bus):
    screen, ram = oled
    screen.show(frame())
    bus.unplugged = True
    with pytest.raises(DisplayError) as info:
        screen.show(frame((1, 1)))
    assert isinstance(info.value, OSError)
    assert str(info.value) == (
        "ssd1306 display not answering: I2C device not found on address: 0x3C"
    )
    assert screen.is_lost
    with pytest.raises(DisplayError):  # still gone: still an error, no crash
        screen.show(frame((1, 1)))
    assert screen.is_lost

    bus.unplugged = False
    mark = bus.mark()
    assert screen.show(frame((1, 1))) == 1024
    assert not screen.is_lost
    init = luma_init_commands(ssd1306)
    assert bus.commands(mark) == init[:-1] + [FULL_WINDOW, b"\xaf"]
    assert bus.data_bytes(mark) == 1024
    ram.replay(bus)
    assert same(ram.image(), frame((1, 1)))


def test_fault_during_data_write(oled, bus):
    screen, ram = oled
    screen.show(frame())
    bus.fail_in = 1  # the address command goes through, the data does not
    with pytest.raises(DisplayError, match="Remote I/O error"):
        screen.show(frame((5, 5)))
    bus.unplugged = False
    assert screen.show(frame((5, 5))) == 1024
    ram.replay(bus)
    assert same(ram.image(), frame((5, 5)))


def test_rotation_uses_luma_preprocess(bus):
    ram = Ssd1306Ram()
    screen = PageDiffDisplay(open_oled(rotate=1, bus=bus))
    tall = frame((0, 0), (63, 127), (10, 100), size=(64, 128))
    screen.show(tall)
    ram.replay(bus)
    assert same(ram.image(), tall.rotate(-90, expand=True))


def test_frame_size_and_mode(oled):
    screen, _ = oled
    with pytest.raises(DriverConfigError, match="^frame is 64x128, display is 128x64$"):
        screen.show(frame(size=(64, 128)))
    grey = Image.new("L", SIZE, 200)
    assert screen.show(grey) == 1024
    assert screen.show(Image.new("1", SIZE, 1)) == 0  # 200 thresholds to white


@pytest.mark.parametrize("controller", [ssd1306, sh1106])
def test_packing_matches_luma(controller):
    luma_bus, our_bus = FakeBus(), FakeBus()
    image = noise(3)
    device = controller(i2c(bus=luma_bus))
    mark = luma_bus.mark()
    device.display(image)
    PageDiffDisplay(controller(i2c(bus=our_bus))).show(image)
    ours = b"".join(b for _, c, b in our_bus.log if c == DATA)
    theirs = b"".join(b for _, c, b in luma_bus.log[mark:] if c == DATA)
    assert ours[-1024:] == theirs


# -- SH1106 -------------------------------------------------------------------


def test_sh1106_first_frame_and_one_pixel(bus):
    ram = Sh1106Ram()
    screen = PageDiffDisplay(open_oled("sh1106", bus=bus))
    mark = bus.mark()
    assert screen.show(frame()) == 1024
    pages = [bytes([0xB0 | p, 0x02, 0x10]) for p in range(8)]
    assert bus.commands(mark)[-9:] == pages + [b"\xaf"]
    assert bus.data_bytes(mark) == 1024

    mark = bus.mark()
    assert screen.show(frame((10, 20), (100, 20))) == 91
    assert bus.commands(mark) == [bytes([0xB2, 0x0C, 0x10])]  # column 10 + 2
    mark = bus.mark()
    assert screen.show(frame((100, 20))) == 1
    assert bus.log[mark:] == [
        (0x3C, COMMAND, bytes([0xB2, 0x0C, 0x10])),
        (0x3C, DATA, bytes([0])),
    ]
    ram.replay(bus)
    assert same(ram.image(), frame((100, 20)))


def test_sh1106_recovers(bus):
    ram = Sh1106Ram()
    screen = PageDiffDisplay(open_oled("sh1106", bus=bus))
    screen.show(frame())
    bus.unplugged = True
    with pytest.raises(DisplayError):
        screen.show(frame((127, 63)))
    bus.unplugged = False
    mark = bus.mark()
    assert screen.show(frame((127, 63))) == 1024
    init = luma_init_commands(sh1106)
    assert bus.commands(mark)[: len(init) - 1] == init[:-1]
    ram.replay(bus)
    assert ram.on and same(ram.image(), frame((127, 63)))


# -- luma's dummy device --------------------------------------------------------


def test_dummy_device_gets_whole_images_but_counts_changes():
    device = dummy(mode="1")
    screen = PageDiffDisplay(device)
    assert screen.show(frame((2, 2))) == 1024
    assert same(device.image, frame((2, 2)))
    shown = device.image
    assert screen.show(frame((2, 2))) == 0
    assert device.image is shown  # nothing changed, nothing displayed
    assert screen.show(frame((2, 2), (9, 9))) == 1
    assert same(device.image, frame((2, 2), (9, 9)))


def test_dummy_rgb_and_rotated():
    device = dummy(width=128, height=64, rotate=2)
    PageDiffDisplay(device).show(frame((0, 0)))
    assert device.image.mode == "RGB"
    assert same(device.image, frame((127, 63)))


# -- the diff never misses a change -----------------------------------------------

pixel_edits = st.lists(
    st.tuples(st.integers(0, 127), st.integers(0, 63), st.booleans()), max_size=12
)
steps = st.lists(st.tuples(pixel_edits, st.none() | st.integers(0, 12)), min_size=1, max_size=8)


@pytest.mark.parametrize("paged", [False, True], ids=["image", "paged"])
@pytest.mark.parametrize(("controller", "model"), [("ssd1306", Ssd1306Ram), ("sh1106", Sh1106Ram)])
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(start=st.integers(0, 2**16), steps=steps)
def test_ram_always_equals_last_frame(controller, model, paged, start, steps):
    """Pillow images or paged frames: the RAM ends as the frame, faults or not."""
    bus, ram = FakeBus(), model()
    display = PageDiffDisplay(open_oled(controller, bus=bus, init=False))

    class Screen:
        is_lost = property(lambda self: display.is_lost)

        def show(self, image: Image.Image) -> int:
            return display.show(PagedImage.from_image(image) if paged else image)

    screen = Screen()
    image = noise(start) if start % 2 else frame()
    screen.show(image)
    for edits, fail_in in steps:
        image = image.copy()
        for x, y, on in edits:
            image.putpixel((x, y), on)
        bus.fail_in = fail_in
        mark = bus.mark()
        try:
            sent = screen.show(image)
        except DisplayError:
            event("display lost mid-frame")
            bus.fail_in, bus.unplugged = None, False
            assert screen.is_lost
            mark = bus.mark()
            sent = screen.show(image)
            assert sent == 1024
        bus.fail_in = None
        assert sent == bus.data_bytes(mark)
        ram.replay(bus)
        assert same(ram.image(), image)


def test_importing_drivers_loads_no_hardware_library():
    code = (
        "import sys, drivers; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('gpiozero', 'luma', 'smbus2', 'lgpio')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


class FlakyDummy(dummy):
    """A dummy whose next ``display()`` raises, like an emulator losing its window."""

    fail = False

    def display(self, image: Image.Image) -> None:
        if self.fail:
            self.fail = False
            raise OSError("window closed")
        super().display(image)


def test_other_device_fault_resends_on_next_show():
    device = FlakyDummy(mode="1")
    screen = PageDiffDisplay(device)
    screen.show(frame())
    device.fail = True
    with pytest.raises(DisplayError, match="^FlakyDummy display not answering: window"):
        screen.show(frame((4, 4)))
    assert screen.is_lost
    assert screen.show(frame((4, 4))) == 1024
    assert same(device.image, frame((4, 4))) and not screen.is_lost
