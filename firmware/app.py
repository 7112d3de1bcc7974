"""The referee: one main loop owning all state.

Input arrives on one queue (button events from gpiozero's threads, requests
from the serial link); the loop applies each, then redraws if the view
changed.  Every entry is checked by the engine, written to the journal
(committed), and only then applied and shown: nothing acknowledged is lost.
"""

from __future__ import annotations

import logging
import queue
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from drivers import HOLD, ButtonEvent, Indicators
from euchre_core import (
    DEFAULT_NAMES,
    SEATS,
    Game,
    IllegalEntry,
    LogSyntaxError,
    Phase,
    Rules,
    Seat,
    Suit,
    parse_event,
    replay,
)
from euchre_core.events import (
    Call,
    Entry,
    Make,
    Misdeal,
    NewGame,
    Order,
    Pass,
    Players,
    SetRules,
)
from euchre_core.game import HandResult

from .buttons import (
    CONFIRM_GUARD_S,
    HELP,
    NEXT,
    OK,
    PAGES,
    PREV,
    STUCK_S,
    UNDO,
    hold_opens_help,
    label,
    twice_quickly,
)
from .care import ScreenCare
from .config import Config
from .flow import (
    RULE_PROFILES,
    Action,
    FlowState,
    Setup,
    Step,
    bid_entry,
    build_step,
    direct_action,
    next_start,
)
from .journal import JournalError, Store
from .summary import misdeal_words, undo_words
from .view import View
from .views import build_view, page_screens

if TYPE_CHECKING:
    import random

    from PIL.Image import Image


class FrameSink(Protocol):
    """Where frames go: drivers.RetryingDisplay (a luma device), the
    emulator, a test."""

    def show(self, image: Image) -> int: ...


log = logging.getLogger("euchre.app")

Renderer = Callable[[View], "Image"]

Job = Callable[["Referee"], Any]
"""Work for the main loop from another thread (the serial link's requests)."""

Inbox = queue.Queue[ButtonEvent | Job]
"""The main loop's queue: button events (gpiozero's threads) and jobs."""


def job_name(job: Job) -> str:
    """A job in words for a fault's line: its ``what`` attribute (the club box
    names its jobs, ``"club: the director's handover"``), else its name."""
    what = getattr(job, "what", None)
    return what if isinstance(what, str) else (
        f"job {getattr(job, '__qualname__', type(job).__name__)} failed")


def fault_words(error: BaseException) -> str:
    """An exception as one line of printable words: its message (its kind
    when it has none), never a traceback."""
    text = " ".join(str(error).split()).encode("utf-8", "backslashreplace").decode("utf-8")
    return text if text else type(error).__name__


BROWSE_S: Final = 5.0
"""Seats layout: the choice strip PREV/NEXT opened closes after this long (s)."""

KEPT_NAMES: Final = 12
"""How many player names the set-up menu offers at most."""

KEPT_GAMES: Final = 20
"""How many of the latest stored games the set-up menu takes names from."""


def _default_renderer(view: View) -> Image:
    from .screens import render

    return render(view)


