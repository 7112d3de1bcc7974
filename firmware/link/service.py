"""The referee's side of the serial link (docs/serial-protocol.md).

:class:`RefereeProtocol` turns request lines into answers; it runs on the
link's reader thread and never touches the game itself: everything that reads
or changes the referee is posted to the main loop's queue as a callable and
waited for, so the game keeps one owner and the buttons and the screen are
never held up by the port.  Checking a replayed log is pure computation on a
fresh :class:`euchre_core.Game`, done on the reader thread.

:class:`SerialService` ties the protocol to a :class:`drivers.serialport.SerialLink`
and to the referee's journal listeners (the live feed).
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar

from drivers.pseudoterminal import PtyEndpoint, point_link
from drivers.serialport import Endpoint, LineProtocol, SerialLink, Transport, UrlEndpoint
from euchre_core import (
    SEATS,
    IllegalEntry,
    LogSyntaxError,
    Phase,
    Replay,
    Rules,
    Team,
    replay,
)
from euchre_core.events import Players, ScoreCheck, SetRules, Undo, WinnerCheck, parse_event
from euchre_core.lines import strip_line
from euchre_core.log import HEADER

from ..app import Referee
from ..fonts import screen_name_problem
from ..journal import JournalError, games_of
from ..logcheck import LogCheck
from ..stats import BoxStats, kept_logs, stats_json_lines, stats_lines
from ..summary import summary_json, summary_text
from .protocol import (
    CANCEL,
    DEFAULT_BAUDRATE,
    MAX_LINE,
    MAX_REPLAY_LINES,
    PROTOCOL_VERSION,
    REPLAY_IDLE_S,
    WORKING,
    WORKING_EVERY_S,
    encode,
    frame,
    is_number,
    not_utf8_reason,
    split_tag,
    tagged,
    too_long_reason,
)

__all__ = [
    "Busy",
    "RefereeProtocol",
    "SerialService",
    "status_of",
]

MAIN_LOOP_TIMEOUT_S: Final = 10.0
"""How long a request waits for the main loop before it is answered ``error busy``."""
ENTER_ANSWERS_KEPT: Final = 64
"""Tagged ``enter`` answers ``status json`` tells again (``enter_answers``)."""
READ_SLICE_S: Final = 0.02
"""The longest a load's reading of the kept games holds the main loop at a time."""
REPLAY_SOURCE: Final = "-"
"""The ``file`` of a log replayed over the link (the laptop puts its path there)."""

T = TypeVar("T")
MainCall = Callable[[Callable[[Referee], T]], T]
"""Runs a function on the main loop with the referee and returns its result."""


class Busy(RuntimeError):
    """The main loop did not take a request in time (nothing was done)."""


HELP: Final = (
    f"euchre-referee serial protocol {PROTOCOL_VERSION}: one request a line, one answer each",
    "help                     this list",
    "status [json]            the live game: score, hand, dealer, leader, call, tricks, next",
    "enter EVENT              one table event, as the buttons enter it (enter trick N, enter undo)",
    "watch on|off             the live feed: each entry as it is made, sent as 'event LINE'",
    "replay [load] [N]        check a log: send it, then '.' (or exactly N lines);"
    " load: make it the current game",
    "@TAG REQUEST             any request: its answer starts with '@TAG ' (1-16 letters/digits)",
    "export [ID]              the current game (or stored game ID) as a clean log",
    "games                    the stored games",
    "stats [json]             each player's statistics over the stored games (replayed)",
    "players [N=NAME ...]     player names for the next game (no names: show them)",
    "rules [KEY=VALUE ...]    house rules for the next game ('rules standard'; none: show them)",
    "sync TOKEN               answers 'ok sync TOKEN' (programs skip stale output up to it)",
    f"lines: UTF-8, at most {MAX_LINE} bytes, end with CR, LF or CR LF;"
    " a '*XXXX' checksum at the end is checked",
    "answers: 'ok ...', 'error ...', or 'ok begin N' + N lines + 'ok end';"
    " every line ends with *XXXX",
)


# --- what the status says ----------------------------------------------------------


