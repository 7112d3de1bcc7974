"""Draw a :class:`~firmware.view.View` as a 128x64 1-bit frame.

``render(view)`` returns a mode ``"1"`` image, white (bit 1, a lit OLED pixel;
Pillow reports it as 255) on black (0).  One layout per ``view.kind``;
``view.message`` is drawn over any of them as a framed box (inverted for an
error), ``view.flags`` as tiny marks in the top-right corner.

Text is Terminus 12 px (6x12 cells, 21 characters a line) unless a layout
says otherwise; every text is fitted to its room: cut with "…" or
word-wrapped to a fixed number of lines, so no name or prompt can overflow.

:data:`SAMPLE_VIEWS` holds one representative view per layout, shared by the
golden-image tests and ``scripts/render_screens.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from PIL import Image, ImageDraw, ImageFont

from .buttons import SHORT_LABELS
from .fonts import Fonts, load_fonts
from .view import Choice, View, suit_symbol, suit_word

__all__ = [
    "HEIGHT", "SAMPLE_VIEWS", "WIDTH", "fit", "key_label", "menu_window", "render", "wrap",
    "wrap_lines",
]

WIDTH: Final = 128
HEIGHT: Final = 64
ON: Final = 255  # a lit pixel; stored as bit 1 (Pillow keeps mode "1" pixels as 0/255)
OFF: Final = 0
ELLIPSIS: Final = "…"


# Terminus 12 px: capitals occupy rows 2..9 of the 12-row cell, descenders
# rows 10..11, accents on capitals rows 0..1.  Text is placed by its cap top.
_CAP_TOP: Final = 2
_CAP_HEIGHT: Final = 8
_CHAR_W: Final = 6  # Terminus 12 px advance
_BAR_H: Final = 11  # inverted title/score bar: rows 0..10, caps on rows 1..8
_PITCH: Final = 10  # line pitch of packed small text (descender touches next cap row)

Font = ImageFont.FreeTypeFont


# --------------------------------------------------------------------------- text fitting


def _width(font: Font, text: str) -> float:
    return font.getlength(text)


def fit(text: str, font: Font, width: float) -> str:
    """``text``, or its longest prefix followed by "…", that fits ``width`` px."""
    if _width(font, text) <= width:
        return text
    cut = text
    while cut and _width(font, cut.rstrip() + ELLIPSIS) > width:
        cut = cut[:-1]
    return cut.rstrip() + ELLIPSIS if cut else ELLIPSIS


def wrap(text: str, font: Font, width: float, max_lines: int) -> list[str]:
    """Word-wrap ``text`` into at most ``max_lines`` lines of ``width`` px.

    Newlines in ``text`` start a new line; a word wider than a line is broken;
    if the text needs more lines, the last one kept ends with "…".
    """
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split():
            candidate = f"{line} {word}" if line else word
            if _width(font, candidate) <= width:
                line = candidate
                continue
            if line:
                lines.append(line)
            while _width(font, word) > width:  # hard-break an over-long word
                cut = len(word)
                while cut > 1 and _width(font, word[:cut]) > width:
                    cut -= 1
                lines.append(word[:cut])
                word = word[cut:]
            line = word
        lines.append(line)
    while len(lines) > 1 and not lines[-1]:
        lines.pop()
    if len(lines) > max_lines:
        return [*lines[: max_lines - 1], _with_ellipsis(lines[max_lines - 1], font, width)]
    return lines


def wrap_lines(lines: tuple[str, ...] | list[str], font: Font, width: float,
               max_lines: int) -> list[str]:
    """:func:`wrap` each of ``lines`` (empty ones dropped) into at most
    ``max_lines`` lines in all.

    When they do not all fit, every item still gets a line of its own (cut
    with "…"), the spare lines going to the first items; with more items than
    lines the last line kept ends with "…".
    """
    items = [line for line in lines if line.strip()]
    wrapped = [wrap(item, font, width, max_lines) for item in items]
    if sum(len(w) for w in wrapped) <= max_lines:
        return [line for w in wrapped for line in w]
    if len(items) >= max_lines:
        out = [fit(item, font, width) for item in items[:max_lines]]
        if len(items) > max_lines:
            out[-1] = _with_ellipsis(out[-1], font, width)
        return out
    out = []
    spare = max_lines - len(items)
    for item, w in zip(items, wrapped):
        take = min(len(w), 1 + spare)
        spare -= take - 1
        out += wrap(item, font, width, take)
    return out


def _with_ellipsis(text: str, font: Font, width: float) -> str:
    """``text`` cut so that it and a final "…" fit ``width`` px (it always gets one)."""
    text = text.removesuffix(ELLIPSIS)
    while text and _width(font, text.rstrip() + ELLIPSIS) > width:
        text = text[:-1]
    return text.rstrip() + ELLIPSIS


def key_label(key: str) -> str:
    """The short prefix shown for a menu choice's button: ``"N"``, ``"♥"``..."""
    if not key:
        return ""
    upper = key.upper()
    if upper in SHORT_LABELS:
        return SHORT_LABELS[upper]
    return key if len(key) <= 2 else key[:1].upper()


