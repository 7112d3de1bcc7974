from __future__ import annotations

import queue
from collections.abc import Iterator

import pytest
from gpiozero.pins.mock import MockFactory


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