def status_of(referee: Referee) -> dict[str, Any]:
    """The live game as a JSON-ready object (call on the main loop)."""
    game = referee.game
    hand = game.hand
    in_game = game.phase is Phase.IN_GAME
    made = in_game and hand.maker is not None
    return {
        "game_id": referee.game_id,
        "phase": game.phase.value,
        "score": {"NS": game.score[Team.NS], "EW": game.score[Team.EW]},
        "target": game.rules.target,
        "hands_played": game.hands_played,
        "hand": hand.number if in_game else None,
        "dealer": str(game.dealer) if game.dealer is not None else None,
        "leader": str(game.leader) if game.leader is not None else None,
        "maker": str(hand.maker) if made else None,
        "trump": str(hand.trump) if made and hand.trump is not None else None,
        "alone": bool(made and hand.alone),
        "upcard": str(hand.upcard_suit) if in_game and hand.upcard_suit is not None else None,
        "tricks": [str(seat) for seat in hand.tricks] if in_game else [],
        "tricks_ns": hand.tricks_of(Team.NS) if in_game else 0,
        "tricks_ew": hand.tricks_of(Team.EW) if in_game else 0,
        "trick": [f"{play.seat} {play.card}" for play in hand.trick] if in_game else [],
        "expected": game.expected,
        "expected_kind": game.expected_kind,
        "winner": str(game.winner) if game.winner is not None else None,
        "names": {str(seat): game.name(seat) for seat in SEATS},
        **_staged_of(referee),
        **_notices_of(referee),
    }


def _staged_of(referee: Referee) -> dict[str, Any]:
    """``staged``: the new game confirmed after a win and not stored yet (the
    live game then, which the fields above describe; it is stored as a game
    of its own with its first real entry, and till then ``game_id`` is the
    finished game's, which ``export`` gives and ``enter undo`` goes back to);
    left out when there is none."""
    if referee.staged is None:
        return {}
    game = referee.game
    return {"staged": {
        "line": referee.staged,
        "dealer": str(game.dealer) if game.dealer is not None else None,
        "names": {str(seat): game.name(seat) for seat in SEATS},
        "finished_game_id": referee.game_id,
    }}


def _notices_of(referee: Referee) -> dict[str, list[str]]:
    """``notices``: what the table should know about the journal (moved aside,
    damaged, a game not resumed, writes failing); left out when nothing."""
    notices = referee.notices()
    return {"notices": notices} if notices else {}


def _status_lines(status: dict[str, Any]) -> list[str]:
    names = status["names"]

    def seat(value: str | None) -> str:
        return "-" if value is None else f"{value} {names[value]}"

    score = status["score"]
    tricks = " ".join(status["tricks"]) or "-"
    return [
        f"game={status['game_id']}",
        f"phase={status['phase']}",
        f"score=NS {score['NS']} EW {score['EW']}",
        f"target={status['target']}",
        f"hands_played={status['hands_played']}",
        f"hand={status['hand'] if status['hand'] is not None else '-'}",
        f"dealer={seat(status['dealer'])}",
        f"leader={seat(status['leader'])}",
        f"maker={seat(status['maker'])}",
        f"trump={status['trump'] or '-'}",
        f"alone={'yes' if status['alone'] else 'no'}",
        f"tricks={tricks} (NS {status['tricks_ns']} EW {status['tricks_ew']})",
        f"trick={', '.join(status['trick']) or '-'}",
        f"expected={status['expected_kind']}: {status['expected']}",
        f"winner={status['winner'] or '-'}",
        "players=" + " ".join(f"{seat}={name}" for seat, name in names.items()),
        *_staged_lines(status),
        *(f"notice={notice}" for notice in status.get("notices", [])),
    ]


def _staged_lines(status: dict[str, Any]) -> list[str]:
    """The ``staged=`` line: a new game confirmed after a win, not stored yet."""
    staged = status.get("staged")
    if staged is None:
        return []
    dealer = staged["dealer"]
    players = " ".join(f"{seat}={name}" for seat, name in staged["names"].items())
    finished = staged["finished_game_id"]
    return [f"staged=a new game, {dealer} {staged['names'][dealer]} deals, {players}: "
            f"stored with its first entry; till then game {finished} is the finished game "
            "(export), and enter undo goes back to it"]


