"""Take the live page's pictures in ``docs/``: a 64-player night (16 tables)
at 1920x1080 in headless chromium, mid-way through a timed round 3 (table 2
done, table 3 silent, table 4's box switched off) and once the night is
called final:

- ``club-page.png``: the tables, mid-round;
- ``club-page-seats.png``: "find your seat" for the round on;
- ``club-page-standings.png``: the standings' first page, mid-round;
- ``club-page-final.png``: the final standings' first page;
- ``club-page-final-tables.png``: the tables at the end (every box switched off).

    .venv/bin/python scripts/club_screenshot.py [OUT_DIR]

The night is a real director (its own SQLite) fed with random legal rounds as
the boxes send them, served by uvicorn; the browser is chromium driven by
selenium through Debian's chromedriver (``apt-get install chromium
chromium-driver``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from support.club_room import Clock, browser, end_night, room, served, wait_for  # noqa: E402


def picture(driver: object, url: str, view: str, out: Path) -> None:
    """The first page of ``view`` held (``?page=N``), as a PNG."""
    driver.get(url)  # type: ignore[attr-defined]
    index = wait_for(driver, f"""
        const pages = [...document.querySelectorAll('#stage .page')];
        const i = pages.findIndex(p => p.dataset.view === {view!r});
        return i >= 0 ? String(i) : null;""", f"a {view} page")
    driver.get(f"{url}?page={index}")  # type: ignore[attr-defined]
    wait_for(driver, f"return document.body.dataset.page === '{index}' && "
             "document.fonts.status === 'loaded'", "the page drawn")
    driver.save_screenshot(str(out))  # type: ignore[attr-defined]
    print(out)


def main() -> None:
    parser = argparse.ArgumentParser(prog="club_screenshot.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "docs",
                        metavar="OUT_DIR", help="where the pictures go (default: docs/)")
    out: Path = parser.parse_args().out
    with tempfile.TemporaryDirectory() as work:
        clock = Clock()
        director = room(Path(work), clock)
        with served(director) as url, browser() as driver:
            picture(driver, url + "/", "tables", out / "club-page.png")
            picture(driver, url + "/", "seats", out / "club-page-seats.png")
            picture(driver, url + "/", "standings", out / "club-page-standings.png")
            end_night(director, clock)
            picture(driver, url + "/", "standings", out / "club-page-final.png")
            picture(driver, url + "/", "tables", out / "club-page-final-tables.png")
        director.close()


if __name__ == "__main__":
    main()
