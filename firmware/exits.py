"""The exit status of every ``euchre-referee`` command, defined once."""

from __future__ import annotations

from typing import Final

EXIT_OK: Final = 0
"""Done: the log is valid, the entry is durable."""
EXIT_INVALID: Final = 1
"""An invalid log, an entry or request refused (by the rules or the device), a
journal that cannot be used."""
EXIT_USAGE: Final = 2
"""Bad arguments, a missing file, a port that cannot be opened or does not answer,
an entry whose answer was lost and whose fate the device cannot tell (``enter``),
an optional part that is not installed (:mod:`firmware.optional`)."""
