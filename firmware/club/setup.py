"""``euchre-referee club setup``: what mosquitto needs so that only the room's
boxes and its director can speak, and each box's login.

Written into ``--out DIR``:

- ``mosquitto/passwd``: one login a line, ``user:$7$101$SALT$HASH``, exactly
  as ``mosquitto_passwd`` writes it (PBKDF2-HMAC-SHA512, 101 iterations, a
  12-byte salt, base64): a login per table (``table-N``) and the director's
  (``director``);
- ``mosquitto/acl``: anonymous clients may do nothing; ``table-N`` may publish
  only table N's entries, status and takeover, and read the assignments, the
  round clock, the acks and table N's handover; ``director`` may publish the
  assignments, the clock, the handovers and the acks and read everything of
  the night; a spare's login (``--spares N``: ``spare-1``...) may do what a
  table's may, at any table;
- ``mosquitto/club.conf``: a listener (and a TLS one with ``--tls-cert``),
  ``allow_anonymous false``, the two files above, the client id taken from
  the username (``use_username_as_clientid``: nobody can connect as the
  director without its password, so nobody can knock it off), and
  ``max_packet_size`` (a message larger than the protocol's bound never
  reaches a box or the director);
- ``boxes/table-N.toml`` (and ``spare-N.toml``): the ``[club]`` lines of
  table N's box (printed too);
- ``director.toml``: the director's login (``club serve --login``).

The files that hold passwords are readable by their owner only.  Run again
with more tables, the logins already made are kept (the boxes' configs stay
right); ``--new-passwords`` makes them all anew.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..exits import EXIT_OK, EXIT_USAGE
from .protocol import DEFAULT_PORT, DEFAULT_TLS_PORT, MAX_PAYLOAD, ROOT, check_event_id

ITERATIONS: Final = 101
"""mosquitto_passwd's PBKDF2 iterations (mosquitto 2's default)."""
SALT_BYTES: Final = 12
DIRECTOR: Final = "director"
MAX_PACKET: Final = MAX_PAYLOAD + 1024
"""The broker's bound on a whole MQTT packet: the payload, the topic and headers."""


def table_user(table: int) -> str:
    return f"table-{table}"


def hash_password(password: str, salt: bytes | None = None) -> str:
    """A password as mosquitto 2's password file keeps it (``$7$``)."""
    salt = salt if salt is not None else secrets.token_bytes(SALT_BYTES)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode("utf-8"), salt, ITERATIONS)
    return (f"$7${ITERATIONS}${base64.b64encode(salt).decode('ascii')}$"
            f"{base64.b64encode(digest).decode('ascii')}")


def spare_user(spare: int) -> str:
    return f"spare-{spare}"


def _box_rules(root: str, table: str) -> list[str]:
    """What a box's login may do at ``table`` (a number, or ``+``: a spare's, any)."""
    return [f"topic write {root}/table/{table}/entries",
            f"topic write {root}/table/{table}/status",
            f"topic write {root}/table/{table}/takeover",
            f"topic read {root}/table/{table}/handover",
            f"topic read {root}/round/+/assignment",
            f"topic read {root}/round/+/clock",
            f"topic read {root}/box/+/ack"]


def acl(event: str, tables: int, spares: int = 0) -> str:
    """The ACL file (mosquitto's ``acl_file`` format): the director publishes
    what it sends the boxes and reads everything of the night; each table's
    login publishes only that table's topics and reads what the director
    sends; a spare's login may stand in at any table (the director then
    decides, by the takeover, which box's lines count)."""
    root = f"{ROOT}/{event}"
    lines = ["# club setup: who may publish and read what on the night " + repr(event),
             "# (no lines before the first 'user': anonymous clients may do nothing)", "",
             f"user {DIRECTOR}", f"topic read {root}/#",
             f"topic write {root}/round/+/assignment", f"topic write {root}/round/+/clock",
             f"topic write {root}/table/+/handover", f"topic write {root}/box/+/ack", ""]
    for table in range(1, tables + 1):
        lines += [f"user {table_user(table)}", *_box_rules(root, str(table)), ""]
    for spare in range(1, spares + 1):
        lines += [f"user {spare_user(spare)}", *_box_rules(root, "+"), ""]
    return "\n".join(lines)


@dataclass(frozen=True)
class Tls:
    """The broker's TLS listener: its certificate and key (PEM files)."""

    cert: Path
    key: Path
    port: int = DEFAULT_TLS_PORT


def mosquitto_conf(directory: Path, *, port: int | None, bind: str | None,
                   tls: Tls | None) -> str:
    """``club.conf`` for mosquitto 2 (``/etc/mosquitto/conf.d/`` or ``-c``)."""
    lines = ["# club setup: the club night's broker (docs/club.md)",
             "per_listener_settings false",
             "allow_anonymous false",
             f"password_file {directory / 'passwd'}",
             f"acl_file {directory / 'acl'}",
             f"max_packet_size {MAX_PACKET}"]
    # a listener's own settings follow its listener line
    if port is not None:
        lines += ["", f"listener {port}{' ' + bind if bind else ''}",
                  "use_username_as_clientid true"]
    if tls is not None:
        lines += ["", f"listener {tls.port}{' ' + bind if bind else ''}",
                  "use_username_as_clientid true",
                  f"certfile {tls.cert.resolve()}", f"keyfile {tls.key.resolve()}"]
    return "\n".join(lines) + "\n"


def _write(path: Path, text: str, *, secret: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                         0o600 if secret else 0o644)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def _kept_password(path: Path) -> str | None:
    """The password in a login file written before (None: none there)."""
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    password = data.get("club", {}).get("password")
    return password if isinstance(password, str) and password else None


