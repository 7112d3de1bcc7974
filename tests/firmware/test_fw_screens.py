"""The screens: golden images drawn on luma's ``dummy`` device, plus exact invariants.

Two sets of goldens, both redrawn by one command, ``python scripts/render_screens.py
--golden`` (it also redraws ``docs/screens/`` from the same scenes):

- ``tests/firmware/golden/NAME.png``: the real screens, the views a
  :class:`~firmware.app.Referee` shows while the script's scenes play a game;
- ``tests/firmware/golden/views/NAME.png``: hand-built views
  (:data:`support.screen_views.HAND_BUILT`), every layout and case.

After an intended change of a layout, run the command, look at the new
images (``docs/screens/all.png``), and commit them.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from luma.core.device import dummy
from PIL import Image, ImageChops, ImageFont
from support.clock import FakeClock
from support.screen_views import HAND_BUILT
from support.scripts import load_script

from euchre_core import Rules, Seat
from firmware.app import Referee
from firmware.buttons import BUTTONS
from firmware.config import Config, ConfigError, parse_config
from firmware.fonts import (
    FontsMissing,
    can_draw,
    load_fonts,
    screen_name_problem,
    undrawable,
)
from firmware.journal import Store
from firmware.screens import (
    HEIGHT,
    MESSAGE_ROWS,
    WIDTH,
    draw,
    fit,
    key_label,
    menu_window,
    message_lines,
    page_lines,
    pages,
    render,
    talk_lines,
    wrap,
    wrap_lines,
)
from firmware.view import Choice, View

ROOT = Path(__file__).resolve().parents[2]


def drawn(font: ImageFont.FreeTypeFont, text: str,
          size: tuple[int, int] = (60, 40)) -> Image.Image:
    """``text`` in ``font`` at (0, 0) of a dark image of ``size``, no anti-aliasing."""
    from PIL import ImageDraw

    image = Image.new("1", size)
    draw = ImageDraw.Draw(image)
    draw.fontmode = "1"
    draw.text((0, 0), text, font=font, fill=1)
    return image

LONG_NAME = "Bartholomew-Maximiliánus Þórhildarson XL"  # 40 characters
assert len(LONG_NAME) == 40


SCENES = load_script("scripts/render_screens.py")
SCENE_VIEWS: dict[str, View] = SCENES.scene_views()
GOLDEN_DIR: Path = SCENES.GOLDEN_DIR
VIEWS_GOLDEN_DIR: Path = SCENES.VIEWS_GOLDEN_DIR
REGENERATE: str = SCENES.REGENERATE


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


def check_golden(name: str, image: Image.Image, golden_dir: Path = GOLDEN_DIR) -> None:
    """Compare ``image`` with ``golden_dir/name.png``; a difference or a missing
    file fails naming the command that redraws them."""
    path = golden_dir / f"{name}.png"
    if not path.exists():
        pytest.fail(f"no golden image {path}; draw them with: {REGENERATE}")
    with Image.open(path) as ref:
        ref.load()
        assert ref.mode == image.mode == "1"
        assert ref.size == image.size == (WIDTH, HEIGHT)
        bbox = ImageChops.difference(ref, image).getbbox()
    assert bbox is None, (
        f"{name}: frame differs from {path} within {bbox}; if the change is meant, "
        f"redraw the goldens and docs/screens with: {REGENERATE}")


# --------------------------------------------------------------------------- golden images


@pytest.mark.parametrize("name", sorted(SCENE_VIEWS))
def test_golden_real_screens(device: dummy, name: str) -> None:
    check_golden(name, shown(device, SCENE_VIEWS[name]))


@pytest.mark.parametrize("name", sorted(HAND_BUILT))
def test_golden_hand_built_views(device: dummy, name: str) -> None:
    check_golden(name, shown(device, HAND_BUILT[name]), VIEWS_GOLDEN_DIR)


def test_golden_files_are_exactly_the_scenes() -> None:
    """No golden image of a screen the scenes no longer make (and none missing)."""
    assert {path.stem for path in GOLDEN_DIR.glob("*.png")} == set(SCENE_VIEWS)
    assert {path.stem for path in VIEWS_GOLDEN_DIR.glob("*.png")} == set(HAND_BUILT)
    assert {path.stem for path in (ROOT / "docs" / "screens").glob("*.png")} == {
        *SCENE_VIEWS, "all"}


def test_scenes_cover_every_screen_the_table_needs() -> None:
    views = SCENE_VIEWS
    assert {view.kind for view in views.values()} == {
        "table", "menu", "result", "winner", "confirm", "help", "notice", "rules", "hands"}
    for name in ("new_game", "new_game_cursor"):  # the new game's players, to confirm
        assert views[name].kind == "confirm" and len(views[name].lines) >= 4
    shortened = draw(views["long_names"])  # names shortened alike, nothing cut
    assert shortened.cut == () and shortened.view.dealer != views["long_names"].dealer
    assert views["welcome"].hand is None
    assert views["refused"].message == "Þórhildur sits out: Sigríður went alone"
    assert views["refused"].message_is_error
    assert views["round_2"].hand == 2 and views["round_2"].trump is None
    assert views["lone_defender"].alone and views["lone_defender"].trump == "D"
    assert views["claim"].kind == "menu" and views["result"].kind == "result"
    assert views["winner"].kind == "winner"
    assert views["help_seats"].lines != views["help_cursor"].lines  # each layout's help
    assert views["cursor_bid"].choices  # the cursor layout's selector
    assert not any("Main menu" in view.title for view in views.values())


def test_missing_or_changed_golden_names_the_command(tmp_path: Path) -> None:
    image = Image.new("1", (WIDTH, HEIGHT), 0)
    with pytest.raises(pytest.fail.Exception, match=re.escape(REGENERATE)):
        check_golden("absent", image, tmp_path)
    image.save(tmp_path / "blank.png")
    check_golden("blank", image, tmp_path)  # the same frame passes
    image.putpixel((5, 5), 1)
    with pytest.raises(AssertionError, match=r"within \(5, 5, 6, 6\).*" + re.escape(REGENERATE)):
        check_golden("blank", image, tmp_path)
    assert REGENERATE == "python scripts/render_screens.py --golden"
    assert GOLDEN_DIR == Path(__file__).parent / "golden"


# --------------------------------------------------------------------------- legibility

# The recommended panel (hw/README.md): a 2.42" 128x64 SSD1309, 0.43 mm a pixel.
RECOMMENDED_PITCH_MM = 0.43
READ_AT_1_M_MM = 4.7  # 16 minutes of arc at 1 m


def _lit_rows(image: Image.Image, box: tuple[int, int, int, int], lit: int = 255) -> int:
    """Rows of ``box`` holding a pixel of value ``lit``."""
    crop = image.crop(box)
    return sum(1 for y in range(crop.height)
               if any(crop.getpixel((x, y)) == lit for x in range(crop.width)))


def test_the_score_band_is_no_block_of_lit_pixels() -> None:
    """Burn-in: the table screen is up for hours; its score boxes are outlines."""
    image = render(View(hand=3, score_ns=8, score_ew=9, dealer="Anna", leader="Ragnar",
                        prompt="x"))
    band = image.crop((0, 8, WIDTH, 22))
    lit = band.histogram()[255]
    assert lit < band.width * band.height // 4, lit


def test_score_and_dealer_are_big_enough_to_read_from_a_seat() -> None:
    need = math.ceil(READ_AT_1_M_MM / RECOMMENDED_PITCH_MM)
    view = View(hand=1, score_ns=8, score_ew=8, dealer="HEH", leader="Anna", prompt="x")
    image = render(view)
    # the score digits: lit in a thin box at each end of the big row (rows 8..21)
    assert _lit_rows(image, (2, 9, 11, 21)) >= need
    assert _lit_rows(image, (WIDTH - 11, 9, WIDTH - 2, 21)) >= need
    # the dealer's name between them, lit capitals
    assert _lit_rows(image, (20, 8, WIDTH - 20, 23)) >= need
    assert need == 11


def _measured_heights() -> dict[str, int]:
    """Pixel heights of the screen elements listed in hw/README.md's table."""
    fonts = load_fonts()

    def caps(font: ImageFont.FreeTypeFont, text: str = "H") -> int:
        box = drawn(font, text).getbbox()
        assert box is not None
        return box[3] - box[1]

    return {
        "score and dealer (table)": caps(fonts.big),
        "winner banner (largest)": caps(fonts.bold_strike(28)),
        "result lines": caps(fonts.bold),
        "all other text (capitals)": caps(fonts.small),
        "all other text (x-height)": caps(fonts.small, "x"),
    }


