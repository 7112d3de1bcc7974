"""A 1-bit frame for the 128x64 OLED, drawn without Pillow.

The frame is kept as the panel keeps it: a column at a time.  ``columns[x]``
is an int whose bit ``y`` is pixel (x, y) lit, so a glyph cell is drawn by
shifting its columns to the text's row and OR-ing them in, and the
controller's 8 pages of column bytes (:meth:`Frame.pages`) are one
``to_bytes`` per column.  The drawing calls mean what Pillow's ``ImageDraw``
means by them (inclusive corners, clipped to the frame; tests draw the same
things both ways and compare), so the screens read as they did when they
drew through Pillow.  :meth:`Frame.to_image` gives the Pillow image, for
luma's devices, the emulator and the PNG files.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from PIL import Image

    from .glyphs import BitmapFont

__all__ = ["Frame"]

WIDTH: Final = 128
"""The screen's width in px (the OLED's 128 columns)."""
HEIGHT: Final = 64
"""The screen's height in px (8 pages of 8 rows)."""
PAGE_ROWS: Final = 8  # rows of one controller page: one byte of a column


_FLOAT32: Final = struct.Struct("f")


def _glyph_origin(x: float, y: float) -> tuple[int, int]:
    """The pixel where Pillow puts a glyph cell drawn at (``x``, ``y``): the
    whole parts (truncated toward 0), moved by the fractions (which Pillow
    hands FreeType as C floats) counted in FreeType's 1/64 px (x rounded half
    away from 0, y half up) and rounded to a pixel (x half up, y half down).
    Measured against ``ImageDraw.text``: tests/firmware/test_fw_screens.py
    draws both at random places."""
    whole_x, whole_y = int(x), int(y)
    if x == whole_x and y == whole_y:  # what the screens draw at
        return whole_x, whole_y
    (fraction_x,) = _FLOAT32.unpack(_FLOAT32.pack(x - whole_x))
    (fraction_y,) = _FLOAT32.unpack(_FLOAT32.pack(y - whole_y))
    units_x = math.floor(abs(fraction_x) * 64 + 0.5)
    if fraction_x < 0:
        units_x = -units_x
    units_y = math.floor(fraction_y * 64 + 0.5)
    return whole_x + ((units_x + 32) >> 6), whole_y + ((units_y + 31) >> 6)


