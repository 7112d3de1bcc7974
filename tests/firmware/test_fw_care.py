"""Care for the screen (burn-in), on the referee's clock (a FakeClock): the
panel dims after ``dim_after_s`` idle, blanks after ``blank_after_s`` (the
press that wakes it does nothing else), and the picture moves by a pixel
every ``shift_every_s``; the bytes are luma's, on a recording I2C bus."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from support.clock import FakeClock
from support.driver_fakes import FakeBus

from drivers import HOLD, PRESS, ButtonEvent, PanelSettings, RetryingDisplay, open_panel
from euchre_core import Seat
from euchre_core.events import NewGame
from firmware.app import Referee
from firmware.care import ORBIT
from firmware.config import CareConfig, Config
from firmware.emulator.terminal import TerminalDisplay
from firmware.journal import Store
from firmware.screens import render

pytestmark = pytest.mark.filterwarnings(
    "ignore:Image.Image.getdata is deprecated:DeprecationWarning")  # inside luma.oled

CARE = CareConfig(dim_after_s=300, blank_after_s=1800, dim_contrast=4, shift_every_s=120)
SETTINGS = PanelSettings(controller="ssd1309", interface="i2c", contrast=200)
DIM, BRIGHT = bytes([0x81, 4]), bytes([0x81, 200])
OFF, ON = bytes([0xAE]), bytes([0xAF])


class Table:
    """A referee on a FakeClock, its panel a luma SSD1309 on a recording bus."""

    def __init__(self, tmp_path: Path, care: CareConfig = CARE) -> None:
        self.clock = FakeClock()
        self.bus = FakeBus()
        self.display = RetryingDisplay(lambda: open_panel(SETTINGS, bus=self.bus),
                                       clock=self.clock, contrast=200,
                                       dim_contrast=care.dim_contrast)
        config = Config(state_dir=tmp_path, care=care, result_s=0.0)
        self.referee = Referee(config, Store(tmp_path), display=self.display, clock=self.clock)
        self.referee.refresh()
        self.mark = self.bus.mark()

    def wait(self, seconds: float) -> None:
        """The main loop's passes while ``seconds`` go by, a second at a time."""
        for _ in range(int(seconds)):
            self.clock.advance(1.0)
            self.referee.tick()
            self.referee.refresh()

    def press(self, name: str, kind: str = PRESS) -> None:
        self.referee.handle(ButtonEvent(name, kind, self.clock()))
        self.referee.refresh()

    def commands(self) -> list[bytes]:
        """Command groups sent since the last call."""
        sent = self.bus.commands(self.mark)
        self.mark = self.bus.mark()
        return sent

    def close(self) -> None:
        self.referee.store.close()


def test_idle_dims_then_blanks_and_the_waking_press_does_nothing_else(tmp_path: Path) -> None:
    table = Table(tmp_path)
    table.wait(299)
    assert table.commands() == [] or DIM not in table.commands()
    table.wait(1)
    assert table.commands() == [DIM]  # 300 s idle: dimmed
    table.wait(1499)
    assert OFF not in table.commands()
    table.wait(1)
    assert table.commands() == [OFF]  # 1800 s idle: blank
    before = table.referee.view()
    table.press("W")  # wakes the panel, and nothing else
    assert table.commands()[:2] == [ON, BRIGHT]
    assert table.referee.view() == before and table.referee.game.phase.name == "SETUP"
    table.press("W", HOLD)  # the waking press held on: still nothing
    assert table.referee.page is None and table.referee.message is None
    table.press("W")  # now it deals
    assert table.referee.view().dealer is not None
    table.close()


def test_a_press_on_a_dimmed_panel_acts_and_brightens_it(tmp_path: Path) -> None:
    table = Table(tmp_path)
    table.wait(300)
    assert DIM in table.commands()
    table.press("W")
    assert table.commands()[0] == BRIGHT
    assert table.referee.view().dealer is not None  # W dealt: the press acted
    table.close()


def test_something_new_on_the_screen_wakes_it_as_a_press_does(tmp_path: Path) -> None:
    """A laptop enters over the serial link while the panel is blank."""
    table = Table(tmp_path)
    table.wait(1800)
    assert OFF in table.commands()
    assert table.referee.enter(NewGame(Seat.from_str("N"))) is None
    table.referee.refresh()
    sent = table.commands()  # the new frame drawn while dark, then the panel on
    assert sent[-2:] == [ON, BRIGHT] and sent[0][0] == 0x21
    table.wait(299)
    assert DIM not in table.commands()  # idle counted from the entry
    table.close()


def test_the_picture_moves_a_pixel_every_shift_every_s_and_that_is_not_activity(
        tmp_path: Path) -> None:
    table = Table(tmp_path, CARE._replace(dim_after_s=500))
    frames = table.referee.frames
    table.wait(119)
    assert table.display.shift == ORBIT[0] and table.referee.frames == frames
    table.wait(1)
    assert table.display.shift == ORBIT[1]  # one pixel right (where nothing lit is cut)
    assert table.referee.frames == frames + 1  # drawn again at the new place
    table.wait(240)
    assert table.display.shift == ORBIT[3]
    table.wait(140)  # 500 s idle: the moves did not count as activity
    assert DIM in table.commands()
    table.wait(1300)  # blank: the picture stays where it is
    shift = table.display.shift
    table.wait(600)
    assert table.display.shift == shift
    table.close()


def test_the_moved_picture_is_what_the_panel_shows(tmp_path: Path) -> None:
    from support.driver_fakes import Ssd1306Ram

    table = Table(tmp_path)
    table.wait(360)  # three moves: one pixel right and down, then down only
    assert table.display.shift == ORBIT[3] == (0, 1)
    ram = Ssd1306Ram()
    ram.replay(table.bus)
    image = render(table.referee.view())
    assert image.crop((0, 63, 128, 64)).getbbox() is None  # the last row is dark: it moves
    moved = image.transform(image.size, 0, (1, 0, 0, 0, 1, -1))  # down one row
    assert ram.image().tobytes() == moved.tobytes()
    table.close()


def test_the_deadlines_wake_the_main_loop_for_the_care(tmp_path: Path) -> None:
    table = Table(tmp_path, CARE._replace(shift_every_s=0))
    start = table.clock()
    assert table.referee.next_deadline() == start + 300
    table.wait(300)
    assert table.referee.next_deadline() == start + 1800
    table.wait(1500)
    assert table.referee.next_deadline() is None
    table.close()


def test_zero_never_dims_blanks_or_moves(tmp_path: Path) -> None:
    table = Table(tmp_path, CareConfig(dim_after_s=0, blank_after_s=0, shift_every_s=0))
    table.wait(4000)
    assert table.commands() == [] and table.display.shift == (0, 0)
    assert table.referee.next_deadline() is None
    table.close()


def test_the_emulator_says_dimmed_and_draws_blank(tmp_path: Path) -> None:
    out = io.BytesIO()
    display = TerminalDisplay(out, size=lambda: (140, 45))
    display.show(render(Referee(Config(state_dir=tmp_path), Store(tmp_path),
                                renderer=lambda view: view).view()))
    display.set_level("dim")
    assert "OLED 128x64 (dimmed)" in out.getvalue().decode()
    display.set_level("off")
    text = out.getvalue().decode()
    frame = text[text.rindex("(blank: a key wakes it)"):].split("└")[0]
    assert "█" not in frame and "▀" not in frame and "▄" not in frame