class Referee:
    """The referee app.  ``press(name)`` is what a button does; ``view()`` is
    what the screen shows; ``run(events)`` is the main loop."""

    def __init__(
        self,
        config: Config,
        store: Store,
        *,
        display: FrameSink | None = None,
        indicators: Indicators | None = None,
        renderer: Renderer | None = None,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        is_pressed: Callable[[str], bool] | None = None,
    ) -> None:
        """``is_pressed(name)`` says whether a button is down right now (the
        ButtonBank's); with it, a button still down :data:`STUCK_S` seconds
        after its long press is reported as stuck."""
        self.config = config
        self.store = store
        self.display = display
        self.indicators = indicators
        self.render = renderer or _default_renderer
        self.care = ScreenCare(config.care, clock, display)
        """Dims, blanks and moves the picture when the table is idle (:mod:`firmware.care`)."""
        self._woken_by: str | None = None
        """The button whose press only woke the blank panel (its long press does nothing)."""
        self.clock = clock
        self.rng = rng
        """Draws the first dealer when asked to (made on first use: the start
        does not need ``random``)."""
        self.message: str | None = None
        self.message_is_error = True
        self.message_until = 0.0
        self.is_pressed = is_pressed
        self.result: HandResult | None = None
        self.result_until = 0.0
        """The result screen shows until then, or until a press dismisses it."""
        self.page: str | None = None
        """A page over the table (one of :data:`PAGES`), or None."""
        self.page_at = 0
        """Which of the page's screens is shown (a long page takes several)."""
        self.stats_lines: tuple[str, ...] = ()
        """The "Stats" page's lines, made when it opens (:meth:`_open_page`)."""
        self._stats: Any = None
        """The kept games' statistics (a :class:`firmware.stats.StatsCache`, made
        when the page first opens: the start does not import it)."""
        self.browse_until = 0.0
        """Seats layout: PREV/NEXT pressed, so the screen shows the choice under
        the cursor and OK picks it, until any other button is pressed or
        :data:`BROWSE_S` seconds pass."""
        self.undone = ""
        """What the last undo took back, in words (the screen and the link say it)."""
        self._tap: tuple[str, FlowState, int] | None = None
        """The last tap: its button, and the flow state and entry count before
        it (so the long press it turns into can take it back)."""
        self._held: tuple[str, float] | None = None
        """A long-pressed button and when its long press came (stuck check)."""
        self._last_press: tuple[str, float] | None = None
        """The last press and when (a confirmation is never a double tap)."""
        self._asked = False
        """Whether the last press was an OK that opened a question (or was
        refused as the double tap of one): :meth:`_double_tap`."""
        self.notice: tuple[str, tuple[str, ...]] | None = None
        self.flags: tuple[str, ...] = ()
        self.frames = 0
        self.display_errors = 0
        self._last_view: View | None = None
        self.listeners: list[Callable[[str], None]] = []
        """Called with each journal line once it is durable (the serial live feed)."""
        self.guards: list[Callable[[Game, Entry], str | None]] = []
        """Asked before each entry the rules allow: a reason refuses it (a club
        round's time called: no new hand)."""
        self.press_hooks: list[Callable[[str], bool]] = []
        """Asked first with each press (not on a page): True takes the press (a
        round's result waiting to be accepted, :mod:`firmware.round_end`)."""
        self.journal_fault: str | None = None
        """Why journal writes fail now (the card is full...), until one succeeds."""
        self._next_probe = 0.0
        self.notes: list[str] = []
        """What the table should know about the journal since the start (the
        serial link's ``status`` lists them with :meth:`notices`)."""
        self.staged: str | None = None
        """The ``game`` line of a new game confirmed after a win, shown but not
        yet stored (:meth:`_stage`), or None."""
        self._notice_journal(store)
        self._apply_kept_settings()
        self._resume()

    # --- the journal's faults -------------------------------------------------

    JOURNAL_PROBE_S = 5.0
    """Seconds between retries of a failing journal while nothing is entered."""

    def _notice_journal(self, store: Store) -> None:
        """The notice (screen) and notes (link) for what the store found at open
        (the most serious last: it is the one the screen shows)."""
        if store.rolled_back is not None:
            self.notice = ("Journal repaired", (
                "A write cut short by a power cut was rolled back.",
                "Nothing confirmed was in it."))
            self.notes.append(f"journal repaired: {store.rolled_back}")
        if store.record_damaged is not None:
            self.notice = ("Record damaged", (
                "journal.acks, the record of confirmed lines, was damaged.",
                "Every line was checked and kept."))
            self.notes.append(store.record_damaged)
        if store.unconfirmed is not None:
            said = store.unconfirmed.entries()
            self.notice = ("Entry left out", (
                f"{said[0].upper()}{said[1:]} never confirmed",
                "(refused, or the power went first):",
                "left out." if store.unconfirmed.kept_as else "not shown.",
                "Check the score."))
            self.notes.append(store.unconfirmed.sentence())
        if store.moved_aside is not None:
            self.notice = (
                "Journal unreadable",
                ("It could not be read", "and was moved aside", "(kept, not deleted).",
                 "Starting clean."),
            )
            self.notes.append(f"journal unreadable: moved aside to {store.moved_aside.name} "
                              "(kept, not deleted); started clean")
        if store.damage is not None:
            damage = store.damage
            self.notice = (
                "Journal damaged",
                (f"Kept aside as {damage.kept_as.name}.",
                 f"Recovered {damage.recovered} of {damage.acknowledged} lines.",
                 "Check the score."),
            )
            self.notes.append(damage.sentence())
        elif store.unchecked is not None:
            self.notice = ("Journal not checked", (store.unchecked + ".",))
            self.notes.append(f"journal not checked: {store.unchecked}")

    def notices(self) -> list[str]:
        """Everything the table should know about the journal now."""
        fault = [f"journal writes failing: {self.journal_fault}"] if self.journal_fault else []
        return [*self.notes, *fault]

    def _journal_failed(self, error: JournalError) -> str:
        """A write the journal refused: say why (screen), keep it for status."""
        reason = self.journal_fault = str(error)
        self._next_probe = self.clock() + self.JOURNAL_PROBE_S
        self._say(reason, error=True)
        return reason

    def _journal_works(self) -> None:
        self.journal_fault = None

    def retry_journal(self) -> bool:
        """While writes fail, try one (the flow position) every
        :attr:`JOURNAL_PROBE_S`; True once it works again."""
        if self.journal_fault is None or self.clock() < self._next_probe:
            return False
        self._next_probe = self.clock() + self.JOURNAL_PROBE_S
        try:
            self.store.probe(self.game_id, self._flow_text())
        except JournalError as error:
            self.journal_fault = str(error)
            return False
        self.journal_fault = None
        self._say("The journal works again: entries are kept", error=False)
        return True

    # --- settings for the games to come --------------------------------------

    def set_next_names(self, names: Mapping[Seat, str]) -> str:
        """Player names for the stored games to come (seats not given keep
        theirs); kept in the journal before it returns.  Returns the
        ``players`` line the next game will open with."""
        merged = dict(self.config.names)
        merged.update(names)
        line = Players.from_names(merged).line()
        self._keep_setting("players", line)
        self.config = self.config._replace(names=merged)
        return line

    def kept_names(self) -> tuple[str, ...]:
        """Names the box has kept, for the set-up menu: the next game's, then
        those of the latest stored games (their ``players`` lines), then the
        default names; at most :data:`KEPT_NAMES`."""
        names = [*self.config.names.values()]
        for info in reversed(self.store.games()[-KEPT_GAMES:]):
            for line in self.store.lines(info.id)[:2]:  # its set-up lines
                try:
                    event = parse_event(line) if line.startswith("players ") else None
                except LogSyntaxError:
                    continue
                if isinstance(event, Players):
                    names += [name for _, name in event.names]
        names += DEFAULT_NAMES.values()
        return tuple(dict.fromkeys(names))[:KEPT_NAMES]

    def set_next_rules(self, rules: Rules) -> None:
        """House rules for the stored games to come; kept in the journal
        before it returns."""
        self._keep_setting("rules", SetRules(rules).line())
        self.config = self.config._replace(rules=rules)

    def _keep_setting(self, key: str, line: str) -> None:
        """Keep a setting durably; a journal that refuses it raises, and says so."""
        try:
            self.store.set_setting(key, line)
        except JournalError as error:
            self._journal_failed(error)
            raise
        self._journal_works()

    def _apply_kept_settings(self) -> None:
        """Names and rules set over the serial link outlive a restart: they
        override the config file's until they are set again."""
        for line in self.store.settings().values():
            try:
                event = parse_event(line)
            except LogSyntaxError:
                continue  # not a line this referee wrote: the config file's settings stand
            if isinstance(event, Players):
                self.config = self.config._replace(names={**self.config.names, **dict(event.names)})
            elif isinstance(event, SetRules):
                self.config = self.config._replace(rules=event.rules)

    # --- games ---------------------------------------------------------------

    def _setup_lines(self) -> list[str]:
        names = self.config.names
        lines = [Players.from_names(names).line()]
        if self.config.rules.to_tokens():
            lines.insert(0, SetRules(self.config.rules).line())
        return lines

    def _resume(self) -> None:
        game_id = self.store.latest()
        if game_id is not None:
            try:
                self.game = self.store.load(game_id)
            except JournalError as error:
                self.notice = ("Game not resumed", (str(error)[:60], "Starting a new game."))
                self.notes.append(f"game not resumed: {error}; a new game was started")
            else:
                self.game_id = game_id
                self.base_entries = self._count_setup(self.store.lines(game_id))
                self.state = FlowState.loads(self.store.flow(game_id))
                self.staged = None
                if self.state.staged is not None and self.game.phase is Phase.GAME_OVER:
                    self._restage(self.state.staged)
                if self.state.entries != len(self.game.entries):
                    self.state = FlowState()
                return
        self._new_stored_game()

    @staticmethod
    def _count_setup(lines: list[str]) -> int:
        count = 0
        for line in lines:
            if not line.startswith(("players ", "rules")):
                break
            count += 1
        return count

    def _new_stored_game(self) -> None:
        lines = self._setup_lines()
        self.game_id = self.store.new_game(lines)
        result = replay("\n".join(["euchre-log 1", *lines]))
        assert result.error is None, result.error
        self.game = result.game
        self.base_entries = len(lines)
        self.state = FlowState(entries=len(self.game.entries))
        self.staged = None
        self.result = None  # the last game's last hand is not this game's

    # --- input ---------------------------------------------------------------

    def step(self) -> Step:
        setup = None
        if self.state.mode.startswith("setup"):
            setup = Setup(dict(self.config.names), self.config.rules, self.kept_names())
        elif self.state.mode == "new-game":  # its confirmation names the new game's players
            setup = Setup(dict(self.config.names), self.config.rules)
        return build_step(self.game, self.state, self.config.layout, setup)

    def handle(self, event: ButtonEvent | Job) -> None:
        """One item from the main loop's queue: a button event, or a job."""
        if isinstance(event, ButtonEvent):
            if event.kind == HOLD:
                if event.name != self._woken_by:  # the waking press held on: still nothing
                    self._long_press(event.name)
            elif self.care.pressed():
                self._woken_by = event.name  # the panel was blank: the press only wakes it
            else:
                self._woken_by = None
                self.press(event.name)
        else:
            event(self)

    def _long_press(self, button: str) -> None:
        """A long press: of the layout's help button it takes back the tap that
        began it and opens the help pages; of any other, it is reported."""
        tap = self._tap
        if hold_opens_help(self.config.layout, button) and tap is not None and tap[0] == button:
            if tap[2] == len(self.game.entries):  # the tap entered nothing: take it back
                self.state = tap[1]
                self._save_flow()
            self._tap = None
            self.message = None
            self.browse_until = 0.0
            self._open_page(PAGES[0])
            self._held = (button, self.clock())
            return
        self._say(f"{label(button)} is held down: is the button stuck?", error=True)

    def tick(self) -> None:
        """Time-driven checks, once per pass of the main loop: a button still
        down :data:`STUCK_S` seconds after its long press is reported; the
        screen is dimmed, blanked or its picture moved (:mod:`firmware.care`)."""
        if self.care.tick():
            self._last_view = None  # the picture moved: the frame is drawn at its new place
        held = self._held
        if held is None or self.clock() < held[1] + STUCK_S:
            return
        self._held = None
        if self.is_pressed is not None and self.is_pressed(held[0]):
            self._open_page(None)
            self._say(f"{label(held[0])} is held down: is the button stuck?", error=True)

    def press(self, button: str) -> None:
        """What pressing ``button`` does now (one tap, already debounced)."""
        now = self.clock()
        self._tap = (button, self.state.copy(), len(self.game.entries))
        last, self._last_press = self._last_press, (button, now)
        asked, self._asked = self._asked, False
        if self._held is not None and self._held[0] == button:
            self._held = None  # pressed again: it was let go
        if self.page is None and any(hook(button) for hook in list(self.press_hooks)):
            return
        if self.notice is not None:  # any button shows its next screen, or dismisses it
            if self.page_at + 1 < self.page_screens():
                self.page_at += 1
            else:
                self.notice, self.page_at = None, 0
            return
        if self._showing_result(now):
            self.result_until = 0.0  # the press after a hand's end only dismisses its result
            self.message = None
            return
        if button == HELP:
            self._open_page(None if self.page is not None else PAGES[0])
            return
        if self.page is not None:
            self._turn_page(button)
            return
        browsing = now < self.browse_until
        self.browse_until = 0.0
        self.message = None
        if button == UNDO:
            self._undo()
            return
        step = self.step()
        moving = button in (PREV, NEXT)
        cursor_layout = self.config.layout == "cursor"
        if moving and not browsing and not cursor_layout and step.options:
            self.browse_until = now + BROWSE_S  # the first arrow shows the choices
            self.state.cursor = None  # on the likeliest
            return
        if cursor_layout or moving or (button == OK and browsing):
            action = self._cursor(step, button)
        else:
            action = direct_action(self.game, self.state, step, button)
        if moving and step.options and not cursor_layout:
            self.browse_until = now + BROWSE_S
        if action is not None and button == OK and self._double_tap(asked, last, now):
            self._asked = True  # a double tap asks, never answers what it opened
            self._say(twice_quickly(), error=True)
            return
        if action is not None:
            game, entries = self.game, len(self.game.entries)
            self._act(action)
            if (button == OK and self.game is game and len(game.entries) == entries
                    and self.step().name != step.name):
                self._asked = True  # it opened a question (a list, a confirmation)
        elif not (moving and step.options):
            self._say(f"{label(button)} does nothing {step.doing}: {step.instead}", error=True)
        # A refusal keeps the half-made call: its advice ("tap a suit", "must go
        # alone", "may order up or pass") is followed from there.

    @staticmethod
    def _double_tap(asked: bool, last: tuple[str, float] | None, now: float) -> bool:
        """Whether an OK now is the quick second tap of ``last``, the press
        before, an OK that opened a question (``asked``): it entered nothing and brought
        up another step (the trump list after the maker's seat, the claim or
        renege list, "Misdeal?", a set-up page, the new game's
        confirmation...), or was refused as such a tap.  Such an OK is
        refused (it asks) whatever it would do, so that what a question offers
        is read before it is answered: within
        :data:`~firmware.buttons.CONFIRM_GUARD_S` of that OK (SPEC: a quick
        second press never confirms what the first asked about)."""
        return asked and last is not None and last[0] == OK and now - last[1] < CONFIRM_GUARD_S

    def _showing_result(self, now: float) -> bool:
        """Whether the result screen of the hand just ended is up (after the
        winning hand the winner screen is shown instead)."""
        return self.result is not None and now < self.result_until and self.game.winner is None

    def _open_page(self, page: str | None, at: int = 0) -> None:
        """Show ``page`` (None: back to the table) from its screen ``at``
        (-1: its last)."""
        self.page = page
        if page == "stats":  # replayed from the kept games (each once, the live one again)
            from .stats import StatsCache, page_lines

            self._stats = self._stats or StatsCache()
            try:
                self.stats_lines = page_lines(self._stats.stats(self.store))
            except JournalError as error:
                self.stats_lines = (f"No stats: {error}",)
        self.page_at = max(0, self.page_screens() - 1) if at < 0 and page else max(at, 0)

    def page_screens(self) -> int:
        """How many screens the page shown takes (the screens' own paging)."""
        if self.page is None and self.notice is None:
            return 0
        return page_screens(self.view())

    def _turn_page(self, button: str) -> None:
        """On a page: OK (or NEXT) shows its next screen, then the next page;
        PREV the screen or page before; any other button goes back to the
        table."""
        index = PAGES.index(self.page) if self.page in PAGES else 0
        if button in (OK, NEXT):
            if self.page_at + 1 < self.page_screens():
                self.page_at += 1
            else:
                self._open_page(PAGES[index + 1] if index + 1 < len(PAGES) else None)
        elif button == PREV:
            if self.page_at > 0:
                self.page_at -= 1
            else:
                self._open_page(PAGES[index - 1] if index > 0 else None, at=-1)
        else:
            self._open_page(None)

    def _cursor(self, step: Step, button: str) -> Action | None:
        count = len(step.options)
        if count == 0:
            return None
        cursor = step.cursor_index(self.state.cursor)
        if button in (NEXT, PREV):
            self.state.cursor = (cursor + (1 if button == NEXT else -1)) % count
            self._save_flow()
            return None
        if button == OK:
            return step.options[cursor].action
        return None

    def _random_seat(self) -> Seat:
        if self.rng is None:
            import random

            self.rng = random.Random()
        return self.rng.choice(SEATS)

    def _act(self, action: Action) -> None:
        state = self.state
        if action.kind == "entry" or action.kind == "confirm":
            assert action.entry is not None
            self.enter(action.entry)
        elif action.kind == "random":
            self.enter(NewGame(self._random_seat()))
        elif action.kind == "seat":
            seat = Seat.from_str(action.value)
            reason = self._seat_reason(seat)
            if reason:
                self._say(reason, error=True)
            else:
                state.seat, state.suit, state.cursor = action.value, None, None
                self._save_flow()
        elif action.kind == "suit":
            self._pick_suit(action.value)
        elif action.kind == "alone":
            state.alone = not state.alone
            state.cursor = None
            self._save_flow()
        elif action.kind == "mode":
            self.state = FlowState(mode=action.value)
            self._save_flow()
        elif action.kind == "new-game":  # a random dealer is drawn now: the confirmation names it
            self.state = FlowState(mode="new-game", seat=action.value or str(self._random_seat()))
            self._save_flow()
        elif action.kind == "page":
            self._open_page(action.value)
        elif action.kind == "cursor":
            state.cursor = int(action.value)
            self._save_flow()
        elif action.kind == "setup-seat":
            self.state = FlowState(mode="setup-name", seat=action.value)
            self._save_flow()
        elif action.kind == "name":
            assert state.seat is not None
            seat = Seat.from_str(state.seat)
            names = {seat: action.value}
            for other, name in self.config.names.items():
                if name == action.value and other is not seat:  # a swap of two players
                    names[other] = self.config.names[seat]
            self._choose_setup(Players(tuple(names.items())), "setup-names")
        elif action.kind == "rules":
            self._choose_setup(SetRules(RULE_PROFILES[action.value]), "setup")
        elif action.kind == "start-score":  # the set-up menu's game from a score
            start = next_start(state, self.config.rules, action.value)
            self.state = FlowState(mode="setup-score", start=start, cursor=state.cursor)
            self._save_flow()

    def _choose_setup(self, choice: Players | SetRules, back_to: str) -> None:
        """A set-up menu choice: kept for the games to come, and entered in the
        current game too while it has no first dealer yet."""
        if isinstance(choice, Players):
            self.set_next_names(dict(choice.names))
            entry: Players | SetRules = Players.from_names(self.config.names)
        else:
            self.set_next_rules(choice.rules)
            entry = choice
        if self.game.phase is Phase.SETUP:
            self.enter(entry)
        self.state = FlowState(mode=back_to)
        self._save_flow()

    def _seat_reason(self, seat: Seat) -> str | None:
        """Why ``seat`` cannot make or pass now (None if it can)."""
        legal = self.game.legal_entries()
        if any(isinstance(e, (Order, Call, Make, Pass)) and e.seat is seat for e in legal):
            return None
        return self.game.check(Pass(seat))

    def _pick_suit(self, value: str) -> None:
        assert self.state.seat is not None
        seat, suit = Seat.from_str(self.state.seat), Suit.from_str(value)
        reasons = [self.game.check(bid_entry(self.game, seat, suit, alone))
                   for alone in (self.state.alone, not self.state.alone)]
        if reasons[0] is not None and reasons[1] is not None:
            self._say(reasons[0], error=True)
            return
        if reasons[0] is not None:
            self.state.alone = not self.state.alone
        self.state.suit, self.state.cursor = value, None
        self._save_flow()

    def load_game(self, entries: Sequence[str]) -> int:
        """Store a checked log's entries as a new game and make it the current
        one, exactly as it would be resumed after a reboot; returns its id."""
        return self.adopt_game(self.store.new_game(list(entries)), entries)

    def adopt_game(self, game_id: int, entries: Sequence[str],
                   replayed: Game | None = None) -> int:
        """Make stored game ``game_id`` (whose lines are ``entries``) the
        current one.  ``replayed``: those lines already replayed (off the main
        loop: a long log), taken as the game instead of replaying them here."""
        if replayed is not None and self.store.latest() == game_id:
            self.game, self.game_id, self.staged = replayed, game_id, None
            self.base_entries = self._count_setup(list(entries))
            self.state = FlowState(entries=len(replayed.entries))
        else:
            self._resume()  # the newest stored game
        if self.game_id != game_id:  # pragma: no cover - the journal refused it
            raise JournalError(f"game {game_id} was stored but did not load")
        self.result = None
        self._say(f"Game {game_id} loaded", error=False)
        self._notify(f"# game {game_id} loaded over the serial link: it is the current game")
        return game_id

    def start_new_game(self) -> int:
        """Start a new stored game now with the names and rules set for the
        games to come (a club round's assignment); the game in progress stays
        stored as it is.  Returns the new game's id."""
        self._new_stored_game()
        self.result = None
        return self.game_id

    def enter(self, entry: Entry) -> str | None:
        """Check, journal (durably), then apply one entry.  Returns the reason
        it was refused (also shown), or None once it is durable and applied."""
        game = self.game
        if game.phase is Phase.GAME_OVER and isinstance(entry, NewGame):
            return self._stage(entry)
        staged = self.staged
        try:
            reason = game.check(entry) or next(
                (said for said in (guard(game, entry) for guard in self.guards) if said), None)
            if reason is not None:
                self._say(reason, error=True)
                return reason
            results = len(game.results)
            line = entry.line()
            fresh = FlowState(entries=len(game.entries) + 1)
            if staged is None:
                self.store.append(self.game_id, line, flow=fresh.dumps())
            else:  # the new game's first real entry: now it is a stored game
                self.game_id = self.store.new_game([e.line() for e in game.entries] + [line])
                self.staged = None
        except JournalError as error:
            return self._journal_failed(error)
        self._journal_works()
        game.push(entry)
        self.state = fresh
        if isinstance(entry, Misdeal):
            self._say(misdeal_words(game), error=False)
        if staged is not None:
            self._notify(staged)
        if len(game.results) > results:
            self.result = game.results[-1]
            self.result_until = self.clock() + self.config.result_s
            if game.winner is not None and self.indicators is not None:
                self.indicators.beep(3)
        self._notify(line)
        return None

    # --- a new game after a win: staged until its first real entry -----------

    def _staged_game(self, entry: NewGame) -> Game | str:
        """The new game ``entry`` starts with the names and rules set for the
        games to come, or the reason it cannot start."""
        lines = self._setup_lines()
        game = replay("\n".join(["euchre-log 1", *lines])).game
        reason = game.check(entry)
        if reason is not None:
            return reason
        game.push(entry)
        return game

    def _stage(self, entry: NewGame) -> str | None:
        """A new game confirmed after a win: shown at once and kept (durably)
        in the finished game's flow; its first real entry stores it as a game
        of its own (:meth:`enter`), and till then UNDO goes back to the
        finished game (:meth:`_unstage`), which the journal keeps as it was."""
        game = self._staged_game(entry)
        if isinstance(game, str):
            self._say(game, error=True)
            return game
        state = FlowState(entries=len(game.entries), staged=entry.line())
        try:
            self.store.save_flow(self.game_id, state.dumps(), durable=True)
        except JournalError as error:
            return self._journal_failed(error)
        self._journal_works()
        self.game, self.state, self.staged = game, state, state.staged
        self.base_entries = self._count_setup(self._setup_lines())
        self.result = None  # the last game's last hand is not this game's
        return None

    def _restage(self, line: str) -> None:
        """At a start: the new game that was staged after the win, again."""
        try:
            entry = parse_event(line)
        except LogSyntaxError:
            return
        game = self._staged_game(entry) if isinstance(entry, NewGame) else "not a game line"
        if not isinstance(game, str):
            self.game, self.staged = game, line
            self.base_entries = self._count_setup(self._setup_lines())

    def _unstage(self) -> str | None:
        """UNDO before the staged new game's first real entry: back to the
        finished game (its winner screen; UNDO again reopens its last hand)."""
        try:
            finished = self.store.load(self.game_id)
            fresh = FlowState(entries=len(finished.entries))
            self.store.save_flow(self.game_id, fresh.dumps(), durable=True)
        except JournalError as error:
            return self._journal_failed(error)
        self._journal_works()
        entry = self.game.entries[-1]
        self.game, self.state, self.staged, self.result = finished, fresh, None, None
        self.base_entries = self._count_setup(self.store.lines(self.game_id))
        self.undone = undo_words(self.game, entry, None) + ": back to the finished game"
        self._say(self.undone, error=False)
        return None

    def _flow_text(self) -> str:
        """The flow state as kept in the journal (with the staged new game)."""
        self.state.staged = self.staged
        return self.state.dumps()

    def _undo(self) -> None:
        if not self.state.is_empty:
            self.state = FlowState(entries=len(self.game.entries))
            self._save_flow()
            return
        self.undo()

    def undo(self) -> str | None:
        """Undo the last entry of the game (journalled); returns a refusal reason."""
        if self.staged is not None:
            return self._unstage()
        if len(self.game.entries) <= self.base_entries:
            reason = "nothing to undo: this is the start of the game"
            self._say(reason, error=True)
            return reason
        fresh = FlowState(entries=len(self.game.entries) - 1)
        try:
            self.store.append(self.game_id, "undo", flow=fresh.dumps())
        except JournalError as error:
            return self._journal_failed(error)
        self._journal_works()
        results, won = list(self.game.results), self.game.winner is not None
        removed = self.game.undo()
        self.state = fresh
        self.result = None
        reopened = results[-1] if len(self.game.results) < len(results) else None
        self.undone = undo_words(self.game, removed, reopened, won)
        self._say(self.undone, error=False)
        self._notify("undo")
        return None

    def _notify(self, line: str) -> None:
        for listener in list(self.listeners):
            listener(line)

    def _save_flow(self) -> None:
        self.state.entries = len(self.game.entries)
        try:
            self.store.save_flow(self.game_id, self._flow_text())
        except JournalError as error:
            self._journal_failed(error)  # the selection stays on the screen, not kept
        else:
            self._journal_works()

    def say(self, text: str) -> None:
        """Show ``text`` on the screen's message line for a while (news, not a refusal)."""
        self._say(text, error=False)

    def fault(self, what: str, error: BaseException) -> str:
        """A job that failed (``what``: ``"club: the director's handover for
        table 3 not taken"``): one line with the cause in words, in the log
        and on the screen (a refusal's beep); the game and the journal stay as
        they were.  Returns the line."""
        line = f"{what}: {fault_words(error)}"
        log.error("%s", line)
        self._say(line, error=True)
        return line

    def _say(self, text: str, *, error: bool) -> None:
        self.message = text
        self.message_is_error = error
        self.message_until = self.clock() + self.config.message_s
        if error and self.indicators is not None:
            self.indicators.beep(1)

    # --- output --------------------------------------------------------------

    def view(self) -> View:
        """What the screen shows now (built by :func:`~firmware.views.build_view`)."""
        now = self.clock()
        message = self.message if self.message and now < self.message_until else None
        return build_view(
            self.game, self.state, self.config.layout, self.step,
            message=message, message_is_error=self.message_is_error, flags=self.flags,
            notice=self.notice, page=self.page, page_at=self.page_at,
            browsing=now < self.browse_until, stats_lines=self.stats_lines,
            result=self.result if self._showing_result(now) else None,
            other_names=(*self.config.names.values(),
                         *(self.kept_names() if self.state.mode == "setup-name" else ())))

    def attach_inputs(self, *, indicators: Indicators | None,
                      is_pressed: Callable[[str], bool] | None) -> None:
        """Take the buttons' ``is_pressed`` and the buzzer and LEDs once they
        exist (``run`` makes them after the first frame); the seat LEDs light
        at once."""
        self.indicators = indicators
        self.is_pressed = is_pressed
        self._light_seats()

    def next_deadline(self) -> float | None:
        """When the view will change by itself (a message, a result, the choice
        strip expiring; a long-pressed button due for its stuck check; the
        screen's care: dimming, blanking, moving the picture)."""
        now = self.clock()
        times = [self.message_until, self.result_until, self.browse_until]
        if self._held is not None and self.is_pressed is not None:
            times.append(self._held[1] + STUCK_S)
        care = self.care.next_deadline()
        if care is not None:
            times.append(care)
        deadlines = [t for t in times if t > now]
        return min(deadlines) if deadlines else None

    def refresh(self) -> bool:
        """Draw the view if it changed; True when a frame was handed to the display."""
        view = self.view()
        if view == self._last_view:
            return False
        image = self.render(view)
        self._last_view = view
        if self.display is not None:
            try:
                self.display.show(image)
            except OSError:
                self.display_errors += 1
                self._last_view = None  # try again on the next pass
                return False
        self.frames += 1
        self.care.shown(view)
        self._light_seats()
        return True

    def _light_seats(self) -> None:
        if self.indicators is None or not self.config.seat_led_pins:
            return
        game = self.game
        dealer: set[str] = set()
        leader: set[str] = set()
        if game.phase is Phase.IN_GAME:  # the dealer's LED steady, the leader's blinking
            dealer, leader = {str(game.hand.dealer)}, {str(game.hand.leader)}
        fitted = set(self.config.seat_led_pins)
        self.indicators.light(dealer & fitted, blinking=leader & fitted)

    def run(self, events: Inbox, *, stop: Callable[[], bool] = lambda: False,
            on_loop: Callable[[], None] | None = None, poll: float = 1.0) -> None:
        """The main loop: take events, apply them, redraw on change.  A job
        that fails never stops it: a journal's refusal is said and retried
        (:meth:`retry_journal`), anything else said in one line (:meth:`fault`)."""
        self.refresh()
        while not stop():
            deadline = self.next_deadline()
            timeout = poll if deadline is None else max(0.0, min(poll, deadline - self.clock()))
            try:
                event = events.get(timeout=timeout)
            except queue.Empty:
                event = None
            if event is not None:
                try:
                    self.handle(event)
                except IllegalEntry as error:  # pragma: no cover - enter() checks first
                    self._say(str(error), error=True)
                except JournalError as error:  # a job's write refused: said, probed, retried
                    log.warning("%s", self._journal_failed(error))
                except Exception as error:  # noqa: BLE001 - a job's fault never stops the table
                    if isinstance(event, ButtonEvent):
                        raise
                    self.fault(job_name(event), error)
            self.retry_journal()
            self.tick()
            self.refresh()
            if on_loop is not None:
                on_loop()
