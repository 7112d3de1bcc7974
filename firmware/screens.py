"""Draw a :class:`~firmware.view.View` as a 128x64 1-bit frame.

``render(view)`` returns a Pillow image of mode ``"1"``, 128x64, white (bit 1,
a lit OLED pixel; Pillow reports it as 255) on black (0), drawn with
``ImageDraw`` and the shipped Terminus fonts (:mod:`firmware.fonts`): the
image luma's devices take (:mod:`drivers.display`), the emulator draws in
the terminal and the golden tests compare.  One layout per ``view.kind``;
``view.message`` is drawn over any of them as a framed box (inverted for an
error), ``view.flags`` as tiny marks in the top-right corner.

Text is Terminus 12 px (6x12 cells, 21 characters a line) unless a layout
says otherwise.  On the table screen the score and the dealer are Terminus
Bold 18 (12 px capitals: 5.2 mm on the recommended 2.42" panel, read from
every seat; ``hw/README.md`` has every element's height on each panel).

What the table must read is shown whole: a message (a refusal) is
word-wrapped, taking the whole screen if it must (:func:`message_lines`);
the prompt and what OK does are wrapped whole (:func:`talk_lines`); text
pages are paged, never cut (:func:`pages`).  A player's name is the one
thing that may be shortened: when a frame does not fit whole, :func:`draw`
draws it again with every name on it abbreviated the same way by
:func:`short_name` (``Þórhild.``), to the longest that fits.  A text that
still does not fit is cut with "…" (so nothing can overflow) and said in
:attr:`Drawn.cut`; the tests walk every screen of the flow and allow none.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextvars import ContextVar
from functools import lru_cache
from typing import Final, NamedTuple

from PIL import Image, ImageDraw

from .buttons import SHORT_LABELS
from .fonts import STRIKES, Font, Fonts, load_fonts
from .view import MENU_ROWS, Choice, View, suit_symbol, suit_word

__all__ = [
    "HEIGHT", "HOUSE_MARK", "MESSAGE_ROWS", "WIDTH", "Drawn", "cap_height", "cap_offset", "draw",
    "fit", "key_label",
    "menu_window", "message_lines", "page_lines", "pages", "render", "short_name", "short_names",
    "talk_lines", "wrap", "wrap_lines",
]

WIDTH: Final = 128
"""The layout's width in px: every screen is designed at 128x64 (a larger
panel shows it scaled and centred: :mod:`drivers.display`)."""
HEIGHT: Final = 64
"""The layout's height in px."""

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

_CAP_OFFSETS: Final = {12: 2, 14: 2, 16: 2, 18: 3, 20: 3, 22: 3, 24: 4, 28: 4, 32: 6}
"""Row of a Terminus strike's cell where its capitals start, by pixel size."""


_CAP_HEIGHTS: Final = {12: 8, 14: 10, 16: 10, 18: 12, 20: 13, 22: 14, 24: 15, 28: 18, 32: 20}
"""Rows of a Terminus strike's capitals, by pixel size (``hw/README.md`` has them in mm)."""


def cap_offset(font: Font) -> int:
    """Rows above the capitals in ``font``'s cell (Terminus strikes)."""
    return _CAP_OFFSETS.get(int(font.size), _CAP_TOP)


def cap_height(font: Font) -> int:
    """Rows of ``font``'s capitals (Terminus strikes)."""
    return _CAP_HEIGHTS.get(int(font.size), _CAP_HEIGHT)


# --------------------------------------------------------------------------- text fitting


@lru_cache(maxsize=4096)
def _width(font: Font, text: str) -> float:
    """``text``'s advance in ``font``, px (kept: a frame measures the same texts again)."""
    return font.getlength(text)


_CUTS: ContextVar[list[str] | None] = ContextVar("cuts", default=None)
_LEAD_SPLIT: ContextVar[bool] = ContextVar("lead_split", default=False)
"""Draw "Lead X vs Y" on two lines (:func:`_lead_parts`): set by :func:`draw`
when no shortening of the names fits it on one."""
"""While :func:`draw` draws: the texts cut so far (what :attr:`Drawn.cut` says)."""


def _cut(text: str) -> None:
    """Note that ``text`` did not fit its room (it is drawn cut, with "…")."""
    cuts = _CUTS.get()
    if cuts is not None:
        cuts.append(text)


def fit(text: str, font: Font, width: float) -> str:
    """``text``, or its longest prefix followed by "…", that fits ``width`` px."""
    if _width(font, text) <= width:
        return text
    _cut(text)
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
    _cut(text)
    text = text.removesuffix(ELLIPSIS)
    while text and _width(font, text.rstrip() + ELLIPSIS) > width:
        text = text[:-1]
    return text.rstrip() + ELLIPSIS


ABBREVIATION: Final = "."
"""Ends a shortened name (``Þórhild.``): never "…", which marks a cut text."""


