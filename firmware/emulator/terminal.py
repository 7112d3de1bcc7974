"""The terminal as the referee's OLED and buttons (used by ``euchre-referee emulate``).

- :func:`half_blocks` / :func:`quadrants` / :func:`downscaled` turn a 1-bit
  frame into lines of Unicode block characters.  Half blocks (``▀ ▄ █``) put
  1x2 pixels in a character, so the 128x64 OLED takes 128 columns x 32 rows;
  quadrants (``▘▝▀▖▌▞▛▗▚▐▜▄▙▟█``) put 2x2 pixels in one, 64 x 32, for
  terminals narrower than 130 columns; ``downscaled`` halves the frame
  (64 x 16) for terminals too short for either.
- :class:`TerminalDisplay` is a frame sink like the OLED driver: ``show(image)``
  draws the frame in a border (cursor home and overwrite: no clearing, no
  flicker), with status lines, the key help and a footer (the serial link's
  path) below, and returns the bytes written.
- :class:`KeyDecoder` turns bytes typed at the keyboard into button names
  (:data:`KEYS`), arrow keys included, even when an escape sequence arrives
  split across reads.  :class:`KeyReader` is the thread that reads them.
- :func:`raw_terminal` puts a TTY into raw input mode and always restores it.

Plain ANSI only (no curses): it runs in any terminal, tmux, or a pipe.
"""

from __future__ import annotations

import os
import select
import shutil
import termios
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO, Final, Literal

from ..view import View, suit_symbol

Blocks = Literal["auto", "half", "quad", "small"]

HALF_BLOCKS: Final = (" ", "▀", "▄", "█")
"""Indexed by top + 2*bottom (1 = lit pixel)."""
QUADRANTS: Final = " ▘▝▀▖▌▞▛▗▚▐▜▄▙▟█"
"""Indexed by top-left + 2*top-right + 4*bottom-left + 8*bottom-right."""

ESC_TIMEOUT: Final = 0.05
"""Seconds to wait for the rest of an escape sequence before a lone Esc is a key."""

KEYS: Final[dict[str, str]] = {
    "n": "N", "e": "E", "s": "S", "w": "W",
    "S": "SPADES", "H": "HEARTS", "D": "DIAMONDS", "C": "CLUBS",
    "a": "ALONE",
    "\x7f": "UNDO", "\x08": "UNDO",
    "\r": "OK", "\n": "OK",
    "?": "HELP", "h": "HELP",
    "q": "QUIT", "\x03": "QUIT",
}  # fmt: skip
"""Typed character -> button name (``QUIT`` ends the emulator)."""

ARROWS: Final = {"A": ("PREV", "↑"), "B": ("NEXT", "↓"), "C": ("NEXT", "→"), "D": ("PREV", "←")}

KEY_NAMES: Final = {"\x7f": "Backspace", "\r": "Enter"}
"""How the status line names keys that do not print themselves."""


def _key_for_button() -> dict[str, str]:
    keys: dict[str, str] = {}
    for key, button in KEYS.items():
        if button != "QUIT" and (key.isprintable() or key in KEY_NAMES):
            keys.setdefault(button, KEY_NAMES.get(key, key))
    for letter in "DC":  # the left and right arrows
        button, arrow = ARROWS[letter]
        keys[button] = arrow
    return keys


KEY_FOR_BUTTON: Final = _key_for_button()
"""Button name -> the key that presses it (for the status line)."""

KEY_HELP: Final = (
    "keys: n e s w seats │ S H D C ♠♥♦♣ │ a alone │ Enter OK │ Backspace undo",
    "      ←↑ prev  →↓ next (cursor) │ ? or h help │ q or Ctrl-C quit",
)

# --------------------------------------------------------------------------- pixels -> text


def _pixels(image: Any) -> tuple[int, int, list[list[int]]]:
    """Width, height and rows of 0/1 of a Pillow image (any mode; non-zero =
    lit): the frame the screens draw, as the OLED gets it."""
    bitmap = image if image.mode == "1" else image.convert("1")
    width, height = bitmap.size
    data = bitmap.convert("L").tobytes()  # one byte a pixel: 0 or 255
    rows = [[1 if value else 0 for value in data[y * width:(y + 1) * width]]
            for y in range(height)]
    return width, height, rows


