"""The base of the engine's immutable values: events, house rules, a log's error.

Written out rather than made by ``dataclasses``: these classes are made at
every start of the program, and importing ``dataclasses`` and running it for
each class took longer than importing the rest of the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar

_V = TypeVar("_V", bound="Value")


class Value:
    """Immutable, and equal to a value of its own kind with equal fields.

    Each kind lists its fields in ``__slots__`` (or ``_fields``, when it keeps
    something else in its slots) and sets them in ``__init__`` with
    ``object.__setattr__``; equality, hashing, ``repr`` and pickling come from
    here.
    """

    __slots__: tuple[str, ...] = ()
    _fields: tuple[str, ...] = ()
    """The names of the fields (the class's ``__slots__`` unless it says otherwise)."""
    _values: Callable[[Any], tuple[object, ...]] = staticmethod(lambda value: ())
    """The fields of a value, in ``_fields`` order."""
    _what = "values"
    """What the class's values are called in the error for changing one."""

    def __init_subclass__(cls) -> None:
        names = cls._fields = cls.__dict__.get("_fields", cls.__slots__)
        if len(names) == 1:
            one = attrgetter(names[0])
            cls._values = staticmethod(lambda value: (one(value),))
        elif names:
            cls._values = staticmethod(attrgetter(*names))

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values(self) == other._values(other)

    def __hash__(self) -> int:
        return hash(self._values(self))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({fields})"

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: {self._what} do not change")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: {self._what} do not change")

    def __reduce__(self: _V) -> tuple[type[_V], tuple[object, ...]]:
        return type(self), self._values(self)


class Record:
    """Base of the mutable records (a game, a replay's outcome; the firmware's
    half-made selection): equal to a record of its own kind with equal
    ``_fields``, printed by them, and not hashable."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._fields)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({fields})"
