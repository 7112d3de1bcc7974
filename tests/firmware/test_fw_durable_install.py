"""scripts/install-pi.sh and hw/referee.toml (issue item 5; SPEC §2, §5).

The script is run against a fake root (``ROOT=DIR``): every file it edits is
under DIR, and the steps that act on the running system (apt-get, useradd,
the venv, pip, systemctl) are skipped.  Run twice, the second run changes
nothing, not even a file's mtime; ``--dry-run`` changes nothing at all and
lists what a real run would change.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from drivers.display import PanelSettings
from firmware.config import DEFAULT_PINS, CareConfig, Config, load_config

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "install-pi.sh"

# Raspberry Pi OS Bookworm's config.txt, as shipped (comments shortened).
BOOKWORM_CONFIG = """\
# For more options and information see the Raspberry Pi documentation
# Some settings may impact device functionality. See link above for details

# Uncomment some or all of these to enable the optional hardware interfaces
#dtparam=i2c_arm=on
#dtparam=i2s=on
#dtparam=spi=on

# Enable audio (loads snd_bcm2835)
dtparam=audio=on

# Automatically load overlays for detected cameras
camera_auto_detect=1

# Automatically load overlays for detected DSI displays
display_auto_detect=1

# Automatically load initramfs files, if found
auto_initramfs=1

# Enable DRM VC4 V3D driver
dtoverlay=vc4-kms-v3d
max_framebuffers=2

# Don't have the firmware create an initial video= setting in cmdline.txt.
# Use the kernel's default instead.
disable_fw_kms_setup=1

# Run in 64-bit mode
arm_64bit=1

# Disable compensation for displays with overscan
disable_overscan=1

# Run as fast as firmware / board allows
arm_boost=1

[cm4]
# Enable host mode on the 2711 built-in XHCI USB controller.
# This line should be removed if the legacy DWC2 controller is required
# (e.g. for USB device mode) or if USB support is not required.
otg_mode=1

[cm5]
dtoverlay=dwc2,dr_mode=host

[all]
"""


def fake_root(tmp_path: Path, config: str = BOOKWORM_CONFIG,
              boot: str = "boot/firmware") -> Path:
    root = tmp_path / "root"
    (root / boot).mkdir(parents=True)
    (root / boot / "config.txt").write_text(config, encoding="utf-8")
    (root / boot / "cmdline.txt").write_text(
        "console=serial0,115200 console=tty1 root=PARTUUID=1234-02 rootfstype=ext4 "
        "fsck.repair=yes rootwait\n", encoding="utf-8")
    return root


def install(root: Path, *args: str) -> str:
    result = subprocess.run(
        ["bash", str(SCRIPT), *args], env={**os.environ, "ROOT": str(root)},
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def tree(root: Path) -> dict[str, tuple[object, ...]]:
    """Every path under root: its kind, bytes' hash or link target, mode, mtime."""
    out: dict[str, tuple[object, ...]] = {}
    for path in sorted(root.rglob("*")):
        stat = path.lstat()
        if path.is_symlink():
            out[str(path.relative_to(root))] = ("link", os.readlink(path))
        elif path.is_file():
            out[str(path.relative_to(root))] = (
                "file", hashlib.sha256(path.read_bytes()).hexdigest(), stat.st_mode,
                stat.st_mtime_ns)
        else:
            out[str(path.relative_to(root))] = ("dir", stat.st_mode)
    return out


def sections(config: str) -> dict[str, list[str]]:
    current, out = "", {"": []}
    for line in config.splitlines():
        if line.startswith("["):
            current = line.strip("[]")
            out.setdefault(current, [])
        elif line and not line.startswith("#"):
            out[current].append(line)
    return out


def test_the_script_is_valid_bash() -> None:
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)
    assert os.access(SCRIPT, os.X_OK)


