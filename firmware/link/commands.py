"""The laptop commands of the serial link: ``send``, ``status``, ``export``,
``stats``, ``enter``, ``watch`` (each over a :class:`~firmware.link.client.DeviceLink`).

Exit status (:mod:`firmware.exits`): 0 done (``send``: the log is valid), 1
the device said no (an invalid log, a refused entry, no such game), 2 usage or
port errors (``enter``: also an entry whose answer was lost when the device's
status cannot tell whether it was kept).

Another program reading the port takes some of the device's answers: what
the laptop sees of it (an answer lost behind a later one, torn lines,
silence, another program that has the port open) is said, ``status`` and
``export`` ask again, and ``enter`` asks the device's status whether its
entry was kept (docs/serial-protocol.md, "The laptop side").
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from ..exits import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from ..logcheck import LogFileError, read_log
from ..summary import SUMMARY_KEYS
from .client import (
    AnswerLost,
    DeviceLink,
    LinkError,
    NoAnswer,
    log_lines,
    port_users,
    reader_words,
)
from .protocol import EVENT, LOAD_WORDS, Answer, ProtocolError, request, verified


def _connect(args: argparse.Namespace, on_event: Callable[[str], None] | None = None
             ) -> DeviceLink:
    link = DeviceLink(args.port, args.baudrate, args.timeout, on_event, _say_working)
    try:
        link.sync()
    except LinkError:
        link.close()
        raise
    return link


def _say_working(text: str) -> None:
    """A progress line from the device (``working TEXT``), on stderr."""
    print(f"euchre-referee: the device is working: {text}", file=sys.stderr, flush=True)


def _say_lost(link: DeviceLink) -> None:
    """On stderr: answers that were lost and asked for again (:meth:`DeviceLink.ask`)."""
    if link.lost:
        count = len(link.lost)
        what = "an answer was" if count == 1 else f"{count} answers were"
        print(f"euchre-referee: {link.port_name}: {what} lost and asked for again: "
              f"{reader_words(link.port_name)}", file=sys.stderr, flush=True)


def _link_words(link: DeviceLink, error: LinkError) -> str:
    """A request's failure in words, with who may be taking the answers when
    there is a sign of it: an answer lost, torn lines, another program that
    has the port open."""
    if isinstance(error, AnswerLost) or (
            isinstance(error, NoAnswer) and (link.torn or port_users(link.port_name))):
        return f"{error}: {reader_words(link.port_name)}"
    return str(error)


def _ask(args: argparse.Namespace, line: str) -> Answer:
    """One request that changes nothing (``status``, ``export``), asked again
    when another program reading the port takes its answer."""
    with _connect(args) as link:
        try:
            return link.ask(line)
        except LinkError as error:
            raise LinkError(_link_words(link, error)) from None
        finally:
            _say_lost(link)


def _fail(message: str) -> int:
    print(f"euchre-referee: {message}", file=sys.stderr)
    return EXIT_USAGE


def send(args: argparse.Namespace) -> int:
    """``euchre-referee send``."""
    path: str = args.file
    try:
        data = read_log(path)
    except LogFileError as error:
        print(error, file=sys.stderr)
        return EXIT_USAGE
    try:
        lines = log_lines(data)
    except ValueError as error:
        print(f"{path}: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        link = _connect(args)
    except LinkError as error:
        return _fail(str(error))
    with link:
        try:
            answer = link.replay(lines, load=args.load)
        except LinkError as error:
            again = ("; sending it again stores no game twice (a game kept already is not "
                     "stored again)" if args.load else "")
            return _fail(_link_words(link, error) + again)
    if not answer.ok or not answer.lines:
        return _fail(f"the device refused the log: {answer.text}")
    try:
        verdict = json.loads(answer.lines[0])
        summary = {key: verdict[key] for key in SUMMARY_KEYS}
    except (ValueError, KeyError, TypeError):
        return _fail(f"not a verdict from the device: {answer.lines[0]!r}")
    summary["file"] = path
    text = list(answer.lines[1:])
    if text and text[0].startswith(f"{verdict['file']}:"):
        text[0] = path + text[0][len(verdict["file"]):]
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
        for line in text:
            if line.startswith(LOAD_WORDS):
                print(line, file=sys.stderr)
    else:
        print("\n".join(text))
    return EXIT_OK if summary["error"] is None else EXIT_INVALID


def status(args: argparse.Namespace) -> int:
    """``euchre-referee status``."""
    try:
        answer = _ask(args, "status json" if args.json else "status")
    except LinkError as error:
        return _fail(str(error))
    if not answer.ok:
        return _fail(f"the device said: {answer.text}")
    if args.json:
        try:
            status = json.loads(answer.text)
        except ValueError:
            return _fail(f"not a status from the device: {answer.text!r}")
        print(json.dumps(status, ensure_ascii=False))
    else:
        print("\n".join(answer.lines or [answer.text]))
    return EXIT_OK


def export(args: argparse.Namespace) -> int:
    """``euchre-referee export``."""
    request = "export" if args.game is None else f"export {args.game}"
    try:
        answer = _ask(args, request)
    except LinkError as error:
        return _fail(str(error))
    if not answer.ok or answer.lines is None:
        print(f"euchre-referee: {answer.text}", file=sys.stderr)
        return EXIT_INVALID
    text = "".join(line + "\n" for line in answer.lines)
    if args.format == "egn":
        return _print_egn(text, answer.text)
    sys.stdout.write(text)
    return EXIT_OK


def _print_egn(text: str, about: str) -> int:
    """The exported game (``about``: ``game ID``) as EGN on stdout, what EGN
    cannot hold in one line on stderr."""
    from euchre_core import replay

    from ..egn import EgnError, print_egn, to_egn

    result = replay(text)
    if result.error is not None:
        return _fail(f"the device's export does not replay: line {result.error.line}: "
                     f"{result.error.reason}")
    try:
        egn = to_egn(result.game, game_id=about or None)
    except EgnError as error:
        return _fail(str(error))
    print_egn(egn)
    return EXIT_OK


def stats(args: argparse.Namespace) -> int:
    """``euchre-referee stats``."""
    from ..stats import stats_from_json_lines

    try:
        answer = _ask(args, "stats json" if args.json else "stats")
    except LinkError as error:
        return _fail(str(error))
    if not answer.ok or answer.lines is None:
        print(f"euchre-referee: the device said: {answer.text}", file=sys.stderr)
        return EXIT_INVALID
    if args.json:
        try:
            whole = stats_from_json_lines(answer.lines)
        except (ValueError, IndexError):
            return _fail(f"not statistics from the device: {answer.lines[:1]!r}")
        print(json.dumps(whole, ensure_ascii=False))
    else:
        print("\n".join(answer.lines))
    return EXIT_OK


def enter(args: argparse.Namespace) -> int:
    """``euchre-referee enter``."""
    event = " ".join(args.event).strip()
    if not event:
        return _fail("enter: which event? (e.g. enter trick N)")
    try:
        link = _connect(args)
    except LinkError as error:
        return _fail(str(error))
    with link:
        tag = link.new_tag()
        try:
            answer = link.request(f"enter {event}", tag=tag, barrier=True)
        except (AnswerLost, NoAnswer) as error:
            return _entry_lost(link, f"enter {event}", tag, _link_words(link, error))
        except LinkError as error:
            return _fail(f"{error}; {_how_to_check(args.port)}")
    if not answer.ok:
        print(answer.text, file=sys.stderr)
        return EXIT_INVALID
    print(answer.text)
    return EXIT_OK


def _how_to_check(port: str) -> str:
    return f"run `euchre-referee status --port {port}` to see whether it was kept"


def _entry_lost(link: DeviceLink, request: str, tag: str, lost: str) -> int:
    """An ``enter`` whose answer did not come: ask the device's status once
    (again only if that answer is lost too), which keeps the answers to the
    last tagged entries (``enter_answers``), and say truthfully what became of
    it: exit 0 when it was kept, 1 when it was refused, 2 when that cannot be
    told."""
    answer: str | None = None
    try:
        status = link.ask("status json")
        if status.ok:
            found = json.loads(status.text).get("enter_answers", {}).get(tag)
            answer = found if isinstance(found, str) else None
    except (LinkError, ValueError, AttributeError):
        answer = None
    word, _, text = (answer or "").partition(" ")
    if word == "ok":
        print(f"euchre-referee: {lost}; the device's status says '{request}' was kept",
              file=sys.stderr)
        print(text)
        return EXIT_OK
    if word == "error":
        print(f"euchre-referee: {lost}; the device's status says '{request}' was refused:",
              file=sys.stderr)
        print(text, file=sys.stderr)
        return EXIT_INVALID
    return _fail(f"{lost}; whether '{request}' was kept is not known: "
                 f"{_how_to_check(link.port_name)}")


def follow(link: DeviceLink, out: TextIO, *, stop: Callable[[], bool] = lambda: False,
           entries: queue.Queue[str | None] | None = None, said: TextIO | None = None
           ) -> bool:
    """Print each live-feed line until ``stop()`` or Ctrl-C (turning the feed off).

    ``entries``: lines to enter on the same connection (``watch --enter``); each
    answer goes to ``said`` (``entered: ...`` or ``refused: ...``), and a None
    ends the watch.  Returns False when any entry was refused."""

    def show(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    link.on_event = show
    answer = link.request("watch on")
    if not answer.ok:
        raise LinkError(f"the device refused the feed: {answer.text}")
    all_taken = True
    try:
        while not stop():
            if entries is not None:
                try:
                    entry = entries.get_nowait()
                except queue.Empty:
                    pass
                else:
                    if entry is None:
                        break
                    if entry.strip():
                        answer = link.request(f"enter {entry.strip()}")
                        all_taken = all_taken and answer.ok
                        word = "entered" if answer.ok else "refused"
                        print(f"{word}: {answer.text}", file=said or sys.stderr, flush=True)
                    continue
            raw = link.read_line(time.monotonic() + (0.05 if entries is not None else 0.2))
            if raw is None:
                continue
            try:
                line = verified(raw)
            except ProtocolError:
                continue  # torn or stray: never taken for an event
            if line.startswith(EVENT):
                show(line[len(EVENT):])
    finally:
        try:
            link.write(request("watch off"))
        except LinkError:
            pass
    return all_taken


def _read_entries(stream: TextIO, entries: queue.Queue[str | None]) -> None:
    """Each line of ``stream`` onto ``entries``, then None (a thread)."""
    try:
        for line in stream:
            entries.put(line)
    finally:
        entries.put(None)


def watch(args: argparse.Namespace) -> int:
    """``euchre-referee watch [--enter]``."""
    entries: queue.Queue[str | None] | None = None
    if getattr(args, "enter", False):
        entries = queue.Queue()
        threading.Thread(target=_read_entries, args=(sys.stdin, entries), daemon=True).start()
    taken = True
    try:
        with _connect(args) as link:
            try:
                taken = follow(link, sys.stdout, entries=entries)
            except KeyboardInterrupt:
                pass
    except LinkError as error:
        return _fail(str(error))
    return EXIT_OK if taken else EXIT_INVALID
