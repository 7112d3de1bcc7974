"""The frame the screens draw on without Pillow (``firmware.frame``) and the
glyph cells it draws text from (``firmware.glyphs``), against Pillow itself:
the same drawing calls give the same pixels, and the shipped cells are what
``scripts/make_glyphs.py`` makes from the font files today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageChops, ImageDraw
from support.scripts import load_script

from firmware.frame import Frame
from firmware.glyphs import CELLS_FILES, FONT_DIR, NOTDEF, cells_path, load_strike

ROOT = Path(__file__).resolve().parents[2]


def _load_maker() -> ModuleType:
    return load_script("scripts/make_glyphs.py")


def same(frame: Frame, image: Image.Image) -> bool:
    return ImageChops.difference(frame.to_image(), image).getbbox() is None


# --------------------------------------------------------------------------- glyph cells


@pytest.mark.parametrize(("font_name", "size"), CELLS_FILES)
def test_the_shipped_cells_are_the_font_files_drawn_by_pillow(font_name: str, size: int) -> None:
    made = _load_maker().cells_file(font_name, size)
    assert cells_path(font_name, size).read_bytes() == made, (
        f"{cells_path(font_name, size).name} is stale: run python scripts/make_glyphs.py")


def test_every_strike_has_the_same_characters_and_reads_its_cells() -> None:
    fonts = [load_strike(font_name, size) for font_name, size in CELLS_FILES]
    assert {font.size for font in fonts} == {size for _, size in CELLS_FILES}
    small = fonts[0]
    assert (small.advance, small.size) == (6, 12)
    for font in fonts:
        for char in "A♠♥♦♣…íðÞØ⌂→ Ж":
            assert font.has_glyph(char), (font, char)
            assert len(font.cell(char)) == font.advance
            assert all(0 <= column < 1 << font.size for column in font.cell(char))
        assert not font.has_glyph("😀") and not font.has_glyph(chr(NOTDEF))
        assert font.cell("😀") == font.cell(chr(NOTDEF)) != font.cell(" ")
        assert font.cell(" ") == (0,) * font.advance
        assert font.getlength("Ragnar") == 6 * font.advance


def test_a_file_that_is_not_cells_is_refused(tmp_path: Path) -> None:
    from firmware.glyphs import BitmapFont

    bogus = tmp_path / "x.cells"
    bogus.write_bytes(b"PNG\x00" + bytes(20))
    with pytest.raises(ValueError, match="is not a glyph cells file"):
        BitmapFont(bogus)


def test_the_device_draws_a_frame_without_pillow() -> None:
    """Rendering imports neither Pillow nor luma (they cost more than the rest
    of the start): checked in a fresh interpreter."""
    code = (
        "import sys\n"
        "from firmware.screens import render\n"
        "from firmware.view import View\n"
        "frame = render(View(hand=1, dealer='Sigríður', leader='Jo', trump='H',"
        " message='Not your turn'))\n"
        "frame.pages()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PIL', 'luma')))\n"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, cwd=ROOT)
    assert shown.stdout.strip() == "[]"


# --------------------------------------------------------------------------- drawing


def _pillow_canvas(width: int, height: int) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    image = Image.new("1", (width, height), 0)
    draw = ImageDraw.Draw(image)
    draw.fontmode = "1"
    return image, draw


coordinate = st.integers(-10, 140)
colour = st.sampled_from([0, 255])


@st.composite
def boxes(draw: st.DrawFn) -> tuple[int, int, int, int]:
    x0, x1 = sorted((draw(coordinate), draw(coordinate)))
    y0, y1 = sorted((draw(st.integers(-10, 75)), draw(st.integers(-10, 75))))
    return x0, y0, x1, y1


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(
    st.tuples(st.just("rectangle"), boxes(), st.one_of(st.none(), colour),
              st.one_of(st.none(), colour)),
    st.tuples(st.just("hline"), coordinate, coordinate, st.integers(-10, 75), colour),
    st.tuples(st.just("vline"), coordinate, st.integers(-10, 75), st.integers(-10, 75), colour),
    st.tuples(st.just("points"), st.lists(st.tuples(coordinate, st.integers(-10, 75)),
                                          min_size=1, max_size=5), colour),
), max_size=8))
def test_drawing_calls_mean_what_imagedraw_means(calls: list[tuple]) -> None:  # type: ignore[type-arg]
    frame = Frame()
    image, draw = _pillow_canvas(128, 64)
    for call in calls:
        kind = call[0]
        if kind == "rectangle":
            _, box, fill, outline = call
            if box[1] == box[3] and (fill is None or outline is not None):
                continue  # Pillow draws a one-row outline two rows tall (the screens draw none)
            frame.rectangle(box, fill=fill, outline=outline)
            draw.rectangle(box, fill=fill, outline=outline)
        elif kind == "hline":
            _, x0, x1, y, fill = call
            frame.line((x0, y, x1, y), fill=fill)
            draw.line((x0, y, x1, y), fill=fill)
        elif kind == "vline":
            _, x, y0, y1, fill = call
            frame.line((x, y0, x, y1), fill=fill)
            draw.line((x, y0, x, y1), fill=fill)
        else:
            _, points, fill = call
            frame.point(points if len(points) > 1 else points[0], fill=fill)
            draw.point(points, fill=fill)
    assert same(frame, image)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 127), st.integers(0, 63)), max_size=40))
def test_pages_to_image_and_back(points: list[tuple[int, int]]) -> None:
    frame = Frame()
    image, draw = _pillow_canvas(128, 64)
    if points:
        frame.point(points, fill=255)
        draw.point(points, fill=255)
    assert frame.tobytes() == image.tobytes()
    assert Frame.from_image(image) == frame
    assert all(frame.getpixel(point) == 255 for point in points)
    pages = frame.pages()
    assert [len(page) for page in pages] == [128] * 8
    for x in range(128):
        for y in range(64):
            assert (pages[y // 8][x] >> (y % 8) & 1) == (image.getpixel((x, y)) != 0)


def test_bad_drawing_calls_are_value_errors() -> None:
    frame = Frame()
    with pytest.raises(ValueError, match="x1 must be >= x0"):
        frame.rectangle((5, 0, 4, 3), fill=255)
    with pytest.raises(ValueError, match="only horizontal and vertical"):
        frame.line((0, 0, 5, 5), fill=255)
    assert frame == Frame() and frame.copy() == frame
    assert "0 lit" in repr(frame)


def test_fonts_are_read_from_the_install() -> None:
    assert FONT_DIR == ROOT / "firmware" / "fontfiles"
    assert sorted(path.name for path in FONT_DIR.glob("*.cells")) == sorted(
        cells_path(font_name, size).name for font_name, size in CELLS_FILES)


def test_a_damaged_cells_file_is_named_with_the_fix(tmp_path: Path) -> None:
    """A cut-short glyph file (a damaged install) is refused by name, as a
    missing one is: never drawn from."""
    from firmware.fonts import FontsMissing, load_fonts

    for font_name, size in CELLS_FILES:
        (tmp_path / cells_path(font_name, size).name).write_bytes(
            cells_path(font_name, size).read_bytes())
    damaged = tmp_path / "terminus-bold-18.cells"
    damaged.write_bytes(damaged.read_bytes()[:-7])
    with pytest.raises(FontsMissing) as info:
        load_fonts(tmp_path)
    assert str(info.value) == (
        f"font file {damaged} is damaged: {damaged.stat().st_size} bytes, not "
        f"{damaged.stat().st_size + 7}: it ships with euchre-referee (firmware/fontfiles); "
        "reinstall it (pip install .)")
