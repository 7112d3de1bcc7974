"""The game log, version 1: read with line numbers, write the canonical form.

``replay(text)`` reads a log and returns the game it describes, or the game as
it stood before the first bad line together with that line's number and the
reason.  ``write_log(game)`` writes the canonical log of a game; reading it
back gives the same state and the same entries (preceded by ``rules`` and
``players`` entries when the game was constructed with non-standard ones).
"""

from __future__ import annotations

import binascii
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from .cards import Team
from .events import (
    Deal,
    Event,
    LogSyntaxError,
    NewGame,
    Play,
    Players,
    ScoreCheck,
    SetRules,
    Trick,
    Undo,
    WinnerCheck,
    canonical_deal,
    parse_tokens,
    split_line,
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


def _build_line_cache() -> dict[str, Event]:
    """Every fixed-form line (plays, passes, calls...) mapped to its event."""
    from .cards import CARD_BY_TEXT, SEATS, Suit

    cache: dict[str, Event] = {}
    seats = [str(seat) for seat in SEATS]
    words = [
        *(f"play {seat} {card}" for seat in seats for card in CARD_BY_TEXT),
        *(f"{kind} {seat}" for kind in ("pass", "order", "trick", "renege", "defend")
          for seat in seats),
        *(f"order {seat} alone" for seat in seats),
        *(f"{kind} {seat} {suit}{alone}" for kind in ("call", "make") for seat in seats
          for suit in "SHDC♠♥♦♣" for alone in ("", " alone")),
        *(f"discard {card}" for card in CARD_BY_TEXT),
        *(f"upcard {card}" for card in CARD_BY_TEXT),
        *(f"upcard {suit.value}" for suit in Suit),
        *(f"tricks {count}" for count in range(6)),
        *(f"score NS={ns} EW={ew}" for ns in range(25) for ew in range(25)),
        "winner NS", "winner EW",
        "undo",
    ]
    for line in words:
        cache[line] = parse_tokens(line.split())
    return cache


_LINE_CACHE: Final = _build_line_cache()
_IN_GAME: Final = Phase.IN_GAME

_Handler = Callable[[Game, Any, bool], "str | None"]

_FAST_LINES: Final[dict[str, tuple[Event, _Handler, type]]] = {
    line: (event, handler, type(event))
    for line, event in _LINE_CACHE.items()
    if type(event) is not Play  # plays: _PLAY_LINES, applied in runs
    and (handler := Game.handler_for(event) or (
        Game.verify_reason if isinstance(event, (ScoreCheck, WinnerCheck)) else None
    )) is not None
}
"""Fixed-form entry lines other than plays, and the Game handler each one goes to."""


def parse_line(text: str) -> Event | None:
    """The event on a stripped line, or None for a blank/comment line."""
    event = _LINE_CACHE.get(text)
    if event is not None:
        return event
    if not text:
        return None
    return parse_tokens(split_line(text))


_PLAY_LINES: Final[dict[str, Play]] = {
    line: event for line, event in _LINE_CACHE.items() if type(event) is Play
}
"""Canonical play lines, the bulk of a card-level log: applied in runs."""


def replay(text: str, game: Game | None = None) -> Replay:
    """Read a whole log and play it into ``game`` (a new one by default)."""
    game = game if game is not None else Game()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    number = 0
    for number, raw in enumerate(lines, start=1):  # up to the header line
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
    bad = _replay_lines(game, lines, number)
    if bad is not None:
        return Replay(game, bad, bad.line)
    return Replay(game, None, len(lines))


def _replay_lines(game: Game, lines: list[str], header: int) -> LogError | None:
    """Apply the lines after the header (line number ``header``)."""
    fast_get, play_get = _FAST_LINES.get, _PLAY_LINES.get  # bound once: the hot loop
    plays: list[Play] = []
    """Consecutive canonical play lines not applied yet: one Game.play_run call a run."""
    add_play = plays.append
    number = header
    for number, raw in enumerate(lines[header:], start=header + 1):
        play = play_get(raw)
        if play is not None:
            add_play(play)
            continue
        if plays:
            error = _replay_plays(game, plays, number - len(plays))
            if error is not None:
                return error
            plays.clear()
        # Fast path: a canonical fixed-form line (no checksum, no comment) in
        # a game under way; the handler is the same one Game.push would call.
        hit = fast_get(raw) or _canonical_deal(raw)
        if (
            hit is not None
            and game.phase is _IN_GAME
            and (game.pending_trick is None or hit[2] is not Trick)
        ):
            refused = hit[1](game, hit[0], True)
            if refused is not None:
                return LogError(number, refused)
            continue
        try:
            event = parse_line(strip_line(raw))
            if event is not None:
                apply_event(game, event)
        except (LogSyntaxError, IllegalEntry) as error:
            return LogError(number, str(error))
    return _replay_plays(game, plays, number + 1 - len(plays)) if plays else None


def _canonical_deal(raw: str) -> tuple[Deal, _Handler, type] | None:
    """A canonical deal line as a fast-path hit, like ``_FAST_LINES`` gives."""
    deal = canonical_deal(raw)
    return None if deal is None else (deal, Game._deal, Deal)


def _replay_plays(game: Game, plays: list[Play], number: int) -> LogError | None:
    """Apply a run of plays, the first on line ``number``, as Game.push would."""
    done = 0
    while done < len(plays):
        if game.phase is not _IN_GAME:  # no game yet, or it is over: push says so
            try:
                game.push(plays[done])
            except IllegalEntry as error:
                return LogError(number + done, str(error))
            done += 1
            continue
        applied, refused = game.play_run(plays[done:] if done else plays)
        if refused is not None:
            return LogError(number + done + applied, refused)
        done += applied
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

