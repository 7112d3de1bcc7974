"""Render the referee's screens to ``docs/screens/NAME.png`` (4x, crisp) and a
contact sheet ``docs/screens/all.png``.

    .venv/bin/python scripts/render_screens.py [OUTDIR]

The frames come from the real app: a :class:`firmware.app.Referee` (journal in a
temporary directory) is driven by button presses through a game, and the
screen is captured at each moment worth showing — the same code the box runs.
They are scaled with nearest neighbour and tinted like a white-on-black OLED.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tempfile  # noqa: E402
from dataclasses import replace  # noqa: E402

from firmware.app import Referee  # noqa: E402
from firmware.config import Config  # noqa: E402
from firmware.screens import HEIGHT, WIDTH, render  # noqa: E402
from firmware.store import Store  # noqa: E402
from firmware.view import View  # noqa: E402


class _Clock:
    """A clock that stands still, so messages and results stay on screen."""

    now = 1000.0

    def __call__(self) -> float:
        return self.now


def screens_of_a_game() -> dict[str, View]:
    """Drive a Referee through a game and keep the views worth showing."""
    shots: dict[str, View] = {}
    clock = _Clock()
    with tempfile.TemporaryDirectory() as state:
        config = Config(state_dir=Path(state))
        referee = Referee(config, Store(Path(state)), renderer=lambda view: view, clock=clock)

        def press(*buttons: str) -> None:
            for button in buttons:
                clock.now += 10  # past any message or result
                referee.press(button)

        shots["new_game"] = referee.view()
        press("W", "HEARTS")
        shots["upcard"] = referee.view()
        press("N", "OK", "E")
        shots["maker"] = referee.view()
        press("HEARTS")
        shots["confirm"] = referee.view()
        press("ALONE", "OK")
        shots["trick_alone"] = referee.view()
        clock.now += 10
        referee.press("W")
        shots["rejected"] = referee.view()
        press("E", "E", "OK")
        shots["claim_menu"] = referee.view()
        clock.now += 10
        referee.press("E")
        shots["hand_result"] = referee.view()
        press("HELP")
        shots["help"] = referee.view()
        press("HELP")
        # play on to a win: South makes clubs and marches, hand after hand
        while referee.game.winner is None:
            press("S", "CLUBS", "OK", "S", "S", "S", "S", "S")
        clock.now += 10
        shots["winner"] = referee.view()
        referee.store.close()
    with tempfile.TemporaryDirectory() as state:
        config = Config(state_dir=Path(state), layout="cursor")
        referee = Referee(config, Store(Path(state)), renderer=lambda view: view, clock=clock)
        for button in ("NEXT", "OK", "NEXT", "NEXT", "OK"):
            clock.now += 10
            referee.press(button)
        shots["cursor_layout"] = referee.view()
        referee.store.close()
    with tempfile.TemporaryDirectory() as state:
        (Path(state) / "journal.sqlite3").write_bytes(b"not a database, after a power cut" * 40)
        referee = Referee(Config(state_dir=Path(state)), Store(Path(state)),
                          renderer=lambda view: view, clock=clock)
        shots["journal_moved_aside"] = referee.view()
        referee.store.close()
    return {name: replace(view, flags=()) for name, view in shots.items()}

SCALE = 4
LIT = (235, 245, 255)  # a cool white, like the OLED's pixels
DARK = (8, 10, 18)
SHEET_BG = (40, 42, 48)
LABEL = (200, 200, 200)
PAD = 12
COLUMNS = 3


def oled(image: Image.Image, scale: int = SCALE) -> Image.Image:
    """``image`` (mode "1") as RGB, ``scale`` times larger, nearest neighbour."""
    big = image.resize((image.width * scale, image.height * scale), Image.Resampling.NEAREST)
    rgb = Image.new("RGB", big.size, DARK)
    rgb.paste(LIT, mask=big.convert("L"))
    return rgb


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "docs" / "screens"
    out.mkdir(parents=True, exist_ok=True)
    tiles: list[tuple[str, Image.Image]] = []
    for name, view in screens_of_a_game().items():
        tile = oled(render(view))
        tile.save(out / f"{name}.png")
        tiles.append((name, tile))
        print(out / f"{name}.png")
    w, h = WIDTH * SCALE, HEIGHT * SCALE
    rows = (len(tiles) + COLUMNS - 1) // COLUMNS
    label_h = 14
    sheet = Image.new(
        "RGB", (COLUMNS * (w + PAD) + PAD, rows * (h + PAD + label_h) + PAD), SHEET_BG
    )
    draw = ImageDraw.Draw(sheet)
    for i, (name, tile) in enumerate(tiles):
        x = PAD + (i % COLUMNS) * (w + PAD)
        y = PAD + (i // COLUMNS) * (h + PAD + label_h)
        draw.text((x, y), name, fill=LABEL)
        sheet.paste(tile, (x, y + label_h))
    sheet.save(out / "all.png")
    print(out / "all.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
