"""Bad input, at random: the link answers each request once, well formed, and the
game does not change.

Thousands of random byte streams go straight through the line assembler and
the protocol handler (on a real referee and journal, called synchronously);
a few hundred go through a real pseudo-terminal to a referee running its main
loop; a few dozen are cut off by the peer closing the pseudo-terminal.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.serial_kit import Device, Host, wait_for

from drivers.serialport import LineAssembler, TooLong
from euchre_core import LogSyntaxError, checksum, write_log
from euchre_core.lines import strip_line, with_checksum
from firmware.app import Referee
from firmware.config import Config
from firmware.journal import Store
from firmware.link.protocol import MAX_LINE
from firmware.link.service import RefereeProtocol, _edited

# The live game in every test: North deals, East goes alone in hearts, one trick in.
SETUP = ("game dealer=N", "make E H alone", "trick E")

READ_ONLY = [
    "help", "status", "status json", "status nonsense", "games", "games 1", "export",
    "export 1", "export 99", "export x", "watch", "watch off", "watch maybe", "sync",
    "sync 12", "bogus", "enter", "enter trick W", "enter trick Q", "enter make N S",
    "enter game dealer=E", "enter score NS=5 EW=0", "enter winner NS", "enter florp",
    "enter players N=", "players X=Bob", "players N=\x07bell", "rules target=0",
    "rules florp=1", "replay 0", "replay sideways", "ok", "error", "event trick N",
    "ok begin 3", "STATUS", "  status  ", "status # a comment", "# only a comment",
]
"""Requests that must not change the game (refused entries included)."""

junk = st.binary(min_size=1, max_size=60).filter(
    lambda data: not re.search(rb"[\r\n\x03]", data))
commands = st.sampled_from(READ_ONLY).map(str.encode)
checksummed = st.sampled_from(READ_ONLY).map(lambda text: with_checksum(text).encode())
bad_checksum = st.tuples(st.sampled_from(READ_ONLY), st.text("0123456789ABCDEFabcdef",
                                                             min_size=4, max_size=4)).map(
    lambda pair: f"{pair[0]}*{pair[1]}".encode())
too_long = st.integers(MAX_LINE + 1, 3 * MAX_LINE).map(lambda size: b"status " + b"z" * size)
not_utf8 = st.tuples(st.sampled_from(READ_ONLY), st.sampled_from(
    [b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\xaf", b"\x80"])).map(
    lambda pair: pair[0].encode() + pair[1])
item = st.one_of(junk, commands, checksummed, bad_checksum, too_long, not_utf8)
ending = st.sampled_from([b"\r", b"\n", b"\r\n"])
stream = st.lists(st.tuples(item, ending), max_size=12)

replay_body = st.lists(st.one_of(junk, st.sampled_from(
    [b"euchre-log 1", b"game dealer=S", b"make N C", b"trick N", b"tricks 3", b"undo",
     b"deal N=9S", b"winner NS", b"score NS=1 EW=0"]), too_long, not_utf8), max_size=8)
"""Log lines (none of them a request: a body line past a counted replay's end is one)."""
replay_item = st.tuples(st.sampled_from([b"replay", b"replay begin", b"replay 3"]), replay_body,
                        st.sampled_from([b".", b"replay end", b"\x03", b""]))


def is_request(data: bytes) -> bool:
    """Whether the device owes an answer for this line (blank and comment lines
    are no request)."""
    if len(data) > MAX_LINE:
        return True
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    try:
        return bool(strip_line(_edited(text)))
    except LogSyntaxError:
        return True


def answers_in(output: bytes) -> list[list[str]]:
    """Split what the device sent into answers, checking every line's form."""
    assert output == b"" or output.endswith(b"\r\n"), output[-40:]
    lines = output.decode("utf-8").split("\r\n")[:-1] if output else []
    bodies = []
    for raw in lines:
        body, star, given = raw.rpartition("*")
        assert star and len(given) == 4 and checksum(body) == given, raw
        bodies.append(body)
    answers: list[list[str]] = []
    index = 0
    while index < len(bodies):
        line = bodies[index]
        if line.startswith("event "):
            index += 1
            continue
        assert line == "ok" or line.startswith(("ok ", "error ")), line
        if line.startswith("ok begin "):
            count = int(line.split()[2])
            frame = bodies[index: index + count + 2]
            assert len(frame) == count + 2 and frame[-1] == "ok end", frame
            answers.append(frame)
            index += count + 2
        else:
            answers.append([line])
            index += 1
    return answers


class Recorder:
    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data

    def take(self) -> bytes:
        out, self.data = bytes(self.data), bytearray()
        return out


class Direct:
    """The protocol handler on a real referee, called synchronously (no threads)."""

    def __init__(self, state_dir: Path) -> None:
        self.store = Store(state_dir)
        self.referee = Referee(Config(state_dir=state_dir), self.store, renderer=lambda v: v)
        from euchre_core.events import parse_event

        for line in SETUP:
            assert self.referee.enter(parse_event(line)) is None  # type: ignore[arg-type]
        self.protocol = RefereeProtocol(lambda fn: fn(self.referee))
        self.out = Recorder()
        self.protocol.connection_made(self.out)
        self.lines = LineAssembler(MAX_LINE)

    def feed(self, data: bytes) -> bytes:
        for line in self.lines.feed(data):
            if isinstance(line, TooLong):
                self.protocol.handle_too_long(line.limit)
            else:
                self.protocol.handle_line(line)
        return self.out.take()

    def snapshot(self) -> tuple[Any, ...]:
        referee = self.referee
        return (write_log(referee.game), referee.store.lines(referee.game_id),
                referee.game_id, referee.config)


@pytest.fixture(scope="module")
def direct(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Direct]:
    handler = Direct(tmp_path_factory.mktemp("direct"))
    yield handler
    handler.store.close()


# --- the line assembler ------------------------------------------------------------------


def model_lines(data: bytes, limit: int) -> list[bytes | TooLong]:
    pieces = re.split(rb"\r\n|\r|\n", data)
    out: list[bytes | TooLong] = [TooLong(limit) if len(piece) > limit else piece
                                  for piece in pieces[:-1]]
    if len(pieces[-1]) > limit:
        out.append(TooLong(limit))
    return out


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=12), st.sampled_from([b"\r", b"\n", b"\r\n"])),
                max_size=20),
       st.integers(1, 10), st.data())