def _toml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def login_toml(broker: str, event: str, username: str, password: str,
               cafile: str | None, table: int | None = None) -> str:
    lines = ["[club]", f"broker = {_toml_str(broker)}"]
    if table is not None:
        lines.append(f"table = {table}")
    lines += [f"event = {_toml_str(event)}", f"username = {_toml_str(username)}",
              f"password = {_toml_str(password)}"]
    if cafile is not None:
        lines.append(f"cafile = {_toml_str(cafile)}")
    return "\n".join(lines) + "\n"


def setup(args: argparse.Namespace) -> int:
    """``euchre-referee club setup``."""
    try:
        event = check_event_id(args.event)
        if args.tables < 1 or args.tables > 999:
            raise ValueError(f"--tables {args.tables}: 1 to 999")
        if args.spares < 0 or args.spares > 99:
            raise ValueError(f"--spares {args.spares}: 0 to 99")
        if (args.tls_cert is None) != (args.tls_key is None):
            raise ValueError("--tls-cert and --tls-key go together")
    except ValueError as error:
        print(f"euchre-referee: {error}", file=sys.stderr)
        return EXIT_USAGE
    out = Path(args.out)
    broker_dir = (out / "mosquitto").resolve()
    tls = (Tls(Path(args.tls_cert), Path(args.tls_key), args.tls_port)
           if args.tls_cert else None)
    if tls is not None:
        broker_url = f"mqtts://{args.host}:{tls.port}"
    else:
        broker_url = f"mqtt://{args.host}:{args.port}"
    cafile = args.cafile
    logins: dict[str, str] = {}
    director_file = out / "director.toml"
    kept = None if args.new_passwords else _kept_password(director_file)
    logins[DIRECTOR] = kept or secrets.token_urlsafe(18)
    boxes = [(table_user(t), t) for t in range(1, args.tables + 1)] + [
        (spare_user(s), None) for s in range(1, args.spares + 1)]
    for user, _ in boxes:
        kept = None if args.new_passwords else _kept_password(out / "boxes" / f"{user}.toml")
        logins[user] = kept or secrets.token_urlsafe(18)
    _write(broker_dir / "passwd", "".join(f"{user}:{hash_password(password)}\n"
                                          for user, password in logins.items()), secret=True)
    _write(broker_dir / "acl", acl(event, args.tables, args.spares))
    _write(broker_dir / "club.conf", mosquitto_conf(
        Path(args.broker_dir).resolve() if args.broker_dir else broker_dir,
        port=None if args.tls_only else args.port, bind=args.bind, tls=tls))
    _write(director_file, login_toml(broker_url, event, DIRECTOR, logins[DIRECTOR], cafile),
           secret=True)
    print(f"{broker_dir}/club.conf, passwd, acl: the broker's (club.conf reads the other two "
          f"from {Path(args.broker_dir).resolve() if args.broker_dir else broker_dir}; "
          "docs/club.md says where they go)")
    print(f"{director_file}: the director's login (club serve --login {director_file})")
    print("each box's [club] lines (also in boxes/table-N.toml; paste them into the "
          "box's referee.toml once):")
    for user, table in boxes:
        text = login_toml(broker_url, event, user, logins[user], cafile, table)
        _write(out / "boxes" / f"{user}.toml", text, secret=True)
        if not args.quiet:
            print(f"\n# {user}\n{text}", end="")
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``club setup`` and its options."""
    parser = sub.add_parser(
        "setup", help="the broker's logins, ACL and config, and each box's login",
        description="Write what mosquitto needs for the night (a password file, an ACL, "
        "club.conf) and each box's [club] login (docs/club.md).")
    parser.add_argument("--tables", type=int, required=True, metavar="N",
                        help="tables in the room (a login for each: table-1 ... table-N)")
    parser.add_argument("--spares", type=int, default=0, metavar="N",
                        help="logins for N spare boxes (spare-1 ...), which may stand in at "
                        "any table (default 0)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="where the files go (kept: run again to add tables)")
    parser.add_argument("--event", default="club", metavar="ID",
                        help="the night's event id, the topics' root (default club)")
    parser.add_argument("--host", default="club-laptop.local", metavar="HOST",
                        help="the broker's name as the boxes reach it (default "
                        "club-laptop.local)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, metavar="PORT",
                        help=f"the plain listener's port (default {DEFAULT_PORT})")
    parser.add_argument("--bind", metavar="ADDRESS",
                        help="listen on this address only (default: every address)")
    parser.add_argument("--tls-cert", metavar="FILE", help="the broker's certificate (PEM): "
                        "a TLS listener; the boxes then connect with mqtts://")
    parser.add_argument("--tls-key", metavar="FILE", help="the certificate's private key")
    parser.add_argument("--tls-port", type=int, default=DEFAULT_TLS_PORT, metavar="PORT",
                        help=f"the TLS listener's port (default {DEFAULT_TLS_PORT})")
    parser.add_argument("--tls-only", action="store_true",
                        help="with --tls-cert: no plain listener at all")
    parser.add_argument("--cafile", metavar="FILE",
                        help="where each box and the director find the CA certificate "
                        "that signed the broker's (written into their logins)")
    parser.add_argument("--broker-dir", metavar="DIR",
                        help="where mosquitto will read passwd and acl from, as club.conf "
                        "names them, e.g. /etc/mosquitto (default: --out's mosquitto/)")
    parser.add_argument("--new-passwords", action="store_true",
                        help="make every login anew (the boxes' configs must be updated)")
    parser.add_argument("--quiet", action="store_true",
                        help="do not print each box's lines (the files have them)")
    parser.set_defaults(run=setup)
