"""Terminus glyph cells, drawn without Pillow.

Terminus is a monospaced bitmap font: at a strike of ``size`` px every glyph
is one cell ``advance`` columns wide and ``size`` rows tall, drawn from the
point given (Pillow's default anchor, the top-left of the cell).  The cells
are made once from the shipped font files by ``scripts/make_glyphs.py`` (with
Pillow, so they are exactly what Pillow draws; a test redraws them and
compares) and kept in ``firmware/fontfiles/*.cells``.  The device then draws
text from them: importing Pillow costs more instructions than all the rest of
its start.

A ``.cells`` file (all numbers little-endian)::

    header   b"TCEL", advance (u8), size (u8), bytes per column (u8), pad (u8),
             count (u32)
    points   count x u32: the code points with a glyph, ascending
    cells    (count + 1) x advance columns of ``bytes per column`` bytes:
             bit r of a column is row r of the cell lit; the last cell is
             the .notdef box, drawn for a character the font does not have.
"""

from __future__ import annotations

import struct
import sys
from array import array
from bisect import bisect_left
from pathlib import Path
from typing import Final

__all__ = ["CELLS_FILES", "BitmapFont", "cells_path", "load_strike"]

FONT_DIR: Final = Path(__file__).resolve().parent / "fontfiles"

MAGIC: Final = b"TCEL"
HEADER: Final = struct.Struct("<4sBBBxI")
KEPT_LINES: Final = 256
"""Lines of text a font keeps drawn (:meth:`BitmapFont.line`)."""
NOTDEF: Final = 0x10FFFD
"""A private-use code point no font has: it draws the .notdef box."""

NORMAL_FILE: Final = "terminus-normal.otb"
BOLD_FILE: Final = "terminus-bold.otb"
STRIKES: Final = (12, 14, 16, 18, 20, 22, 24, 28, 32)
"""The pixel sizes Terminus has glyph bitmaps for."""

CELLS_FILES: Final = ((NORMAL_FILE, 12), *((BOLD_FILE, size) for size in STRIKES))
"""The strikes the screens draw with, as (font file, size): normal 12 px and
every bold strike (titles and the winner's banner)."""


def cells_path(font_name: str, size: int, font_dir: Path = FONT_DIR) -> Path:
    """Where the cells of ``font_name`` at ``size`` px are kept."""
    return font_dir / f"{Path(font_name).stem}-{size}.cells"


class BitmapFont:
    """One Terminus strike read from its ``.cells`` file.

    Offers what the screens measured Pillow's fonts by: :attr:`size` (the cell
    height, px) and :meth:`getlength`; and :meth:`cell`, a glyph's columns.
    """

    def __init__(self, path: Path) -> None:
        data = path.read_bytes()
        if len(data) < HEADER.size or data[:len(MAGIC)] != MAGIC:
            raise ValueError(f"{path} is not a glyph cells file")
        _, advance, size, column_bytes, count = HEADER.unpack_from(data)
        expected = HEADER.size + 4 * count + (count + 1) * advance * column_bytes
        if len(data) != expected:
            raise ValueError(f"{path} is damaged: {len(data)} bytes, not {expected}")
        self.path = path
        self.size: int = size
        """Cell height in px (the strike)."""
        self.advance: int = advance
        """Cell width in px: every character's advance."""
        self._column_bytes = column_bytes
        self._points = array("I")
        start = HEADER.size
        self._points.frombytes(data[start:start + 4 * count])
        if sys.byteorder != "little":
            self._points.byteswap()
        self._cells_at = start + 4 * count
        self._count = count
        self._data = data
        self._cells: dict[str, tuple[int, ...]] = {}
        self._lines: dict[str, tuple[int, ...]] = {}

    def __repr__(self) -> str:
        return f"<BitmapFont {self.path.name}: {self.advance}x{self.size}>"

    def getlength(self, text: str) -> int:
        """Width of ``text`` in px (as Pillow's ``FreeTypeFont.getlength``)."""
        return len(text) * self.advance

    def has_glyph(self, char: str) -> bool:
        """Whether the font has a glyph for ``char`` (not the .notdef box)."""
        point = ord(char)
        index = bisect_left(self._points, point)
        return index < self._count and self._points[index] == point

    def cell(self, char: str) -> tuple[int, ...]:
        """``char``'s columns, left to right: bit r of each is row r lit."""
        cell = self._cells.get(char)
        if cell is None:
            point = ord(char)
            index = bisect_left(self._points, point)
            if index >= self._count or self._points[index] != point:
                index = self._count  # the .notdef box
            step = self._column_bytes
            at = self._cells_at + index * self.advance * step
            data = self._data
            cell = tuple(int.from_bytes(data[at + x * step:at + (x + 1) * step], "little")
                         for x in range(self.advance))
            self._cells[char] = cell
        return cell


    def line(self, text: str) -> tuple[int, ...]:
        """The columns of ``text``'s cells side by side (the last
        :data:`KEPT_LINES` asked for are kept: a frame redraws the same names,
        scores and prompts press after press)."""
        line = self._lines.get(text)
        if line is None:
            line = tuple(column for char in text for column in self.cell(char))
            if len(self._lines) >= KEPT_LINES:
                del self._lines[next(iter(self._lines))]  # the oldest
            self._lines[text] = line
        return line


_loaded: dict[Path, BitmapFont] = {}


def load_strike(font_name: str, size: int, font_dir: Path = FONT_DIR) -> BitmapFont:
    """The strike of ``font_name`` at ``size`` px (read once).  Raises
    ``FileNotFoundError`` when its ``.cells`` file is missing, ``ValueError``
    when it is not one or is damaged (the wrong length)."""
    path = cells_path(font_name, size, font_dir)
    font = _loaded.get(path)
    if font is None:
        font = _loaded[path] = BitmapFont(path)
    return font
