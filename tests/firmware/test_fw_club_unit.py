"""The installed box joins the night (issue 24): the unit's sandbox with the
club drop-in (``firmware/pi/network.py``, written by ``scripts/install-pi.sh``)
and a box that keeps trying while it has no network.

systemd cannot run units here (PID 1 of this container is not systemd, so
``systemd-run`` has no manager to ask), so the unit is tested as close as it
can be: systemd's own parser reads the unit with the drop-in as installed
(``systemd-analyze verify`` and ``security --offline``, which merge the
drop-in as the manager would), and the program runs as the unit starts it,
in the network the merged unit gives it: ``PrivateNetwork=yes`` is a network
namespace of its own (``unshare --user --map-root-user --net``: no root
needed; systemd would also bring its loopback up), ``PrivateNetwork=no`` the
host's.  ``RestrictAddressFamilies=`` (seccomp) and ``IPAddressAllow=``
(cgroup BPF) are the manager's to enforce; they are checked as the settings
systemd reads, not enforced here.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.broker import MOSQUITTO, Mosquitto, needs_mosquitto
from test_fw_durable_install import fake_root, install

from firmware.club.protocol import status_topic
from firmware.defaults import DEFAULT_EVENT
from firmware.pi.network import club_dropin

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "systemd" / "euchre-referee.service"
EXEC = "/opt/euchre-referee/.venv/bin/euchre-referee"
DROPIN = "etc/systemd/system/euchre-referee.service.d/club.conf"
UNSHARE = shutil.which("unshare")
NSENTER = shutil.which("nsenter")
IP = shutil.which("ip")


def settings(*texts: str) -> dict[str, list[str]]:
    """Unit files' settings as systemd merges them: each key's values in
    order (a single value's last one counts), an empty assignment resetting
    the list."""
    merged: dict[str, list[str]] = {}
    section = ""
    for text in texts:
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("["):
                section = line.strip("[]")
                continue
            key, _, value = line.partition("=")
            values = merged.setdefault(f"{section}.{key}", [])
            if value:
                values.append(value)
            else:
                values.clear()
    return merged


# --- the drop-in ----------------------------------------------------------------


def test_the_dropin_opens_only_the_network_and_only_to_the_broker() -> None:
    assert club_dropin(None) is None
    unit = UNIT.read_text(encoding="utf-8")
    for broker, allowed in (("mqtt://192.168.4.1", "localhost 192.168.4.1"),
                            ("mqtts://[fd00::5]:8883", "localhost fd00::5"),
                            ("mqtt://director.local:1883", "localhost link-local 10.0.0.0/8 "
                             "172.16.0.0/12 192.168.0.0/16 fc00::/7")):
        text = club_dropin(broker)
        assert text is not None
        own = settings(text)
        assert set(own) == {"Service.PrivateNetwork", "Service.RestrictAddressFamilies",
                            "Service.IPAddressDeny", "Service.IPAddressAllow"}
        both = settings(unit, text)
        alone = settings(unit)
        assert {key: value for key, value in both.items() if key not in own} == {
            key: value for key, value in alone.items() if key not in own}  # the rest stays
        assert both["Service.PrivateNetwork"][-1] == "no"  # (the last one counts)
        assert both["Service.RestrictAddressFamilies"] == ["AF_UNIX AF_INET AF_INET6"]
        assert both["Service.IPAddressDeny"] == ["any"]
        assert both["Service.IPAddressAllow"] == [allowed]
    assert settings(unit)["Service.PrivateNetwork"][-1] == "yes"  # a box alone: no network
    with pytest.raises(ValueError, match="ftp://x"):
        club_dropin("ftp://x")


def test_install_writes_the_dropin_for_a_club_box_and_takes_it_away_after(
        tmp_path: Path) -> None:
    root = fake_root(tmp_path)
    conf = root / "etc/euchre-referee/referee.toml"
    conf.parent.mkdir(parents=True)
    shipped = (REPO / "hw/referee.toml").read_text(encoding="utf-8")
    conf.write_text(shipped + '\n[club]\nbroker = "mqtt://192.168.4.1"\ntable = 3\n',
                    encoding="utf-8")
    out = install(root)
    assert "changed: club drop-in: the network, to reach its broker only" in out
    assert (root / DROPIN).read_text(encoding="utf-8") == club_dropin("mqtt://192.168.4.1")
    assert install(root).rstrip().endswith("install-pi: 0 changes")  # idempotent
    conf.write_text(shipped, encoding="utf-8")  # the box leaves the club
    out = install(root)
    assert "changed: removed the club drop-in" in out
    assert not (root / DROPIN).exists()
    assert "no club drop-in" in install(root)


def test_a_config_whose_club_cannot_be_read_is_said_and_the_dropin_left(
        tmp_path: Path) -> None:
    root = fake_root(tmp_path)
    conf = root / "etc/euchre-referee/referee.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text('[club]\nbroker = "ftp://x"\n', encoding="utf-8")
    result = subprocess.run(["bash", str(REPO / "scripts/install-pi.sh")],
                            env={**os.environ, "ROOT": str(root)}, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "broker 'ftp://x': expected mqtt://HOST[:PORT]" in result.stderr
    assert "the club drop-in is left as it is" in result.stderr
    assert not (root / DROPIN).exists()


# --- systemd reads it ------------------------------------------------------------


def _root(tmp_path: Path, dropin: str | None) -> Path:
    """A root with the unit and its drop-in as installed, for systemd-analyze."""
    analyze = shutil.which("systemd-analyze")
    units = next((Path(p) for p in ("/usr/lib/systemd/system", "/lib/systemd/system")
                  if Path(p, "sysinit.target").exists()), None)
    if analyze is None or units is None:
        pytest.skip("systemd-analyze (Debian package systemd) is not installed")
    root = tmp_path / "root"
    shutil.copytree(units, root / "usr/lib/systemd/system", symlinks=True)
    (root / "etc/systemd/system").mkdir(parents=True)
    shutil.copy(UNIT, root / "etc/systemd/system/euchre-referee.service")
    if dropin is not None:
        (root / DROPIN).parent.mkdir(parents=True)
        (root / DROPIN).write_text(dropin, encoding="utf-8")
    binary = root / EXEC.lstrip("/")
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    binary.chmod(0o755)
    return root


def _analyze(root: Path, *args: str) -> str:
    result = subprocess.run(["systemd-analyze", *args, f"--root={root}",
                             "euchre-referee.service"], capture_output=True, text=True,
                            timeout=60, cwd=root.parent)
    return (result.stdout + result.stderr).strip()


def _verdicts(root: Path) -> tuple[dict[str, str], float]:
    """``systemd-analyze security --offline``: each check's line by its
    setting, and the overall exposure."""
    security = _analyze(root, "security", "--offline=true")
    found = re.search(r"Overall exposure level for euchre-referee.service: ([\d.]+)", security)
    assert found, security
    lines = {line.split()[1]: " ".join(line.split()) for line in security.splitlines()
             if line[:1] in "✓✗" and len(line.split()) > 1}
    return lines, float(found.group(1))


def test_systemd_reads_the_unit_with_the_dropin_and_keeps_the_rest_of_the_sandbox(
        tmp_path: Path) -> None:
    root = _root(tmp_path / "club", club_dropin("mqtt://director.local"))
    assert _analyze(root, "verify") == ""
    club, exposure = _verdicts(root)
    alone, exposure_alone = _verdicts(_root(tmp_path / "alone", None))
    changed = {key for key in alone if club[key] != alone[key]}
    assert changed == {"PrivateNetwork=", "RestrictAddressFamilies=~AF_(INET|INET6)",
                       "IPAddressDeny="}, changed  # the drop-in is merged: only these
    assert club["PrivateNetwork="].startswith("✗") and "host's network" in club[
        "PrivateNetwork="]
    assert "allow list" in club["IPAddressDeny="]
    for kept in ("RestrictAddressFamilies=~AF_PACKET", "RestrictAddressFamilies=~AF_NETLINK",
                 "RestrictAddressFamilies=~…", "CapabilityBoundingSet=~CAP_NET_ADMIN",
                 "CapabilityBoundingSet=~CAP_NET_(BIND_SERVICE|BROADCAST|RAW)"):
        assert club[kept].startswith("✓"), club[kept]
    assert exposure_alone < exposure <= 2.0  # systemd calls up to 2 safe or OK


def test_systemd_does_report_a_bad_value_in_the_dropin(tmp_path: Path) -> None:
    text = club_dropin("mqtt://192.168.4.1")
    assert text is not None
    root = _root(tmp_path, text.replace("IPAddressDeny=any", "IPAddressDeny=bogus"))
    assert "bogus" in _analyze(root, "verify")


# --- the program in the unit's network ---------------------------------------------

needs_namespaces = pytest.mark.skipif(
    UNSHARE is None or NSENTER is None or IP is None
    or subprocess.run([UNSHARE or "unshare", "--user", "--map-root-user", "--net", "true"],
                      capture_output=True).returncode != 0,
    reason="no unprivileged network namespaces here (unshare, nsenter, ip from util-linux "
           "and iproute2, and user namespaces allowed)")


class Box:
    """``euchre-referee run`` as the unit runs it (mock pins, no panel), in
    the network ``network`` gives it: "host", or "private" (a namespace of its
    own, its loopback down until :meth:`loopback_up`)."""

    def __init__(self, tmp_path: Path, broker: str, network: str) -> None:
        tmp_path.mkdir(parents=True, exist_ok=True)
        config = tmp_path / "referee.toml"
        config.write_text('[display]\ninterface = "i2c"\nport = 99\n'
                          '[serial]\nport = "/nonexistent/ttyGS0"\n'
                          f'[club]\nbroker = "{broker}"\ntable = 1\n', encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WATCHDOG_", "NOTIFY_"))}
        env.update(GPIOZERO_PIN_FACTORY="mock", PYTHONUNBUFFERED="1")
        prefix = [] if network == "host" else [
            UNSHARE or "unshare", "--user", "--map-root-user", "--net"]
        self.process = subprocess.Popen(
            [*prefix, sys.executable, "-m", "firmware", "run", "--config", str(config),
             "--state-dir", str(tmp_path / "state")],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.said: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        """The first line (from now on) holding ``text``."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {text!r} in {timeout} s: {self.said}") from None
            self.said.append(line)
            if text in line:
                return line

    def enter(self, *command: str, **kwargs: Any) -> subprocess.Popen[bytes]:
        """``command`` in the box's network namespace."""
        return subprocess.Popen([NSENTER or "nsenter", "--target", str(self.process.pid),
                                 "--user", "--net", "--preserve-credentials", *command],
                                **kwargs)

    def stop(self) -> str:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        while not self.lines.empty():
            self.said.append(self.lines.get())
        return "\n".join(self.said)