def test_hw_readme_table_of_heights_matches_the_fonts() -> None:
    text = (ROOT / "hw" / "README.md").read_text(encoding="utf-8")
    header = next(line for line in text.splitlines() if line.startswith("| screen element"))
    pitches = [float(p) for p in re.findall(r"([0-9.]+) mm/px", header)]
    assert RECOMMENDED_PITCH_MM in pitches
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 2 + len(pitches) and cells[1].endswith("px"):
            rows[cells[0]] = cells[1:]
    measured = _measured_heights()
    assert set(rows) == set(measured)
    for element, cells in rows.items():
        assert cells[0] == f"{measured[element]} px", element
        for pitch, cell in zip(pitches, cells[1:]):
            assert cell == f"{measured[element] * pitch:.1f} mm", (element, pitch)


# --------------------------------------------------------------------------- text shown whole


def _letters(lines: list[str] | str) -> str:
    text = "".join(lines) if isinstance(lines, list) else lines
    return "".join(text.split())


def _assert_whole(text: str, lines: list[str], room: int) -> None:
    assert len(lines) <= room, (text, lines)
    assert _letters(lines) == _letters(text), (text, lines)  # every word, no "…"


NAME_POOL = ("Ragnar", "Sigríður", "Anna", "Þórhildur", "Jo", "Maximiliánus Ø", LONG_NAME)