# --------------------------------------------------------------------------- drawing helpers


class _Canvas:
    """An image, its draw object and the fonts; small helpers over them."""

    def __init__(self, fonts: Fonts) -> None:
        self.image = Image.new("1", (WIDTH, HEIGHT), OFF)
        self.draw = ImageDraw.Draw(self.image)
        self.draw.fontmode = "1"  # no anti-aliasing: every pixel on or off
        self.fonts = fonts

    def text(self, x: float, cap_top: int, text: str, *, fill: int = ON,
             font: Font | None = None) -> None:
        """Draw small (or ``font``) text with its capitals starting at row ``cap_top``."""
        font = font or self.fonts.small
        self.draw.text((x, cap_top - _CAP_TOP), text, font=font, fill=fill)

    def text_right(self, right: float, cap_top: int, text: str, *, fill: int = ON,
                   font: Font | None = None) -> float:
        """Right-aligned text ending at x = ``right``; returns its left x."""
        font = font or self.fonts.small
        left = right - _width(font, text)
        self.text(left, cap_top, text, fill=fill, font=font)
        return left

    def text_center(self, cap_top: int, text: str, *, fill: int = ON,
                    font: Font | None = None, left: float = 0, right: float = WIDTH) -> None:
        font = font or self.fonts.small
        x = left + (right - left - _width(font, text)) / 2
        self.text(round(x), cap_top, text, fill=fill, font=font)

    def bar(self, top: int = 0, height: int = _BAR_H) -> None:
        """A full-width inverted bar (lit pixels) for black text."""
        self.draw.rectangle((0, top, WIDTH - 1, top + height - 1), fill=ON)

    def hline(self, y: int, x0: int = 0, x1: int = WIDTH - 1, dotted: bool = False) -> None:
        if dotted:
            for x in range(x0, x1 + 1, 2):
                self.draw.point((x, y), fill=ON)
        else:
            self.draw.line((x0, y, x1, y), fill=ON)


def _flag_room(view: View) -> int:
    """Pixels the flag marks take at the right end of the top bar (0 if none)."""
    return 4 * len(view.flags) + 2 if view.flags else 0


# 3x5 pixel letters for the flag marks (rows top to bottom, bit 2 = left column).
_TINY: Final[dict[str, tuple[int, ...]]] = {
    "A": (2, 5, 7, 5, 5), "B": (6, 5, 6, 5, 6), "C": (3, 4, 4, 4, 3), "D": (6, 5, 5, 5, 6),
    "E": (7, 4, 6, 4, 7), "F": (7, 4, 6, 4, 4), "G": (3, 4, 5, 5, 3), "H": (5, 5, 7, 5, 5),
    "I": (7, 2, 2, 2, 7), "J": (1, 1, 1, 5, 2), "K": (5, 5, 6, 5, 5), "L": (4, 4, 4, 4, 7),
    "M": (5, 7, 7, 5, 5), "N": (6, 5, 5, 5, 5), "O": (2, 5, 5, 5, 2), "P": (6, 5, 6, 4, 4),
    "Q": (2, 5, 5, 6, 3), "R": (6, 5, 6, 5, 5), "S": (3, 4, 2, 1, 6), "T": (7, 2, 2, 2, 2),
    "U": (5, 5, 5, 5, 7), "V": (5, 5, 5, 5, 2), "W": (5, 5, 7, 7, 5), "X": (5, 5, 2, 5, 5),
    "Y": (5, 5, 2, 2, 2), "Z": (7, 1, 2, 4, 7), "0": (7, 5, 5, 5, 7), "1": (2, 6, 2, 2, 7),
    "2": (6, 1, 2, 4, 7), "3": (6, 1, 2, 1, 6), "4": (5, 5, 7, 1, 1), "5": (7, 4, 6, 1, 6),
    "6": (3, 4, 7, 5, 7), "7": (7, 1, 2, 2, 2), "8": (7, 5, 7, 5, 7), "9": (7, 5, 7, 1, 6),
    "!": (2, 2, 2, 0, 2), "?": (6, 1, 2, 0, 2),
}  # fmt: skip


