"""Running under systemd (issue item 4; SPEC §5).

- ``firmware.pi.systemd.Notifier`` speaks sd_notify: an AF_UNIX datagram socket
  stands in for systemd's ``$NOTIFY_SOCKET``; ``Referee.run`` with
  ``on_loop=notifier.watchdog`` sends WATCHDOG=1 from its loop, and a hung
  loop stops the pings (so systemd's WatchdogSec= restarts the referee).
- ``euchre-referee run`` end to end, as systemd starts it: gpiozero's mock
  pins, no I2C bus at all, READY=1, WATCHDOG=1, SIGTERM -> STOPPING=1, exit 0.
- ``systemd/euchre-referee.service``: ``systemd-analyze verify`` prints
  nothing (it exits 0 even on bad values, so its output is what is checked).

How the unit is verified unchanged: verify insists that ExecStart's binary
exists, and the unit names the installed one,
``/opt/euchre-referee/.venv/bin/euchre-referee``.  Rather than editing a copy,
the test builds a throw-away root directory: the host's unit directory
(``/usr/lib/systemd/system``, for sysinit.target, modprobe@.service, ...)
copied in, the unit byte for byte in ``etc/systemd/system/``, and an
executable stub at ``opt/euchre-referee/.venv/bin/euchre-referee``; then
``systemd-analyze verify --root=ROOT euchre-referee.service``.  Two broken
copies (a bad value, a missing binary) check that the same command does
report problems, so the empty output means something.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support.app_kit import press
from support.crash_child import open_referee

from firmware.pi.systemd import Notifier

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "systemd" / "euchre-referee.service"
EXEC = "/opt/euchre-referee/.venv/bin/euchre-referee"


class FakeSystemd:
    """A bound AF_UNIX datagram socket, as systemd's notify socket."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind("\0" + path[1:] if path.startswith("@") else path)
        self.messages: list[tuple[float, str]] = []

    def receive(self, until: Any, timeout: float = 10.0) -> list[str]:
        """Collect datagrams until ``until(messages)`` is true or the timeout."""
        deadline = time.monotonic() + timeout
        while not until([m for _, m in self.messages]):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(4096)
            except TimeoutError:
                break
            self.messages.append((time.monotonic(), data.decode()))
        return [m for _, m in self.messages]

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def systemd_socket(tmp_path: Path) -> Any:
    fake = FakeSystemd(str(tmp_path / "notify"))
    yield fake
    fake.close()


def count(messages: list[str], text: str) -> int:
    return sum(text in message.split("\n") for message in messages)


def test_ready_and_watchdog_from_the_main_loop(tmp_path: Path, systemd_socket: Any) -> None:
    notifier = Notifier(systemd_socket.path, watchdog_usec=100_000)  # ping every 50 ms
    referee = open_referee(tmp_path / "state")
    events: queue.Queue[Any] = queue.Queue()
    stopping = threading.Event()
    notifier.ready()
    thread = threading.Thread(target=referee.run, args=(events,), kwargs=dict(
        stop=stopping.is_set, on_loop=notifier.watchdog, poll=0.02), daemon=True)
    thread.start()
    try:
        messages = systemd_socket.receive(lambda m: count(m, "WATCHDOG=1") >= 5)
        assert messages[0].split("\n")[0] == "READY=1"
        assert count(messages, "WATCHDOG=1") >= 5
        events.put(press("W"))  # and it goes on working while it pings
        systemd_socket.receive(lambda m: count(m, "WATCHDOG=1") >= 8)
    finally:
        stopping.set()
        thread.join(5)
    notifier.stopping()
    assert systemd_socket.receive(lambda m: "STOPPING=1" in m)[-1] == "STOPPING=1"
    assert referee.game.entries[-1].line() == "game dealer=W"
    referee.store.close()