def _play(names: list[str], layout: str, taps: list[str], rules: Rules,
          tmp: Path) -> list[View]:
    """The views a referee shows while ``taps`` are pressed."""
    clock = FakeClock()
    config = Config(state_dir=tmp, layout=layout,  # type: ignore[arg-type]
                    names=dict(zip((Seat.N, Seat.E, Seat.S, Seat.W), names)), rules=rules)
    app = Referee(config, Store(tmp), renderer=lambda view: view, clock=clock)
    seen = [app.view()]
    try:
        for tap in taps:
            clock.advance(0.1 if tap != "OK" else 5)
            app.press(tap)
            seen.append(app.view())
    finally:
        app.store.close()
    return seen


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(names=st.lists(st.sampled_from(NAME_POOL), min_size=4, max_size=4),
       layout=st.sampled_from(["seats", "cursor"]),
       rules=st.sampled_from([Rules(), Rules().replace(defend_alone=True, target=5,
                                                         stick_the_dealer=False)]),
       seed=st.integers(0, 2**32 - 1))
def test_every_message_and_prompt_is_shown_whole(tmp_path_factory: pytest.TempPathFactory,
                                                 names: list[str], layout: str, rules: Rules,
                                                 seed: int) -> None:
    """A random game (random taps of every button, long names among them):
    each refusal or note is wrapped whole into the message box, each prompt
    with what OK does whole into the table's lines (names up to 20
    characters), each text page whole."""
    rng = random.Random(seed)
    taps = [rng.choice([*BUTTONS, "HELP", "OK", "OK"]) for _ in range(150)]
    fonts = load_fonts()
    for view in _play(names, layout, taps, rules, tmp_path_factory.mktemp("game")):
        if view.message:  # (as drawn: a long name in it may be shortened, nothing else)
            message = draw(view).view.message or ""
            _assert_whole(message, message_lines(message, fonts), MESSAGE_ROWS)
        if view.kind == "table" and max(map(len, names)) <= 20:
            # (a 40-character name takes two lines by itself: its prompts get cut)
            rows = 3 if view.choices or view.hand is None else 4
            talk = talk_lines(view, fonts.small, rows, state_rows=0)
            _assert_whole(f"{view.prompt} {'' if view.choices else view.ok_hint}", talk, rows)
        if view.kind in ("help", "notice", "rules", "hands"):
            _assert_whole(" ".join(view.lines), page_lines(view, fonts), 99)
        render(view)  # and every one draws