# --- replay input ------------------------------------------------------------------


class _ReplayInput:
    """A log arriving after ``replay``: checked as it comes (:class:`LogCheck`
    keeps only the lines not yet checked, never the whole text)."""

    def __init__(self, load: bool, count: int | None, tag: str = "") -> None:
        self.load = load
        self.count = count
        """Lines announced (``replay 97``), or None: the log ends at '.' / 'replay end'."""
        self.tag = tag
        """The request's tag, for the verdict."""
        self.last_line_at = time.monotonic()
        self.log = LogCheck(max_lines=MAX_REPLAY_LINES)

    @property
    def received(self) -> int:
        return self.log.received

    def add(self, text: str | None, problem: str | None = None) -> None:
        self.last_line_at = time.monotonic()
        self.log.add(text, problem)

    def add_bytes(self, raw: bytes) -> None:
        self.last_line_at = time.monotonic()
        self.log.add_bytes(raw)

    @property
    def complete(self) -> bool:
        return self.count is not None and self.received >= self.count

    def check(self) -> Replay:
        """The verdict: euchre_core's replay of the lines before any unreadable one."""
        return self.log.verdict()


def _is_end(raw: bytes) -> bool:
    """``.`` or ``replay end`` (a checksum and spaces allowed): the end of a log."""
    if len(raw) > 40:
        return False
    try:
        text = strip_line(raw.decode("utf-8"))
    except (UnicodeDecodeError, LogSyntaxError):
        return False
    return text == "." or text.split() == ["replay", "end"]


def _edited(text: str) -> str:
    """``text`` with backspaces (BS, DEL) applied, as a person typing meant it."""
    if "\b" not in text and "\x7f" not in text:
        return text
    out: list[str] = []
    for char in text:
        if char in "\b\x7f":
            if out:
                out.pop()
        else:
            out.append(char)
    return "".join(out)


