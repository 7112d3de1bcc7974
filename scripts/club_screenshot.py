"""Take ``docs/club-page.png``: the live standings page in headless chromium,
mid-way through round 2 of an emulated night (6 tables, 25 players, a box
switched off), at 1600x900.

    .venv/bin/python scripts/club_screenshot.py [OUT.png]

Needs mosquitto and chromium (Debian packages).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from support.broker import Mosquitto  # noqa: E402

from firmware.club.simulate import Night  # noqa: E402

NAMES = ["Anna", "Bo", "Cy", "Dee", "Eve", "Finn", "Gus", "Hal", "Ines", "Jo", "Kai", "Lena",
         "Mo", "Nils", "Ola", "Pia", "Quinn", "Ragnar", "Sigríður", "Tove", "Ulf", "Vera",
         "Wim", "Xena", "Yann"]


def main() -> None:
    parser = argparse.ArgumentParser(prog="club_screenshot.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "docs" / "club-page.png",
                        metavar="OUT.png", help="where the picture goes "
                        "(default: docs/club-page.png)")
    out: Path = parser.parse_args().out
    chromium = shutil.which("chromium") or "chromium"
    with tempfile.TemporaryDirectory() as work:
        broker = Mosquitto(Path(work) / "broker")
        night = Night(broker.url, Path(work) / "night", tables=6, event="friday",
                      pace=0.05).start()
        try:
            for name in NAMES:
                night.post("/players", {"name": name})
            night.start_round(4)
            night.wait(lambda: night.round_done(1), 120, "round 1")
            night.start_round(4)
            night.wait(lambda: sum(t["hand"] >= 2 for t in night.board()["tables"]) >= 4, 120,
                       "round 2 under way")
            night.kill_box(5)
            time.sleep(0.5)
            subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                            "--disable-background-networking", "--disable-component-update",
                            "--disable-sync", "--no-first-run", f"--user-data-dir={work}/chr",
                            "--hide-scrollbars", "--window-size=1600,900",
                            "--virtual-time-budget=300", f"--screenshot={out}",
                            night.url + "/"], capture_output=True, timeout=120, check=True)
        finally:
            night.stop()
            broker.stop()
    print(out)


if __name__ == "__main__":
    main()