def _draw_flags(canvas: _Canvas, view: View) -> None:
    """Each flag as its first letter, 3x5 px, white in a black 5x7 tag, top right.

    On the inverted top bar the tag reads as a small black chip; on black it is
    just the letter.
    """
    if not view.flags:
        return
    x = WIDTH - _flag_room(view) + 2
    for flag in view.flags:
        letter = flag[:1].upper() or "?"
        rows = _TINY.get(letter, _TINY["?"])
        canvas.draw.rectangle((x - 1, 0, x + 3, 6), fill=OFF)
        for dy, bits in enumerate(rows):
            for dx in range(3):
                if bits & (4 >> dx):
                    canvas.draw.point((x + dx, 1 + dy), fill=ON)
        x += 4


# --------------------------------------------------------------------------- layouts


def _score_bar(canvas: _Canvas, view: View, hand: int | None = None) -> None:
    """Inverted top bar: ``NS 7  EW 5  →10  Hand 3`` (the target after the
    arrow, the hand number at the right end, before any flag marks).

    Within a cell the label and number sit closer than the cells do.  When it
    does not all fit, the gaps narrow, ``Hand 12`` shortens to ``H12``, then
    the target goes; the score always stays.
    """
    canvas.bar()
    small = canvas.fonts.small
    inner = 3  # px between a label and its number (a space is 6)

    def width(cell: tuple[str, ...]) -> float:
        return sum(_width(small, part) for part in cell) + inner * (len(cell) - 1)

    def draw(x: float, cell: tuple[str, ...]) -> None:
        for part in cell:
            canvas.text(round(x), 1, part, fill=OFF)
            x += _width(small, part) + inner

    Cell = tuple[str, ...]
    scores: list[Cell] = [("NS", str(view.score_ns)), ("EW", str(view.score_ew))]
    target: Cell = (f"→{view.target}",)
    hands: list[Cell] = [("Hand", str(hand)), (f"H{hand}",)] if hand is not None else [()]
    room = WIDTH - 4 - _flag_room(view)
    full = [*scores, target]
    options = [(full, right, gap) for gap in (9, 7) for right in hands]
    options += [(full, right, 5) for right in hands]
    options += [(scores, right, gap) for gap in (9, 7, 5) for right in hands]
    for cells, right, gap in options:
        if sum(width(cell) for cell in [*cells, right]) + gap * len(cells) <= room:
            break
    x = 2.0
    for cell in cells:
        draw(x, cell)
        x += width(cell) + gap
    if right:
        draw(WIDTH - 2 - _flag_room(view) - width(right), right)


def _tally(canvas: _Canvas, x: int, cap_top: int, label: str, count: int) -> None:
    """``NS`` and one 3x3 pip per trick won, on one text row."""
    canvas.text(x, cap_top, label)
    px = x + 2 * _CHAR_W + 3
    for _ in range(max(0, min(count, 5))):
        canvas.draw.rectangle((px, cap_top + 3, px + 2, cap_top + 5), fill=ON)
        px += 4