def test_a_refusal_naming_two_long_names_is_shown_whole() -> None:
    fonts = load_fonts()
    message = f"{LONG_NAME} sits out: {LONG_NAME} went alone"
    lines = message_lines(message, fonts)
    _assert_whole(message, lines, MESSAGE_ROWS)
    boxed = render(View(hand=1, dealer="Anna", leader="Jo", message=message))
    assert boxed.getpixel((5, 0)) == 255 and boxed.getpixel((WIDTH - 5, HEIGHT - 1)) == 255
    assert len(lines) == 6  # it takes the whole screen


@pytest.mark.parametrize("names", [("Ragnar", "Sigríður", "South", "Anna"), (LONG_NAME,) * 4])
def test_the_stuck_dealers_table_and_refusal_are_drawn_whole(
        tmp_path: Path, names: tuple[str, ...]) -> None:
    """Seven passes: the dealer must name a suit.  The table keeps its bidding
    line under the prompt and what OK does, and OK's refusal is whole (a
    40-character name shortened): its words once pushed the bidding off,
    and with it a frame no name's length could fit."""
    views = _play(list(names), "seats", ["N", *["OK"] * 7], Rules(), tmp_path)
    table = draw(views[-1])
    assert table.view.prompt.endswith(" must name a suit") and table.cut == ()
    assert "Round 2 · 3 passed" in table.texts
    refused = draw(_play(list(names), "seats", ["N", *["OK"] * 8], Rules(),
                         tmp_path / "again")[-1])
    assert refused.cut == () and refused.view.message is not None
    assert refused.view.message.startswith("OK does nothing now: stick the dealer: ")
    _assert_whole(refused.view.message, message_lines(refused.view.message, load_fonts()),
                  MESSAGE_ROWS)


def test_pages_keep_every_word_and_items_together() -> None:
    fonts = load_fonts()
    view = HAND_BUILT["hands_page_2"]
    book = pages(view, fonts)
    assert [len(page) for page in book] == [4, 4, 4, 2]
    assert book[1][0].startswith("3: ")  # an item starts its page, not its second line
    _assert_whole(" ".join(view.lines), page_lines(view, fonts), 99)


def test_a_page_shows_the_cursors_page() -> None:
    view = HAND_BUILT["hands_page_2"]
    frames = [render(view._replace(cursor=page)) for page in range(4)]
    for i in range(4):
        for j in range(i):
            assert ImageChops.difference(frames[i], frames[j]).getbbox() is not None
    past_the_end = render(view._replace(cursor=9))
    assert past_the_end.tobytes() == frames[3].tobytes()


# --------------------------------------------------------------------------- invariants


@pytest.mark.parametrize("name", sorted(HAND_BUILT))
def test_frame_is_128x64_one_bit(name: str) -> None:
    image = render(HAND_BUILT[name])
    assert image.size == (128, 64)
    assert image.mode == "1"
    assert image.getbbox() is not None  # something is lit
    histogram = image.histogram()  # lit pixels are stored as 255, like a loaded PNG's
    assert sum(histogram) == histogram[0] + histogram[255] == 128 * 64


