"""drivers.oled: the panel sends luma.oled's bytes without luma or Pillow.

Each test builds both sides on real parts: our :class:`drivers.OledPanel` and
luma's own device on luma's ``i2c`` interface, each over a recording bus,
and compares every byte.  If the init table test fails, luma.oled changed:
regenerate with ``.venv/bin/python scripts/make_oled_init.py``.
"""

from __future__ import annotations

import errno
import os
import random
import socket
import subprocess
import sys
from pathlib import Path

import luma.oled.device
import pytest
import smbus2
from luma.core.device import dummy
from luma.core.error import DeviceDisplayModeError
from luma.core.interface.serial import i2c
from PIL import Image
from support.driver_fakes import FakeBus, FakeSMBus, PagedImage
from support.scripts import load_script

from drivers import (
    CONTROLLERS,
    DisplayError,
    DriverConfigError,
    OledPanel,
    PageDiffDisplay,
    oled,
    open_oled,
)
from drivers.display import record_luma
from drivers.oled import I2cLink, turn_pages
from drivers.oled_init import INIT

# luma.oled's display() still calls Pillow's deprecated Image.getdata().
pytestmark = pytest.mark.filterwarnings("ignore:Image.Image.getdata:DeprecationWarning")

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = ".venv/bin/python scripts/make_oled_init.py"
SIZES = [(controller, size) for controller in CONTROLLERS for size in INIT[controller]]


def load_generator():
    return load_script("scripts/make_oled_init.py")


