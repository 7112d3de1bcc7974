"""EGN export (issue 26): every game validates against EGN's published schema.

The schema and EGN's baseline rules engine are vendored with their licence
in tests/data/egn/ (README there).  Every game of ``examples/`` and random
games (the engine's own game strategies, card and winner level, random house
rules) are exported and validated with ``jsonschema``; card-level exports are
replayed by EGN's own rules engine under ``node`` and each deal's score
change must equal ours.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from core.test_core_prop_games import Played, card_games, props, winner_games
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft7Validator
from support.system_tools import missing

from euchre_core import Rules, Team, replay, write_log
from euchre_core.events import Renege, Tricks
from firmware.cli import main
from firmware.egn import UNKNOWN, from_egn, log_to_egn, to_egn
from firmware.journal import Store

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "egn"
SCHEMA = json.loads((DATA / "egn-schema-v1.json").read_text(encoding="utf-8"))
VALIDATOR = Draft7Validator(SCHEMA, format_checker=Draft7Validator.FORMAT_CHECKER)
NODE = shutil.which("node")
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.log") if p.name != "bad.log")


def assert_valid(document: dict[str, Any]) -> None:
    errors = sorted(VALIDATOR.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


def test_the_schema_rejects_what_it_should() -> None:
    """The vendored schema is the real one: a broken document fails it."""
    document = log_to_egn((ROOT / "examples" / "left-bower.log").read_text("utf-8"))[0].document
    assert_valid(document)
    broken = json.loads(json.dumps(document))
    broken["deals"][0]["initialState"]["upCard"] = "10h"
    assert not VALIDATOR.is_valid(broken)
    del broken["metadata"]["initialScore"]
    assert not VALIDATOR.is_valid(broken)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_exports_valid_egn(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    exports = log_to_egn(text)
    result = replay(text)
    assert exports and result.error is None
    for egn in exports:
        assert_valid(egn.document)
        assert egn.document["metadata"].get("description", "") == egn.note
    last = exports[-1].document["metadata"]
    assert last["finalScore"] == [result.game.score[Team.NS], result.game.score[Team.EW]]


def test_a_log_that_does_not_replay_is_refused_naming_the_line() -> None:
    with pytest.raises(ValueError, match=r"^line 7: Ragnar sits out: Anna went alone$"):
        log_to_egn((ROOT / "examples" / "bad.log").read_text(encoding="utf-8"))


def test_house_rules_starting_score_and_misdeal_are_mapped() -> None:
    score = log_to_egn((ROOT / "examples" / "from-a-score.log").read_text("utf-8"))[0]
    assert score.document["metadata"]["initialScore"] == [6, 4]
    first = score.document["deals"][0]
    assert first["initialState"] == {"dealer": 3, "upCard": "Ks"}  # after the misdeal
    assert first["phases"][0]["calls"] == ["Pass", "Order"]
    assert first["phases"][0]["callAnnotations"] == {"0": ["misdeal: dealt again (1x)"]}
    house = log_to_egn((ROOT / "examples" / "house-rules.log").read_text("utf-8"))[0]
    assert house.document["metadata"]["ruleset"] == {
        "std": False, "winning_score": 5, "canadian": True, "loner_lead": "LEFT_OF_DEALER",
        "loner_march_score": 4, "loner_euchred_score": 2, "defend_alone": True,
    }
    thrown = house.document["deals"][0]
    assert thrown["phases"] == [{"phaseNumber": 0, "type": "EUCHRE_BIDDING",
                                 "calls": ["Pass"] * 8}]
    lone = house.document["deals"][1]["phases"]
    assert lone[0]["isAlone"] and lone[0]["aloneDefender"] == 0  # Ragnar (N) defends alone
    assert lone[1]["tricks"][0] == [UNKNOWN, UNKNOWN]  # two play: Anna and Ragnar
    assert house.note.startswith("EGN cannot express the house rule defenders-sweep=4; "
                                 "the log does not hold the cards (winner-level hands")
    assert "\n" not in house.note


def test_rules_egn_cannot_say_are_named_in_the_one_line() -> None:
    rules = Rules(win_by_two=True, renege_penalty=3)
    game = replay(f"euchre-log 1\nrules {' '.join(rules.to_tokens())}\n"
                  "game dealer=N\nupcard JH\norder E\n").game
    egn = to_egn(game)
    assert_valid(egn.document)
    assert egn.note == ("EGN cannot express the house rule win-by-two=on, "
                        "the house rule renege-penalty=3; the log does not hold hand 1, "
                        "not finished")
    assert egn.document["deals"] == []


@props(40)
@given(st.one_of(card_games(), winner_games()))
def test_random_games_export_valid_egn(played: Played) -> None:
    text = write_log(played.game)
    for egn in log_to_egn(text):
        assert_valid(egn.document)
        assert len(egn.note.splitlines()) <= 1


# --- EGN's own rules engine --------------------------------------------------------

RUNNER = """
const fs = require("fs"), vm = require("vm");
vm.runInThisContext(fs.readFileSync(process.argv[1], "utf8"));
const egn = JSON.parse(fs.readFileSync(0, "utf8"));
const changes = egn.deals.map(d => {
  const steps = compileDealSteps(d, egn.metadata);
  return steps[steps.length - 1].scoreChange;
});
process.stdout.write(JSON.stringify(changes));
"""


def baseline_changes(document: dict[str, Any]) -> list[list[int]]:
    """Each deal's score change as EGN's baseline rules engine works it out."""
    assert NODE is not None
    done = subprocess.run([NODE, "-e", RUNNER, str(DATA / "rules-engine.js")],
                          input=json.dumps(document), capture_output=True, text=True,
                          check=True, timeout=120)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.skipif(NODE is None, reason=f"{missing('node')}: EGN's rules engine is "
                    "JavaScript (the schema test still runs)")
@props(15)
@given(card_games(rules=st.just(Rules())))
def test_egn_rules_engine_scores_card_level_exports_as_we_do(played: Played) -> None:
    """Card-level hands by the standard rules: EGN's baseline engine finds the
    same trick winners and score for every deal it can judge (a claim or a
    renege ends a hand early, which EGN does not record)."""
    game = played.game
    egn = to_egn(replay(write_log(game)).game)
    assert_valid(egn.document)
    changes = baseline_changes(egn.document)
    results = played.ends[0].results
    assert len(changes) == len(results)
    judged = 0
    for deal, change, result in zip(egn.document["deals"], changes, results):
        if any("claimed" in text or "renege" in text
               for phase in deal["phases"]
               for texts in phase.get("playAnnotations", {}).values() for text in texts):
            continue
        ours = [result.points if result.team is Team.NS else 0,
                result.points if result.team is Team.EW else 0]
        assert change == ours, (deal, result)
        judged += 1
    if not any(isinstance(e, (Tricks, Renege)) for e in game.entries):
        assert judged == len(results)
        final = [sum(change[0] for change in changes), sum(change[1] for change in changes)]
        assert final == egn.document["metadata"]["finalScore"]


def test_the_baseline_engine_sees_a_known_deal(tmp_path: Path) -> None:
    """A fixed check that the runner reads EGN's engine at all: the left
    bower example is a euchre, EW +2."""
    if NODE is None:
        pytest.skip(missing("node"))
    egn = log_to_egn((ROOT / "examples" / "left-bower.log").read_text("utf-8"))[0]
    assert baseline_changes(egn.document) == [[0, 2]]


# --- the command line -----------------------------------------------------------


def test_games_export_format_egn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = Store(tmp_path)
    text = (ROOT / "examples" / "full-game.log").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines()[1:] if line and not line.startswith("#")]
    game_id = store.new_game(lines)
    store.close()
    assert main(["games", "--state-dir", str(tmp_path), "--export", str(game_id),
                 "--format", "egn"]) == 0
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert_valid(document)
    assert document["metadata"]["gameId"] == f"game {game_id}"
    assert document["metadata"]["date"].endswith("Z")
    assert err == f"euchre-referee: EGN: {document['metadata']['description']}\n"
    assert main(["games", "--state-dir", str(tmp_path), "--export", "--format", "egn",
                 "--raw"]) == 2
    assert capsys.readouterr().err == ("euchre-referee: --raw exports the log as kept; "
                                       "EGN is made from the clean game (leave out --raw)\n")


def test_laptop_export_format_egn_over_a_pseudo_terminal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``euchre-referee export --port P --format egn``: the device's game, as EGN."""
    from support.serial_kit import Device

    state_dir = tmp_path / "state"
    store = Store(state_dir)
    game_id = store.new_game(["players N=Anna E=Bo S=Cy W=Dee", "game dealer=N NS=3 EW=5",
                              "upcard JH", "order E alone", "tricks 5"])
    store.close()
    device = Device(state_dir)
    try:
        assert main(["export", "--port", device.path, "--game", str(game_id),
                     "--format", "egn"]) == 0
    finally:
        device.close()
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert_valid(document)
    assert document["metadata"]["gameId"] == f"game {game_id}"
    assert document["metadata"]["players"] == ["Anna", "Bo", "Cy", "Dee"]
    assert (document["metadata"]["initialScore"], document["metadata"]["finalScore"]) == (
        [3, 5], [3, 9])
    assert document["deals"][0]["initialState"] == {"dealer": 0, "upCard": "Jh"}
    assert document["deals"][0]["phases"][0]["calls"] == ["Order"]
    assert err == "euchre-referee: EGN: the log does not hold the tricks a claim did not play\n"
    assert document["deals"][0]["phases"][1]["playAnnotations"] == {
        "0": ["the makers claimed: 5 tricks in all"]}


