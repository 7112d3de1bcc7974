"""``euchre-referee emulate``: frames as text, keys as buttons, and whole hands
typed into a real pseudo-terminal and into tmux, read back from the journal."""

from __future__ import annotations

import io
import os
import pty
import shlex
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pexpect
import pytest
from PIL import Image
from support.app_kit import press
from support.clock import FakeClock
from support.serial_kit import TIMEOUT
from support.system_tools import needs

from euchre_core import Seat, Suit, Team, parse_event
from euchre_core.events import NewGame, Order, Players, Trick, Upcard
from firmware.app import Referee
from firmware.cli import build_parser
from firmware.config import Config, ConfigError
from firmware.emulator.run import build_emulator, emulator_config
from firmware.emulator.terminal import (
    KEY_HELP,
    Key,
    KeyDecoder,
    TerminalDisplay,
    choose_blocks,
    downscaled,
    framed,
    half_blocks,
    quadrants,
    raw_terminal,
    status_lines,
)
from firmware.journal import Store
from firmware.view import View

ROOT = Path(__file__).resolve().parents[2]
HAND_KEYS = ["n", "H", "s", "H", "\r", "s", "s", "n", "s", "e"]
JOURNAL = [
    "euchre-log 1",
    "players N=Ragnar E=Sigríður S=South W=Anna",
    "game dealer=N",
    "upcard H",
    "order S",
    "trick S",
    "trick S",
    "trick N",
    "trick S",
    "trick E",
]


def image(width: int, height: int, lit: list[tuple[int, int]]) -> Image.Image:
    picture = Image.new("1", (width, height), 0)
    for xy in lit:
        picture.putpixel(xy, 1)
    return picture


# 4x4:  x.x.   (row 0)
#       .xx.   (row 1)
#       ....   (row 2)
#       ...x   (row 3)
SAMPLE = [(0, 0), (2, 0), (1, 1), (2, 1), (3, 3)]


# --------------------------------------------------------------------------- image -> text


def test_fw_half_blocks_exact() -> None:
    assert half_blocks(image(4, 4, SAMPLE)) == ["▀▄█ ", "   ▄"]


def test_fw_half_blocks_pads_odd_height() -> None:
    full = image(3, 3, [(x, y) for x in range(3) for y in range(3)])
    assert half_blocks(full) == ["███", "▀▀▀"]


def test_fw_quadrants_exact() -> None:
    # top-left pair: TL + BR lit; top-right pair: left column lit; bottom-right: BR lit
    assert quadrants(image(4, 4, SAMPLE)) == ["▚▌", " ▗"]


@pytest.mark.parametrize(("lit", "char"), [
    ([], " "), ([(0, 0)], "▘"), ([(1, 0)], "▝"), ([(0, 1)], "▖"), ([(1, 1)], "▗"),
    ([(0, 0), (1, 0)], "▀"), ([(0, 1), (1, 1)], "▄"), ([(0, 0), (0, 1)], "▌"),
    ([(1, 0), (1, 1)], "▐"), ([(1, 0), (0, 1)], "▞"), ([(0, 0), (1, 1)], "▚"),
    ([(0, 0), (1, 0), (0, 1)], "▛"), ([(0, 0), (1, 0), (1, 1)], "▜"),
    ([(0, 0), (0, 1), (1, 1)], "▙"), ([(1, 0), (0, 1), (1, 1)], "▟"),
    ([(0, 0), (1, 0), (0, 1), (1, 1)], "█"),
])
def test_fw_quadrant_each_pattern(lit: list[tuple[int, int]], char: str) -> None:
    assert quadrants(image(2, 2, lit)) == [char]


def test_fw_downscaled_keeps_strokes_drops_specks() -> None:
    # 4x4 -> 2x2 pixels -> one line of 2 half blocks: a 2-pixel stroke in the top-left
    # and bottom-right 2x2 blocks stays; the lone pixel in the top-right goes
    strokes = image(4, 4, [(0, 0), (0, 1), (3, 0), (2, 3), (3, 3)])
    assert downscaled(strokes) == ["▀▄"]


def test_fw_oled_frame_is_128_by_32_characters() -> None:
    frame = image(128, 64, [(0, 0), (127, 63)])
    lines = half_blocks(frame)
    assert len(lines) == 32 and {len(line) for line in lines} == {128}
    assert lines[0] == "▀" + " " * 127 and lines[31] == " " * 127 + "▄"
    assert [len(quadrants(frame)), len(quadrants(frame)[0])] == [32, 64]
    assert [len(downscaled(frame)), len(downscaled(frame)[0])] == [16, 64]