def test_shellcheck_finds_nothing() -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (Debian package shellcheck)")
    result = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_install_into_a_fake_root_then_again_changes_nothing(tmp_path: Path) -> None:
    root = fake_root(tmp_path)
    first = install(root)
    assert "install-pi: 0 changes" not in first
    config = (root / "boot/firmware/config.txt").read_text(encoding="utf-8")
    parts = sections(config)
    # Our four lines, in the unconditional [all] section at the end ...
    assert {"dtparam=spi=on", "dtparam=i2c_arm=on", "dtparam=i2c_arm_baudrate=400000",
            "dtoverlay=dwc2"} <= set(parts["all"])
    # ... and nothing else changed: the CM5's host-mode line stays in [cm5].
    assert config.startswith(BOOKWORM_CONFIG)
    assert parts["cm5"] == ["dtoverlay=dwc2,dr_mode=host"]
    modules = (root / "etc/modules-load.d/euchre-referee.conf").read_text().split()
    assert {"i2c-dev", "dwc2", "g_serial"} <= set(modules)
    assert (root / "etc/euchre-referee/referee.toml").read_bytes() == (
        REPO / "hw/referee.toml").read_bytes()
    unit = root / "etc/systemd/system/euchre-referee.service"
    assert unit.read_bytes() == (REPO / "systemd/euchre-referee.service").read_bytes()
    wants = root / "etc/systemd/system/multi-user.target.wants/euchre-referee.service"
    assert os.readlink(wants) == "/etc/systemd/system/euchre-referee.service"
    getty = root / "etc/systemd/system/serial-getty@ttyGS0.service"
    assert os.readlink(getty) == "/dev/null"  # masked: the referee owns ttyGS0
    cmdline = (root / "boot/firmware/cmdline.txt").read_text()
    assert "modules-load" not in cmdline  # the boot line is never touched
    assert "skipped (ROOT=" in first and "apt-get install" in first

    before = tree(root)
    second = install(root)
    assert "install-pi: 0 changes" in second, second
    assert "changed:" not in second
    assert tree(root) == before  # not a byte, not an mtime


def test_dry_run_changes_nothing_and_lists_the_changes(tmp_path: Path) -> None:
    root = fake_root(tmp_path)
    before = tree(root)
    dry = install(root, "--dry-run")
    assert tree(root) == before
    would = [line for line in dry.splitlines() if line.startswith("would: ")]
    real = install(root)
    done = [line for line in real.splitlines() if line.startswith("changed: ")]
    assert [line[len("would: "):] for line in would] == [line[len("changed: "):]
                                                         for line in done]
    assert f"install-pi: would make {len(would)} changes" in dry
    after = tree(root)
    dry_again = install(root, "--dry-run")
    assert "install-pi: would make 0 changes" in dry_again
    assert tree(root) == after


def test_an_edited_config_is_never_overwritten(tmp_path: Path) -> None:
    root = fake_root(tmp_path)
    install(root)
    conf = root / "etc/euchre-referee/referee.toml"
    edited = conf.read_text(encoding="utf-8").replace('N = "Ragnar"', 'N = "Olga"')
    conf.write_text(edited, encoding="utf-8")
    out = install(root)
    assert conf.read_text(encoding="utf-8") == edited
    assert "kept as edited" in out and "install-pi: 0 changes" in out
    assert (root / "etc/euchre-referee/referee.toml.default").read_bytes() == (
        REPO / "hw/referee.toml").read_bytes()


def test_existing_settings_are_fixed_in_place_not_duplicated(tmp_path: Path) -> None:
    config = ("dtparam=audio=on\ndtparam=i2c_arm=off,i2c_arm_baudrate=100000\n"
              "dtparam=spi=off\n[pi4]\ndtparam=i2c_arm_baudrate=10000\ndtparam=spi=off\n")
    root = fake_root(tmp_path, config)
    install(root)
    text = (root / "boot/firmware/config.txt").read_text()
    parts = sections(text)
    assert parts[""] == ["dtparam=audio=on", "dtparam=i2c_arm=on,i2c_arm_baudrate=400000",
                         "dtparam=spi=on"]
    # conditional: left alone
    assert parts["pi4"] == ["dtparam=i2c_arm_baudrate=10000", "dtparam=spi=off"]
    assert parts["all"] == ["dtoverlay=dwc2"]  # only what was missing, under a new [all]
    assert text.count("i2c_arm=on") == 1 and text.count("spi=on") == 1
    assert "install-pi: 0 changes" in install(root)


