"""A long ``send --load`` over a real pseudo-terminal (issue 21).

The device says it is working (``@TAG working N of M games stored``, every
``working_every`` seconds) while it checks and stores a big log, and the
laptop waits its timeout again from each such line, showing it on stderr: a
load that takes many times the client's timeout still ends with its verdict.
The logs are random whole games made with the engine (``random_games_log``).

Barriers, not sleeps: the journal's storing is held at one game (an event
the test sets) until the device has sent enough progress lines to outlast
the client's timeout several times over.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.serial_kit import TIMEOUT, Device, random_games_log, wait_for

from firmware.cli import main

GAMES = 40
CLIENT_TIMEOUT = 1.5
"""The laptop's ``--timeout`` in these tests (s): far below the load's time."""
EVERY = 0.05
"""The device's progress interval in these tests (s)."""


@pytest.fixture
def device(tmp_path: Path) -> Iterator[Device]:
    dev = Device(tmp_path / "state", working_every=EVERY)
    yield dev
    dev.close()


class HeldStore:
    """The device's journal stores game ``at`` (1-based, of this load) only
    once :attr:`release` is set; :attr:`held` is set when it waits there."""

    def __init__(self, device: Device, at: int) -> None:
        self.held = threading.Event()
        self.release = threading.Event()
        self.calls = 0
        store = device.referee.store
        new_game = store.new_game

        def held(lines: Any = (), **options: Any) -> int:
            self.calls += 1
            if self.calls == at:
                self.held.set()
                assert self.release.wait(TIMEOUT), "the test never released the store"
            return new_game(lines, **options)

        store.new_game = held  # type: ignore[method-assign]


def run_cli(*args: str) -> tuple[threading.Thread, list[int]]:
    """``euchre-referee ARGS`` in a thread; its exit code lands in the list."""
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(main(list(args))), daemon=True)
    thread.start()
    return thread, result


def test_a_long_load_says_it_is_working_and_the_laptop_waits(
        device: Device, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "night.log"
    log.write_text(random_games_log(GAMES), encoding="utf-8")
    store = HeldStore(device, at=20)
    thread, result = run_cli("send", "--port", device.path, "--load",
                             "--timeout", str(CLIENT_TIMEOUT), str(log))
    try:
        assert store.held.wait(TIMEOUT)
        # Held at game 20 for three times the client's timeout, at least:
        # each progress line comes no sooner than EVERY after the one before.
        protocol = device.service.protocol
        enough = protocol.working_sent + round(3 * CLIENT_TIMEOUT / EVERY)
        wait_for(lambda: protocol.working_sent >= enough)
        assert thread.is_alive()  # still waiting for the verdict
    finally:
        store.release.set()
    thread.join(TIMEOUT)
    out, err = capsys.readouterr()
    assert result == [0], err
    ids = ", ".join(str(number) for number in range(2, 2 + GAMES))
    assert out.splitlines()[-1] == (f"loaded as games {ids}: game {1 + GAMES} is now the "
                                    "current game")
    said = err.splitlines()
    assert said and all(line.startswith("euchre-referee: the device is working: ")
                        for line in said), said
    assert "euchre-referee: the device is working: 19 of 40 games stored" in said
    assert len(device.on_main(lambda referee: referee.store.games())) == 1 + GAMES