def test_fw_framed_with_and_without_title() -> None:
    assert framed(["ab", "cd"]) == ["┌──┐", "│ab│", "│cd│", "└──┘"]
    assert framed(["abcdefgh"], "OK") == ["┌─ OK ───┐", "│abcdefgh│", "└────────┘"]


def test_fw_choose_blocks_by_terminal_size() -> None:
    assert choose_blocks(140, 40) == "half"
    assert choose_blocks(129, 40) == "quad"
    assert choose_blocks(80, 24) == "small"
    assert choose_blocks(80, 24, "half") == "half"


def test_fw_status_lines_in_words() -> None:
    view = View(score_ns=3, score_ew=7, hand=5, dealer="Ragnar", leader="Sigríður",
                trump="H", maker="Anna", alone=True, tricks_ns=1, tricks_ew=2,
                prompt="Trick 4: who won?")
    assert status_lines(view) == [
        "NS 3  EW 7  (game to 10)  │  Hand 5: Ragnar deals, Sigríður leads",
        "Trump ♥ by Anna alone  │  tricks NS 1  EW 2",
        "» Trick 4: who won?",
    ]
    refused = View(prompt="New game: who deals first?", message="hearts was turned down")
    assert status_lines(refused)[2] == "! hearts was turned down"


def test_fw_status_lines_show_the_new_fields_in_words() -> None:
    bidding = View(score_ns=3, score_ew=7, target=11, hand=5, dealer="Ragnar", leader="Anna",
                   upcard="H", prompt="Sigríður to bid", ok_hint="OK: Sigríður passes",
                   bidding="Round 2 · passed: Anna, Ragnar · ♥ turned down",
                   last_hand="Last hand: Anna euchred, EW +2", house_rules=True)
    assert status_lines(bidding) == [
        "NS 3  EW 7  (game to 11, house rules)  │  Hand 5: Ragnar deals, Anna leads",
        "Round 2 · passed: Anna, Ragnar · ♥ turned down  │  Last hand: Anna euchred, EW +2",
        "» Sigríður to bid  │  OK: Sigríður passes",
    ]
    lone = View(hand=2, dealer="Ragnar", leader="Anna", trump="D", maker="Anna", alone=True,
                lone_defender="Þórhildur", prompt="Trick 1: who won?", ok_hint="OK: claim")
    assert status_lines(lone)[1] == (
        "Trump ♦ by Anna alone  │  tricks NS 0  EW 0  │  Þórhildur defends alone")
    page = View(kind="rules", title="House rules", lines=("Game to 11", "Defend alone: on"))
    assert status_lines(page)[2] == "» House rules · Game to 11 · Defend alone: on"


CURSOR_STATES = {
    "the first dealer": "",
    "the bidding": "game dealer=W",
    "the trick winner": "game dealer=W|make N H",
    "the fourth trick, makers 2 of 3": "game dealer=W|make N H|trick N|trick E|trick N",
    "the fourth trick, makers 3 of 3": "game dealer=W|make N H|trick N|trick N|trick N",
}
"""Cursor-layout steps with the longest lists (the trick list after three
tricks offers every claim count too)."""


@pytest.mark.parametrize("state", CURSOR_STATES)
def test_fw_status_line_shows_what_the_cursor_can_choose(tmp_path: Path, state: str) -> None:
    """Cursor layout: wherever the cursor is, the emulator's line, cut as an
    80-column terminal cuts it, names the choice under the cursor and the ones
    PREV and NEXT reach; and, whole, every choice of the list."""
    clock = FakeClock()
    referee = Referee(Config(state_dir=tmp_path, layout="cursor"), Store(tmp_path),
                      renderer=lambda view: view, clock=clock)
    for line in filter(None, CURSOR_STATES[state].split("|")):
        assert referee.enter(parse_event(line)) is None  # type: ignore[arg-type]
    count = len(referee.view().choices)
    assert count > 3
    for _ in range(count):
        clock.advance(10)
        view = referee.view()
        labels = [choice.label for choice in view.choices]
        whole = status_lines(view)[2]
        assert all(label in whole for label in labels), (whole, labels)
        cut = whole[:80]
        near = {labels[(view.cursor + step) % count] for step in (-1, 1)}
        assert "▸" + labels[view.cursor] in cut and all(label in cut for label in near), (
            cut, near)
        referee.press("NEXT")
    referee.store.close()


# --------------------------------------------------------------------------- the display


