"""``euchre-referee run`` off the happy path: no GPIO, lgpio without a chip, a bad
pin map, a serial port that is not there, and the install script on plain Debian.

Each fault is real: this x86 machine has no GPIO (gpiozero finds no pin
factory); a Raspberry Pi 4's /proc/cpuinfo bind-mounted in a private mount
namespace makes gpiozero take it for a Pi, so the real lgpio tries
/dev/gpiochip0 and says its bare ``can not open gpiochip``; the serial port is a
path that does not exist until a null-modem cable is linked there.
"""

from __future__ import annotations

import importlib.util
import os
import queue
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.driver_fakes import FakeBus, Ssd1306Ram
from support.serial_kit import ROOT, wait_for

from drivers.pseudoterminal import NullModem, point_link
from firmware.app import Referee
from firmware.config import Config, ConfigError, load_config
from firmware.journal import Store
from firmware.link.service import SerialService
from firmware.pi.advice import no_gpio_advice, python_here
from firmware.pi.run import SERIAL_FLAG, show_serial_state
from firmware.screens import render
from firmware.view import View

PI4_CPUINFO = (
    "processor\t: 0\nHardware\t: BCM2835\nRevision\t: c03111\n"
    "Serial\t\t: 10000000abcdef01\nModel\t\t: Raspberry Pi 4 Model B Rev 1.1\n"
)


NO_I2C_BUS = '[display]\ninterface = "i2c"\nport = 99\n'
"""A panel on an I2C bus this machine has not: the start goes on without it."""