class _Working:
    """Progress lines for a request that takes long: ``@TAG working TEXT``
    every ``every`` seconds, from a thread of its own (so a long step, such as
    one big game stored or replayed, is covered too), until :meth:`stop`.
    The answer is sent after :meth:`stop` has returned, so no progress line
    ever follows it."""

    def __init__(self, send: Callable[[str], None], every: float, text: str) -> None:
        self._send = send
        self.every = every
        self.text = text
        """What the next progress line says (``say``)."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="serial-working", daemon=True)

    def __enter__(self) -> _Working:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def say(self, text: str) -> None:
        self.text = text

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._send(self.text)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()


# --- the protocol ------------------------------------------------------------------


class _NoTransport:
    def write(self, data: bytes) -> None:
        pass


class RefereeProtocol(LineProtocol):
    """Requests in, answers out (see docs/serial-protocol.md).

    ``call(fn)`` runs ``fn(referee)`` on the main loop and returns what it
    returns (tests pass ``lambda fn: fn(referee)``).  Every answer is handed to
    the transport in one ``write``, so nothing else is sent in its middle.
    """

    def __init__(self, call: MainCall[Any], *, working_every: float = WORKING_EVERY_S) -> None:
        self.call = call
        self.working_every = working_every
        """Seconds between two progress lines of a request that takes long."""
        self.working_sent = 0
        """Progress lines sent (``working TEXT``)."""
        self.enter_answers: dict[str, str] = {}
        """The answers to the last :data:`ENTER_ANSWERS_KEPT` tagged ``enter``
        requests, by tag, oldest first (reader thread)."""
        self.transport: Transport = _NoTransport()
        self.watching = False
        self._replay: _ReplayInput | None = None
        self._tag = ""
        """The tag of the request being answered (reader thread)."""
        self._commands: dict[str, Callable[[str], None]] = {
            "help": self._help,
            "status": self._status,
            "enter": self._enter,
            "watch": self._watch,
            "replay": self._replay_begin,
            "export": self._export,
            "games": self._games,
            "stats": self._stats,
            "players": self._players,
            "rules": self._rules,
            "sync": self._sync,
        }

    # --- output ------------------------------------------------------------------

    def send(self, lines: list[str]) -> None:
        """Lines to the peer, each with its checksum, in one write."""
        self.transport.write(encode(lines))

    def ok(self, text: str = "") -> None:
        self.send([tagged(self._tag, f"ok {text}" if text else "ok")])

    def error(self, text: str) -> None:
        self.send([tagged(self._tag, f"error {text}")])

    def framed(self, lines: list[str], about: str = "") -> None:
        self.send(frame(lines, about, self._tag))

    def working(self, tag: str, text: str) -> _Working:
        """Progress lines for the request tagged ``tag`` while the ``with``
        block runs; ``say`` changes what they say."""

        def send(words: str) -> None:
            self.working_sent += 1
            self.send([tagged(tag, WORKING + words)])

        return _Working(send, self.working_every, text)

    def event(self, line: str) -> None:
        """One journal line for the live feed (sent only while watching)."""
        if self.watching:
            self.send([f"event {line}"])

    # --- the link's calls ----------------------------------------------------------

    def connection_made(self, transport: Transport) -> None:
        self.transport = transport
        self.watching = False
        self._replay = None

    def connection_lost(self, error: Exception | None, partial: bool) -> None:
        self.watching = False
        self._replay = None  # a log cut off by a disconnect is not checked

    def handle_too_long(self, limit: int) -> None:
        self._tag = ""
        if self._replay is not None:
            self._replay.add(None, too_long_reason(limit))
            self._maybe_finish()
        else:
            self.error(too_long_reason(limit))

    def handle_idle(self) -> None:
        state = self._replay
        if (state is not None and state.count is not None
                and time.monotonic() - state.last_line_at > REPLAY_IDLE_S):
            self._replay = None
            self._tag = state.tag
            self.error(f"replay abandoned: no line for {REPLAY_IDLE_S:g} s "
                       f"({state.received} of {state.count} received); nothing was checked")

    def handle_line(self, line: bytes) -> None:
        self._tag = ""
        try:
            if self._replay is not None:
                self._replay_line(line)
            else:
                self._request(line)
        except (Busy, JournalError) as error:
            self.error(str(error))  # "the card is full: nothing new can be kept"
        except Exception as error:  # a bug or a failing journal: say so, keep serving
            self.error(f"internal: {type(error).__name__}: {error}")

    # --- requests ------------------------------------------------------------------

    def _request(self, raw: bytes) -> None:
        if CANCEL in raw:
            return  # a person cancelled the line (Ctrl-C): no request
        self._tag = split_tag(raw)[0]  # for the errors below, before the checksum is checked
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            self.error(not_utf8_reason(raw, error))
            return
        try:
            text = strip_line(_edited(text))
        except LogSyntaxError as error:
            self.error(str(error))  # "checksum mismatch: the line says *0000, its text gives ..."
            return
        tag, body = split_tag(text.encode("utf-8"))
        self._tag = tag
        text = body.decode("utf-8").strip()
        if not text:
            return  # a blank line or a comment is no request
        command, _, rest = text.partition(" ")
        handler = self._commands.get(command)
        if handler is None:
            self.error(f"unknown command {command!r} (try help)")
            return
        handler(rest.strip())

    def _help(self, args: str) -> None:
        self.framed(list(HELP), "help")

    def _status(self, args: str) -> None:
        if args not in ("", "json"):
            self.error("status: expected 'status' or 'status json'")
            return
        status = self.call(status_of)
        if args == "json":
            if self.enter_answers:
                status["enter_answers"] = dict(self.enter_answers)
            self.ok(json.dumps(status, ensure_ascii=False))
        else:
            self.framed(_status_lines(status), "status")

    def _enter(self, args: str) -> None:
        if not args:
            self._enter_answer("error enter: expected 'enter EVENT' (enter trick N, "
                               "enter make E H alone)")
            return
        try:
            event = parse_event(args)
        except LogSyntaxError as error:
            self._enter_answer(f"error {error}")
            return
        line = event.line()

        def apply(referee: Referee) -> tuple[str | None, str]:
            if isinstance(event, Undo):
                return referee.undo(), referee.undone  # undo() words it: "Undone: ..."
            if isinstance(event, (ScoreCheck, WinnerCheck)):
                return _verify(referee, event), f"{line}: checked"
            reason = referee.enter(event)  # type: ignore[arg-type]
            return reason, f"{line} (next: {referee.game.expected})"

        try:
            reason, done = self.call(apply)
        except (Busy, JournalError) as error:  # nothing was kept
            self._enter_answer(f"error {error}")
            return
        self._enter_answer(f"error {reason}" if reason is not None else f"ok {done}")

    def _enter_answer(self, answer: str) -> None:
        """Send an ``enter``'s answer, and keep it by the request's tag for
        ``status json`` (``enter_answers``): a program that lost the answer
        (another program reading the port took it) asks there whether its
        entry was kept."""
        if self._tag:
            self.enter_answers[self._tag] = answer
            while len(self.enter_answers) > ENTER_ANSWERS_KEPT:
                del self.enter_answers[next(iter(self.enter_answers))]
        self.send([tagged(self._tag, answer)])

    def _watch(self, args: str) -> None:
        if args == "on":
            self.watching = True
            self.ok("watching: each entry comes as 'event LINE'")
        elif args == "off":
            self.watching = False
            self.ok("not watching")
        elif not args:
            self.ok("watching" if self.watching else "not watching")
        else:
            self.error("watch: expected 'watch on' or 'watch off'")

    def _replay_begin(self, args: str) -> None:
        words = args.split()
        load = False
        count: int | None = None
        for index, word in enumerate(words):
            if word == "begin" and index == 0:
                continue
            if word == "load" and not load:
                load = True
            elif is_number(word) and count is None and index == len(words) - 1:
                count = int(word)
            else:
                self.error("replay: expected 'replay [begin] [load] [LINES]'")
                return
        if count is not None and not 1 <= count <= MAX_REPLAY_LINES:
            self.error(f"replay: 1 to {MAX_REPLAY_LINES} lines")
            return
        self._replay = _ReplayInput(load, count, self._tag)
        if count is None:
            self.ok("replay: send the log, then '.' (or 'replay end')")
        else:
            self.ok(f"replay: send the log's {count} lines")

    def _replay_line(self, raw: bytes) -> None:
        state = self._replay
        assert state is not None
        self._tag = state.tag
        if state.count is None:  # typed by a person: Ctrl-C cancels, '.' ends
            if CANCEL in raw:
                self._replay = None
                self.error("replay abandoned (Ctrl-C): nothing was checked")
                return
            if _is_end(raw):
                self._finish_replay()
                return
        # A counted replay (a program's): every byte is data, the count ends it.
        state.add_bytes(raw)
        self._maybe_finish()

    def _maybe_finish(self) -> None:
        if self._replay is not None and self._replay.complete:
            self._finish_replay()

    def _finish_replay(self) -> None:
        state = self._replay
        assert state is not None
        self._replay = None
        self._tag = state.tag
        with self.working(state.tag, f"checking the log ({state.received} lines)") as working:
            result = state.check()
            valid = result.error is None
            lines = [json.dumps(summary_json(REPLAY_SOURCE, result), ensure_ascii=False)]
            if result.error is not None:
                lines.append(f"{REPLAY_SOURCE}:{result.error.line}: {result.error.reason}")
            else:
                lines.extend(summary_text(REPLAY_SOURCE, result).splitlines())
            if state.load:
                if valid:
                    lines.extend(self._load_games(result, working))
                else:
                    lines.append("not loaded: the log is invalid")
        self.framed(lines, "valid" if valid else "invalid")

    def _load_games(self, result: Replay, working: _Working) -> list[str]:
        """Store each game of a valid log that the journal does not already
        keep, the newest of them as the current game; the verdict's last
        lines.  A game already kept with exactly the same lines (a load sent
        again, say after a laptop gave up waiting for the first) is not
        stored again, and the lines say so.  The storing and replaying are
        done here, on the reader thread, with the journal's own connection
        for it (``off_loop``): a log of 100,000 lines never holds the main
        loop (the buttons, the screen and its watchdog pings), whose one job
        is to take the stored game as the current one.  ``working`` says how
        far it has come."""
        games = games_of(result.game)
        kept = self._kept_games({len(lines) for lines in games}, working)
        store = self.call(lambda referee: referee.store)
        new: list[tuple[int, int]] = []
        """(the log's game number, its stored id) of each game stored now."""
        already: list[tuple[int, int]] = []
        """(the log's game number, the id it was kept as) of each not stored again."""
        try:
            for number, lines in enumerate(games, start=1):
                same = kept.get(_digest(lines))
                if same:
                    already.append((number, same.pop(0)))
                else:
                    new.append((number, store.new_game(lines, off_loop=True)))
                working.say(f"{number} of {len(games)} games stored" + (
                    f" ({len(already)} already kept)" if already else ""))
        except JournalError as error:
            ids = [game_id for _, game_id in new]
            stored = f"games {', '.join(map(str, ids))} were stored; then " if ids else ""
            return [f"not loaded: {stored}{error}"]
        lines = []
        if new:
            number, game_id = new[-1]
            working.say(f"{len(games)} of {len(games)} games stored; taking up game {game_id}")
            last = games[number - 1]
            replayed = replay("\n".join([HEADER, *last]) + "\n").game
            self.call(lambda referee: referee.adopt_game(game_id, last, replayed))
            lines.append(_loaded_words(new, bool(already)))
        if already:
            lines.append(_kept_words(already, len(games)))
            if not new:
                current = self.call(lambda referee: referee.game_id)
                lines[-1] += f"; the current game is still game {current}"
        return lines

    def _kept_games(self, sizes: set[int], working: _Working) -> dict[bytes, list[int]]:
        """The games the journal keeps with as many lines as one of ``sizes``,
        by the digest of their lines (oldest first).  Read on the main loop
        (the journal's one reader) a slice of at most :data:`READ_SLICE_S` at
        a time, so a journal of thousands of games holds the buttons no
        longer than that."""
        wanted = [info.id for info in self.call(lambda referee: referee.store.games())
                  if info.lines in sizes]
        kept: dict[bytes, list[int]] = {}
        done = 0
        while done < len(wanted):
            def read(referee: Referee, start: int = done) -> list[tuple[int, bytes]]:
                began = time.monotonic()
                out = []
                for game_id in wanted[start:]:
                    out.append((game_id, _digest(referee.store.lines(game_id))))
                    if time.monotonic() - began >= READ_SLICE_S:
                        break
                return out

            for game_id, digest in self.call(read):
                kept.setdefault(digest, []).append(game_id)
                done += 1
            working.say(f"comparing with the games kept: {done} of {len(wanted)} read")
        return kept

    def _export(self, args: str) -> None:
        if args and not is_number(args):
            self.error("export: expected 'export' or 'export ID' (see games)")
            return
        wanted = int(args) if args else None

        def export(referee: Referee) -> tuple[int, str | None, list[str]]:
            game_id = referee.game_id if wanted is None else wanted
            known = [info.id for info in referee.store.games()]
            if game_id not in known:
                span = f"{known[0]}-{known[-1]}" if known else "none"
                return game_id, f"no game {game_id} (stored games: {span})", []
            return game_id, None, referee.store.export(game_id).splitlines()

        game_id, reason, lines = self.call(export)
        if reason is not None:
            self.error(reason)
        else:
            self.framed(lines, f"game {game_id}")

    def _games(self, args: str) -> None:
        if args:
            self.error("games: takes no arguments")
            return

        def games(referee: Referee) -> list[str]:
            out = []
            for info in referee.store.games():
                created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(info.created))
                current = " current" if info.id == referee.game_id else ""
                out.append(f"{info.id} created={created} lines={info.lines}{current}")
            return out

        self.framed(self.call(games), "games")

    def _stats(self, args: str) -> None:
        if args not in ("", "json"):
            self.error("stats: expected 'stats' or 'stats json'")
            return
        logs = self.call(lambda referee: kept_logs(referee.store))
        # replayed here, on the link's thread; a long replay says it is under way
        with self.working(self._tag, f"replaying the kept games: 0 of {len(logs)}") as working:
            stats = BoxStats()
            for done, (label, text) in enumerate(logs, 1):
                stats.add_log(label, text)
                working.say(f"replaying the kept games: {done} of {len(logs)}")
        if args == "json":
            self.framed(stats_json_lines(stats), "stats json")
        else:
            self.framed(stats_lines(stats), "stats")

    def _players(self, args: str) -> None:
        if args:
            try:
                event = parse_event(f"players {args}")
            except LogSyntaxError as error:
                self.error(str(error))
                return
            assert isinstance(event, Players)
            for seat, name in event.names:
                problem = screen_name_problem(name)
                if problem is not None:
                    self.error(f"players: {seat}'s name must be {problem}")
                    return

            def set_names(referee: Referee) -> str:
                return referee.set_next_names(dict(event.names))
        else:
            def set_names(referee: Referee) -> str:
                return Players.from_names(referee.config.names).line()

        line = self.call(set_names)
        self.ok(f"next game: {line}")

    def _rules(self, args: str) -> None:
        if args:
            try:
                event = parse_event("rules" if args == "standard" else f"rules {args}")
            except LogSyntaxError as error:
                self.error(str(error))
                return
            assert isinstance(event, SetRules)

            def set_rules(referee: Referee) -> str:
                referee.set_next_rules(event.rules)
                return _rules_line(event.rules)
        else:
            def set_rules(referee: Referee) -> str:
                return _rules_line(referee.config.rules)

        self.ok(f"next game: {self.call(set_rules)}")

    def _sync(self, args: str) -> None:
        self.ok(f"sync {args}" if args else "sync")