def _pad(rows: list[list[int]], width: int, multiple_x: int, multiple_y: int) -> list[list[int]]:
    padded_width = width + (-width) % multiple_x
    rows = [row + [0] * (padded_width - width) for row in rows]
    while len(rows) % multiple_y:
        rows.append([0] * padded_width)
    return rows


def half_blocks(image: Any) -> list[str]:
    """One character per 1x2 pixels: a WxH frame becomes ceil(H/2) lines of W."""
    width, _, rows = _pixels(image)
    rows = _pad(rows, width, 1, 2)
    return [
        "".join(HALF_BLOCKS[top + 2 * bottom] for top, bottom in zip(upper, lower))
        for upper, lower in zip(rows[0::2], rows[1::2])
    ]


def quadrants(image: Any) -> list[str]:
    """One character per 2x2 pixels: a WxH frame becomes ceil(H/2) lines of ceil(W/2)."""
    width, _, rows = _pixels(image)
    rows = _pad(rows, width, 2, 2)
    lines = []
    for upper, lower in zip(rows[0::2], rows[1::2]):
        lines.append("".join(
            QUADRANTS[upper[x] + 2 * upper[x + 1] + 4 * lower[x] + 8 * lower[x + 1]]
            for x in range(0, len(upper), 2)
        ))
    return lines


def downscaled(image: Any) -> list[str]:
    """Half the size, then half blocks: each 2x2 pixels is lit when 2 or more are
    (keeps 1-pixel strokes); a 128x64 frame becomes 16 lines of 64."""
    width, _, rows = _pixels(image)
    rows = _pad(rows, width, 2, 2)
    small = [
        [1 if upper[x] + upper[x + 1] + lower[x] + lower[x + 1] >= 2 else 0
         for x in range(0, len(upper), 2)]
        for upper, lower in zip(rows[0::2], rows[1::2])
    ]
    small = _pad(small, len(small[0]) if small else 0, 1, 2)
    return [
        "".join(HALF_BLOCKS[top + 2 * bottom] for top, bottom in zip(upper, lower))
        for upper, lower in zip(small[0::2], small[1::2])
    ]


CONVERTERS: Final[dict[str, Callable[[Any], list[str]]]] = {
    "half": half_blocks, "quad": quadrants, "small": downscaled,
}
BLOCK_NAMES: Final = {
    "half": "half blocks", "quad": "quadrant blocks", "small": "half blocks at half size",
}


def framed(lines: Sequence[str], title: str = "") -> list[str]:
    """``lines`` (all the same length) inside a box-drawing border, ``title`` in its top."""
    width = max((len(line) for line in lines), default=0)
    label = f" {title} " if title and len(title) + 4 <= width else ""
    top = "┌─" + label + "─" * (width - len(label) - 1) + "┐" if label else "┌" + "─" * width + "┐"
    return [top, *(f"│{line.ljust(width)}│" for line in lines), "└" + "─" * width + "┘"]


def choose_blocks(columns: int, rows: int, wanted: Blocks = "auto") -> str:
    """The rendering that fits a terminal of ``columns`` x ``rows`` (frame + border + 2)."""
    if wanted != "auto":
        return wanted
    if columns >= 130 and rows >= 36:
        return "half"
    if columns >= 66 and rows >= 36:
        return "quad"
    return "small"


# --------------------------------------------------------------------------- status lines


def status_lines(view: View) -> list[str]:
    """Three lines of plain text under the frame: the score and hand (and
    the house rules when they are not standard), the bid and tricks (the
    bidding as it stands, a lone defender, the last hand), and the prompt
    with what OK does (or the message on the screen)."""
    rules = ", house rules" if view.house_rules else ""
    first = f"NS {view.score_ns}  EW {view.score_ew}  (game to {view.target}{rules})"
    second = ""
    if view.hand is not None:
        first += f"  │  Hand {view.hand}: {view.dealer} deals, {view.leader} leads"
        if view.trump is not None:
            alone = " alone" if view.alone else ""
            second = (f"Trump {suit_symbol(view.trump)} by {view.maker}{alone}"
                      f"  │  tricks NS {view.tricks_ns}  EW {view.tricks_ew}")
            if view.lone_defender:
                second += f"  │  {view.lone_defender} defends alone"
        else:
            parts = [view.bidding] if view.bidding else []
            if view.upcard is not None and not view.bidding:
                parts.append(f"Upcard {suit_symbol(view.upcard)}")
            if view.maker:
                parts.append(f"maker {view.maker}" + (" alone" if view.alone else ""))
            if view.last_hand:
                parts.append(view.last_hand)
            second = "  │  ".join(parts)
    if view.kind == "table":
        question, *more = view.prompt.split("\n")  # the panel's lines, on one
        third = " · ".join([question, *more])
        if view.choices:  # the choices next to the question, what it adds after them
            third = " · ".join([f"{question}  {choices_words(view)}", *more])
    elif view.kind == "menu":
        third = f"{view.title}:  " + choices_words(view)
    else:
        third = " · ".join([view.title, *view.lines])
    if view.ok_hint:
        third += f"  │  {view.ok_hint}"
    third = "» " + third
    if view.message:
        third = ("! " if view.message_is_error else "» ") + view.message
    return [first, second, third]


