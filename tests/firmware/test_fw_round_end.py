"""A game's end accepted or disputed at the table (firmware/round_end.py), in
both layouts, on a real Referee and journal: the cursor layout's accept /
dispute, the seats layout's OK twice (never a double tap), a journal that
refuses the verdict's write (a full card: nothing shown taken; asked again)."""

from __future__ import annotations

from pathlib import Path

from support.journal_kit import fill, small_card

from euchre_core import Rules, parse_event
from firmware.app import Referee
from firmware.buttons import CONFIRM_GUARD_S
from firmware.config import Config
from firmware.journal import Store
from firmware.round_end import house_round_end, verdict_of

FULL = "the card is full: nothing new can be kept"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def finished_game(tmp_path: Path, layout: str, clock: Clock) -> tuple[Referee, Store]:
    store = Store(tmp_path)
    config = Config(state_dir=tmp_path, confirm_result=True, layout=layout,  # type: ignore[arg-type]
                    rules=Rules().replace(target=2))
    referee = Referee(config, store, renderer=lambda view: view, clock=clock)
    house_round_end(referee)
    for line in ["game dealer=E", "make E S alone", "tricks 5"]:  # EW +4: NS accepts
        assert referee.enter(parse_event(line)) is None
    return referee, store


def test_the_cursor_layout_moves_to_dispute_and_picks_it(tmp_path: Path) -> None:
    clock = Clock()
    referee, store = finished_game(tmp_path, "cursor", clock)
    try:
        assert referee.notice == ("Game over", ("NS 0  EW 4", "NS: do you accept?",
                                                "> accept  dispute", "OK: accept"))
        referee.press("NEXT")
        assert referee.notice is not None and referee.notice[1][2:] == (
            "  accept > dispute", "OK: dispute")
        referee.press("OK")
        assert verdict_of(store.lines(referee.game_id)) is not None
        assert store.lines(referee.game_id)[-1] == "# result disputed by NS"
        assert referee.notice == ("Game: disputed", (
            "NS 0  EW 4", "NS disputed it:", "the director decides."))
    finally:
        store.close()


def test_the_seats_layout_disputes_on_a_second_ok_never_a_double_tap(tmp_path: Path) -> None:
    clock = Clock()
    referee, store = finished_game(tmp_path, "seats", clock)
    try:
        referee.press("OK")
        assert referee.notice is not None and referee.notice[1][1] == "OK again: NS disputes"
        clock.now += CONFIRM_GUARD_S / 2
        referee.press("OK")  # a double tap: asks again, keeps nothing
        assert referee.message == "OK twice quickly: read the screen, then OK to dispute"
        assert verdict_of(store.lines(referee.game_id)) is None
        clock.now += CONFIRM_GUARD_S
        referee.press("OK")
        assert store.lines(referee.game_id)[-1] == "# result disputed by NS"
    finally:
        store.close()


def test_a_verdict_the_journal_refuses_is_not_shown_taken(tmp_path: Path) -> None:
    with small_card(tmp_path) as card:  # a real full card (a small tmpfs; root only)
        clock = Clock()
        state = card / "state"
        state.mkdir()
        referee, store = finished_game(state, "seats", clock)
        try:
            before = store.lines(referee.game_id)
            filler = fill(card)
            referee.press("N")
            assert referee.message == f"not kept, ask again: {FULL}"
            assert referee.notice is not None and referee.notice[0] == "Game over"
            assert store.lines(referee.game_id) == before  # nothing acknowledged
            filler.unlink()  # room again: the same side accepts, kept this time
            referee.press("S")
            assert referee.notice is not None and referee.notice[0] == "Game: accepted"
            assert store.lines(referee.game_id) == [*before, "# result accepted by NS"]
            game_id = referee.game_id
        finally:
            store.close()
        again = Store(state, readonly=True)  # what the card holds: exactly what was shown
        try:
            assert again.lines(game_id) == [*before, "# result accepted by NS"]
        finally:
            again.close()
