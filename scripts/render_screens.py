"""The referee's real screens, from a scripted game: the docs' pictures and
the golden images, both from the same scenes.

    .venv/bin/python scripts/render_screens.py            # docs/screens/ only
    .venv/bin/python scripts/render_screens.py --golden   # and tests/firmware/golden/
    .venv/bin/python scripts/render_screens.py OUTDIR     # the pictures elsewhere

Each scene is a :class:`firmware.app.Referee` (journal in a temporary
directory, a clock that only moves when told) driven through its public API
— ``press``, ``handle``, ``enter`` — as the table would, and the view it
really shows is captured: the same code the box runs.  ``docs/screens/NAME.png``
is each frame 4x, nearest neighbour, tinted like a white-on-black OLED, with
a contact sheet ``all.png``; ``tests/firmware/golden/NAME.png`` is the 1-bit
frame that ``tests/firmware/test_fw_screens.py`` compares with.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from PIL import Image, ImageDraw

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # the tests' one FakeClock, and the hand-built views

from support.clock import FakeClock  # noqa: E402
from support.screen_views import HAND_BUILT  # noqa: E402

from euchre_core import Rules, Seat  # noqa: E402
from firmware.app import Referee  # noqa: E402
from firmware.config import Config  # noqa: E402
from firmware.journal import Store  # noqa: E402
from firmware.screens import HEIGHT, WIDTH, render  # noqa: E402
from firmware.view import View  # noqa: E402

DOCS_DIR = REPO / "docs" / "screens"
GOLDEN_DIR = REPO / "tests" / "firmware" / "golden"
"""The real screens' golden images; the hand-built views' are in ``views/`` below it."""
VIEWS_GOLDEN_DIR = GOLDEN_DIR / "views"
REGENERATE = "python scripts/render_screens.py --golden"
"""The one command that redraws both (the golden test names it when it fails)."""

NAMES = {Seat.N: "Ragnar", Seat.E: "Sigríður", Seat.S: "Anna", Seat.W: "Þórhildur"}


@contextmanager
def referee(layout: str = "seats", rules: Rules | None = None,
            names: dict[Seat, str] | None = None) -> Iterator[tuple[Referee, FakeClock]]:
    """A fresh referee with the scenes' names (or ``names``), its journal in a
    temporary directory."""
    clock = FakeClock()
    with tempfile.TemporaryDirectory() as state:
        config = Config(state_dir=Path(state), layout=layout,  # type: ignore[arg-type]
                        names=dict(names or NAMES), rules=rules or Rules())
        app = Referee(config, Store(Path(state)), renderer=lambda view: view, clock=clock)
        try:
            yield app, clock
        finally:
            app.store.close()


def press(app: Referee, clock: FakeClock, *buttons: str) -> None:
    """Tap ``buttons`` one by one, each after any message or result has gone."""
    for button in buttons:
        clock.advance(10)
        app.press(button)


def turn_to(app: Referee, clock: FakeClock, page: str) -> None:
    """OK, screen after screen, until the first screen of ``page`` (``rules``,
    ``hands``...) is up: however many screens the pages before it take."""
    for _ in range(20):
        if app.page == page and app.page_at == 0:
            return
        press(app, clock, "OK")
    raise RuntimeError(f"OK never turned to the {page} page")


Shot = View
"""A view the app showed."""
Scene = Callable[[], dict[str, Shot]]


def shot(app: Referee) -> Shot:
    """What the app shows now."""
    return app.view()


def seats_game() -> dict[str, Shot]:
    """A game in the seats layout: the welcome, the bidding, a refusal, tricks,
    a claim, the result, help, round 2, and on to the winner."""
    shots: dict[str, Shot] = {}
    with referee() as (app, clock):
        shots["welcome"] = shot(app)
        press(app, clock, "W", "HEARTS")  # W deals; the upcard is a heart
        shots["upcard"] = shot(app)
        press(app, clock, "N", "OK", "E")  # Ragnar passes; Sigríður picks
        shots["maker"] = shot(app)
        press(app, clock, "HEARTS", "ALONE")
        shots["confirm"] = shot(app)
        press(app, clock, "OK")
        shots["table"] = shot(app)
        clock.advance(10)
        app.press("W")  # Þórhildur sits out: refused, in words
        shots["refused"] = shot(app)
        press(app, clock, "E", "E", "OK")
        shots["claim"] = shot(app)
        clock.advance(10)
        app.press("E")  # the makers took the rest
        shots["result"] = shot(app)
        press(app, clock, "HELP")
        shots["help_seats"] = shot(app)
        press(app, clock, "OK")  # the help's second screen
        shots["help_seats_2"] = shot(app)
        turn_to(app, clock, "hands")  # from help: the rules page, then the hands so far
        shots["hands_page"] = shot(app)
        press(app, clock, "OK")  # the players' stats (not shot: tests/firmware/test_fw_stats.py)
        while app.page == "stats":
            press(app, clock, "OK")  # its screens, and back to the table
        shots["last_hand"] = shot(app)
        # round 2: everyone passes the upcard, then two more pass
        press(app, clock, "SPADES")
        for _ in range(4):
            seat = str(app.game.hand.bid_turn)
            press(app, clock, seat, "OK")
        for _ in range(2):
            seat = str(app.game.hand.bid_turn)
            press(app, clock, seat, "OK")
        shots["round_2"] = shot(app)
        press(app, clock, "UNDO")
        shots["undone"] = shot(app)
        press(app, clock, "UNDO", "UNDO", "UNDO", "UNDO", "UNDO", "UNDO")
        while app.game.winner is None:  # Anna makes clubs and marches, hand after hand
            press(app, clock, "S", "CLUBS", "OK", "S", "S", "S", "S", "S")
        clock.advance(10)
        shots["winner"] = shot(app)
        press(app, clock, "W")  # a new game, Þórhildur to deal: its players, to confirm
        shots["new_game"] = shot(app)
    return shots


def house_rules_game() -> dict[str, Shot]:
    """A house-rules game: a lone defender, and the rules page."""
    shots: dict[str, Shot] = {}
    rules = Rules().replace(target=11, defend_alone=True)
    with referee(rules=rules) as (app, clock):
        press(app, clock, "N", "S", "DIAMONDS", "ALONE", "OK")  # N deals; Anna alone
        press(app, clock, "W")  # Þórhildur defends alone
        shots["lone_defender"] = shot(app)
        press(app, clock, "HELP")
        turn_to(app, clock, "rules")  # the help's screens, then the rules page
        shots["rules_page"] = shot(app)
    return shots


def cursor_game() -> dict[str, Shot]:
    """The cursor layout: a bid by moving and picking, and its help."""
    shots: dict[str, Shot] = {}
    with referee(layout="cursor") as (app, clock):
        press(app, clock, "NEXT", "OK", "NEXT", "NEXT", "OK")
        shots["cursor_bid"] = shot(app)
        press(app, clock, "HELP")
        shots["help_cursor"] = shot(app)
    return shots


def long_lists() -> dict[str, Shot]:
    """A list longer than the screen (the seats layout turns its pages: ALONE
    for more), and the winner in the cursor layout (the banner, the way on under it)."""
    shots: dict[str, Shot] = {}
    with referee() as (app, clock):
        press(app, clock, "ALONE", "E")  # the set-up menu's house rules: eight profiles
        shots["rules_menu"] = shot(app)
        press(app, clock, "ALONE")
        shots["rules_menu_2"] = shot(app)
    with referee(layout="cursor", rules=Rules(target=1)) as (app, clock):
        app.load_game(["players N=Ragnar E=Sigríður S=Anna W=Þórhildur", "rules target=1",
                       "game dealer=N", "make S C", "tricks 3"])
        clock.advance(10)
        shots["winner_cursor"] = shot(app)
        press(app, clock, "NEXT", "OK")  # Ragnar deals the new game: its players, to confirm
        shots["new_game_cursor"] = shot(app)
    return shots


LONG_NAMES = {Seat.N: "Aðalsteinunn", Seat.E: "Christopher", Seat.S: "Bartholomew",
              Seat.W: "Guðmundsdótt"}


def long_names() -> dict[str, Shot]:
    """Names of 11 and 12 letters with a lone defender: the lead line is tight,
    so every name on the screen is shortened alike (``Guðmund.``)."""
    with referee(rules=Rules(defend_alone=True), names=LONG_NAMES) as (app, clock):
        press(app, clock, "N", "S", "DIAMONDS", "ALONE", "OK", "W")  # S alone, W defends
        return {"long_names": shot(app)}


def from_a_score() -> dict[str, Shot]:
    """A game started from a score (the set-up menu's page, at NS 6, EW 4 with
    Þórhildur dealing), and a misdeal: asked, then said."""
    shots: dict[str, Shot] = {}
    with referee() as (app, clock):
        press(app, clock, "ALONE", "W")  # the set-up menu: start from a score
        press(app, clock, *["N"] * 6, *["E"] * 4, *["W"] * 3)
        shots["start_score"] = shot(app)
        press(app, clock, "OK", "HEARTS", "N", "OK")  # started; an upcard, Ragnar passes
        press(app, clock, "ALONE")
        shots["misdeal_asked"] = shot(app)
        clock.advance(10)
        app.press("OK")
        shots["misdeal_said"] = shot(app)
    return shots


def journal_moved_aside() -> dict[str, Shot]:
    """A journal damaged after a power cut: set aside, and the table told."""
    clock = FakeClock()
    with tempfile.TemporaryDirectory() as state:
        (Path(state) / "journal.sqlite3").write_bytes(b"not a database, after a power cut" * 40)
        app = Referee(Config(state_dir=Path(state), names=dict(NAMES)), Store(Path(state)),
                      renderer=lambda view: view, clock=clock)
        moved = shot(app)
        app.store.close()
    return {"journal_moved_aside": moved}


SCENES: tuple[Scene, ...] = (seats_game, house_rules_game, cursor_game, long_lists, long_names,
                             from_a_score, journal_moved_aside)


def scene_views() -> dict[str, View]:
    """Every scene's views by name (the flags cleared: they depend on the link)."""
    shots: dict[str, Shot] = {}
    for scene in SCENES:
        shots.update(scene())
    return {name: view._replace(flags=()) for name, view in shots.items()}


