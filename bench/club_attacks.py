"""Attacks on a club night set up as ``club setup`` makes it; nothing may change.

    .venv/bin/python bench/club_attacks.py [--workdir DIR]

Everything is real: ``euchre-referee club setup`` writes the logins, the ACL
and club.conf; Debian's mosquitto runs with them on a free localhost port; the
director (``club serve --login``) and two boxes (``club box --login
--autoplay``) are processes; the room has a third table's login, unused,
which the attacker holds (a box of the room that is not table 1's).  Round 1
(2 hands) is played out, then a
snapshot is taken of everything an attack could change (``/standings.json``,
each table's state on ``/board.json``, every table's log, each box's
``club.json``, the director's connection), the attacks are made, and the
snapshot is taken again: it must be the same.  Then round 2 is played: the
boxes are not muted and the standings still equal the boxes' journals.

Each attack says what stopped it (the broker refused the login, the ACL
dropped the message, the director refused it in words, the box refused it,
the HTTP route answered 401/403/415).  Prints the count tried and whether
anything changed; exit status 0 only when nothing did.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from support.broker import Mosquitto, on_a_free_port  # noqa: E402
from support.http_kit import post  # noqa: E402
from support.mqtt_peer import Peer  # noqa: E402

from firmware.club import read_login  # noqa: E402
from firmware.club.auth import BrokerLogin  # noqa: E402
from firmware.club.protocol import (  # noqa: E402
    Ack,
    EntryMessage,
    Status,
    ack_topic,
    entries_topic,
    status_topic,
)
from firmware.club.simulate import Night  # noqa: E402

EVENT = "club"
NAMES = ("Anna", "Bo", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal")


@dataclass
class Attack:
    name: str
    stopped_by: str = ""


class Attacker:
    """The night and the attacks on it."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir

        def start(port: int) -> tuple[Mosquitto, Path]:  # set up again if the port is taken
            setup = workdir / f"setup-{port}"
            subprocess.run([sys.executable, "-m", "firmware", "club", "setup", "--tables", "3",
                            "--out", str(setup), "--host", "127.0.0.1", "--port", str(port),
                            "--bind", "127.0.0.1", "--event", EVENT, "--quiet"],
                           check=True, capture_output=True)
            return Mosquitto(workdir / "broker", port=port, include=setup / "mosquitto"), setup

        self.broker, setup = on_a_free_port(start)
        self.port = self.broker.port
        self.logins = {name: read_login(str(setup / "boxes" / f"{name}.toml"))
                       for name in ("table-1", "table-2", "table-3")}
        self.logins["director"] = read_login(str(setup / "director.toml"))
        self.night = Night(f"mqtt://127.0.0.1:{self.port}", workdir / "night", tables=2,
                           event=EVENT, pace=0.05, resend_s=1.0, logins=setup)
        self.attacks: list[Attack] = []

    def start(self) -> None:
        self.night.start()
        for name in NAMES:
            self.night.post("/players", {"name": name})

    def play_round(self, number: int) -> None:
        self.night.start_round(hands=2)
        self.night.wait(lambda: self.night.round_done(number), 300, f"round {number}")
        self.night.wait(lambda: all(t["online"] for t in self.night.board()["tables"]), 60,
                        "both boxes online")
        self.night.wait(lambda: all(self.acked(t["table"], number) == t["entries"] - 1
                                    for t in self.night.board()["tables"]), 60,
                        "every line acknowledged on the boxes")

    def acked(self, table: int, number: int) -> int:
        """The box's watermark for its game of round ``number``."""
        state = self.box(table)
        game = next((g for g, r in state["rounds"].items() if r == number), None)
        return int(state["acked"].get(game, -1)) if game is not None else -1

    def box(self, table: int) -> dict[str, Any]:
        state: dict[str, Any] = json.loads(
            (self.night.box_dir(table) / "club.json").read_text())
        return state

    def snapshot(self) -> dict[str, Any]:
        board = self.night.board()
        return {
            "standings": self.night._get("/standings.json"),
            "tables": [{k: t[k] for k in ("table", "hand", "score", "online", "state",
                                           "entries", "done")} for t in board["tables"]],
            "players": [p["name"] for p in board["players"]],
            "logs": {f"{r}/{t}": get_text(self.night.url + f"/logs/{r}/{t}")
                     for r, t in ((1, 1), (1, 2))},
            "boxes": {table: self.box(table) for table in (1, 2)},
            "director disconnects": (self.night.workdir / "director.log").read_text()
            .count("disconnected from"),
        }

    def tried(self, name: str, stopped_by: str) -> None:
        self.attacks.append(Attack(name, stopped_by))
        print(f"  {name}: {stopped_by}", flush=True)

    # --- the attacks -------------------------------------------------------------

    def director_refuses(self, peer: Peer, topic: str, payload: bytes, *, table: int,
                         retain: bool = False) -> str:
        """Publish as ``peer`` and return what the director said of it ("":
        nothing, it never saw it or took it silently).  A barrier: ``peer``
        then publishes a marker on its own table's entries (one client's
        messages reach the director in order), a message of a version nobody
        speaks, and the director's refusal of it says it has handled
        everything before it."""
        before = self.night.board()["refused"]
        peer.publish(topic, payload, retain=retain)
        version = time.monotonic_ns()
        peer.publish(entries_topic(EVENT, table), b'{"v": %d}' % version)
        words = f"version {version}"
        self.night.wait(lambda: any(words in p for p in self.night.board()["problems"]),
                        60, "the director's refusal of the marker")
        board = self.night.board()
        index = next(i for i, p in enumerate(board["problems"]) if words in p)
        if board["refused"] - before < 2:
            return ""
        said: str = board["problems"][index + 1]
        return said if topic in said else ""

    def oversized(self, payload: bytes) -> None:
        """Publish ``payload`` on table 1's entries with table 1's login, on a
        connection of its own, and return once the broker has closed it (its
        on_disconnect).  The client does not reconnect: paho would send the
        unacknowledged message again at every reconnect and be closed again."""
        peer = Peer(self.port, self.logins["table-1"], reconnect=False)
        try:
            assert peer.result == "connected", peer.result
            peer.client.publish(entries_topic(EVENT, 1), payload, qos=1)
            if not peer.dropped.wait(120):
                raise TimeoutError(f"the broker kept the connection after a "
                                   f"{len(payload):,}-byte entry (logs in {self.workdir})")
        finally:
            peer.close()

    def run(self) -> None:
        box1 = self.box(1)
        game1 = next(int(g) for g, r in box1["rounds"].items() if r == 1)
        lines1 = get_text(self.night.url + "/logs/1/1").splitlines()[1:]
        entries1 = self.night.board()["tables"][0]["entries"]
        port = self.port

        anonymous = Peer(port, client_id="anonymous")
        assert anonymous.result != "connected"
        self.tried("anonymous publish", f"the broker refused the connection ({anonymous.result})")
        anonymous.close()
        anonymous = Peer(port, subscribe="#")
        assert anonymous.result != "connected"
        self.tried("anonymous subscribe to #", f"the broker refused ({anonymous.result})")
        anonymous.close()
        wrong = Peer(port, BrokerLogin("table-1", "guessed"))
        assert wrong.result != "connected"
        self.tried("table-1 with a guessed password", f"the broker refused ({wrong.result})")
        wrong.close()

        # the room's table 3 login (a box, not table 1's)
        other = Peer(port, self.logins["table-3"])
        assert other.result == "connected", other.result
        for name, payload in (
                ("a forged trick", EntryMessage(1, box1["box"], 1, game1, len(lines1),
                                                "trick N").encode()),
                ("a forged status 'offline'", Status(1, box1["box"], online=False).encode())):
            topic = entries_topic(EVENT, 1) if "trick" in name else status_topic(EVENT, 1)
            said = self.director_refuses(other, topic, payload, table=3)
            assert not said and self.night.board()["tables"][0]["entries"] == entries1, said
            self.tried(f"table 3's login publishes {name} as table 1",
                       "the ACL dropped it: the director never saw it")
        genuine = b""
        for name, payload in (
                ("a forged ack muting box 1", Ack(box1["box"], {game1: 10_000}).encode()),
                ("a replayed (old) ack for box 1", Ack(box1["box"], {game1: 0}).encode())):
            other.publish(ack_topic(EVENT, box1["box"]), payload, retain=True)
            other.client.subscribe(ack_topic(EVENT, box1["box"]), qos=1)
            _, kept = other.messages.get(timeout=60)  # the broker's retained ack
            other.client.unsubscribe(ack_topic(EVENT, box1["box"]))
            genuine = genuine or kept
            assert kept != payload and kept == genuine, kept
            self.tried(f"{name}, retained, from table 3's login",
                       "the ACL dropped it: the broker still holds the director's ack")
        other.close()

        # table 1's own login, in the attacker's hands (box 1 switched off meanwhile:
        # one login is one client id, so the two would knock each other off)
        self.night.boxes[1].terminate()
        self.night.boxes[1].wait(30)
        own = Peer(port, self.logins["table-1"])
        assert own.result == "connected", own.result
        for name, payload, words in (
            ("a forged trick under another box id",
             EntryMessage(1, "f00dfeed", 1, game1, len(lines1), "trick N").encode(),
             "claims it too"),
            ("an entry saying table 2 on table 1's topic",
             EntryMessage(2, box1["box"], 1, game1, len(lines1), "trick E").encode(),
             "says table 2"),
            ("a malformed payload", b"\xff not json {", "not JSON"),
            ("a payload of another version", b'{"v":99}', "version 99"),
            ("a deeply nested payload", b"[" * 20_000 + b"]" * 20_000, "nested deeper"),
            ("an empty retained status", b"", "empty status"),
            ("a status 'offline' from another box id",
             Status(1, "f00dfeed", online=False).encode(), "says table 1 is offline"),
        ):
            topic = status_topic(EVENT, 1) if "status" in name else entries_topic(EVENT, 1)
            said = self.director_refuses(own, topic, payload, table=1,
                                         retain="status" in name)
            assert words in said, (name, said)
            self.tried(f"table 1's own login: {name}", f"the director refused it: {said[9:]}")
        for name, seq, line in (("a replayed line 0 with other text", 0, "game dealer=E"),
                                ("a replayed line 0 as it was", 0, lines1[0])):
            said = self.director_refuses(own, entries_topic(EVENT, 1), EntryMessage(
                1, box1["box"], 1, game1, seq, line).encode(), table=1)
            assert not said and self.night.board()["tables"][0]["entries"] == entries1
            self.tried(f"table 1's own login: {name}",
                       "dropped: the director keeps the first (box, game, seq)")
        own.close()
        big = EntryMessage(1, box1["box"], 1, game1, len(lines1), "x" * 70_000).encode()
        self.oversized(big)
        self.tried(f"an oversized entry ({len(big):,} bytes)",
                   "the broker's max_packet_size: it closed the connection, nothing delivered")
        peak = peak_mb(self.night.director)
        huge = b'{"v":1,"line":"' + b"x" * 50_000_000 + b'"}'
        self.oversized(huge)
        after = peak_mb(self.night.director)
        assert after - peak < 10, (peak, after)
        self.tried(f"a {len(huge) / 1e6:.0f} MB entry",
                   f"the broker closed the connection; the director's peak memory "
                   f"{peak:.1f} MB before, {after:.1f} MB after")
        self.night.start_box(1)

        knocks = (self.night.workdir / "director.log").read_text().count("disconnected from")
        knocker = Peer(port, self.logins["table-3"], client_id=f"director-{EVENT}")
        nameless = Peer(port, client_id=f"director-{EVENT}")
        nameless.close()
        # the director has taken a message from the knocker: a kick would be seen by now
        assert self.director_refuses(knocker, entries_topic(EVENT, 3), b"{}", table=3)
        assert (self.night.workdir / "director.log").read_text().count(
            "disconnected from") == knocks
        self.tried(f"client id director-{EVENT} on table 3's login",
                   f"{knocker.result} as table-3 (use_username_as_clientid): the director "
                   "stayed on")
        self.tried(f"client id director-{EVENT} without a login",
                   f"the broker refused ({nameless.result})")
        knocker.close()

        url = self.night.url
        token = self.night.token
        json_type = {"Content-Type": "application/json"}
        cases = [
            ("POST /players without the token", "/players", b'{"name": "Mallory"}', json_type),
            ("POST /players with HTML in the name, no token", "/players",
             b'{"name": "<script>alert(1)</script>"}', json_type),
            ("POST /players with a wrong token", "/players", b'{"name": "Mallory"}',
             {**json_type, "Authorization": "Bearer " + "x" * len(token)}),
            ("POST /rounds without the token", "/rounds", b'{"hands": 1}', json_type),
            ("POST /rounds with a wrong token", "/rounds", b'{"hands": 1}',
             {**json_type, "Authorization": "Bearer " + token[:-1] + "x"}),
            ("CSRF: a text/plain POST /players from another site", "/players",
             b'{"name": "Mallory"}', {"Content-Type": "text/plain",
                                      "Origin": "http://evil.example"}),
            ("CSRF: text/plain with the token", "/players", b'{"name": "Mallory"}',
             {"Content-Type": "text/plain", "Authorization": f"Bearer {token}"}),
            ("CSRF: JSON from another origin with the token", "/rounds", b'{"hands": 1}',
             {**json_type, "Origin": "http://evil.example",
              "Authorization": f"Bearer {token}"}),
        ]
        for name, path, body, headers in cases:
            status, answer = post(url + path, body, headers)
            assert status in (401, 403, 415), (name, status, answer)
            self.tried(name, f"{status} {json.loads(answer)['error']}")


