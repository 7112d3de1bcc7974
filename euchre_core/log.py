"""The game log, version 1: read with line numbers, write the canonical form.

``replay(text)`` reads a log and returns the game it describes, or the game as
it stood before the first bad line together with that line's number and the
reason.  ``write_log(game)`` writes the canonical log of a game; reading it
back gives the same state and the same entries (preceded by ``rules`` and
``players`` entries when the game was constructed with non-standard ones).
"""

from __future__ import annotations

from typing import Final

from .cards import Team
from .codes import (
    BLANK,
    CHECK,
    CODES,
    DEAL,
    ENTRY,
    EVENTS,
    KIND,
    OPEN,
    PLAY,
    PLAYS,
    parse_stripped,
    read_deal,
)
from .events import (
    Deal,
    Event,
    LogSyntaxError,
    NewGame,
    Players,
    ScoreCheck,
    SetRules,
    Trick,
    Undo,
    WinnerCheck,
)
from .game import DEFAULT_NAMES, Game, IllegalEntry, Phase
from .lines import strip_line, with_checksum
from .rules import Rules
from .value import Record, Value

HEADER: Final = "euchre-log 1"


class LogError(Value):
    """The first bad line of a log: its number (from 1) and why it is bad."""

    __slots__ = ("line", "reason")
    _what = "log errors"
    line: int
    reason: str

    def __init__(self, line: int, reason: str) -> None:
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "reason", reason)

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


class Replay(Record):
    """What reading a log gave: the game, and the first error if any."""

    __slots__ = ("game", "error", "lines")
    _fields = __slots__

    def __init__(self, game: Game, error: LogError | None, lines: int) -> None:
        self.game = game
        self.error = error
        self.lines = lines
        """Lines read, the bad one included."""

    @property
    def ok(self) -> bool:
        return self.error is None


def parse_line(text: str) -> Event | None:
    """The event on a stripped line, or None for a blank/comment line."""
    return parse_stripped(text)


def replay(text: str, game: Game | None = None) -> Replay:
    """Read a whole log and play it into ``game`` (a new one by default)."""
    game = game if game is not None else Game()
    size = len(text)
    pos = number = 0
    while pos < size:  # up to the header line
        end = text.find("\n", pos)
        end = size if end < 0 else end
        raw, pos = text[pos:end], end + 1
        number += 1
        if raw == HEADER:
            break
        try:
            stripped = strip_line(raw)
            if stripped:
                _check_header(stripped)
                break
        except LogSyntaxError as error:
            return Replay(game, LogError(number, str(error)), number)
    else:
        empty = f"empty log: the first line must be '{HEADER}'"
        return Replay(game, LogError(1, empty), number)
    read = _replay_body(game, text, pos, number + 1)
    if type(read) is LogError:
        return Replay(game, read, read.line)
    return Replay(game, None, read)  # type: ignore[arg-type]


PIECE: Final = 1 << 18
"""Characters of a long log's text split into lines at a time (256 KiB)."""


def _replay_body(game: Game, text: str, pos: int, number: int) -> LogError | int:
    """Apply the lines from offset ``pos`` (line ``number``) to the end, a piece
    of about :data:`PIECE` characters at a time (the lines of a piece are held
    at once); return the first error, or the number of the text's last line."""
    size = len(text)
    while pos < size:
        cut = text.find("\n", pos + PIECE) + 1 if size - pos > PIECE else 0
        piece = text[pos:cut] if cut else text[pos:]
        lines = piece.split("\n")
        if piece[-1:] == "\n":
            lines.pop()  # the empty string after the last newline
        bad = _replay_lines(game, lines, number)
        if bad is not None:
            return bad
        pos, number = cut or size, number + len(lines)
    return number - 1