def _digest(lines: list[str]) -> bytes:
    """What tells a game's lines from any other's (a game's lines hold no line end)."""
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogatepass")).digest()


def _numbers(numbers: list[int]) -> str:
    """``2, 3`` or ``2-2054`` (a run of three or more as a span).

    >>> _numbers([2, 3, 5, 6, 7, 9])
    '2, 3, 5-7, 9'
    """
    parts: list[str] = []
    start = 0
    while start < len(numbers):
        end = start
        while end + 1 < len(numbers) and numbers[end + 1] == numbers[end] + 1:
            end += 1
        if end - start >= 2:
            parts.append(f"{numbers[start]}-{numbers[end]}")
        else:
            parts.extend(str(number) for number in numbers[start:end + 1])
        start = end + 1
    return ", ".join(parts)


def _games(numbers: list[int]) -> str:
    return f"game {numbers[0]}" if len(numbers) == 1 else f"games {_numbers(numbers)}"


def _loaded_words(new: list[tuple[int, int]], some_kept: bool) -> str:
    """The verdict's line for the games stored by a load (the newest current)."""
    ids = [game_id for _, game_id in new]
    if not some_kept:  # every game of the log was new: each id listed
        if len(ids) == 1:
            return f"loaded as game {ids[0]}: it is now the current game"
        return (f"loaded as games {', '.join(map(str, ids))}: game {ids[-1]} is now the "
                "current game")
    numbers = [number for number, _ in new]
    what = "new game" if len(numbers) == 1 else "new games"
    return (f"loaded the log's {what} {_numbers(numbers)} as {_games(ids)}: "
            f"game {ids[-1]} is now the current game")


