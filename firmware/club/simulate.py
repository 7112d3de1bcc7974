"""Emulated club nights: boxes that play random legal games, for the tests,
the bench and an organiser's rehearsal.

``euchre-referee club box`` is one headless box: a real
:class:`~firmware.app.Referee` on its own state directory (journal and all),
joined to the broker by :class:`~firmware.club.box.ClubBox`; with
``--autoplay`` it enters a random legal winner-level entry (the first dealer,
a pass or a call, a trick's winner; now and then an undo) every ``--pace``
seconds, chosen from ``Game.legal_entries()``, until its round is over.

:class:`Night` runs a director and N such boxes as processes against a
broker: ``euchre-referee club simulate --broker URL --tables N --rounds R``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import queue
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from euchre_core.events import Call, Make, NewGame, Order, Pass, Trick

from ..app import Inbox, Referee
from ..config import Config
from ..exits import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from ..journal import Store
from .auth import TOKEN_NAME
from .box import ClubBox
from .control import starts_hand
from .serve import PORT_TAKEN

log = logging.getLogger("euchre.club.simulate")

WINNER_LEVEL = (NewGame, Pass, Order, Call, Make, Trick)
"""The entries an emulated table makes (no upcards, cards or reneges)."""
UNDO_CHANCE = 0.03


def _tiny_frame(view: Any) -> Any:
    """A headless box draws nothing (no display, no fonts needed)."""
    return None


class AutoPlayer:
    """Plays the box's round games at random (a job on the main loop each ``pace`` s)."""

    def __init__(self, box: ClubBox, events: Inbox, *, seed: int, pace: float) -> None:
        self.box, self.events, self.pace = box, events, pace
        self.rng = random.Random(seed)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="autoplay", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        while not self.stopped.wait(self.pace):
            self.events.put(self.play_one)

    def play_one(self, referee: Referee) -> None:
        round_number = self.box.state.rounds.get(referee.game_id)
        round_format = self.box.formats.get(round_number or 0)
        game = referee.game
        if round_format is None or game.winner is not None or (
            round_format.hands is not None and game.hands_played >= round_format.hands
            and not self.box.awaits_extra_hand(round_number or 0, game)
        ) or self.box.replaced is not None or (
            self.box.time_called(round_number or 0) and starts_hand(game)
        ):
            return
        referee.notice = None
        if self.rng.random() < UNDO_CHANCE and len(game.entries) > referee.base_entries + 1:
            referee.undo()
            return
        legal = [entry for entry in game.legal_entries() if isinstance(entry, WINNER_LEVEL)]
        referee.enter(self.rng.choice(legal))


