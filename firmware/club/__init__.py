"""Club night: many tables in one room over MQTT (docs/club.md).

The wire (:mod:`.protocol`, topics and messages, once), the table's side
(:mod:`.box`: ``run``/``emulate --club URL --table N``), the director
(:mod:`.director`, :mod:`.movement`; :mod:`.serve` runs it with the live
page of :mod:`.web`), emulated boxes and nights (:mod:`.simulate`).
Importing this package is cheap: paho-mqtt, Starlette and uvicorn are
imported when a command runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, Final

from ..defaults import DEFAULT_EVENT

if TYPE_CHECKING:
    from ..config import Config


def _serve(args: argparse.Namespace) -> int:
    from .serve import serve

    return serve(args)


def _box(args: argparse.Namespace) -> int:
    from .simulate import run_box

    return run_box(args)


def _simulate(args: argparse.Namespace) -> int:
    from .simulate import simulate

    return simulate(args)


def _register_players(args: argparse.Namespace) -> int:
    from ..exits import EXIT_INVALID, EXIT_OK
    from .simulate import post_json

    status = EXIT_OK
    if args.pairs and len(args.names) % 2:
        print("euchre-referee: --pairs takes names two by two", file=sys.stderr)
        return EXIT_INVALID
    bodies: list[dict[str, str]] = (
        [{"name": a, "partner": b} for a, b in zip(args.names[::2], args.names[1::2])]
        if args.pairs else [{"name": name} for name in args.names])
    try:
        token = _token(args)
    except ValueError as error:
        print(f"euchre-referee: {error}", file=sys.stderr)
        return EXIT_INVALID
    for body in bodies:
        who = " & ".join(body.values())
        try:
            answer = post_json(args.director.rstrip("/") + "/players", body, token=token)
            print(f"registered {who}")
            if answer.get("warning"):
                print(f"euchre-referee: warning: {answer['warning']}", file=sys.stderr)
        except (ValueError, OSError) as error:
            print(f"euchre-referee: {who}: {error}", file=sys.stderr)
            status = EXIT_INVALID
    return status


def _round(args: argparse.Namespace) -> int:
    from ..exits import EXIT_INVALID, EXIT_OK
    from .protocol import DEFAULT_HANDS
    from .simulate import post_json

    body: dict[str, Any] = (
        {"target": args.target} if args.target else {"hands": args.hands}
        if args.hands is not None else {} if args.minutes is not None  # time alone
        else {"hands": DEFAULT_HANDS})
    if args.rules:
        body["rules"] = args.rules.split()
    body["movement"] = args.movement
    if args.minutes is not None:
        body["minutes"] = args.minutes
    if args.force:
        body["force"] = True
    if args.preview:
        body["preview"] = True
    try:
        assignment = post_json(args.director.rstrip("/") + "/rounds", body, token=_token(args))
    except (ValueError, OSError) as error:
        print(f"euchre-referee: {error}", file=sys.stderr)
        return EXIT_INVALID
    print(f"round {assignment['round']}" + (" would be (nothing started):" if args.preview
                                            else ":"))
    for table in assignment["tables"]:
        p = table["players"]
        print(f"  table {table['table']}: N {p['N']}, S {p['S']} v E {p['E']}, W {p['W']}")
    if assignment["byes"]:
        print(f"  bye: {', '.join(assignment['byes'])}")
    if assignment.get("ends") is not None:  # a timed round
        import time

        print(f"  time is called at {time.strftime('%H:%M:%S', time.localtime(assignment['ends']))}"
              f" ({assignment['format']['minutes']:g} minutes)")
    return EXIT_OK


def _final(args: argparse.Namespace) -> int:
    from ..exits import EXIT_INVALID, EXIT_OK
    from .simulate import post_json

    try:
        post_json(args.director.rstrip("/") + "/final", {"force": True} if args.force else {},
                  token=_token(args))
    except (ValueError, OSError) as error:
        print(f"euchre-referee: {error}", file=sys.stderr)
        return EXIT_INVALID
    print("the night is final: the page shows the final standings")
    return EXIT_OK


def _setup(args: argparse.Namespace) -> int:
    from .setup import setup

    return setup(args)


def _token(args: argparse.Namespace) -> str:
    """The organiser's token for ``register``, ``round`` and the like."""
    from .auth import find_token

    return find_token(args.token, args.state_dir)


