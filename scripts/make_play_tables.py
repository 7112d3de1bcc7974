"""Write ``euchre_core/play_tables.py``: the replay's tables of play, computed.

Run ``python scripts/make_play_tables.py`` after changing the trump rules
(``euchre_core.cards.effective_suit`` or ``card_power``).  The tables are
:func:`euchre_core.play.build_tables`'s result written out as literals, so a
start reads them instead of computing them (about 10M instructions less);
``tests/core/test_core_fast_replay.py`` checks the file against the function.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from euchre_core.play import build_tables  # noqa: E402  (after the path is set)

COMMAND = "python scripts/make_play_tables.py"
NAMES = ("EFFECTIVE", "SUIT_MASK", "FOLLOW", "RANK_KEY", "BIT_FOR")
HEADER = f'''"""The tables of :mod:`euchre_core.play`, written out by ``{COMMAND}``
from ``euchre_core.play.build_tables()``: do not edit (a test checks them).
"""

# fmt: off
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
    return "".join(parts)


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    path = ROOT / "euchre_core" / "play_tables.py"
    path.write_text(render(), encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
