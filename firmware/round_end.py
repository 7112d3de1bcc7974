"""A round's (or a game's) result accepted at the table by the other side.

When a club round ends (or, with ``[table] confirm_result = true``, a game
off a club night), the box shows the result for both sides and asks **the
side that lost it** (a level round: EW) to accept it with a press.  Why that
side: the box cannot know who tapped the last entry (anyone at the table may
tap), and the side the result goes against is the one with a reason to check
it -- as on a progressive night's paper tally, where the losers initial the
winners' card.  With the seats layout a seat button of that side accepts;
OK asks "dispute?", and OK again disputes.  With the cursor layout PREV/NEXT
move between "accept" and "dispute" and OK picks.  UNDO goes back into the
game as always (the table fixes its own slip; the result is then asked for
again when the round ends again).  A notice already on the screen (time
called, a tied round's extra hand) stays until a press, which then shows the
question.

The answer is a comment line in the game's journal (:func:`verdict_line`,
``# result accepted by EW`` or ``# result disputed by EW``): durable (the
journal's commit and flush) before the screen says it was taken, sent to
the director with the game's other lines, and ignored by the engine's
replay.  :func:`verdict_of` reads the verdict on the result as the lines
stand: the last such line after the last entry (a later entry or an undo
reopens the question).  A box killed while it asks asks again at its start
(:meth:`RoundEnd.check`), since the journal holds no verdict yet.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, NamedTuple

from euchre_core import SEATS, Game, Team

from .buttons import (
    CONFIRM_GUARD_S,
    NEXT,
    OK,
    PREV,
    SEAT_BUTTONS,
    UNDO,
    label,
    twice_quickly,
)
from .journal import JournalError

if TYPE_CHECKING:
    from .app import Referee

VERDICTS: Final = ("accepted", "disputed")
_VERDICT = re.compile(r"# result (accepted|disputed) by (NS|EW)\Z")

Finished = Callable[[int, Game], "tuple[str, Mapping[Team, int]] | None"]
"""``(game id, game)`` -> ``(title, score)`` (``("Round 3", ...)``, said
"Round 3 over") when that game is a finished
round (or game) whose result the table accepts, else None."""


def verdict_line(verdict: str, side: Team) -> str:
    """The journal line of a verdict (``# result accepted by EW``)."""
    if verdict not in VERDICTS:
        raise ValueError(f"verdict {verdict!r}: one of {', '.join(VERDICTS)}")
    return f"# result {verdict} by {side}"


class Verdict(NamedTuple):
    verdict: str
    """``"accepted"`` or ``"disputed"``."""
    side: Team
    line: int
    """Its index in the lines."""


def verdict_of(lines: Sequence[str]) -> Verdict | None:
    """The verdict on the result as ``lines`` (a game's journal lines) stand:
    the last verdict line after the last entry; None when there is none."""
    for index in range(len(lines) - 1, -1, -1):
        text = lines[index].strip()
        match = _VERDICT.match(text)
        if match:
            return Verdict(match[1], Team.from_str(match[2]), index)
        if text and not text.startswith("#"):
            return None
    return None


def accepting_side(score: Mapping[Team, int]) -> Team:
    """The side that accepts a result: the side behind (level: EW)."""
    return Team.NS if score[Team.NS] < score[Team.EW] else Team.EW


def score_words(score: Mapping[Team, int]) -> str:
    return f"NS {score[Team.NS]}  EW {score[Team.EW]}"


class _Asking(NamedTuple):
    game_id: int
    title: str
    score: Mapping[Team, int]
    side: Team


class RoundEnd:
    """Asks the other side to accept a finished round's result (see the
    module's docstring); ``finished`` says which games are such rounds."""

    def __init__(self, referee: Referee, finished: Finished) -> None:
        self.referee = referee
        self.finished = finished
        self.asking: _Asking | None = None
        self.cursor = 0
        """Cursor layout: 0 on "accept", 1 on "dispute"."""
        self.dispute_asked_at: float | None = None
        """Seats layout: when OK asked "dispute?" (OK again disputes)."""
        self._checked: tuple[int, int, bool] | None = None
        self._shown: tuple[str, tuple[str, ...]] | None = None
        """The question as last put on the screen."""

    def attach(self) -> RoundEnd:
        """Listen to the journal and the buttons, and ask now if the game in
        progress is a finished round with no verdict (a box killed while asking)."""
        self.referee.listeners.append(self._on_line)
        self.referee.press_hooks.append(self.press)
        self.check()
        return self

    def detach(self) -> None:
        for hooks, hook in ((self.referee.listeners, self._on_line),
                            (self.referee.press_hooks, self.press)):
            if hook in hooks:
                hooks.remove(hook)  # type: ignore[arg-type]

    def _on_line(self, line: str) -> None:
        self._checked = None
        self.check()

    def check(self) -> None:
        """Ask if the game in progress is a finished round without a verdict;
        stop asking when it is not (undone, answered, another game)."""
        referee = self.referee
        game_id, game = referee.game_id, referee.game
        found = self.finished(game_id, game)
        key = (game_id, len(game.entries), found is not None)
        if key == self._checked:
            return  # asked each second by a club box: the journal read only on a change
        self._checked = key
        if found is not None and verdict_of(referee.store.lines(game_id)) is None:
            title, score = found
            asking = _Asking(game_id, title, dict(score), accepting_side(score))
            if asking != self.asking:
                self.asking, self.cursor, self.dispute_asked_at = asking, 0, None
            if referee.notice is None or self._showing():
                self._show()  # another notice (the round's end, time called) first
        elif self.asking is not None:
            if self._showing():
                referee.notice = None
            self.asking = None

    def _seats(self, side: Team) -> str:
        return " or ".join(label(str(seat)) for seat in SEATS if seat.team is side)

    def _showing(self) -> bool:
        return self._shown is not None and self.referee.notice == self._shown

    def _show(self) -> None:
        asking = self.asking
        assert asking is not None
        side = asking.side
        lines: tuple[str, ...]
        if self.referee.config.layout == "cursor":
            choice = ("> accept  dispute" if self.cursor == 0 else "  accept > dispute")
            lines = (score_words(asking.score), f"{side}: do you accept?", choice,
                     f"{label(OK)}: {'accept' if self.cursor == 0 else 'dispute'}")
        elif self.dispute_asked_at is not None:
            lines = (score_words(asking.score), f"{label(OK)} again: {side} disputes",
                     f"{self._seats(side)}: accept")
        else:
            lines = (score_words(asking.score), f"{side}: do you accept?",
                     f"{self._seats(side)}: accept", f"{label(OK)}: dispute")
        self._shown = (f"{asking.title} over", lines)
        self.referee.notice = self._shown
        self.referee.page_at = 0

    def press(self, button: str) -> bool:
        """A press while asking: True when it was taken here."""
        asking = self.asking
        if asking is None:
            return False
        referee = self.referee
        if button == UNDO:  # the table fixes its slip; asked again when it ends again
            self.asking = None
            referee.notice = None
            self._checked = None
            return False
        if not self._showing():  # the press that dismisses another notice shows the question
            if referee.notice is not None and referee.page_at + 1 < referee.page_screens():
                referee.page_at += 1  # a long notice: its next screen first
            else:
                self._show()
            return True
        now = referee.clock()
        if referee.config.layout == "cursor":
            if button in (PREV, NEXT):
                self.cursor = 1 - self.cursor
            elif button == OK:
                self._decide(VERDICTS[self.cursor])
                return True
        elif button in SEAT_BUTTONS:
            seat = next(s for s in SEATS if str(s) == button)
            if seat.team is asking.side:
                self._decide("accepted")
                return True
            referee.say(f"{self._seats(asking.side)} ({asking.side}) accepts the result")
        elif button == OK:
            asked = self.dispute_asked_at
            if asked is not None and now - asked >= CONFIRM_GUARD_S:
                self._decide("disputed")
                return True
            if asked is not None:
                referee.say(twice_quickly("dispute"))
            self.dispute_asked_at = now
        else:
            referee.say(f"{self._seats(asking.side)}: accept the result; "
                        f"{label(OK)}: dispute it")
        self._show()
        return True

    def _decide(self, verdict: str) -> None:
        """Keep the verdict in the journal (durable before it is shown taken)."""
        asking = self.asking
        assert asking is not None
        referee = self.referee
        line = verdict_line(verdict, asking.side)
        try:
            referee.store.append(asking.game_id, line)
        except JournalError as error:
            referee.say(f"not kept, ask again: {error}")
            self._show()
            return
        for listener in list(referee.listeners):  # the club box sends it; we stop asking
            listener(line)
        self.asking = None
        referee.notice = ((f"{asking.title}: accepted", (
            score_words(asking.score), f"{asking.side} accepted: final."))
            if verdict == "accepted" else (f"{asking.title}: disputed", (
                score_words(asking.score), f"{asking.side} disputed it:",
                "the director decides.")))
        referee.page_at = 0


def house_round_end(referee: Referee) -> RoundEnd | None:
    """Off a club night, with ``[table] confirm_result = true``: a game's
    end is accepted the same way (attached), else None."""
    if not referee.config.confirm_result:
        return None

    def finished(game_id: int, game: Game) -> tuple[str, Mapping[Team, int]] | None:
        return ("Game", game.score) if game.winner is not None else None

    return RoundEnd(referee, finished).attach()
