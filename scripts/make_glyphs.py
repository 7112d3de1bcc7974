"""Draw every Terminus glyph the screens use into ``firmware/fontfiles/*.cells``.

Run ``python scripts/make_glyphs.py`` after changing a font file.  Each
``.cells`` file is one strike (a weight at one pixel size) as Pillow draws it
(mode "1", the basic layout: exactly what the screens drew through Pillow), so
the device draws text without importing Pillow (``firmware/glyphs.py`` reads
them).  ``tests/firmware/test_fw_glyphs.py`` redraws every file in memory and
checks it is byte for byte the one shipped.

Which characters a font has comes from its ``cmap`` table (read here with
``struct``: Pillow does not list them).  The format is in ``firmware/glyphs.py``.
"""

from __future__ import annotations

import argparse
import struct
import sys
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from firmware.fonts import FONT_DIR  # noqa: E402
from firmware.glyphs import (  # noqa: E402  (after the path is set)
    CELLS_FILES,
    HEADER,
    MAGIC,
    NOTDEF,
    cells_path,
)


def font_codepoints(font_file: Path) -> list[int]:
    """The code points ``font_file``'s Unicode ``cmap`` maps to a glyph (not .notdef)."""
    data = font_file.read_bytes()
    (tables,) = struct.unpack_from(">H", data, 4)
    cmap = None
    for index in range(tables):
        tag, _, offset, _ = struct.unpack_from(">4sIII", data, 12 + 16 * index)
        if tag == b"cmap":
            cmap = offset
    if cmap is None:
        raise ValueError(f"{font_file}: no cmap table")
    _, subtables = struct.unpack_from(">HH", data, cmap)
    best: tuple[int, int] | None = None  # (format, offset)
    for index in range(subtables):
        platform, encoding, offset = struct.unpack_from(">HHI", data, cmap + 4 + 8 * index)
        if (platform, encoding) in ((3, 10), (0, 4), (3, 1), (0, 3)):
            (fmt,) = struct.unpack_from(">H", data, cmap + offset)
            if best is None or fmt > best[0]:
                best = (fmt, cmap + offset)
    if best is None:
        raise ValueError(f"{font_file}: no Unicode cmap")
    fmt, at = best
    points: set[int] = set()
    if fmt == 12:
        (groups,) = struct.unpack_from(">I", data, at + 12)
        for group in range(groups):
            first, last, glyph = struct.unpack_from(">III", data, at + 16 + 12 * group)
            points.update(point for point in range(first, last + 1) if glyph + point - first)
    elif fmt == 4:
        (segments_x2,) = struct.unpack_from(">H", data, at + 6)
        segments = segments_x2 // 2
        ends = struct.unpack_from(f">{segments}H", data, at + 14)
        starts = struct.unpack_from(f">{segments}H", data, at + 16 + segments_x2)
        deltas = struct.unpack_from(f">{segments}h", data, at + 16 + 2 * segments_x2)
        range_at = at + 16 + 3 * segments_x2
        offsets = struct.unpack_from(f">{segments}H", data, range_at)
        for segment in range(segments):
            for point in range(starts[segment], ends[segment] + 1):
                if point == 0xFFFF:
                    continue
                if offsets[segment] == 0:
                    glyph = (point + deltas[segment]) & 0xFFFF
                else:
                    where = (range_at + 2 * segment + offsets[segment]
                             + 2 * (point - starts[segment]))
                    (glyph,) = struct.unpack_from(">H", data, where)
                    glyph = (glyph + deltas[segment]) & 0xFFFF if glyph else 0
                if glyph:
                    points.add(point)
    else:
        raise ValueError(f"{font_file}: cmap format {fmt} is not read here")
    return sorted(points)


def _cell(font: ImageFont.FreeTypeFont, char: str, advance: int, height: int) -> bytes:
    """One glyph as Pillow draws it at (0, 0): ``advance`` columns, each
    little-endian with bit r = row r lit."""
    image = Image.new("1", (advance, height), 0)
    draw = ImageDraw.Draw(image)
    draw.fontmode = "1"
    draw.text((0, 0), char, font=font, fill=1)
    column_bytes = (height + 7) // 8
    out = bytearray()
    pixels = image.load()
    assert pixels is not None
    for x in range(advance):
        bits = sum(1 << y for y in range(height) if pixels[x, y])
        out += bits.to_bytes(column_bytes, "little")
    return bytes(out)


def cells_file(font_name: str, size: int, font_dir: Path = FONT_DIR) -> bytes:
    """The ``.cells`` file of ``font_name`` (a file in ``font_dir``) at ``size`` px."""
    font_file = font_dir / font_name
    font = ImageFont.truetype(str(font_file), size, layout_engine=ImageFont.Layout.BASIC)
    advance = int(font.getlength("M"))
    points = font_codepoints(font_file)
    for point in points:  # Terminus is a monospaced font of whole cells
        if font.getlength(chr(point)) != advance or font.getbbox(chr(point)) != (
            0, 0, advance, size,
        ):
            raise ValueError(
                f"{font_file} {size} px: U+{point:04X} is not one {advance}x{size} cell")
    column_bytes = (size + 7) // 8
    out = bytearray(HEADER.pack(MAGIC, advance, size, column_bytes, len(points)))
    out += struct.pack(f"<{len(points)}I", *points)
    for point in points:
        out += _cell(font, chr(point), advance, size)
    out += _cell(font, chr(NOTDEF), advance, size)  # what a character without a glyph draws
    return bytes(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.parse_args()
    for (font_name, size) in CELLS_FILES:
        path = cells_path(font_name, size)
        path.write_bytes(cells_file(font_name, size))
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