def short_name(name: str, limit: int) -> str:
    """``name`` in at most ``limit`` characters: whole when it is that short,
    else its first ``limit - 1`` characters and ".": ``Þórhild.`` for
    ``Þórhildur`` at 8.  The one way a name is shortened on the screen."""
    if len(name) <= limit:
        return name
    return name[:max(limit - 1, 1)].rstrip() + ABBREVIATION


def short_names(names: tuple[str, ...], limit: int) -> dict[str, str]:
    """Each of ``names`` shortened by :func:`short_name` to ``limit``, or as
    much longer as it takes to tell it from the others (``Christop.`` and
    ``Christin.``, not ``Chris.`` twice)."""
    distinct = tuple(dict.fromkeys(names))
    out = {}
    for name in distinct:
        room = limit
        while room < len(name) and any(
                short_name(name, room) == short_name(other, room)
                for other in distinct if other != name):
            room += 1
        out[name] = short_name(name, room)
    return out


_NAME_LIMITS: Final = (24, 20, 16, 14, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3)
"""The lengths :func:`draw` tries for the names of a frame that does not fit whole."""


def _with_short_names(view: View, limit: int) -> View:
    """``view`` with every player's name in every text abbreviated to ``limit``
    characters (:func:`short_names`): the same name the same way all over it."""
    names = short_names(view.names, limit)
    longer = sorted((name for name, short in names.items() if short != name), key=len,
                    reverse=True)
    if not longer:
        return view
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, longer)) + r")(?!\w)")

    def shorten(text: str) -> str:
        return pattern.sub(lambda match: names[match.group(0)], text)

    def maybe(text: str | None) -> str | None:
        return None if text is None else shorten(text)

    return view._replace(
        dealer=maybe(view.dealer), leader=maybe(view.leader), maker=maybe(view.maker),
        lone_defender=maybe(view.lone_defender), prompt=shorten(view.prompt),
        title=shorten(view.title), lines=tuple(map(shorten, view.lines)),
        choices=tuple(choice._replace(label=shorten(choice.label)) for choice in view.choices),
        message=maybe(view.message), ok_hint=shorten(view.ok_hint),
        bidding=shorten(view.bidding), last_hand=shorten(view.last_hand))


def key_label(key: str) -> str:
    """The short prefix shown for a menu choice's button: ``"N"``, ``"♥"``..."""
    if not key:
        return ""
    upper = key.upper()
    if upper in SHORT_LABELS:
        return SHORT_LABELS[upper]
    return key if len(key) <= 2 else key[:1].upper()


# --------------------------------------------------------------------------- drawing helpers


@lru_cache(maxsize=512)
def _text_mask(font: Font, text: str) -> tuple[Image.Image, int, int]:
    """``text`` drawn once: its lit pixels, and where the text's origin is in
    them.  A frame redraws the same few texts (names, scores, prompts) press
    after press; pasting a kept mask costs a fraction of laying the text out
    again.  The screens draw text at whole pixels only (:meth:`_Canvas.text`)."""
    left, top, right, bottom = font.getbbox(text)
    origin_x, origin_y = 1 - min(0, int(left)), 1 - min(0, int(top))
    mask = Image.new("1", (origin_x + int(right) + 2, origin_y + int(bottom) + 2), OFF)
    draw = ImageDraw.Draw(mask)
    draw.fontmode = "1"  # no anti-aliasing: every pixel on or off
    draw.text((origin_x, origin_y), text, font=font, fill=ON)
    return mask, origin_x, origin_y


class _Canvas:
    """An image, its draw object and the fonts; small helpers over them."""

    def __init__(self, fonts: Fonts) -> None:
        self.image = Image.new("1", (WIDTH, HEIGHT), OFF)
        self.draw = ImageDraw.Draw(self.image)
        self.fonts = fonts
        self.texts: list[str] = []
        """Every text drawn, in order."""

    def text(self, x: float, cap_top: int, text: str, *, fill: int = ON,
             font: Font | None = None) -> None:
        """Draw small (or ``font``) text with its capitals starting at row
        ``cap_top``, its cell's left edge at ``x`` (a whole number of pixels)."""
        if not text:
            return
        self.texts.append(text)
        font = font or self.fonts.small
        mask, left, top = _text_mask(font, text)
        self.draw.bitmap((int(x) - left, cap_top - cap_offset(font) - top), mask, fill=fill)

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


# The table screen (a hand in play or being bid), row by row:
#   rows  0..7   labels, small: NS, the hand, "deals", the target (and ⌂), EW
#   rows  9..20  BIG (Terminus Bold 18, 12 px capitals): NS's score, the
#                dealer's name, EW's score — what the seats read from 1 m
#   rows 24..63  four small lines (capitals on rows 24, 34, 44, 54):
#                the hand (trump, maker, tricks) or the bidding; who leads, a
#                lone defender or the last hand; the prompt; what OK does
_LABEL_CAP: Final = 0
_BIG_CAP: Final = 9
_HEADER_H: Final = 23  # rows 0..22: the labels and the big row (its descenders reach 23)
_LINE_CAPS: Final = (24, 34, 44, 54)
_SELECTOR_TOP: Final = 53
HOUSE_MARK: Final = "⌂"
"""Shown after the target when the house rules are not the standard profile."""


