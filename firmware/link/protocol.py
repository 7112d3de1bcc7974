"""The wire of the serial link, once: both ends import it (docs/serial-protocol.md).

Every line either end sends is UTF-8 ending in CR LF; the device ends each of
its lines with a ``*XXXX`` checksum (:func:`euchre_core.log.with_checksum`).
An answer is ``ok [TEXT]``, ``error TEXT``, or a frame: ``ok begin N [ABOUT]``,
N lines, ``ok end``.  Live-feed lines (``event LINE``) may come between answers.
A request may start with a tag, ``@TAG `` (1 to 16 letters or digits): its
answer then starts with the same tag (``@TAG ok ...``, ``@TAG ok begin N``),
so a program never takes another request's answer (or a stray line) for its own.
A request that takes long is told to be under way by ``@TAG working TEXT``
lines before its answer (:data:`WORKING`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Final, NamedTuple

from euchre_core import checksum
from euchre_core.lines import with_checksum

PROTOCOL_VERSION: Final = 1
DEFAULT_BAUDRATE: Final = 115200
"""Bits per second, unless the config (``serial.baudrate``) or ``--baudrate`` says otherwise."""
DEFAULT_TIMEOUT_S: Final = 10.0
"""Seconds the laptop waits for each answer, unless ``--timeout`` says otherwise."""
MAX_LINE: Final = 512
"""Bytes in a request or log line, its CR/LF not counted (the checksum counted)."""
MAX_REPLAY_LINES: Final = 100_000
"""Lines in a log sent to ``replay``."""
CANCEL: Final = b"\x03"
"""Ctrl-C: a request line holding it is dropped, and it abandons a replay sent
without a count (``replay`` ... ``.``); in a counted replay (``replay N``) it is data."""
REPLAY_IDLE_S: Final = 3.0
"""A counted replay that receives no line for this many seconds is abandoned
(so a program killed halfway through a log cannot leave the device waiting)."""
EOL: Final = b"\r\n"
EVENT: Final = "event "
"""The prefix of a live-feed line."""
WORKING: Final = "working "
"""The prefix of a progress line, ``@TAG working TEXT``: the request tagged TAG
is still being done (a long ``replay load``); not its answer, which follows."""
WORKING_EVERY_S: Final = 1.0
"""How often the device says it is still working on a request that takes long
(the laptop waits its timeout again from each such line)."""
FRAME_END: Final = "ok end"
LOAD_WORDS: Final = ("loaded ", "not loaded", "not stored again")
"""How the lines of a ``replay load`` verdict that tell what was stored start."""

_CHECKSUMMED: Final = re.compile(r"\*[0-9A-Fa-f]{4}\s*$")
_TAG: Final = re.compile(rb"@([0-9A-Za-z]{1,16}) ")
TAG_MAX: Final = 16
"""Characters in a request's tag (letters and digits)."""


def is_number(text: str) -> bool:
    """Whether ``text`` is a whole number in ASCII digits (``str.isdigit`` also
    takes '²' and other digits ``int()`` refuses)."""
    return text.isascii() and text.isdigit()


def too_long_reason(limit: int = MAX_LINE) -> str:
    """The words for a line over the limit, on both ends."""
    return f"line too long (max {limit} bytes)"


def too_many_lines_reason() -> str:
    """The words for a log over :data:`MAX_REPLAY_LINES`, on both ends."""
    return f"too long a log (max {MAX_REPLAY_LINES} lines)"


def not_utf8_reason(raw: bytes, error: UnicodeDecodeError) -> str:
    """The words for a line that is not UTF-8, on both ends (and ``replay``)."""
    return f"not UTF-8: byte {error.start + 1} of the line is 0x{raw[error.start]:02X}"


def split_tag(raw: bytes) -> tuple[str, bytes]:
    """A request's tag (``""`` if none) and the rest of the line.

    >>> split_tag(b"@a7 status json")
    ('a7', b'status json')
    >>> split_tag(b"status")
    ('', b'status')
    """
    match = _TAG.match(raw)
    if match is None:
        return "", raw
    return match.group(1).decode("ascii"), raw[match.end():]


def tagged(tag: str, line: str) -> str:
    """An answer line with its request's tag in front (none: unchanged)."""
    return f"@{tag} {line}" if tag else line


class ProtocolError(Exception):
    """A line that breaks the protocol: no checksum, a wrong one, a torn frame."""


class Answer(NamedTuple):
    """One answer: ``ok``/``error`` and its text; a framed answer has ``lines``."""

    ok: bool
    text: str
    lines: list[str] | None = None


# --- writing -------------------------------------------------------------------------


def encode(lines: Iterable[str]) -> bytes:
    """Lines as the device sends them: each with its checksum and CR LF, in one
    piece (so an answer is written whole)."""
    return "".join(with_checksum(line) + "\r\n" for line in lines).encode("utf-8")


def request(line: str, tag: str = "") -> bytes:
    """One request line (with its tag, if any) and its checksum, ready to write."""
    return with_checksum(tagged(tag, line)).encode("utf-8") + EOL


def frame(lines: list[str], about: str = "", tag: str = "") -> list[str]:
    """A multi-line answer: its header (tagged), the lines and the end line."""
    header = f"ok begin {len(lines)}" + (f" {about}" if about else "")
    return [tagged(tag, header), *lines, FRAME_END]


def carries_checksum(text: str) -> bool:
    """Whether a log line already ends with a ``*XXXX`` checksum."""
    return _CHECKSUMMED.search(text) is not None


# --- reading -------------------------------------------------------------------------


def verified(line: str) -> str:
    """A line from the device without its ``*XXXX``; ProtocolError if it is
    missing or does not match."""
    if len(line) < 5 or line[-5] != "*":
        raise ProtocolError(f"a line from the device has no checksum: {line!r}")
    body, given = line[:-5], line[-4:]
    if checksum(body) != given.upper():
        raise ProtocolError(f"a line from the device fails its checksum (*{given}): {line!r}")
    return body


def answer_tag(line: str) -> tuple[str, str]:
    """The tag of an answer line (``""`` if none) and the line without it."""
    if line.startswith("@"):
        tag, _, rest = line[1:].partition(" ")
        return tag, rest
    return "", line


def frame_size(line: str) -> int | None:
    """N when ``line`` (untagged) is a frame header ``ok begin N ...``."""
    parts = line.split(" ", 3)
    if len(parts) >= 3 and parts[:2] == ["ok", "begin"] and is_number(parts[2]):
        return int(parts[2])
    return None


def read_answer(next_line: Callable[[], str],
                next_frame_line: Callable[[], str] | None = None) -> Answer:
    """Read one answer: ``next_line()`` gives the next verified line that is
    not a live-feed line (its tag removed), ``next_frame_line()`` (default: the
    same) the next verified line inside a frame."""
    inside = next_frame_line or next_line
    line = next_line()
    word, _, text = line.partition(" ")
    if word == "error":
        return Answer(False, text)
    if word != "ok":
        raise ProtocolError(f"not an answer from the device: {line!r}")
    parts = text.split(" ", 2)
    if parts[0] == "begin" and len(parts) >= 2 and is_number(parts[1]):
        lines = [inside() for _ in range(int(parts[1]))]
        end = inside()
        if end != FRAME_END:
            raise ProtocolError(f"a framed answer did not end with {FRAME_END!r}: {end!r}")
        return Answer(True, parts[2] if len(parts) > 2 else "", lines)
    return Answer(True, text)
