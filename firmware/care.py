"""Care for the screen: an OLED's pixels wear with the hours they are lit.

A club's boxes are on for an evening every week, the table screen up for
hours: :class:`ScreenCare` dims the panel after a few idle minutes (luma's
``contrast``), blanks it later (luma's ``hide``), and moves the picture by a
pixel now and then (:attr:`drivers.Panel.shift`), by the referee's clock.
Idle means no press and nothing new on the screen (a new view: an entry over
the serial link wakes it too).  The press that wakes a blank panel does
nothing else: nobody pressed it knowing what it would do.  (The score band
is drawn without a block of lit pixels: ``firmware.screens``.)

The display is anything with ``set_level`` and ``set_shift``
(:class:`drivers.RetryingDisplay`); others (the emulator, a test's list) are
left as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .config import CareConfig

ORBIT: Final = ((0, 0), (1, 0), (1, 1), (0, 1))
"""The picture's places in turn (pixels right and down): one pixel a move."""


class ScreenCare:
    """Dims, blanks and moves the picture of ``display`` by ``clock``."""

    def __init__(self, config: CareConfig, clock: Callable[[], float],
                 display: Any = None) -> None:
        self.config = config
        self.clock = clock
        self.display = display
        now = clock()
        self.last_active = now
        self.level = "on"
        """``"on"``, ``"dim"`` or ``"off"`` (blank)."""
        self.place = 0
        """Where the picture is in :data:`ORBIT`."""
        self.next_move = now + config.shift_every_s if config.shift_every_s else float("inf")
        self._seen: object = None

    # --- what happened ------------------------------------------------------------

    def pressed(self) -> bool:
        """A button was pressed: the panel is on again; True when it was blank
        (the press only woke it)."""
        blank = self.level == "off"
        self._active()
        return blank

    def shown(self, view: object) -> None:
        """``view`` is on the screen: a new one wakes the panel."""
        if view != self._seen:
            self._seen = view
            self._active()

    def _active(self) -> None:
        self.last_active = self.clock()
        self._set_level("on")

    # --- by the clock -----------------------------------------------------------------

    def tick(self) -> bool:
        """Dim, blank or move as the clock says; True when the picture moved
        (the frame is to be drawn again at its new place)."""
        now = self.clock()
        idle = now - self.last_active
        config = self.config
        if config.blank_after_s and idle >= config.blank_after_s:
            self._set_level("off")
        elif config.dim_after_s and idle >= config.dim_after_s:
            self._set_level("dim")
        if now < self.next_move:
            return False
        while self.next_move <= now:
            self.next_move += self.config.shift_every_s
        if self.level == "off":
            return False  # nothing to move on a dark panel
        self.place = (self.place + 1) % len(ORBIT)
        set_shift = getattr(self.display, "set_shift", None)
        if set_shift is None:
            return False
        set_shift(ORBIT[self.place])
        return True

    def next_deadline(self) -> float | None:
        """When :meth:`tick` has something to do next (None: never)."""
        times = [self.next_move] if self.level != "off" else []
        config = self.config
        if self.level == "on" and config.dim_after_s:
            times.append(self.last_active + config.dim_after_s)
        if self.level != "off" and config.blank_after_s:
            times.append(self.last_active + config.blank_after_s)
        finite = [time for time in times if time != float("inf")]
        return min(finite) if finite else None

    def _set_level(self, level: str) -> None:
        if level == self.level:
            return
        self.level = level
        set_level = getattr(self.display, "set_level", None)
        if set_level is not None:
            set_level(level)
