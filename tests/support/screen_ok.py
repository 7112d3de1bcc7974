"""Whether a frame of a step says what OK does now (SPEC: every screen says
what OK will do now): the check the walks of ``tests/firmware/test_fw_reach.py``
and ``test_fw_screen_words.py`` make of every frame they draw."""

from __future__ import annotations

from typing import Final

from firmware.buttons import Layout
from firmware.screens import Drawn
from firmware.view import View

SAID_KINDS: Final = ("table", "menu", "winner", "confirm", "help", "rules", "hands", "stats",
                     "notice", "result")
"""The layouts that say what OK does: a step of the flow's, and what is up
over the table: the pages, a notice and a hand's result (what any button
does)."""


def ok_unsaid(view: View, drawn: Drawn, layout: Layout) -> str | None:
    """Why a frame does not say what OK does now (None: it does, whole).

    Said: its :attr:`~firmware.view.View.ok_hint` (OK's words, or "OK does
    nothing ..."), as drawn (the names shortened alike), on its lines; or a
    row that is OK's (``OK Done``, the button's name in the box beside it);
    or when OK picks the choice under the cursor (the cursor layout; the seats
    layout's choices browsed with the arrows), that choice drawn; or the new
    game's confirmation's "OK: start" under the game it starts.  A frame with
    a cut text does not say it whole.  A message up over the step (a refusal,
    for a moment) is left out: the frame under it is checked."""
    if view.kind not in SAID_KINDS or view.message is not None:
        return None
    where = f"{view.kind} {(view.title or view.prompt)!r}"
    if drawn.cut:
        return f"{where}: cut {drawn.cut}"
    shown = drawn.view
    said = " ".join(drawn.texts)
    if shown.ok_hint and shown.ok_hint in said:
        return None
    drawn_rows = [c for c in shown.choices if c.label in drawn.texts]
    if layout == "seats" and any(c.key == "OK" for c in drawn_rows):
        return None
    under = shown.choices[min(shown.cursor, len(shown.choices) - 1)] if shown.choices else None
    if under in drawn_rows and (layout == "cursor"
                                or shown.ok_hint.startswith(f"OK: {under.label}")):
        return None  # (the seats layout's choices browsed: "OK: Ragnar bids", Ragnar shown)
    if view.kind == "confirm" and any(text.startswith("OK: start") for text in drawn.texts):
        return None
    return f"{where}: {shown.ok_hint!r} not said (drawn: {drawn.texts})"