# --------------------------------------------------------------------------- pictures

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


def contact_sheet(tiles: list[tuple[str, Image.Image]]) -> Image.Image:
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
    return sheet


def write_golden(frames: dict[str, Image.Image], folder: Path) -> None:
    """``folder/NAME.png`` for each frame, and no other PNG left there."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    for name, frame in frames.items():
        frame.save(folder / f"{name}.png")
    print(f"{folder}: {len(frames)} golden images")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="render_screens.py",
        description="Draw the referee's real screens from a scripted game: the docs' "
        "pictures, and with --golden the test suite's golden images too.")
    parser.add_argument("out", nargs="?", type=Path, default=DOCS_DIR, metavar="OUTDIR",
                        help=f"where the pictures go (default: {DOCS_DIR.relative_to(REPO)}/, "
                        "whose old pictures are removed first)")
    parser.add_argument("--golden", action="store_true",
                        help=f"also redraw {GOLDEN_DIR.relative_to(REPO)}/ and its views/")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    if out.resolve() == DOCS_DIR:  # no picture of a screen that is gone
        for old in out.glob("*.png"):
            old.unlink()
    tiles: list[tuple[str, Image.Image]] = []
    frames = {name: render(view) for name, view in scene_views().items()}
    for name, frame in frames.items():
        tile = oled(frame)
        tile.save(out / f"{name}.png")
        tiles.append((name, tile))
    contact_sheet(tiles).save(out / "all.png")
    print(f"{out}: {len(tiles)} screens and all.png")
    if args.golden:
        write_golden(frames, GOLDEN_DIR)
        write_golden({name: render(view) for name, view in HAND_BUILT.items()},
                     VIEWS_GOLDEN_DIR)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