def choices_words(view: View) -> str:
    """A list's choices on one line, ``▸`` on the one under the cursor, each
    with its key when a key picks it (then in the screen's order).  A
    cursor's list goes round, so its line goes round too: from the choice
    PREV reaches, then the cursor's, then on as NEXT goes (the terminal's
    width cuts the line: what is cut is the farthest from the cursor, never
    what one press reaches)."""
    count = len(view.choices)
    keyed = any(choice.key for choice in view.choices)
    first = (view.cursor - 1) % count if count > 2 and not keyed else 0
    return " · ".join(
        (f"{KEY_FOR_BUTTON.get(choice.key, choice.key)} " if choice.key else "")
        + ("▸" if index == view.cursor else "") + choice.label
        for index, choice in ((at % count, view.choices[at % count])
                              for at in range(first, first + count)))


# --------------------------------------------------------------------------- the display


class TerminalDisplay:
    """A frame sink drawing on a terminal: ``show(image)`` returns bytes written.

    ``status`` gives the plain-text lines drawn under the frame (the emulator
    passes the referee's view as words); ``size`` gives (columns, rows);
    :attr:`footer` starts the last line on every frame (the serial link's
    path), before a :meth:`note`, which the next frame takes away.
    """

    def __init__(self, out: BinaryIO, *, blocks: Blocks = "auto",
                 status: Callable[[], Sequence[str]] = lambda: (),
                 size: Callable[[], tuple[int, int]] | None = None,
                 key_help: Sequence[str] = KEY_HELP) -> None:
        self.out = out
        self.blocks = blocks
        self.status = status
        self.size = size or self._terminal_size
        self.key_help = tuple(key_help)
        self.last_image: Any = None
        self.note_text = ""
        self.footer = ""
        """The start of the last line under the frame, on every frame ("" for none)."""
        self.frames = 0
        self.mode = ""
        self.level = "on"
        """The screen's care (:mod:`firmware.care`): ``"on"``, ``"dim"`` (said
        in the title) or ``"off"`` (drawn dark until a key wakes it)."""
        self._cleared = False
        self._bottom_row = 0

    def _terminal_size(self) -> tuple[int, int]:
        try:
            size = os.get_terminal_size(self.out.fileno())
        except (OSError, ValueError, AttributeError):
            size = shutil.get_terminal_size((140, 45))
        return size.columns, size.lines

    def show(self, image: Any) -> int:
        """Draw a new frame (with the status and key help under it)."""
        self.last_image = image
        self.note_text = ""
        self.frames += 1
        return self.redraw()

    def set_level(self, level: str) -> None:
        """The panel dimmed, blanked or on again: drawn so."""
        self.level = level
        self.redraw()

    def redraw(self, *, clear: bool = False) -> int:
        """Draw the last frame again (after a resize: ``clear=True``)."""
        if self.last_image is None:
            return 0
        columns, rows = self.size()
        mode = choose_blocks(columns, rows, self.blocks)
        if mode != self.mode:
            clear = True
        self.mode = mode
        title = "OLED 128x64" if mode == "half" else f"OLED, {BLOCK_NAMES[mode]}"
        image = self.last_image
        if self.level != "on":
            title += " (dimmed)" if self.level == "dim" else " (blank: a key wakes it)"
        if self.level == "off":
            image = image.point(lambda value: 0)
        frame = framed(CONVERTERS[mode](image), title)
        self._bottom_row = len(frame) + 1
        lines = frame + self._bottom_lines(columns, rows, mode)
        lines = [line[:columns] for line in lines[:max(rows, 1)]]
        prefix = "\x1b[H\x1b[2J" if clear or not self._cleared else "\x1b[H"
        self._cleared = True
        text = prefix + "\x1b[K\r\n".join(lines) + "\x1b[K\x1b[J"
        return self._write(text)

    def _bottom_lines(self, columns: int, rows: int, mode: str) -> list[str]:
        lines = list(self.status()) + list(self.key_help)
        note = self.note_text
        if not note and mode != "half" and self.blocks == "auto":
            note = (f"({columns}x{rows} terminal: drawn with {BLOCK_NAMES[mode]}; "
                    "130x40 shows every pixel)")
        return lines + [self._last_line(note)]

    def _last_line(self, note: str) -> str:
        """The footer, then the note (the last line under the frame)."""
        return "  │  ".join(part for part in (self.footer, note) if part)

    def note(self, text: str) -> int:
        """Show a short note on the last line (an unknown key...), frame untouched."""
        self.note_text = text
        if self.last_image is None:
            return 0
        columns, rows = self.size()
        row = self._bottom_row + len(self._bottom_lines(columns, rows, self.mode)) - 1
        if row > rows:
            return 0
        try:
            return self._write(f"\x1b[{row};1H{self._last_line(text)[:columns]}\x1b[K")
        except OSError:  # the terminal is gone; the next frame says so to the referee
            return 0

    def _write(self, text: str) -> int:
        data = text.encode("utf-8")
        self.out.write(data)
        self.out.flush()
        return len(data)


