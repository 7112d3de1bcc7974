"""Frames on the wire: the real renderer, drivers.RetryingDisplay over a
luma ssd1306 on a recording I2C bus (whose RAM model shows what the panel
shows)."""

from __future__ import annotations

from pathlib import Path

import luma.core.device
import pytest
from support.app_kit import FakeBus, FakeClock, Ssd1306Ram, assert_replays, journal_lines

from drivers import Panel as LumaPanel
from drivers import PanelSettings, RetryingDisplay, open_panel
from euchre_core import Team
from firmware.app import Referee
from firmware.config import Config
from firmware.journal import Store
from firmware.screens import render
from firmware.view import View

pytestmark = pytest.mark.filterwarnings(
    "ignore:Image.Image.getdata is deprecated:DeprecationWarning")  # inside luma.oled

FULL = 128 * 64 // 8  # data bytes of a whole frame
DISPLAY_ON = b"\xaf"
SETTINGS = PanelSettings(controller="ssd1306", interface="i2c")


class Panel:
    """The bus, the display over luma's ssd1306, and the RAM they fill."""

    def __init__(self, clock: FakeClock | None = None) -> None:
        self.bus = FakeBus()
        self.display = RetryingDisplay(lambda: open_panel(SETTINGS, bus=self.bus),
                                       clock=clock or FakeClock())
        self.ram = Ssd1306Ram()
        self.mark = 0

    def sent(self) -> tuple[int, list[bytes]]:
        """Data bytes and command groups sent since the last call."""
        data, commands = self.bus.data_bytes(self.mark), self.bus.commands(self.mark)
        self.mark = self.bus.mark()
        return data, commands

    def shows(self, referee: Referee) -> bool:
        self.ram.replay(self.bus)
        return self.ram.on and self.ram.image().tobytes() == render(referee.view()).tobytes()


def boot(tmp_path: Path, panel: Panel, clock: FakeClock) -> Referee:
    return Referee(Config(state_dir=tmp_path), Store(tmp_path), display=panel.display,
                   clock=clock)  # the default renderer: firmware.screens.render


def changed_fields(before: View, after: View) -> set[str]:
    return {name for name in before._fields if getattr(before, name) != getattr(after, name)}


def test_a_changed_view_sends_its_frame_and_an_unchanged_view_sends_nothing(
    tmp_path: Path
) -> None:
    """luma's SSD1306 sends a changed frame whole (it takes no framebuffer);
    a view that did not change is not drawn, and a frame that did not change
    is not sent (luma's diff_to_previous)."""
    panel, clock = Panel(), FakeClock()
    referee = boot(tmp_path, panel, clock)
    assert referee.refresh() is True
    data, commands = panel.sent()
    # luma's set-up and its clearing of the RAM, display on, the contrast, the frame
    assert data == 2 * FULL and DISPLAY_ON in commands
    assert panel.shows(referee)
    assert referee.refresh() is False and panel.sent() == (0, [])  # unchanged: nothing

    for name in ("W", "HEARTS", "S"):  # Anna deals, hearts turned up, South chosen
        referee.press(name)
        assert referee.refresh() is True
        data, commands = panel.sent()
        assert data == FULL and DISPLAY_ON not in commands
        assert panel.shows(referee)
    before = referee.view()
    referee.press("HEARTS")  # South makes hearts: only the prompt changes
    assert changed_fields(before, referee.view()) == {"prompt", "ok_hint"}
    assert referee.refresh() is True
    assert panel.sent()[0] == FULL and panel.shows(referee)
    assert referee.refresh() is False and panel.sent() == (0, [])

    for name in ("ALONE", "OK"):  # South goes alone: Ragnar sits out
        referee.press(name)
        referee.refresh()
    panel.sent()
    referee.press("CLUBS")  # bound to nothing in the trick step: says so, game unchanged
    assert referee.view().message == (
        "♣ does nothing while the tricks are entered: tap the winner's seat, "
        "OK to claim the rest, ALONE for a renege"
    )
    assert referee.refresh() is True and panel.shows(referee)
    clock.advance(Config().message_s)
    assert referee.refresh() is True
    panel.sent()
    assert referee.refresh() is False and panel.sent() == (0, [])
    frames = referee.frames
    referee.press("N")  # refused: the message box is drawn over the frame
    assert referee.refresh() is True
    assert referee.view().message == "Ragnar sits out: South went alone"
    assert panel.sent()[0] == FULL and panel.shows(referee)
    clock.advance(Config().message_s)  # the message expires: one frame to take it away
    assert referee.next_deadline() is not None  # only the screen's care (dim, move)
    assert referee.refresh() is True and referee.frames == frames + 2
    assert referee.view().message is None and panel.shows(referee)


def test_display_unplugged_mid_hand_does_not_stop_scoring(tmp_path: Path) -> None:
    clock = FakeClock()
    panel = Panel(clock)
    referee = boot(tmp_path, panel, clock)
    for name in "W S HEARTS OK".split():
        referee.press(name)
        referee.refresh()
    panel.sent()
    panel.bus.fail_in = 1  # the next frame dies after one bus write: cable pulled mid-frame
    referee.press("S")
    assert referee.refresh() is False
    assert referee.display_errors == 1 and not panel.display.is_open
    for name in "S S E S".split():  # the hand goes on, blind
        referee.press(name)
        assert referee.refresh() is False
    assert referee.display_errors == 5
    assert (referee.game.score[Team.NS], referee.game.score[Team.EW]) == (1, 0)
    assert journal_lines(referee)[-5:] == ["trick S", "trick S", "trick S", "trick E",
                                           "trick S"]
    assert_replays(referee)
    frames = referee.frames

    panel.bus.unplugged = False  # plugged back in
    assert referee.refresh() is False  # not tried again before retry_s
    clock.advance(panel.display.retry_s)
    assert referee.refresh() is True  # the same view, but it was never shown: redrawn
    data, commands = panel.sent()
    assert data == 2 * FULL and DISPLAY_ON in commands  # luma's set-up and the whole frame
    assert referee.frames == frames + 1 and panel.display.is_open
    assert panel.shows(referee)  # the panel shows the current state: NS 1
    assert referee.view().score_ns == 1
    assert referee.refresh() is False and panel.sent() == (0, [])


def test_luma_dummy_device_gets_the_rendered_frame(tmp_path: Path) -> None:
    dummy = luma.core.device.dummy(width=128, height=64, mode="1")
    dummy.persist = True
    display = LumaPanel(dummy)
    referee = Referee(Config(state_dir=tmp_path), Store(tmp_path), display=display,
                      clock=FakeClock())
    assert referee.refresh() is True
    assert dummy.image.tobytes() == render(referee.view()).tobytes()
    referee.press("W")
    assert referee.refresh() is True
    assert dummy.image.tobytes() == render(referee.view()).tobytes()