def test_assembler_matches_a_model_however_the_bytes_are_cut(
        pieces: list[bytes], limit: int, data: st.DataObject) -> None:
    stream_bytes = b"".join(pieces)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream_bytes)), max_size=8)))
    lines = LineAssembler(limit)
    got: list[bytes | TooLong] = []
    start = 0
    for cut in [*cuts, len(stream_bytes)]:
        got += lines.feed(stream_bytes[start:cut])
        start = cut
    assert got == model_lines(stream_bytes, limit)


# --- the protocol handler, directly ---------------------------------------------------


@settings(max_examples=1500, deadline=None)
@given(stream)
def test_each_request_gets_one_answer_and_the_game_stays(direct: Direct,
                                                         items: list[tuple[bytes, bytes]]) -> None:
    before = direct.snapshot()
    output = direct.feed(b"".join(data + end for data, end in items))
    answers = answers_in(output)
    assert len(answers) == sum(is_request(data) for data, _ in items)
    assert direct.snapshot() == before
    assert answers_in(direct.feed(b"status\r\n"))[0][0] == "ok begin 16 status"


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.one_of(st.tuples(item, ending), replay_item), max_size=6), st.booleans())
def test_replays_and_garbage_mixed(direct: Direct, items: list[Any], cut: bool) -> None:
    before = direct.snapshot()
    data = b""
    for entry in items:
        if isinstance(entry[1], list):
            head, body, end = entry
            data += head + b"\n" + b"".join(line + b"\n" for line in body) + end + b"\n"
        else:
            data += entry[0] + entry[1]
    if cut:
        data = data[: len(data) // 2]
    answers_in(direct.feed(data))
    assert direct.snapshot() == before
    # A counted replay takes every byte as data (0x03 too): up to 3 blank lines end it;
    # then 0x03 abandons a replay sent without a count.
    answers = answers_in(direct.feed(b"\r\n" * 3 + b"\x03\r\nsync end\r\n"))
    assert answers[-1] == ["ok sync end"]
    assert direct.protocol._replay is None


# --- through a real pseudo-terminal ---------------------------------------------------


@pytest.fixture(scope="module")
def device(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Device]:
    dev = Device(tmp_path_factory.mktemp("pty"))
    from euchre_core.events import parse_event

    for line in SETUP:
        assert dev.on_main(lambda referee, line=line: referee.enter(parse_event(line))) is None
    yield dev
    dev.close()


@pytest.fixture(scope="module")
def host(device: Device) -> Iterator[Host]:
    end = Host(device.path)
    yield end
    end.close()


def pty_snapshot(device: Device) -> tuple[Any, ...]:
    return device.on_main(lambda referee: (write_log(referee.game),
                                           referee.store.lines(referee.game_id),
                                           referee.config))


@settings(max_examples=800, deadline=None)
@given(stream)
def test_random_input_over_a_pty(device: Device, host: Host,
                                 items: list[tuple[bytes, bytes]]) -> None:
    before = pty_snapshot(device)
    token = secrets.token_hex(4)
    host.write(b"".join(data + end for data, end in items) + f"sync {token}\r\n".encode())
    output = host.read_bytes(answer_bytes_of(f"ok sync {token}"))
    answers = answers_in(output)
    assert answers[-1] == [f"ok sync {token}"]
    assert len(answers) - 1 == sum(is_request(data) for data, _ in items)
    assert pty_snapshot(device) == before


def answer_bytes_of(line: str) -> bytes:
    return f"{line}*{checksum(line)}\r\n".encode()


@pytest.fixture(scope="module")
def lonely_device(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Device]:
    """A device whose pty nobody else holds open (a hang-up needs every peer gone)."""
    dev = Device(tmp_path_factory.mktemp("lonely"))
    from euchre_core.events import parse_event

    for line in SETUP:
        assert dev.on_main(lambda referee, line=line: referee.enter(parse_event(line))) is None
    yield dev
    dev.close()


@settings(max_examples=50, deadline=None)
@given(st.binary(max_size=200).map(lambda data: data.replace(b"\r", b"").replace(b"\n", b"")),
       st.booleans())
def test_peer_gone_mid_line(lonely_device: Device, partial: bytes, in_replay: bool) -> None:
    device = lonely_device
    before = pty_snapshot(device)
    sent = (b"replay load\r\neuchre-log 1\r\n" if in_replay else b"") + partial
    peer = device.peer()  # taken by the device: nothing it writes is dropped unread
    arrived = device.service.link.bytes_in
    peer.write(sent)
    wait_for(lambda: device.service.link.bytes_in >= arrived + len(sent))  # it has them all
    peer.close()
    wait_for(lambda: not device.service.link.connected)  # it has seen the peer go
    again = device.peer()
    try:
        assert again.ask("sync back") == ["ok sync back"]  # a fresh line, a fresh session
        assert again.ask("status")[0] == "ok begin 16 status"
    finally:
        again.close()
        # The next example starts on a pty nobody holds (its open is never refused).
        wait_for(lambda: not device.service.link.connected)
    assert pty_snapshot(device) == before


def test_every_strategy_is_exercised(direct: Direct) -> None:
    """The fixed corner cases, once each, with their exact answers."""
    assert direct.feed(b"\xff\r\n") == answer_bytes_of("error not UTF-8: byte 1 of the line "
                                                       "is 0xFF")
    assert direct.feed(b"z" * (MAX_LINE + 1) + b"\n") == answer_bytes_of(
        f"error line too long (max {MAX_LINE} bytes)")
    assert direct.feed(b"status*FFFF\n") == answer_bytes_of(
        f"error checksum mismatch: the line says *FFFF, its text gives *{checksum('status')}")
    assert direct.feed(b"x\n") == answer_bytes_of("error unknown command 'x' (try help)")
