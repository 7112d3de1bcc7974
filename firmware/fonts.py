"""The fonts the screens use: Terminus Font, shipped with the referee.

Terminus is a bitmap font, crisp at its strikes only: 12, 14, 16, 18, 20, 22,
24, 28 and 32 px tall cells (12 px is 6x12, 21 characters across the 128 px
screen; 18 px is 10x18 with 12 px capitals).  It has the suit symbols ♠♥♦♣,
the ellipsis "…" and the accented letters of names like "Sigríður".

The two font files (normal and bold, OpenType bitmap fonts) come with the
install as package data in ``firmware/fontfiles/`` beside their licence (SIL
Open Font License 1.1, ``OFL.txt``); Pillow opens them
(``ImageFont.truetype``, through FreeType), so a first run needs nothing but
Python and the wheel's dependencies: no Debian font package.

:func:`load_fonts` loads them once and returns a :class:`Fonts`; a missing
file (a damaged install) raises :class:`FontsMissing` naming it.
:func:`undrawable` and :func:`screen_name_problem` say which characters the
screen cannot show (no glyph, a right-to-left script, a combining mark), so a
name that would draw as boxes is refused where it is set.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Final, NamedTuple

from PIL import Image, ImageDraw, ImageFont

from euchre_core.events import name_problem

__all__ = [
    "FONT_DIR",
    "STRIKES",
    "Font",
    "Fonts",
    "FontsMissing",
    "can_draw",
    "load_fonts",
    "screen_name_problem",
    "undrawable",
]

FONT_DIR: Final = Path(__file__).resolve().parent / "fontfiles"
"""Where the shipped font files are (package data of ``firmware``)."""

NORMAL_FILE: Final = "terminus-normal.otb"
BOLD_FILE: Final = "terminus-bold.otb"
STRIKES: Final = (12, 14, 16, 18, 20, 22, 24, 28, 32)
"""The pixel sizes Terminus has glyph bitmaps for (any other size draws nothing)."""

NOTDEF: Final = "\U0010fffd"
"""A private-use code point no font has: it draws the .notdef box."""

_BASIC: Final = ImageFont.Layout.BASIC  # the same glyph placement with or without libraqm
_RIGHT_TO_LEFT: Final = frozenset({"R", "AL"})  # bidi classes of Hebrew, Arabic, ...

Font = ImageFont.FreeTypeFont
"""A Terminus strike as Pillow opens it."""


class FontsMissing(FileNotFoundError):
    """A font file the screens need is not where the install put it (or is
    damaged); the message names the file."""


class Fonts(NamedTuple):
    """The loaded fonts.  Terminus strikes are given by their pixel height.

    Capital heights (rows of lit pixels; one pixel is 0.43 mm on the 2.42"
    panel, see ``hw/README.md``): small 8, bold 10, big 12.
    """

    small: Font
    """Terminus 12 px (6x12): almost all text."""
    bold: Font
    """Terminus Bold 14 px (8x14): result lines, titles that need weight."""
    large: Font
    """Terminus Bold 16 px (8x16): short emphasised text."""
    big: Font
    """Terminus Bold 18 px (10x18, capitals 12 px): what the table reads from its
    seats — the score and the dealer."""
    font_dir: Path
    """Where the font files are (:data:`FONT_DIR` when installed)."""

    def bold_strike(self, size: int) -> Font:
        """Terminus Bold at ``size`` px, one of :data:`STRIKES` (opened once)."""
        if size not in STRIKES:
            raise ValueError(f"Terminus has no {size} px strike (one of {STRIKES})")
        return _strike(self.font_dir, BOLD_FILE, size)


@lru_cache(maxsize=32)
def _strike(font_dir: Path, font_name: str, size: int) -> Font:
    path = font_dir / font_name
    if not path.is_file():  # FreeType says only "cannot open resource"
        problem = f"font file {path} is missing"
    else:
        try:
            return ImageFont.truetype(str(path), size, layout_engine=_BASIC)
        except OSError as error:  # FreeType cannot read it: not a font, or cut short
            problem = f"font file {path} is damaged ({error})"
    raise FontsMissing(
        f"{problem}: it ships with euchre-referee (firmware/fontfiles); "
        "reinstall it (pip install .)"
    )


@lru_cache(maxsize=4)
def load_fonts(font_dir: Path = FONT_DIR) -> Fonts:
    """Load the screen fonts once; raises :class:`FontsMissing` if a file is absent."""
    font_dir = Path(font_dir)
    return Fonts(
        small=_strike(font_dir, NORMAL_FILE, 12),
        bold=_strike(font_dir, BOLD_FILE, 14),
        large=_strike(font_dir, BOLD_FILE, 16),
        big=_strike(font_dir, BOLD_FILE, 18),
        font_dir=font_dir,
    )


# --------------------------------------------------------------------------- what can be drawn


def _drawn(font: Font, char: str) -> bytes:
    """``char`` drawn alone, as the screens draw text (no anti-aliasing)."""
    image = Image.new("1", (40, 40))
    draw = ImageDraw.Draw(image)
    draw.fontmode = "1"
    draw.text((4, 4), char, font=font, fill=1)
    return image.tobytes()


@lru_cache(maxsize=4096)
def _has_glyph(char: str) -> bool:
    """Whether every text font has a glyph for ``char`` (not the .notdef box)."""
    fonts = load_fonts()
    return all(_drawn(font, char) != _drawn(font, NOTDEF)
               for font in (fonts.small, fonts.bold, fonts.big))


def undrawable(text: str) -> str:
    """The characters of ``text`` the screen cannot show as they are written
    (each once, in order): no glyph in Terminus (emoji, Chinese...), a
    right-to-left letter (drawn left to right it would read backwards), or a
    combining mark (drawn as a letter of its own)."""
    bad: list[str] = []
    for char in text:
        if char in bad or char == " ":
            continue
        if (unicodedata.bidirectional(char) in _RIGHT_TO_LEFT or unicodedata.combining(char)
                or not _has_glyph(char)):
            bad.append(char)
    return "".join(bad)


def can_draw(text: str) -> bool:
    """Whether the screen shows every character of ``text`` as written."""
    return not undrawable(text)


def _why(char: str) -> str:
    """``'😀' (grinning face: no glyph)``: one undrawable character and why."""
    name = unicodedata.name(char, f"U+{ord(char):04X}").lower()
    if unicodedata.bidirectional(char) in _RIGHT_TO_LEFT:
        why = "right to left"
    elif unicodedata.combining(char):
        why = "a separate accent: type the accented letter as one character"
    else:
        why = "no glyph"
    shown = repr(char) if char.isprintable() else f"U+{ord(char):04X}"
    return f"{shown} ({name}: {why})"


def screen_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a player's name on this referee (None when it
    can): the log's rule (:func:`euchre_core.events.name_problem`), then the
    screen's: every character must draw.  Reads after "must be"."""
    problem = name_problem(name)
    if problem is not None:
        return problem
    bad = undrawable(name)
    if bad:
        return "letters the screen can draw, not " + ", ".join(_why(char) for char in bad)
    return None