def _kept_words(already: list[tuple[int, int]], total: int) -> str:
    """The verdict's line for the games of a load that were kept already."""
    ids = [game_id for _, game_id in already]
    verb = "was" if len(ids) == 1 else "were"
    numbers = [number for number, _ in already]
    which = f"the log's {_games(numbers)}, " if total > 1 else ""
    return f"not stored again: {_games(ids)} {verb} already kept ({which}the same lines)"


def _rules_line(rules: Rules) -> str:
    line = SetRules(rules).line()
    return line if rules.to_tokens() else "rules (standard)"


def _verify(referee: Referee, check: ScoreCheck | WinnerCheck) -> str | None:
    try:
        referee.game.verify(check)
    except IllegalEntry as error:
        return str(error)
    return None


# --- the service -------------------------------------------------------------------


class _Job:
    """A request's work for the main loop; cancelled if the loop is too slow."""

    __slots__ = ("fn", "done", "result", "error", "_lock", "_state")

    def __init__(self, fn: Callable[[Referee], Any]) -> None:
        self.fn = fn
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._state = "waiting"

    def __call__(self, referee: Referee) -> None:
        with self._lock:
            if self._state == "cancelled":
                return
            self._state = "running"
        try:
            self.result = self.fn(referee)
        except Exception as error:  # never let a request end the main loop
            self.error = error
        finally:
            self.done.set()

    def cancel(self) -> bool:
        with self._lock:
            if self._state != "waiting":
                return False
            self._state = "cancelled"
            return True


