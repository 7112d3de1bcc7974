"""A log line's spelling, below everything that reads one: its checksum
(``*XXXX``, CRC-16/CCITT-FALSE), its comment (``# ...`` outside quotes), its
surrounding white space, and the characters no line may hold.  Imports
nothing of the package but its errors."""

from __future__ import annotations

import binascii
from typing import Final

from .events import LogSyntaxError

__all__ = ["CONTROL_CODES", "checksum", "control_reason", "strip_line", "with_checksum"]

CONTROL_CODES: Final = frozenset([*range(0x20), 0x7F]) - {0x09}
"""The characters (code points) no log line holds: the C0 controls but TAB,
and DEL.  The replay refuses them and ``send`` does not send them."""


def control_reason(text: str) -> str | None:
    """Why ``text`` (a line without its end) is no log line: its first control
    character; None when it holds none."""
    if text.isprintable():  # the common case, in C (a TAB or a rarer character: look)
        return None
    for char in text:
        if ord(char) in CONTROL_CODES:
            return f"a control character (0x{ord(char):02X}) in the line: a log line holds none"
    return None


def checksum(text: str) -> str:
    """CRC-16/CCITT-FALSE of ``text``'s UTF-8 bytes, as four upper-case hex digits."""
    return f"{binascii.crc_hqx(text.encode('utf-8'), 0xFFFF):04X}"


def with_checksum(line: str) -> str:
    """``line`` followed by ``*XXXX``."""
    return f"{line}*{checksum(line)}"


_HEX: Final = frozenset("0123456789abcdefABCDEF")


def strip_line(raw: str) -> str:
    """A raw line without its checksum (verified) and comment, trimmed.

    Raises LogSyntaxError for a checksum that does not match, or a control
    character (:data:`CONTROL_CODES`).
    """
    text = raw.rstrip("\r\n")
    control = control_reason(text)
    if control is not None:
        raise LogSyntaxError(control)
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
