"""Render every sample screen to ``docs/screens/NAME.png`` (4x, crisp) and a
contact sheet ``docs/screens/all.png``.

    .venv/bin/python scripts/render_screens.py [OUTDIR]

The images are the same frames the golden-image tests check
(:data:`firmware.screens.SAMPLE_VIEWS`), scaled with nearest neighbour and
tinted like a white-on-black OLED.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from firmware.screens import HEIGHT, SAMPLE_VIEWS, WIDTH, render  # noqa: E402

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
    for name, view in SAMPLE_VIEWS.items():
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