def add_organiser_options(parser: argparse.ArgumentParser) -> None:
    """``--director URL --token TOKEN --state-dir DIR``: a command that changes
    the night (the organiser's token from --token, $EUCHRE_CLUB_TOKEN or the
    director's state directory)."""
    parser.add_argument("--director", required=True, metavar="URL",
                        help="the director's page, e.g. http://laptop:8080")
    parser.add_argument("--token", metavar="TOKEN",
                        help="the organiser's token (club serve prints it; or "
                        "$EUCHRE_CLUB_TOKEN)")
    parser.add_argument("--state-dir", metavar="DIR",
                        help="instead of --token: the director's state directory (on its "
                        "laptop), where the token is kept")


def _login_option(parser: argparse.ArgumentParser, who: str) -> None:
    parser.add_argument("--login", metavar="FILE",
                        help=f"{who}'s login on the broker: a TOML file with [club] username, "
                        "password (and cafile for mqtts://), as club setup writes it")


def read_login(path: str | None) -> Any:
    """The :class:`~.auth.BrokerLogin` in a ``--login`` file (None without one);
    ValueError naming the file."""
    if path is None:
        return None
    from pathlib import Path

    from ..config import ConfigError, load_config
    from .auth import BrokerLogin

    try:
        config = load_config(Path(path))
    except ConfigError as error:
        raise ValueError(str(error)) from None
    if not config.club_username or config.club_password is None:
        raise ValueError(f"--login {path}: [club] username and password are needed")
    return BrokerLogin(config.club_username, config.club_password, config.club_cafile)


def _export(args: argparse.Namespace) -> int:
    """Fetch the standings CSV and every table's log from a running director."""
    import json
    import urllib.request
    from pathlib import Path

    from ..exits import EXIT_INVALID, EXIT_OK

    base = args.director.rstrip("/")
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(base + "/standings.csv", timeout=30) as answer:
            (out / "standings.csv").write_bytes(answer.read())
        with urllib.request.urlopen(base + "/corrections.csv", timeout=30) as answer:
            (out / "corrections.csv").write_bytes(answer.read())
        for card_file in ("scorecards.csv", "scorecards.html"):  # the players' own cards
            with urllib.request.urlopen(f"{base}/{card_file}", timeout=30) as answer:
                (out / card_file).write_bytes(answer.read())
        with urllib.request.urlopen(base + "/logs", timeout=30) as answer:
            logs = json.loads(answer.read())
        for item in logs:
            with urllib.request.urlopen(base + item["url"], timeout=30) as answer:
                name = f"round-{item['round']:02d}-table-{item['table']:02d}.log"
                (out / name).write_bytes(answer.read())
    except (OSError, ValueError) as error:
        print(f"euchre-referee: {args.director}: {error}", file=sys.stderr)
        return EXIT_INVALID
    print(f"{out}/standings.csv, corrections.csv, scorecards.csv, scorecards.html and "
          f"{len(logs)} table logs")
    return EXIT_OK


def _season(args: argparse.Namespace) -> int:
    from .season import run

    return run(args.nights, args.out)


def _broker_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--broker", required=True, metavar="URL",
                        help="the MQTT broker, mqtt://HOST[:PORT] (default port 1883)")
    parser.add_argument("--event", default=DEFAULT_EVENT, metavar="ID",
                        help=f"the night's event id, the topics' root (default {DEFAULT_EVENT})")


def add_join_options(parser: argparse.ArgumentParser) -> None:
    """``--club URL --table N [--club-event ID]`` for ``run`` and ``emulate``."""
    parser.add_argument("--club", metavar="URL",
                        help="join a club night: its MQTT broker, mqtt://HOST[:PORT] "
                        "(or the config's [club] broker)")
    parser.add_argument("--table", type=int, metavar="N", help="with --club: this table's number")
    parser.add_argument("--club-event", metavar="ID",
                        help=f"with --club: the night's event id (default {DEFAULT_EVENT})")
    parser.add_argument("--take-over", action="store_true",
                        help="with --club: a spare box, taking this table over in the round "
                        "in play from the table's journal as the director has it (the box it "
                        "replaces is refused from then on)")