def test_fw_display_draws_frame_status_and_keys() -> None:
    out = io.BytesIO()
    display = TerminalDisplay(out, size=lambda: (140, 40), status=lambda: ["NS 1  EW 0"])
    frame = image(128, 64, [(0, 0)])
    written = display.show(frame)
    data = out.getvalue()
    assert written == len(data)
    text = data.decode()
    assert text.startswith("\x1b[H\x1b[2J┌─ OLED 128x64 ─")  # cleared once, at the first frame
    assert "\r\n│▀" + " " * 127 + "│\x1b[K" in text
    assert "\r\nNS 1  EW 0\x1b[K\r\n" + KEY_HELP[0] + "\x1b[K" in text
    assert text.endswith("\x1b[K\x1b[J")
    assert text.count("\r\n") == 34 + 1 + len(KEY_HELP)  # frame, status, keys, note
    again = display.show(frame)
    assert out.getvalue()[written:].startswith(b"\x1b[H\xe2\x94\x8c")  # home, no clearing
    assert again == len(out.getvalue()) - written


def test_fw_display_narrow_terminal_uses_quadrants_and_says_so() -> None:
    out = io.BytesIO()
    display = TerminalDisplay(out, size=lambda: (100, 40))
    display.show(image(128, 64, []))
    text = out.getvalue().decode()
    assert "┌─ OLED, quadrant blocks ─" in text
    assert "│" + " " * 64 + "│" in text
    assert "(100x40 terminal: drawn with quadrant blocks; 130x40 shows every pixel)" in text
    assert max(len(line) for line in text.split("\r\n")) <= 100 + len("\x1b[H\x1b[2J\x1b[K")


def test_fw_display_short_terminal_cuts_lines_instead_of_scrolling() -> None:
    out = io.BytesIO()
    display = TerminalDisplay(out, size=lambda: (66, 20), status=lambda: ["a", "b", "c"])
    display.show(image(128, 64, []))
    assert out.getvalue().decode().count("\r\n") == 19  # 20 rows: never a 21st line


def test_fw_display_note_touches_only_the_last_line() -> None:
    out = io.BytesIO()
    display = TerminalDisplay(out, size=lambda: (140, 40), status=lambda: ["s1", "s2", "s3"])
    display.show(image(128, 64, []))
    start = len(out.getvalue())
    written = display.note("x: not a button")
    assert out.getvalue()[start:] == b"\x1b[40;1Hx: not a button\x1b[K"
    assert written == len(b"\x1b[40;1Hx: not a button\x1b[K")


# --------------------------------------------------------------------------- keys


def names(keys: list[Key]) -> list[str]:
    return [key.name for key in keys]


def test_fw_keys_to_buttons() -> None:
    decoder = KeyDecoder()
    assert names(decoder.feed(b"neswSHDCa")) == [
        "N", "E", "S", "W", "SPADES", "HEARTS", "DIAMONDS", "CLUBS", "ALONE"]
    assert names(decoder.feed(b"\x7f\x08\r\n\n\r\r?hq\x03")) == [
        "UNDO", "UNDO", "OK", "OK", "OK", "OK", "HELP", "HELP", "QUIT", "QUIT"]


def test_fw_arrow_keys_whole_and_split_at_every_byte() -> None:
    stream = b"\x1b[A\x1b[Bn\x1b[C\x1b[D\x1bOA\x1b[1;5C"
    expected = ["PREV", "NEXT", "N", "NEXT", "PREV", "PREV", "NEXT"]
    assert names(KeyDecoder().feed(stream)) == expected
    for cut in range(1, len(stream)):
        decoder = KeyDecoder()
        keys = decoder.feed(stream[:cut]) + decoder.feed(stream[cut:])
        assert names(keys) == expected, cut
    decoder = KeyDecoder()
    assert [k for byte in stream for k in names(decoder.feed(bytes([byte])))] == expected
    assert not decoder.pending


def test_fw_unknown_keys_are_named_not_pressed() -> None:
    decoder = KeyDecoder()
    keys = decoder.feed(b"x \t\x1b[3~\x1bn")
    assert keys == [Key("", "x"), Key("", "Space"), Key("", "Tab"), Key("", "Esc [3~"),
                    Key("", "Alt-n")]
    assert decoder.feed("é".encode()[:1]) == [] and decoder.pending
    assert decoder.feed("é".encode()[1:]) == [Key("", "é")]
    assert decoder.feed(b"\x1b") == [] and decoder.pending
    assert decoder.flush() == [Key("", "Esc")]
    assert not decoder.pending


