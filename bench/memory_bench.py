"""Resident memory of the referee while it is sent the biggest log the link takes.

The referee runs as its own process (``euchre-referee emulate``, its serial link
on a pseudo-terminal), as on the table; this process sends it a valid log of
99,941 lines of 500 bytes (50 MB, inside both limits of docs/serial-protocol.md:
512 bytes a line, 100,000 lines) with the laptop's own client, once to be
checked and once with ``replay load``, and samples the referee's
``/proc/PID/status`` (VmRSS every 20 ms, VmHWM: the peak) before and after.

Budget (SPEC section 6): under 60 MB resident, whatever it is sent within the
documented limits.

Run:  .venv/bin/python bench/memory_bench.py  [--lines 99941] [--width 500]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from firmware.link.client import DeviceLink, log_lines  # noqa: E402

BUDGET_MB = 60.0
BIG_LINES = 99_941
BIG_WIDTH = 500


def padded(line: str, width: int) -> str:
    """``line`` with a comment that makes it ``width`` bytes long."""
    pad = width - len(line.encode("utf-8")) - 3
    return f"{line} # {'x' * pad}" if pad >= 0 else line


def write_big_log(path: Path, lines: int = BIG_LINES, width: int = BIG_WIDTH) -> Path:
    """A valid log of exactly ``lines`` lines of ``width`` bytes: a hand's upcard
    entered and undone over and over (each line padded with a comment)."""
    head = ["euchre-log 1", "players N=Ragnar E=Sigríður S=South W=Anna", "game dealer=N"]
    with open(path, "w", encoding="utf-8") as out:
        for number in range(lines):
            if number < len(head):
                text = head[number]
            elif number == lines - 1 and (number - len(head)) % 2 == 0:
                text = "# the end"
            else:
                text = "upcard 9H" if (number - len(head)) % 2 == 0 else "undo"
            out.write(padded(text, width) + "\n")
    return path


def memory_kb(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of ``pid`` in kB."""
    fields: dict[str, int] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":", 1)
                fields[key] = int(value.split()[0])
    return fields


class Referee:
    """``euchre-referee emulate`` in a process of its own, its link on ``self.port``."""

    def __init__(self, state_dir: Path) -> None:
        self.port = str(state_dir / "ttyREFEREE")
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "firmware", "emulate", "--state-dir", str(state_dir),
             "--pty-link", self.port],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
            cwd=ROOT,
        )
        assert self.process.stderr is not None
        self._stderr: IO[bytes] = self.process.stderr
        line = self._stderr.readline()  # "euchre-referee: serial link on /dev/pts/N ..."
        if b"serial link on" not in line:
            self.close()
            raise RuntimeError(f"the referee did not start: {line!r}")
        self.peak_rss_kb = 0
        self._sampling = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _sample(self) -> None:
        while not self._sampling.wait(0.02):
            try:
                rss = memory_kb(self.process.pid)["VmRSS"]
            except (OSError, KeyError):
                return
            self.peak_rss_kb = max(self.peak_rss_kb, rss)

    def memory(self) -> dict[str, int]:
        return memory_kb(self.process.pid)

    def close(self) -> None:
        self._sampling.set()
        if self.process.stdin is not None:
            self.process.stdin.close()  # the end of its keyboard: it quits
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def measure(log: Path, *, load: bool = False) -> dict[str, float]:
    """Send ``log`` to a fresh referee; its memory (MB) before, at the peak, after."""
    lines = log_lines(log.read_bytes())
    with tempfile.TemporaryDirectory() as state:
        referee = Referee(Path(state))
        try:
            with DeviceLink(referee.port, timeout=300.0) as link:
                link.sync()
                before = referee.memory()
                started = time.monotonic()
                answer = link.replay(lines, load=load)
                seconds = time.monotonic() - started
            if not answer.ok or not answer.lines or '"error": null' not in answer.lines[0]:
                raise RuntimeError(f"the log was not valid on the device: {answer}")
            after = referee.memory()
        finally:
            referee.close()
    return {
        "before_mb": before["VmRSS"] / 1024, "peak_mb": after["VmHWM"] / 1024,
        "sampled_peak_mb": referee.peak_rss_kb / 1024, "after_mb": after["VmRSS"] / 1024,
        "seconds": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=BIG_LINES)
    parser.add_argument("--width", type=int, default=BIG_WIDTH)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        log = write_big_log(Path(folder) / "big.log", args.lines, args.width)
        size = log.stat().st_size / 1e6
        print(f"log: {args.lines} lines of {args.width} bytes ({size:.1f} MB)")
        print(f"{'':16}{'before':>9}{'peak':>9}{'after':>9}{'time':>9}   budget {BUDGET_MB:g} MB")
        for load in (False, True):
            figures = measure(log, load=load)
            name = "replay load" if load else "replay"
            verdict = "met" if figures["peak_mb"] < BUDGET_MB else "NOT MET"
            print(f"{name:16}{figures['before_mb']:8.1f}M{figures['peak_mb']:8.1f}M"
                  f"{figures['after_mb']:8.1f}M{figures['seconds']:8.1f}s   {verdict}")


if __name__ == "__main__":
    main()