def peak_mb(process: Any) -> float:
    """A process's peak resident memory (VmHWM), in MB."""
    with open(f"/proc/{process.pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise ValueError(f"no VmHWM for process {process.pid}")


def get_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return str(answer.read().decode())


def run(workdir: Path) -> int:
    attacker = Attacker(workdir)
    try:
        attacker.start()
        attacker.play_round(1)
        before = attacker.snapshot()
        print("attacks:", flush=True)
        attacker.run()
        # what the director has seen of the attacks has reached it: a fresh look
        attacker.night.wait(lambda: attacker.night.board()["tables"][0]["online"], 60,
                            "table 1 online")
        after = attacker.snapshot()
        changed = [key for key in before if before[key] != after[key]]
        attacker.play_round(2)
        journals = attacker.night.board()["players"]
    finally:
        attacker.night.stop()
        attacker.broker.stop()
    print(f"{len(attacker.attacks)} attacks tried; "
          + ("nothing changed" if not changed else f"CHANGED: {', '.join(changed)}"))
    for key in changed:
        print(f"  {key}: before {before[key]!r}\n  {key}: after  {after[key]!r}")
    print(f"round 2 then played out: {sum(p['points'] for p in journals)} points in all")
    return 0 if not changed else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", help="where the night is kept (default: a temporary "
                        "directory)")
    args = parser.parse_args()
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="attacks-"))
    workdir.mkdir(parents=True, exist_ok=True)
    return run(workdir)


if __name__ == "__main__":
    sys.exit(main())
