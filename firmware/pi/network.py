"""The network of a club box under systemd (issue 24): the unit's drop-in.

``systemd/euchre-referee.service`` keeps a box off every network
(``PrivateNetwork=yes``, ``RestrictAddressFamilies=AF_UNIX``): a table on its
own needs none.  A box configured for a club night (``[club] broker`` in its
config) needs one route, to the club's broker; ``scripts/install-pi.sh``
writes :func:`club_dropin`'s text as
``/etc/systemd/system/euchre-referee.service.d/club.conf`` when the config
names a broker, and removes it when it does not.  Run it again after
changing ``[club]``.

The drop-in changes only the network; every other setting of the sandbox
stays (systemd merges a drop-in's keys over the unit's):

- ``PrivateNetwork=no``: a private network namespace has only its own
  loopback, no route to the room's Wi-Fi.
- ``RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6``: paho's sockets (its
  wake-up pair too is a TCP socket on 127.0.0.1); still no netlink, packet or
  other families.
- ``IPAddressDeny=any`` with ``IPAddressAllow=``: systemd's per-unit IP
  firewall (cgroup BPF) lets through only the loopback and the broker's
  address when the URL names one, else the private and link-local ranges a
  club's room network uses (where its broker and a DNS server or mDNS for its
  name are): never the internet.  systemd supports hostnames nowhere here,
  which is why a named broker gets the ranges.  On a kernel without cgroup BPF
  systemd says so in its log and leaves the list out; the rest still holds.

``python -m firmware.pi.network CONFIG`` prints the drop-in for CONFIG (or
nothing: no club), as install-pi.sh runs it.
"""

from __future__ import annotations

import ipaddress
import sys
from pathlib import Path
from typing import Final

DROPIN: Final = "club.conf"
"""The drop-in's name in ``euchre-referee.service.d/``."""

ROOM_RANGES: Final = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
"""The private ranges of a room's network, for a broker given by name (with
systemd's ``localhost`` and ``link-local``: 169.254/16, fe80::/10)."""


def club_dropin(broker: str | None) -> str | None:
    """The drop-in letting the unit reach ``broker`` (an ``mqtt://`` or
    ``mqtts://`` URL), or None without one.  Raises ValueError for a URL
    the box would refuse (the same check as ``run``'s)."""
    if broker is None:
        return None
    from ..club.protocol import parse_broker_url

    host = parse_broker_url(broker).host
    try:
        allowed = [str(ipaddress.ip_address(host.strip("[]")))]
    except ValueError:  # a name: the room's ranges, where it and its DNS are
        allowed = ["link-local", *ROOM_RANGES]
    return (
        "# Written by scripts/install-pi.sh from [club] broker in the config\n"
        "# (firmware/pi/network.py; docs/club.md): the network, only to reach\n"
        f"# {broker}.  Everything else of the unit's sandbox stays.\n"
        "[Service]\n"
        "PrivateNetwork=no\n"
        "RestrictAddressFamilies=\n"  # (the unit's list reset, then this one)
        "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n"
        "IPAddressDeny=any\n"
        f"IPAddressAllow=localhost {' '.join(allowed)}\n"
    )


def broker_of(config: Path) -> str | None:
    """``[club] broker`` of the config file ``config`` (None: none).  Only
    that key is read (with the standard library: install-pi.sh runs this
    before or without the venv); ``run`` checks the whole file."""
    import tomllib

    data = tomllib.loads(config.read_text(encoding="utf-8"))
    club = data.get("club", {})
    broker = club.get("broker") if isinstance(club, dict) else None
    if broker is not None and not isinstance(broker, str):
        raise ValueError(f"club.broker: expected a string like \"mqtt://HOST\", not {broker!r}")
    return broker


def main(argv: list[str]) -> int:
    """``python -m firmware.pi.network CONFIG``: the drop-in for CONFIG on
    standard output (nothing without a club); a bad config in one line."""
    import tomllib

    if len(argv) != 1:
        print("usage: python -m firmware.pi.network CONFIG", file=sys.stderr)
        return 2
    try:
        text = club_dropin(broker_of(Path(argv[0])))
    except (tomllib.TOMLDecodeError, ValueError, OSError) as error:
        print(f"{argv[0]}: {error}", file=sys.stderr)
        return 2
    if text is not None:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
