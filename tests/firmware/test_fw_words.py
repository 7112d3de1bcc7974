"""The screen's words (issue 23): no log syntax, the stuck dealer told why."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.clock import FakeClock

from firmware.app import Referee
from firmware.buttons import BUTTONS
from firmware.config import Config
from firmware.journal import Store


def _referee(tmp_path: Path, layout: str = "seats") -> tuple[Referee, FakeClock]:
    clock = FakeClock()
    config = Config(state_dir=tmp_path, layout=layout)  # type: ignore[arg-type]
    return Referee(config, Store(tmp_path), renderer=lambda view: view, clock=clock), clock


@pytest.mark.parametrize("button", [b for b in BUTTONS if b not in ("N", "E", "S", "W", "OK")])
def test_no_log_syntax_on_the_screen_before_the_first_game(tmp_path: Path, button: str) -> None:
    """A button that starts nothing before the first deal says what to do in
    words, never a log line ("game dealer=SEAT")."""
    referee, _ = _referee(tmp_path)
    referee.press(button)
    view = referee.view()
    for text in (view.message or "", view.prompt, view.ok_hint):
        assert "=" not in text and "SEAT" not in text, text
    referee.store.close()


def test_the_stuck_dealer_is_told_to_name_a_suit(tmp_path: Path) -> None:
    """Seven passes, Anna deals: the screen asks her for a suit, and OK (a pass)
    is refused with the rule's own words."""
    referee, clock = _referee(tmp_path)
    for button in ["W"] + ["OK"] * 7:
        clock.advance(10)
        referee.press(button)
    assert referee.view().prompt == "Anna must name a suit"
    clock.advance(10)
    referee.press("OK")
    assert referee.message is not None
    assert "stick the dealer: Anna must name a suit" in referee.message
    referee.store.close()
