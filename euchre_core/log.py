"""The game log, version 1: read with line numbers, write the canonical form.

``replay(text)`` reads a log and returns the game it describes, or the game as
it stood before the first bad line together with that line's number and the
reason.  ``write_log(game)`` writes the canonical log of a game; reading it
back gives the same state and the same entries (preceded by ``rules`` and
``players`` entries when the game was constructed with non-standard ones).
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass
from typing import Final

from .cards import Team
from .codes import (
    ALONE_OF,
    BLANK,
    CHECK,
    CODES,
    DEAL,
    ENTRY,
    EVENTS,
    KIND,
    OPEN,
    PLAY,
    parse_stripped,
    read_deal,
    read_plays,
)
from .events import (
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
from .rules import Rules

HEADER: Final = "euchre-log 1"


@dataclass(frozen=True, slots=True)
class LogError:
    """The first bad line of a log: its number (from 1) and why it is bad."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass(slots=True)
class Replay:
    """What reading a log gave: the game, and the first error if any."""

    game: Game
    error: LogError | None
    lines: int
    """Lines read, the bad one included."""

    @property
    def ok(self) -> bool:
        return self.error is None


def checksum(text: str) -> str:
    """CRC-16/CCITT-FALSE of ``text``'s UTF-8 bytes, as four upper-case hex digits."""
    return f"{binascii.crc_hqx(text.encode('utf-8'), 0xFFFF):04X}"


def with_checksum(line: str) -> str:
    """``line`` followed by ``*XXXX``."""
    return f"{line}*{checksum(line)}"


_HEX: Final = frozenset("0123456789abcdefABCDEF")


def strip_line(raw: str) -> str:
    """A raw line without its checksum (verified) and comment, trimmed.

    Raises LogSyntaxError for a checksum that does not match.
    """
    text = raw.rstrip("\r\n")
    stripped = text.rstrip()
    if len(stripped) >= 5 and stripped[-5] == "*" and _HEX.issuperset(stripped[-4:]):
        body = stripped[:-5]
        expected = checksum(body)
        if stripped[-4:].upper() != expected:
            raise LogSyntaxError(
                f"checksum mismatch: the line says *{stripped[-4:]}, its text gives *{expected}"
            )
        text = body
    if "#" in text:
        text = _strip_comment(text)
    return text.strip()


def _strip_comment(text: str) -> str:
    if '"' not in text:
        return text.partition("#")[0]
    in_quotes = False
    escaped = False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\" and in_quotes:
            escaped = True
        elif char == '"':
            in_quotes = not in_quotes
        elif char == "#" and not in_quotes:
            return text[:index]
    return text


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
    bad = _replay_body(game, text, pos, number + 1)
    if bad is not None:
        return Replay(game, bad, bad.line)
    return Replay(game, None, text.count("\n") + (not text.endswith("\n")))


def _replay_body(game: Game, text: str, pos: int, number: int) -> LogError | None:
    """Apply the lines from offset ``pos`` (line ``number``) to the end.

    The text is cut at its blocks of canonical play lines.  The lines between
    blocks are looked up as codes (:mod:`euchre_core.codes`); a block is read
    whole by :func:`~euchre_core.codes.read_plays`.  A canonical deal line, the
    bidding after it and the block of five tricks that follows go to
    :meth:`Game.play_hand`, a hand by trick winners to
    :meth:`Game.play_hand_by_winners`; other entries to :meth:`Game.offer` one at a
    time and blocks of plays to :meth:`Game.play_codes`.  Whatever those do not
    take, and undo, setup lines and any line in an unusual spelling or in error,
    is parsed and applied line by line by the same engine, which names the first
    bad line and the reason.
    """
    size = len(text)
    find, match = text.find, _PLAY_BLOCK.match
    while pos < size:
        found = find("\nplay ", pos - 1)
        cut = size if found < 0 else found + 1
        if cut > pos:
            lines = text[pos:cut].split("\n")
            if text[cut - 1] == "\n":
                lines.pop()  # the empty string after the chunk's last newline
            done = _replay_lines(game, lines, number, text, cut)
            if type(done) is LogError:
                return done
            if type(done) is int:  # a whole hand, its plays included
                number, pos = done, cut + 10 * (done - number - len(lines))
                continue
            number += len(lines)
        if cut == size:
            return None
        block = match(text, cut)
        if block is None:  # a play line in another spelling: one line on its own
            end = find("\n", cut)
            end = size if end < 0 else end + 1
            lines = text[cut:end].split("\n")[:1]
            error = _replay_lines(game, lines, number, text, size)
            if type(error) is LogError:
                return error
            pos, number = end, number + 1
            continue
        count = (block.end() - cut + 1) // 10
        plays = read_plays(text, cut, count)
        assert plays is not None  # the block matched
        codes = list(plays)
        events = list(map(EVENTS.__getitem__, codes))
        done = 0
        while done < count:  # the plays after a hand's last trick are the next hand's
            applied, refused = game.play_codes(codes[done:], events[done:])  # type: ignore[arg-type]
            if refused is not None:
                return LogError(number + done + applied, refused)
            done += applied
        pos, number = block.end(), number + count
    return None


_PLAY_BLOCK: Final = re.compile("(?:play [NESW] [9TJQKA][SHDC](?:\n|$))+")
"""A block of canonical play lines (the last one may end the text)."""


def _replay_lines(
    game: Game, lines: list[str], number: int, text: str, cut: int
) -> LogError | int | None:
    """Apply ``lines``, the first on line ``number``: a chunk of the text that
    ends at offset ``cut``, where a block of play lines may start.

    Returns the first error, or the line number after the hand when the chunk
    ends with a hand's deal and bidding that :meth:`Game.play_hand` played out
    with the block after it, or None.
    """
    codes = list(map(CODES.__getitem__, lines))
    kinds = bytes(map(KIND.__getitem__, codes))
    events, offer, verify = EVENTS, game.offer, game.verify_reason
    index, count = 0, len(codes)
    while index < count:
        kind = kinds[index]
        refused = None
        if kind == CHECK:
            refused = verify(events[codes[index]])  # type: ignore[arg-type]
        elif kind == OPEN:
            end = game.play_hand_by_winners(codes, index)
            if end:
                index = end
                continue
            refused = offer(events[codes[index]])  # type: ignore[arg-type]
        elif kind == ENTRY or kind == PLAY:
            refused = offer(events[codes[index]])  # type: ignore[arg-type]
        elif kind == DEAL and (deal := read_deal(lines[index])) is not None:
            if 2 < count - index < 12 and cut < len(text):  # the bidding, then a block of plays
                tricks = 15 if ALONE_OF[codes[-1]] or ALONE_OF[codes[-2]] else 20
                plays = read_plays(text, cut, tricks)
                if plays is not None and game.play_hand(codes, index, *deal, plays):
                    return number + count + tricks
            refused = offer(deal[0])
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