class SerialService:
    """The serial link of a running referee.

    ``SerialService.open(port, baudrate, events, referee)`` starts it: ``port``
    is a path or pyserial URL (``/dev/ttyGS0``, ``socket://...``) or an
    :class:`~drivers.serialport.Endpoint` such as a
    :class:`~drivers.pseudoterminal.PtyEndpoint`.  ``events`` is the main loop's
    queue.  ``close()`` stops it.
    """

    def __init__(self, endpoint: Endpoint, events: queue.Queue[Any], referee: Referee, *,
                 main_timeout: float = MAIN_LOOP_TIMEOUT_S, retry_s: float = 0.25,
                 working_every: float = WORKING_EVERY_S) -> None:
        self.endpoint = endpoint
        self.events = events
        self.referee = referee
        self.main_timeout = main_timeout
        self._closing = threading.Event()
        self.pty_link: Path | None = None
        self.protocol = RefereeProtocol(self._on_main, working_every=working_every)
        self.link = SerialLink(endpoint, self.protocol, max_line=MAX_LINE, retry_s=retry_s,
                               name="serial")
        referee.listeners.append(self._on_journal)

    @classmethod
    def open(cls, port: str | Endpoint, baudrate: int = DEFAULT_BAUDRATE,
             events: queue.Queue[Any] | None = None, referee: Referee | None = None,
             **options: Any) -> SerialService:
        if events is None or referee is None:
            raise TypeError("SerialService.open needs the main loop's queue and the referee")
        endpoint = UrlEndpoint(port, baudrate) if isinstance(port, str) else port
        service = cls(endpoint, events, referee, **options)
        service.link.start()
        return service

    @classmethod
    def open_pty(cls, events: queue.Queue[Any], referee: Referee, *,
                 link: str | os.PathLike[str] | None = None,
                 baudrate: int = DEFAULT_BAUDRATE, **options: Any) -> SerialService:
        """The service on a new pseudo-terminal (the emulator's serial port): a
        laptop opens ``service.slave_path``, or ``link``, a symlink made to it
        (an old symlink there is replaced; removed again by :meth:`close`)."""
        endpoint = PtyEndpoint(baudrate)
        if link is not None:
            try:
                point_link(link, endpoint.slave_path)
            except OSError:
                endpoint.close()
                raise
        service = cls.open(endpoint, baudrate, events, referee, **options)
        service.pty_link = Path(link) if link is not None else None
        return service

    @property
    def slave_path(self) -> str | None:
        """The path a peer opens, when the port is this process's pseudo-terminal."""
        return getattr(self.endpoint, "slave_path", None)

    def close(self) -> None:
        self._closing.set()
        try:
            self.referee.listeners.remove(self._on_journal)
        except ValueError:
            pass
        self.link.close()
        link = self.pty_link
        if link is not None and link.is_symlink() and os.readlink(link) == self.slave_path:
            link.unlink()

    def _on_journal(self, line: str) -> None:
        """A referee listener (main loop): the live feed."""
        if self.link.connected:
            self.protocol.event(line)

    def _on_main(self, fn: Callable[[Referee], T]) -> T:
        """Run ``fn(referee)`` on the main loop and wait for it (reader thread)."""
        job = _Job(fn)
        self.events.put(job)
        deadline = time.monotonic() + self.main_timeout
        while not job.done.wait(0.05):
            if self._closing.is_set() or time.monotonic() > deadline:
                if job.cancel():
                    raise Busy(f"busy: the referee did not take the request within "
                               f"{self.main_timeout:g} s; nothing was done")
                job.done.wait()  # it has started: its answer is coming
                break
        if job.error is not None:
            raise job.error
        result: T = job.result
        return result

