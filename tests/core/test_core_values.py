"""The engine's written-out value classes (``euchre_core.value``): rules, a log's
error and the events are immutable, equal by their fields, hashable, pickled
and printed by them; a game and a replay's outcome are equal by their fields."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from euchre_core import Game, LogError, Rules, Seat, replay
from euchre_core.events import NewGame, Play, parse_event

rules = st.builds(
    Rules,
    target=st.integers(1, 99), win_by_two=st.booleans(), stick_the_dealer=st.booleans(),
    defend_alone=st.booleans(), lone_defender_euchre=st.integers(1, 20),
    defenders_sweep=st.integers(1, 20),
    lone_lead=st.sampled_from(["dealer-left", "maker-left"]), canadian_loner=st.booleans(),
    renege_penalty=st.integers(1, 20), renege_vs_loner=st.integers(1, 20),
)


@given(rules, rules)
def test_rules_are_values(one: Rules, two: Rules) -> None:
    assert (one == two) == (repr(one) == repr(two)) == (one.to_tokens() == two.to_tokens())
    assert one != two or hash(one) == hash(two)
    assert pickle.loads(pickle.dumps(one)) == one
    assert eval(repr(one), {"Rules": Rules}) == one  # noqa: S307  # the repr reads back
    assert Rules.from_tokens(one.to_tokens()) == one
    assert one.replace(target=two.target).target == two.target
    with pytest.raises(AttributeError, match="rules do not change"):
        one.target = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        one.replace(no_such_setting=1)


def test_a_log_error_and_events_are_values() -> None:
    error = LogError(3, "pass W is out of turn")
    assert error == LogError(3, "pass W is out of turn") != LogError(4, "pass W is out of turn")
    assert hash(error) == hash(LogError(3, "pass W is out of turn"))
    assert pickle.loads(pickle.dumps(error)) == error and str(error).startswith("line 3: ")
    assert repr(error) == "LogError(line=3, reason='pass W is out of turn')"
    with pytest.raises(AttributeError, match="log errors do not change"):
        error.line = 4  # type: ignore[misc]
    play = parse_event("play E QS")
    assert play == Play(Seat.E, play.card) and play != NewGame(Seat.E)  # type: ignore[union-attr]
    with pytest.raises(AttributeError, match="events do not change"):
        del play.seat  # type: ignore[union-attr]


def test_games_and_replays_are_equal_by_their_fields() -> None:
    text = "euchre-log 1\ngame dealer=N\n"
    assert replay(text) == replay(text) != replay(text + "deal\n")
    assert Game() == Game() != Game(Rules(target=5))
    with pytest.raises(TypeError):
        hash(Game())