def _statuses(url: str) -> Iterator[dict[str, Any]]:
    """The retained and live messages on table 1's status topic."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    host, port = url.removeprefix("mqtt://").rsplit(":", 1)
    got: queue.Queue[bytes] = queue.Queue()
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="test-watch")
    client.on_message = lambda c, u, msg: got.put(bytes(msg.payload))
    client.on_connect = lambda c, u, f, r, p: c.subscribe(status_topic(DEFAULT_EVENT, 1), 1)
    client.connect(host, int(port))
    client.loop_start()
    try:
        while True:
            yield json.loads(got.get(timeout=60))
    finally:
        client.loop_stop()
        client.disconnect()


@needs_mosquitto
def test_the_club_box_in_the_dropins_network_reaches_a_real_mosquitto(
        tmp_path: Path) -> None:
    text = club_dropin("mqtt://127.0.0.1")
    assert text is not None
    merged = settings(UNIT.read_text(encoding="utf-8"), text)
    assert merged["Service.PrivateNetwork"][-1] == "no"  # so: the host's network
    broker = Mosquitto(tmp_path / "broker")
    box = Box(tmp_path / "box", broker.url, "host")
    try:
        online = next(s for s in _statuses(broker.url) if s.get("online"))
        assert online["table"] == 1
    finally:
        said = box.stop()
        broker.stop()
    assert box.process.returncode == 0, said
    assert "no network" not in said and "Traceback" not in said


@needs_mosquitto
@needs_namespaces
def test_a_box_with_no_network_keeps_trying_and_joins_once_it_is_there(
        tmp_path: Path) -> None:
    """As at boot before the Wi-Fi: a network namespace with nothing up, not
    even its loopback.  The box scores on, says it tries again (each wait
    twice the last), and joins once the network and a broker are there."""
    port = 1883  # the namespace's own loopback: nothing else listens there
    box = Box(tmp_path / "box", f"mqtt://127.0.0.1:{port}", "private")
    mosquitto = None
    try:
        first = box.wait_for("trying again in")
        assert "club: no network to reach mqtt://127.0.0.1:" in first and "in 1 s" in first
        assert "in 2 s" in box.wait_for("trying again in")  # backs off
        up = box.enter(IP or "ip", "link", "set", "lo", "up")
        assert up.wait(timeout=30) == 0
        conf = tmp_path / "mosquitto.conf"
        conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\nuser root\n"
                        "log_dest stderr\nlog_type all\n", encoding="utf-8")
        log = open(tmp_path / "mosquitto.log", "wb")
        mosquitto = box.enter(MOSQUITTO or "mosquitto", "-c", str(conf),
                              stdout=log, stderr=log)
        log.close()
        joined = box.wait_for("the network is there now", timeout=120)
        assert "joining mqtt://127.0.0.1:" in joined
        deadline = time.monotonic() + 60
        while "New client connected" not in (tmp_path / "mosquitto.log").read_text(
                errors="replace"):
            assert time.monotonic() < deadline, (tmp_path / "mosquitto.log").read_text()
            assert mosquitto.poll() is None, (tmp_path / "mosquitto.log").read_text()
            time.sleep(0.1)  # polling a file: the broker's log is the barrier
        assert " as box-" in (tmp_path / "mosquitto.log").read_text(errors="replace")
        assert box.process.poll() is None  # it never gave up
    finally:
        said = box.stop()
        if mosquitto is not None:
            mosquitto.terminate()
            mosquitto.wait(timeout=30)
    assert box.process.returncode == 0, said
    assert "not joining" not in said and "Traceback" not in said


_FLAG_SCRIPT = '''
import queue, subprocess, sys, time
from pathlib import Path
from firmware.app import Referee
from firmware.config import Config
from firmware.journal import Store
from firmware.club.box import OFFLINE_FLAG, ClubBox
state = Path(sys.argv[1])
referee = Referee(Config(state_dir=state), Store(state), renderer=lambda view: view)
box = ClubBox(referee, queue.Queue(), broker="mqtt://127.0.0.1:1", table=1).start()
print("offline", OFFLINE_FLAG in referee.view().flags, box.join_tries, flush=True)
subprocess.run([sys.argv[2], "link", "set", "lo", "up"], check=True)
box._join_at = 0.0  # (the try due now rather than in a second)
box._retry_open(referee)
print("online", OFFLINE_FLAG in referee.view().flags, box.join_tries, flush=True)
box.close()
'''


@needs_namespaces
def test_the_screen_shows_the_box_has_no_network_until_it_has(tmp_path: Path) -> None:
    result = subprocess.run(
        [UNSHARE or "unshare", "--user", "--map-root-user", "--net", sys.executable, "-c",
         _FLAG_SCRIPT, str(tmp_path), IP or "ip"], cwd=REPO, capture_output=True, text=True,
        timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["offline True 1", "online False 0"], result.stderr
    assert "no network to reach mqtt://127.0.0.1:1 yet" in result.stderr
    assert "the network is there now: joining mqtt://127.0.0.1:1" in result.stderr