# --- import: EGN files as game logs ---------------------------------------------------

EGN_EXAMPLES = sorted((DATA / "examples").glob("*.egn"))
REFUSED = {"July 4th Pairs Finals.egn":
           "deals[9]: the game was won before it (game over: EW won 10-6)"}


def result_key(result: Any) -> tuple[object, ...]:
    return (result.team, result.points, result.maker, result.trump, result.alone,
            result.maker_tricks)


@pytest.mark.parametrize("path", EGN_EXAMPLES, ids=lambda p: p.name)
def test_egn_examples_import_and_replay_as_egn_scores_them(path: Path) -> None:
    """EGN's own example games (tests/data/egn/examples/, recorded games) read
    card by card by our engine; where node is installed, EGN's rules engine
    scores each deal as our engine does; exported again, they import alike."""
    document = json.loads(path.read_text(encoding="utf-8"))
    if path.name in REFUSED:
        with pytest.raises(ValueError) as refused:
            from_egn(document)
        assert str(refused.value) == REFUSED[path.name]
        return
    game = from_egn(document)
    text = write_log(game)
    assert replay(text).error is None
    assert game.results, "no hand imported"
    if NODE is not None:
        changes = baseline_changes(document)
        assert changes == [[r.points if r.team is Team.NS else 0,
                            r.points if r.team is Team.EW else 0] for r in game.results]
    again = to_egn(game)
    assert_valid(again.document)
    assert again.note == ""  # card-level games by rules EGN has words for: nothing left out
    assert [result_key(r) for r in from_egn(again.document).results] == \
        [result_key(r) for r in game.results]