def test_a_hung_main_loop_stops_the_watchdog_pings(tmp_path: Path,
                                                   systemd_socket: Any) -> None:
    notifier = Notifier(systemd_socket.path, watchdog_usec=40_000)  # every 20 ms
    referee = open_referee(tmp_path / "state")
    events: queue.Queue[Any] = queue.Queue()
    stopping = threading.Event()
    thread = threading.Thread(target=referee.run, args=(events,), kwargs=dict(
        stop=stopping.is_set, on_loop=notifier.watchdog, poll=0.01), daemon=True)
    thread.start()
    try:
        systemd_socket.receive(lambda m: count(m, "WATCHDOG=1") >= 3)
        hung_at = time.monotonic()
        events.put(lambda referee: time.sleep(0.6))  # the loop hangs in a handler
        systemd_socket.receive(lambda m: count(m, "WATCHDOG=1") >= 6)
    finally:
        stopping.set()
        thread.join(5)
    times = [t for t, m in systemd_socket.messages if m == "WATCHDOG=1"]
    gaps = [b - a for a, b in zip(times, times[1:]) if b > hung_at]
    assert max(gaps) >= 0.5  # silence while it hung: systemd would restart it
    referee.store.close()


def test_watchdog_pings_are_spaced_to_half_the_timeout() -> None:
    now = [0.0]
    sent = Notifier(None, watchdog_usec=10_000_000, clock=lambda: now[0])
    sent._send = sent.sent.append  # type: ignore[method-assign]
    for _ in range(100):  # ten seconds of loop passes, 0.1 s apart
        sent.watchdog()
        now[0] += 0.1
    assert sent.sent == ["WATCHDOG=1"] * 2  # at 0 s and 5 s


