"""The programs from Debian packages that some tests run, in one place: the
package that brings each one, and the skip that names it when it is missing.

``scripts/system-deps.sh`` installs every package named here when run as
root (``./test`` runs it first); an ordinary user, who cannot, gets these
skips instead (``test_fw_shell_scripts`` checks that the script names them all).
"""

from __future__ import annotations

import shutil
from typing import Final

import pytest

PACKAGES: Final = {
    "chromedriver": "chromium-driver",
    "chromium": "chromium",
    "mosquitto": "mosquitto",
    "mosquitto_passwd": "mosquitto",
    "node": "nodejs",
    "openssl": "openssl",
    "shellcheck": "shellcheck",
    "strace": "strace",
    "systemd-analyze": "systemd",
    "tmux": "tmux",
}
"""Each program a test runs, and the Debian package that installs it."""


def missing(tool: str) -> str:
    """Why a test that runs ``tool`` is skipped: it is not installed, and
    which package installs it."""
    return f"{tool} is not installed (apt-get install {PACKAGES[tool]})"


def needs(tool: str) -> pytest.MarkDecorator:
    """Skips the test, saying which package to install, when ``tool`` is not
    on the PATH."""
    return pytest.mark.skipif(shutil.which(tool) is None, reason=missing(tool))
