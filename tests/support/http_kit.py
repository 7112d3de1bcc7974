"""A raw HTTP POST for the club's web tests and ``bench/club_attacks.py``
(no tests here): the status and the answer, a refusal's too, never raised."""

from __future__ import annotations

import urllib.error
import urllib.request


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
    """POST ``body`` as it is with ``headers``: the status and the answer's text."""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