def _table_header(canvas: _Canvas, view: View) -> None:
    """Labels over the big row: the two scores at the ends (as the teams sit),
    each lit in a thin box, the dealer's name between them.  (Not black in
    a lit chip: the score band is on the screen for hours of play, and a
    block of lit pixels wears an OLED's pixels into a ghost: burn-in.)"""
    fonts = canvas.fonts
    big, small = fonts.big, fonts.small
    flag_room = _flag_room(view)
    ns, ew = str(view.score_ns), str(view.score_ew)
    canvas.text(0, _LABEL_CAP, "NS")
    canvas.text_right(WIDTH - flag_room, _LABEL_CAP, "EW")
    hand = f"H{view.hand}" if view.hand is not None else ""
    target = f"→{view.target}" + (HOUSE_MARK if view.house_rules else "")
    canvas.text(3 * _CHAR_W, _LABEL_CAP, hand)
    canvas.text_right(WIDTH - flag_room - 3 * _CHAR_W, _LABEL_CAP, target)
    left_room = 3 * _CHAR_W + _width(small, hand) + 3
    right_room = 3 * _CHAR_W + _width(small, target) + 3 + flag_room
    room = WIDTH - 2 * max(left_room, right_room)
    canvas.text_center(_LABEL_CAP, fit("deals", small, room))
    chip_top, chip_bottom = _BIG_CAP - 1, _BIG_CAP + cap_height(big)
    ns_right = _width(big, ns) + 2
    ew_left = WIDTH - _width(big, ew) - 3
    canvas.draw.rectangle((0, chip_top, ns_right, chip_bottom), outline=ON)
    canvas.draw.rectangle((ew_left, chip_top, WIDTH - 1, chip_bottom), outline=ON)
    canvas.text(1, _BIG_CAP, ns, font=big)
    canvas.text_right(WIDTH - 1, _BIG_CAP, ew, font=big)
    left, right = ns_right + 3, ew_left - 2
    name = fit(view.dealer or "-", big, right - left)
    centre = (left + right - _width(big, name)) / 2
    canvas.text(round(centre), _BIG_CAP, name, font=big)


def _trump_chip(canvas: _Canvas, x: int, cap_top: int, trump: str | None) -> int:
    """The trump suit black in a lit 9x11 chip at ``x`` (or "?" framed: no
    suit yet); returns the x where text after it starts."""
    box = (x, cap_top - 1, x + 8, cap_top + 8)
    if trump:
        canvas.draw.rectangle(box, fill=ON)
        canvas.text(x + 2, cap_top, suit_symbol(trump), fill=OFF)
    else:
        canvas.draw.rectangle(box, outline=ON)
        canvas.text(x + 2, cap_top, "?")
    return x + 12


def _fit_name(name: str, suffix: str, font: Font, room: float) -> str:
    """``name + suffix`` in ``room`` px, the name cut with "…" first."""
    if _width(font, name + suffix) <= room:
        return name + suffix
    return fit(name, font, max(room - _width(font, suffix), _width(font, ELLIPSIS))) + suffix


_TRICK_BOX_W: Final = 9


def _trick_box(canvas: _Canvas, x: int, cap_top: int, count: int) -> None:
    """A side's tricks this hand: a digit in a thin box, under its score."""
    canvas.draw.rectangle((x, cap_top - 1, x + _TRICK_BOX_W - 1, cap_top + 8), outline=ON)
    canvas.text(x + 2, cap_top, str(count))


def _split_lead(view: View) -> bool:
    """Whether "Lead X vs Y" is drawn on two lines now (:data:`_LEAD_SPLIT`):
    the lone maker leads against a lone defender (only those two play)."""
    return (_LEAD_SPLIT.get() and view.lone_defender is not None and view.alone
            and view.leader == view.maker and view.leader != view.lone_defender)


def _hand_line(canvas: _Canvas, view: View, cap_top: int) -> None:
    """Trump made: NS's tricks, the trump chip, the maker (alone), EW's tricks;
    "Lead X vs Y" split (:func:`_split_lead`): the maker, who leads ("Christo.
    leads": alone, as a lone defender says, on the line below)."""
    small = canvas.fonts.small
    _trick_box(canvas, 0, cap_top, view.tricks_ns)
    _trick_box(canvas, WIDTH - _TRICK_BOX_W, cap_top, view.tricks_ew)
    x = _trump_chip(canvas, _TRICK_BOX_W + 3, cap_top, view.trump)
    suffix = " leads" if _split_lead(view) else " alone" if view.alone else ""
    room = WIDTH - _TRICK_BOX_W - 3 - x
    canvas.text(x, cap_top, _fit_name(view.maker or "", suffix, small, room))


