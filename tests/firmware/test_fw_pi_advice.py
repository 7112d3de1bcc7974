"""``run`` without lgpio names what to install on this very system (issue 20:
it said "or run scripts/install-pi.sh", which is what the user had just done,
and its apt package is not there on plain Debian nor its wheel for Python 3.13)."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware.pi.advice import PythonHere, no_gpio_advice, os_release, python_here
from firmware.pi.run import hardware_problem

VENV = "/opt/euchre-referee/.venv/bin/python"
EMULATE = "; without the box, try 'euchre-referee emulate'"


@pytest.mark.parametrize(("here", "advice"), [
    # Raspberry Pi OS, the install script's venv (Debian's Python, its site-packages seen)
    (PythonHere(True, "bookworm", (3, 11), VENV, True, True, True),
     "install lgpio: sudo apt install python3-lgpio (Raspberry Pi OS bookworm)"),
    (PythonHere(True, "trixie", (3, 13), VENV, True, True, True),
     "install lgpio: sudo apt install python3-lgpio (Raspberry Pi OS trixie)"),
    # plain Debian (no python3-lgpio in apt): the wheel for this Python, with its pip
    (PythonHere(False, "bookworm", (3, 11), VENV, True, True, True),
     f"install lgpio: {VENV} -m pip install lgpio (into this Python)"),
    (PythonHere(False, "trixie", (3, 13), VENV, True, True, True),
     f"install lgpio: {VENV} -m pip install adafruit-lgpio (into this Python, lgpio's own "
     "wheels stop at Python 3.12 and this is 3.13)"),
    # Raspberry Pi OS, but a venv that cannot see apt's modules (or another Python)
    (PythonHere(True, "trixie", (3, 12), "/home/pi/v/bin/python", True, True, False),
     "install lgpio: /home/pi/v/bin/python -m pip install lgpio (into this Python)"),
    (PythonHere(True, "trixie", (3, 14), "/usr/local/bin/python3.14", False, False, True),
     "install lgpio: /usr/local/bin/python3.14 -m pip install adafruit-lgpio (into this "
     "Python, lgpio's own wheels stop at Python 3.12 and this is 3.14)"),
    # plain Debian's own Python, no venv: pip may not install there
    (PythonHere(False, "trixie", (3, 13), "/usr/bin/python3", True, False, True),
     "install lgpio into a venv and run the referee from it (scripts/install-pi.sh makes one "
     "and installs lgpio there)"),
])
def test_the_advice_names_what_to_install_here(here: PythonHere, advice: str) -> None:
    assert no_gpio_advice(here) == advice + EMULATE


def test_the_advice_never_sends_back_to_the_install_script_for_lgpio() -> None:
    from drivers import NoGpio

    problem = hardware_problem(NoGpio("no GPIO pin factory: lgpio: No module named 'lgpio'"))
    assert problem.startswith("GPIO not available: no GPIO pin factory: ")
    assert "or run scripts/install-pi.sh" not in problem
    assert problem.endswith(no_gpio_advice(python_here()))


def test_os_release_is_read_with_its_quotes(tmp_path: Path) -> None:
    path = tmp_path / "os-release"
    path.write_text('PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nID=debian\n'
                    "VERSION_CODENAME=trixie\n# a comment\n", encoding="utf-8")
    assert os_release(path) == {"PRETTY_NAME": "Debian GNU/Linux 13 (trixie)", "ID": "debian",
                                "VERSION_CODENAME": "trixie"}
    assert os_release(tmp_path / "missing") == {}
