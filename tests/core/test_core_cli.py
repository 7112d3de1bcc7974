"""``python -m firmware replay`` on log files: exit codes, text and JSON output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

VALID = """euchre-log 1
players N=Ragnar E=Sigríður S=South W=Anna
game dealer=N
upcard 9H
order E alone
trick E
trick S
trick N
trick E
trick S
score NS=2 EW=0
"""

# line 6 is bad: E deals hand 2, so it is South's turn to bid
INVALID = """euchre-log 1
game dealer=N
make S H
tricks 4
upcard 9D
pass N
pass E
"""
INVALID_REASON = "it is South's turn to bid, not Ragnar's"

WON = "euchre-log 1\ngame dealer=N\n" + "make N H alone\ntricks 5\n" * 3 + "winner NS\n"

JSON_KEYS = {"file", "score", "hands_played", "dealer", "winner", "error"}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "firmware", *args],
        cwd=ROOT, capture_output=True, text=True, encoding="utf-8", timeout=60,
    )


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_valid_log_exit_0(tmp_path: Path) -> None:
    path = write(tmp_path, "valid.log", VALID)
    done = run("replay", path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{path}: game 1, 1 hands"
    assert "  score: NS 2 (Ragnar & South), EW 0 (Sigríður & Anna)" in lines
    assert "Sigríður (E) ♥ alone" in done.stdout
    assert "euchred: NS +2" in done.stdout
    assert lines[-1] == (
        "  next: the call: who made trump, which suit, alone? (dealer Sigríður)"
    )
    assert done.stderr == ""


def test_invalid_log_exit_1_with_file_line_reason(tmp_path: Path) -> None:
    path = write(tmp_path, "invalid.log", INVALID)
    done = run("replay", path)
    assert done.returncode == 1
    assert done.stdout == f"{path}:6: {INVALID_REASON}\n"


def test_json_valid(tmp_path: Path) -> None:
    path = write(tmp_path, "valid.log", VALID)
    done = run("replay", "--json", path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    obj = json.loads(lines[0])
    assert set(obj) == JSON_KEYS
    assert obj == {
        "file": path,
        "score": {"NS": 2, "EW": 0},
        "hands_played": 1,
        "dealer": "E",
        "winner": None,
        "error": None,
    }
    assert "Sigríður" not in lines[0]  # no names in the JSON; non-ASCII kept as text below


def test_json_game_over_has_null_dealer(tmp_path: Path) -> None:
    path = write(tmp_path, "won.log", WON)
    done = run("replay", "--json", path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "file": path,
        "score": {"NS": 12, "EW": 0},
        "hands_played": 3,
        "dealer": None,
        "winner": "NS",
        "error": None,
    }


def test_text_game_over(tmp_path: Path) -> None:
    path = write(tmp_path, "won.log", WON)
    done = run("replay", path)
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1] == "  winner: NS"


def test_json_invalid_gives_state_before_the_bad_line(tmp_path: Path) -> None:
    path = write(tmp_path, "invalid.log", INVALID)
    done = run("replay", "--json", path)
    assert done.returncode == 1
    obj = json.loads(done.stdout)
    assert set(obj) == JSON_KEYS
    assert obj == {
        "file": path,
        "score": {"NS": 1, "EW": 0},
        "hands_played": 1,
        "dealer": "E",
        "winner": None,
        "error": {"line": 6, "reason": INVALID_REASON},
    }


def test_json_keeps_non_ascii(tmp_path: Path) -> None:
    path = write(tmp_path, "names.log", 'euchre-log 1\nplayers E="Sigríður Þór"\ngame dealer=W\n'
                 "pass E\n")
    done = run("replay", "--json", path)
    assert done.returncode == 1
    assert '"reason": "it is Ragnar\'s turn to bid, not Sigríður Þór\'s"' in done.stdout
    assert json.loads(done.stdout)["error"] == {
        "line": 4, "reason": "it is Ragnar's turn to bid, not Sigríður Þór's",
    }


def test_several_files_any_invalid_exit_1(tmp_path: Path) -> None:
    good = write(tmp_path, "a.log", VALID)
    bad = write(tmp_path, "b.log", INVALID)
    done = run("replay", "--json", good, bad, good)
    assert done.returncode == 1
    objs = [json.loads(line) for line in done.stdout.splitlines()]
    assert [obj["file"] for obj in objs] == [good, bad, good]
    assert [obj["error"] for obj in objs] == [
        None, {"line": 6, "reason": INVALID_REASON}, None,
    ]
    done = run("replay", good, good)
    assert done.returncode == 0


def test_no_files_is_a_usage_error() -> None:
    done = run("replay")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "the following arguments are required: FILE" in done.stderr


def test_no_command_is_a_usage_error() -> None:
    done = run()
    assert done.returncode == 2
    assert "replay" in done.stderr


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.log")
    done = run("replay", missing)
    assert done.returncode == 2
    assert done.stderr == f"{missing}: no such file\n"
    done = run("replay", "--json", missing)
    assert done.returncode == 2


def test_bad_checksum_file(tmp_path: Path) -> None:
    path = write(tmp_path, "sum.log", "euchre-log 1\ngame dealer=N*0000\n")
    done = run("replay", path)
    assert done.returncode == 1
    assert done.stdout.startswith(f"{path}:2: checksum mismatch: the line says *0000, its text")


def test_not_a_log_file(tmp_path: Path) -> None:
    path = write(tmp_path, "x.log", "hello\n")
    done = run("replay", "--json", path)
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"] == {
        "line": 1, "reason": "not a game log: the first line must be 'euchre-log 1'",
    }


def test_not_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "latin.log"
    path.write_bytes("euchre-log 1\nplayers E=Sigríður\n".encode("latin-1"))
    done = run("replay", str(path))
    assert done.returncode == 1
    # line by line, in the serial link's words (the same verdict as `send`)
    assert done.stdout == f"{path}:2: not UTF-8: byte 15 of the line is 0xED\n"