def _lead_line(canvas: _Canvas, view: View, cap_top: int) -> None:
    """Who leads, and a lone defender at the right ("vs Þórhildur"; a lone
    defender who leads: "Lead Þórhildur (alone)"); split (:func:`_split_lead`:
    the maker who leads is said on the hand line): "vs Christina alone"."""
    small = canvas.fonts.small
    if _split_lead(view):
        canvas.text(0, cap_top, fit(f"vs {view.lone_defender} alone", small, WIDTH - 1))
        return
    leads_alone = view.lone_defender is not None and view.lone_defender == view.leader
    lead = fit(f"Lead {view.leader or '-'}" + (" (alone)" if leads_alone else ""), small,
               WIDTH - 1)
    canvas.text(0, cap_top, lead)
    if view.lone_defender and not leads_alone:
        room = WIDTH - _width(small, lead) - _CHAR_W - _width(small, "vs ")
        name = fit(view.lone_defender, small, max(room, 2 * _CHAR_W))
        canvas.text_right(WIDTH, cap_top, "vs " + name)


def _parts_lines(text: str, font: Font, width: float, max_lines: int) -> list[str]:
    """``text`` (parts joined by " · ") in lines that break between its parts
    where they can (``Round 2 · not ♠`` / ``2 passed``), a part too long for
    a line word-wrapped; at most ``max_lines`` (:func:`wrap`'s "…" past them)."""
    lines: list[str] = []
    for part in text.split(" · "):
        joined = f"{lines[-1]} · {part}" if lines else part
        if lines and _width(font, joined) <= width:
            lines[-1] = joined
        else:
            lines += wrap(part, font, width, 99)
    return wrap("\n".join(lines), font, width, max_lines)


def _bidding_text(view: View) -> str:
    if view.bidding:
        return view.bidding
    if view.upcard:
        return f"Up {suit_symbol(view.upcard)} {suit_word(view.upcard)}"
    return "Bidding"


def _selection_line(canvas: _Canvas, view: View, cap_top: int) -> None:
    """The maker picked so far, the suit still to come: ``[?] Anna alone``."""
    small = canvas.fonts.small
    x = _trump_chip(canvas, 0, cap_top, None)
    suffix = " alone" if view.alone else ""
    canvas.text(x, cap_top, _fit_name(view.maker or "", suffix, small, WIDTH - x))


def talk_lines(view: View, small: Font, rows: int, state_rows: int = 2) -> list[str]:
    """The prompt then what OK does, whole (each word kept), in as few of
    ``rows`` lines as they fit while leaving ``state_rows`` (then fewer) for
    the rest: each from a line of its own when there is room, else run on.
    Text that cannot fit the rows at all ends with "…" (never for the app's
    texts: tested)."""
    prompt, hint = view.prompt, "" if view.choices else view.ok_hint
    apart = wrap(prompt, small, WIDTH - 1, 99) + (wrap(hint, small, WIDTH - 1, 99) if hint else [])
    joined = wrap(f"{prompt} {hint}".strip(), small, WIDTH - 1, 99)
    for spare in range(state_rows, -1, -1):
        if len(apart) + spare <= rows:
            return apart
        if len(joined) + spare <= rows:
            return joined
    return wrap(f"{prompt} {hint}".strip(), small, WIDTH - 1, rows)


def _table(canvas: _Canvas, view: View) -> None:
    """The score and the dealer big; below, the state (the hand or the
    bidding, who leads) and the talk (the prompt, what OK does): the talk
    is always whole, the state gets the lines it leaves."""
    if view.hand is None:
        _welcome(canvas, view)
        return
    small = canvas.fonts.small
    _table_header(canvas, view)
    caps = list(_LINE_CAPS)
    if view.choices:  # the cursor layout: the choice under the cursor takes the last line
        _selector(canvas, view, top=_SELECTOR_TOP)
        caps = [cap - 1 for cap in caps[:-1]]
    talk = talk_lines(view, small, len(caps), state_rows=min(2, len(caps) - 1))
    state_rows = len(caps) - len(talk)
    for cap_top, line in zip(caps[state_rows:], talk):
        canvas.text(0, cap_top, line)
    if view.trump is not None:
        if state_rows == 0:  # (the talk took every line: the state is left out)
            _cut(f"{view.maker} {view.trump}")
            return
        _hand_line(canvas, view, caps[0])
        if state_rows > 1:
            _lead_line(canvas, view, caps[1])
        else:
            _cut(f"Lead {view.leader}")
        return
    second = "select" if view.maker else ("last" if view.last_hand else "")
    if state_rows == 0:
        if view.bidding or second:
            _cut(view.maker or view.bidding or view.last_hand)
        return
    bidding_rows = state_rows - (1 if second else 0)
    bidding_known = bool(view.bidding or view.upcard)
    if bidding_rows == 0 and second == "last" and bidding_known:  # the bidding beats the last hand
        bidding_rows, second = 1, ""
        _cut(view.last_hand)
    elif bidding_rows == 0 and bidding_known and second != "select":
        _cut(_bidding_text(view))  # (once a maker is picked, the call beats the bidding)
    if second == "last" and not bidding_known:  # no bidding yet: the last hand takes the rows
        bidding_rows = 0
    bidding = (_parts_lines(_bidding_text(view), small, WIDTH - 1, bidding_rows)
               if bidding_rows else [])
    for cap_top, line in zip(caps, bidding):
        canvas.text(0, cap_top, line)
    if second == "select":
        _selection_line(canvas, view, caps[len(bidding)])
    elif second == "last":
        rows = state_rows - len(bidding)
        for cap_top, line in zip(caps[len(bidding):], wrap(view.last_hand, small, WIDTH - 1,
                                                           rows)):
            canvas.text(0, cap_top, line)