# --------------------------------------------------------------------------- keys


@dataclass(frozen=True)
class Key:
    """One key typed: ``name`` is a button (``"N"``, ``"HEARTS"``, ``"OK"``,
    ``"PREV"``, ``"HELP"``...), ``"QUIT"``, or ``""`` for a key that means
    nothing; ``text`` says what was typed, for messages."""

    name: str
    text: str


def _describe(char: str) -> str:
    names = {"\r": "Enter", "\n": "Enter", "\x7f": "Backspace", "\x08": "Backspace",
             "\x1b": "Esc", "\t": "Tab", " ": "Space", "\x03": "Ctrl-C"}
    if char in names:
        return names[char]
    if char < " ":
        return f"Ctrl-{chr(ord(char) + 64)}"
    return char


class KeyDecoder:
    """Bytes from the keyboard -> :class:`Key` s.

    Arrows come as ``ESC [ A``..``ESC [ D`` (or ``ESC O A``.., and with
    modifiers ``ESC [ 1 ; 5 A``): up/left = PREV, down/right = NEXT.  A sequence
    split across reads is kept until it is complete; :meth:`flush` ends a
    lone Esc.  Enter may be ``\\r``, ``\\n`` or ``\\r\\n`` (one OK).  Other
    escape sequences and non-ASCII characters are unknown keys.
    """

    def __init__(self) -> None:
        self._pending = b""
        self._after_cr = False

    @property
    def pending(self) -> bool:
        """An escape sequence or UTF-8 character is incomplete."""
        return bool(self._pending)

    def feed(self, data: bytes) -> list[Key]:
        buffer = self._pending + data
        self._pending = b""
        keys: list[Key] = []
        index = 0
        while index < len(buffer):
            byte = buffer[index]
            if byte == 0x1B:
                used, key = self._escape(buffer[index:])
                if used == 0:  # incomplete: wait for more bytes
                    self._pending = buffer[index:]
                    break
                index += used
                keys.append(key)
                self._after_cr = False
                continue
            if byte >= 0x80:
                length = 2 if byte >= 0xC0 else 1
                length = 3 if byte >= 0xE0 else length
                length = 4 if byte >= 0xF0 else length
                if index + length > len(buffer):
                    self._pending = buffer[index:]
                    break
                text = buffer[index:index + length].decode("utf-8", "replace")
                keys.append(Key("", text))
                index += length
                self._after_cr = False
                continue
            char = chr(byte)
            index += 1
            if char == "\n" and self._after_cr:
                self._after_cr = False
                continue
            self._after_cr = char == "\r"
            keys.append(Key(KEYS.get(char, ""), _describe(char)))
        return keys

    @staticmethod
    def _escape(buffer: bytes) -> tuple[int, Key]:
        """Decode an escape sequence at the start of ``buffer``: (bytes used, key),
        or (0, ...) when it is not complete yet."""
        if len(buffer) < 2:
            return 0, Key("", "Esc")
        second = buffer[1]
        if second == ord("O"):  # SS3: ESC O A (application cursor keys)
            if len(buffer) < 3:
                return 0, Key("", "Esc")
            final = chr(buffer[2])
            name, text = ARROWS.get(final, ("", f"Esc O {final}"))
            return 3, Key(name, text)
        if second == 0x1B or second >= 0x80:
            return 1, Key("", "Esc")
        if second != ord("["):  # Alt+key (the terminal sends Esc first): not a button
            return 2, Key("", "Alt-" + _describe(chr(second)))
        index = 2
        while index < len(buffer) and 0x20 <= buffer[index] <= 0x3F:
            index += 1  # parameters and intermediates
        if index >= len(buffer):
            return 0, Key("", "Esc")
        final = chr(buffer[index])
        if not 0x40 <= buffer[index] <= 0x7E:  # malformed: drop the CSI introducer only
            return 2, Key("", "Esc [")
        name, text = ARROWS.get(final, ("", "Esc [" + buffer[2:index + 1].decode("ascii")))
        return index + 1, Key(name, text)

    def flush(self) -> list[Key]:
        """The input went quiet: whatever is pending is a key of its own (a lone Esc)."""
        pending, self._pending = self._pending, b""
        if not pending:
            return []
        if pending[0] == 0x1B:
            return [Key("", "Esc"), *self.feed(pending[1:])] if len(pending) > 1 else [
                Key("", "Esc")]
        return [Key("", pending.decode("utf-8", "replace"))]


