"""The night's standings: each player's totals and their ranks, derived.

Nothing here is stored but the night's settings (:class:`NightSettings`, in
the director's SQLite, table ``settings``).  The totals are summed from each
table's round as it counts (:class:`Outcome`: the replayed journal, or a
director's result correction in its place), the club's bonuses, the bye
compensation and the penalties (correction records); then ranked.

**Ranking.**  Players are ordered by the night's tie-break order
(:data:`TIE_BREAKS`, default all five in that order): the first criterion,
then, among players level on it, the next, and so on.  ``head_to_head`` is
judged inside each group still level when it is reached: each player's
rounds won minus rounds lost against the others of that group (as
opponents at a table).  Players level on every criterion share a rank,
written ``=3`` (the next player is then 3 + the group's size).

**A tied round** (a round of N hands with both sides level after the N-th):
``shared`` (the default) counts the round as won by both sides; ``extra-hand``
has the box ask for one more hand, unscored, whose scoring side wins the
round (the round is not done until it is played).  The rule of each round
travels in its assignment, so changing it changes only rounds to come.

**Byes** (``bye_points``): ``none`` (0, the default), ``average`` (for each
bye, the player's points per round played from their tables and bonuses,
rounded half up; 0 before they have played a round), or a whole number of
points per bye.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Protocol

from euchre_core import SEATS, Seat, Team

from .protocol import TIED_ROUND_RULES

TIE_BREAKS: Final = ("points", "rounds_won", "loners", "euchres", "head_to_head")
"""The criteria a tie-break order is made of (and the default order)."""

SETTINGS_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


def parse_tie_breaks(text: str) -> tuple[str, ...]:
    """``"points,rounds_won,head_to_head"`` (``-`` or ``_``, commas or spaces);
    ValueError naming the word that is not a criterion."""
    words = [w.strip().replace("-", "_") for w in text.replace(",", " ").split()]
    if not words:
        raise ValueError(f"tie-breaks: one or more of {', '.join(TIE_BREAKS)}")
    for word in words:
        if word not in TIE_BREAKS:
            raise ValueError(f"tie-breaks: {word!r} is not one of {', '.join(TIE_BREAKS)}")
    if len(set(words)) != len(words):
        raise ValueError(f"tie-breaks: {text!r} names a criterion twice")
    return tuple(words)


def parse_tied_round(text: str) -> str:
    if text not in TIED_ROUND_RULES:
        raise ValueError(f"tied-round: {text!r} is not one of {', '.join(TIED_ROUND_RULES)}")
    return text


def parse_bye_points(text: str) -> str:
    text = text.strip()
    if text in ("none", "average") or (text.isascii() and text.isdigit() and int(text) <= 99):
        return text if not text.isdigit() else str(int(text))
    raise ValueError(f"bye-points: {text!r} is not none, average or a number from 0 to 99")


_PARSERS: Final = {"tie_breaks": lambda t: ",".join(parse_tie_breaks(t)),
                   "tied_round": parse_tied_round, "bye_points": parse_bye_points}


@dataclass(frozen=True)
class NightSettings:
    """How the night ranks players, settles a tied round and makes up for a bye."""

    tie_breaks: tuple[str, ...] = TIE_BREAKS
    tied_round: str = "shared"
    bye_points: str = "none"

    def to_json(self) -> dict[str, Any]:
        return {"tie_breaks": list(self.tie_breaks), "tied_round": self.tied_round,
                "bye_points": self.bye_points}

    def updated(self, changes: Mapping[str, str]) -> NightSettings:
        """These settings with ``changes`` (``{"tie_breaks": "points,loners"}``...)
        applied; ValueError naming a key or value that is not one."""
        values: dict[str, Any] = {}
        for key, text in changes.items():
            if key not in _PARSERS:
                raise ValueError(f"setting {key!r}: one of {', '.join(_PARSERS)}")
            value = _PARSERS[key](text)
            values[key] = tuple(value.split(",")) if key == "tie_breaks" else value
        return replace(self, **values)

    def describe(self) -> str:
        byes = {"none": "no points", "average": "the player's average"}.get(
            self.bye_points, f"{self.bye_points} points")
        return (f"ties: {', then '.join(t.replace('_', ' ') for t in self.tie_breaks)}; "
                f"a tied round: {self.tied_round}; a bye: {byes}")


def night_settings(db: sqlite3.Connection, changes: Mapping[str, str] | None) -> NightSettings:
    """The night's settings as stored, with ``changes`` (``club serve``'s
    options) applied and stored; ValueError (nothing stored) for a bad one."""
    db.execute(SETTINGS_SCHEMA)
    stored = dict(db.execute("SELECT key, value FROM settings").fetchall())
    try:
        settings = NightSettings().updated({k: v for k, v in stored.items() if k in _PARSERS})
    except ValueError:  # a value this version does not know: the defaults, said by serve
        settings = NightSettings()
    if changes:
        settings = settings.updated(changes)
        for key in changes:
            value = getattr(settings, key)
            db.execute("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)",
                       (key, ",".join(value) if isinstance(value, tuple) else value))
    return settings


# --- one table's round as it counts -----------------------------------------------------


@dataclass
class Outcome:
    """One table's round as it counts in the standings (derived, never stored)."""

    round: int
    table: int
    seats: dict[Seat, str]
    score: dict[Team, int]
    done: bool
    winners: frozenset[Team]
    """The side that won the round; both sides for a shared tie; none while
    not done (or a round to a target not finished)."""
    loners: list[Seat] = field(default_factory=list)
    """The maker of each loner made in the counted hands."""
    euchres: list[Team] = field(default_factory=list)
    """The side that euchred the makers, per counted hand."""
    corrected_by: int | None = None
    """The result correction that set this table's score, if any."""