@props(25)
@given(card_games(rules=st.builds(  # each setting EGN has a word for; standard first
    Rules, target=st.sampled_from([1, 3, 5, 10]),
    stick_the_dealer=st.sampled_from([True, False]),
    canadian_loner=st.sampled_from([False, True]),
    lone_lead=st.sampled_from(["dealer-left", "maker-left"]),
    defend_alone=st.sampled_from([False, True]))))
def test_card_level_games_round_trip_through_egn(played: Played) -> None:
    """Export, then import: the same hands, results and score, whenever every
    hand was played out card by card (a claim or a renege leaves cards EGN
    does not have: the import then says which deal did not finish, or that
    the deals do not replay to the final score)."""
    game = played.game
    egn = to_egn(replay(write_log(game)).game)
    if any(isinstance(e, (Tricks, Renege)) for e in game.entries):
        # the next deal finds it unfinished, or (the last hand) the final score differs
        with pytest.raises(ValueError, match=r"^(deals\[\d+\]: the deal before it did not "
                           r"finish|finalScore \[)"):
            from_egn(egn.document)
        return
    back = from_egn(egn.document)
    assert [result_key(r) for r in back.results] == \
        [result_key(r) for r in played.ends[0].results]
    assert (back.score, back.winner, back.rules) == (game.score, game.winner, game.rules)


def test_egn_command_prints_the_log_or_the_reason(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "examples" / "Six Points in Two Hands.egn"
    assert main(["egn", str(path)]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.startswith("euchre-log 1\n")
    result = replay(out)
    assert result.error is None and result.game.start_score[Team.NS] == 4
    refused = DATA / "examples" / "July 4th Pairs Finals.egn"
    assert main(["egn", str(refused)]) == 1
    assert capsys.readouterr() == (
        "", f"{refused}: {REFUSED['July 4th Pairs Finals.egn']}\n")
    joker = tmp_path / "joker.egn"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["metadata"]["ruleset"]["joker"] = True
    joker.write_text(json.dumps(document), encoding="utf-8")
    assert main(["egn", str(joker)]) == 1
    assert capsys.readouterr().err == (
        f"{joker}: ruleset joker: not a house rule the referee plays\n")
    assert main(["egn", str(tmp_path / "none.egn")]) == 2
    assert capsys.readouterr().err.endswith("none.egn: No such file or directory\n")
