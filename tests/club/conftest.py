"""The club-night tests share one real mosquitto (tests/support/broker.py)."""

from support.broker import mosquitto

__all__ = ["mosquitto"]
