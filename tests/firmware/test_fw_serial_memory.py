"""The biggest log the link takes, sent to a referee in a process of its own.

A valid log of 99,941 lines of 500 bytes (50 MB, inside both limits) goes
over a real pseudo-terminal to ``euchre-referee emulate`` with the laptop's
client (``replay load``); the referee's peak resident memory (VmHWM in
/proc/PID/status) stays under the 60 MB budget of SPEC section 6.  The
figures themselves: bench/memory_bench.py.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from support.scripts import load_script


def memory_bench() -> ModuleType:
    return load_script("bench/memory_bench.py")


@pytest.mark.timeout(900)
def test_a_50_mb_log_keeps_the_referee_under_60_mb(tmp_path: Path) -> None:
    bench = memory_bench()
    log = bench.write_big_log(tmp_path / "big.log")
    assert log.stat().st_size == bench.BIG_LINES * (bench.BIG_WIDTH + 1)
    figures = bench.measure(log, load=True)
    assert figures["peak_mb"] < bench.BUDGET_MB, figures