def _selector(canvas: _Canvas, view: View, top: int) -> None:
    """The choice under the cursor as an inverted row from ``top`` to the
    bottom: ``◀ Ragnar won ▶``, the arrows showing there are more."""
    small = canvas.fonts.small
    count = len(view.choices)
    cursor = max(0, min(view.cursor, count - 1))
    canvas.draw.rectangle((0, top, WIDTH - 1, HEIGHT - 1), fill=ON)
    cap_top = top + (HEIGHT - top - _CAP_HEIGHT) // 2
    if count > 1:  # 3x7 arrows at the ends: the label keeps 19 characters' room
        middle = cap_top + _CAP_HEIGHT // 2
        for dx in range(3):
            canvas.draw.line((1 + dx, middle - dx, 1 + dx, middle + dx), fill=OFF)
            canvas.draw.line((WIDTH - 2 - dx, middle - dx, WIDTH - 2 - dx, middle + dx), fill=OFF)
    label = fit(view.choices[cursor].label, small, WIDTH - 2 * _ARROW_W)
    canvas.text_center(cap_top, label, fill=OFF, left=_ARROW_W, right=WIDTH - _ARROW_W)


_ARROW_W: Final = 5
"""Pixels the selector's arrow (and its gap) takes at each end."""


def _welcome(canvas: _Canvas, view: View) -> None:
    """Before the first game: a title, the target, the dealer if chosen, the
    prompt and what OK does."""
    fonts = canvas.fonts
    canvas.draw.rectangle((0, 0, WIDTH - 1, 15), fill=ON)
    canvas.text_center(3, "♠♥ EUCHRE ♦♣", fill=OFF, font=fonts.large)
    info = f"Game to {view.target}" + (f" {HOUSE_MARK}" if view.house_rules else "")
    if view.dealer:
        options = (f"{info}, {view.dealer} deals", f"To {view.target}, {view.dealer} deals")
        info = next((o for o in options if _width(fonts.small, o) <= WIDTH - 2), None) or fit(
            f"{view.dealer} deals", fonts.small, WIDTH - 2)
    caps = [32, 42, 52]
    if view.choices:  # the selector takes the bottom line; a long prompt takes the info's
        _selector(canvas, view, top=_SELECTOR_TOP)
        caps = [32, 42]
        if len(talk_lines(view, fonts.small, 99, state_rows=0)) > 2:
            caps, info = [18, 29, 40], ""
    if info:
        canvas.text_center(18, info)
        canvas.hline(29, dotted=True)
    for cap_top, line in zip(caps, talk_lines(view, fonts.small, len(caps), state_rows=0)):
        canvas.text(1, cap_top, line)


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


_MENU_ROWS: Final = MENU_ROWS
_MENU_TOP: Final = 13
_MENU_PITCH: Final = 13


def menu_window(count: int, cursor: int, rows: int = _MENU_ROWS) -> int:
    """Index of the first visible choice, keeping ``cursor`` visible and, where
    it can, one choice of context after it."""
    if count <= rows:
        return 0
    cursor = max(0, min(cursor, count - 1))
    return max(0, min(cursor - rows + 2, count - rows)) if cursor >= rows - 1 else 0


def _menu_hint(view: View) -> str:
    """What OK does, for a menu's title bar: said there in the seats layout
    (its rows are picked by the buttons beside them, OK does something of its
    own), unless the title already says it or a row is OK's (``OK Done``).
    The cursor layout's OK, and the seats layout's while its choices are
    browsed with the arrows, picks the row under the cursor, drawn inverted."""
    keyed = [choice.key for choice in view.choices]
    if not view.ok_hint or not any(keyed) or "OK" in keyed or view.ok_hint in view.title:
        return ""
    under = view.choices[min(max(view.cursor, 0), len(keyed) - 1)].label
    return "" if view.ok_hint == f"OK: {under}" else view.ok_hint


