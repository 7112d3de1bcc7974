"""The main loop outlives a job that fails (firmware/app.py ``Referee.run``):
a job's fault is one line with its cause, in the log and on the screen, and
the jobs after it are taken as always."""

from __future__ import annotations

import logging
import queue
from pathlib import Path
from typing import Any

import pytest

from euchre_core import parse_event
from firmware.app import Referee
from firmware.config import Config
from firmware.journal import Store


def test_a_failing_job_is_said_in_one_line_and_the_loop_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    store = Store(tmp_path)
    referee = Referee(Config(state_dir=tmp_path), store, renderer=lambda view: view)
    events: queue.Queue[Any] = queue.Queue()
    done: list[str] = []

    def unread(r: Referee) -> object:  # a real fault: a game id SQLite cannot hold
        return r.store.lines(2 ** 70)

    events.put(unread)
    events.put(lambda r: r.enter(parse_event("game dealer=E")))  # type: ignore[arg-type]
    events.put(lambda r: done.append(r.message or ""))
    events.put(lambda r: done.append(r.store.lines(r.game_id)[-1]))
    try:
        referee.run(events, stop=lambda: len(done) == 2, poll=0.01)
        said = done[0]
        assert said.startswith("job test_a_failing_job_is_said_in_one_line_and_the_loop_goes_"
                               "on.<locals>.unread failed: ")
        assert "int too large" in said and "\n" not in said
        assert [r.getMessage() for r in caplog.records if r.name == "euchre.app"] == [said]
        assert "Traceback" not in caplog.text
        assert done[1] == "game dealer=E"  # the jobs after it were taken
    finally:
        store.close()
