"""``euchre-referee games``: list the kept games and export one, from the state directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from euchre_core import replay
from firmware.app import Referee
from firmware.cli import main
from firmware.config import Config
from firmware.store import Store


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
