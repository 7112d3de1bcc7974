"""``euchre-referee replay`` and ``games --export``, and the serial link's
check (``firmware.logcheck``), on games started from a score and with a
misdeal: the score goes on from where the game started, a bad starting score
is one line naming the file's line, and an export keeps both lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from euchre_core import Team, replay
from firmware.journal import Store
from firmware.logcheck import check_bytes

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "from-a-score.log"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "firmware", *args], cwd=ROOT,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)


def test_replay_goes_on_from_the_starting_score() -> None:
    done = run("replay", str(EXAMPLE))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{EXAMPLE}: game 1, 4 hands, started at NS 6, EW 4"
    assert "  score: NS 8 (Ragnar & South), EW 11 (Sigríður & Anna)" in lines
    assert lines[-1] == "  winner: EW"
    assert any(line.split()[:3] == ["1", "Anna", "(W)"] for line in lines)  # Anna dealt again
    done = run("replay", "--json", str(EXAMPLE))
    assert json.loads(done.stdout)["score"] == {"NS": 8, "EW": 11}


def test_a_bad_starting_score_is_one_line_naming_the_file_s_line(tmp_path: Path) -> None:
    for text, reason in [
        ("game dealer=W NS=10 EW=4", "starting score NS 10, EW 4: NS is not below the target (10)"),
        ("game dealer=W NS=-2 EW=4",
         "game: NS=-2: a starting score is a whole number of points, 0 to 99"),
        ("game dealer=Q NS=2 EW=4", "not a seat: 'Q' (use N E S W)"),
    ]:
        path = tmp_path / "bad.log"
        path.write_text(f"euchre-log 1\n# from paper\n{text}\nupcard H\n", encoding="utf-8")
        done = run("replay", str(path))
        assert done.returncode == 1
        assert done.stdout == f"{path}:3: {reason}\n"
        checked = check_bytes(path.read_bytes())  # the link's check: the same answer
        assert checked.error is not None
        assert (checked.error.line, checked.error.reason) == (3, reason)


def test_the_link_s_check_takes_the_example() -> None:
    checked = check_bytes(EXAMPLE.read_bytes())
    assert checked.error is None
    assert checked.game.score == {Team.NS: 8, Team.EW: 11}
    assert checked.game.start_score == {Team.NS: 6, Team.EW: 4}


def test_games_export_keeps_the_starting_score_and_the_misdeal(tmp_path: Path) -> None:
    store = Store(tmp_path)
    try:
        lines = ["game dealer=W NS=6 EW=4", "upcard H", "pass N", "misdeal", "upcard S",
                 "order N", "undo", "order E", *["trick E"] * 5]
        game_id = store.new_game(lines)
    finally:
        store.close()
    done = run("games", "--state-dir", str(tmp_path), "--export", str(game_id))
    assert done.returncode == 0, done.stderr
    exported = done.stdout
    assert "game dealer=W NS=6 EW=4\nupcard H\npass N\nmisdeal\nupcard S\norder E\n" in exported
    assert "undo" not in exported and "score NS=6 EW=6" in exported
    assert replay(exported).game.score == {Team.NS: 6, Team.EW: 6}
    done = run("games", "--state-dir", str(tmp_path))
    assert "NS 6 EW 6, 1 hands" in done.stdout