def run_box(args: argparse.Namespace) -> int:
    """``euchre-referee club box``: one headless box until SIGTERM."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format=f"%(asctime)s table {args.table}: %(message)s")
    from . import read_login

    events: Inbox = queue.Queue()
    try:
        login = read_login(args.login)
    except ValueError as error:
        print(f"euchre-referee: {error}", file=sys.stderr)
        return EXIT_USAGE
    store = Store(Path(args.state_dir))
    referee = Referee(Config(state_dir=Path(args.state_dir)), store, renderer=_tiny_frame)
    try:
        box = ClubBox(referee, events, broker=args.broker, table=args.table,
                      event=args.event, resend_s=args.resend, login=login,
                      take_over=args.take_over).start()
    except ValueError as error:
        print(f"euchre-referee: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.trace:
        trace = open(args.trace, "a", encoding="utf-8", buffering=1)

        def traced(line: str) -> None:  # right after the line's commit
            round_number = box.state.rounds.get(referee.game_id)
            if round_number is not None:
                seq = len(store.lines(referee.game_id)) - 1
                trace.write(f"{args.table} {round_number} {seq} {time.time():.6f}\n")

        referee.listeners.append(traced)
    player = None
    if args.autoplay:
        player = AutoPlayer(box, events, seed=args.seed + args.table, pace=args.pace)
        player.start()
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    try:
        referee.run(events, stop=stopping.is_set, poll=0.2)
    finally:
        if player is not None:
            player.stopped.set()
        box.close()
        store.close()
    return EXIT_OK


# --- a whole night -----------------------------------------------------------------------


class Night:
    """A director and ``tables`` autoplaying boxes, each a process, on ``broker``.

    ``workdir`` holds the director's state (``director/``) and each box's
    (``box-N/``), and their logs (``*.log``).  ``logins`` is ``club setup``'s
    ``--out``: the director and each box then log in to the broker.

    The director's page binds port 0 (a free port the system picks, no race
    for it) and says which in ``director.port``; a restarted director asks
    for the same port again (the page's URL stays), and only if another
    program took it meanwhile gets a fresh one (``url`` then changes)."""

    def __init__(self, broker: str, workdir: Path, *, tables: int, event: str = "sim",
                 pace: float = 0.05, seed: int = 1, resend_s: float = 3.0,
                 trace: bool = False, logins: Path | None = None) -> None:
        self.logins = logins
        self.broker, self.workdir, self.tables = broker, Path(workdir), tables
        self.event, self.pace, self.seed, self.resend_s = event, pace, seed, resend_s
        self.trace = trace
        """Each box writes ``box-N.trace``: ``table round seq unix-time`` per line it journals."""
        self.http_port = 0
        """The page's port: 0 (any) until the director's first start says which."""
        self.url = ""
        self.director: subprocess.Popen[bytes] | None = None
        self.boxes: dict[int, subprocess.Popen[bytes]] = {}

    def _spawn(self, name: str, arguments: list[str]) -> subprocess.Popen[bytes]:
        log_file = open(self.workdir / f"{name}.log", "ab")
        try:
            return subprocess.Popen([sys.executable, "-m", "firmware", "club", *arguments],
                                    stdout=log_file, stderr=log_file,
                                    env={**os.environ, "PYTHONUNBUFFERED": "1"})
        finally:
            log_file.close()

    def start(self) -> Night:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.start_director()
        for table in range(1, self.tables + 1):
            self.start_box(table)
        return self

    def start_director(self) -> None:
        """The director (again): on its page's port if it had one, else on a
        free one; returns once the page answers."""
        port_file, log = self.workdir / "director.port", self.workdir / "director.log"
        port_file.unlink(missing_ok=True)
        said = log.stat().st_size if log.exists() else 0
        director = self.director = self._spawn("director", [
            "serve", "--broker", self.broker, "--event", self.event,
            "--state-dir", str(self.workdir / "director"),
            "--http", f"127.0.0.1:{self.http_port}", "--port-file", str(port_file),
            *(["--login", str(self.logins / "director.toml")] if self.logins else [])])
        self.wait(lambda: port_file.exists() or director.poll() is not None, 120,
                  "the director's port")
        if not port_file.exists():
            with open(log, "rb") as handle:
                handle.seek(said)
                words = handle.read().decode("utf-8", "replace")
            if self.http_port and PORT_TAKEN in words:  # taken since it was freed
                self.http_port = 0
                self.start_director()
                return
            raise RuntimeError(f"the director stopped (exit {director.returncode}): "
                               f"{words.strip() or 'nothing said'} (logs in {self.workdir})")
        self.http_port = int(port_file.read_text(encoding="ascii"))
        self.url = f"http://127.0.0.1:{self.http_port}"
        self.wait(lambda: self._get("/standings.json") is not None, 120, "the director's page")
        self.token = (self.workdir / "director" / TOKEN_NAME).read_text(encoding="ascii").strip()

    def kill_director(self) -> None:
        assert self.director is not None
        self.director.send_signal(signal.SIGKILL)
        self.director.wait()

    def start_box(self, table: int, *, spare: bool = False) -> None:
        """The box of ``table``; ``spare``: a spare box (its own state
        directory, ``spare-N``) taking the table over (``--take-over``)."""
        name = f"spare-{table}" if spare else f"box-{table}"
        self.boxes[table] = self._spawn(name, [
            "box", "--broker", self.broker, "--event", self.event, "--table", str(table),
            "--state-dir", str(self.workdir / name), "--autoplay", "--seed", str(self.seed),
            *(["--take-over"] if spare else []),
            "--pace", str(self.pace), "--resend", str(self.resend_s),
            *(["--login", str(self.logins / "boxes" / f"table-{table}.toml")]
              if self.logins else []),
            *(["--trace", str(self.workdir / f"box-{table}.trace")] if self.trace else [])])

    def box_dir(self, table: int) -> Path:
        return self.workdir / f"box-{table}"

    def kill_box(self, table: int) -> None:
        """SIGKILL: the box dies between any two instructions."""
        process = self.boxes[table]
        process.send_signal(signal.SIGKILL)
        process.wait()

    def stop(self) -> None:
        for process in [*self.boxes.values(), self.director]:
            if process is not None and process.poll() is None:
                process.terminate()
        for process in [*self.boxes.values(), self.director]:
            if process is not None:
                try:
                    process.wait(15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

    # --- the director's HTTP API -------------------------------------------------

    def _get(self, path: str) -> Any:
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as response:
                return json.loads(response.read())
        except (OSError, ValueError):
            return None

    def post(self, path: str, data: dict[str, Any]) -> Any:
        return post_json(self.url + path, data, token=self.token)

    def board(self) -> dict[str, Any]:
        board: dict[str, Any] = self._get("/board.json")
        return board

    def register(self, count: int) -> list[str]:
        names = [f"Player {index:02d}" for index in range(1, count + 1)]
        for name in names:
            self.post("/players", {"name": name})
        return names

    def start_round(self, hands: int) -> dict[str, Any]:
        assignment: dict[str, Any] = self.post("/rounds", {"hands": hands})
        return assignment

    def round_done(self, round_number: int) -> bool:
        board = self._get("/board.json")
        return bool(board and board["round"] == round_number
                    and all(t["done"] for t in board["tables"]))

    def wait(self, condition: Any, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what}: not within {timeout:g} s (logs in {self.workdir})")
            time.sleep(0.1)


def post_json(url: str, data: dict[str, Any], *, token: str | None = None) -> Any:
    """POST JSON (with the organiser's ``token``), return the JSON answer; a
    refusal raises ValueError with its reason."""
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=json.dumps(data).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        try:
            reason = json.loads(error.read()).get("error", error.reason)
        except ValueError:
            reason = error.reason
        raise ValueError(reason) from None


def simulate(args: argparse.Namespace) -> int:
    """``euchre-referee club simulate``: a whole night, printed round by round."""
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="club-"))
    night = Night(args.broker, workdir, tables=args.tables, event=args.event, pace=args.pace,
                  seed=args.seed, logins=Path(args.logins) if args.logins else None).start()
    try:
        night.register(4 * args.tables)
        for round_number in range(1, args.rounds + 1):
            night.start_round(args.hands)
            night.wait(lambda n=round_number: night.round_done(n), args.timeout,
                       f"round {round_number}")
            print(f"round {round_number}: all {args.tables} tables done", flush=True)
        top = night.board()["players"][:10]
        for rank, player in enumerate(top, 1):
            print(f"{rank:3d}  {player['name']:20s} {player['points']:4d} points, "
                  f"{player['rounds_won']} rounds won, {player['loners']} loners")
        print(f"standings: {night.url}/standings.json (kept in {workdir})")
    except (TimeoutError, ValueError, RuntimeError) as error:
        print(f"euchre-referee: {error}", file=sys.stderr)
        return EXIT_INVALID
    finally:
        night.stop()
    return EXIT_OK
