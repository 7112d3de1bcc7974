"""The referee: one main loop owning all state.

Input arrives on one queue (button events from gpiozero's threads, requests
from the serial link); the loop applies each, then redraws if the view
changed.  Every entry is checked by the engine, written to the journal
(committed), and only then applied and shown: nothing acknowledged is lost.
"""

from __future__ import annotations

import dataclasses
import queue
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from drivers import HOLD, ButtonEvent, Indicators
from euchre_core import (
    SEATS,
    IllegalEntry,
    LogSyntaxError,
    Phase,
    Rules,
    Seat,
    Suit,
    Team,
    parse_event,
    replay,
)
from euchre_core.events import Call, Entry, Make, NewGame, Order, Pass, Players, SetRules
from euchre_core.game import HandResult

from .buttons import help_lines, label
from .config import Config
from .flow import Action, FlowState, Step, bid_entry, build_step, direct_action
from .store import JournalError, Store
from .summary import describe_result
from .view import Choice, View

if TYPE_CHECKING:
    from PIL import Image


class FrameSink(Protocol):
    """Where frames go: drivers.PageDiffDisplay, the emulator, a test."""

    def show(self, image: Image.Image) -> int: ...


Renderer = Callable[[View], "Image.Image"]

Job = Callable[["Referee"], Any]
"""Work for the main loop from another thread (the serial link's requests)."""

Inbox = queue.Queue[ButtonEvent | Job]
"""The main loop's queue: button events (gpiozero's threads) and jobs."""


