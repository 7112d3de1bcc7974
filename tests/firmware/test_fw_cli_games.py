"""``euchre-referee games``: list the kept games and export one, from the state directory;
and the parser, made for the command about to run."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from euchre_core import replay
from firmware.app import Referee
from firmware.cli import COMMANDS, WINGS, build_parser, main
from firmware.config import Config
from firmware.journal import Store


def play(state: Path, buttons: str) -> None:
    referee = Referee(Config(state_dir=state), Store(state), renderer=lambda view: view)
    for button in buttons.split():
        referee.press(button)
    referee.store.close()


def test_lists_and_exports_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    play(tmp_path, "N S CLUBS OK S S UNDO E S S")
    assert main(["games", "--state-dir", str(tmp_path)]) == 0
    listing = capsys.readouterr().out
    assert listing.startswith("   1  ") and listing.rstrip().endswith("NS 0 EW 0, 0 hands")

    assert main(["games", "--state-dir", str(tmp_path), "--export"]) == 0
    clean = capsys.readouterr().out
    assert "undo" not in clean.split("\n")
    assert clean.splitlines()[-4:] == ["trick S", "trick E", "trick S", "trick S"]

    assert main(["games", "--state-dir", str(tmp_path), "--export", "1", "--raw"]) == 0
    raw = capsys.readouterr().out
    assert raw.splitlines()[-5:] == ["trick S", "undo", "trick E", "trick S", "trick S"]
    assert replay(raw).game.entries == replay(clean).game.entries


def test_bad_state_dir_and_game_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games", "--state-dir", str(tmp_path / "none")]) == 2
    assert "no journal in" in capsys.readouterr().err
    play(tmp_path, "N")
    assert main(["games", "--state-dir", str(tmp_path), "--export", "7"]) == 2
    assert capsys.readouterr().err.strip() == f"euchre-referee: no game 7 in {tmp_path}"


def _command_names(parser: argparse.ArgumentParser) -> set[str]:
    [commands] = [action for action in parser._actions
                  if isinstance(action, argparse._SubParsersAction)]
    return set(commands.choices)


def test_each_wing_lists_the_commands_it_adds() -> None:
    """``build_parser(command)`` makes only the parsers of the wing that has
    ``command``; what each wing says it has is what it adds."""
    everything = _command_names(build_parser())
    assert everything == {*COMMANDS, *(name for wing in WINGS for name in wing.COMMANDS)}
    for wing in WINGS:
        for name in wing.COMMANDS:
            assert _command_names(build_parser(name)) == set(wing.COMMANDS), name
    for name in COMMANDS:
        assert _command_names(build_parser(name)) == {name}
    assert _command_names(build_parser("replya")) == everything  # for the error's list


def test_an_unknown_command_is_answered_with_every_command(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["replya", "x.log"])
    assert stopped.value.code == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert error.startswith("euchre-referee: error: argument COMMAND: invalid choice: 'replya'")
    for name in ("replay", "games", "run", "emulate", "send", "watch", "club"):
        assert repr(name) in error


@pytest.mark.parametrize("columns", ["44", "100"])
def test_help_is_wrapped_as_argparse_wraps_it_without_shutil(columns: str) -> None:
    """The parsers' help formatter measures the terminal itself: the same help
    text as argparse's own formatter at any width, and building the device's
    parser imports no shutil (8M instructions of its start)."""
    code = (
        "import sys\n"
        "from firmware import cli\n"
        "cli.build_parser('run').parse_args(['run', '--config', 'x'])\n"
        "print('shutil' in sys.modules)\n"
        "if sys.argv[1] == 'stock':\n"
        "    import argparse\n"
        "    cli.HelpFormatter = argparse.HelpFormatter\n"
        "parser = cli.build_parser(None)\n"
        "run = parser._subparsers._group_actions[0].choices['run']\n"
        "print(parser.format_help() + run.format_help())\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "COLUMNS": columns, "PYTHONPATH": str(root)}
    ours, stock = (  # -S: without this venv's .pth files, which import shutil themselves
        subprocess.run([sys.executable, "-S", "-c", code, which], capture_output=True,
                       text=True, env=env, check=True, cwd=root).stdout
        for which in ("ours", "stock")
    )
    assert ours.startswith("False\n") and stock.startswith("False\n")
    assert ours == stock
    assert max(map(len, ours.splitlines())) <= int(columns)


def test_quiet_replay_prints_only_the_bad_files(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples"
    good, bad = str(examples / "full-game.log"), str(examples / "bad.log")
    assert main(["replay", "--quiet", good]) == 0
    assert capsys.readouterr().out == ""
    assert main(["replay", "-q", good, bad, good]) == 1
    assert capsys.readouterr().out == f"{bad}:7: Ragnar sits out: Anna went alone\n"
    with pytest.raises(SystemExit) as info:
        main(["replay", "--quiet", "--json", good])
    assert info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
