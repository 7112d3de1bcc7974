"""Hand-built views, one per layout and case: test data for the screens'
golden images (``tests/firmware/golden/views/``), drawn before the app fills
every field.  The real screens come from ``scripts/render_screens.py``'s
scenes (``tests/firmware/golden/``); both are redrawn by its ``--golden``.
"""

from __future__ import annotations

from typing import Final

from firmware.view import Choice, View

_PLAY: Final = {
    "score_ns": 7, "score_ew": 5, "hand": 3, "dealer": "Sigríður", "leader": "Anna",
    "trump": "H", "maker": "Sigríður", "alone": True, "tricks_ns": 1, "tricks_ew": 2,
    "prompt": "Trick 4: who won?", "ok_hint": "OK: claim the rest",
}

HAND_BUILT: Final[dict[str, View]] = {
    "table_welcome": View(
        kind="table", prompt="New game: who deals first?",
        ok_hint="OK: a random dealer; hold OK: help",
    ),
    "table_bidding": View(
        kind="table", score_ns=3, score_ew=4, hand=5, dealer="Ragnar", leader="Sigríður",
        upcard="H", maker="Anna", alone=True, prompt="Which trump?",
        ok_hint="OK: Anna passes", bidding="Round 1 · ♥ up",
    ),
    "table_round_2": View(
        kind="table", score_ns=3, score_ew=4, hand=5, dealer="Ragnar", leader="Sigríður",
        upcard="H", prompt="Ragnar to bid", ok_hint="OK: Ragnar passes",
        bidding="Round 2 · not ♥ · 3 passed",
    ),
    "table_last_hand": View(
        kind="table", score_ns=3, score_ew=6, hand=6, dealer="Anna", leader="Þórhildur",
        prompt="Who made trump?", ok_hint="OK: Þórhildur passes", bidding="Round 1",
        last_hand="Last hand: Anna euchred, EW +2",
    ),
    "table_alone": View(kind="table", flags=("serial",), **_PLAY),  # type: ignore[arg-type]
    "table_lone_defender": View(
        kind="table", score_ns=8, score_ew=8, target=11, hand=12, dealer="Ragnar",
        leader="Anna", trump="D", maker="Anna", alone=True, lone_defender="Þórhildur",
        tricks_ns=0, tricks_ew=1, prompt="Trick 2: who won?", ok_hint="OK: claim the rest",
        house_rules=True,
    ),
    "table_long_names": View(
        kind="table", score_ns=9, score_ew=10, target=11, hand=12,
        dealer="Maximiliánus Ø", leader="Þórhildur-Björk", trump="C",
        maker="Maximiliánus Ø", tricks_ns=0, tricks_ew=3,
        prompt="Trick 4: who won? (makers have 0, they need 3 to score)",
    ),
    "table_cursor": View(
        kind="table", score_ns=4, score_ew=6, hand=7, dealer="Anna", leader="Ragnar",
        trump="S", maker="Anna", tricks_ns=2, tricks_ew=1, prompt="Trick 4: who won?",
        choices=(Choice("Ragnar won", "N"), Choice("Sigríður won", "E"),
                 Choice("Anna won", "S"), Choice("Þórhildur won", "W")),
        cursor=1,
    ),
    "menu_scrolled": View(
        kind="menu", title="Who made trump?",
        choices=(
            Choice("Ragnar", "N"), Choice("Sigríður", "E"), Choice("Anna", "S"),
            Choice("Þórhildur", "W"), Choice("Hearts", "HEARTS"), Choice("Go alone", "ALONE"),
            Choice("Undo last entry", "UNDO"),
        ),
        cursor=5,
    ),
    "menu_claim": View(
        kind="menu", title="Makers took?", score_ns=7, score_ew=5, hand=3, trump="H",
        choices=(Choice("Makers took 3", "N"), Choice("Makers took 4", "E"),
                 Choice("Makers took 5", "S")),
        cursor=0,
    ),
    "result": View(
        kind="result", title="Hand 4", score_ns=2, score_ew=7,
        lines=("Sigríður alone", "euchred: 2 tricks", "EW +2"),
    ),
    "winner": View(
        kind="winner", title="NS win 10-7", score_ns=10, score_ew=7,
        lines=("Ragnar & Anna", "New game: hold OK"),
    ),
    "help": View(
        kind="help", title="Buttons",
        lines=("N E S W: seat / trick", "♠ ♥ ♦ ♣: trump suit", "ALONE: maker alone",
               "UNDO: step back", "OK: confirm, next"),
    ),
    "notice": View(
        kind="notice", title="Journal set aside",
        lines=("The game file was damaged after a power cut.",
               "Kept as game-3.bad; resumed from the last good entry."),
    ),
    "rules": View(
        kind="rules", title="House rules",
        lines=("Game to 11, win by two", "Stick the dealer: on", "Defend alone: on (4 points)",
               "Lone leader: left of the maker"),
    ),
    "hands_page_2": View(
        kind="hands", title="Hands so far", cursor=1,
        lines=tuple(f"{n}: {who} made it, NS +1" for n, who in enumerate(
            ("Ragnar", "Anna", "Sigríður", "Þórhildur", "Ragnar", "Anna", "Anna"), start=1)),
    ),
    "message_error": View(
        kind="table", **{**_PLAY, "maker": "Anna"},  # type: ignore[arg-type]
        message="Ragnar sits out: Anna went alone",
    ),
    "message_info": View(
        kind="table", **{**_PLAY, "alone": False},  # type: ignore[arg-type]
        message="Saved. Undo steps back one entry.", message_is_error=False,
    ),
    "message_long": View(
        kind="table", **_PLAY,  # type: ignore[arg-type]
        message="ALONE goes alone when you make trump; now, in the tricks, it reports a "
                "renege: tap ALONE, then the seat that reneged",
    ),
}
"""One view per layout and case, for the screens' golden images."""