@pytest.mark.parametrize("is_error", [True, False])
def test_message_box_covers_the_body_and_keeps_the_score(is_error: bool) -> None:
    plain = HAND_BUILT["table_alone"]
    boxed = plain._replace(message="Ragnar sits out: Anna went alone",
                          message_is_error=is_error)
    a, b = render(plain), render(boxed)
    bbox = ImageChops.difference(a, b).getbbox()
    assert bbox is not None
    assert bbox[1] >= 23  # rows 0..22 (the labels and the big score row) are untouched
    assert a.crop((0, 0, WIDTH, 23)).tobytes() == b.crop((0, 0, WIDTH, 23)).tobytes()


def test_error_and_info_messages_look_different() -> None:
    view = View(hand=1, dealer="Anna", leader="Ragnar", message="hearts was turned down")
    error = render(view)
    info = render(view._replace(message_is_error=False))
    assert ImageChops.difference(error, info).getbbox() is not None
    # the error box is inverted: far more lit pixels than the framed info box
    lit_error, lit_info = sum(error.histogram()[1:]), sum(info.histogram()[1:])
    assert lit_error > 2 * lit_info


@pytest.mark.parametrize("kind", ["table", "menu", "result", "winner", "help", "notice",
                                  "rules", "hands"])
def test_a_40_character_name_fits_everywhere(kind: str) -> None:
    view = View(
        kind=kind,  # type: ignore[arg-type]
        score_ns=12, score_ew=13, target=15, hand=123, dealer=LONG_NAME, leader=LONG_NAME,
        trump="D", maker=LONG_NAME, alone=True, tricks_ns=5, tricks_ew=5,
        prompt=f"{LONG_NAME} {LONG_NAME} {LONG_NAME}", title=LONG_NAME,
        lines=(LONG_NAME,) * 7, choices=tuple(Choice(LONG_NAME, "DIAMONDS") for _ in range(6)),
        cursor=5, message=LONG_NAME * 3, flags=("serial", "buzzer", "x"),
        ok_hint=f"OK: {LONG_NAME} passes", bidding=f"Round 2 · passed: {LONG_NAME}",
        last_hand=f"Last hand: {LONG_NAME} euchred", house_rules=True,
        lone_defender=LONG_NAME,
    )
    image = render(view)
    assert (image.size, image.mode) == ((128, 64), "1")


def test_the_new_fields_change_the_table() -> None:
    base = View(hand=2, score_ns=1, score_ew=3, dealer="Anna", leader="Ragnar",
                prompt="Ragnar to bid")
    plain = render(base)
    for change in ({"ok_hint": "OK: Ragnar passes"}, {"bidding": "Round 2 · ♥ turned down"},
                   {"last_hand": "Last hand: Anna euchred, EW +2"}, {"house_rules": True}):
        changed = render(base._replace(**change))
        assert ImageChops.difference(plain, changed).getbbox() is not None, change
    played = base._replace(trump="C", maker="Anna", alone=True)
    defended = played._replace(lone_defender="Þórhildur")
    bbox = ImageChops.difference(render(played), render(defended)).getbbox()
    assert bbox is not None and 33 <= bbox[1] and bbox[3] <= 44  # on the "Lead" line


def test_trick_counts_are_digits() -> None:
    base = View(hand=2, dealer="Anna", leader="Ragnar", trump="S", maker="Anna",
                tricks_ns=2, tricks_ew=1, prompt="Trick 4: who won?")
    two = render(base)
    three = render(base._replace(tricks_ns=3))
    bbox = ImageChops.difference(two, three).getbbox()
    assert bbox is not None and bbox[2] <= 9  # only the NS box at the left changed
    assert two.crop((0, 23, 9, 33)).tobytes() != three.crop((0, 23, 9, 33)).tobytes()


