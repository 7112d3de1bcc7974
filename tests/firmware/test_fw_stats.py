"""A box's statistics per player (issue 26): replayed from the kept games.

Random kept games are drawn as the hands a table plays (maker, suit, alone,
the makers' tricks, now and then a renege, a wrong entry undone, players
changing between games); the expected counts are worked out here from those
hands with the standard rules written out again, independently of the
engine, and compared with :mod:`firmware.stats` reading the games from a real
journal.  The serial ``stats`` command is asked over a real pseudo-terminal,
and the laptop's ``euchre-referee stats --port`` through its own client.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.serial_kit import Device, Host

from firmware.cli import main
from firmware.journal import Store
from firmware.stats import (
    FIELDS,
    kept_logs,
    stats_from_json_lines,
    stats_json_lines,
    stats_lines,
    stats_of,
)

SEATS = "NESW"
NAMES = ("Anna", "Bo", "Cy", "Dee", "Sigríður", "Ragnar")
TEAM = {"N": "NS", "S": "NS", "E": "EW", "W": "EW"}
PARTNER = {"N": "S", "S": "N", "E": "W", "W": "E"}


class Expected:
    """The counts worked out from the drawn hands (standard rules, target 10)."""

    def __init__(self) -> None:
        self.counts: dict[str, Counter[str]] = {}

    def add(self, name: str, field: str, amount: int = 1) -> None:
        self.counts.setdefault(name, Counter())[field] += amount

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {name: {field: counts[field] for field in FIELDS}
                for name, counts in self.counts.items()}


@st.composite
def kept_games(draw: st.DrawFn) -> tuple[list[list[str]], Expected]:
    """Some games as the journal keeps them (lines without the header), and
    the expected counts."""
    expected = Expected()
    games: list[list[str]] = []
    for _ in range(draw(st.integers(1, 3))):
        names = dict(zip(SEATS, draw(st.permutations(NAMES))[:4]))
        lines = ["players " + " ".join(f"{seat}={names[seat]}" for seat in SEATS)]
        dealer = draw(st.sampled_from(SEATS))
        lines.append(f"game dealer={dealer}")
        for name in names.values():
            expected.add(name, "games")
        score = {"NS": 0, "EW": 0}
        hands = draw(st.integers(0, 30))  # fewer than the game needs: left unfinished
        while hands and max(score.values()) < 10:
            hands -= 1
            maker = draw(st.sampled_from(SEATS))
            alone = draw(st.booleans())
            suit = draw(st.sampled_from("SHDC"))
            lines.append(f"make {maker} {suit}" + (" alone" if alone else ""))
            renege = draw(st.integers(0, 9)) == 9
            if renege:
                reneger = draw(st.sampled_from(
                    [s for s in SEATS if not (alone and s == PARTNER[maker])]))
                lines.append(f"renege {reneger}")
                side, points = ("EW" if TEAM[reneger] == "NS" else "NS"), 2
                expected.add(names[reneger], "reneges")
                how = "renege"
            else:
                tricks = draw(st.integers(0, 5))
                if draw(st.integers(0, 5)) == 5:  # a wrong count, taken back
                    lines += [f"tricks {(tricks + 1) % 6}", "undo"]
                lines.append(f"tricks {tricks}")
                if tricks >= 3:
                    side = TEAM[maker]
                    points = 1 if tricks < 5 else 4 if alone else 2
                    how = "march" if tricks == 5 else "made"
                else:
                    side, points, how = ("EW" if TEAM[maker] == "NS" else "NS"), 2, "euchred"
            score[side] += points
            lines.append(f"score NS={score['NS']} EW={score['EW']}")
            for seat, name in names.items():
                expected.add(name, "hands")
                if TEAM[seat] == side:
                    expected.add(name, "points", points)
                if how == "euchred" and TEAM[seat] != TEAM[maker]:
                    expected.add(name, "euchres")
            who = names[maker]
            expected.add(who, "called")
            expected.add(who, "maker_points", points if side == TEAM[maker] else -points)
            expected.add(who, "made", how in ("made", "march"))
            expected.add(who, "marches", how == "march")
            expected.add(who, "euchred", how == "euchred")
            if alone:
                expected.add(who, "alone")
                expected.add(who, "alone_made", how in ("made", "march"))
                expected.add(who, "alone_marches", how == "march")
                expected.add(who, "alone_euchred", how == "euchred")
        winner = next((side for side, points in score.items() if points >= 10), None)
        if winner is not None:
            lines.append(f"winner {winner}")
            for seat, name in names.items():
                if TEAM[seat] == winner:
                    expected.add(name, "won")
        games.append(lines)
    return games, expected


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(kept_games())
def test_stats_equal_an_independent_count_of_the_kept_hands(
        drawn: tuple[list[list[str]], Expected]) -> None:
    games, expected = drawn
    with tempfile.TemporaryDirectory() as state_dir:
        store = Store(Path(state_dir))
        try:
            for lines in games:
                store.new_game(lines)
            stats = stats_of(kept_logs(store))
        finally:
            store.close()
    assert stats.unreadable == []
    assert stats.games == len(games)
    assert {name: player.counts for name, player in stats.players.items()} == \
        expected.as_dict()
    whole = stats_from_json_lines(stats_json_lines(stats))
    assert whole == stats.as_json()
    for player in whole["players"]:
        called = player["called"]
        assert player["points_per_call"] == (
            None if not called else round(player["maker_points"] / called, 3))


def test_hands_are_credited_to_the_names_seated_then_and_a_bad_game_is_left_out() -> None:
    log = ("euchre-log 1\nplayers N=Anna E=Bo S=Cy W=Dee\ngame dealer=N\n"
           "make E H alone\ntricks 5\n"
           "players N=Eve\n"          # Eve takes Anna's seat between hands
           "make N S\ntricks 0\n")
    bad = "euchre-log 1\ngame dealer=N\nmake S H\ntricks 4\nupcard 9D\npass N\n"
    stats = stats_of([("one", log), ("two", bad)])
    assert stats.games == 1
    assert stats.unreadable == ["two: line 6: it is South's turn to bid, not Ragnar's"]
    bo, eve, anna = (stats.players[n].counts for n in ("Bo", "Eve", "Anna"))
    assert (bo["alone"], bo["alone_marches"], bo["maker_points"], bo["euchres"]) == (1, 1, 4, 1)
    assert (eve["called"], eve["euchred"], eve["maker_points"], eve["hands"]) == (1, 1, -2, 1)
    assert (anna["hands"], anna["games"], anna["called"]) == (1, 1, 0)
    # Cy sat out Bo's loner but played the second hand: a euchre for Dee and Bo
    assert stats.players["Dee"].counts["euchres"] == 1
    assert stats.players["Cy"].counts["euchres"] == 0


# --- over the serial link ------------------------------------------------------------

KEPT = [
    ["players N=Anna E=Bo S=Cy W=Dee", "game dealer=N", "make E H alone", "tricks 5",
     "make S C", "tricks 2"],
    ["players N=Bo E=Anna S=Dee W=Sigríður", "game dealer=W", "make W D", "tricks 3"],
]


@pytest.fixture
def device(tmp_path: Path) -> Iterator[Device]:
    state_dir = tmp_path / "state"
    store = Store(state_dir)
    for lines in KEPT:
        store.new_game(lines)
    store.close()
    dev = Device(state_dir)
    yield dev
    dev.close()


def expected_stats(device: Device) -> object:
    return device.on_main(lambda referee: stats_of(kept_logs(referee.store)))


def test_stats_over_a_pseudo_terminal(device: Device) -> None:
    host = Host(device.path)
    try:
        stats = expected_stats(device)
        text = host.ask("stats")
        assert text == [f"ok begin {len(stats_lines(stats))} stats",  # type: ignore[arg-type]
                        *stats_lines(stats), "ok end"]  # type: ignore[arg-type]
        assert text[1] == "2 games replayed"
        assert any(line.startswith("Bo: games 2 won 0, hands 3, called 1 (made 1, march 1, ")
                   for line in text)
        framed = host.ask("stats json")
        assert framed[0].startswith("ok begin ") and framed[0].endswith(" stats json")
        whole = stats_from_json_lines(framed[1:-1])
        assert whole == stats.as_json()  # type: ignore[attr-defined]
        # no game won yet: most games first, then by name
        assert [p["name"] for p in whole["players"]] == ["Anna", "Bo", "Dee", "Cy", "Sigríður"]
        assert host.ask("stats everything") == ["error stats: expected 'stats' or 'stats json'"]
        assert "stats [json]" in " ".join(host.ask("help"))
    finally:
        host.close()


def test_laptop_stats_command(device: Device, capsys: pytest.CaptureFixture[str]) -> None:
    stats = expected_stats(device)
    assert main(["stats", "--port", device.path, "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == stats.as_json()  # type: ignore[attr-defined]
    assert main(["stats", "--port", device.path]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == stats_lines(stats)  # type: ignore[arg-type]


def test_games_stats_reads_the_journal(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    store = Store(tmp_path)
    for lines in KEPT:
        store.new_game(lines)
    expected = stats_of(kept_logs(store))
    store.close()
    assert main(["games", "--state-dir", str(tmp_path), "--stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == expected.as_json()
    assert main(["games", "--state-dir", str(tmp_path), "--stats"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "2 games replayed"
    assert out[1] == ("Anna: games 2 won 0, hands 3, called 0 (made 0, march 0, euchred 0; "
                      "- a call), alone 0 (made 0, march 0, euchred 0), euchres 0, "
                      "defended alone 0, reneges 0")
    assert out[2].startswith("Bo: games 2 won 0, hands 3, called 1 (made 1, march 1, "
                             "euchred 0; +4.00 a call), alone 1 (made 1, march 1, euchred 0), "
                             "euchres 1")


def test_the_stats_page_shows_every_player_whole() -> None:
    """The box's "Stats" page (after the hands so far): every line of every
    player is drawn on one of its screens, nothing cut, a long name too."""
    from firmware.fonts import load_fonts
    from firmware.screens import draw, page_lines
    from firmware.stats import page_lines as stats_page
    from firmware.view import View
    from firmware.views import page_screens

    long_name = "Bartholomew-Maximiliánus Þórhildarson XL"[:40]
    kept = [[f'players N="{long_name}" E=Bo S=Cy W=Dee', *KEPT[0][1:]], KEPT[1]]
    stats = stats_of([(str(i), "euchre-log 1\n" + "\n".join(lines) + "\n")
                      for i, lines in enumerate(kept)])
    lines = stats_page(stats)
    assert stats.unreadable == []
    assert lines[0] == "2 games kept, replayed"
    assert lines[1] == ("Bo: won 0 of 2; called 1, +4.0 a call; alone 1 (1 made); euchres 1, "
                        "euchred 0")
    view = View(kind="stats", title="Stats", lines=lines)
    count = page_screens(view)
    assert count > 1
    drawn: list[str] = []
    for at in range(count):
        frame = draw(view._replace(cursor=at))
        assert frame.cut == ()
        drawn += frame.texts
    wrapped = page_lines(view, load_fonts())
    assert "".join(lines).replace(" ", "") == "".join(wrapped).replace(" ", "")
    assert all(line in drawn for line in wrapped)
    assert stats_page(stats_of([])) == ("No game kept yet",)


def test_a_long_stats_says_it_is_working(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Replaying many kept games takes a while on a Pi Zero: the request is
    answered with progress lines first (so the laptop waits), then its frame.
    The replay is held until the test has seen a progress line (a barrier)."""
    import threading

    from support.serial_kit import TIMEOUT

    from firmware.stats import BoxStats

    state_dir = tmp_path / "state"
    store = Store(state_dir)
    for lines in KEPT:
        store.new_game(lines)
    store.close()
    seen = threading.Event()
    original = BoxStats.add_log

    def held(self: BoxStats, label: str, text: str) -> None:
        assert seen.wait(TIMEOUT)
        original(self, label, text)

    monkeypatch.setattr(BoxStats, "add_log", held)
    device = Device(state_dir, working_every=0.05)
    host = Host(device.path)
    try:
        host.write(b"@s1 stats\r\n")
        assert host.line() == "@s1 working replaying the kept games: 0 of 2"
        seen.set()
        answer = host.answer()
        assert answer[0].startswith("@s1 ok begin ") and answer[1] == "2 games replayed"
    finally:
        seen.set()
        host.close()
        device.close()
