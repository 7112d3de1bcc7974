"""A box's statistics per player name, from the games it keeps.

Always computed by replaying the kept games' logs with the engine (each
hand's :class:`~euchre_core.HandResult`, the names seated when it ended),
never from stored totals.  A player is a name: the same name at another seat
or in another game is the same player.  Used by ``euchre-referee stats``
(the journal or a serial port), the link's ``stats`` command and the box's
"Stats" page.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from euchre_core import SEATS, Game, HandResult, Seat, replay
from euchre_core.events import NewGame

FIELDS: Final = (
    "games", "won", "hands", "points", "called", "made", "marches", "euchred",
    "maker_points", "alone", "alone_made", "alone_marches", "alone_euchred",
    "euchres", "defended_alone", "reneges",
)
"""The counts kept per player, in the order the JSON and the docs give them:

- ``games`` games started with this name seated; ``won`` of them won;
- ``hands`` hands finished with this name seated (thrown-in hands too);
  ``points`` the points this player's side scored in them;
- ``called`` hands this player made trump; of them ``made`` (3 or 4 tricks,
  or 5), ``marches`` (all 5), ``euchred`` (fewer than 3: a euchre suffered);
  ``maker_points`` the points of those hands, net: the side's points when it
  scored, minus the other side's when they did (a renege's too);
- ``alone`` of the calls, those played alone; ``alone_made`` (3 or more
  tricks), ``alone_marches``, ``alone_euchred``;
