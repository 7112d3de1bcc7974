"""The config file: a typo or a byte that is not UTF-8 is refused in one line
naming the file, the place and the fix; nothing is silently left at its default."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from euchre_core import Seat
from firmware.config import KNOWN_KEYS, ConfigError, load_config, parse_config

REPO = Path(__file__).resolve().parents[2]


def refusal(tmp_path: Path, text: bytes) -> str:
    path = tmp_path / "referee.toml"
    path.write_bytes(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    return message[len(f"{path}: "):]


def test_a_byte_that_is_not_utf8_is_named_by_line_and_column(tmp_path: Path) -> None:
    latin1 = "# caf\u00e9 ouvert\n[serial]\nport = \"/dev/ttyGS0\"\n".encode("latin-1")
    assert refusal(tmp_path, latin1) == (
        "line 1, column 6: byte 0xE9 is not UTF-8 (save the file as UTF-8)")
    later = b'[table]\nplayers = { N = "Ragn\xe4r" }\n'
    assert refusal(tmp_path, later).startswith("line 2, column 22: byte 0xE4 is not UTF-8")
    utf8 = '# café\n[table]\nplayers = { E = "Sigríður" }\n'.encode()
    path = tmp_path / "good.toml"
    path.write_bytes(utf8)
    assert load_config(path).names[Seat.E] == "Sigríður"


@pytest.mark.parametrize(("text", "expected"), [
    ('[serail]\nport = "/dev/ttyGS0"\n', "[serail]: no such table; did you mean 'serial'?"),
    ('[serial]\nprot = "/dev/ttyGS0"\n', "serial.prot: no such key; did you mean 'port'?"),
    ('[buttons]\nlayuot = "cursor"\n', "buttons.layuot: no such key; did you mean 'layout'?"),
    ('[display]\nrotation = 2\n', "display.rotation: no such key; did you mean 'rotate'?"),
    ('[wifi]\nssid = "x"\n', "[wifi]: no such table (the tables: [table], [buttons], "),
])
def test_an_unknown_table_or_key_is_refused_naming_the_closest(
        tmp_path: Path, text: str, expected: str) -> None:
    assert refusal(tmp_path, text.encode()).startswith(expected)


def test_every_key_the_shipped_config_shows_is_known() -> None:
    """hw/referee.toml shows every key, most commented out: each is known, and
    each known key is shown there (the table and the file say the same)."""
    shown: dict[str, set[str]] = {}
    table = None
    for line in (REPO / "hw/referee.toml").read_text(encoding="utf-8").splitlines():
        text = line.lstrip("# ").strip()
        if text.startswith("[") and text.endswith("]"):
            table = text.strip("[]").split(".")[0]
            if text.count(".") and table in shown:
                shown[table].add(text.strip("[]").split(".")[1])
            shown.setdefault(table, set())
        elif table is not None and " = " in text and line.lstrip().startswith(("#", text[0])):
            key = text.split(" = ")[0].strip()
            if re.fullmatch("[a-z][a-z0-9_]*", key):
                shown[table].add(key)
    for name, keys in KNOWN_KEYS.items():
        assert keys <= shown[name], (name, keys - shown[name])
    assert parse_config({name: {} for name in KNOWN_KEYS}) == parse_config({})


def test_the_command_says_the_config_problem_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "referee.toml"
    path.write_text('[serail]\nport = "/dev/ttyGS0"\n', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "firmware", "emulate", "--config", str(path),
         "--state-dir", str(tmp_path / "state")],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "did you mean 'serial'?" in lines[0], done.stderr
    assert "Traceback" not in done.stderr
