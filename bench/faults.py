"""Journal faults, injected for real, and what the referee made of each (SPEC §7).

One table: fault -> trials -> resumed intact / detected and reported /
silently wrong / crashed.  "Silently wrong" (resumed without a notice from a
journal that is shorter or altered, an acknowledged entry lost, a refused one
kept, damaged files not kept byte for byte) and "crashed" (an exception out of
the referee) must be 0 in every row.

- flipped bytes in the -wal (1-8 bytes; the referee SIGKILLed after 17
  acknowledged entries, as a power cut leaves it), in the main file (after a
  clean stop), the -wal or the main file truncated at a random length;
- a full card (a 1 MiB tmpfs filled to the last byte), a card gone read-only
  (an ext4 image, ``mount -o remount,abort``: what ``errors=remount-ro`` does),
  the journal locked by another process holding ``BEGIN IMMEDIATE``: every
  entry either acknowledged and kept, or refused with the cause in words; the
  referee recovers when the fault goes;
- a second referee on the same state directory: refused, naming the first;
- SIGKILL while entering: every acknowledged entry is there, no notice.

Needs root for the tmpfs and the ext4 image (those rows are skipped otherwise).

    .venv/bin/python bench/faults.py [--trials N] [--json]
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))  # support.*, after the packages (tests/drivers is tests)

from support.crash_child import (  # noqa: E402
    Model,
    make_config,
    open_referee,
    setup_lines,
    stored_games,
)
from support.journal_kit import (  # noqa: E402
    CHILD,
    CRASHED,
    HOLDER,
    INTACT,
    REPORTED,
    SILENTLY_WRONG,
    flip_bytes,
    journal_bytes,
    judge,
    session,
    truncate,
)

from euchre_core.log import parse_line  # noqa: E402
from firmware.app import Referee  # noqa: E402
from firmware.journal import JOURNAL_NAME, JournalInUse, Store  # noqa: E402

KINDS = (INTACT, REPORTED, SILENTLY_WRONG, CRASHED)
Trial = Callable[[Path, random.Random], str]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, check=False)


# --- damage to the files -------------------------------------------------------------


def flip_wal(state: Path, rng: random.Random) -> str:
    acknowledged = session(state, 17, rng, kill=True)
    flip_bytes(state / (JOURNAL_NAME + "-wal"), rng, rng.randint(1, 8))
    return judge(state, acknowledged, journal_bytes(state)).kind


def flip_main(state: Path, rng: random.Random) -> str:
    acknowledged = session(state, 40, rng, kill=False)
    flip_bytes(state / JOURNAL_NAME, rng, rng.randint(1, 8), start=100)
    return judge(state, acknowledged, journal_bytes(state)).kind


def truncate_wal(state: Path, rng: random.Random) -> str:
    acknowledged = session(state, 17, rng, kill=True)
    truncate(state / (JOURNAL_NAME + "-wal"), rng)
    return judge(state, acknowledged, journal_bytes(state)).kind


def truncate_main(state: Path, rng: random.Random) -> str:
    acknowledged = session(state, 40, rng, kill=False)
    truncate(state / JOURNAL_NAME, rng)
    return judge(state, acknowledged, journal_bytes(state)).kind


# --- writes that fail ----------------------------------------------------------------


class _Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


def _write_fault(state: Path, rng: random.Random, words: str,
                 inject: Callable[[], None], remove: Callable[[], None],
                 *, recovers: bool = True, acked: list[str] | None = None) -> str:
    """Entries before, during and after a fault: each acknowledged one kept,
    each refused one refused with ``words`` and not kept (``acked`` gets the
    acknowledged lines)."""
    clock = _Clock()
    try:
        referee = open_referee(state, clock=clock)
    except Exception:  # noqa: BLE001 - counted
        return CRASHED
    acked = [] if acked is None else acked
    refused = 0
    try:
        model = Model(setup_lines(referee.config))
        model.game, model.base = referee.game, referee.base_entries

        def enter(count: int, stop_after: int = 3) -> int:
            """Up to ``count`` entries, or until ``stop_after`` refusals."""
            nonlocal refused
            refusals = 0
            for _ in range(count):
                if refusals >= stop_after:
                    break
                line = model.random_line(rng, undo_p=0.0)
                reason = referee.enter(parse_line(line))  # type: ignore[arg-type]
                if reason is None:
                    acked.append(line)
                    model.game = referee.game
                elif reason != words:
                    raise AssertionError(f"refused with {reason!r}, not {words!r}")
                else:
                    refusals += 1
            refused += refusals
            return refusals

        enter(rng.randint(1, 10))
        inject()
        try:
            if not enter(rng.randint(30, 200)):
                return INTACT  # the fault never reached a write
            if len(referee.game.entries) > referee.base_entries:
                said = referee.undo()  # an undo while failing: refused too, in words
                if said != words or referee.view().message != words:
                    return _wrong(f"undo said {said!r}, the screen {referee.view().message!r}")
        finally:
            remove()
        if recovers:
            clock.now += Referee.JOURNAL_PROBE_S
            if not referee.retry_journal():
                return _wrong(f"no recovery: {referee.journal_fault}")
            if enter(3):
                return _wrong("refused after the recovery")
    except AssertionError as error:
        return _wrong(str(error))
    except Exception:  # noqa: BLE001
        return CRASHED
    finally:
        referee.store.close()
    return _kept_exactly(state, acked) if recovers else REPORTED


def _wrong(why: str) -> str:
    print(f"  silently wrong: {why}", file=sys.stderr)
    return SILENTLY_WRONG


def _kept_exactly(state: Path, acked: list[str]) -> str:
    games = stored_games(state)
    lines = [line for _, game in games for line in game if not line.startswith("players ")]
    if lines != acked:
        return _wrong(f"kept {lines[-3:]} ({len(lines)}), acknowledged {acked[-3:]} "
                      f"({len(acked)})")
    return REPORTED


def full_card(state: Path, rng: random.Random) -> str:
    card = state / "card"
    card.mkdir()
    if _run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(card)).returncode:
        raise _Skip("cannot mount a tmpfs (root needed)")
    filler = card / "filler"

    def fill() -> None:
        with open(filler, "wb", buffering=0) as handle:
            try:
                while True:
                    handle.write(bytes(4096))
            except OSError as error:
                assert error.errno == errno.ENOSPC

    try:
        return _write_fault(card / "state", rng, "the card is full: nothing new can be kept",
                            fill, lambda: filler.unlink())
    finally:
        _run("umount", "-l", str(card))


def read_only_card(state: Path, rng: random.Random) -> str:
    image, card = state / "card.img", state / "card"
    card.mkdir()
    with open(image, "wb") as handle:
        handle.truncate(16 << 20)
    if _run("mkfs.ext4", "-q", str(image)).returncode or _run(
            "mount", "-o", "loop", str(image), str(card)).returncode:
        raise _Skip("cannot loop-mount an ext4 image (root needed)")
    acked: list[str] = []
    try:
        kind = _write_fault(
            card / "state", rng, "the card is read-only: nothing new can be kept",
            lambda: _run("mount", "-o", "remount,abort", str(card)), lambda: None,
            recovers=False, acked=acked)
        _run("umount", str(card))
        _run("e2fsck", "-fy", str(image))
        _run("mount", "-o", "loop", str(image), str(card))
        if kind != REPORTED:  # the next boot: every acknowledged entry, nothing refused
            return kind
        return _kept_exactly(card / "state", acked)
    finally:
        _run("umount", "-l", str(card))


def locked(state: Path, rng: random.Random) -> str:
    Store(state).close()  # the journal exists
    holder: subprocess.Popen[str] | None = None

    def hold() -> None:
        nonlocal holder
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(state / JOURNAL_NAME)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"

    def release() -> None:
        if holder is not None:
            holder.communicate("")

    return _write_fault(state, rng, "the journal is locked by another program: nothing new "
                        "can be kept", hold, release)


def second_referee(state: Path, rng: random.Random) -> str:
    first = subprocess.Popen([sys.executable, str(CHILD), str(state)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert first.stdout is not None
    try:
        if not first.stdout.readline().startswith("START"):
            return CRASHED
        try:
            Store(state).close()
        except JournalInUse as error:
            return REPORTED if f"pid {first.pid}" in str(error) else SILENTLY_WRONG
        except Exception:  # noqa: BLE001
            return CRASHED
        return SILENTLY_WRONG  # two referees on one journal
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate()


def sigkill_during_entry(state: Path, rng: random.Random) -> str:
    setup = setup_lines(make_config(state))
    before = stored_games(state)
    model = Model(setup, before[-1][1][len(setup):] if before else [])
    batch = []
    for _ in range(rng.randint(5, 30)):
        line = model.random_line(rng)
        model.apply(line)
        batch.append(line)
    child = subprocess.Popen([sys.executable, str(CHILD), str(state)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdin is not None and child.stdout is not None
    if not child.stdout.readline().startswith("START"):
        child.kill()
        child.communicate()
        return CRASHED
    child.stdin.write("".join(line + "\n" for line in batch))
    child.stdin.flush()
    time.sleep(rng.uniform(0, 0.02))
    child.send_signal(signal.SIGKILL)
    out, _ = child.communicate()
    acks = [line.split(" ", 3)[3] for line in out.splitlines() if line.startswith("ACK ")]
    referee = open_referee(state)
    try:
        if referee.notice is not None or referee.notices():
            return SILENTLY_WRONG  # nothing was damaged: a notice would be wrong too
        games = [referee.store.lines(info.id) for info in referee.store.games()]
    finally:
        referee.store.close()
    old = sum(len(lines) for _, lines in before)
    new = [line for lines in games for line in lines][old:]
    new = [line for line in new if not line.startswith("players ")]
    if new[: len(acks)] != acks or new != batch[: len(new)]:
        return SILENTLY_WRONG
    return INTACT


class _Skip(Exception):
    pass


FAULTS: list[tuple[str, Trial, bool]] = [
    ("flipped bytes in the -wal", flip_wal, True),
    ("flipped bytes in the main file", flip_main, True),
    ("truncated -wal", truncate_wal, True),
    ("truncated main file", truncate_main, True),
    ("full card (tmpfs)", full_card, True),
    ("read-only card (ext4 abort)", read_only_card, True),
    ("journal locked (BEGIN IMMEDIATE)", locked, True),
    ("second referee", second_referee, True),
    ("SIGKILL during entry", sigkill_during_entry, False),
]
"""(fault, trial, fresh state directory per trial)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=20, help="trials per fault (20)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="the table as JSON too")
    parser.add_argument("--only", metavar="TEXT", help="only the faults whose name has TEXT")
    args = parser.parse_args()
    rows = []
    for name, trial, fresh in FAULTS:
        if args.only and args.only not in name:
            continue
        counts = dict.fromkeys(KINDS, 0)
        skipped = ""
        with tempfile.TemporaryDirectory(prefix="euchre-faults-") as top:
            shared = Path(top) / "state"
            for number in range(args.trials):
                rng = random.Random(f"{args.seed}-{name}-{number}")
                state = Path(top) / f"trial-{number}" if fresh else shared
                state.mkdir(parents=True, exist_ok=True)
                try:
                    counts[trial(state, rng)] += 1
                except _Skip as why:
                    skipped = str(why)
                    break
                except Exception as error:  # noqa: BLE001 - a crash of the harness is one too
                    print(f"{name} trial {number}: {type(error).__name__}: {error}",
                          file=sys.stderr)
                    counts[CRASHED] += 1
        rows.append({"fault": name, "trials": sum(counts.values()), **counts,
                     **({"skipped": skipped} if skipped else {})})
    width = max(len(row["fault"]) for row in rows)
    print(f"{'fault':<{width}}  trials  resumed intact  detected and reported  "
          "silently wrong  crashed")
    for row in rows:
        if row.get("skipped"):
            print(f"{row['fault']:<{width}}  skipped: {row['skipped']}")
            continue
        print(f"{row['fault']:<{width}}  {row['trials']:>6}  {row[INTACT]:>14}  "
              f"{row[REPORTED]:>21}  {row[SILENTLY_WRONG]:>14}  {row[CRASHED]:>7}")
    if args.json:
        print(json.dumps(rows))
    bad = sum(row[SILENTLY_WRONG] + row[CRASHED] for row in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    os.umask(0o022)
    sys.exit(main())
