"""House rules: one :class:`Rules` value, the standard profile its default.

Each setting has a key used in the log's ``rules`` line (``rules target=11
stick-the-dealer=off``).  A ``rules`` line states the whole profile: keys it
leaves out take their standard value.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Final, Literal

LoneLead = Literal["dealer-left", "maker-left"]


class RulesError(ValueError):
    """A ``rules`` setting that does not exist or has a value it cannot take."""


@dataclass(frozen=True, slots=True)
class Rules:
    """The rules a game is played by.  ``Rules()`` is the standard profile."""

    target: int = 10
    """Points that win the game (5, 7, 10, 11, 15 are seen at tables)."""
    win_by_two: bool = False
    """When on, the game goes on until a side has the target and leads by two."""
    stick_the_dealer: bool = True
    """Dealer may not pass in round 2; when off, four passes twice throw the hand in."""
    defend_alone: bool = False
    """When on, one defender may play alone against a lone maker (``defend W``)."""
    lone_defender_euchre: int = 4
    """Points a lone defender's side scores for a euchre (3 in some regions)."""
    defenders_sweep: int = 2
    """Points the defenders score for taking all five tricks (4 or 3 at some tables)."""
    lone_lead: LoneLead = "dealer-left"
    """Who leads a lone hand: left of the dealer or of the maker (skipping sitting-out seats)."""
    canadian_loner: bool = False
    """When on, the dealer's partner who orders up in round 1 must go alone."""
    renege_penalty: int = 2
    """Points to the other side when a renege is caught; the hand ends."""
    renege_vs_loner: int = 2
    """Points to a lone maker's side when a defender reneges (4 at some tables)."""

    def to_tokens(self) -> list[str]:
        """The ``key=value`` tokens of the settings that differ from standard."""
        standard = Rules()
        tokens = []
        for key, field in _FIELD_BY_KEY.items():
            value = getattr(self, field.name)
            if value != getattr(standard, field.name):
                tokens.append(f"{key}={_format_value(value)}")
        return tokens

    @classmethod
    def from_tokens(cls, tokens: list[str]) -> Rules:
        """Parse ``key=value`` tokens; keys left out keep their standard value."""
        values: dict[str, object] = {}
        for token in tokens:
            key, sep, text = token.partition("=")
            if not sep:
                raise RulesError(f"rules takes key=value settings, not {token!r}")
            field = _FIELD_BY_KEY.get(key)
            if field is None:
                raise RulesError(
                    f"unknown rules setting {key!r} (known: {', '.join(_FIELD_BY_KEY)})"
                )
            if field.name in values:
                raise RulesError(f"rules setting {key!r} given twice")
            values[field.name] = _parse_value(key, field, text)
        return cls(**values)  # type: ignore[arg-type]

    def describe(self) -> list[str]:
        """One ``key=value  meaning`` line per setting, for help screens and docs."""
        return [
            f"{key}={_format_value(getattr(self, field.name))}"
            for key, field in _FIELD_BY_KEY.items()
        ]

    def replace(self, **changes: object) -> Rules:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


_FIELD_BY_KEY: Final = {
    field.name.replace("_", "-"): field for field in dataclasses.fields(Rules)
}
RULE_KEYS: Final[tuple[str, ...]] = tuple(_FIELD_BY_KEY)

_RANGES: Final = {
    "target": (1, 99),
    "lone_defender_euchre": (1, 20),
    "defenders_sweep": (1, 20),
    "renege_penalty": (1, 20),
    "renege_vs_loner": (1, 20),
}


def _format_value(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _parse_value(key: str, field: dataclasses.Field[object], text: str) -> object:
    if field.type in ("bool", bool):
        if text in ("on", "yes", "true"):
            return True
        if text in ("off", "no", "false"):
            return False
        raise RulesError(f"{key} is on or off, not {text!r}")
    if field.type in ("int", int):
        low, high = _RANGES[field.name]
        if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
            raise RulesError(f"{key} is a whole number from {low} to {high}, not {text!r}")
        return int(text)
    if text not in ("dealer-left", "maker-left"):
        raise RulesError(f"{key} is dealer-left or maker-left, not {text!r}")
    return text
