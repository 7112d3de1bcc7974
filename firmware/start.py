"""The journal at the start, as the device (``run``) and the emulator
(``emulate``) both open it: one path for both.

A journal that cannot be opened for writing (a read-only or full card, no
permission, another referee on the state directory) never stops the start:

- when it holds a game that can be read (a card gone read-only, the usual
  fault of a Pi's SD card), :func:`open_journal` opens it read-only (a
  :class:`KeptJournal`): the referee comes up and shows the kept game, every
  entry is refused with the cause ("the card is read-only: nothing new can be
  kept"), and :func:`journal_keeper`, called on each pass of the main loop,
  tries a writable journal every :data:`JOURNAL_RETRY_S` seconds; once it
  opens, the referee takes it and says that entries are kept again;
- otherwise (no game to show, a damaged journal, another referee) the cause
  is said in one line and on the screen, and it is tried again every
  :data:`JOURNAL_RETRY_S` seconds until it opens or the start is stopped;
- a journal that opens but refuses the referee's first write (its first game
  cannot be stored: the card gives read/write errors) is closed, the cause
  said the same way, and tried again the same way (:func:`open_referee`).
"""

from __future__ import annotations

import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol, TypeVar

from .journal import NOTHING_KEPT, JournalError, JournalInUse, JournalWriteError, Store
from .journal import fault_words as _fault_words

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .app import FrameSink, Referee

JOURNAL_RETRY_S: Final = 5.0
"""Seconds between attempts to open a journal that could not be opened."""

R = TypeVar("R")


class StartNotifier(Protocol):
    """What the start tells its service manager (:class:`firmware.pi.systemd.Notifier`)."""

    def ready(self) -> None: ...

    def status(self, text: str) -> None: ...

    def watchdog(self) -> None: ...


def show_notice(display: FrameSink, title: str, lines: tuple[str, ...]) -> bool:
    """Draw a notice straight on the display (before a Referee exists)."""
    from .screens import render
    from .view import View

    try:
        display.show(render(View(kind="notice", title=title, lines=lines)))
    except Exception:  # the message is in the log too
        return False
    return True


class KeptJournal(Store):
    """A journal that could not be opened for writing, opened read-only to
    show the game it keeps: every write raises :class:`JournalWriteError`
    with ``cause`` ("the card is read-only: nothing new can be kept")."""

    def __init__(self, state_dir: Path, cause: str) -> None:
        super().__init__(state_dir, readonly=True)
        self.cause = cause
        """Why it cannot be written, in words ("the card is read-only")."""

    @property
    def refusal(self) -> str:
        return f"{self.cause}: {NOTHING_KEPT}"

    def _refuse(self) -> JournalWriteError:
        return JournalWriteError(self.refusal)

    def new_game(self, lines: Sequence[str] = (), *, off_loop: bool = False) -> int:
        raise self._refuse()

    def append(self, game_id: int, line: str, flow: str | None = None) -> None:
        raise self._refuse()

    def save_flow(self, game_id: int, flow: str, *, durable: bool = False) -> None:
        raise self._refuse()

    def probe(self, game_id: int, flow: str) -> None:
        raise self._refuse()

    def set_setting(self, key: str, value: str) -> None:
        raise self._refuse()


def _cause(error: JournalError, state_dir: Path) -> str:
    """The fault of a failed open in words ("the card is read-only")."""
    if error.__cause__ is not None:
        return _fault_words(state_dir, error.__cause__)
    return str(error)


def _kept(state_dir: Path, cause: str) -> KeptJournal | None:
    """The journal read-only, when it holds a game that loads whole."""
    try:
        kept = KeptJournal(state_dir, cause)
    except JournalError:
        return None
    try:
        latest = kept.latest()
        if latest is not None and kept.damage is None and kept.moved_aside is None:
            kept.load(latest)
            return kept
    except JournalError:
        pass
    kept.close()
    return None


def open_journal(state_dir: Path, display: FrameSink, notifier: StartNotifier,
                 stopping: Callable[[], bool], *, retry_s: float = JOURNAL_RETRY_S,
                 sleep: Callable[[float], None] = time.sleep) -> Store | None:
    """The journal, once it opens, or a :class:`KeptJournal` at once when it
    cannot be written but keeps a game to show; None if stopped first
    (:func:`open_referee` with nothing made on it)."""
    return open_referee(state_dir, display, notifier, stopping, lambda store: store,
                        retry_s=retry_s, sleep=sleep)