- ``euchres`` hands this player defended (and played) and the makers were
  euchred; ``defended_alone`` hands defended alone; ``reneges`` reneges caught
  against this player."""


class PlayerStats:
    """The counts of one player name (see :data:`FIELDS`)."""

    __slots__ = ("name", "counts")

    def __init__(self, name: str) -> None:
        self.name = name
        self.counts: dict[str, int] = dict.fromkeys(FIELDS, 0)

    def add(self, field: str, amount: int | bool = 1) -> None:
        self.counts[field] += int(amount)

    @property
    def per_call(self) -> float | None:
        """Net points per hand as maker (None before a first call)."""
        called = self.counts["called"]
        return self.counts["maker_points"] / called if called else None

    def as_json(self) -> dict[str, Any]:
        per_call = self.per_call
        return {"name": self.name, **self.counts,
                "points_per_call": None if per_call is None else round(per_call, 3)}

    def __repr__(self) -> str:
        return f"PlayerStats({self.as_json()!r})"


class BoxStats:
    """Every player's counts over a box's kept games, and how many games were read."""

    def __init__(self) -> None:
        self.players: dict[str, PlayerStats] = {}
        self.games = 0
        """Games (``game`` lines) replayed."""
        self.unreadable: list[str] = []
        """Kept games that do not replay, each as ``game ID: reason``; left out."""

    def player(self, name: str) -> PlayerStats:
        stats = self.players.get(name)
        if stats is None:
            stats = self.players[name] = PlayerStats(name)
        return stats

    def ranked(self) -> list[PlayerStats]:
        """Players, most games won first, then most games, then by name."""
        return sorted(self.players.values(),
                      key=lambda p: (-p.counts["won"], -p.counts["games"], p.name))

    def add_log(self, label: str, text: str) -> None:
        """Replay the log ``text`` and count its games; a log that does not
        replay is listed in :attr:`unreadable` as ``label: reason``."""
        result = replay(text)
        if result.error is not None:
            self.unreadable.append(f"{label}: line {result.error.line}: {result.error.reason}")
            return
        self.add_game(result.game)

    def add_game(self, replayed: Game) -> None:
        """Count the games of a replayed log, entry by entry, with the engine:
        each hand is credited to the names seated when it ended."""
        shadow = Game()  # as replay() starts
        for entry in replayed.entries:
            results = len(shadow.results)
            had_winner = shadow.winner
            shadow.push(entry)
            if isinstance(entry, NewGame):
                self.games += 1
                for seat in SEATS:
                    self.player(shadow.names[seat]).add("games")
                continue
            if len(shadow.results) > results:
                self._hand(shadow.results[-1], dict(shadow.names))
            if had_winner is None and shadow.winner is not None:
                for seat in SEATS:
                    if seat.team is shadow.winner:
                        self.player(shadow.names[seat]).add("won")

    def _hand(self, result: HandResult, names: dict[Seat, str]) -> None:
        maker = result.maker
        sitting_out: set[Seat] = set()
        if maker is not None and result.alone:
            sitting_out.add(maker.partner)
        if result.lone_defender is not None:
            sitting_out.add(result.lone_defender.partner)
        for seat in SEATS:
            player = self.player(names[seat])
            player.add("hands")
            if result.team is seat.team:
                player.add("points", result.points)
            if result.reneger is seat:
                player.add("reneges")
            if result.lone_defender is seat:
                player.add("defended_alone")
            if maker is None:
                continue
            if seat is maker:
                _as_maker(player, result)
            elif (result.how == "euchred" and seat.team is not maker.team
                  and seat not in sitting_out):
                player.add("euchres")

    def as_json(self) -> dict[str, Any]:
        return {"games": self.games, "unreadable": list(self.unreadable),
                "players": [player.as_json() for player in self.ranked()]}


def _as_maker(player: PlayerStats, result: HandResult) -> None:
    """Count a hand ``player`` made trump in."""
    assert result.maker is not None
    mine = result.team is result.maker.team
    add = player.add
    add("called")
    add("maker_points", result.points if mine else -result.points)
    made = result.how in ("made", "march")
    add("made", made)
    add("marches", result.how == "march")
    add("euchred", result.how == "euchred")
    if result.alone:
        add("alone")
        add("alone_made", made)
        add("alone_marches", result.how == "march")
        add("alone_euchred", result.how == "euchred")


def stats_of(logs: Iterable[tuple[str, str]]) -> BoxStats:
    """The statistics of ``logs``, each a (label, log text) pair."""
    stats = BoxStats()
    for label, text in logs:
        stats.add_log(label, text)
    return stats


def _games(count: int) -> str:
    return "1 game" if count == 1 else f"{count} games"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def stats_lines(stats: BoxStats) -> list[str]:
    """The statistics as text, one line per player (the link's ``stats``)."""
    lines = [f"{_games(stats.games)} replayed"
             + (f", {len(stats.unreadable)} kept games left out (they do not replay)"
                if stats.unreadable else "")]
    for player in stats.ranked():
        c = player.counts.__getitem__
        lines.append(
            f"{player.name}: games {c('games')} won {c('won')}, hands {c('hands')}, "
            f"called {c('called')} (made {c('made')}, march {c('marches')}, "
            f"euchred {c('euchred')}; {_number(player.per_call)} a call), "
            f"alone {c('alone')} (made {c('alone_made')}, march {c('alone_marches')}, "
            f"euchred {c('alone_euchred')}), euchres {c('euchres')}, "
            f"defended alone {c('defended_alone')}, reneges {c('reneges')}"
        )
    lines += [f"left out: {line}" for line in stats.unreadable]
    return lines


def stats_json_lines(stats: BoxStats) -> list[str]:
    """The statistics as JSON lines: first ``{"games": N, "unreadable": [...]}``,
    then one object per player (each line short enough for the serial link)."""
    import json

    head = {"games": stats.games, "unreadable": stats.unreadable}
    return [json.dumps(head, ensure_ascii=False),
            *(json.dumps(p.as_json(), ensure_ascii=False) for p in stats.ranked())]


def stats_from_json_lines(lines: list[str]) -> dict[str, Any]:
    """The one JSON object that :func:`stats_json_lines` was cut from."""
    import json

    head = json.loads(lines[0])
    return {**head, "players": [json.loads(line) for line in lines[1:]]}


def kept_logs(store: Any) -> list[tuple[str, str]]:
    """Every game a journal :class:`~firmware.journal.Store` keeps, as
    (``game ID``, its log as entered, undos included)."""
    return [(f"game {info.id}", store.journal_text(info.id)) for info in store.games()]


def merged(parts: Iterable[BoxStats]) -> BoxStats:
    """The sum of several games' statistics."""
    total = BoxStats()
    for part in parts:
        total.games += part.games
        total.unreadable += part.unreadable
        for name, player in part.players.items():
            mine = total.player(name)
            for field, value in player.counts.items():
                mine.add(field, value)
    return total


class StatsCache:
    """A box's statistics kept between two looks at its "Stats" page: each
    kept game is replayed once and again only when its lines changed (the
    game being played), so opening the page costs one game's replay."""

    def __init__(self) -> None:
        self._games: dict[int, tuple[int, BoxStats]] = {}

    def stats(self, store: Any) -> BoxStats:
        games = {}
        for info in store.games():
            kept = self._games.get(info.id)
            if kept is None or kept[0] != info.lines:
                kept = (info.lines, stats_of([(f"game {info.id}",
                                               store.journal_text(info.id))]))
            games[info.id] = kept
        self._games = games
        return merged(part for _, part in games.values())


def page_lines(stats: BoxStats) -> tuple[str, ...]:
    """The box's "Stats" page: a line per player, in words."""
    if not stats.games:
        return ("No game kept yet",)
    out = [f"{_games(stats.games)} kept, replayed"]
    for player in stats.ranked():
        c = player.counts
        per_call = player.per_call
        calls = (f"called {c['called']}, {per_call:+.1f} a call" if per_call is not None
                 else "no call")
        out.append(f"{player.name}: won {c['won']} of {c['games']}; {calls}; "
                   f"alone {c['alone']} ({c['alone_made']} made); euchres {c['euchres']}, "
                   f"euchred {c['euchred']}")
    if stats.unreadable:
        out.append(f"{len(stats.unreadable)} kept games left out: they do not replay")
    return tuple(out)