def test_older_layout_boot_config_and_no_gadget(tmp_path: Path) -> None:
    root = fake_root(tmp_path, "#dtparam=i2c_arm=on\n", boot="boot")
    install(root, "--no-gadget")
    text = (root / "boot/config.txt").read_text()
    assert "dtparam=i2c_arm=on" in text.splitlines()
    assert "dwc2" not in text
    modules = (root / "etc/modules-load.d/euchre-referee.conf").read_text().split()
    assert "i2c-dev" in modules and "g_serial" not in modules
    assert not (root / "etc/systemd/system/serial-getty@ttyGS0.service").exists()
    assert "install-pi: 0 changes" in install(root, "--no-gadget")


def test_a_getty_enabled_on_the_gadget_port_is_disabled(tmp_path: Path) -> None:
    root = fake_root(tmp_path)
    wants = root / "etc/systemd/system/getty.target.wants/serial-getty@ttyGS0.service"
    wants.parent.mkdir(parents=True)
    wants.symlink_to("/lib/systemd/system/serial-getty@.service")
    out = install(root)
    assert not wants.is_symlink()
    assert "disable serial-getty@ttyGS0.service" in out
    assert "install-pi: 0 changes" in install(root)


def test_default_config_matches_the_program_defaults() -> None:
    """hw/referee.toml documents the default wiring: parsed, it is Config()
    with DEFAULT_PINS, plus the USB gadget serial port."""
    config = load_config(REPO / "hw/referee.toml")
    assert config.pins == DEFAULT_PINS
    assert (config.display, config.care) == (PanelSettings(), CareConfig())
    default = Config()
    for name in Config._fields:
        if name != "serial_port":
            assert getattr(config, name) == getattr(default, name), name
    assert config.serial_port == "/dev/ttyGS0"


def test_hw_readme_wiring_table_matches_the_pins() -> None:
    """Every button of DEFAULT_PINS is in hw/README.md's wiring table, on the
    header pin of its BCM number."""
    header = {2: 3, 3: 5, 4: 7, 5: 29, 6: 31, 12: 32, 13: 33, 16: 36, 17: 11, 18: 12,
              19: 35, 20: 38, 21: 40, 22: 15, 23: 16, 24: 18, 25: 22, 26: 37, 27: 13}
    readme = (REPO / "hw/README.md").read_text(encoding="utf-8")
    rows = [[cell.strip() for cell in line.strip("|").split("|")]
            for line in readme.splitlines() if line.startswith("|")]
    for button, bcm in DEFAULT_PINS.items():
        matches = [row for row in rows if row and row[0] == button]
        assert matches, f"{button} is not in hw/README.md's wiring table"
        assert f"GPIO{bcm}" in matches[0] and str(header[bcm]) in matches[0], matches[0]
    assert "dtparam=i2c_arm_baudrate=400000" in readme


# --- trixie, and its rpi-usb-gadget (issue 20) ------------------------------------------

TRIXIE_OS_RELEASE = """\
PRETTY_NAME="Debian GNU/Linux 13 (trixie)"
NAME="Debian GNU/Linux"
VERSION_ID="13"
VERSION="13 (trixie)"
VERSION_CODENAME=trixie
ID=debian
"""


def trixie_root(tmp_path: Path, *, usb_ethernet: bool) -> Path:
    """A trixie fake root; with ``usb_ethernet``, rpi-usb-gadget turned on as
    its ``rpi-usb-gadget on`` leaves it (g_ether, the dwc2 overlay in peripheral mode)."""
    config = BOOKWORM_CONFIG + ("dtoverlay=dwc2,dr_mode=peripheral\n" if usb_ethernet else "")
    root = fake_root(tmp_path, config)
    (root / "etc").mkdir()
    (root / "etc/os-release").write_text(TRIXIE_OS_RELEASE, encoding="utf-8")
    if usb_ethernet:
        (root / "usr/lib/modules-load.d").mkdir(parents=True)
        (root / "usr/lib/modules-load.d/usb-gadget.conf").write_text("g_ether\n")
    return root