def open_referee(state_dir: Path, display: FrameSink, notifier: StartNotifier,
                 stopping: Callable[[], bool], make: Callable[[Store], R], *,
                 retry_s: float = JOURNAL_RETRY_S,
                 sleep: Callable[[float], None] = time.sleep) -> R | None:
    """``make(store)`` (the referee) on the journal, once it opens and the
    referee's first write is kept (a first game stored), or on a
    :class:`KeptJournal` at once when it cannot be written but keeps a game
    to show; None if stopped first.

    While it cannot be opened, or its first write fails (the card gives
    read/write errors), the cause is logged once (again when it changes),
    shown on the display, reported to the service manager (READY with that
    STATUS, so the unit is not restarted over and over) and the watchdog is
    pinged between attempts."""
    said = ""
    while True:
        title, store = "Journal not opened", None
        try:
            store = Store(state_dir)
        except JournalInUse as error:  # another referee writes it: nothing to show
            cause = f"journal not opened: {error}"
        except JournalError as error:
            cause = f"journal not opened: {error}"
            store = _kept(state_dir, _cause(error, state_dir))
            if store is not None:
                print(f"euchre-referee: journal read-only: {error}; the kept game is shown, "
                      f"entries are refused; trying again every {retry_s:g} s",
                      file=sys.stderr, flush=True)
                notifier.status(f"journal read-only: {store.refusal}")
        if store is not None:
            try:
                return make(store)
            except (JournalError, sqlite3.Error) as error:
                # Its first write failed (the card gives read/write errors):
                # said, and tried again, as a journal that does not open.
                store.close()
                words = str(error) if isinstance(error, JournalError) else (
                    f"{_fault_words(state_dir, error)}: {NOTHING_KEPT}")
                title = "Journal not written"
                cause = f"journal not written: {words} (the game could not be stored)"
        if cause != said:
            print(f"euchre-referee: {cause}; trying again every {retry_s:g} s",
                  file=sys.stderr, flush=True)
            show_notice(display, title, (cause.split(": ", 1)[1], "Trying again..."))
            if not said:
                notifier.ready()
            notifier.status(cause)
            said = cause
        waited = 0.0
        while waited < retry_s:
            if stopping():
                return None
            notifier.watchdog()
            step = min(0.5, retry_s - waited)
            sleep(step)
            waited += step


def journal_keeper(referee: Referee, *, retry_s: float = JOURNAL_RETRY_S,
                   clock: Callable[[], float] = time.monotonic,
                   say: Callable[[str], object] | None = None) -> Callable[[], bool]:
    """Made once the referee is; to be called on each pass of its main loop.

    With a :class:`KeptJournal` the referee shows why entries are refused (a
    notice over the kept game, and the journal fault the serial link's
    ``status`` lists), and each call tries a writable journal every
    ``retry_s`` seconds: once one opens on the same game, the referee takes
    it (its own retry then says "The journal works again") and the call
    returns True.  With any other journal it does nothing."""
    store = referee.store
    if not isinstance(store, KeptJournal):
        return lambda: False
    referee.notice = ("Journal read-only", (f"{store.cause}:", "nothing new can be kept.",
                                            "The kept game is shown;", "trying again..."))
    referee.journal_fault = store.refusal
    next_try = clock() + retry_s
    tell = say or (lambda text: print(f"euchre-referee: {text}", file=sys.stderr, flush=True))

    def keep() -> bool:
        nonlocal next_try
        kept = referee.store
        if not isinstance(kept, KeptJournal) or clock() < next_try:
            return False
        next_try = clock() + retry_s
        try:
            fresh = Store(kept.state_dir)
        except JournalError:
            return False
        game_id = referee.game_id
        if fresh.lines(game_id) != kept.lines(game_id):  # changed meanwhile: not this game
            fresh.close()
            tell(f"the journal in {kept.state_dir} changed while it was read-only: "
                 "restart the referee to take it up")
            next_try = float("inf")
            return False
        referee.store = fresh
        kept.close()
        tell(f"journal opened: {kept.state_dir} can be written again, entries are kept")
        return True

    return keep
