"""Draw the default wiring (``hw/README.md``) as a picture, ``hw/wiring.png``.

    .venv/bin/python scripts/draw_wiring.py [OUT]

The buttons' pins come from :data:`firmware.config.DEFAULT_PINS`, so the
picture always shows the wiring the program expects; the header layout, the
display's pins (the recommended 2.42" SSD1309 on SPI, and an I2C panel's) and
the optional parts are tables below.  The drawing is
deterministic (same fonts, same pixels): ``tests/firmware/test_fw_wiring.py``
redraws it and compares it with the committed file.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from firmware.buttons import LABELS  # noqa: E402
from firmware.config import DEFAULT_PINS  # noqa: E402
from firmware.fonts import FontsMissing  # noqa: E402

DEFAULT_OUT = REPO / "hw" / "wiring.png"
DEJAVU_DIR = Path("/usr/share/fonts/truetype/dejavu")
"""DejaVu Sans from the Debian package fonts-dejavu-core: only this picture uses it
(the referee's screens use the Terminus files it ships)."""

# ----------------------------------------------------------------------------- tables

HEADER: dict[int, str] = {
    1: "3V3", 2: "5V",
    3: "GPIO2", 4: "5V",
    5: "GPIO3", 6: "GND",
    7: "GPIO4", 8: "GPIO14",
    9: "GND", 10: "GPIO15",
    11: "GPIO17", 12: "GPIO18",
    13: "GPIO27", 14: "GND",
    15: "GPIO22", 16: "GPIO23",
    17: "3V3", 18: "GPIO24",
    19: "GPIO10", 20: "GND",
    21: "GPIO9", 22: "GPIO25",
    23: "GPIO11", 24: "GPIO8",
    25: "GND", 26: "GPIO7",
    27: "GPIO0", 28: "GPIO1",
    29: "GPIO5", 30: "GND",
    31: "GPIO6", 32: "GPIO12",
    33: "GPIO13", 34: "GND",
    35: "GPIO19", 36: "GPIO16",
    37: "GPIO26", 38: "GPIO20",
    39: "GND", 40: "GPIO21",
}
"""The 40-pin header (the same on every Pi from the Zero 2 W to the Pi 5): header
pin number -> name.  Odd pins are the column on the SD-card side's left."""

SPI_DISPLAY_PINS: tuple[tuple[str, int], ...] = (
    ("GND", 20), ("VCC", 17), ("SCL", 23), ("SDA", 19), ("RES", 22), ("DC", 18), ("CS", 24))
"""The recommended panel, the 2.42" SSD1309 as sold (wired for SPI): its seven pins in
their order on the module -> header pin.  SCL is SPI0's clock (GPIO11), SDA its MOSI
(GPIO10), CS its CE0 (GPIO8); DC and RES are luma's default GPIO24 and GPIO25.  All
seven land on header pins 17 to 24 (21, GPIO9 = MISO, stays empty)."""

I2C_DISPLAY_PINS: tuple[tuple[str, int], ...] = (("GND", 6), ("VCC", 1), ("SCL", 5), ("SDA", 3))
"""A 4-pin I2C panel (SSD1306, SH1106), the alternative: its pins -> header pin.  Not
drawn (the picture names them); hw/README.md's table."""

GROUND_PINS: tuple[int, ...] = (9, 14, 34, 39)
"""The GND pins the drawn ground bus is tied to (any one would do; hw/README.md's
button table suggests these; pin 20 is the display's, pin 30 is left free here for
the buzzer's room)."""

# The optional parts: hw/referee.toml's commented-out [extras] values (Config.buzzer_pin,
# status_led_pin, seat_led_pins), the same as hw/README.md's "Optional parts" table.
OPTIONAL_PINS: dict[str, int] = {
    "buzzer": 12,
    "status LED": 16,
    "seat LED N": 14,
    "seat LED E": 15,
    "seat LED S": 4,
    "seat LED W": 18,
}
UART_PINS: tuple[int, ...] = (14, 15)
"""The UART's TX and RX: seat LEDs N and E are there, so not with the serial link on
the UART (every other GPIO is a button's, an optional part's or the display's)."""


def header_pin(gpio: int) -> int:
    """The header pin of BCM GPIO number ``gpio``."""
    for pin, name in HEADER.items():
        if name == f"GPIO{gpio}":
            return pin
    raise ValueError(f"GPIO{gpio} is not on the 40-pin header")


def button_rows() -> list[tuple[str, str, int, int]]:
    """(config name, label, GPIO, header pin) of each button of DEFAULT_PINS."""
    return [(name, LABELS[name], gpio, header_pin(gpio))
            for name, gpio in DEFAULT_PINS.items()]


# ----------------------------------------------------------------------------- geometry

WIDTH, HEIGHT = 1400, 920
WHITE = (255, 255, 255)
BLACK = (0, 0, 0)
GROUND = (20, 20, 20)
POWER = (215, 30, 30)
FIVE_V = (160, 0, 70)
SDA = (30, 90, 220)
SCL = (235, 175, 0)
CONTROL = (140, 60, 170)  # the display's DC, RES and CS
BUTTON = (0, 150, 60)
OPTIONAL = (130, 130, 130)
TEXT_GREY = (95, 95, 95)
BOARD = (45, 45, 45)
GOLD = (212, 175, 55)
SUIT_RED = (200, 20, 30)

CX = WIDTH // 2               # the header's middle
TOP = 186                     # y of pins 1 and 2
ROW = 32                      # y step between pin pairs
PIN_DX = 16                   # x of a pin column from the middle
BOARD_HALF = 62               # the header board's half width
TAG_W = 84                    # pin name tags
LEFT_END = CX - BOARD_HALF - 4 - TAG_W   # where wires meet the left tags
RIGHT_END = CX + BOARD_HALF + 4 + TAG_W  # ... and the right ones
LEFT_BUS, RIGHT_BUS = 60, WIDTH - 60
BUS_BOTTOM = TOP + 19 * ROW + 48
WIRE = 3


def row_y(pin: int) -> int:
    return TOP + (pin - 1) // 2 * ROW


def side(pin: int) -> int:
    """-1 for the odd (left) column, +1 for the even (right) one."""
    return -1 if pin % 2 else 1


def pin_end(pin: int) -> tuple[int, int]:
    """Where a wire meets pin ``pin``'s name tag."""
    return (LEFT_END if pin % 2 else RIGHT_END), row_y(pin)


class Fonts:
    """DejaVu Sans (labels) and DejaVu Sans Bold (names, titles) at the sizes used."""

    def __init__(self, dejavu_dir: Path = DEJAVU_DIR) -> None:
        regular = dejavu_dir / "DejaVuSans.ttf"
        bold = dejavu_dir / "DejaVuSans-Bold.ttf"
        for path in (regular, bold):
            if not path.is_file():
                raise FontsMissing(
                    f"font file {path} is missing: install the Debian package fonts-dejavu-core"
                )
        basic = ImageFont.Layout.BASIC  # the same glyph placement with or without libraqm

        def font(path: Path, size: int) -> ImageFont.FreeTypeFont:
            return ImageFont.truetype(str(path), size, layout_engine=basic)

        self.title = font(bold, 26)
        self.subtitle = font(regular, 15)
        self.tag = font(bold, 14)
        self.number = font(bold, 12)
        self.label = font(bold, 17)
        self.suit = font(regular, 24)
        self.small = font(regular, 13)
        self.small_bold = font(bold, 13)
        self.legend = font(regular, 14)


# ----------------------------------------------------------------------------- primitives


def polyline(draw: ImageDraw.ImageDraw, points: Sequence[tuple[int, int]],
             color: tuple[int, int, int], width: int = WIRE, dashed: bool = False) -> None:
    """Axis-parallel segments through ``points``; dashed draws 9 on, 6 off."""
    if not dashed:
        draw.line(list(points), fill=color, width=width, joint="curve")
        return
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        length = abs(x1 - x0) + abs(y1 - y0)
        dx, dy = (x1 > x0) - (x1 < x0), (y1 > y0) - (y1 < y0)
        for start in range(0, length, 15):
            stop = min(start + 9, length)
            draw.line([(x0 + dx * start, y0 + dy * start), (x0 + dx * stop, y0 + dy * stop)],
                      fill=color, width=width)


def dot(draw: ImageDraw.ImageDraw, x: int, y: int, color: tuple[int, int, int]) -> None:
    draw.ellipse([x - 5, y - 5, x + 5, y + 5], fill=color)


def text(draw: ImageDraw.ImageDraw, xy: tuple[int, int], value: str,
         font: ImageFont.FreeTypeFont, fill: tuple[int, int, int] = BLACK,
         anchor: str = "lm", background: bool = False) -> None:
    if background:  # blank out what the text sits on (a dashed wire)
        left, top, right, bottom = draw.textbbox(xy, value, font=font, anchor=anchor)
        draw.rectangle([left - 4, top - 2, right + 4, bottom + 2], fill=WHITE)
    draw.text(xy, value, font=font, fill=fill, anchor=anchor)


def label_box(draw: ImageDraw.ImageDraw, fonts: Fonts, x: int, y: int, width: int,
              label: str, note: str = "") -> None:
    """A button cap centred on (x, y): the label, and a small note after it."""
    draw.rounded_rectangle([x - width // 2, y - 13, x + width // 2, y + 13], radius=7,
                           fill=(232, 246, 236), outline=BUTTON, width=2)
    if label in "♠♥♦♣":
        color = SUIT_RED if label in "♥♦" else BLACK
        if note:
            text(draw, (x - width // 2 + 12, y + 1), label, fonts.suit, color)
            text(draw, (x - width // 2 + 38, y), note, fonts.small, TEXT_GREY)
        else:
            text(draw, (x, y + 1), label, fonts.suit, color, "mm")
    else:
        text(draw, (x, y), label, fonts.label, BLACK, "mm")


def resistor(draw: ImageDraw.ImageDraw, fonts: Fonts, x: int, y: int, value: str) -> None:
    """A resistor centred on (x, y), its value written inside."""
    draw.rectangle([x - 30, y - 9, x + 30, y + 9], fill=WHITE, outline=OPTIONAL, width=2)
    text(draw, (x, y), value, fonts.small, TEXT_GREY, "mm")


def led(draw: ImageDraw.ImageDraw, x: int, y: int, direction: int,
        color: tuple[int, int, int]) -> None:
    """An LED centred on (x, y) conducting towards ``direction`` (-1 left, +1 right)."""
    tip = x + 9 * direction
    back = x - 9 * direction
    draw.polygon([(back, y - 10), (back, y + 10), (tip, y)], fill=color, outline=OPTIONAL)
    draw.line([(tip, y - 10), (tip, y + 10)], fill=OPTIONAL, width=3)
    for offset in (-3, 4):  # the light, two little arrows up and away
        x0, y0 = x + offset, y - 12
        x1, y1 = x0 + 7, y0 - 8
        draw.line([(x0, y0), (x1, y1)], fill=OPTIONAL, width=2)
        draw.polygon([(x1, y1), (x1 - 5, y1 + 1), (x1 - 1, y1 + 5)], fill=OPTIONAL)


# ----------------------------------------------------------------------------- parts


def draw_header(draw: ImageDraw.ImageDraw, fonts: Fonts) -> None:
    top, bottom = row_y(1) - 22, row_y(39) + 22
    draw.rounded_rectangle([CX - BOARD_HALF, top, CX + BOARD_HALF, bottom], radius=8,
                           fill=BOARD)
    for pin, name in HEADER.items():
        x, y = CX + side(pin) * PIN_DX, row_y(pin)
        if pin == 1:  # pin 1 has the square pad
            draw.rectangle([x - 10, y - 10, x + 10, y + 10], fill=GOLD)
        else:
            draw.ellipse([x - 10, y - 10, x + 10, y + 10], fill=GOLD)
        draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill=BOARD)
        number_x = CX + side(pin) * (PIN_DX + 16)
        text(draw, (number_x, y), str(pin), fonts.number, WHITE,
             "rm" if side(pin) < 0 else "lm")
        if name == "GND":
            fill, ink = GROUND, WHITE
        elif name == "3V3":
            fill, ink = POWER, WHITE
        elif name == "5V":
            fill, ink = FIVE_V, WHITE
        else:
            fill, ink = (236, 236, 236), BLACK
        if side(pin) < 0:
            box = [LEFT_END, y - 12, CX - BOARD_HALF - 4, y + 12]
        else:
            box = [CX + BOARD_HALF + 4, y - 12, RIGHT_END, y + 12]
        draw.rounded_rectangle(box, radius=5, fill=fill, outline=(150, 150, 150))
        text(draw, ((box[0] + box[2]) // 2, y), name, fonts.tag, ink, "mm")
    text(draw, (CX, top - 16), "Raspberry Pi 40-pin header", fonts.small_bold, BLACK, "mm")
    text(draw, (CX, bottom + 14), "pin 1 at the SD-card end", fonts.small, TEXT_GREY, "mm")


def draw_ground_bus(draw: ImageDraw.ImageDraw, fonts: Fonts, top_left: int,
                    top_right: int) -> None:
    """The common ground: one wire down each side, joined under the header, tied to
    the GND pins of :data:`GROUND_PINS`."""
    polyline(draw, [(LEFT_BUS, top_left), (LEFT_BUS, BUS_BOTTOM), (RIGHT_BUS, BUS_BOTTOM),
                    (RIGHT_BUS, top_right)], GROUND, 4)
    for pin in GROUND_PINS:
        assert HEADER[pin] == "GND", pin
        x, y = pin_end(pin)
        bus = LEFT_BUS if side(pin) < 0 else RIGHT_BUS
        polyline(draw, [(x, y), (bus, y)], GROUND)
        dot(draw, bus, y, GROUND)
    for bus, anchor in ((LEFT_BUS, "lm"), (RIGHT_BUS, "rm")):
        x = bus + (8 if anchor == "lm" else -8)
        text(draw, (x, BUS_BOTTOM - 12), "ground bus", fonts.small_bold, GROUND, anchor)


def draw_buttons(draw: ImageDraw.ImageDraw, fonts: Fonts) -> None:
    """Each button: GPIO pin -- green -- button -- black -- ground bus."""
    for name, label, _gpio, pin in button_rows():
        x_pin, y = pin_end(pin)
        suit = label in "♠♥♦♣"
        width = 132 if suit else 84
        if side(pin) < 0:
            centre, bus = LEFT_BUS + 150, LEFT_BUS
        else:
            centre, bus = RIGHT_BUS - 150, RIGHT_BUS
        inner = centre - side(pin) * width // 2
        outer = centre + side(pin) * width // 2
        polyline(draw, [(x_pin, y), (inner, y)], BUTTON)
        polyline(draw, [(outer, y), (bus, y)], GROUND)
        dot(draw, bus, y, GROUND)
        label_box(draw, fonts, centre, y, width, label, name if suit else "")


DISPLAY_COLORS: dict[str, tuple[int, int, int]] = {
    "GND": GROUND, "VCC": POWER, "SCL": SCL, "SDA": SDA, "RES": CONTROL, "DC": CONTROL,
    "CS": CONTROL}


def draw_display(draw: ImageDraw.ImageDraw, fonts: Fonts) -> None:
    """The 2.42" SPI panel top left, its seven pins down its right edge, each with a
    wire to the header pin it names; at the header, each of those pins with a wire
    of the same colour naming the panel's pin (seven wires to pins 17-24)."""
    right, left = 330, 96
    pin_ys = [124 + 20 * index for index in range(len(SPI_DISPLAY_PINS))]
    top, bottom = pin_ys[0] - 24, pin_ys[-1] + 22
    draw.rounded_rectangle([left, top, right, bottom], radius=8, fill=(25, 60, 120))
    draw.rectangle([left + 14, top + 30, right - 76, bottom - 30], fill=BLACK)
    middle = (left + right - 62) // 2
    for dy, line in ((-10, '2.42" 128x64'), (10, "SSD1309")):
        text(draw, (middle, (top + bottom) // 2 + dy), line, fonts.small_bold,
             (170, 220, 255), "mm")
    text(draw, (left, top - 12), 'Display: 2.42" SSD1309 on SPI, as sold (no soldering)',
         fonts.small_bold, BLACK, "lm")
    for (name, pin), y in zip(SPI_DISPLAY_PINS, pin_ys):
        color = DISPLAY_COLORS[name]
        draw.ellipse([right - 30, y - 6, right - 18, y + 6], fill=GOLD)
        text(draw, (right - 36, y), name, fonts.small_bold, WHITE, "rm")
        polyline(draw, [(right - 18, y), (right + 34, y)], color)
        text(draw, (right + 42, y), f"pin {pin}  {HEADER[pin]}", fonts.small, TEXT_GREY)
        x_pin, y_pin = pin_end(pin)
        stub = x_pin + side(pin) * 34
        polyline(draw, [(x_pin, y_pin), (stub, y_pin)], color)
        text(draw, (stub + side(pin) * 8, y_pin), f"OLED {name}", fonts.small_bold, color,
             "lm" if side(pin) > 0 else "rm")
    # the alternative, named only: a 4-pin I2C panel on pins 1, 3, 5, 6
    i2c = ", ".join(f"{name} pin {pin}" for name, pin in I2C_DISPLAY_PINS)
    x_note = RIGHT_END + 20
    text(draw, (x_note, row_y(1) - 60), "Or a 4-pin I2C panel (SSD1306, SH1106):",
         fonts.small_bold, TEXT_GREY)
    text(draw, (x_note, row_y(1) - 42), f"{i2c} (hw/README.md)", fonts.small, TEXT_GREY)


def draw_optional(draw: ImageDraw.ImageDraw, fonts: Fonts) -> None:
    """The LEDs (GPIO -> 330 ohm -> LED -> ground bus) and the buzzer, grey dashed."""
    for name, gpio in OPTIONAL_PINS.items():
        if name == "buzzer":
            continue
        pin = header_pin(gpio)
        x_pin, y = pin_end(pin)
        direction = side(pin)
        bus = LEFT_BUS if direction < 0 else RIGHT_BUS
        r_x = x_pin + direction * 70
        led_x = x_pin + direction * 150
        polyline(draw, [(x_pin, y), (bus, y)], OPTIONAL, 2, dashed=True)
        resistor(draw, fonts, r_x, y, "330 Ω")
        color = (120, 200, 120) if name.startswith("status") else (255, 215, 90)
        draw.rectangle([led_x - 12, y - 11, led_x + 12, y + 11], fill=WHITE)
        led(draw, led_x, y, direction, color)
        label_x = led_x + direction * 22
        if gpio in UART_PINS:  # the UART's TX or RX: not with the serial link there
            name += f" (UART {'TX' if gpio == UART_PINS[0] else 'RX'})"
        text(draw, (label_x, y - 1), name, fonts.small, TEXT_GREY,
             "lm" if direction > 0 else "rm", background=True)
        dot(draw, bus, y, OPTIONAL)
    draw_buzzer(draw, fonts)


def draw_buzzer(draw: ImageDraw.ImageDraw, fonts: Fonts) -> None:
    """GPIO -> 1 kΩ -> NPN base; emitter -> ground; collector -> buzzer - ; buzzer + -> 5V."""
    pin = header_pin(OPTIONAL_PINS["buzzer"])
    x_pin, y = pin_end(pin)
    assert side(pin) > 0, "the buzzer is drawn on the right of the header"
    base_x = x_pin + 150
    npn_x = base_x + 26
    polyline(draw, [(x_pin, y), (base_x, y)], OPTIONAL, 2, dashed=True)
    resistor(draw, fonts, x_pin + 70, y, "1 kΩ")
    # the transistor: a circle, the base bar, collector up, emitter (arrow) down
    draw.ellipse([npn_x - 24, y - 24, npn_x + 24, y + 24], outline=OPTIONAL, width=2,
                 fill=WHITE)
    draw.line([(base_x, y), (npn_x - 8, y)], fill=OPTIONAL, width=2)
    draw.line([(npn_x - 8, y - 13), (npn_x - 8, y + 13)], fill=OPTIONAL, width=4)
    collector_x = npn_x + 8
    draw.line([(npn_x - 8, y - 6), (collector_x, y - 18), (collector_x, y - 24)],
              fill=OPTIONAL, width=2)
    draw.line([(npn_x - 8, y + 6), (collector_x, y + 18), (collector_x, y + 24)],
              fill=OPTIONAL, width=2)
    draw.polygon([(collector_x, y + 18), (collector_x - 9, y + 17), (collector_x - 4, y + 10)],
                 fill=OPTIONAL)
    text(draw, (npn_x + 30, y), "NPN (2N2222, BC337)", fonts.small, TEXT_GREY)
    # emitter to ground: down to the GND wire of the next pin (34)
    ground_y = row_y(pin + 2)
    assert HEADER[pin + 2] == "GND" and pin + 2 in GROUND_PINS
    polyline(draw, [(collector_x, y + 24), (collector_x, ground_y)], OPTIONAL, 2, dashed=True)
    dot(draw, collector_x, ground_y, OPTIONAL)
    # collector up to the buzzer's minus, the plus to 5V (pin 2)
    buzzer_y = y - 2 * ROW
    polyline(draw, [(collector_x, y - 24), (collector_x, buzzer_y + 16)], OPTIONAL, 2,
             dashed=True)
    draw.ellipse([collector_x - 16, buzzer_y - 16, collector_x + 16, buzzer_y + 16],
                 fill=(245, 245, 245), outline=OPTIONAL, width=2)
    text(draw, (collector_x, buzzer_y), "BZ", fonts.small_bold, TEXT_GREY, "mm")
    text(draw, (collector_x - 24, buzzer_y + 13), "−", fonts.small_bold, TEXT_GREY, "mm")
    text(draw, (collector_x - 24, buzzer_y - 13), "+", fonts.small_bold, TEXT_GREY, "mm")
    plus_y = buzzer_y - ROW - 8
    polyline(draw, [(collector_x, buzzer_y - 16), (collector_x, plus_y)], OPTIONAL, 2,
             dashed=True)
    text(draw, (collector_x + 8, plus_y), "to 5V (pin 2)", fonts.small, TEXT_GREY)
    text(draw, (collector_x + 24, buzzer_y), "active buzzer 3–5 V", fonts.small, TEXT_GREY)
    # and at pin 2 the other end of that wire
    x2, y2 = pin_end(2)
    polyline(draw, [(x2, y2), (x2 + 30, y2)], OPTIONAL, 2, dashed=True)
    text(draw, (x2 + 36, y2), "buzzer +", fonts.small, TEXT_GREY)


def draw_legend(draw: ImageDraw.ImageDraw, fonts: Fonts) -> None:
    y = BUS_BOTTOM + 30
    entries = [
        ("ground", GROUND, False), ("3V3", POWER, False), ("SPI clock", SCL, False),
        ("SPI data", SDA, False), ("DC, RES, CS", CONTROL, False), ("button", BUTTON, False),
        ("optional part", OPTIONAL, True),
    ]
    x = 60
    for name, color, dashed in entries:
        polyline(draw, [(x, y), (x + 40, y)], color, 2 if dashed else WIRE, dashed)
        text(draw, (x + 48, y), name, fonts.legend)
        x += 48 + int(draw.textlength(name, font=fonts.legend)) + 36
    notes = ("Button: a push switch from its GPIO pin to the ground bus, no resistor (the "
             "internal pull-up).   LED: GPIO pin → 330 Ω → LED → ground.   Pin numbers in "
             "the config are BCM GPIO numbers.")
    text(draw, (60, y + 26), notes, fonts.legend, TEXT_GREY)


def draw(fonts: Fonts | None = None) -> Image.Image:
    """The wiring picture."""
    fonts = fonts or Fonts()
    image = Image.new("RGB", (WIDTH, HEIGHT), WHITE)
    draw = ImageDraw.Draw(image)
    text(draw, (60, 34), "Euchre referee: the default wiring", fonts.title, BLACK)
    text(draw, (60, 66), "hw/referee.toml and firmware/config.py DEFAULT_PINS; the header "
         "seen from above.  Grey dashed parts are optional.", fonts.subtitle, TEXT_GREY)
    wired = [*GROUND_PINS,
             *(header_pin(gpio) for gpio in (*DEFAULT_PINS.values(), *OPTIONAL_PINS.values()))]
    top_left = min(row_y(pin) for pin in wired if side(pin) < 0)
    top_right = min(row_y(pin) for pin in wired if side(pin) > 0)
    draw_ground_bus(draw, fonts, top_left, top_right)
    draw_header(draw, fonts)
    draw_display(draw, fonts)
    draw_buttons(draw, fonts)
    draw_optional(draw, fonts)
    draw_legend(draw, fonts)
    return image


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) > 1 or args and args[0].startswith("-"):
        print("usage: scripts/draw_wiring.py [OUT]  (default hw/wiring.png)", file=sys.stderr)
        return 2
    out = Path(args[0]) if args else DEFAULT_OUT
    try:
        image = draw()
    except FontsMissing as error:
        print(f"draw_wiring: {error}", file=sys.stderr)
        return 1
    out.parent.mkdir(parents=True, exist_ok=True)
    image.save(out, optimize=True)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