def test_trixie_installs_as_bookworm_does(tmp_path: Path) -> None:
    root = trixie_root(tmp_path, usb_ethernet=False)
    out = install(root)
    assert out.splitlines()[0] == "system: Debian GNU/Linux 13 (trixie)"
    assert "rpi-usb-gadget" not in out
    modules = (root / "etc/modules-load.d/euchre-referee.conf").read_text().split()
    assert {"i2c-dev", "dwc2", "g_serial"} <= set(modules)
    assert "dtoverlay=dwc2" in sections((root / "boot/firmware/config.txt").read_text())["all"]
    assert "install-pi: 0 changes" in install(root)


def test_rpi_usb_gadgets_usb_ethernet_keeps_the_port_and_the_serial_gadget_is_left_out(
        tmp_path: Path) -> None:
    """One gadget on the USB port: g_serial beside rpi-usb-gadget's g_ether
    would never bind; the script says so and what to do, and leaves it out."""
    root = trixie_root(tmp_path, usb_ethernet=True)
    before = (root / "boot/firmware/config.txt").read_text()
    out = install(root)
    assert ("note: rpi-usb-gadget's USB Ethernet gadget is on "
            "(/usr/lib/modules-load.d/usb-gadget.conf): the USB port takes one gadget, so the "
            "serial link's (g_serial) is left out; to have the serial link on USB: sudo "
            "rpi-usb-gadget off, then run this again") in out.splitlines()
    modules = (root / "etc/modules-load.d/euchre-referee.conf").read_text().split()
    assert "i2c-dev" in modules and "g_serial" not in modules and "dwc2" not in modules
    config = (root / "boot/firmware/config.txt").read_text()
    assert config.startswith(before)  # rpi-usb-gadget's overlay line stays as it is
    assert "dtoverlay=dwc2" not in sections(config)["all"]
    assert not (root / "etc/systemd/system/serial-getty@ttyGS0.service").exists()
    assert "install-pi: 0 changes" in install(root)


