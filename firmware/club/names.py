"""Players' names as the director takes them in and hands them out.

Names are what anyone at the registration desk typed, so they are user input:

- :func:`normalise`: Unicode NFC (a decomposed ``á`` and a composed one are
  one name, one row of the standings), surrounding spaces dropped;
- :func:`lookalike_warning`: a name mixing scripts (a Cyrillic ``А`` in a
  Latin ``Anna``), or looking like a name already registered once look-alike
  letters and accents are set aside, gets a warning in words (registration
  goes on: two people may really be called Ana and Aná);
- :func:`csv_cell`: a cell of ``/standings.csv`` that a spreadsheet would run
  as a formula (starting ``=``, ``+``, ``-``, ``@``, a tab or a carriage
  return) is prefixed with ``'``, as OWASP's advice on CSV injection says.

The look-alike data are Unicode's own (confusables.txt, Scripts), through
the ``confusable-homoglyphs`` package.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import Final

FORMULA_STARTS: Final = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet takes as the start of a formula (or strips before one)."""


def normalise(name: str) -> str:
    """The name in NFC, without surrounding spaces."""
    return unicodedata.normalize("NFC", name).strip()


@lru_cache(maxsize=4096)
def _latin(char: str) -> str:
    """The Latin letter ``char`` looks like (itself when none)."""
    from confusable_homoglyphs import confusables

    if char.isascii():
        return char
    found = confusables.is_confusable(char, greedy=False, preferred_aliases=["latin"])
    if found:
        for glyph in found[0]["homoglyphs"]:
            if glyph["c"].isascii():
                return str(glyph["c"])
    return char


def skeleton(name: str) -> str:
    """What the name looks like: accents off, look-alike letters as Latin, no case."""
    bare = "".join(c for c in unicodedata.normalize("NFKD", name)
                   if not unicodedata.combining(c))
    return "".join(_latin(c) for c in bare).casefold()


def lookalike_warning(name: str, registered: Iterable[str]) -> str | None:
    """A warning in words when ``name`` mixes scripts or looks like a registered
    name (None: nothing to say)."""
    from confusable_homoglyphs import categories, confusables

    if confusables.is_mixed_script(name):
        scripts = sorted({categories.alias(c).title() for c in name if c.isalpha()})
        return f"{name!r} mixes {' and '.join(scripts)} letters: look-alikes of another name?"
    mine = skeleton(name)
    for other in registered:
        if other != name and skeleton(other) == mine:
            return f"{name!r} looks like {other!r}, registered already: the same person?"
    return None


def csv_cell(value: object) -> object:
    """A CSV cell a spreadsheet shows as text: a string starting as a formula
    gets a ``'`` in front; numbers stay numbers."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