def noise(size: tuple[int, int], seed: int) -> Image.Image:
    rng = random.Random(seed)
    return Image.frombytes("1", size, rng.randbytes(size[0] * size[1] // 8))


def frames(size: tuple[int, int]) -> list[Image.Image]:
    """A blank frame, noise, a few pixels changed, the same again, all lit."""
    width, height = size
    edited = noise(size, 1)
    for x, y in [(0, 0), (width - 1, height - 1), (width // 2, 9), (3, height // 2)]:
        edited.putpixel((x, y), 1 - edited.getpixel((x, y)))
    return [Image.new("1", size), noise(size, 1), edited, edited.copy(), Image.new("1", size, 1)]


def luma_device(controller: str, bus: object, **options: object):
    return getattr(luma.oled.device, controller)(i2c(bus=bus), **options)


# -- the init table ------------------------------------------------------------


def test_the_init_table_is_what_luma_sends():
    """drivers/oled_init.py, regenerated in memory from luma's constructors."""
    text = load_generator().render()
    committed = (ROOT / "drivers" / "oled_init.py").read_text(encoding="utf-8")
    assert text == committed, (
        f"drivers/oled_init.py differs from luma.oled's constructors: run {REGENERATE}"
    )


@pytest.mark.parametrize(("controller", "size"), SIZES)
def test_lumas_init_does_not_depend_on_rotate(controller, size):
    factory = getattr(luma.oled.device, controller)
    logs = [record_luma(factory, width=size[0], height=size[1], rotate=rotate)[1].log
            for rotate in range(4)]
    assert logs[1:] == logs[:1] * 3


@pytest.mark.parametrize("controller", CONTROLLERS)
def test_the_table_has_every_size_luma_has(controller):
    """Over a grid of sizes, luma's constructor refuses exactly those not in the table."""
    factory = getattr(luma.oled.device, controller)
    for size in [(w, h) for w in (32, 64, 80, 96, 128, 132) for h in (16, 32, 48, 64, 128)]:
        try:
            record_luma(factory, width=size[0], height=size[1])
        except DeviceDisplayModeError:
            assert size not in INIT[controller]
            with pytest.raises(DriverConfigError, match="Unsupported display mode"):
                open_oled(controller, width=size[0], height=size[1], bus=FakeBus())
        else:
            assert size in INIT[controller]


@pytest.mark.parametrize("rotate", range(4))
@pytest.mark.parametrize(("controller", "size"), SIZES)
def test_open_oled_sends_what_lumas_constructor_sends(controller, size, rotate):
    ours, theirs = FakeBus(), FakeBus()
    panel = open_oled(controller, bus=ours, rotate=rotate, width=size[0], height=size[1])
    luma_device(controller, theirs, width=size[0], height=size[1], rotate=rotate)
    assert ours.log == theirs.log
    turned = size if rotate % 2 == 0 else size[::-1]
    assert isinstance(panel, OledPanel) and panel.size == turned


# -- frames ----------------------------------------------------------------------


@pytest.mark.parametrize("rotate", range(4))
@pytest.mark.parametrize(("controller", "size"), SIZES)
def test_paged_frames_on_the_panel_send_what_luma_devices_are_sent(controller, size, rotate):
    """Paged frames on our panel, Pillow images on luma's device (each with a
    PageDiffDisplay): the same bytes, the same counts, the same faults.  At
    rotate 0 and 2 the pages go as they are (or turned); 1 and 3 via Pillow."""
    ours, theirs = FakeBus(), FakeBus()
    width, height = size
    ours_screen = PageDiffDisplay(open_oled(controller, bus=ours, init=False, rotate=rotate,
                                            width=width, height=height))
    device = luma_device(controller, theirs, width=width, height=height, rotate=rotate)
    start = theirs.mark()
    theirs_screen = PageDiffDisplay(device)
    shown = (width, height) if rotate % 2 == 0 else (height, width)
    images = frames(shown)
    steps = []
    for step, image in enumerate([*images, images[1], images[2]]):
        if step == 5:  # the display goes away after a command: both fail alike
            ours.fail_in = theirs.fail_in = 1
        outcomes: list[int | str] = []
        for screen, bus, frame in ((ours_screen, ours, PagedImage.from_image(image)),
                                   (theirs_screen, theirs, image)):
            try:
                outcomes.append(screen.show(frame))
            except DisplayError as exc:
                outcomes.append(str(exc))
                bus.unplugged = False
        assert outcomes[0] == outcomes[1], step
        steps.append(outcomes[0])
    assert ours.log == theirs.log[start:]
    full = width * height // 8
    assert steps[0] == full and steps[3] == 0 and steps[6] == full
    assert steps[5] == f"{controller} display not answering: [Errno 121] Remote I/O error"


@pytest.mark.parametrize(("controller", "size"), SIZES)
def test_turning_pages_is_lumas_rotation(controller, size):
    """Pages turned 180 degrees without Pillow equal luma's preprocess(rotate=2)."""
    turned = dummy(width=size[0], height=size[1], rotate=2, mode="1")
    for seed in range(3):
        image = noise(size, seed)
        pages = PagedImage.from_image(image).pages()
        assert turn_pages(pages) == PagedImage.from_image(turned.preprocess(image)).pages()
        assert turn_pages(turn_pages(pages)) == pages


def test_paged_frames_on_a_dummy_and_a_luma_device():
    device = dummy(mode="1")
    screen = PageDiffDisplay(device)
    image = noise((128, 64), 7)
    assert screen.show(PagedImage.from_image(image)) == 1024
    assert device.image.tobytes() == image.tobytes()
    assert screen.show(PagedImage.from_image(image)) == 0

    ours, theirs = FakeBus(), FakeBus()
    luma_screen = PageDiffDisplay(luma_device("ssd1306", ours, rotate=2))
    mark = ours.mark()
    luma_screen.show(PagedImage.from_image(image))
    PageDiffDisplay(open_oled("ssd1306", bus=theirs, init=False, rotate=2)).show(image)
    assert ours.log[mark:] == theirs.log


def test_a_paged_frame_of_the_wrong_shape():
    screen = PageDiffDisplay(open_oled(bus=FakeBus(), init=False))
    with pytest.raises(DriverConfigError, match="^frame is 64x128, display is 128x64$"):
        screen.show(PagedImage((64, 128), [bytes(64)] * 16))
    with pytest.raises(DriverConfigError, match="^frame has 7 pages of"):
        screen.show(PagedImage((128, 64), [bytes(128)] * 7))


def test_pages_are_copied_not_kept():
    """A frame that reuses its buffers: the next diff is against what was sent."""

    class Reused(PagedImage):
        def pages(self):
            return self.buffers

    bus = FakeBus()
    screen = PageDiffDisplay(open_oled(bus=bus, init=False))
    frame = Reused((128, 64), [])
    frame.buffers = [bytearray(128) for _ in range(8)]
    screen.show(frame)
    frame.buffers[3][5] = 0x81
    assert screen.show(frame) == 1


# -- the start path ----------------------------------------------------------------


@pytest.mark.parametrize(("controller", "rotate"), [("ssd1306", 0), ("sh1106", 2),
                                                    ("ssd1309", 0)])
def test_opening_and_showing_a_paged_frame_imports_neither_pillow_nor_luma(controller, rotate):
    code = f"""
import sys
sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / "tests")!r}]
from support.driver_fakes import FakeBus, PagedImage
from drivers import PageDiffDisplay, open_oled
bus = FakeBus()
screen = PageDiffDisplay(open_oled({controller!r}, bus=bus, init=False, rotate={rotate}))
first = screen.show(PagedImage((128, 64), [bytes(range(p, p + 128)) for p in range(8)]))
second = screen.show(PagedImage((128, 64), [bytes(128)] + [bytes(range(p, p + 128))
                                                           for p in range(1, 8)]))
screen.close()
print(first, second, bus.data_bytes())
print(sorted({{m.split(".")[0] for m in sys.modules}} & {{"PIL", "luma", "smbus2"}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    sent, imported = out.stdout.splitlines()
    assert sent == "1024 127 1151"  # page 0 byte 0 was already 0
    assert imported == "[]"


# -- the I2C link ---------------------------------------------------------------------


@pytest.fixture
def fake_smbus(monkeypatch):
    """smbus2.SMBus replaced by a recording bus, for luma's managed I2C."""
    monkeypatch.setattr(smbus2, "SMBus", FakeSMBus)
    monkeypatch.setattr(FakeSMBus, "opened", [])
    return FakeSMBus.opened


class I2cFiles:
    """Stands in for the i2c-dev files :func:`drivers.oled.open_i2c_device`
    opens: each is one end of a real SOCK_SEQPACKET socket pair, so every
    write(2) arrives as one packet (one I2C transaction) at the other end."""

    def __init__(self) -> None:
        self.opened: list[tuple[str, int, socket.socket, socket.socket]] = []

    def open(self, path: str, address: int) -> int:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.opened.append((path, address, ours, theirs))
        return ours.detach()

    def log(self, index: int = 0) -> list[tuple[int, int, bytes]]:
        """``(address, first byte, the rest)`` of each write, as FakeBus logs them."""
        _, address, _, theirs = self.opened[index]
        theirs.setblocking(False)
        out = []
        while True:
            try:
                packet = theirs.recv(1 << 16)
            except BlockingIOError:
                return out
            if not packet:  # the writer closed its end
                return out
            out.append((address, packet[0], packet[1:]))

    def closed(self, index: int = 0) -> bool:
        """Whether the writer's descriptor was closed (the peer reads end of file)."""
        _, _, _, theirs = self.opened[index]
        theirs.setblocking(False)
        try:
            return theirs.recv(1 << 16, socket.MSG_PEEK) == b""
        except BlockingIOError:
            return False


@pytest.fixture
def i2c_files(monkeypatch):
    files = I2cFiles()
    monkeypatch.setattr(oled, "open_i2c_device", files.open)
    return files


@pytest.mark.parametrize("controller", CONTROLLERS)
def test_a_bus_opened_here_is_written_as_luma_writes_it(i2c_files, fake_smbus, controller):
    """Managed: the same I2C transactions as luma's (its block writes and
    4 KiB i2c_rdwr messages through smbus2), written to /dev/i2c-N directly."""
    ours_screen = PageDiffDisplay(open_oled(controller, port=3, address="0x3D"))
    device = getattr(luma.oled.device, controller)(i2c(port=3, address="0x3D"))
    theirs_screen = PageDiffDisplay(device)
    [theirs] = fake_smbus
    [(path, address, _, _)] = i2c_files.opened
    assert (path, address, theirs.port) == ("/dev/i2c-3", 0x3D, 3)
    for image in frames((128, 64)):
        assert ours_screen.show(PagedImage.from_image(image)) == theirs_screen.show(image)
    ours = i2c_files.log()
    assert ours == theirs.log and {address for address, _, _ in ours} == {0x3D}
    longest = 128 if controller == "sh1106" else 1024  # a page, or the whole frame
    assert max(len(data) for _, _, data in ours) == longest  # in one write
    ours_screen.close()
    assert i2c_files.closed()


@pytest.mark.parametrize("managed", [True, False])
def test_the_link_splits_writes_as_lumas_i2c(i2c_files, fake_smbus, managed):
    """32-byte block writes on a given bus, writes of up to 4096 bytes on one opened here."""
    given = [FakeBus(), FakeBus()]
    ours = I2cLink(0x3C, port=2, bus=None if managed else given[0])
    theirs = i2c(port=2, bus=None if managed else given[1])
    for link in (ours, theirs):
        link.command(0xAE, *range(31))
        for length in (0, 1, 32, 33, 4096, 4097, 9000):
            link.data(list(range(256)) * (length // 256) + list(range(length % 256)))
        link.data(bytearray(b"\x01\x02"))
        link.cleanup()
    if managed:
        ours_log, theirs_log = i2c_files.log(), fake_smbus[0].log
        assert i2c_files.closed() and fake_smbus[0].closed
    else:
        ours_log, theirs_log = given[0].log, given[1].log
        assert not i2c_files.opened and not fake_smbus
    assert ours_log == theirs_log
    assert max(len(data) for _, _, data in ours_log) == (4096 if managed else 32)


def test_the_i2c_file_is_told_its_address_and_closed_when_it_cannot_be():
    """On a file that is not an I2C adapter the address ioctl fails (ENOTTY),
    and the descriptor is not left open."""
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(OSError) as info:
        oled.open_i2c_device("/dev/null", 0x3C)
    assert info.value.errno == errno.ENOTTY
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_bus_given_is_not_closed():
    bus = FakeBus()
    bus.close = None  # calling it would fail
    PageDiffDisplay(open_oled(bus=bus, init=False)).close()


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (PermissionError(errno.EACCES, "Permission denied", "/dev/i2c-1"),
         "I2C device permission denied: /dev/i2c-1"),
        (PermissionError(errno.EPERM, "Operation not permitted", "/dev/i2c-1"),
         "I2C device permission denied: /dev/i2c-1"),
        (OSError(errno.ENOTTY, "Inappropriate ioctl for device", "/dev/i2c-1"),
         "[Errno 25] Inappropriate ioctl for device: '/dev/i2c-1'"),
    ],
)
def test_opening_the_bus_fails(monkeypatch, error, message):
    def refuse(path, address):
        raise error

    monkeypatch.setattr(oled, "open_i2c_device", refuse)
    with pytest.raises(DisplayError) as info:
        open_oled(init=False)
    assert str(info.value) == f"ssd1306 on I2C port 1 address 0x3C: {message}"


@pytest.mark.parametrize("fault", [errno.EREMOTEIO, errno.EIO, errno.ETIMEDOUT])
@pytest.mark.parametrize("fail_in", [0, 1, 3])  # a command, the data, a later page
@pytest.mark.parametrize("controller", ["ssd1306", "sh1106"])
def test_write_faults_read_as_lumas(controller, fault, fail_in):
    messages = []
    for panel in (True, False):
        bus = FakeBus()
        device = (open_oled(controller, bus=bus, init=False) if panel
                  else luma_device(controller, bus))
        screen = PageDiffDisplay(device)
        screen.show(Image.new("1", (128, 64)))
        bus.fault, bus.fail_in = fault, fail_in
        with pytest.raises(DisplayError) as info:
            screen.show(Image.new("1", (128, 64), 1))
        assert screen.is_lost
        messages.append(str(info.value))
        bus.fault, bus.unplugged, bus.fail_in = fault, True, None
        with pytest.raises(DisplayError) as info:  # open_oled's own init
            open_oled(controller, bus=bus)
        messages.append(str(info.value))
    assert messages[:2] == messages[2:]


@pytest.mark.parametrize("controller", CONTROLLERS)
def test_cleanup_without_persist_is_lumas(controller):
    """persist False: turned off and blanked, the bytes luma's cleanup sends."""
    ours, theirs = FakeBus(), FakeBus()
    panel = open_oled(controller, bus=ours)
    device = luma_device(controller, theirs)
    panel.persist = device.persist = False
    start_ours, start_theirs = ours.mark(), theirs.mark()
    panel.cleanup()
    device.cleanup()
    assert ours.log[start_ours:] == theirs.log[start_theirs:]
    assert ours.commands(start_ours)[0] == b"\xae"


def test_config_errors_come_before_the_bus_is_opened(monkeypatch):
    """A bad size or address is reported even when the bus is not there (luma
    opened the bus first and said the bus was missing)."""
    monkeypatch.setattr(oled, "open_i2c_device", lambda path, address: pytest.fail("opened"))
    with pytest.raises(DriverConfigError, match="Unsupported display mode: 100 x 64"):
        open_oled(width=100, port=99)
    with pytest.raises(DriverConfigError, match="I2C device address invalid: zz"):
        open_oled(address="zz", width=100, port=99)
