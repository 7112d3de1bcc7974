"""The club-night tests share one real mosquitto (tests/support/broker.py)."""

from support.broker import mosquitto
from support.club_table import director_on

__all__ = ["director_on", "mosquitto"]
