"""What to install for GPIO on this very system, said when ``run`` finds no
pin factory: Raspberry Pi OS (bookworm or trixie) has ``python3-lgpio`` in
apt for its own Python; elsewhere the module goes into the referee's Python
with its pip, as a wheel for its version (imported only on that fault)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple


class PythonHere(NamedTuple):
    """What decides how lgpio gets into the Python that runs the referee."""

    raspberry_pi_os: bool
    """Raspberry Pi OS, whose apt has ``python3-lgpio`` (bookworm and trixie)."""
    codename: str
    """``VERSION_CODENAME`` of ``/etc/os-release`` (bookworm, trixie...), or ""."""
    version: tuple[int, int]
    python: str
    """The interpreter (``sys.executable``): its pip installs into this Python."""
    debian_python: bool
    """The system's own Python (``/usr``), for which apt's ``python3-*`` are made."""
    in_venv: bool
    system_site: bool
    """apt's modules are visible here: no venv, or one with ``--system-site-packages``."""


def os_release(path: Path = Path("/etc/os-release")) -> dict[str, str]:
    """``/etc/os-release`` as a dict (empty when it cannot be read)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() and not key.startswith("#"):
            fields[key.strip()] = value.strip().strip("'\"")
    return fields


def python_here() -> PythonHere:
    """The facts of :class:`PythonHere` for this process and this system."""
    release = os_release()
    raspberry_pi_os = release.get("ID") == "raspbian" or Path("/etc/rpi-issue").exists() or any(
        Path("/etc/apt/sources.list.d").glob("raspi.*"))
    in_venv = sys.prefix != sys.base_prefix
    system_site = True
    if in_venv:
        try:
            config = (Path(sys.prefix) / "pyvenv.cfg").read_text(encoding="utf-8")
        except OSError:
            config = ""
        system_site = any(line.replace(" ", "").lower() == "include-system-site-packages=true"
                          for line in config.splitlines())
    return PythonHere(raspberry_pi_os, release.get("VERSION_CODENAME", ""),
                      (sys.version_info[0], sys.version_info[1]), sys.executable,
                      sys.base_prefix == "/usr", in_venv, system_site)


def no_gpio_advice(here: PythonHere) -> str:
    """What to install for GPIO on this system, as one command: apt's
    ``python3-lgpio`` where Raspberry Pi OS has it for this very Python, else
    a wheel into this Python with its pip (lgpio's own wheels stop at Python
    3.12; ``adafruit-lgpio`` has the same module built for 3.13 and later)."""
    emulate = "without the box, try 'euchre-referee emulate'"
    if here.raspberry_pi_os and here.debian_python and here.system_site:
        os_name = "Raspberry Pi OS" + (f" {here.codename}" if here.codename else "")
        return f"install lgpio: sudo apt install python3-lgpio ({os_name}); {emulate}"
    if here.debian_python and not here.in_venv:  # pip may not install into Debian's Python
        return ("install lgpio into a venv and run the referee from it (scripts/install-pi.sh "
                f"makes one and installs lgpio there); {emulate}")
    wheel, why = "lgpio", ""
    if here.version >= (3, 13):
        wheel = "adafruit-lgpio"
        why = (f", lgpio's own wheels stop at Python 3.12 and this is "
               f"{here.version[0]}.{here.version[1]}")
    return f"install lgpio: {here.python} -m pip install {wheel} (into this Python{why}); {emulate}"