def test_flags_are_marks_in_the_top_right_corner() -> None:
    view = HAND_BUILT["help"]._replace(lines=HAND_BUILT["help"].lines[:4])  # one screen
    flagged = render(view._replace(flags=("serial", "usb")))
    bbox = ImageChops.difference(render(view), flagged).getbbox()
    assert bbox is not None
    left, top, right, bottom = bbox
    assert left >= WIDTH - 12 and top == 0 and right == WIDTH and bottom <= 7


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


def test_the_claim_menu_keeps_score_and_trump_in_view() -> None:
    claim = HAND_BUILT["menu_claim"]
    other = render(claim._replace(score_ew=6))
    bbox = ImageChops.difference(render(claim), other).getbbox()
    assert bbox is not None and bbox[3] <= 11  # the score is in the title bar
    no_trump = render(claim._replace(trump=None))
    assert ImageChops.difference(render(claim), no_trump).getbbox() is not None


def test_table_before_the_first_game_differs_from_a_hand_in_play() -> None:
    welcome = render(View(prompt="Press OK"))
    playing = render(View(hand=1, dealer="Anna", leader="Ragnar", prompt="Press OK"))
    assert ImageChops.difference(welcome, playing).getbbox() is not None


def test_unknown_kind_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown view kind 'bogus'"):
        render(View(kind="bogus"))  # type: ignore[arg-type]


def test_table_in_the_cursor_layout_shows_the_choice_under_the_cursor() -> None:
    base = HAND_BUILT["table_cursor"]
    frames = [render(base._replace(cursor=i)) for i in range(4)]
    plain = render(base._replace(choices=()))
    for i, frame in enumerate(frames):
        # the score and dealer as without the selector; all above it the same for each choice
        assert frame.crop((0, 0, WIDTH, 22)).tobytes() == plain.crop((0, 0, WIDTH, 22)).tobytes()
        assert frame.crop((0, 0, WIDTH, 53)).tobytes() == frames[0].crop(
            (0, 0, WIDTH, 53)).tobytes()
        assert frame.getpixel((64, 53)) == 255  # the inverted selector row
        for j in range(i):
            assert ImageChops.difference(frame, frames[j]).getbbox() is not None


# --------------------------------------------------------------------------- text fitting


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


def test_talk_lines_run_on_only_when_short_of_room() -> None:
    small = load_fonts().small
    view = View(prompt="Sigríður: which trump?", ok_hint="OK: Sigríður passes")
    assert talk_lines(view, small, 4) == [
        "Sigríður: which", "trump?", "OK: Sigríður passes"]  # 3 lines apart, 1 left
    assert talk_lines(view, small, 3, state_rows=1) == [
        "Sigríður: which", "trump?", "OK: Sigríður passes"]  # apart: no fewer lines run on
    short = View(prompt="Trick 1", ok_hint="OK: claim")
    assert talk_lines(short, small, 2, state_rows=1) == ["Trick 1 OK: claim"]  # run on
    assert talk_lines(short, small, 3, state_rows=1) == ["Trick 1", "OK: claim"]
    assert talk_lines(View(prompt="Trick 1: who won?", ok_hint="OK: claim"), small, 4) == [
        "Trick 1: who won?", "OK: claim"]


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


def test_key_labels() -> None:
    assert [key_label(k) for k in ("N", "HEARTS", "SPADES", "DIAMONDS", "CLUBS")] == [
        "N", "♥", "♠", "♦", "♣"]
    assert [key_label(k) for k in ("ALONE", "UNDO", "OK", "", "extra")] == [
        "A", "U", "OK", "", "E"]


# --------------------------------------------------------------------------- fonts


def test_suits_and_accented_letters_have_glyphs() -> None:
    fonts = load_fonts()

    def mask(font: ImageFont.FreeTypeFont, text: str) -> bytes:
        return drawn(font, text, (40, 24)).tobytes()

    for font in (fonts.small, fonts.bold, fonts.large, fonts.big):
        missing = mask(font, "\U0010fffd")
        for char in "♠♥♦♣…íðÞØ⌂→":
            assert mask(font, char) != missing, char
            assert mask(font, char) != mask(font, " "), char
    assert can_draw("Sigríður Þórhildur Ø ♠♥♦♣ Žofia Jürgen Łukasz Ньютон")