def test_fw_raw_terminal_is_restored_even_after_an_error() -> None:
    master, slave = pty.openpty()
    try:
        before = termios.tcgetattr(slave)
        assert before[3] & termios.ICANON and before[3] & termios.ECHO
        with pytest.raises(RuntimeError), raw_terminal(slave) as raw:
            assert raw is True
            now = termios.tcgetattr(slave)
            assert not now[3] & (termios.ICANON | termios.ECHO | termios.ISIG)
            assert not now[0] & termios.ICRNL
            raise RuntimeError("boom")
        assert termios.tcgetattr(slave) == before
    finally:
        os.close(master)
        os.close(slave)
    read_end, write_end = os.pipe()
    try:
        with raw_terminal(read_end) as raw:
            assert raw is False  # a pipe: left alone
    finally:
        os.close(read_end)
        os.close(write_end)


# --------------------------------------------------------------------------- wiring


def parse(*argv: str):  # type: ignore[no-untyped-def]
    return build_parser().parse_args(["emulate", *argv])


def test_fw_options_make_the_config(tmp_path: Path) -> None:
    config = emulator_config(parse(
        "--state-dir", str(tmp_path), "--rules", "target=11 stick-the-dealer=off",
        "--players", 'N=Bob W="Anna K"', "--layout", "cursor"))
    assert config.state_dir == tmp_path
    assert config.rules.to_tokens() == ["target=11", "stick-the-dealer=off"]
    assert config.names[Seat.N] == "Bob" and config.names[Seat.W] == "Anna K"
    assert config.names[Seat.E] == "Sigríður"
    assert config.layout == "cursor"
    with pytest.raises(ConfigError, match="--rules: unknown rules setting 'colour'"):
        emulator_config(parse("--rules", "colour=red"))
    with pytest.raises(ConfigError, match="--players"):
        emulator_config(parse("--players", "N"))


def test_fw_build_emulator_plays_a_hand_in_process(tmp_path: Path) -> None:
    out = io.BytesIO()
    referee, events, display = build_emulator(parse("--state-dir", str(tmp_path)), out=out)
    try:
        display.size = lambda: (140, 40)
        assert referee.refresh() and display.frames == 1
        for key in HAND_KEYS:
            for name in names(KeyDecoder().feed(key.encode())):
                referee.handle(press(name))
                referee.refresh()
        assert referee.game.score == {Team.NS: 1, Team.EW: 0}
        assert "NS 1  EW 0  (game to 10)" in out.getvalue().decode()
        assert events.empty()
    finally:
        referee.store.close()


# --------------------------------------------------------------------------- end to end