class KeyReader(threading.Thread):
    """Reads ``fd`` until EOF or :meth:`stop`, calling ``on_key`` for each key
    (from this thread) and ``on_eof`` once input ends."""

    def __init__(self, fd: int, on_key: Callable[[Key], None],
                 on_eof: Callable[[], None]) -> None:
        super().__init__(name="key-reader", daemon=True)
        self.fd = fd
        self.on_key = on_key
        self.on_eof = on_eof
        self.decoder = KeyDecoder()
        self._stopping = threading.Event()

    def stop(self) -> None:
        self._stopping.set()

    def run(self) -> None:
        decoder = self.decoder
        while not self._stopping.is_set():
            timeout = ESC_TIMEOUT if decoder.pending else 0.1
            try:
                ready, _, _ = select.select([self.fd], [], [], timeout)
                data = os.read(self.fd, 1024) if ready else None
            except (OSError, ValueError):
                data = b""
            if data is None:
                for key in decoder.flush() if decoder.pending else ():
                    self.on_key(key)
                continue
            if not data:
                for key in decoder.flush():
                    self.on_key(key)
                self.on_eof()
                return
            for key in decoder.feed(data):
                self.on_key(key)


# --------------------------------------------------------------------------- terminal modes


@contextmanager
def raw_terminal(fd: int) -> Iterator[bool]:
    """Raw keyboard input on a TTY (no echo, no line editing, Ctrl-C is a byte);
    the old mode is restored on leaving, whatever happens.  Yields False (and
    changes nothing) when ``fd`` is not a TTY."""
    try:
        old = termios.tcgetattr(fd)
    except (termios.error, OSError, ValueError):
        yield False
        return
    iflag, oflag, cflag, lflag, ispeed, ospeed, cc = old
    cc = list(cc)
    cc[termios.VMIN], cc[termios.VTIME] = 1, 0
    iflag &= ~(termios.IXON | termios.ICRNL | termios.INLCR | termios.IGNCR)
    lflag &= ~(termios.ICANON | termios.ECHO | termios.ISIG | termios.IEXTEN)
    termios.tcsetattr(fd, termios.TCSANOW, [iflag, oflag, cflag, lflag, ispeed, ospeed, cc])
    try:
        yield True
    finally:
        try:
            termios.tcsetattr(fd, termios.TCSANOW, old)
        except (termios.error, OSError):
            pass  # the terminal is gone (a closed tmux pane): nothing to restore


SCREEN_ENTER: Final = "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J"
"""Alternate screen, cursor hidden."""
SCREEN_LEAVE: Final = "\x1b[?25h\x1b[?1049l"