def test_a_system_neither_bookworm_nor_trixie_is_warned_of(tmp_path: Path) -> None:
    root = fake_root(tmp_path)
    (root / "etc").mkdir()
    (root / "etc/os-release").write_text('PRETTY_NAME="Raspbian GNU/Linux 11 (bullseye)"\n'
                                        "VERSION_CODENAME=bullseye\n", encoding="utf-8")
    done = subprocess.run(["bash", str(SCRIPT), "--dry-run"], env={**os.environ, "ROOT": str(root)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "system: Raspbian GNU/Linux 11 (bullseye)"
    assert ("warning: made for Raspberry Pi OS bookworm and trixie, not 'bullseye': going on, "
            "check what it says") in done.stderr.splitlines()


# --- SPI: the recommended panel on every Pi (issue 22) ---------------------------------------


@pytest.mark.parametrize("system", ["bookworm", "trixie"])
def test_the_dry_run_plans_spi_and_the_gpio_shim(tmp_path: Path, system: str) -> None:
    """On a fake root of either system the dry run plans dtparam=spi=on (Raspberry Pi
    OS ships it commented out), the GPIO shim luma's DC and RES go through
    (python3-rpi-lgpio) with spidev, and the group spi; the real run then writes
    SPI on once, and a second run changes nothing."""
    root = trixie_root(tmp_path, usb_ethernet=False) if system == "trixie" else fake_root(tmp_path)
    if system == "bookworm":
        (root / "etc").mkdir()
        (root / "etc/os-release").write_text(TRIXIE_OS_RELEASE.replace("13", "12").replace(
            "trixie", "bookworm"), encoding="utf-8")
    assert "#dtparam=spi=on" in (root / "boot/firmware/config.txt").read_text()
    dry = install(root, "--dry-run").splitlines()
    assert dry[0] == f"system: Debian GNU/Linux {'13' if system == 'trixie' else '12'} ({system})"
    assert ("would: boot config: SPI on, I2C on at 400 kHz, dtoverlay=dwc2 "
            "(/boot/firmware/config.txt)") in dry
    [apt] = [line for line in dry if line.startswith(f"skipped (ROOT={root}): apt-get install")]
    assert {"python3-lgpio", "python3-rpi-lgpio", "python3-spidev"} <= set(apt.split())
    [user] = [line for line in dry if "system user euchre in groups" in line]
    assert user.split("groups ", 1)[1].split() == ["gpio", "i2c", "spi", "dialout"]
    install(root)
    config = (root / "boot/firmware/config.txt").read_text()
    assert "dtparam=spi=on" in sections(config)["all"]
    assert config.count("\ndtparam=spi=on\n") == 1
    assert "install-pi: 0 changes" in install(root)


STUB_APT = """\
#!/bin/sh
# dpkg-query -W -f=... PACKAGE / apt-cache policy PACKAGE, from $STUB_INSTALLED and
# $STUB_AVAILABLE (space-separated names): a Raspberry Pi OS's apt, made up.
name=$(basename "$0")
for package; do :; done
case " $STUB_INSTALLED " in *" $package "*) installed=1 ;; *) installed=0 ;; esac
case " $STUB_AVAILABLE " in *" $package "*) available=1 ;; *) available=0 ;; esac
if [ "$name" = dpkg-query ]; then
    [ "$installed" = 1 ] || exit 1
    printf 'install ok installed'
else
    [ "$available" = 1 ] && echo "  Candidate: 1.0" || echo "  Candidate: (none)"
fi
"""


def dry_run_with_apt(tmp_path: Path, installed: str, available: str) -> list[str]:
    """install-pi.sh --dry-run on this system (it changes nothing), its dpkg-query and
    apt-cache made up (and systemctl saying the unit is not running)."""
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for name in ("dpkg-query", "apt-cache"):
        (stubs / name).write_text(STUB_APT, encoding="utf-8")
        (stubs / name).chmod(0o755)
    (stubs / "systemctl").write_text("#!/bin/sh\nexit 3\n", encoding="utf-8")
    (stubs / "systemctl").chmod(0o755)
    env = {**os.environ, "PATH": f"{stubs}:{os.environ['PATH']}", "STUB_INSTALLED": installed,
           "STUB_AVAILABLE": available}
    env.pop("ROOT", None)
    done = subprocess.run(["bash", str(SCRIPT), "--dry-run"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


RASPBERRY_PI_OS_APT = ("python3-lgpio python3-rpi-lgpio python3-spidev python3-venv i2c-tools "
                       "python3-rpi.gpio")


def test_raspberry_pi_os_gets_the_shim_in_place_of_rpi_gpio(tmp_path: Path) -> None:
    """Where python3-rpi.gpio is installed (RPi.GPIO: not on a Pi 5; the same module
    as the shim's), the one apt-get run that installs python3-rpi-lgpio removes it."""
    lines = dry_run_with_apt(tmp_path, "python3-venv i2c-tools python3-lgpio python3-rpi.gpio",
                             RASPBERRY_PI_OS_APT)
    assert ("would: apt-get install python3-rpi-lgpio python3-spidev python3-rpi.gpio- "
            "(python3-rpi.gpio removed: RPi.GPIO does not run on a Pi 5, and python3-rpi-lgpio "
            "is the same module over lgpio)") in lines
    assert not any("pip install rpi-lgpio" in line for line in lines)
    # without RPi.GPIO: nothing to remove
    other = tmp_path / "other"
    other.mkdir()
    lines = dry_run_with_apt(other, "python3-venv i2c-tools python3-lgpio", RASPBERRY_PI_OS_APT)
    assert "would: apt-get install python3-rpi-lgpio python3-spidev" in lines


def test_an_apt_without_the_shim_has_it_pip_installed_into_the_venv(tmp_path: Path) -> None:
    lines = dry_run_with_apt(tmp_path, "python3-venv i2c-tools python3-lgpio python3-rpi.gpio",
                             "python3-lgpio python3-spidev python3-venv i2c-tools")
    assert "would: apt-get install python3-spidev" in lines  # RPi.GPIO is left as it is
    assert any(line.startswith("note: apt has no python3-rpi-lgpio here") for line in lines)
    assert ("would: pip install rpi-lgpio into /opt/euchre-referee/.venv "
            "(no python3-rpi-lgpio in apt)") in lines
