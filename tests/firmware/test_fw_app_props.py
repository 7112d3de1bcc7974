"""Random button sequences, both layouts: the referee never raises, every frame
renders, and after every press the journal replays to exactly its game (or,
while a new game confirmed after a win waits for its first entry, to the
finished game, with the new game's line kept in its flow)."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.app_kit import FakeClock, press, ram_dir

from euchre_core import Rules, replay, write_log
from firmware.app import Referee
from firmware.config import CURSOR_PINS, DEFAULT_PINS, Config
from firmware.flow import FlowState
from firmware.journal import Store

# The journal commits with fsync; a RAM-backed directory keeps 1000s of presses fast.

SEATS_BUTTONS = [*DEFAULT_PINS, "HELP"]
CURSOR_BUTTONS = list(CURSOR_PINS)
RULES = st.sampled_from([
    Rules(),
    Rules(target=5, defend_alone=True, stick_the_dealer=False),
    Rules(canadian_loner=True, lone_lead="maker-left", win_by_two=True, target=5),
])
PROPS = settings(max_examples=30, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def play(layout: str, rules: Rules, buttons: list[str], weights_seed: int) -> None:
    with tempfile.TemporaryDirectory(dir=ram_dir()) as scratch:
        clock = FakeClock()
        config = Config(state_dir=Path(scratch), layout=layout, rules=rules)  # type: ignore[arg-type]
        referee = Referee(config, Store(Path(scratch)), clock=clock,
                          rng=random.Random(weights_seed))
        referee.refresh()
        for name in buttons:
            clock.advance(0.7)  # messages (2.5 s) and results (3 s) come and go
            referee.handle(press(name))
            referee.refresh()  # the real renderer (firmware.screens.render): every view draws
            result = replay(referee.store.journal_text(referee.game_id))
            assert result.error is None, f"after {name}: {result.error}"
            staged = FlowState.loads(referee.store.flow(referee.game_id)).staged
            if staged is None:
                assert write_log(result.game) == write_log(referee.game), f"after {name}"
                continue
            # A new game confirmed after a win: the journal holds the finished game
            # and its flow the new game's line, stored with its first real entry.
            assert result.game.winner is not None and referee.staged == staged, f"after {name}"
            setup = [entry.line() for entry in referee.game.entries[:referee.base_entries]]
            shown = replay("\n".join(["euchre-log 1", *setup, staged])).game
            assert write_log(shown) == write_log(referee.game), f"after {name}"
        referee.store.close()


def weighted(buttons: list[str], heavy: list[str]) -> st.SearchStrategy[list[str]]:
    """Sequences where the buttons that move a game on come up more often."""
    return st.lists(st.sampled_from([*buttons, *heavy * 3]), min_size=30, max_size=150)


@PROPS
@given(RULES, weighted(SEATS_BUTTONS, ["N", "E", "S", "W", "OK"]), st.integers(0, 9))
def test_random_seats_presses_keep_journal_and_game_equal(
    rules: Rules, buttons: list[str], seed: int
) -> None:
    play("seats", rules, buttons, seed)


@PROPS
@given(RULES, weighted(CURSOR_BUTTONS, ["OK", "NEXT"]), st.integers(0, 9))
def test_random_cursor_presses_keep_journal_and_game_equal(
    rules: Rules, buttons: list[str], seed: int
) -> None:
    play("cursor", rules, buttons, seed)
