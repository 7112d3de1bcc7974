"""House rules: one :class:`Rules` value, the standard profile its default.

Each setting has a key used in the log's ``rules`` line (``rules target=11
stick-the-dealer=off``).  A ``rules`` line states the whole profile: keys it
leaves out take their standard value.
"""

from __future__ import annotations

from typing import Final, Literal

from .value import Value

LoneLead = Literal["dealer-left", "maker-left"]


class RulesError(ValueError):
    """A ``rules`` setting that does not exist or has a value it cannot take."""


class Rules(Value):
    """The rules a game is played by.  ``Rules()`` is the standard profile.

    Immutable, equal to a ``Rules`` with the same settings, and hashable
    (:class:`~euchre_core.value.Value`).
    """

    __slots__ = (
        "target", "win_by_two", "stick_the_dealer", "defend_alone", "lone_defender_euchre",
        "defenders_sweep", "lone_lead", "canadian_loner", "renege_penalty", "renege_vs_loner",
    )
    _what = "rules"
    target: int
    """Points that win the game (5, 7, 10, 11, 15 are seen at tables)."""
    win_by_two: bool
    """When on, the game goes on until a side has the target and leads by two."""
    stick_the_dealer: bool
    """Dealer may not pass in round 2; when off, four passes twice throw the hand in."""
    defend_alone: bool
    """When on, one defender may play alone against a lone maker (``defend W``)."""
    lone_defender_euchre: int
    """Points a lone defender's side scores for a euchre (3 in some regions)."""
    defenders_sweep: int
    """Points the defenders score for taking all five tricks (4 or 3 at some tables)."""
    lone_lead: LoneLead
    """Who leads a lone hand: left of the dealer or of the maker (skipping sitting-out seats)."""
    canadian_loner: bool
    """When on, the dealer's partner who orders up in round 1 must go alone."""
    renege_penalty: int
    """Points to the other side when a renege is caught; the hand ends."""
    renege_vs_loner: int
    """Points to a lone maker's side when a defender reneges (4 at some tables)."""

    def __init__(
        self,
        target: int = 10,
        win_by_two: bool = False,
        stick_the_dealer: bool = True,
        defend_alone: bool = False,
        lone_defender_euchre: int = 4,
        defenders_sweep: int = 2,
        lone_lead: LoneLead = "dealer-left",
        canadian_loner: bool = False,
        renege_penalty: int = 2,
        renege_vs_loner: int = 2,
    ) -> None:
        values = (
            target, win_by_two, stick_the_dealer, defend_alone, lone_defender_euchre,
            defenders_sweep, lone_lead, canadian_loner, renege_penalty, renege_vs_loner,
        )
        for name, value in zip(self.__slots__, values):
            object.__setattr__(self, name, value)

    def to_tokens(self) -> list[str]:
        """The ``key=value`` tokens of the settings that differ from standard."""
        standard = _STANDARD._values(_STANDARD)
        return [
            f"{key}={_format_value(value)}"
            for key, value, usual in zip(_FIELD_BY_KEY, self._values(self), standard)
            if value != usual
        ]

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
            if field[0] in values:
                raise RulesError(f"rules setting {key!r} given twice")
            values[field[0]] = _parse_value(key, field, text)
        return cls(**values)  # type: ignore[arg-type]

    def describe(self) -> list[str]:
        """One ``key=value  meaning`` line per setting, for help screens and docs."""
        return [
            f"{key}={_format_value(value)}" for key, value in zip(_FIELD_BY_KEY, self._values(self))
        ]

    def replace(self, **changes: object) -> Rules:
        """These rules with some settings changed (a TypeError names an unknown one)."""
        return Rules(**{**dict(zip(_NAMES, self._values(self))), **changes})  # type: ignore[arg-type]


_NAMES: Final = Rules.__slots__
"""The settings, in order."""
_STANDARD: Final = Rules()
_Field = tuple[str, str]
"""A setting's name and kind (``int``, ``bool`` or ``LoneLead``)."""
_FIELD_BY_KEY: Final[dict[str, _Field]] = {
    name.replace("_", "-"): (name, Rules.__init__.__annotations__[name]) for name in _NAMES
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


def _parse_value(key: str, field: _Field, text: str) -> object:
    name, kind = field
    if kind == "bool":
        if text in ("on", "yes", "true"):
            return True
        if text in ("off", "no", "false"):
            return False
        raise RulesError(f"{key} is on or off, not {text!r}")
    if kind == "int":
        low, high = _RANGES[name]
        if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
            raise RulesError(f"{key} is a whole number from {low} to {high}, not {text!r}")
        return int(text)
    if text not in ("dealer-left", "maker-left"):
        raise RulesError(f"{key} is dealer-left or maker-left, not {text!r}")
    return text