def _replay_lines(game: Game, lines: list[str], number: int) -> LogError | None:
    """Apply ``lines``, the first on line ``number``; return the first error.

    Each line is looked up as a code (:mod:`euchre_core.codes`).  Whole hands go
    to :meth:`Game.replay_hands`; what it does not take goes a line at a time:
    runs of plays to :meth:`Game.play_codes`, other entries to
    :meth:`Game.offer`, check lines to :meth:`Game.verify_reason`, and undo,
    setup lines and any line in an unusual spelling or in error are parsed and
    applied by the same engine, which names the first bad line and the reason.
    """
    codes = list(map(CODES.__getitem__, lines))
    events, kinds = EVENTS, KIND
    whole_hands, offer = game.replay_hands, game.offer
    index, count = 0, len(codes)
    while index < count:
        index = whole_hands(lines, codes, index)
        if index == count:
            break
        code = codes[index]
        kind = kinds[code]
        refused = None
        if kind == PLAY:
            end = index + 1
            while end < count and codes[end] < PLAYS:
                end += 1
            applied, refused = game.play_codes(
                codes[index:end], list(map(events.__getitem__, codes[index:end]))  # type: ignore[arg-type]
            )
            if refused is None:
                index += applied
                continue
            index += applied
        elif kind == CHECK:
            refused = game.verify_reason(events[code])  # type: ignore[arg-type]
        elif kind == ENTRY or kind == OPEN:
            refused = offer(events[code])  # type: ignore[arg-type]
        elif kind == DEAL and read_deal(lines[index]) is not None:
            refused = offer(Deal.from_line(lines[index]))
        elif kind != BLANK:
            try:
                event = parse_line(strip_line(lines[index]))
                if event is not None:
                    apply_event(game, event)
            except (LogSyntaxError, IllegalEntry) as error:
                refused = str(error)
        if refused is not None:
            return LogError(number + index, refused)
        index += 1
    return None


def apply_event(game: Game, event: Event) -> None:
    """Apply one parsed event: an entry, an undo or a check (raises IllegalEntry)."""
    if isinstance(event, Undo):
        game.undo()
    elif isinstance(event, (ScoreCheck, WinnerCheck)):
        game.verify(event)
    else:
        game.push(event)  # type: ignore[arg-type]


def _check_header(text: str) -> None:
    tokens = text.split()
    if len(tokens) == 2 and tokens[0] == "euchre-log":
        if tokens[1] == "1":
            return
        raise LogSyntaxError(
            f"unsupported log version {tokens[1]!r} (this referee reads version 1)"
        )
    raise LogSyntaxError(f"not a game log: the first line must be '{HEADER}'")


def write_log(game: Game, *, checksums: bool = False) -> str:
    """The canonical log of ``game``: its entries (undos applied), with a
    ``score`` check line after each hand and ``winner`` at each game's end."""
    out: list[str] = [HEADER]
    shadow = Game(game._start[0], dict(game._start[1]))
    if shadow.rules != Rules():
        out.append(SetRules(shadow.rules).line())
    if shadow.names != DEFAULT_NAMES:
        out.append(Players(tuple(shadow.names.items())).line())
    owed = False  # a score line is owed after the hand that just ended
    for entry in game.entries:
        if owed and not (type(entry) is Trick and shadow.pending_trick is not None):
            out.extend(_check_lines(shadow))
            owed = False
        results, game_number = len(shadow.results), shadow.game_number
        shadow.push(entry)
        if not isinstance(entry, NewGame) and (
            len(shadow.results) != results or shadow.game_number != game_number
        ):
            owed = True
        out.append(entry.line())
    if owed:
        out.extend(_check_lines(shadow))
    text = out if not checksums else [with_checksum(line) for line in out]
    return "\n".join(text) + "\n"


def _check_lines(game: Game) -> list[str]:
    lines = [ScoreCheck(game.score[Team.NS], game.score[Team.EW]).line()]
    if game.phase is Phase.GAME_OVER and game.winner is not None:
        lines.append(WinnerCheck(game.winner).line())
    return lines

