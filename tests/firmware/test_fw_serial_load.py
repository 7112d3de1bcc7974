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
from support.serial_kit import TIMEOUT, Device, Host, random_games_log, wait_for

from firmware.cli import main

GAMES = 40
CLIENT_TIMEOUT = 1.5
"""The laptop's ``--timeout`` in these tests (s): far below the load's time."""
EVERY = 0.05
"""The device's progress interval in these tests (s)."""
WORKING_SAID = "euchre-referee: the device is working: "
"""How the laptop shows a progress line on stderr."""


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
    assert said and all(line.startswith(WORKING_SAID) for line in said), said
    assert f"{WORKING_SAID}19 of 40 games stored" in said
    assert len(device.on_main(lambda referee: referee.store.games())) == 1 + GAMES


def send_load(capsys: pytest.CaptureFixture[str], device: Device, log: Path,
              *options: str) -> tuple[int, str, str]:
    """``send --load``: its exit code, stdout and stderr, progress lines left
    out (how many come depends on the machine's speed)."""
    code = main(["send", "--port", device.path, "--load", *options, str(log)])
    out, err = capsys.readouterr()
    said = "".join(line for line in err.splitlines(keepends=True)
                   if not line.startswith(WORKING_SAID))
    return code, out, said


def stored(device: Device) -> int:
    return len(device.on_main(lambda referee: referee.store.games()))


def test_the_same_games_loaded_twice_are_stored_once(
        device: Device, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    night = tmp_path / "night.log"
    night.write_text(random_games_log(12), encoding="utf-8")
    code, out, _ = send_load(capsys, device, night)
    assert code == 0
    assert out.splitlines()[-1].startswith("loaded as games 2, 3, 4, ")
    assert stored(device) == 13
    before = device.on_main(lambda referee: [referee.store.lines(game)
                                             for game in range(1, 14)])

    code, out, err = send_load(capsys, device, night)  # sent again
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == (
        "not stored again: games 2-13 were already kept (the log's games 1-12, the same "
        "lines); the current game is still game 13")
    assert stored(device) == 13
    assert device.on_main(lambda referee: [referee.store.lines(game)
                                           for game in range(1, 14)]) == before

    longer = tmp_path / "longer.log"  # the same night and three games more
    longer.write_text(random_games_log(15), encoding="utf-8")
    code, out, err = send_load(capsys, device, longer, "--json")
    assert code == 0
    assert err.splitlines() == [
        "loaded the log's new games 13-15 as games 14-16: game 16 is now the current game",
        "not stored again: games 2-13 were already kept (the log's games 1-12, the same lines)"]
    code, out, err = send_load(capsys, device, longer, "--json")
    assert err.splitlines() == ["not stored again: games 2-16 were already kept (the log's "
                                "games 1-15, the same lines); the current game is still game 16"]


def test_a_load_of_new_and_kept_games_says_which_were_new(
        device: Device, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = tmp_path / "first.log"
    first.write_text(random_games_log(3), encoding="utf-8")
    assert send_load(capsys, device, first)[0] == 0
    longer = tmp_path / "longer.log"
    longer.write_text(random_games_log(5), encoding="utf-8")
    code, out, _ = send_load(capsys, device, longer)
    assert code == 0
    assert out.splitlines()[-2:] == [
        "loaded the log's new games 4, 5 as games 5, 6: game 6 is now the current game",
        "not stored again: games 2-4 were already kept (the log's games 1-3, the same lines)",
    ]
    assert device.on_main(lambda referee: referee.game_id) == 6
    one = tmp_path / "one.log"  # a single game, then the same again
    one.write_text(random_games_log(1, seed=7), encoding="utf-8")
    assert send_load(capsys, device, one)[1].splitlines()[-1] == (
        "loaded as game 7: it is now the current game")
    assert send_load(capsys, device, one)[1].splitlines()[-1] == (
        "not stored again: game 7 was already kept (the same lines); the current game is "
        "still game 7")
    assert stored(device) == 7


def test_a_load_the_laptop_gave_up_on_is_not_stored_twice_when_sent_again(
        device: Device, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's story: a laptop tool that stopped waiting for a long load
    (an older one's timeout, Ctrl-C) while the device went on storing, then
    the same log sent again."""
    night = tmp_path / "night.log"
    text = random_games_log(8)
    night.write_text(text, encoding="utf-8")
    store = HeldStore(device, at=4)
    gone = Host(device.path)
    try:
        lines = text.splitlines()
        assert gone.ask(f"@gone1 replay load {len(lines)}")[0].startswith("@gone1 ok replay")
        gone.write(("\n".join(lines) + "\n").encode())
        assert store.held.wait(TIMEOUT)
    finally:
        gone.close()  # gave up while game 4 was being stored
        store.release.set()
    wait_for(lambda: stored(device) == 9)
    wait_for(lambda: device.endpoint.peer_watch.own == 0)  # it has seen the laptop go
    code, out, err = send_load(capsys, device, night)
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == (
        "not stored again: games 2-9 were already kept (the log's games 1-8, the same lines); "
        "the current game is still game 9")
    assert stored(device) == 9
