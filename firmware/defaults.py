"""Defaults the command line needs before any config file is read (kept apart
from :mod:`firmware.config` so that a command such as ``replay`` starts
without loading the config machinery)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

DEFAULT_STATE_DIR: Final = Path("state")
"""Where games are kept unless --state-dir or the config file says otherwise
(relative to where the referee is started)."""
DEFAULT_EVENT: Final = "club"
"""The club night's event id when none is given (the MQTT topics' root: ``euchre/club/``)."""