def _table(canvas: _Canvas, view: View) -> None:
    if view.hand is None:
        _welcome(canvas, view)
        return
    small = canvas.fonts.small
    _score_bar(canvas, view, view.hand)
    made = view.trump is not None
    tally_w = 2 * _CHAR_W + 3 + 4 * 5 if made else 0
    name_room = WIDTH - 1 - (tally_w + 7 if made else 0)
    rows = (12, 22)  # cap tops of the dealer and leader rows
    for cap_top, label, name in zip(rows, ("Deal", "Lead"), (view.dealer, view.leader)):
        canvas.text(0, cap_top, label)
        canvas.text(5 * _CHAR_W, cap_top, fit(name or "-", small, name_room - 5 * _CHAR_W))
    if made:  # the trick tally, set apart from the names by a dotted rule
        x = WIDTH - tally_w
        for y in range(rows[0] - 1, rows[1] + 10, 2):
            canvas.draw.point((x - 4, y), fill=ON)
        _tally(canvas, x, rows[0], "NS", view.tricks_ns)
        _tally(canvas, x, rows[1], "EW", view.tricks_ew)
    # trump and maker; while bidding the upcard and the maker picked so far
    cap_top = 32
    if made or view.maker:
        if made:  # the trump suit, black in a lit chip
            canvas.draw.rectangle((0, cap_top - 2, 8, cap_top + 8), fill=ON)
            canvas.text(2, cap_top, suit_symbol(view.trump), fill=OFF)
        else:  # a maker picked, the suit still to come
            canvas.draw.rectangle((0, cap_top - 2, 8, cap_top + 8), outline=ON)
            canvas.text(2, cap_top, "?")
        alone = " alone" if view.alone else ""
        up = f"Up {suit_symbol(view.upcard)}" if view.upcard and not made else ""
        room = WIDTH - 12 - _width(small, alone) - (_width(small, up) + _CHAR_W if up else 0)
        canvas.text(12, cap_top, fit(view.maker or "", small, room) + alone)
        if up:
            canvas.text_right(WIDTH - 1, cap_top, up)
    elif view.upcard:
        canvas.text(0, cap_top, f"Up {suit_symbol(view.upcard)} {suit_word(view.upcard)}")
    else:
        canvas.text(0, cap_top, "Bidding")
    canvas.hline(42, dotted=True)
    if view.choices:  # cursor layout: the prompt, then the choice under the cursor
        _prompt(canvas, view.prompt, top=44, max_lines=1)
        _selector(canvas, view, top=53)
    else:
        _prompt(canvas, view.prompt, top=44, max_lines=2)


def _selector(canvas: _Canvas, view: View, top: int) -> None:
    """The choice under the cursor as an inverted row from ``top`` to the
    bottom: ``◀ Ragnar won ▶``, the arrows showing there are more."""
    small = canvas.fonts.small
    count = len(view.choices)
    cursor = max(0, min(view.cursor, count - 1))
    canvas.draw.rectangle((0, top, WIDTH - 1, HEIGHT - 1), fill=ON)
    cap_top = top + (HEIGHT - top - _CAP_HEIGHT) // 2
    if count > 1:
        canvas.text(1, cap_top, "◀", fill=OFF)
        canvas.text_right(WIDTH - 1, cap_top, "▶", fill=OFF)
    label = fit(view.choices[cursor].label, small, WIDTH - 4 * _CHAR_W)
    canvas.text_center(cap_top, label, fill=OFF)


def _prompt(canvas: _Canvas, prompt: str, top: int, max_lines: int) -> None:
    for i, line in enumerate(wrap(prompt, canvas.fonts.small, WIDTH - 2, max_lines)):
        canvas.text(1, top + i * _PITCH, line)


def _welcome(canvas: _Canvas, view: View) -> None:
    """Before the first game: a title, the target, the dealer if chosen, the prompt."""
    fonts = canvas.fonts
    canvas.draw.rectangle((0, 0, WIDTH - 1, 15), fill=ON)
    # Terminus 16 px: capitals on rows 2..11 of the cell; put them on rows 3..12
    canvas.text_center(3, "♠♥ EUCHRE ♦♣", fill=OFF, font=fonts.large)
    info = f"Game to {view.target}"
    if view.dealer:
        options = (f"{info}, {view.dealer} deals", f"To {view.target}, {view.dealer} deals")
        info = next((o for o in options if _width(fonts.small, o) <= WIDTH - 2), None) or fit(
            f"{view.dealer} deals", fonts.small, WIDTH - 2)
    canvas.text_center(18, info)
    canvas.hline(29, dotted=True)
    if view.choices:
        _prompt(canvas, view.prompt, top=32, max_lines=2)
        _selector(canvas, view, top=53)
    else:
        _prompt(canvas, view.prompt, top=32, max_lines=3)


def _title_bar(canvas: _Canvas, view: View, title: str, mark: str = "",
               right: str = "") -> None:
    """Inverted bar with ``title``, an optional symbol ``mark`` before it and
    ``right`` text at the right end (before the flag marks)."""
    canvas.bar()
    end = WIDTH - 2 - _flag_room(view)
    if right:
        end = int(canvas.text_right(end, 1, right, fill=OFF)) - _CHAR_W
    room = end - 2
    x = 2
    if mark:
        canvas.text(x, 1, mark, fill=OFF)
        x += 2 * _CHAR_W
        room -= 2 * _CHAR_W
    canvas.text(x, 1, fit(title, canvas.fonts.small, room), fill=OFF)


