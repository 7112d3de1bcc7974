"""sd_notify for ``Type=notify`` with a watchdog: READY=1, WATCHDOG=1, STOPPING=1.

Speaks the datagram protocol directly (a ``$NOTIFY_SOCKET`` path, or an
abstract socket when it starts with ``@``), so no extra package is needed.
Outside systemd (no ``$NOTIFY_SOCKET``) every method does nothing.  The
socket is made on the first message (READY comes after the first frame, and
importing ``socket`` costs 14M instructions: ``bench/first_frame_instructions.py``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import socket

SENT_KEPT: Final = 16
"""Messages :attr:`Notifier.sent` keeps (a watchdog ping every 5 s is 17k a day)."""


class Notifier:
    """Tells systemd the referee is ready and that its main loop is alive.

    ``watchdog()`` is called from the main loop on every pass; it sends
    ``WATCHDOG=1`` at most every half of ``$WATCHDOG_USEC`` (so a hung loop
    stops the pings and systemd restarts the service).
    """

    def __init__(self, address: str | None, watchdog_usec: int | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.address = address
        self.interval = None if not watchdog_usec else watchdog_usec / 2e6
        self.clock = clock
        self.last_ping = float("-inf")
        self.sent: list[str] = []
        """The last :data:`SENT_KEPT` messages sent (for tests and debugging)."""
        self._socket: socket.socket | None = None

    @classmethod
    def from_environment(cls) -> Notifier:
        address = os.environ.get("NOTIFY_SOCKET")
        usec = os.environ.get("WATCHDOG_USEC")
        pid = os.environ.get("WATCHDOG_PID")
        if pid and pid.isdigit() and int(pid) != os.getpid():
            usec = None  # the watchdog is meant for another process
        return cls(address, int(usec) if usec and usec.isdigit() else None)

    def _send(self, message: str) -> None:
        if not self.address:
            return
        target = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        try:
            if self._socket is None:
                import socket

                self._socket = socket.socket(socket.AF_UNIX,
                                             socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self._socket.sendto(message.encode(), target)
        except OSError:
            return
        self.sent.append(message)
        del self.sent[:-SENT_KEPT]

    def ready(self) -> None:
        self._send("READY=1\nSTATUS=keeping score")

    def stopping(self) -> None:
        self._send("STOPPING=1")

    def status(self, text: str) -> None:
        """A one-line status for ``systemctl status`` (``STATUS=``)."""
        self._send("STATUS=" + " ".join(text.split()))

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def watchdog(self) -> None:
        if self.interval is None:
            return
        now = self.clock()
        if now - self.last_ping >= self.interval:
            self.last_ping = now
            self._send("WATCHDOG=1")
