"""``euchre-referee club correct KIND ...``: the organiser's corrections from a
terminal, sent to a running director (``POST /corrections``), and ``club
correct list``, the audit list (``GET /corrections.json``).

Each subcommand is one kind of :mod:`.corrections`; the director judges it
and answers with the correction kept (printed in one line) or the one-line
reason it was refused (exit 1, nothing kept).
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
import urllib.request
from collections.abc import Callable
from typing import Any

from ..exits import EXIT_INVALID, EXIT_OK

_WHAT = {
    "result": "set a table's score for a round played (its winner follows; level: shared)",
    "penalty": "take points off a player's total",
    "withdraw": "a player withdraws: not seated from the next round (their rounds count)",
    "add": "add a player (or bring a withdrawn one back), seated from the next round",
    "bye": "give a player a bye in the next round (compensated by the night's bye rule)",
    "reseat": "swap two players' places (or a place and a bye) in the next round's seating",
}


def _who() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return ""


def add_parser(sub: Any, organiser_options: Callable[[argparse.ArgumentParser], None]
               ) -> None:
    """``club correct`` and its subcommands, one per kind, and ``list``."""
    correct = sub.add_parser(
        "correct", help="corrections and penalties: a result, points off, withdraw, add, "
        "bye, reseat; list them",
        description="Every correction is a record kept by the director with who made it, "
        "when and why; the standings are replayed from the tables' journals and these "
        "records (docs/club.md).")
    kinds = correct.add_subparsers(dest="kind", metavar="KIND", required=True)
    for kind, what in _WHAT.items():
        parser = kinds.add_parser(kind, help=what, description=what[0].upper() + what[1:] + ".")
        organiser_options(parser)
        parser.add_argument("--reason", metavar="TEXT",
                            help="why (needed: it is shown in the audit list and the export)")
        parser.add_argument("--by", metavar="NAME", default=_who(),
                            help="who makes it: the organiser's name or id (default: your "
                            "login name)")
        if kind == "result":
            parser.add_argument("--round", type=int, required=True, metavar="R",
                                help="the round (one started)")
            parser.add_argument("--table", type=int, required=True, metavar="T",
                                help="the table in that round")
            parser.add_argument("--ns", type=int, required=True, metavar="POINTS",
                                help="North-South's points for the round")
            parser.add_argument("--ew", type=int, required=True, metavar="POINTS",
                                help="East-West's points for the round")
        else:
            parser.add_argument("player", metavar="PLAYER",
                                help="the player's name (as registered; case does not matter)")
        if kind == "reseat":
            parser.add_argument("other", metavar="OTHER",
                                help="the player to swap places with")
        if kind == "penalty":
            parser.add_argument("--points", type=int, required=True, metavar="N",
                                help="the points taken off (1 to 999)")
            parser.add_argument("--round", type=int, metavar="R",
                                help="the round it is for (optional; shown in the list)")
        parser.set_defaults(run=_send)
    listing = kinds.add_parser("list", help="the corrections made, with who, when and why")
    listing.add_argument("--director", required=True, metavar="URL",
                         help="the director's page, e.g. http://laptop:8080")
    listing.add_argument("--json", action="store_true", help="the list as JSON")
    listing.set_defaults(run=_list)


def request_of(args: argparse.Namespace) -> dict[str, Any]:
    """The ``POST /corrections`` body for the command line ``args``."""
    body: dict[str, Any] = {"kind": args.kind, "by": args.by or "", "reason": args.reason or ""}
    for key in ("round", "table", "ns", "ew", "player", "other", "points"):
        value = getattr(args, key, None)
        if value is not None:
            body[key] = value
    return body


def _send(args: argparse.Namespace) -> int:
    from . import _token
    from .simulate import post_json

    try:
        answer = post_json(args.director.rstrip("/") + "/corrections", request_of(args),
                           token=_token(args))
    except (ValueError, OSError) as error:
        print(f"euchre-referee: {error}", file=sys.stderr)  # it names the kind
        return EXIT_INVALID
    print(f"correction {answer['id']} kept: {answer['what']} "
          f"(by {answer['who']}: {answer['reason']})")
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    try:
        with urllib.request.urlopen(args.director.rstrip("/") + "/corrections.json",
                                    timeout=30) as answer:
            corrections = json.loads(answer.read())
    except (OSError, ValueError) as error:
        print(f"euchre-referee: {args.director}: {error}", file=sys.stderr)
        return EXIT_INVALID
    if args.json:
        print(json.dumps(corrections, ensure_ascii=False))
        return EXIT_OK
    if not corrections:
        print("no corrections")
    for c in corrections:
        print(f"{c['id']:3d}  {c['when']}  {c['who']}: {c['what']} ({c['reason']})")
    return EXIT_OK
