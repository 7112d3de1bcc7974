"""``euchre-referee --help`` names every command it has (issue 20: the
description spoke of "the device app and its laptop tools", and not of club
nights)."""

from __future__ import annotations

import re

from firmware import cli


def test_the_description_names_every_command() -> None:
    parser = cli.build_parser()
    described = set(re.findall(r"[a-z]+", parser.description or ""))
    commands = {*cli.COMMANDS, *(name for wing in cli.WINGS for name in wing.COMMANDS)}
    assert commands <= described, sorted(commands - described)