def test_the_fonts_ship_with_the_program() -> None:
    fonts = load_fonts()
    folder = ROOT / "firmware" / "fontfiles"
    assert fonts.font_dir == folder
    assert {path.name for path in folder.glob("*.otb")} == {"terminus-normal.otb",
                                                            "terminus-bold.otb"}
    assert "SIL OPEN FONT LICENSE Version 1.1" in (folder / "OFL.txt").read_text()
    assert not str(fonts.font_dir).startswith("/usr/share")


def test_missing_font_files_name_the_file_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(FontsMissing) as info:
        load_fonts(tmp_path / "none")
    assert isinstance(info.value, FileNotFoundError)
    assert str(info.value) == (
        f"font file {tmp_path / 'none' / 'terminus-normal.otb'} is missing: it ships with "
        "euchre-referee (firmware/fontfiles); reinstall it (pip install .)")
    with pytest.raises(ValueError, match=r"Terminus has no 13 px strike"):
        load_fonts().bold_strike(13)


@pytest.mark.parametrize(("name", "problem"), [
    ("Anna 😀", "letters the screen can draw, not '😀' (grinning face: no glyph)"),
    ("שרה", "letters the screen can draw, not 'ש' (hebrew letter shin: right to left), "
            "'ר' (hebrew letter resh: right to left), 'ה' (hebrew letter he: right to left)"),
    ("ليلى", "letters the screen can draw, not 'ل' (arabic letter lam: right to left), "
             "'ي' (arabic letter yeh: right to left), 'ى' (arabic letter alef maksura: "
             "right to left)"),
    ("李娜", "letters the screen can draw, not '李' (cjk unified ideograph-674e: no glyph), "
           "'娜' (cjk unified ideograph-5a1c: no glyph)"),
    ("Sigri\u0301ður", "letters the screen can draw, not '\u0301' (combining acute accent: "
                      "a separate accent: type the accented letter as one character)"),
    ("", "1 to 40 printable characters"),
])
def test_names_the_screen_cannot_draw_are_refused_with_the_reason(name: str,
                                                                  problem: str) -> None:
    assert screen_name_problem(name) == problem
    assert not can_draw(name) or not name
    assert undrawable("Sigríður") == "" and screen_name_problem("Sigríður") is None


def test_the_config_refuses_a_name_the_screen_cannot_draw() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({"table": {"players": {"N": "Anna 😀"}}})
    assert str(info.value) == (
        "table.players.N: letters the screen can draw, not '😀' (grinning face: no glyph)")
    assert parse_config({"table": {"players": {"E": "Sigríður"}}}).names[Seat.E] == "Sigríður"


def test_the_emulator_refuses_players_the_screen_cannot_draw() -> None:
    from firmware.cli import build_parser
    from firmware.emulator.run import emulator_config

    args = build_parser().parse_args(["emulate", "--players", "N=Ragnar E=🂡Ace"])
    with pytest.raises(ConfigError) as info:
        emulator_config(args)
    assert str(info.value) == ("--players: E's name must be letters the screen can draw, "
                               "not '🂡' (playing card ace of spades: no glyph)")


def test_the_serial_link_refuses_players_the_screen_cannot_draw(tmp_path: Path) -> None:
    from support.serial_kit import Device, Host

    device = Device(tmp_path)
    try:
        host = Host(device.path)
        try:
            assert host.ask("players N=🙂") == [
                "error players: N's name must be letters the screen can draw, "
                "not '🙂' (slightly smiling face: no glyph)"]
            assert host.ask("players") == [  # nothing changed
                "ok next game: players N=Ragnar E=Sigríður S=South W=Anna"]
        finally:
            host.close()
    finally:
        device.close()