def run_referee(tmp_path: Path, config_text: str = NO_I2C_BUS,
                env: dict[str, str] | None = None, wrap: list[str] | None = None
                ) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "referee.toml"
    config.write_text(config_text, encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if k != "GPIOZERO_PIN_FACTORY"}
    environment.update(PYTHONPATH=str(ROOT), **(env or {}))
    command = [sys.executable, "-m", "firmware", "run", "--config", str(config),
               "--state-dir", str(tmp_path / "state")]
    return subprocess.run([*(wrap or []), *command], env=environment, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def test_run_without_gpio_says_what_is_missing_in_one_line(tmp_path: Path) -> None:
    done = run_referee(tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    [line] = done.stderr.splitlines()  # no traceback, no fallback warnings
    assert line.startswith("euchre-referee: GPIO not available: no GPIO pin factory: ")
    assert line.endswith(no_gpio_advice(python_here()))  # what to install on this system


def start_on_a_recording_bus(tmp_path: Path, *, first_frame: bool, pins: str | None
                             ) -> tuple[subprocess.CompletedProcess[str], set[str], FakeBus]:
    """``euchre-referee run`` with the panel (the default: an SSD1309 on SPI) on a
    recording bus (``pi_start_child``): the process, which heavy modules were
    loaded at the bus's last write, the writes."""
    out = tmp_path / "bus.txt"
    (tmp_path / "referee.toml").write_text("", encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if k != "GPIOZERO_PIN_FACTORY"}
    environment["PYTHONPATH"] = str(ROOT)
    environment["NOTIFY_SOCKET"] = str(tmp_path / "notify")  # as systemd starts it
    if pins is not None:
        environment["GPIOZERO_PIN_FACTORY"] = pins
    command = [sys.executable, str(ROOT / "tests" / "support" / "pi_start_child.py"), str(out),
               "--first-frame" if first_frame else "--to-exit", "--",
               "--config", str(tmp_path / "referee.toml"), "--state-dir", str(tmp_path / "state")]
    done = subprocess.run(command, env=environment, cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    head, *writes = out.read_text(encoding="ascii").splitlines()
    bus = FakeBus()
    for write in writes:
        control, data = write.split(" ")
        bus.log.append((0x3C, int(control), bytes.fromhex(data)))
    return done, set(head.split()[1:]), bus


def test_the_first_frame_is_on_the_panel_before_gpiozero(tmp_path: Path) -> None:
    done, loaded, bus = start_on_a_recording_bus(tmp_path, first_frame=True, pins="mock")
    assert done.returncode == 0, done.stderr
    # the frame is a Pillow image sent by luma; gpiozero (the buttons) comes
    # after it.  (``socket`` is luma.core's: its serial module imports
    # multiprocessing when it is imported.)
    assert loaded - {"socket"} == {"PIL", "luma"}, loaded
    ram = Ssd1306Ram()
    ram.replay(bus)
    store = Store(tmp_path / "state")  # the journal the start made
    try:
        view = Referee(Config(state_dir=tmp_path / "state"), store,
                       renderer=lambda view: view).view()
    finally:
        store.close()
    assert ram.on and ram.image().tobytes() == render(view).tobytes()


def test_no_gpio_after_the_first_frame_is_said_on_the_screen_too(tmp_path: Path) -> None:
    done, loaded, bus = start_on_a_recording_bus(tmp_path, first_frame=False, pins=None)
    assert (done.returncode, done.stdout) == (2, "")
    [line] = done.stderr.splitlines()
    problem = line.removeprefix("euchre-referee: ")
    assert problem.startswith("GPIO not available: no GPIO pin factory: ")
    ram = Ssd1306Ram()
    ram.replay(bus)
    notice = View(kind="notice", title="No buttons", lines=(problem,))
    assert "gpiozero" in loaded and ram.image().tobytes() == render(notice).tobytes()


@pytest.mark.skipif(importlib.util.find_spec("lgpio") is None,
                    reason="needs the lgpio module (the test extra installs it on x86_64)")
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                    reason="needs root and unshare to bind-mount a Pi's /proc/cpuinfo")
@pytest.mark.skipif(Path("/dev/gpiochip0").exists(), reason="this machine has a GPIO chip")
def test_lgpio_that_cannot_open_the_chip_says_so_in_one_line(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(PI4_CPUINFO, encoding="ascii")
    wrap = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            f'mount --bind "{cpuinfo}" /proc/cpuinfo && exec "$@"', "sh"]
    done = run_referee(tmp_path, env={"GPIOZERO_PIN_FACTORY": "lgpio"}, wrap=wrap)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "euchre-referee: GPIO not available: the GPIO chip could not be opened (lgpio: "
        "'can not open gpiochip'): is this a Raspberry Pi with /dev/gpiochip0, and is this "
        "user in the group gpio (scripts/install-pi.sh sets it up)?"]


@pytest.mark.parametrize(("toml", "message"), [
    ("[buttons.pins]\nN = 99\n",
     "buttons.pins.N: a BCM GPIO number from 0 to 27, not 99 (hw/README.md has the pin map)"),
    ("[buttons.pins]\nN = -1\n",
     "buttons.pins.N: a BCM GPIO number from 0 to 27, not -1 (hw/README.md has the pin map)"),
    ("[buttons.pins]\nN = 5\nE = 5\n", "buttons.pins.E: pin 5 is already buttons.pins.N"),
    ("[extras]\nbuzzer = 26\n", "extras.buzzer: pin 26 is already buttons.pins.OK"),
    ("[buttons]\nencoder = [5, 40]\n",
     "buttons.encoder[1]: a BCM GPIO number from 0 to 27, not 40 (hw/README.md has the pin map)"),
    ("[extras]\nseat_leds = { N = 14, E = 14 }\n",
     "extras.seat_leds.E: pin 14 is already extras.seat_leds.N"),
    # the old map's seat LED N: pin 20 is ALONE's now
    ("[extras]\nseat_leds = { N = 20 }\n",
     "extras.seat_leds.N: pin 20 is already buttons.pins.ALONE"),
])
def test_pins_are_range_checked_and_never_shared(tmp_path: Path, toml: str,
                                                 message: str) -> None:
    path = tmp_path / "referee.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}: {message}"


def test_a_bad_pin_stops_run_with_one_line(tmp_path: Path) -> None:
    done = run_referee(tmp_path, "[buttons.pins]\nN = 99\n")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"euchre-referee: {tmp_path / 'referee.toml'}: buttons.pins.N: a BCM "
                           "GPIO number from 0 to 27, not 99 (hw/README.md has the pin map)\n")


def test_the_encoder_stands_in_for_prev_and_next(tmp_path: Path) -> None:
    path = tmp_path / "referee.toml"
    path.write_text('[buttons]\nlayout = "cursor"\nencoder = [5, 6]\n', encoding="utf-8")
    config = load_config(path)
    assert config.pins == {"OK": 26, "UNDO": 21} and config.encoder == (5, 6)


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[Referee]:
    store = Store(tmp_path / "state")
    yield Referee(Config(state_dir=tmp_path / "state"), store, renderer=lambda view: view)
    store.close()