def _default_renderer(view: View) -> Image.Image:
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
    ) -> None:
        self.config = config
        self.store = store
        self.display = display
        self.indicators = indicators
        self.render = renderer or _default_renderer
        self.clock = clock
        self.rng = rng or random.Random()
        self.message: str | None = None
        self.message_is_error = True
        self.message_until = 0.0
        self.result: HandResult | None = None
        self.result_until = 0.0
        self.show_help = False
        self.browsing = False
        """Seats layout: PREV/NEXT pressed, so the screen shows the choice under
        the cursor and OK picks it, until any other button (or OK) is pressed."""
        self.notice: tuple[str, tuple[str, ...]] | None = None
        self.flags: tuple[str, ...] = ()
        self.frames = 0
        self.display_errors = 0
        self._last_view: View | None = None
        self.listeners: list[Callable[[str], None]] = []
        """Called with each journal line once it is durable (the serial live feed)."""
        if store.moved_aside is not None:
            self.notice = (
                "Journal unreadable",
                ("It could not be read", "and was moved aside", "(kept, not deleted).",
                 "Starting clean."),
            )
        self._apply_kept_settings()
        self._resume()

    # --- settings for the games to come --------------------------------------

    def set_next_names(self, names: Mapping[Seat, str]) -> str:
        """Player names for the stored games to come (seats not given keep
        theirs); kept in the journal before it returns.  Returns the
        ``players`` line the next game will open with."""
        merged = dict(self.config.names)
        merged.update(names)
        line = Players.from_names(merged).line()
        self.store.set_setting("players", line)
        self.config = dataclasses.replace(self.config, names=merged)
        return line

    def set_next_rules(self, rules: Rules) -> None:
        """House rules for the stored games to come; kept in the journal
        before it returns."""
        self.store.set_setting("rules", SetRules(rules).line())
        self.config = dataclasses.replace(self.config, rules=rules)

    def _apply_kept_settings(self) -> None:
        """Names and rules set over the serial link outlive a restart: they
        override the config file's until they are set again."""
        for line in self.store.settings().values():
            try:
                event = parse_event(line)
            except LogSyntaxError:
                continue  # not a line this referee wrote: the config file's settings stand
            if isinstance(event, Players):
                self.config = dataclasses.replace(
                    self.config, names={**self.config.names, **dict(event.names)})
            elif isinstance(event, SetRules):
                self.config = dataclasses.replace(self.config, rules=event.rules)

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
            else:
                self.game_id = game_id
                self.base_entries = self._count_setup(self.store.lines(game_id))
                self.state = FlowState.loads(self.store.flow(game_id))
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

    # --- input ---------------------------------------------------------------

    def step(self) -> Step:
        return build_step(self.game, self.state)

    def handle(self, event: ButtonEvent | Job) -> None:
        """One item from the main loop's queue: a button event, or a job."""
        if isinstance(event, ButtonEvent):
            if event.kind == HOLD:
                self._say(f"{label(event.name)} is held down: is the button stuck?", error=True)
            else:
                self.press(event.name)
        else:
            event(self)

    def press(self, button: str) -> None:
        """What pressing ``button`` does now (one tap, already debounced)."""
        now = self.clock()
        if self.notice is not None:
            self.notice = None  # any button dismisses a notice
            return
        if button == "HELP":
            self.show_help = not self.show_help
            return
        self.show_help = False
        browsing, self.browsing = self.browsing, False
        if self.result is not None and now < self.result_until:
            self.result_until = 0.0  # a press skips the result screen and acts
        self.message = None
        if button == "UNDO":
            self._undo()
            return
        step = self.step()
        moving = button in ("PREV", "NEXT")
        if moving and not browsing and self.config.layout != "cursor" and step.options:
            self.browsing = True  # the first arrow shows the choices, the cursor on the first
            self.state.cursor = 0
            return
        if self.config.layout == "cursor" or moving or (button == "OK" and browsing):
            action = self._cursor(step, button)
        else:
            action = direct_action(self.game, self.state, step, button)
        self.browsing = moving and bool(step.options) and self.config.layout != "cursor"
        if action is not None:
            self._act(action)
        elif self.game.phase is Phase.GAME_OVER:
            self._say(self.game.game_over_text() + ": start a new game or undo", error=True)
        elif button not in ("PREV", "NEXT") or not step.options:
            self._say(f"{label(button)}: not used here ({step.hint})",
                      error=True)

    def _cursor(self, step: Step, button: str) -> Action | None:
        count = len(step.options)
        if count == 0:
            return None
        cursor = min(self.state.cursor, count - 1)
        if button in ("NEXT", "PREV"):
            self.state.cursor = (cursor + (1 if button == "NEXT" else -1)) % count
            self._save_flow()
            return None
        if button == "OK":
            return step.options[cursor].action
        return None

    def _act(self, action: Action) -> None:
        state = self.state
        if action.kind == "entry" or action.kind == "confirm":
            assert action.entry is not None
            self.enter(action.entry)
        elif action.kind == "random":
            self.enter(NewGame(self.rng.choice(SEATS)))
        elif action.kind == "seat":
            seat = Seat.from_str(action.value)
            reason = self._seat_reason(seat)
            if reason:
                self._say(reason, error=True)
            else:
                state.seat, state.suit, state.cursor = action.value, None, 0
                self._save_flow()
        elif action.kind == "suit":
            self._pick_suit(action.value)
        elif action.kind == "alone":
            state.alone = not state.alone
            state.cursor = 0
            self._save_flow()
        elif action.kind == "mode":
            state.mode, state.cursor = action.value, 0
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
        self.state.suit, self.state.cursor = value, 0
        self._save_flow()

    def load_game(self, entries: Sequence[str]) -> int:
        """Store a checked log's entries as a new game and make it the current
        one, exactly as it would be resumed after a reboot; returns its id."""
        game_id = self.store.new_game(list(entries))
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
            self._new_stored_game()
            game = self.game
        reason = game.check(entry)
        if reason is not None:
            self._say(reason, error=True)
            return reason
        results = len(game.results)
        line = entry.line()
        fresh = FlowState(entries=len(game.entries) + 1)
        self.store.append(self.game_id, line, flow=fresh.dumps())
        game.push(entry)
        self.state = fresh
        if len(game.results) > results:
            self.result = game.results[-1]
            self.result_until = self.clock() + self.config.result_s
            if game.winner is not None and self.indicators is not None:
                self.indicators.beep(3)
        self._notify(line)
        return None

    def _undo(self) -> None:
        if not self.state.is_empty:
            self.state = FlowState(entries=len(self.game.entries))
            self._save_flow()
            return
        self.undo()

    def undo(self) -> str | None:
        """Undo the last entry of the game (journalled); returns a refusal reason."""
        if len(self.game.entries) <= self.base_entries:
            reason = "nothing to undo: this is the start of the game"
            self._say(reason, error=True)
            return reason
        fresh = FlowState(entries=len(self.game.entries) - 1)
        self.store.append(self.game_id, "undo", flow=fresh.dumps())
        removed = self.game.undo()
        self.state = fresh
        self.result = None
        self._say(f"undone: {removed.line()}", error=False)
        self._notify("undo")
        return None

    def _notify(self, line: str) -> None:
        for listener in list(self.listeners):
            listener(line)

    def _save_flow(self) -> None:
        self.state.entries = len(self.game.entries)
        self.store.save_flow(self.game_id, self.state.dumps())

    def _say(self, text: str, *, error: bool) -> None:
        self.message = text
        self.message_is_error = error
        self.message_until = self.clock() + self.config.message_s
        if error and self.indicators is not None:
            self.indicators.beep(1)

    # --- output --------------------------------------------------------------

    def view(self) -> View:
        """What the screen shows now."""
        now = self.clock()
        game = self.game
        hand = game.hand
        message = self.message if self.message and now < self.message_until else None
        base: dict[str, Any] = {
            "score_ns": game.score[Team.NS],
            "score_ew": game.score[Team.EW],
            "target": game.rules.target,
            "message": message,
            "message_is_error": self.message_is_error,
            "flags": self.flags,
        }
        if self.notice is not None:
            return View(kind="notice", title=self.notice[0], lines=self.notice[1], **base)
        if self.show_help:
            return View(kind="help", title="Keys", lines=help_lines(self.config.layout), **base)
        if game.phase is Phase.GAME_OVER and game.winner is not None:
            winner = game.winner
            names = " & ".join(game.name(seat) for seat in SEATS if seat.team is winner)
            step = self.step()
            return View(
                kind="winner",
                title=f"{winner} win {game.score[winner]}-{game.score[winner.other]}",
                lines=(names, "New game: tap a seat", "or OK: random"),
                **base,
            )
        if self.result is not None and now < self.result_until:
            return View(kind="result", title=f"Hand {self.result.number}",
                        lines=describe_result(game, self.result), **base)
        step = self.step()
        if step.menu:
            return View(kind="menu", title=step.question,
                        choices=tuple(Choice(o.label, o.key) for o in step.options),
                        cursor=min(self.state.cursor, max(len(step.options) - 1, 0)), **base)
        in_game = game.phase is Phase.IN_GAME
        prompt = step.question
        if step.name == "game":
            prompt += " Tap a seat, or OK: random."
        choices: tuple[Choice, ...] = ()
        if (self.config.layout == "cursor" or self.browsing) and step.options:
            choices = tuple(Choice(o.label, o.key) for o in step.options)
        selected = ""
        if self.state.seat is not None and hand.maker is None:
            selected = game.name(Seat.from_str(self.state.seat))
        return View(
            kind="table",
            hand=hand.number if in_game else None,
            dealer=game.name(hand.dealer) if in_game else None,
            leader=game.name(hand.leader) if in_game else None,
            trump=str(hand.trump) if in_game and hand.trump is not None else None,
            maker=game.name(hand.maker) if in_game and hand.maker is not None else selected
            or None,
            alone=hand.alone if hand.maker is not None else self.state.alone,
            upcard=str(hand.upcard_suit) if in_game and hand.upcard_suit is not None else None,
            tricks_ns=hand.tricks_of(Team.NS) if in_game else 0,
            tricks_ew=hand.tricks_of(Team.EW) if in_game else 0,
            prompt=prompt,
            choices=choices,
            cursor=min(self.state.cursor, max(len(choices) - 1, 0)),
            **base,
        )

    def next_deadline(self) -> float | None:
        """When the view will change by itself (a message or result expiring)."""
        now = self.clock()
        deadlines = [t for t in (self.message_until, self.result_until) if t > now]
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
        self._light_seats()
        return True

    def _light_seats(self) -> None:
        if self.indicators is None or not self.config.seat_led_pins:
            return
        game = self.game
        lit: set[str] = set()
        if game.phase is Phase.IN_GAME:
            lit = {str(game.hand.dealer), str(game.hand.leader)}
        self.indicators.light(lit & set(self.config.seat_led_pins))

    def run(self, events: Inbox, *, stop: Callable[[], bool] = lambda: False,
            on_loop: Callable[[], None] | None = None, poll: float = 1.0) -> None:
        """The main loop: take events, apply them, redraw on change."""
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
            self.refresh()
            if on_loop is not None:
                on_loop()
