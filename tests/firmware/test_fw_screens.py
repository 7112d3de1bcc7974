"""The screens: golden images drawn on luma's ``dummy`` device, plus exact invariants.

Goldens live in ``tests/firmware/golden/NAME.png``, one per
``firmware.screens.SAMPLE_VIEWS`` entry.  After an intended change of a layout,
regenerate them with ``REGENERATE_GOLDEN=1 .venv/bin/python -m pytest tests/firmware``:
that run rewrites the files and FAILS, so it can never pass silently; look at
the new images (``scripts/render_screens.py`` draws them 4x) and rerun.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from luma.core.device import dummy
from PIL import Image, ImageChops

from firmware.fonts import FontsMissing, load_fonts
from firmware.screens import (
    HEIGHT,
    SAMPLE_VIEWS,
    WIDTH,
    fit,
    key_label,
    menu_window,
    render,
    wrap,
    wrap_lines,
)
from firmware.view import Choice, View

GOLDEN_DIR = Path(__file__).parent / "golden"

try:
    load_fonts()
    _FONTS_ERROR = ""
except FontsMissing as exc:  # pragma: no cover - depends on the machine
    _FONTS_ERROR = str(exc)

needs_fonts = pytest.mark.skipif(
    bool(_FONTS_ERROR),
    reason=f"screen fonts not installed (fonts-terminus-otb, fonts-dejavu-core): {_FONTS_ERROR}",
)

LONG_NAME = "Bartholomew-Maximiliánus Þórhildarson XL"  # 40 characters
assert len(LONG_NAME) == 40


@pytest.fixture(scope="module")
def device() -> Iterator[dummy]:
    oled = dummy(width=WIDTH, height=HEIGHT, mode="1")
    oled.persist = True  # no blanking atexit hook work on a device the test owns
    yield oled


def shown(device: dummy, view: View) -> Image.Image:
    """``view`` as the dummy display holds it after ``display``."""
    device.display(render(view))
    image = device.image
    assert image is not None
    return image


def check_golden(name: str, image: Image.Image, golden_dir: Path = GOLDEN_DIR,
                 regenerate: bool | None = None) -> None:
    """Compare ``image`` with ``golden_dir/name.png``; with ``REGENERATE_GOLDEN=1``
    rewrite the file and fail (a regenerating run never passes)."""
    if regenerate is None:
        regenerate = os.environ.get("REGENERATE_GOLDEN") == "1"
    path = golden_dir / f"{name}.png"
    if regenerate:
        path.parent.mkdir(parents=True, exist_ok=True)
        image.save(path)
        pytest.fail(f"regenerated {path}; check the image, then rerun without REGENERATE_GOLDEN")
    if not path.exists():
        pytest.fail(f"no golden image {path}; create it with REGENERATE_GOLDEN=1")
    with Image.open(path) as ref:
        ref.load()
        assert ref.mode == image.mode == "1"
        assert ref.size == image.size == (WIDTH, HEIGHT)
        bbox = ImageChops.difference(ref, image).getbbox()
    assert bbox is None, f"{name}: frame differs from {path} within {bbox}"


# --------------------------------------------------------------------------- golden images


@needs_fonts
@pytest.mark.parametrize("name", sorted(SAMPLE_VIEWS))
def test_golden(device: dummy, name: str) -> None:
    check_golden(name, shown(device, SAMPLE_VIEWS[name]))


def test_samples_cover_every_kind_and_case() -> None:
    kinds = {view.kind for view in SAMPLE_VIEWS.values()}
    assert kinds == {"table", "menu", "result", "winner", "help", "notice"}
    assert SAMPLE_VIEWS["table_welcome"].hand is None
    assert SAMPLE_VIEWS["table_alone"].alone and SAMPLE_VIEWS["table_alone"].trump == "H"
    assert SAMPLE_VIEWS["table_alone"].dealer == "Sigríður"
    assert SAMPLE_VIEWS["menu_scrolled"].cursor >= 4  # scrolled past the first page
    assert SAMPLE_VIEWS["message_error"].message_is_error
    assert SAMPLE_VIEWS["message_error"].message == "Ragnar sits out: Anna went alone"


def test_regenerate_writes_and_refuses_to_pass(tmp_path: Path) -> None:
    image = Image.new("1", (WIDTH, HEIGHT), 0)
    with pytest.raises(pytest.fail.Exception, match="regenerated"):
        check_golden("blank", image, golden_dir=tmp_path, regenerate=True)
    assert (tmp_path / "blank.png").exists()
    check_golden("blank", image, golden_dir=tmp_path, regenerate=False)  # now it matches
    image.putpixel((5, 5), 1)
    with pytest.raises(AssertionError, match=r"within \(5, 5, 6, 6\)"):
        check_golden("blank", image, golden_dir=tmp_path, regenerate=False)


def test_missing_golden_fails(tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception, match="REGENERATE_GOLDEN=1"):
        check_golden("absent", Image.new("1", (WIDTH, HEIGHT)), tmp_path, regenerate=False)


# --------------------------------------------------------------------------- invariants


@needs_fonts
@pytest.mark.parametrize("name", sorted(SAMPLE_VIEWS))
def test_frame_is_128x64_one_bit(name: str) -> None:
    image = render(SAMPLE_VIEWS[name])
    assert image.size == (128, 64)
    assert image.mode == "1"
    assert image.getbbox() is not None  # something is lit
    histogram = image.histogram()  # lit pixels are stored as 255, like a loaded PNG's
    assert sum(histogram) == histogram[0] + histogram[255] == 128 * 64


@needs_fonts
@pytest.mark.parametrize("is_error", [True, False])
def test_message_box_covers_the_body_and_keeps_the_score_bar(is_error: bool) -> None:
    plain = SAMPLE_VIEWS["table_alone"]
    boxed = View(**{**plain.__dict__, "message": "Ragnar sits out: Anna went alone",
                    "message_is_error": is_error})
    a, b = render(plain), render(boxed)
    bbox = ImageChops.difference(a, b).getbbox()
    assert bbox is not None
    assert bbox[1] >= 11  # rows 0..10 (the score bar) are untouched
    assert a.crop((0, 0, WIDTH, 11)).tobytes() == b.crop((0, 0, WIDTH, 11)).tobytes()


@needs_fonts
def test_error_and_info_messages_look_different() -> None:
    view = View(hand=1, dealer="Anna", leader="Ragnar", message="hearts was turned down")
    error = render(view)
    info = render(View(**{**view.__dict__, "message_is_error": False}))
    assert ImageChops.difference(error, info).getbbox() is not None
    # the error box is inverted: far more lit pixels than the framed info box
    lit_error, lit_info = sum(error.histogram()[1:]), sum(info.histogram()[1:])
    assert lit_error > 2 * lit_info


@needs_fonts
@pytest.mark.parametrize("kind", ["table", "menu", "result", "winner", "help", "notice"])
def test_a_40_character_name_fits_everywhere(kind: str) -> None:
    view = View(
        kind=kind,  # type: ignore[arg-type]
        score_ns=12, score_ew=13, target=15, hand=123, dealer=LONG_NAME, leader=LONG_NAME,
        trump="D", maker=LONG_NAME, alone=True, tricks_ns=5, tricks_ew=5,
        prompt=f"{LONG_NAME} {LONG_NAME} {LONG_NAME}", title=LONG_NAME,
        lines=(LONG_NAME,) * 7, choices=tuple(Choice(LONG_NAME, "DIAMONDS") for _ in range(6)),
        cursor=5, message=LONG_NAME * 3, flags=("serial", "buzzer", "x"),
    )
    image = render(view)
    assert (image.size, image.mode) == ((128, 64), "1")


@needs_fonts
def test_flags_are_marks_in_the_top_right_corner() -> None:
    view = SAMPLE_VIEWS["menu_plain"]
    flagged = render(View(**{**view.__dict__, "flags": ("serial", "usb")}))
    bbox = ImageChops.difference(render(view), flagged).getbbox()
    assert bbox is not None
    left, top, right, bottom = bbox
    assert left >= WIDTH - 12 and top == 0 and right == WIDTH and bottom <= 7


@needs_fonts
def test_menu_of_ten_with_cursor_on_the_last_shows_it_highlighted() -> None:
    choices = tuple(Choice(f"Item {i}") for i in range(10))
    for cursor in range(10):
        image = render(View(kind="menu", title="Pick", choices=choices, cursor=cursor))
        first = menu_window(10, cursor)
        assert first <= cursor < first + 4
        # a highlighted row is lit at its left edge; exactly one row is
        rows = [row for row in range(4) if image.getpixel((1, 13 + row * 13 + 5))]
        assert rows == [cursor - first], cursor
    assert menu_window(10, 9) == 6
    assert menu_window(10, 0) == 0
    assert menu_window(10, 3) == 1  # one item of context below the cursor
    assert menu_window(3, 2) == 0


@needs_fonts
def test_table_before_the_first_game_differs_from_a_hand_in_play() -> None:
    welcome = render(View(prompt="Press OK"))
    playing = render(View(hand=1, dealer="Anna", leader="Ragnar", prompt="Press OK"))
    assert ImageChops.difference(welcome, playing).getbbox() is not None


def test_unknown_kind_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown view kind 'bogus'"):
        render(View(kind="bogus"))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- text fitting


@needs_fonts
def test_fit_and_wrap_exact() -> None:
    small = load_fonts().small  # Terminus 12 px: 6 px a character
    assert fit("Sigríður", small, 48) == "Sigríður"
    assert fit("Sigríður", small, 47) == "Sigríð…"
    assert fit("Maximiliánus", small, 30) == "Maxi…"
    assert wrap("Ragnar sits out: Anna went alone", small, 118, 4) == [
        "Ragnar sits out:", "Anna went alone"]
    assert wrap("Trick 4: who won it? (makers have 0, they need 3)", small, 126, 2) == [
        "Trick 4: who won it?", "(makers have 0, they…"]
    assert wrap("a\nb", small, 126, 3) == ["a", "b"]
    assert wrap("x" * 30, small, 60, 3) == ["x" * 10, "x" * 10, "x" * 10]
    assert wrap("", small, 60, 2) == [""]


@needs_fonts
def test_wrap_lines_keeps_every_item_when_short_of_room() -> None:
    small = load_fonts().small
    keys = ("N E S W: seats  ♠♥♦♣: suits", "ALONE: alone / renege", "OK: confirm, claim, pass",
            "UNDO: back one step")
    assert wrap_lines(keys, small, 126, 6) == [
        "N E S W: seats ♠♥♦♣:", "suits", "ALONE: alone / renege", "OK: confirm, claim,",
        "pass", "UNDO: back one step"]
    assert wrap_lines(keys, small, 126, 5) == [
        "N E S W: seats ♠♥♦♣:", "suits", "ALONE: alone / renege", "OK: confirm, claim,…",
        "UNDO: back one step"]
    assert wrap_lines(keys, small, 126, 3) == [
        "N E S W: seats  ♠♥♦♣…", "ALONE: alone / renege", "OK: confirm, claim,…"]
    assert wrap_lines(("a", "", "b"), small, 126, 5) == ["a", "b"]


@needs_fonts
def test_table_in_the_cursor_layout_shows_the_choice_under_the_cursor() -> None:
    base = SAMPLE_VIEWS["table_cursor"]
    frames = [render(View(**{**base.__dict__, "cursor": i})) for i in range(4)]
    plain = render(View(**{**base.__dict__, "choices": ()}))
    for i, frame in enumerate(frames):
        # the score bar, names, trump and the prompt's first line stay put
        assert frame.crop((0, 0, WIDTH, 53)).tobytes() == plain.crop((0, 0, WIDTH, 53)).tobytes()
        assert frame.getpixel((64, 53)) == 255  # the inverted selector row
        for j in range(i):
            assert ImageChops.difference(frame, frames[j]).getbbox() is not None


def test_key_labels() -> None:
    assert [key_label(k) for k in ("N", "HEARTS", "SPADES", "DIAMONDS", "CLUBS")] == [
        "N", "♥", "♠", "♦", "♣"]
    assert [key_label(k) for k in ("ALONE", "UNDO", "OK", "", "extra")] == [
        "A", "U", "OK", "", "E"]


# --------------------------------------------------------------------------- fonts


@needs_fonts
def test_suits_and_accented_letters_have_glyphs() -> None:
    fonts = load_fonts()

    def mask(font: object, text: str) -> bytes:
        image = Image.new("1", (40, 20))
        from PIL import ImageDraw

        draw = ImageDraw.Draw(image)
        draw.fontmode = "1"
        draw.text((0, 0), text, font=font, fill=1)  # type: ignore[arg-type]
        return image.tobytes()

    for font in (fonts.small, fonts.bold, fonts.large):
        missing = mask(font, "\U0010fffd")
        for char in "♠♥♦♣…íðÞØ":
            assert mask(font, char) != missing, char
            assert mask(font, char) != mask(font, " "), char


def test_missing_fonts_name_the_package(tmp_path: Path) -> None:
    with pytest.raises(FontsMissing, match="fonts-terminus-otb") as info:
        load_fonts(terminus_dir=tmp_path / "none")
    assert isinstance(info.value, FileNotFoundError)
    assert "apt-get install fonts-terminus-otb fonts-dejavu-core" in str(info.value)
    if not _FONTS_ERROR:
        with pytest.raises(FontsMissing, match="fonts-dejavu-core"):
            load_fonts(dejavu_dir=tmp_path / "none")