def winners_of(score: Mapping[Team, int], decider: Team | None, rule: str
               ) -> frozenset[Team] | None:
    """Who won a finished round of N hands with ``score``; ``decider`` is the
    side that scored the extra hand (if played).  None: tied and waiting for
    the extra hand (rule ``extra-hand``)."""
    if score[Team.NS] != score[Team.EW]:
        return frozenset({Team.NS if score[Team.NS] > score[Team.EW] else Team.EW})
    if rule == "extra-hand":
        return frozenset({decider}) if decider is not None else None
    return frozenset(Team)


# --- the totals and the ranks --------------------------------------------------------------


@dataclass
class Totals:
    """One player's night."""

    name: str
    table_points: int = 0
    bonus: int = 0
    bye_points: int = 0
    penalties: int = 0
    rounds_won: int = 0
    loners: int = 0
    euchres: int = 0
    rounds_played: int = 0
    byes: int = 0
    withdrawn: bool = False
    rank: str = ""
    played_points: int = 0
    """Points from the rounds played to their end, bonuses included (for an
    average bye)."""

    @property
    def points(self) -> int:
        return self.table_points + self.bonus + self.bye_points - self.penalties

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "name": self.name, "points": self.points,
                "rounds_won": self.rounds_won, "loners": self.loners, "euchres": self.euchres,
                "rounds": self.rounds_played, "rounds_played": self.rounds_played,
                "byes": self.byes, "bye_points": self.bye_points,
                "penalties": self.penalties, "withdrawn": self.withdrawn}


@dataclass(frozen=True)
class Bonuses:
    """The club's extra points, per player."""

    loner: int = 0
    """For each loner the player made (3 or more tricks alone)."""
    euchre: int = 0
    """For each euchre the player's side made as defenders."""
    round_won: int = 0
    """For each round the player's side won."""


def standings(players: Iterable[str], outcomes: Iterable[Outcome],
              byes: Iterable[str], penalties: Mapping[str, int], withdrawn: Iterable[str],
              settings: NightSettings, bonus: Bonuses) -> list[Totals]:
    """Every player's totals, ranked (see the module's docstring).  ``byes``
    names each bye once per round sat out."""
    totals: dict[str, Totals] = {}

    def of(name: str) -> Totals:
        if name not in totals:
            totals[name] = Totals(name)
        return totals[name]

    for name in players:
        of(name)
    outcomes = list(outcomes)
    for outcome in outcomes:
        earned: Counter[str] = Counter()
        for seat in SEATS:
            mine = of(outcome.seats[seat])
            mine.table_points += outcome.score[seat.team]
            earned[mine.name] += outcome.score[seat.team]
            if seat.team in outcome.winners:
                mine.rounds_won += 1
                mine.bonus += bonus.round_won
                earned[mine.name] += bonus.round_won
        for maker in outcome.loners:
            of(outcome.seats[maker]).loners += 1
            of(outcome.seats[maker]).bonus += bonus.loner
            earned[outcome.seats[maker]] += bonus.loner
        for team in outcome.euchres:
            for seat in SEATS:
                if seat.team is team:
                    of(outcome.seats[seat]).euchres += 1
                    of(outcome.seats[seat]).bonus += bonus.euchre
                    earned[outcome.seats[seat]] += bonus.euchre
        if outcome.done:
            for name, points in earned.items():
                of(name).rounds_played += 1
                of(name).played_points += points
    for name in byes:
        of(name).byes += 1
    for name, points in penalties.items():
        of(name).penalties += points
    for name in withdrawn:
        of(name).withdrawn = True
    for mine in totals.values():
        mine.bye_points = mine.byes * bye_value(mine, settings.bye_points)
    return rank(list(totals.values()), outcomes, settings.tie_breaks)