def _menu(canvas: _Canvas, view: View) -> None:
    """Title bar (the score and trump during a hand, and ``6/7`` when the list
    scrolls and the title leaves room; in the seats layout what OK does,
    :func:`_menu_hint`: "House rules  OK: keep", or, when the title leaves it
    no room, in the title's place, the rows saying what the list is), four
    rows, the cursor's row inverted, each choice's button in a small box
    before its label, and a scroll bar on the right when there are more than
    four choices."""
    small = canvas.fonts.small
    choices: tuple[Choice, ...] = view.choices
    count = len(choices)
    position = f"{min(max(view.cursor, 0), count - 1) + 1}/{count}" if count > _MENU_ROWS else ""
    score = ""  # a claim keeps the score (and trump) in view; the set-up menu needs neither
    if view.hand is not None:
        score = f"{view.score_ns}-{view.score_ew}"
    title = view.title or "Choose"
    corner = " ".join(part for part in (suit_symbol(view.trump), score, position) if part)
    room = WIDTH - 4 - _flag_room(view) - _width(small, corner) - _CHAR_W
    if position and _width(small, title) > room:  # the scroll bar says it too
        corner = " ".join(part for part in (suit_symbol(view.trump), score) if part)
    hint = _menu_hint(view)
    if hint:  # OK's words at the right of the title, or in its place when both do not fit
        both = " ".join(part for part in (hint, corner) if part)
        room = WIDTH - 4 - _flag_room(view) - _width(small, both) - _CHAR_W
        if _width(small, title) > room:
            title, both = hint, corner
        corner = both
    _title_bar(canvas, view, title, right=corner)
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


def _ok_row(canvas: _Canvas, text: str) -> int:
    """What OK (or any button) does, black on the lit bottom row (where the
    cursor layout's choice is); returns the last row left above it."""
    canvas.draw.rectangle((0, _SELECTOR_TOP, WIDTH - 1, HEIGHT - 1), fill=ON)
    cap_top = _SELECTOR_TOP + (HEIGHT - _SELECTOR_TOP - _CAP_HEIGHT) // 2
    canvas.text_center(cap_top, fit(text, canvas.fonts.small, WIDTH - 2), fill=OFF)
    return _SELECTOR_TOP - 2


def _result(canvas: _Canvas, view: View) -> None:
    """The hand's result: title and score in the bar, the lines large below
    (Terminus Bold 14, centred) or, if one is too long for that, small and
    word-wrapped; what a press does on the bottom row."""
    fonts = canvas.fonts
    score = f"NS {view.score_ns}  EW {view.score_ew}"
    canvas.bar()
    score_left = canvas.text_right(WIDTH - 2 - _flag_room(view), 1, score, fill=OFF)
    canvas.text(2, 1, fit(view.title, fonts.small, score_left - 2 - _CHAR_W), fill=OFF)
    bottom = _ok_row(canvas, view.ok_hint) + 1 if view.ok_hint else HEIGHT
    lines = [line for line in view.lines if line.strip()]
    if not lines:
        return
    tight = bottom < HEIGHT  # (three large lines or four small ones still fit)
    if len(lines) <= 3 and all(_width(fonts.bold, line) <= WIDTH - 2 for line in lines):
        font, pitch, cap_h = fonts.bold, 15 if tight else 17, 10  # Terminus 14: caps rows 2..11
    else:
        font, pitch, cap_h = fonts.small, _PITCH if tight else _PITCH + 1, _CAP_HEIGHT
        lines = wrap_lines(lines, font, WIDTH - 2, 4)
    block = pitch * (len(lines) - 1) + cap_h
    top = _BAR_H + (bottom - _BAR_H - block + 1) // 2
    for i, line in enumerate(lines):
        canvas.text_center(top + i * pitch, line, font=font)


def _banner_font(canvas: _Canvas, text: str, height: int) -> Font:
    """The largest Terminus Bold strike that fits ``text`` in a banner
    ``height`` px tall and the screen's width."""
    fonts = canvas.fonts
    for size in sorted(STRIKES, reverse=True):
        font = fonts.bold_strike(size)
        if size <= height - 4 and _width(font, text) <= WIDTH - 6:
            return font
    return fonts.small


