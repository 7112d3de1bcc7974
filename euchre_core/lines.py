"""A log line's spelling, below everything that reads one: its checksum
(``*XXXX``, CRC-16/CCITT-FALSE), its comment (``# ...`` outside quotes), its
surrounding white space.  Imports nothing of the package but its errors."""

from __future__ import annotations

import binascii
from typing import Final

from .events import LogSyntaxError

__all__ = ["checksum", "strip_line", "with_checksum"]


def checksum(text: str) -> str:
    """CRC-16/CCITT-FALSE of ``text``'s UTF-8 bytes, as four upper-case hex digits."""
    return f"{binascii.crc_hqx(text.encode('utf-8'), 0xFFFF):04X}"


def with_checksum(line: str) -> str:
    """``line`` followed by ``*XXXX``."""
    return f"{line}*{checksum(line)}"


_HEX: Final = frozenset("0123456789abcdefABCDEF")


def strip_line(raw: str) -> str:
    """A raw line without its checksum (verified) and comment, trimmed.

    Raises LogSyntaxError for a checksum that does not match.
    """
    text = raw.rstrip("\r\n")
    stripped = text.rstrip()
    if len(stripped) >= 5 and stripped[-5] == "*" and _HEX.issuperset(stripped[-4:]):
        body = stripped[:-5]
        expected = checksum(body)
        if stripped[-4:].upper() != expected:
            raise LogSyntaxError(
                f"checksum mismatch: the line says *{stripped[-4:]}, its text gives *{expected}"
            )
        text = body
    if "#" in text:
        text = _strip_comment(text)
    return text.strip()


def _strip_comment(text: str) -> str:
    if '"' not in text:
        return text.partition("#")[0]
    in_quotes = False
    escaped = False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\" and in_quotes:
            escaped = True
        elif char == '"':
            in_quotes = not in_quotes
        elif char == "#" and not in_quotes:
            return text[:index]
    return text
