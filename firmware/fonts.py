"""The fonts the screens use, from the distribution's font packages.

- Terminus (Debian/Raspberry Pi OS package ``fonts-terminus-otb``): a bitmap
  font, crisp at its strikes only (12, 14, 16, ... px; 12 px is 6x12 cells,
  21 characters across the 128 px screen).  It has the suit symbols ♠♥♦♣,
  the ellipsis "…" and the accented letters of names like "Sigríður".
- DejaVu Sans (package ``fonts-dejavu-core``): scalable, for big text (the
  winner banner), rendered without anti-aliasing.

:func:`load_fonts` loads them once and returns a frozen :class:`Fonts`; a
missing file raises :class:`FontsMissing` naming the package to install.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Final

from PIL import ImageFont

__all__ = [
    "DEJAVU_DIR",
    "INSTALL_HINT",
    "TERMINUS_DIR",
    "Fonts",
    "FontsMissing",
    "load_fonts",
]

TERMINUS_DIR: Final = Path("/usr/share/fonts/opentype/terminus")
DEJAVU_DIR: Final = Path("/usr/share/fonts/truetype/dejavu")
INSTALL_HINT: Final = "apt-get install fonts-terminus-otb fonts-dejavu-core"

_TERMINUS_PACKAGE: Final = "fonts-terminus-otb"
_DEJAVU_PACKAGE: Final = "fonts-dejavu-core"
_BASIC: Final = ImageFont.Layout.BASIC  # same glyph placement with or without libraqm


class FontsMissing(FileNotFoundError):
    """A font file the screens need is not installed; the message names the
    file and the Debian package that provides it."""


@dataclass(frozen=True)
class Fonts:
    """The loaded fonts.  Terminus strikes are given by their pixel height."""

    small: ImageFont.FreeTypeFont
    """Terminus 12 px (6x12): almost all text."""
    bold: ImageFont.FreeTypeFont
    """Terminus Bold 14 px (7x14): result lines, titles that need weight."""
    large: ImageFont.FreeTypeFont
    """Terminus Bold 16 px (8x16): short emphasised text."""
    sans_bold_path: str
    """DejaVu Sans Bold, for :meth:`sans_bold` at any size."""

    def sans_bold(self, size: int) -> ImageFont.FreeTypeFont:
        """DejaVu Sans Bold at ``size`` px (cached)."""
        return _scalable(self.sans_bold_path, size)


@lru_cache(maxsize=32)
def _scalable(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size, layout_engine=_BASIC)


def _need(path: Path, package: str) -> str:
    if not path.is_file():
        raise FontsMissing(
            f"font file {path} is missing: install the Debian package {package} "
            f"({INSTALL_HINT})"
        )
    return str(path)


@lru_cache(maxsize=4)
def load_fonts(terminus_dir: Path = TERMINUS_DIR, dejavu_dir: Path = DEJAVU_DIR) -> Fonts:
    """Load the screen fonts once; raises :class:`FontsMissing` if a file is absent."""
    normal = _need(Path(terminus_dir) / "terminus-normal.otb", _TERMINUS_PACKAGE)
    bold = _need(Path(terminus_dir) / "terminus-bold.otb", _TERMINUS_PACKAGE)
    sans_bold = _need(Path(dejavu_dir) / "DejaVuSans-Bold.ttf", _DEJAVU_PACKAGE)
    return Fonts(
        small=ImageFont.truetype(normal, 12, layout_engine=_BASIC),
        bold=ImageFont.truetype(bold, 14, layout_engine=_BASIC),
        large=ImageFont.truetype(bold, 16, layout_engine=_BASIC),
        sans_bold_path=sans_bold,
    )