class Frame:
    """A ``width`` x ``height`` 1-bit picture, the screen's 128x64 unless told
    otherwise (any size: a column is an int of ``height`` bits)."""

    mode: Final = "1"

    def __init__(self, width: int = WIDTH, height: int = HEIGHT) -> None:
        self.width = width
        self.height = height
        self.columns: list[int] = [0] * width
        """Bit ``y`` of ``columns[x]`` is pixel (x, y) lit."""
        self._full = (1 << height) - 1

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in px, as a Pillow image's."""
        return (self.width, self.height)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Frame):
            return NotImplemented
        return self.size == other.size and self.columns == other.columns

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"<Frame {self.width}x{self.height}, {sum(map(int.bit_count, self.columns))} lit>"

    def copy(self) -> Frame:
        twin = Frame(self.width, self.height)
        twin.columns = list(self.columns)
        return twin

    # -- reading -----------------------------------------------------------

    def getpixel(self, xy: tuple[int, int]) -> int:
        """255 for a lit pixel, 0 for a dark one (Pillow's mode "1" values)."""
        x, y = xy
        return 255 if self.columns[x] >> y & 1 else 0

    def _stacked(self) -> tuple[int, bytes]:
        """The page count, and every column as that many bytes, little-endian,
        left to right (byte ``page_count * x + p`` is column x's page p)."""
        page_count = -(-self.height // PAGE_ROWS)
        return page_count, b"".join(column.to_bytes(page_count, "little")
                                    for column in self.columns)

    def pages(self) -> list[bytes]:
        """The controller's pages, top first: bit k of byte x of page p is
        pixel (x, 8p + k) lit."""
        page_count, stacked = self._stacked()
        return [stacked[page::page_count] for page in range(page_count)]

    def to_image(self) -> Image.Image:
        """The same picture as a Pillow mode "1" image."""
        from PIL import Image

        page_count, stacked = self._stacked()
        # Each column is a row of the transposed image, its pixels least significant bit first.
        sideways = Image.frombytes("1", (page_count * PAGE_ROWS, self.width), stacked, "raw", "1;R")
        return sideways.transpose(Image.Transpose.TRANSPOSE).crop((0, 0, self.width, self.height))

    def tobytes(self) -> bytes:
        """The pixels packed as Pillow packs a mode "1" image (rows, most
        significant bit first)."""
        return self.to_image().tobytes()

    @classmethod
    def from_image(cls, image: Any) -> Frame:
        """The frame of a Pillow image (any mode; non-zero is lit)."""
        bitmap = image if image.mode == "1" else image.convert("1")
        width, height = bitmap.size
        frame = cls(width, height)
        data = bitmap.convert("L").tobytes()
        for x in range(width):
            frame.columns[x] = sum(1 << y for y in range(height) if data[y * width + x])
        return frame

    # -- drawing (ImageDraw's meanings) -------------------------------------

    def _rows(self, top: int, bottom: int) -> int:
        """The mask of rows ``top``..``bottom`` inclusive, clipped; 0 if none."""
        top, bottom = max(top, 0), min(bottom, self.height - 1)
        if top > bottom:
            return 0
        return ((1 << (bottom - top + 1)) - 1) << top

    def _paint(self, left: int, right: int, rows: int, fill: int) -> None:
        """Set (``fill`` non-zero) or clear ``rows`` in columns ``left``..``right``."""
        left, right = max(left, 0), min(right, self.width - 1)
        columns = self.columns
        if fill:
            for x in range(left, right + 1):
                columns[x] |= rows
        else:
            for x in range(left, right + 1):
                columns[x] &= ~rows

    def rectangle(self, box: Sequence[int], fill: int | None = None,
                  outline: int | None = None) -> None:
        """``ImageDraw.rectangle``: corners (x0, y0, x1, y1) inclusive; the
        inside filled with ``fill``, the 1 px border drawn with ``outline``
        (dark when neither is given, as Pillow's default ink on mode "1").
        Pillow draws the outline of a box one row tall two rows tall; the
        screens draw no such box, and this draws it one row tall."""
        x0, y0, x1, y1 = box
        if fill is None and outline is None:
            outline = 0
        if x1 < x0 or y1 < y0:
            raise ValueError(f"rectangle {tuple(box)}: x1 must be >= x0 and y1 >= y0")
        if fill is not None:
            inset = 1 if outline is not None else 0
            self._paint(x0 + inset, x1 - inset, self._rows(y0 + inset, y1 - inset), fill)
        if outline is not None:
            self._paint(x0, x1, self._rows(y0, y0) | self._rows(y1, y1), outline)
            sides = self._rows(y0, y1)
            self._paint(x0, x0, sides, outline)
            self._paint(x1, x1, sides, outline)

    def line(self, xy: Sequence[int], fill: int) -> None:
        """``ImageDraw.line`` of width 1, horizontal or vertical only."""
        x0, y0, x1, y1 = xy
        if x0 != x1 and y0 != y1:
            raise ValueError(f"line {tuple(xy)}: only horizontal and vertical lines are drawn")
        self._paint(min(x0, x1), max(x0, x1), self._rows(min(y0, y1), max(y0, y1)), fill)

    def point(self, xy: tuple[int, int] | Iterable[tuple[int, int]], fill: int) -> None:
        """``ImageDraw.point``: one point (x, y) or several."""
        points = [xy] if isinstance(xy, tuple) and isinstance(xy[0], int) else xy
        for x, y in points:  # type: ignore[misc]
            if 0 <= x < self.width:
                self._paint(x, x, self._rows(y, y), fill)

    def text(self, xy: tuple[float, float], text: str, fill: int = 255, *,
             font: BitmapFont) -> None:
        """``ImageDraw.text`` with ``fontmode = "1"``: ``text``'s glyph cells,
        their top-left corner at ``xy``, the lit pixels set to ``fill``."""
        x, y = _glyph_origin(*xy)
        cells = font.line(text)  # every column of the line, left to right
        start = max(0, -x)
        stop = min(len(cells), self.width - x)
        columns, full = self.columns, self._full
        for at in range(start, stop):
            column = cells[at]
            if column:
                bits = (column << y if y >= 0 else column >> -y) & full
                if fill:
                    columns[x + at] |= bits
                else:
                    columns[x + at] &= ~bits