def emulator_env() -> dict[str, str]:
    env = dict(os.environ, TERM="xterm", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def check_journal(state_dir: Path) -> None:
    store = Store(state_dir)
    try:
        game_id = store.latest()
        assert game_id is not None
        game = store.load(game_id)
        assert game.score == {Team.NS: 1, Team.EW: 0}
        assert game.hands_played == 1
        assert game.entries == [
            Players(((Seat.N, "Ragnar"), (Seat.E, "Sigríður"), (Seat.S, "South"),
                     (Seat.W, "Anna"))),
            NewGame(Seat.N), Upcard(Suit.HEARTS), Order(Seat.S, False),
            Trick(Seat.S), Trick(Seat.S), Trick(Seat.N), Trick(Seat.S), Trick(Seat.E),
        ]
        assert store.journal_text(game_id).splitlines() == JOURNAL
    finally:
        store.close()


def test_fw_emulate_in_a_pseudo_terminal(tmp_path: Path) -> None:
    """Type a hand as a person would, quit, restart: the game resumes."""
    child = pexpect.spawn(
        sys.executable, ["-m", "firmware", "emulate", "--state-dir", str(tmp_path)],
        cwd=str(ROOT), env=emulator_env(), dimensions=(40, 140), timeout=TIMEOUT, encoding="utf-8",
    )
    try:
        child.expect_exact("┌─ OLED 128x64 ─")
        child.expect_exact("» Tap the first dealer · ALONE: names, rules")
        steps = [
            ("n", "Hand 1: Ragnar deals, Sigríður leads"),
            ("H", "Round 1 · ♥ up"),
            ("s", "» Which trump?"),
            ("H", "» Is that the call?"),
            ("\r", "» Trick 1: who won?"),
            ("s", "» Trick 2: who won?"),
            ("s", "» Trick 3: who won?"),
            ("n", "» Trick 4: who won?"),
            ("s", "» Trick 5: who won?"),
            ("e", "NS 1  EW 0  (game to 10)"),
        ]
        for key, shown in steps:
            child.send(key)
            child.expect_exact(shown)
        child.expect_exact("South made it")
        child.send("x")
        child.expect_exact("x: not a button")
        child.send("q")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before
    check_journal(tmp_path)

    again = pexpect.spawn(
        sys.executable, ["-m", "firmware", "emulate", "--state-dir", str(tmp_path)],
        cwd=str(ROOT), env=emulator_env(), dimensions=(40, 140), timeout=TIMEOUT, encoding="utf-8",
    )
    try:
        again.expect_exact("NS 1  EW 0  (game to 10)  │  Hand 2: Sigríður deals, South leads")
        again.sendcontrol("c")
        again.expect(pexpect.EOF)
    finally:
        again.close(force=True)
    assert again.exitstatus == 0
    check_journal(tmp_path)  # quitting added nothing


def test_fw_emulate_sigterm_restores_the_terminal(tmp_path: Path) -> None:
    child = pexpect.spawn(
        sys.executable, ["-m", "firmware", "emulate", "--state-dir", str(tmp_path)],
        cwd=str(ROOT), env=emulator_env(), dimensions=(40, 140), timeout=TIMEOUT, encoding="utf-8",
    )
    try:
        child.expect_exact("\x1b[?1049h\x1b[?25l")  # alternate screen, cursor hidden
        child.expect_exact("» Tap the first dealer · ALONE: names, rules")
        child.send("n")
        child.expect_exact("Hand 1: Ragnar deals")
        child.kill(signal.SIGTERM)
        child.expect_exact("\x1b[?25h\x1b[?1049l")  # cursor shown, screen back
        child.expect_exact("euchre-referee: stopped; games kept in")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    store = Store(tmp_path)
    try:
        assert store.lines(store.latest() or 0)[-1] == "game dealer=N"
    finally:
        store.close()


def test_fw_emulate_keys_from_a_pipe(tmp_path: Path) -> None:
    """Without a terminal, keys are read from the pipe; its end quits."""
    done = subprocess.run(
        [sys.executable, "-m", "firmware", "emulate", "--state-dir", str(tmp_path)],
        input="".join(HAND_KEYS).encode(), capture_output=True, cwd=ROOT, env=emulator_env(),
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert "NS 1  EW 0  (game to 10)" in done.stdout.decode()
    check_journal(tmp_path)


def test_fw_emulate_bad_option_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "firmware", "emulate", "--state-dir", str(tmp_path),
         "--rules", "target=eleven"],
        capture_output=True, cwd=ROOT, env=emulator_env(), timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stderr.decode().startswith("euchre-referee: --rules: ")
    assert done.stdout == b""


@needs("tmux")
def test_fw_emulate_under_tmux(tmp_path: Path) -> None:
    socket = f"fw-emulator-{os.getpid()}"
    tmux = ["tmux", "-u", "-L", socket]
    command = " ".join(shlex.quote(part) for part in [
        sys.executable, "-m", "firmware", "emulate", "--state-dir", str(tmp_path)])
    env = emulator_env()
    env.pop("TMUX", None)

    def screen() -> str:
        return subprocess.run([*tmux, "capture-pane", "-p", "-t", "emu"], capture_output=True,
                              text=True, env=env, timeout=TIMEOUT).stdout

    def wait_for(text: str) -> str:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            shown = screen()
            if text in shown:
                return shown
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never shown; the screen:\n{screen()}")

    subprocess.run([*tmux, "new-session", "-d", "-s", "emu", "-x", "140", "-y", "45",
                    f"cd {shlex.quote(str(ROOT))} && exec {command}"],
                   check=True, env=env, timeout=TIMEOUT)
    try:
        shown = wait_for("q or Ctrl-C quit")
        assert "┌─ OLED 128x64 ─" in shown
        assert "» Tap the first dealer · ALONE: names, rules" in shown
        assert "█" in shown and "▀" in shown  # the frame, in half blocks
        for key in ["n", "H", "s", "H", "Enter", "s", "s", "n", "s", "e"]:
            subprocess.run([*tmux, "send-keys", "-t", "emu", key], check=True, env=env,
                           timeout=TIMEOUT)
        shown = wait_for("NS 1  EW 0")
        assert KEY_HELP[0] in shown
        subprocess.run([*tmux, "send-keys", "-t", "emu", "q"], check=True, env=env, timeout=TIMEOUT)
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and subprocess.run(
                [*tmux, "has-session", "-t", "emu"], capture_output=True, env=env).returncode == 0:
            time.sleep(0.1)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True, env=env)
    check_journal(tmp_path)
