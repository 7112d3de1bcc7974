"""Who may change the club night: the organiser's credential, and the boxes'
and the director's logins on the broker.

**The organiser's token.**  ``club serve`` keeps one random token in the
director's state directory (:data:`TOKEN_NAME`, readable by its owner only),
made at the first start and printed at every start.  Every request that
changes the night carries it (``Authorization: Bearer TOKEN``); it is
compared in constant time (:func:`hmac.compare_digest`).  The terminal
commands find it with ``--token``, ``$EUCHRE_CLUB_TOKEN`` or the director's
``--state-dir`` (:func:`find_token`).  :func:`refusal` is the whole check of
a state-changing request, CSRF included: a browser on another site can send
neither the header nor a JSON body without asking first (CORS), and a request
that says it comes from another origin, or is not JSON, is refused before
the token is looked at.  ``web.organiser_only`` applies it to a route.

**Broker logins.**  :class:`BrokerLogin` is what a box or the director gives
the broker: a username and password (``club setup`` makes them,
:mod:`.setup`) and, for a TLS listener (``mqtts://``), the CA certificate that
signed the broker's.
"""

from __future__ import annotations

import hmac
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..journal.files import fsync_dir

TOKEN_NAME: Final = "organiser.token"
TOKEN_ENV: Final = "EUCHRE_CLUB_TOKEN"
TOKEN_HEADER: Final = "authorization"
JSON_TYPE: Final = "application/json"


class AuthError(ValueError):
    """No credential to be found, or one that cannot be used; says which."""


def organiser_token(state_dir: Path) -> str:
    """The organiser's token kept in ``state_dir`` (made, owner-only and
    durably, the first time)."""
    path = Path(state_dir) / TOKEN_NAME
    try:
        token = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        token = ""
    if token:
        return token
    # hex, 192 bits: never starting with '-', which argparse takes for an option
    token = secrets.token_hex(24)
    temporary = path.with_name(path.name + ".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="ascii") as handle:
        handle.write(token + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    fsync_dir(path.parent)
    return token


def find_token(token: str | None, state_dir: str | None) -> str:
    """The organiser's token for a terminal command: ``--token``, else
    ``$EUCHRE_CLUB_TOKEN``, else the file in the director's ``--state-dir``."""
    if token:
        return token
    if os.environ.get(TOKEN_ENV):
        return os.environ[TOKEN_ENV]
    if state_dir:
        path = Path(state_dir) / TOKEN_NAME
        try:
            found = path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError) as error:
            raise AuthError(f"the organiser's token: {path} cannot be read ({error})") from None
        if found:
            return found
        raise AuthError(f"the organiser's token: {path} is empty")
    raise AuthError("the organiser's token is needed: --token TOKEN, $EUCHRE_CLUB_TOKEN, "
                    "or --state-dir DIR on the director's laptop (club serve prints it)")


def token_matches(given: str, expected: str) -> bool:
    """Constant-time comparison (the time says nothing about how much matched)."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def refusal(method: str, headers: Mapping[str, str], origin: str, expected: str
            ) -> tuple[int, str] | None:
    """Why a state-changing request is refused, ``(HTTP status, reason)``, or
    None to let it through.  ``headers`` lower-case names; ``origin`` this
    server's own ``scheme://host[:port]`` as the request reached it."""
    sent_origin = headers.get("origin")
    if sent_origin is not None and sent_origin != origin:
        return 403, f"a request from {sent_origin} is refused: only this page's own origin"
    if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return 403, "a request from another site is refused"
    if method in ("POST", "PUT", "PATCH") or headers.get("content-length", "0") != "0":
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != JSON_TYPE:
            return 415, f"send JSON (Content-Type: {JSON_TYPE}), not {content_type or 'nothing'}"
    scheme, _, given = headers.get(TOKEN_HEADER, "").partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        return 401, ("the organiser's token is needed (Authorization: Bearer TOKEN; "
                     "club serve prints it)")
    if not token_matches(given.strip(), expected):
        return 401, "the organiser's token is wrong"
    return None


@dataclass(frozen=True)
class BrokerLogin:
    """A box's or the director's login on the broker."""

    username: str
    password: str
    cafile: str | None = None
    """The CA certificate to check a TLS broker's certificate with (None: the system's)."""

    def __repr__(self) -> str:  # never the password in a log
        return f"BrokerLogin({self.username!r}, cafile={self.cafile!r})"