_MENU_ROWS: Final = 4
_MENU_TOP: Final = 13
_MENU_PITCH: Final = 13


def menu_window(count: int, cursor: int, rows: int = _MENU_ROWS) -> int:
    """Index of the first visible choice, keeping ``cursor`` visible and, where
    it can, one choice of context after it."""
    if count <= rows:
        return 0
    cursor = max(0, min(cursor, count - 1))
    return max(0, min(cursor - rows + 2, count - rows)) if cursor >= rows - 1 else 0


def _menu(canvas: _Canvas, view: View) -> None:
    """Title bar (with ``6/7`` when the list scrolls), four rows, the cursor's
    row inverted, each choice's button in a small box before its label, and a
    scroll bar on the right when there are more than four choices."""
    small = canvas.fonts.small
    choices: tuple[Choice, ...] = view.choices
    count = len(choices)
    position = f"{min(max(view.cursor, 0), count - 1) + 1}/{count}" if count > _MENU_ROWS else ""
    _title_bar(canvas, view, view.title or "Choose", right=position)
    if not choices:
        canvas.text(2, _MENU_TOP + 2, "(nothing to choose)")
        return
    cursor = max(0, min(view.cursor, len(choices) - 1))
    first = menu_window(len(choices), cursor)
    scrolling = len(choices) > _MENU_ROWS
    right = WIDTH - (5 if scrolling else 1)
    has_keys = any(choice.key for choice in choices)
    label_x = 2 + (2 * _CHAR_W + 5 if has_keys else 0)
    for row, index in enumerate(range(first, min(first + _MENU_ROWS, len(choices)))):
        choice = choices[index]
        top = _MENU_TOP + row * _MENU_PITCH
        fill = ON
        if index == cursor:
            canvas.draw.rectangle((0, top, right - 1, top + 11), fill=ON)
            fill = OFF
        cap_top = top + 2
        if choice.key:
            key = key_label(choice.key)
            canvas.text(2 + round((2 * _CHAR_W - _width(small, key)) / 2), cap_top, key, fill=fill)
            if index != cursor:  # a thin box marks the button name
                canvas.draw.rectangle((0, top, 2 * _CHAR_W + 3, top + 11), outline=ON)
            else:
                canvas.draw.line((2 * _CHAR_W + 4, top, 2 * _CHAR_W + 4, top + 11), fill=OFF)
        label = fit(choice.label, small, right - label_x - 1)
        canvas.text(label_x, cap_top, label, fill=fill)
    if scrolling:  # a scroll bar on the right edge
        track_top, track_bottom = _MENU_TOP, HEIGHT - 1
        canvas.draw.line((WIDTH - 2, track_top, WIDTH - 2, track_bottom), fill=ON)
        span = track_bottom - track_top + 1
        thumb = max(4, span * _MENU_ROWS // len(choices))
        start = track_top + (span - thumb) * first // (len(choices) - _MENU_ROWS)
        canvas.draw.rectangle((WIDTH - 3, start, WIDTH - 1, start + thumb - 1), fill=ON)


def _result(canvas: _Canvas, view: View) -> None:
    """The hand's result: title and score in the bar, the lines large below
    (Terminus Bold 14, centred) or, if one is too long for that, small and
    word-wrapped."""
    fonts = canvas.fonts
    score = f"NS {view.score_ns}  EW {view.score_ew}"
    canvas.bar()
    score_left = canvas.text_right(WIDTH - 2 - _flag_room(view), 1, score, fill=OFF)
    canvas.text(2, 1, fit(view.title, fonts.small, score_left - 2 - _CHAR_W), fill=OFF)
    lines = [line for line in view.lines if line.strip()]
    if not lines:
        return
    if len(lines) <= 3 and all(_width(fonts.bold, line) <= WIDTH - 2 for line in lines):
        font, pitch, cap_h = fonts.bold, 17, 10  # Terminus 14: capitals rows 2..11
    else:
        font, pitch, cap_h = fonts.small, _PITCH + 1, _CAP_HEIGHT
        lines = wrap_lines(lines, font, WIDTH - 2, 4)
    block = pitch * (len(lines) - 1) + cap_h
    top = _BAR_H + (HEIGHT - _BAR_H - block + 1) // 2
    for i, line in enumerate(lines):
        canvas.text_center(top + i * pitch, line, font=font)


def _banner_font(canvas: _Canvas, text: str, height: int) -> Font:
    """The largest DejaVu Sans Bold that fits ``text`` in a banner ``height`` px tall."""
    size = height * 4 // 5
    font = canvas.fonts.sans_bold(size)
    while size > 9 and _width(font, text) > WIDTH - 6:
        size -= 1
        font = canvas.fonts.sans_bold(size)
    return font


def _winner(canvas: _Canvas, view: View) -> None:
    """A big inverted banner with the title (DejaVu Sans Bold, as large as it
    fits), the lines (names, what next) centred below, wrapped."""
    small = canvas.fonts.small
    lines = wrap_lines(view.lines, small, WIDTH - 2, 4)
    banner_h = 30 if len(lines) <= 3 else 22
    canvas.draw.rectangle((0, 0, WIDTH - 1, banner_h - 1), fill=ON)
    title = view.title or "Game over"
    font = _banner_font(canvas, title, banner_h)
    title = fit(title, font, WIDTH - 4)
    canvas.draw.text((WIDTH // 2, banner_h // 2), title, font=font, fill=OFF, anchor="mm")
    room = HEIGHT - banner_h  # rows below the banner
    block = _PITCH * (len(lines) - 1) + _CAP_HEIGHT
    top = banner_h + (room - block + 1) // 2
    for i, line in enumerate(lines):
        canvas.text_center(top + i * _PITCH, line)


def _text_page(canvas: _Canvas, view: View, mark: str) -> None:
    """``help`` and ``notice``: a title bar and up to 5 lines, wrapped."""
    _title_bar(canvas, view, view.title, mark)
    for i, line in enumerate(wrap_lines(view.lines, canvas.fonts.small, WIDTH - 2, 5)):
        canvas.text(1, 13 + i * _PITCH, line)


def _help(canvas: _Canvas, view: View) -> None:
    _text_page(canvas, view, "?")


def _notice(canvas: _Canvas, view: View) -> None:
    _text_page(canvas, view, "!")


def _message(canvas: _Canvas, view: View, keep_top: int) -> None:
    """The message box over the layout: inverted (black on white) for an
    error, white-framed on black for info; word-wrapped, at most 4 lines.

    The layout below row ``keep_top`` is cleared first (the top bar with the
    score or title stays), so no half-covered text shows around the box.
    """
    small = canvas.fonts.small
    error = view.message_is_error
    lines = wrap(view.message or "", small, WIDTH - 10, 4)
    box_h = len(lines) * _PITCH + 7
    x0, x1 = 1, WIDTH - 2
    y0 = keep_top + (HEIGHT - keep_top - box_h) // 2
    y1 = y0 + box_h - 1
    draw = canvas.draw
    draw.rectangle((0, keep_top, WIDTH - 1, HEIGHT - 1), fill=OFF)
    if error:
        draw.rectangle((x0, y0, x1, y1), fill=ON)
        draw.point([(x0, y0), (x1, y0), (x0, y1), (x1, y1)], fill=OFF)  # rounded corners
        fill = OFF
    else:
        draw.rectangle((x0, y0, x1, y1), outline=ON, fill=OFF)
        fill = ON
    for i, line in enumerate(lines):
        canvas.text_center(y0 + 4 + i * _PITCH, line, fill=fill, left=x0, right=x1 + 1)


_LAYOUTS: Final[dict[str, Callable[[_Canvas, View], None]]] = {
    "table": _table,
    "menu": _menu,
    "result": _result,
    "winner": _winner,
    "help": _help,
    "notice": _notice,
    "rules": _help,  # title and lines, like help, until they get their own layouts
    "hands": _help,
}


def render(view: View, fonts: Fonts | None = None) -> Image.Image:
    """Draw ``view``: a new 128x64 mode ``"1"`` image, lit pixels = 1.

    Raises :class:`~firmware.fonts.FontsMissing` if the font packages are not
    installed and ``ValueError`` for an unknown ``view.kind``.
    """
    layout = _LAYOUTS.get(view.kind)
    if layout is None:
        raise ValueError(f"unknown view kind {view.kind!r} (one of {', '.join(_LAYOUTS)})")
    canvas = _Canvas(fonts or load_fonts())
    layout(canvas, view)
    _draw_flags(canvas, view)
    if view.message is not None:
        has_bar = not (view.kind == "winner" or (view.kind == "table" and view.hand is None))
        _message(canvas, view, keep_top=_BAR_H if has_bar else 0)
    return canvas.image


# --------------------------------------------------------------------------- samples

SAMPLE_VIEWS: Final[dict[str, View]] = {
    "table_welcome": View(
        kind="table",
        prompt="Press OK for a new game, or hold OK to pick the first dealer at random",
    ),
    "table_bidding": View(
        kind="table", score_ns=3, score_ew=4, hand=5, dealer="Ragnar", leader="Sigríður",
        upcard="H", maker="Anna", alone=True, prompt="Anna makes: which suit?",
    ),
    "table_upcard": View(
        kind="table", score_ns=3, score_ew=4, hand=5, dealer="Ragnar", leader="Sigríður",
        upcard="H", prompt="Sigríður to bid: order up, or pass",
    ),
    "table_alone": View(
        kind="table", score_ns=7, score_ew=5, hand=3, dealer="Sigríður", leader="Anna",
        trump="H", maker="Sigríður", alone=True, tricks_ns=1, tricks_ew=2,
        prompt="Trick 4: who won it?", flags=("serial",),
    ),
    "table_long_names": View(
        kind="table", score_ns=9, score_ew=10, target=11, hand=12,
        dealer="Maximiliánus Ø", leader="Þórhildur-Björk", trump="C",
        maker="Maximiliánus Ø", tricks_ns=0, tricks_ew=3,
        prompt="Trick 4: who won it? (makers have 0, they need 3 to score)",
    ),
    "table_cursor": View(
        kind="table", score_ns=4, score_ew=6, hand=7, dealer="Anna", leader="Ragnar",
        trump="S", maker="South", tricks_ns=2, tricks_ew=1, prompt="Trick 4: who won?",
        choices=(Choice("Ragnar won", "N"), Choice("Sigríður won", "E"),
                 Choice("South won", "S"), Choice("Anna won", "W")),
        cursor=1,
    ),
    "menu_scrolled": View(
        kind="menu", title="Who made trump?",
        choices=(
            Choice("Ragnar", "N"), Choice("Sigríður", "E"), Choice("South", "S"),
            Choice("Anna", "W"), Choice("Hearts", "HEARTS"), Choice("Go alone", "ALONE"),
            Choice("Undo last entry", "UNDO"),
        ),
        cursor=5,
    ),
    "menu_plain": View(
        kind="menu", title="Main menu",
        choices=(Choice("Resume game"), Choice("New game"), Choice("Players"),
                 Choice("House rules")),
        cursor=1,
    ),
    "result": View(
        kind="result", title="Hand 4", score_ns=2, score_ew=7,
        lines=("Sigríður alone", "euchred: 2 tricks", "North-South +2"),
    ),
    "winner": View(
        kind="winner", title="NS win 10-7", score_ns=10, score_ew=7,
        lines=("Ragnar & South", "New game: tap the first dealer"),
    ),
    "help": View(
        kind="help", title="Buttons",
        lines=("N E S W: seat / trick", "♠ ♥ ♦ ♣: trump suit", "ALONE: maker alone",
               "UNDO: step back", "OK: confirm, next"),
    ),
    "notice": View(
        kind="notice", title="Journal set aside",
        lines=("The game file was damaged after a power cut.",
               "Kept as game-3.bad; resumed from the last good entry."),
    ),
    "message_error": View(
        kind="table", score_ns=7, score_ew=5, hand=3, dealer="Sigríður", leader="Anna",
        trump="H", maker="Anna", alone=True, tricks_ns=1, tricks_ew=2,
        prompt="Trick 4: who won it?",
        message="Ragnar sits out: Anna went alone",
    ),
    "message_info": View(
        kind="table", score_ns=7, score_ew=5, hand=3, dealer="Sigríður", leader="Anna",
        trump="H", maker="Sigríður", prompt="Trick 1: who won it?",
        message="Saved. Undo steps back one entry.", message_is_error=False,
    ),
}
"""One representative view per layout (the golden images and the docs use these)."""