def join_config(config: Config, args: argparse.Namespace) -> Config:
    """The config with ``--club``, ``--table``, ``--club-event`` applied."""
    changes = {key: value for key, value in (
        ("club_broker", getattr(args, "club", None)), ("club_table", getattr(args, "table", None)),
        ("club_event", getattr(args, "club_event", None)),
        ("club_take_over", getattr(args, "take_over", None) or None)) if value is not None}
    return config._replace(**changes) if changes else config


COMMANDS: Final = ("club",)
"""The ``euchre-referee`` commands :func:`register` adds."""


def register(commands: Any) -> None:
    """Add ``club serve|register|round|export|simulate|box`` to ``euchre-referee``."""
    club = commands.add_parser(
        "club", help="club night: a director and many tables over MQTT",
        description="A club night: boxes at many tables report to a director over an MQTT "
        "broker (docs/club.md).")
    sub = club.add_subparsers(dest="club_command", metavar="COMMAND", required=True)
    serve = sub.add_parser("serve", help="run the director and its live standings page")
    _broker_options(serve)
    serve.add_argument("--state-dir", required=True, metavar="DIR",
                       help="where the director keeps the night (SQLite)")
    serve.add_argument("--http", default="0.0.0.0:8080", metavar="HOST:PORT",
                       help="where the page is served (default 0.0.0.0:8080; port 0: any "
                       "free port, said in its 'director of' line and written to --port-file)")
    serve.add_argument("--port-file", metavar="FILE",
                       help="write the page's port to FILE (one line) once it listens")
    serve.add_argument("--loner-bonus", type=int, default=0, metavar="N",
                       help="club bonus points for each loner made")
    serve.add_argument("--euchre-bonus", type=int, default=0, metavar="N",
                       help="club bonus points to each player of a side that euchres")
    serve.add_argument("--round-win-bonus", type=int, default=0, metavar="N",
                       help="club bonus points for each round won")
    serve.add_argument("--tie-breaks", metavar="ORDER",
                       help="how players are ranked, comma-separated from points, rounds_won, "
                       "loners, euchres, head_to_head (default: all five in that order); "
                       "players level on all of them share a rank (=3); kept for the night")
    from .protocol import TIED_ROUND_RULES

    serve.add_argument("--tied-round", choices=TIED_ROUND_RULES,
                       help="a round of N hands ending level: shared (both sides won it, the "
                       "default) or extra-hand (the box asks for one more hand, unscored, "
                       "that decides it); for rounds started from now; kept for the night")
    serve.add_argument("--bye-points", metavar="none|average|N",
                       help="what a bye is worth: none (default), average (the player's "
                       "points per round played) or N points; kept for the night")
    _login_option(serve, "the director")
    serve.set_defaults(run=_serve)
    players = sub.add_parser("register", help="register players with a running director")
    add_organiser_options(players)
    players.add_argument("--pairs", action="store_true",
                         help="the names two by two are fixed partners (movement 'pairs')")
    players.add_argument("names", nargs="+", metavar="NAME")
    players.set_defaults(run=_register_players)
    from .protocol import DEFAULT_HANDS

    round_parser = sub.add_parser("round", help="start the next round (seats everyone)")
    add_organiser_options(round_parser)
    round_parser.add_argument("--hands", type=int, metavar="N",
                              help=f"a round of N hands (default {DEFAULT_HANDS}; none with "
                              "--minutes alone: a round bounded by time only)")
    round_parser.add_argument("--target", type=int, metavar="N",
                              help="instead: a game to N points")
    round_parser.add_argument("--rules", metavar="SETTINGS",
                              help='house rules, e.g. "stick-the-dealer=off"')
    round_parser.add_argument("--movement",
                              choices=("progressive", "by-result", "north-stays", "pairs"),
                              default="progressive",
                              help="partners rotating, with byes (default); winners up, "
                              "losers down; North stays, the others move by a chart; or fixed "
                              "pairs (register --pairs) meeting each pair in turn")
    from .control import FORCED_RULE, TIME_RULE

    round_parser.add_argument("--minutes", type=float, metavar="N",
                              help=f"a timed round: when N minutes are up, {TIME_RULE}; "
                              "alone, the round is bounded by time only; with --hands or "
                              "--target, whichever comes first")
    round_parser.add_argument("--force", action="store_true",
                              help="start it even while tables still play the round before "
                              f"(refused, naming them, without it): their games end, "
                              f"{FORCED_RULE}")
    round_parser.add_argument("--preview", action="store_true",
                              help="only show the seating the round would have now (byes, "
                              "withdrawals and reseats applied), starting nothing: then "
                              "'club correct reseat' can swap two places before it starts")
    round_parser.set_defaults(run=_round)
    final = sub.add_parser("final", help="call the night final: the page says so and shows "
                           "the final standings; no round starts after it")
    add_organiser_options(final)
    final.add_argument("--force", action="store_true",
                       help="even while tables still play the last round (refused, naming "
                       f"them, without it): their games end, {FORCED_RULE}")
    final.set_defaults(run=_final)
    from .correct import add_parser as add_correct_parser

    add_correct_parser(sub, add_organiser_options)
    export = sub.add_parser("export", help="the standings CSV and every table's log, as files")
    export.add_argument("--director", required=True, metavar="URL")
    export.add_argument("--out", required=True, metavar="DIR")
    export.set_defaults(run=_export)
    season = sub.add_parser(
        "season", help="a season's standings and players' statistics, replayed from its nights",
        description="Open each night's director state directory (club serve --state-dir), "
        "replay every table's journal with the engine and its correction records, and write "
        "the season: season.csv, players.csv (statistics, best partner) and a page per player "
        "(players/index.html) into --out.")
    season.add_argument("--nights", nargs="+", required=True, metavar="DIR",
                        help="the nights' state directories, in order")
    season.add_argument("--out", required=True, metavar="DIR")
    season.set_defaults(run=_season)
    box = sub.add_parser("box", help="one headless emulated box (for rehearsals and tests)")
    _broker_options(box)
    box.add_argument("--table", type=int, required=True, metavar="N")
    box.add_argument("--state-dir", required=True, metavar="DIR")
    box.add_argument("--autoplay", action="store_true",
                     help="play random legal entries until each round is over")
    box.add_argument("--seed", type=int, default=1, metavar="N")
    box.add_argument("--pace", type=float, default=0.2, metavar="S",
                     help="seconds between autoplayed entries (default 0.2)")
    box.add_argument("--resend", type=float, default=5.0, metavar="S",
                     help="seconds without an ack before sending again (default 5)")
    box.add_argument("--take-over", action="store_true",
                     help="a spare box: take this table over in the round in play, going on "
                     "from the table's journal as the director has it (the box it replaces "
                     "is refused from then on)")
    box.add_argument("--trace", metavar="FILE",
                     help="append 'table round seq unix-time' for each round line journalled "
                     "(for bench/club_bench.py)")
    _login_option(box, "the box")
    box.set_defaults(run=_box)
    simulate = sub.add_parser("simulate", help="a whole emulated night: director and boxes")
    _broker_options(simulate)
    simulate.add_argument("--tables", type=int, default=4, metavar="N")
    simulate.add_argument("--rounds", type=int, default=2, metavar="R")
    simulate.add_argument("--hands", type=int, default=8, metavar="N",
                          help="hands a round (default 8)")
    simulate.add_argument("--pace", type=float, default=0.05, metavar="S",
                          help="seconds between a box's entries (default 0.05)")
    simulate.add_argument("--seed", type=int, default=1, metavar="N")
    simulate.add_argument("--timeout", type=float, default=600, metavar="S",
                          help="seconds a round may take (default 600)")
    simulate.add_argument("--workdir", metavar="DIR",
                          help="where the director and boxes keep their state (default: temp)")
    simulate.add_argument("--logins", metavar="DIR",
                          help="club setup's --out: the director and each box use their "
                          "logins (a broker run with its club.conf)")
    simulate.set_defaults(run=_simulate)
    from .setup import add_parser

    add_parser(sub)