def bye_value(mine: Totals, rule: str) -> int:
    """The points one bye is worth to ``mine`` by ``rule``."""
    if rule == "none":
        return 0
    if rule == "average":
        played, earned = mine.rounds_played, mine.played_points
        return (2 * earned + played) // (2 * played) if played else 0
    return int(rule)


def _head_to_head(group: list[Totals], outcomes: list[Outcome]) -> dict[str, int]:
    """Per player of ``group``: rounds won minus rounds lost against the others."""
    names = {t.name for t in group}
    net: Counter[str] = Counter()
    for outcome in outcomes:
        if not outcome.done or len(outcome.winners) != 1:
            continue
        (winner,) = outcome.winners
        for seat in SEATS:
            me = outcome.seats[seat]
            if me not in names:
                continue
            opponents = {outcome.seats[s] for s in SEATS if s.team is not seat.team}
            if opponents & names:
                net[me] += 1 if seat.team is winner else -1
    return {t.name: net[t.name] for t in group}


def rank(totals: list[Totals], outcomes: list[Outcome], order: Iterable[str]) -> list[Totals]:
    """``totals`` ordered by the criteria in ``order``, each with its rank
    (``"3"``, or ``"=3"`` shared); level players in name order."""
    groups = [sorted(totals, key=lambda t: t.name.casefold())]
    for criterion in order:
        split: list[list[Totals]] = []
        for group in groups:
            if len(group) == 1:
                split.append(group)
                continue
            if criterion == "head_to_head":
                value = _head_to_head(group, outcomes)
                key = {t.name: value[t.name] for t in group}
            else:
                key = {t.name: getattr(t, criterion) for t in group}
            for level in sorted(set(key.values()), reverse=True):
                split.append([t for t in group if key[t.name] == level])
        groups = split
    ranked: list[Totals] = []
    for group in groups:
        place = len(ranked) + 1
        for mine in group:
            mine.rank = f"={place}" if len(group) > 1 else str(place)
            ranked.append(mine)
    return ranked


class Played(Protocol):
    """A table's round as the director replays it (``director.TableRound``)."""

    round: int
    table: int
    players: dict[Seat, str]

    @property
    def score(self) -> dict[Team, int]: ...
    @property
    def done(self) -> bool: ...
    @property
    def winners(self) -> frozenset[Team]: ...
    @property
    def counted(self) -> list[Any]: ...


def outcome(played: Played, correction: Any = None) -> Outcome:
    """How ``played`` counts: as replayed, or with a result correction's
    score in place of the journal's (its winner from that score, level:
    both; the journal's loners and euchres stay)."""
    loners = [r.maker for r in played.counted
              if r.alone and r.maker is not None and r.team is r.maker.team]
    euchres = [r.team for r in played.counted if r.how == "euchred" and r.team is not None]
    if correction is None:
        return Outcome(played.round, played.table, dict(played.players), played.score,
                       played.done, played.winners, loners, euchres)
    score = {Team.NS: correction.ns, Team.EW: correction.ew}
    winners = winners_of(score, None, "shared")
    assert winners is not None
    return Outcome(played.round, played.table, dict(played.players), score, True, winners,
                   loners, euchres, correction.id)


def tie_after(results: Sequence[Any], hands: int) -> tuple[int, Team | None] | None:
    """A round of ``hands`` hands whose results are ``results``: when the
    ``hands`` are played and both sides are level, ``(each side's points, the
    side that scored the extra hand after them or None while it is not
    played)``; None otherwise (not over yet, or not level)."""
    if len(results) < hands:
        return None
    counted = results[:hands]
    ns = sum(r.points for r in counted if r.team is Team.NS)
    ew = sum(r.points for r in counted if r.team is Team.EW)
    if ns != ew:
        return None
    return ns, next((r.team for r in results[hands:] if r.team is not None), None)