def _winner(canvas: _Canvas, view: View) -> None:
    """A big inverted banner with the title (Terminus Bold, the largest strike
    that fits: larger than the table's score), the lines (names, what next)
    centred below, wrapped; in the cursor layout the choice under the cursor
    on the bottom line."""
    small = canvas.fonts.small
    bottom = HEIGHT
    if view.choices:
        _selector(canvas, view, top=_SELECTOR_TOP)
        bottom = _SELECTOR_TOP - 1
    lines = wrap_lines(view.lines, small, WIDTH - 2, 4 if bottom == HEIGHT else 2)
    banner_h = 30 if len(lines) <= (3 if bottom == HEIGHT else 1) else 24  # (a 20 px strike)
    canvas.draw.rectangle((0, 0, WIDTH - 1, banner_h - 1), fill=ON)
    title = view.title or "Game over"
    font = _banner_font(canvas, title, banner_h)
    title = fit(title, font, WIDTH - 4)
    canvas.text_center((banner_h - cap_height(font)) // 2, title, fill=OFF, font=font)
    room = bottom - banner_h  # rows below the banner
    block = _PITCH * (len(lines) - 1) + _CAP_HEIGHT
    top = banner_h + (room - block + 1) // 2
    for i, line in enumerate(lines):
        canvas.text_center(top + i * _PITCH, line)


def _confirm(canvas: _Canvas, view: View) -> None:
    """A question (``New game?``) in the bar, what it would do a line each,
    and in the cursor layout the choice under the cursor on the bottom line.
    Each line is one row: a line or a row too many is said cut."""
    _title_bar(canvas, view, view.title)
    rows = _PAGE_ROWS
    if view.choices:
        _selector(canvas, view, top=_SELECTOR_TOP)
        rows -= 1
    lines = [line for line in view.lines if line.strip()]
    for line in lines[rows:]:
        _cut(line)
    for i, line in enumerate(lines[:rows]):
        canvas.text(1, _PAGE_TOP + i * _PITCH, fit(line, canvas.fonts.small, WIDTH - 2))


_PAGE_ROWS: Final = 5
_PAGE_TOP: Final = 13
_TEXT_ROWS: Final = 4
"""Lines of a text page's screen: the bottom row says what OK (or any
button) does (:func:`_text_page`)."""


def pages(view: View, fonts: Fonts) -> list[list[str]]:
    """A text page's lines (``help``, ``notice``, ``rules``, ``hands``) in
    pages of four: each of ``view.lines`` word-wrapped whole, an item kept on
    one page unless it is longer than a page.  Nothing is cut."""
    width = WIDTH - 2
    items = [wrap(item, fonts.small, width, 99) for item in view.lines if item.strip()]
    if sum(len(item) for item in items) > _TEXT_ROWS:  # room for the scroll bar
        width = WIDTH - 6
        items = [wrap(item, fonts.small, width, 99) for item in view.lines if item.strip()]
    out: list[list[str]] = [[]]
    for item in items:
        if out[-1] and len(out[-1]) + len(item) > _TEXT_ROWS:
            out.append([])
        for line in item:
            if len(out[-1]) == _TEXT_ROWS:
                out.append([])
            out[-1].append(line)
    return out


def page_lines(view: View, fonts: Fonts) -> list[str]:
    """Every line of a text page, all pages together."""
    return [line for page in pages(view, fonts) for line in page]


def _text_page(canvas: _Canvas, view: View, mark: str) -> None:
    """A title bar, four lines and, inverted on the bottom row, what OK (or
    any button) does now (``OK: house rules``); every line is wrapped whole.
    When there are more, they are pages: ``view.cursor`` is the page shown,
    the bar says which (``2/3``, when the title leaves room) and a scroll bar
    on the right shows where."""
    small = canvas.fonts.small
    book = pages(view, canvas.fonts)
    page = max(0, min(view.cursor, len(book) - 1))
    position = f"{page + 1}/{len(book)}" if len(book) > 1 else ""
    room = WIDTH - 4 - _flag_room(view) - 2 * _CHAR_W - _width(small, position) - _CHAR_W
    if _width(small, view.title) > room:
        position = ""
    _title_bar(canvas, view, view.title, mark, right=position)
    for i, line in enumerate(book[page]):
        canvas.text(1, _PAGE_TOP + i * _PITCH, line)
    bottom = _ok_row(canvas, view.ok_hint) if view.ok_hint else HEIGHT - 1
    if len(book) > 1:
        _scroll_bar(canvas, page, len(book), 1, _PAGE_TOP - 1, bottom)


def _scroll_bar(canvas: _Canvas, first: int, count: int, rows: int, top: int,
                bottom: int = HEIGHT - 1) -> None:
    """A track on the right edge from ``top`` down to ``bottom``, the thumb
    where rows ``first .. first + rows`` of ``count`` are."""
    canvas.draw.line((WIDTH - 2, top, WIDTH - 2, bottom), fill=ON)
    span = bottom - top + 1
    thumb = max(4, span * rows // count)
    start = top + (span - thumb) * first // max(1, count - rows)
    canvas.draw.rectangle((WIDTH - 3, start, WIDTH - 1, start + thumb - 1), fill=ON)


def _help(canvas: _Canvas, view: View) -> None:
    _text_page(canvas, view, "?")


def _notice(canvas: _Canvas, view: View) -> None:
    _text_page(canvas, view, "!")


def _rules(canvas: _Canvas, view: View) -> None:
    _text_page(canvas, view, HOUSE_MARK)


def _hands(canvas: _Canvas, view: View) -> None:
    _text_page(canvas, view, "#")


def _stats(canvas: _Canvas, view: View) -> None:
    _text_page(canvas, view, "%")


_MESSAGE_MARGIN: Final = 10  # px of the box's frame and padding, both sides together


MESSAGE_ROWS: Final = 6
"""Lines a message may take (the whole screen); the app's messages fit (tested)."""


def message_lines(message: str, fonts: Fonts, *, full_screen: bool = False) -> list[str]:
    """``message`` word-wrapped whole to the message box's width (the
    screen's, less 2 px, when it takes the whole screen); past
    :data:`MESSAGE_ROWS` lines the last ends with "…"."""
    width = WIDTH - 2 if full_screen else WIDTH - _MESSAGE_MARGIN
    lines = wrap(message, fonts.small, width, 99)
    if len(lines) > MESSAGE_ROWS and not full_screen:
        return message_lines(message, fonts, full_screen=True)
    return wrap(message, fonts.small, width, MESSAGE_ROWS)


def _message(canvas: _Canvas, view: View, keep_top: int) -> None:
    """The message box over the layout: inverted (black on white) for an
    error, white-framed on black for info; word-wrapped whole.

    The layout below row ``keep_top`` is cleared first (the score stays), so
    no half-covered text shows around the box.  A message too long for the
    room below takes the whole screen (six lines).
    """
    error = view.message_is_error
    lines = message_lines(view.message or "", canvas.fonts)
    x0, x1 = 1, WIDTH - 2
    if len(lines) * _PITCH + 7 > HEIGHT - keep_top:  # the whole screen, edge to edge
        keep_top, x0, x1 = 0, 0, WIDTH - 1
        lines = message_lines(view.message or "", canvas.fonts, full_screen=True)
    box_h = min(HEIGHT - keep_top, len(lines) * _PITCH + 7)
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
    text_top = y0 + (box_h - (len(lines) * _PITCH - 2)) // 2
    for i, line in enumerate(lines):
        canvas.text_center(text_top + i * _PITCH, line, fill=fill, left=x0, right=x1 + 1)


_LAYOUTS: Final[dict[str, Callable[[_Canvas, View], None]]] = {
    "table": _table,
    "menu": _menu,
    "result": _result,
    "winner": _winner,
    "confirm": _confirm,
    "help": _help,
    "notice": _notice,
    "rules": _rules,
    "hands": _hands,
    "stats": _stats,
}


def _kept_rows(view: View) -> int:
    """Rows at the top a message box leaves in view: the score (the table's
    labels and big row, another layout's bar)."""
    if view.kind == "winner" or (view.kind == "table" and view.hand is None):
        return 0
    return _HEADER_H if view.kind == "table" else _BAR_H


class Drawn(NamedTuple):
    """A frame and what is on it (:func:`draw`)."""

    image: Image.Image
    texts: tuple[str, ...]
    """Every text drawn, as drawn (a cut one with its "…")."""
    cut: tuple[str, ...]
    """Every text that did not fit its room, measured with the font: drawn
    cut with "…" (or, past a text's last line, left out)."""
    view: View
    """The view as drawn: the one given, or it with the names shortened."""


def render(view: View, fonts: Fonts | None = None) -> Image.Image:
    """Draw ``view``: a new 128x64 mode ``"1"`` image, lit pixels = 1.

    Raises :class:`~firmware.fonts.FontsMissing` if the shipped font files are
    gone and ``ValueError`` for an unknown ``view.kind``.
    """
    return draw(view, fonts).image


def draw(view: View, fonts: Fonts | None = None) -> Drawn:
    """:func:`render` ``view``, saying which texts it drew and which it had to cut.

    A frame that does not fit whole is drawn again with the players' names
    (``view.names``) shortened, all alike (:func:`short_names`), to the
    longest length at which it fits.  If none does and a lone maker leading
    against a lone defender is why (two names alike, ``Christo. vs
    Christi.``, do not fit "Lead X vs Y" told apart), that line is drawn on
    two (:func:`_split_lead`), the names shortened again as they need.
    Else it is drawn as it is (its cut texts said).
    """
    if view.kind not in _LAYOUTS:
        raise ValueError(f"unknown view kind {view.kind!r} (one of {', '.join(_LAYOUTS)})")
    fonts = fonts or load_fonts()
    whole = _draw(view, fonts)
    if not whole.cut or not view.names:
        return whole
    longest = max(map(len, view.names))
    limits = [limit for limit in _NAME_LIMITS if limit < longest]
    for limit in limits:
        shortened = _draw(_with_short_names(view, limit), fonts)
        if not shortened.cut:
            return shortened
    token = _LEAD_SPLIT.set(True)
    try:
        for each in (view, *(_with_short_names(view, limit) for limit in limits)):
            split = _draw(each, fonts)
            if not split.cut:
                return split
    finally:
        _LEAD_SPLIT.reset(token)
    return whole


def _draw(view: View, fonts: Fonts) -> Drawn:
    """:func:`draw` ``view`` as it is."""
    layout = _LAYOUTS[view.kind]
    canvas = _Canvas(fonts)
    cuts: list[str] = []
    token = _CUTS.set(cuts)
    try:
        layout(canvas, view)
        _draw_flags(canvas, view)
        if view.message is not None:
            _message(canvas, view, keep_top=_kept_rows(view))
    finally:
        _CUTS.reset(token)
    return Drawn(canvas.image, tuple(canvas.texts), tuple(cuts), view)