def test_notifier_from_the_environment(monkeypatch: pytest.MonkeyPatch,
                                       systemd_socket: Any) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", systemd_socket.path)
    monkeypatch.setenv("WATCHDOG_USEC", "2000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    notifier = Notifier.from_environment()
    assert notifier.interval == 1.0
    notifier.ready()
    notifier.watchdog()
    notifier.status("hand 3")
    assert systemd_socket.receive(lambda m: len(m) >= 3) == [
        "READY=1\nSTATUS=keeping score", "WATCHDOG=1", "STATUS=hand 3"]
    monkeypatch.setenv("WATCHDOG_PID", "1")  # the watchdog is another process's
    assert Notifier.from_environment().interval is None
    monkeypatch.delenv("NOTIFY_SOCKET")
    outside = Notifier.from_environment()  # not under systemd: all no-ops
    outside.ready()
    outside.watchdog()
    assert outside.sent == []
    notifier.close()


def test_notifier_abstract_socket(tmp_path: Path) -> None:
    name = f"@euchre-test-{os.getpid()}-{time.monotonic_ns()}"
    fake = FakeSystemd(name)
    try:
        Notifier(name).ready()
        assert fake.receive(lambda m: m)[0].startswith("READY=1")
    finally:
        fake.close()


def test_notifier_survives_systemd_going_away(tmp_path: Path) -> None:
    notifier = Notifier(str(tmp_path / "gone"), watchdog_usec=1000)
    notifier.ready()  # ENOENT: swallowed, the referee keeps scoring
    notifier.watchdog()
    assert notifier.sent == []


def _run_referee(tmp_path: Path, notify: str, extra_env: dict[str, str] | None = None,
                 serial_port: str | None = None) -> subprocess.Popen[str]:
    config = tmp_path / "referee.toml"
    text = '[display]\ninterface = "i2c"\nport = 99  # no such bus here\n'
    if serial_port:
        text += f'[serial]\nport = "{serial_port}"\n'
    config.write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WATCHDOG_", "NOTIFY_"))}
    env.update(GPIOZERO_PIN_FACTORY="mock", NOTIFY_SOCKET=notify, WATCHDOG_USEC="1000000",
               PYTHONUNBUFFERED="1", **(extra_env or {}))
    return subprocess.Popen(
        [sys.executable, "-m", "firmware", "run", "--config", str(config),
         "--state-dir", str(tmp_path / "state")],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


@pytest.mark.parametrize("serial_port", [None, "/nonexistent/ttyGS0"])
def test_euchre_referee_run_as_systemd_starts_it(tmp_path: Path, systemd_socket: Any,
                                                 serial_port: str | None) -> None:
    """No display and (second case) a serial port that is not there (the
    serial service retries it in the background): it still starts, pings
    the watchdog, and stops cleanly on SIGTERM."""
    process = _run_referee(tmp_path, systemd_socket.path, serial_port=serial_port)
    try:
        messages = systemd_socket.receive(
            lambda m: "READY=1" in "\n".join(m) and count(m, "WATCHDOG=1") >= 3, timeout=30)
        assert any(m.startswith("READY=1") for m in messages), messages
        assert count(messages, "WATCHDOG=1") >= 3
        ready = next(t for t, m in systemd_socket.messages if m.startswith("READY=1"))
        pings = [t for t, m in systemd_socket.messages if m == "WATCHDOG=1"]
        assert all(b - a < 1.0 for a, b in zip([ready, *pings], pings))  # < WATCHDOG_USEC
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert "STOPPING=1" in systemd_socket.receive(lambda m: "STOPPING=1" in m)
    assert "display not answering" in err and "stopped" in err
    assert (tmp_path / "state" / "journal.sqlite3").exists()


def test_euchre_referee_run_with_a_journal_it_cannot_open_stays_up_and_says_why(
        tmp_path: Path, systemd_socket: Any) -> None:
    """No restart loop (issue 10): it says the cause once, in one line, tells
    systemd (READY with the cause as STATUS), pings the watchdog while it
    tries again, and stops cleanly on SIGTERM."""
    (tmp_path / "state" / "journal.sqlite3").mkdir(parents=True)
    process = _run_referee(tmp_path, systemd_socket.path)
    try:
        messages = systemd_socket.receive(
            lambda m: "READY=1" in "\n".join(m) and count(m, "WATCHDOG=1") >= 3, timeout=30)
        assert any("STATUS=journal not opened: " in m for m in messages), messages
        assert count(messages, "WATCHDOG=1") >= 3
        assert process.poll() is None  # still up, trying again
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    said = [line for line in err.splitlines() if "journal not opened" in line]
    assert len(said) == 1 and "is a directory, not a journal" in said[0], err
    assert "Traceback" not in err
    assert (tmp_path / "state" / "journal.sqlite3").is_dir()  # not moved aside


# --- the unit file ------------------------------------------------------------


def unit_settings() -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    section = ""
    for raw in UNIT.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        settings.setdefault(f"{section}.{key}", []).append(value)
    return settings


def test_unit_settings() -> None:
    s = unit_settings()
    one = {key: values[-1] for key, values in s.items()}
    assert one["Service.Type"] == "notify"
    assert one["Service.NotifyAccess"] in ("main", "all")
    assert re.fullmatch(r"\d+s", one["Service.WatchdogSec"])
    assert one["Service.Restart"] == "always"
    assert one["Service.User"] == "euchre"
    assert set(one["Service.SupplementaryGroups"].split()) == {"gpio", "i2c", "spi", "dialout"}
    assert one["Service.StateDirectory"] == "euchre-referee"
    assert one["Service.RuntimeDirectory"] == "euchre-referee"
    assert one["Service.WorkingDirectory"] == "/run/euchre-referee"
    assert "LG_WD=/run/euchre-referee" in s["Service.Environment"]
    exec_start = one["Service.ExecStart"].split()
    assert exec_start[:2] == [EXEC, "run"]
    assert exec_start[exec_start.index("--config") + 1] == "/etc/euchre-referee/referee.toml"
    assert exec_start[exec_start.index("--state-dir") + 1] == "/var/lib/euchre-referee"
    # Hardening that still allows the GPIO chips, the SPI and I2C buses and the
    # serial port: /dev/spidev0.* are the device group "spi" in /proc/devices
    # (the kernel's spidev registers its major under that name), loaded before
    # the start as i2c-dev is, so that the groups resolve.
    assert one["Service.PrivateDevices"] == "no"
    assert one["Service.DevicePolicy"] == "closed"
    allowed = {value.split()[0]: value.split()[1] for value in s["Service.DeviceAllow"]}
    assert {"char-gpiochip", "char-spi", "char-i2c", "char-ttyGS", "char-ttyAMA",
            "char-ttyS"} <= set(allowed)
    assert allowed["char-spi"] == allowed["char-gpiochip"] == "rw"
    for module in ("i2c_dev", "spidev"):
        assert f"modprobe@{module}.service" in one["Unit.Wants"].split()
        assert f"modprobe@{module}.service" in one["Unit.After"].split()
    assert one["Service.ProtectSystem"] == "strict"
    assert one["Service.ProtectHome"] == "yes"
    assert one["Service.NoNewPrivileges"] == "yes"
    assert one["Service.RestrictAddressFamilies"] == "AF_UNIX"
    assert one["Service.CapabilityBoundingSet"] == ""
    assert "Service.ProcSubset" not in s  # gpiozero reads /proc/cpuinfo
    assert one["Install.WantedBy"] == "multi-user.target"


def megabytes(value: str) -> float:
    number, unit = float(value[:-1]), value[-1]
    return number * {"K": 1 / 1024, "M": 1.0, "G": 1024.0}[unit]


def test_unit_bounds_memory() -> None:
    """The unit caps what a leak could take: MemoryHigh at the budget (60 MB
    resident, bench/memory_bench.py, plus the journal's page cache), MemoryMax
    above it."""
    one = {key: values[-1] for key, values in unit_settings().items()}
    high, most = megabytes(one["Service.MemoryHigh"]), megabytes(one["Service.MemoryMax"])
    assert 60 <= high < most <= 256


def _unit_dir() -> Path | None:
    for candidate in ("/usr/lib/systemd/system", "/lib/systemd/system"):
        if Path(candidate, "sysinit.target").exists():
            return Path(candidate)
    return None


def _verify(tmp_path: Path, unit_text: str, *, stub: bool = True) -> str:
    analyze = shutil.which("systemd-analyze")
    units = _unit_dir()
    if analyze is None or units is None:
        pytest.skip("systemd-analyze (Debian package systemd) is not installed")
    root = tmp_path / "root"
    shutil.copytree(units, root / "usr/lib/systemd/system", symlinks=True)
    (root / "etc/systemd/system").mkdir(parents=True)
    (root / "etc/systemd/system/euchre-referee.service").write_text(unit_text,
                                                                    encoding="utf-8")
    if stub:
        binary = root / EXEC.lstrip("/")
        binary.parent.mkdir(parents=True)
        binary.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
        binary.chmod(0o755)
    result = subprocess.run(
        [analyze, "verify", f"--root={root}", "euchre-referee.service"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )
    return (result.stdout + result.stderr).strip()


def test_systemd_analyze_verify_is_clean(tmp_path: Path) -> None:
    output = _verify(tmp_path, UNIT.read_text(encoding="utf-8"))
    assert output == "", output


def test_systemd_analyze_verify_does_report_a_bad_value(tmp_path: Path) -> None:
    broken = UNIT.read_text(encoding="utf-8").replace("ProtectSystem=strict",
                                                      "ProtectSystem=bogus")
    output = _verify(tmp_path, broken)
    assert "bogus" in output


def test_systemd_analyze_verify_does_report_a_missing_binary(tmp_path: Path) -> None:
    output = _verify(tmp_path, UNIT.read_text(encoding="utf-8"), stub=False)
    assert "is not executable" in output


def test_systemd_analyze_security_rates_the_unit_safe(tmp_path: Path) -> None:
    _verify(tmp_path, UNIT.read_text(encoding="utf-8"))
    root = tmp_path / "root"
    result = subprocess.run(
        ["systemd-analyze", "security", "--offline=true", f"--root={root}",
         "euchre-referee.service"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    found = re.search(r"Overall exposure level for euchre-referee.service: ([\d.]+)",
                      result.stdout + result.stderr)
    assert found, result.stdout + result.stderr
    assert float(found.group(1)) <= 2.0  # systemd calls <= 2 "SAFE"
