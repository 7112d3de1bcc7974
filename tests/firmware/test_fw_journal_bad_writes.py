"""A write that raises something other than SQLite's or the OS's errors (a
text that is not UTF-8: a lone surrogate in a line, a flow or a setting; a
line for a game that is not the newest) keeps nothing and leaves the store as
it was: the next writes succeed, the record of acknowledged lines agrees, and
a fresh Store (and the audit at open) finds exactly the acknowledged lines."""

from __future__ import annotations

import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.app_kit import ram_dir

from firmware.journal import (
    ACKS_NAME,
    JOURNAL_NAME,
    JournalError,
    JournalTextError,
    Store,
    read_acks,
)
from firmware.journal.audit import audit_journal

GOOD = st.text(max_size=12)  # hypothesis never draws surrogates here
SURROGATE = st.sampled_from(["\ud800", "\udfff", "\udcff"])  # \udcff: a byte surrogateescape'd


@st.composite
def bad_text(draw: st.DrawFn) -> str:
    """Good text with a lone surrogate somewhere in it."""
    text = draw(GOOD)
    at = draw(st.integers(0, len(text)))
    return text[:at] + draw(SURROGATE) + text[at:]


OPS = st.one_of(
    st.tuples(st.just("append"), GOOD, st.none() | GOOD),
    st.tuples(st.just("bad line"), bad_text(), st.none() | GOOD),
    st.tuples(st.just("bad flow"), GOOD, bad_text()),
    st.tuples(st.just("new game"), st.lists(GOOD, max_size=3)),
    st.tuples(st.just("bad game"), st.lists(GOOD, max_size=3), bad_text(), st.integers(0, 3)),
    st.tuples(st.just("flow"), GOOD, st.booleans()),
    st.tuples(st.just("bad flow only"), bad_text(), st.booleans()),
    st.tuples(st.just("setting"), GOOD),
    st.tuples(st.just("bad setting"), bad_text()),
    st.tuples(st.just("older game"), GOOD),
    st.tuples(st.just("reopen")),
)


@dataclass
class Kept:
    """What was acknowledged: each game's lines, the kept settings."""

    games: dict[int, list[str]] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)

    def total(self) -> int:
        return sum(len(lines) for lines in self.games.values())


def agrees(store: Store, kept: Kept) -> None:
    """The store shows exactly what was acknowledged; the record says as many lines."""
    assert [info.id for info in store.games()] == list(kept.games)
    for game_id, lines in kept.games.items():
        assert store.lines(game_id) == lines
    assert store.settings() == kept.settings
    record = read_acks(store.state_dir / ACKS_NAME)
    assert record is not None and record.problem is None and record.lines == kept.total()


def reopened(store: Store, kept: Kept) -> Store:
    """A fresh Store on the directory: nothing found wrong at open, nothing left out."""
    store.close()
    fresh = Store(store.state_dir)
    assert (fresh.damage, fresh.unconfirmed, fresh.record_damaged, fresh.moved_aside,
            fresh.unchecked, fresh.rolled_back) == (None, None, None, None, None, None)
    agrees(fresh, kept)
    return fresh


def refused_text(call: object, text: str) -> None:
    """``call`` is refused in one line naming ``text`` and why."""
    assert callable(call)
    with pytest.raises(JournalTextError) as refused:
        call()
    words = str(refused.value)
    assert "\n" not in words
    assert words.startswith(repr(text)) if len(text) <= 60 else words.startswith(repr(text)[:40])
    assert "is not UTF-8 text (surrogates not allowed, character " in words
    assert words.endswith("): not kept")


def apply(store: Store, kept: Kept, op: tuple) -> Store:  # type: ignore[type-arg]
    """Do ``op`` on ``store``, checking its answer; ``kept`` follows what was acknowledged."""
    newest = max(kept.games)
    match op:
        case ("append", line, flow):
            store.append(newest, line, flow)
            kept.games[newest].append(line)
        case ("bad line", line, flow):
            refused_text(lambda: store.append(newest, line, flow), line)
        case ("bad flow", line, flow):
            refused_text(lambda: store.append(newest, line, flow), flow)
        case ("new game", lines):
            kept.games[store.new_game(lines)] = list(lines)
        case ("bad game", lines, bad, at):
            lines = [*lines[:at], bad, *lines[at:]]
            refused_text(lambda: store.new_game(lines), bad)
        case ("flow", flow, durable):
            store.save_flow(newest, flow, durable=durable)
            assert store.flow(newest) == flow
        case ("bad flow only", flow, durable):
            before = store.flow(newest)
            refused_text(lambda: store.save_flow(newest, flow, durable=durable), flow)
            assert store.flow(newest) == before
        case ("setting", value):
            store.set_setting("players", value)
            kept.settings["players"] = value
        case ("bad setting", value):
            refused_text(lambda: store.set_setting("players", value), value)
        case ("older game", line):
            if len(kept.games) > 1:
                older = min(kept.games)
                with pytest.raises(JournalError, match=f"^game {older} is not the newest game"):
                    store.append(older, line)
        case ("reopen",):
            return reopened(store, kept)
    agrees(store, kept)
    return store


def audited(state_dir: Path, kept: Kept) -> None:
    """The audit at open, run on its own over the closed journal: nothing wrong."""
    audit = audit_journal(
        lambda: sqlite3.connect((state_dir / JOURNAL_NAME).resolve().as_uri() + "?mode=ro",
                                uri=True),
        state_dir / ACKS_NAME)
    assert (audit.damage, audit.unconfirmed, audit.record_damaged) == ([], None, None)
    assert audit.rows == audit.acknowledged == kept.total()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(GOOD, max_size=3), st.lists(OPS, max_size=25))
@example(first=[], ops=[("new game", []), ("older game", "")])  # the newest game has no line yet
def test_good_and_bad_writes_interleaved_keep_exactly_the_acknowledged(
        first: list[str], ops: list[tuple]) -> None:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory(dir=ram_dir()) as scratch:
        state_dir = Path(scratch)
        store = Store(state_dir)
        kept = Kept()
        try:
            kept.games[store.new_game(first)] = list(first)
            for op in ops:
                store = apply(store, kept, op)
            # The next good writes succeed, and a fresh Store reads them.
            store = apply(store, kept, ("append", "trick N", "{}"))
            store = apply(store, kept, ("new game", ["game dealer=W"]))
            store = reopened(store, kept)
        finally:
            store.close()
        audited(state_dir, kept)


def test_a_flow_not_utf8_leaves_no_line_behind(tmp_path: Path) -> None:
    """The case that broke the journal: the line was added (the store's tail
    moved) before the flow failed to encode; the transaction was rolled back
    but the tail was not, so every later line was refused ("the journal
    changed outside this referee") and a flow-only write recorded the phantom
    line as acknowledged: the next start found the journal damaged."""
    store = Store(tmp_path)
    game = store.new_game(["game dealer=N"])
    with pytest.raises(JournalTextError, match=r"^'\\ud800' is not UTF-8 text"):
        store.append(game, "trick N", flow="\ud800")
    store.save_flow(game, "{}")
    store.append(game, "trick E")
    store.close()
    fresh = Store(tmp_path)
    try:
        assert fresh.damage is None and fresh.unconfirmed is None
        assert fresh.lines(game) == ["game dealer=N", "trick E"]
    finally:
        fresh.close()
