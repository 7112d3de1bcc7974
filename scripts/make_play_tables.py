"""Write ``euchre_core/play_tables.py``: the replay's tables of play, computed.

Run ``python scripts/make_play_tables.py`` after changing the trump rules
(``euchre_core.cards.effective_suit`` or ``card_power``) or the trick block
template.  It writes :func:`euchre_core.play.build_tables`'s result as
literals (a start reads them instead of computing them: about 10M
instructions less) and the trick blocks of ``WRITTEN_BLOCKS`` from
``block_source`` (their bytecode is cached with the module's; compiling one
costs 3M).  ``tests/core/test_core_fast_replay.py`` checks the file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from euchre_core.play import (  # noqa: E402  (after the path is set)
    WRITTEN_BLOCKS,
    WRITTEN_SIGNATURE,
    block_source,
    build_tables,
)

COMMAND = "python scripts/make_play_tables.py"
NAMES = ("EFFECTIVE", "SUIT_MASK", "FOLLOW", "RANK_KEY", "BIT_FOR")
HEADER = f'''"""The tables and trick blocks of :mod:`euchre_core.play`, written out by
``{COMMAND}`` from ``euchre_core.play.build_tables()`` and
``block_source()``: do not edit (a test checks them).
"""

# fmt: off
from collections.abc import Sequence
from typing import Any
'''


def _literal(value: object, indent: str = "") -> str:
    """``value`` (ints in nested tuples) as Python source, lines under 100 characters."""
    assert isinstance(value, tuple)
    inner = indent + "    "
    if all(isinstance(item, int) for item in value):
        lines, line = [], ""
        for item in map(str, value):
            if line and len(inner) + len(line) + len(item) + 2 > 99:
                lines.append(line.rstrip())
                line = ""
            line += item + ", "
        lines.append(line.rstrip())
        return "(\n" + "".join(f"{inner}{text}\n" for text in lines) + indent + ")"
    return "(\n" + "".join(f"{inner}{_literal(item, inner)},\n" for item in value) + indent + ")"


def render() -> str:
    """The text of euchre_core/play_tables.py."""
    parts = [HEADER]
    for name, table in zip(NAMES, build_tables(), strict=True):
        parts.append(f"\n{name} = {_literal(table)}\n")
    for size, tricks in WRITTEN_BLOCKS:
        name = f"block_{size}x{tricks}"
        parts.append(f"\n\n{block_source(size, tricks, name, WRITTEN_SIGNATURE)}")
    parts.append("\n\nBLOCKS = {\n" + "".join(
        f"    ({size}, {tricks}): block_{size}x{tricks},\n" for size, tricks in WRITTEN_BLOCKS
    ) + "}\n")
    return "".join(parts)


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    path = ROOT / "euchre_core" / "play_tables.py"
    path.write_text(render(), encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
