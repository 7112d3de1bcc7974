from __future__ import annotations

import queue
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `pytest` run without `python -m`
    sys.path.insert(0, str(ROOT))


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    """A fresh mock pin factory per test; pins are released afterwards."""
    mock = MockFactory()
    try:
        yield mock
    finally:
        mock.reset()
        mock.close()


@pytest.fixture
def events() -> queue.Queue:
    return queue.Queue()
