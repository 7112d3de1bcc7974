"""The port under the protocol: line assembly, pseudo-terminals, disconnects, a stuck peer.

Two real set-ups: the device on a pseudo-terminal it owns (the emulator's; the
host opens the slave path), and the device opening a path itself, as on a Pi
(``/dev/ttyGS0``), here one end of a :class:`~drivers.pseudoterminal.NullModem`.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import serial
from support.app_kit import press
from support.serial_kit import FULL_GAME, Device, Host, answer_bytes, wait_for

from drivers.pseudoterminal import NullModem, PeerWatch, PtyEndpoint, point_link, raw_pty
from drivers.serialport import WRITE_TIMEOUT_S, LineAssembler, TooLong
from euchre_core import checksum


@pytest.fixture
def device(tmp_path: Path) -> Iterator[Device]:
    dev = Device(tmp_path)
    yield dev
    dev.close()


# --- lines ---------------------------------------------------------------------------


def test_line_ends_split_across_reads() -> None:
    lines = LineAssembler(max_line=8)
    assert lines.feed(b"one\r") == [b"one"]
    assert lines.feed(b"\ntwo") == []  # the LF of CR LF: no empty line
    assert lines.partial
    assert lines.feed(b"\n\n") == [b"two", b""]
    assert lines.feed(b"123456789") == [TooLong(8)]  # reported at once
    assert lines.feed(b"more\r") == []  # ... and the rest dropped up to its end
    assert lines.feed(b"\nok\n") == [b"ok"]
    lines.feed(b"half")
    assert lines.reset() is True and lines.feed(b"\n") == [b""]
    assert lines.reset() is False


def test_point_link_replaces_a_stale_link_not_a_file(tmp_path: Path) -> None:
    link = tmp_path / "ttyREF"
    os.symlink("/nonexistent/pts/99", link)
    point_link(link, "/dev/null")
    assert os.readlink(link) == "/dev/null"
    plain = tmp_path / "plain"
    plain.write_text("keep me")
    with pytest.raises(FileExistsError):
        point_link(plain, "/dev/null")
    assert plain.read_text() == "keep me"


# --- disconnects -----------------------------------------------------------------------


def reconnect(device: Device, host: Host) -> Host:
    """Close the host end, wait until the device has seen the hang-up, open again
    (no handshake: what the new peer writes first is what is tested)."""
    host.close()
    wait_for(lambda: not device.service.link.connected)
    return device.peer()


def test_disconnect_mid_line_drops_the_half_line(device: Device) -> None:
    host = Host(device.path)
    host.ask("sync")
    before = device.log()
    host.write(b"enter game dea")
    host = reconnect(device, host)
    try:
        host.write(b"ler=N\r\n")
        assert host.answer() == ["error unknown command 'ler=N' (try help)"]
        assert device.log() == before
        assert host.ask("status")[0] == "ok begin 16 status"
    finally:
        host.close()


def test_disconnect_mid_replay_abandons_it(device: Device) -> None:
    host = Host(device.path)
    before = device.log()
    host.ask("replay load")
    text = FULL_GAME.read_bytes()
    host.write(text[: len(text) // 2])
    host = reconnect(device, host)
    try:
        # A request, not a log line: in the middle of a replay it would get no answer.
        assert host.ask("sync back") == ["ok sync back"]
        assert device.on_main(lambda referee: referee.game_id) == 1  # nothing was loaded
        assert device.log() == before
    finally:
        host.close()


def test_disconnect_turns_the_feed_off(device: Device) -> None:
    host = Host(device.path)
    host.ask("watch on")
    host = reconnect(device, host)
    try:
        device.events.put(press("N"))
        device.on_main(lambda referee: None)  # the press is handled: a feed line would be queued
        assert host.before_sync() == b""
        assert host.ask("watch") == ["ok not watching"]
        assert device.journal()[1:] == ["game dealer=N"]
    finally:
        host.close()


def test_device_on_a_path_survives_the_cable_pulled(tmp_path: Path) -> None:
    cable = NullModem()
    device = Device(tmp_path, cable.paths[0])
    host = Host(cable.paths[1])
    try:
        host.write(b"sync 1\r\n")
        assert host.read_bytes(b"\r\n") == answer_bytes("ok sync 1")
        assert host.ask("enter game dealer=N")[0].startswith("ok ")
        host.write(b"enter make N H")  # half a line, then the cable goes
        host.close()
        cable.close()
        wait_for(lambda: not device.service.link.connected)
        device.events.put(press("N"))  # the buttons still work
        device.on_main(lambda referee: None)
        assert device.journal()[1:] == ["game dealer=N"]
    finally:
        started = time.monotonic()
        device.close()
        assert time.monotonic() - started < 2.0  # a link waiting for its port stops at once
        cable.close()


def test_a_peer_that_stops_reading_never_holds_up_the_buttons(device: Device) -> None:
    host = Host(device.path)
    try:
        flood = b"help\r\n" * 400  # ~600 kB of answers nobody reads
        read_before = device.service.link.bytes_in
        host.write(flood)
        # The device has read every request: their answers are queued, the pty is full.
        wait_for(lambda: device.service.link.bytes_in >= read_before + len(flood))
        started = time.monotonic()
        device.events.put(press("E"))
        device.on_main(lambda referee: None)
        # Held up by the stuck writer, it would wait for its write timeout (5 s);
        # the bound leaves room for a loaded machine.
        assert time.monotonic() - started < WRITE_TIMEOUT_S / 2
        assert device.journal()[1:] == ["game dealer=E"]
    finally:
        host.close()


# --- whole answers, fresh sessions ---------------------------------------------------


def test_a_half_line_from_a_peer_that_reopens_at_once_is_discarded(device: Device) -> None:
    host = Host(device.path)
    host.ask("sync")
    before = device.log()
    for _ in range(10):
        arrived = device.service.link.bytes_in
        host.write(b"enter game dea")
        wait_for(lambda arrived=arrived: device.service.link.bytes_in > arrived)  # has the half
        host.close()
        # At once: the master may never see the hang-up (root opens the pty while
        # the device still holds it exclusive for the last peer; anyone else is
        # refused until the device has lifted that, and tries again at once).
        host = device.peer()
        host.write(b"ler=N\r\n")
        assert host.answer() == ["error unknown command 'ler=N' (try help)"]
    try:
        assert device.log() == before
        assert host.ask("sync fresh") == ["ok sync fresh"]
    finally:
        host.close()


def test_a_second_peer_leaving_does_not_end_the_first_ones_session(tmp_path: Path) -> None:
    """Two programs have the pty open, one goes: the other's session goes on.

    Both open it before the device's link starts: once the link has a peer it
    marks the pty exclusive, and nobody but root gets a second open in.  Each
    open is counted before the next (the count is exact then; unread together,
    two opens can be counted as one: see test_two_opens_in_a_row_...)."""
    endpoint = PtyEndpoint(115200)
    hosts: list[Host] = []
    device: Device | None = None
    try:
        hosts.append(Host(endpoint.slave_path, sync=False))
        assert endpoint.peer_watch.others() == 1
        hosts.append(Host(endpoint.slave_path, sync=False))
        assert endpoint.peer_watch.others() == 2
        first, second = hosts
        device = Device(tmp_path, endpoint=endpoint)  # from here its reader counts
        first.sync()
        assert first.ask("watch on")[0].startswith("ok watching")
        second.close()  # someone who had the port open went away
        # Read after the close: a session ended by it would have turned the feed off.
        assert first.ask("watch") == ["ok watching"]
        device.events.put(press("S"))
        assert first.feed(1) == ["game dealer=S"]
    finally:
        for host in hosts:
            host.close()
        if device is not None:
            device.close()
        endpoint.close()


def test_two_closes_in_a_row_are_both_counted() -> None:
    """Two peers go one right after the other (a root program refused by the
    laptop tool's lock, then the laptop tool): no peer is left.  The watch is
    read here by hand, with no link reading it, so the two closes are unread
    together every time."""
    endpoint = PtyEndpoint(115200)
    descriptors: list[int] = []
    try:
        for count in (1, 2):
            descriptors.append(os.open(endpoint.slave_path, os.O_RDWR | os.O_NOCTTY))
            assert endpoint.peer_watch.others() == count
        while descriptors:
            os.close(descriptors.pop())
        assert endpoint.peer_watch.others() == 0
        assert endpoint.peer_watch.left()
    finally:
        for fd in descriptors:
            os.close(fd)
        endpoint.close()


@pytest.fixture(params=["file and directory", "file only"])
def watched(request: pytest.FixtureRequest) -> Iterator[tuple[str, PeerWatch]]:
    """A raw pty's slave path and a :class:`PeerWatch` on it, read here by hand
    (no link), so events in a row are unread together every time.  "file and
    directory" is the endpoint's watch; with "file only", inotify merges like
    events in a row and the master alone sets the count right."""
    master, path = raw_pty()
    watch = PeerWatch(path, master, directory=request.param == "file and directory")
    yield path, watch
    watch.close()
    os.close(master)


def open_slave(path: str) -> int:
    return os.open(path, os.O_RDWR | os.O_NOCTTY)


def test_two_closes_in_a_row_leave_nobody(watched: tuple[str, PeerWatch]) -> None:
    path, watch = watched
    descriptors = []
    try:
        for count in (1, 2):
            descriptors.append(open_slave(path))
            assert watch.others() == count
        while descriptors:
            os.close(descriptors.pop())
        assert watch.others() == 0
        assert watch.left()
    finally:
        for fd in descriptors:
            os.close(fd)


def test_two_opens_in_a_row_then_one_close_leaves_the_other_counted(
        watched: tuple[str, PeerWatch]) -> None:
    """Two programs open the pty one right after the other, unread together,
    then one goes: the other is still counted, and nobody is said to have
    left until it goes too."""
    path, watch = watched
    descriptors = [open_slave(path) for _ in range(2)]
    try:
        assert watch.others() >= 1  # 1 when the two opens merged
        os.close(descriptors.pop())
        assert watch.others() == 1
        assert not watch.left()
        os.close(descriptors.pop())
        assert watch.others() == 0
        assert watch.left()
    finally:
        for fd in descriptors:
            os.close(fd)


def test_open_close_open_close_unread_is_a_peer_come_and_gone(
        watched: tuple[str, PeerWatch]) -> None:
    """A program opens and closes the pty twice before anyone looks: nobody
    is left, and it was seen to go; the same beside a peer that stays is
    that peer's session going on."""
    path, watch = watched
    stays = -1
    try:
        for _ in range(2):
            os.close(open_slave(path))
        assert watch.others() == 0
        assert watch.left()
        stays = open_slave(path)
        assert watch.others() == 1
        for _ in range(2):
            os.close(open_slave(path))
        assert watch.others() == 1
        assert not watch.left()
        os.close(stays)
        stays = -1
        assert watch.others() == 0
        assert watch.left()
    finally:
        if stays >= 0:
            os.close(stays)


def open_as_another_program(path: str, *, uid: int | None) -> int:
    """Open ``path`` with pyserial in a child process (as ``uid`` if given):
    the errno its open failed with, 0 if it opened."""
    pid = os.fork()
    if pid == 0:  # the child: only these calls, then out
        code = 0
        try:
            if uid is not None:
                os.setuid(uid)
            serial.Serial(path, 115200, exclusive=False)
        except serial.SerialException as error:
            code = error.errno or 255
        except BaseException:
            code = 255
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def open_not_as_root(path: str) -> int:
    """:func:`open_as_another_program`, never as root (root is exempt from
    TIOCEXCL): as root, as nobody, the pty given to nobody."""
    if os.geteuid() != 0:
        return open_as_another_program(path, uid=None)
    os.chown(path, 65534, -1)
    return open_as_another_program(path, uid=65534)


def test_two_opens_in_a_row_one_leaving_does_not_end_the_other_ones_session(
        tmp_path: Path) -> None:
    """Two programs open the pty together before the device looks (unread
    together: like events in a row, which inotify merges), then one goes: the
    other's session goes on, the pty still marked exclusive for it;
    when it goes too, the device sees it: the next program (not root) gets in,
    with a session of its own."""
    endpoint = PtyEndpoint(115200)
    hosts = [Host(endpoint.slave_path, sync=False) for _ in range(2)]
    device: Device | None = None
    try:
        device = Device(tmp_path, endpoint=endpoint)
        first, second = hosts
        first.sync()
        assert first.ask("watch on")[0].startswith("ok watching")
        second.close()
        assert first.ask("watch") == ["ok watching"]  # read after the close was seen
        assert open_not_as_root(endpoint.slave_path) == errno.EBUSY  # still marked for first
        device.events.put(press("S"))
        assert first.feed(1) == ["game dealer=S"]
        first.close()
        hosts.append(newcomer := device.peer())
        newcomer.sync()
        assert newcomer.ask("watch") == ["ok not watching"]
        assert endpoint.peer_watch.others() == 1
    finally:
        for host in hosts:
            host.close()
        if device is not None:
            device.close()
        endpoint.close()


PEER_PROCESS = """
import sys
import serial
port = serial.Serial(sys.argv[1], 115200, exclusive=False)
print("open", flush=True)
sys.stdin.read()
"""
"""A second program holding the pty open (pyserial) until its stdin ends or it is killed."""


def test_a_peer_killed_with_sigkill_as_another_goes_is_seen_gone(tmp_path: Path) -> None:
    """Two peers: one another process, killed with SIGKILL, then the other
    closes the port at once (the two closes come together, usually unread
    together: one event).
    The device sees that nobody is left: the mark is off for the next program
    (not root), whose session is a new one (the feed is off)."""
    endpoint = PtyEndpoint(115200)
    killed = subprocess.Popen([sys.executable, "-c", PEER_PROCESS, endpoint.slave_path],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    hosts: list[Host] = []
    device: Device | None = None
    try:
        assert killed.stdout is not None and killed.stdout.readline() == "open\n"
        assert endpoint.peer_watch.others() == 1  # each open read before the next: not merged
        hosts.append(first := Host(endpoint.slave_path, sync=False))
        assert endpoint.peer_watch.others() == 2
        device = Device(tmp_path, endpoint=endpoint)  # from here its reader counts
        first.sync()
        assert first.ask("watch on")[0].startswith("ok watching")
        wait_for(lambda: endpoint.peer_watch.own == 1)  # the pty is marked for them
        os.kill(killed.pid, signal.SIGKILL)
        assert killed.wait() == -signal.SIGKILL  # its descriptors are closed
        first.close()
        hosts.append(newcomer := device.peer())
        newcomer.sync()
        assert newcomer.ask("watch") == ["ok not watching"]
        assert endpoint.peer_watch.others() == 1
    finally:
        if killed.poll() is None:
            killed.kill()
            killed.wait()
        for host in hosts:
            host.close()
        if device is not None:
            device.close()
        endpoint.close()


def test_a_second_program_not_root_is_refused_and_changes_no_count(device: Device) -> None:
    """While a peer has the pty, a second program (not root) is refused by
    the mark (TIOCEXCL): EBUSY, no open or close event, so the peer's session
    goes on, and its going is still seen.  As root the second program runs as
    nobody, the pty given to nobody (root is exempt from TIOCEXCL)."""
    host = device.peer()
    hosts = [host]
    try:
        host.sync()
        assert host.ask("watch on")[0].startswith("ok watching")
        assert open_not_as_root(device.path) == errno.EBUSY
        assert device.endpoint.peer_watch.others() == 1
        assert host.ask("watch") == ["ok watching"]
        host.close()
        hosts.append(newcomer := device.peer())
        newcomer.sync()
        assert newcomer.ask("watch") == ["ok not watching"]
    finally:
        for each in hosts:
            each.close()


def test_a_peer_that_stops_reading_gets_answers_whole_or_not_at_all(tmp_path: Path) -> None:
    device = Device(tmp_path, write_timeout=0.3)
    host = Host(device.path)
    try:
        host.write(b"help\r\n" * 300 + b"sync after\r\n")  # ~450 kB of answers, unread
        wait_for(lambda: device.service.link.dropped > 0)  # a write timeout has passed
        output = host.read_bytes(answer_bytes("ok sync after"), timeout=30)
        lines = output.split(b"\r\n")[:-1]
        index = 0
        frames = 0
        while index < len(lines):
            line = lines[index].decode("utf-8")
            body, star, given = line.rpartition("*")
            assert star and checksum(body) == given, f"a torn line: {line!r}"
            if body.startswith("ok begin "):
                count = int(body.split()[2])
                frame = lines[index:index + count + 2]
                assert len(frame) == count + 2 and frame[-1].startswith(b"ok end*"), frame
                frames += 1
                index += count + 2
            else:
                assert body == "ok sync after", body
                index += 1
        assert 0 < frames < 300  # some were dropped, whole
        assert device.service.link.dropped > 0
    finally:
        host.close()
        device.close()