def test_a_missing_serial_port_is_logged_and_flagged_until_it_appears(
        tmp_path: Path, referee: Referee, caplog: pytest.LogCaptureFixture) -> None:
    port = tmp_path / "ttyGS0"
    caplog.set_level("WARNING", logger="drivers.serialport")
    service = SerialService.open(str(port), 115200, queue.Queue(), referee, retry_s=0.05)
    cable = NullModem()
    try:
        wait_for(lambda: service.link.open_error is not None)
        show_serial_state(referee, service.link)
        assert SERIAL_FLAG in referee.view().flags  # the corner of the screen
        warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert len(warnings) == 1 and warnings[0].startswith(
            f"{port}: cannot open the serial port: "), warnings
        point_link(port, cable.paths[0])  # the gadget port appears
        wait_for(lambda: service.link.open_error is None)
        show_serial_state(referee, service.link)
        assert SERIAL_FLAG not in referee.view().flags
    finally:
        service.close()
        cable.close()


def test_run_with_a_missing_serial_port_warns_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "referee.toml").write_text(
        NO_I2C_BUS + f'[serial]\nport = "{tmp_path / "ttyGS0"}"\n')
    process = subprocess.Popen(
        [sys.executable, "-m", "firmware", "run", "--config", str(tmp_path / "referee.toml"),
         "--state-dir", str(tmp_path / "state")],
        env={**os.environ, "PYTHONPATH": str(ROOT), "GPIOZERO_PIN_FACTORY": "mock"},
        cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        seen = []
        for line in process.stderr:
            seen.append(line)
            if "cannot open the serial port" in line:
                break
        assert seen and f"{tmp_path / 'ttyGS0'}: cannot open the serial port" in seen[-1], seen
    finally:
        process.terminate()
        process.wait(timeout=30)


# --- the install script on plain Debian ------------------------------------------------


def apt_has(package: str) -> bool:
    done = subprocess.run(["apt-cache", "policy", package], capture_output=True, text=True)
    for line in done.stdout.splitlines():
        if line.strip().startswith("Candidate:"):
            return line.split(":", 1)[1].strip() not in ("", "(none)")
    return False


def installed(package: str) -> bool:
    done = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                          capture_output=True, text=True)
    return "install ok installed" in done.stdout


@pytest.mark.skipif(shutil.which("apt-cache") is None or shutil.which("dpkg-query") is None,
                    reason="needs a Debian system (apt-cache, dpkg-query)")
def test_install_plans_the_packages_apt_has_and_pip_for_lgpio() -> None:
    """A dry run on this very system (it changes nothing): where apt has no
    python3-lgpio (plain Debian) the rest is still installed and the lgpio
    wheel planned for the venv; the script goes on to the end."""
    done = subprocess.run([str(ROOT / "scripts" / "install-pi.sh"), "--dry-run"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    script = (ROOT / "scripts" / "install-pi.sh").read_text(encoding="utf-8")
    [listed] = [line for line in script.splitlines() if line.startswith("APT_PACKAGES=(")]
    wanted = listed.removeprefix("APT_PACKAGES=(").removesuffix(")").split()  # the script's own
    missing = [package for package in wanted if not installed(package)]
    from_apt = [package for package in missing if apt_has(package)]
    if from_apt and "python3-rpi-lgpio" in from_apt and installed("python3-rpi.gpio"):
        # RPi.GPIO makes way for the shim (the same module) in the same apt-get run
        assert any(line.startswith(f"would: apt-get install {' '.join(from_apt)} "
                                   "python3-rpi.gpio- (") for line in lines), lines
    elif from_apt:
        assert f"would: apt-get install {' '.join(from_apt)}" in lines
    else:
        assert not any(line.startswith("would: apt-get install") for line in lines)
    lgpio_by_pip = "python3-lgpio" in missing and "python3-lgpio" not in from_apt
    assert any(line.startswith("would: pip install lgpio into ") for line in lines) == \
        lgpio_by_pip
    assert any(line.startswith("note: apt has no python3-lgpio here") for line in lines) == \
        lgpio_by_pip
    # the RPi.GPIO API luma drives an SPI panel's DC and RES through: pip's where apt has none
    shim_by_pip = "python3-rpi-lgpio" in missing and "python3-rpi-lgpio" not in from_apt
    assert any(line.startswith("would: pip install rpi-lgpio into ") for line in lines) == \
        shim_by_pip
    assert lines[-1].startswith("install-pi: would make ")
