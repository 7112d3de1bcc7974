"""The director's web side (Starlette, served by uvicorn): the live standings
page for the projector and the director's small HTTP API.

==============================  ==========================================================
``GET /``                       the page (large type, no CDN: ``/static/`` is ours)
``GET /events``                 server-sent events: the whole board as JSON on every change
``GET /standings.json``         the standings, exactly the documented schema
``GET /board.json``             everything the page shows (euchres, states, problems too)
``GET /standings.csv``          the standings as CSV
``GET /logs``                   the table logs kept: ``[{"round", "table", "url"}]``
``GET /logs/{round}/{table}``   one table's round as its box journalled it
``POST /players``               ``{"name": "Anna"}``: register (409 with the reason if taken);
                                ``{"name": "Anna", "partner": "Bo"}``: a fixed pair
``POST /rounds``                ``{"hands": 8}`` or ``{"target": 10}``, optional ``"rules"``
                                (``["target=11", ...]`` house rules) and ``"movement"``
                                (``"progressive"``, ``"by-result"``, ``"north-stays"``,
                                ``"pairs"``): start the next round; ``"minutes": N`` makes
                                it timed; ``"force": true`` starts it while tables still
                                play (refused, naming them, without it); ``"preview":
                                true`` answers the seating it would make now, keeping and
                                sending nothing
``POST /corrections``           ``{"kind": "penalty", "player": "Anna", "points": 2, "by":
                                "Kim", "reason": "..."}`` (kinds and fields:
                                :mod:`.corrections`): kept, answered with the record; 409
                                with the one-line reason when refused
``POST /final``                 ``{}`` (or ``{"force": true}`` while tables still play):
                                the night is final; the page says so, no round starts
``GET /corrections.json``       every correction, with who, when and why
``GET /corrections.csv``        the same as CSV (``club export``'s ``corrections.csv``)
``GET /cards``                  the players' scorecards for phones: the standings with
                                each name leading to its card (``/cards?name=Anna``)
``GET /scorecards.json``        every player's card (:mod:`.scorecards`)
``GET /scorecards.csv``         every card's rows as CSV
``GET /scorecards.html``        a printable page, a card per player
``GET /qr.svg``                 a QR code of ``/cards`` as phones in the room reach it
==============================  ==========================================================
"""

from __future__ import annotations

import asyncio
import functools
import io
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from euchre_core import Rules, RulesError

from .auth import organiser_token, refusal
from .corrections import Correction
from .director import Director, DirectorError, standings_json
from .protocol import DEFAULT_HANDS, MessageError, RoundFormat
from .scorecards import cards_csv, cards_html

STATIC = Path(__file__).with_name("static")
PUSH_POLL_S = 0.1
"""How often an open page's stream looks for a change (seconds)."""

Handler = Callable[[Request], Awaitable[Response]]


def organiser_only(handler: Handler) -> Handler:
    """Only the organiser may: every route that changes the night is wrapped
    in this (``@organiser_only``).  A request from another origin (403), not
    JSON (415), or without the organiser's token or with a wrong one (401) is
    refused in words and reaches nothing (:func:`.auth.refusal`)."""

    @functools.wraps(handler)
    async def guarded(request: Request) -> Response:
        origin = f"{request.url.scheme}://{request.url.netloc}"
        refused = refusal(request.method, request.headers, origin,
                          request.app.state.organiser_token)
        if refused is not None:
            status, reason = refused
            return JSONResponse({"error": reason}, status_code=status,
                                headers={"WWW-Authenticate": "Bearer"} if status == 401
                                else None)
        return await handler(request)

    return guarded


def build_app(director: Director, token: str | None = None) -> Starlette:
    """The Starlette app over ``director``; ``token`` is the organiser's
    (default: the one kept in the director's state directory)."""

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    async def standings(request: Request) -> Response:
        return JSONResponse(standings_json(director.board()))

    async def board(request: Request) -> Response:
        return JSONResponse(director.board())

    async def standings_csv(request: Request) -> Response:
        return PlainTextResponse(director.standings_csv(), media_type="text/csv")

    async def logs(request: Request) -> Response:
        return JSONResponse([{"round": r, "table": t, "url": f"/logs/{r}/{t}"}
                             for (r, t) in director.table_logs()])

    async def one_log(request: Request) -> Response:
        key = (int(request.path_params["round"]), int(request.path_params["table"]))
        text = director.table_logs().get(key)
        if text is None:
            return JSONResponse({"error": f"no log for round {key[0]}, table {key[1]}"},
                                status_code=404)
        return PlainTextResponse(text)

    @organiser_only
    async def register(request: Request) -> Response:
        data = await _json(request)
        name = data.get("name") if isinstance(data, dict) else None
        partner = data.get("partner") if isinstance(data, dict) else None
        if not isinstance(name, str) or not isinstance(partner, (str, type(None))):
            return JSONResponse({"error": "send {\"name\": \"...\"} (and \"partner\": "
                                 "\"...\" for a fixed pair)"}, status_code=400)
        try:
            if partner is None:
                warning = director.register(name)
            else:
                warning = director.register_pair(name, partner)
        except DirectorError as error:
            return JSONResponse({"error": str(error)}, status_code=409)
        return JSONResponse({"ok": True, "players": director.players(),
                             **({"warning": warning} if warning else {})})

    @organiser_only
    async def start_round(request: Request) -> Response:
        data = await _json(request)
        if not isinstance(data, dict):
            return JSONResponse({"error": "send {\"hands\": N} or {\"target\": N}"},
                                status_code=400)
        tokens = data.pop("rules", [])
        movement = data.pop("movement", "progressive")
        force = data.pop("force", False)
        preview = data.pop("preview", False)
        for key, value in (("force", force), ("preview", preview)):
            if not isinstance(value, bool):
                return JSONResponse({"error": f"'{key}': true or false, not {value!r}"},
                                    status_code=400)
        try:
            round_format = RoundFormat.from_json(data or {"hands": DEFAULT_HANDS})
            if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
                raise MessageError("'rules': a list of key=value settings")
            rules = Rules.from_tokens(tokens)
            assignment = director.start_round(round_format, rules, movement=str(movement),
                                              force=force, preview=preview)
        except (MessageError, RulesError, DirectorError) as error:
            return JSONResponse({"error": str(error)}, status_code=409)
        return Response(assignment.encode(), media_type="application/json")

    @organiser_only
    async def correct(request: Request) -> Response:
        try:
            kept = director.correct(Correction.from_request(await _json(request)))
        except ValueError as error:  # CorrectionError, DirectorError: one line each
            return JSONResponse({"error": str(error)}, status_code=409)
        return JSONResponse(kept.to_json())

    async def corrections(request: Request) -> Response:
        return JSONResponse(director.board()["corrections"])

    async def corrections_csv(request: Request) -> Response:
        return PlainTextResponse(director.corrections_csv(), media_type="text/csv")

    @organiser_only
    async def finish(request: Request) -> Response:
        data = await _json(request)
        force = data.get("force", False) if isinstance(data, dict) else None
        if not isinstance(force, bool):
            return JSONResponse({"error": "send {} or {\"force\": true}"}, status_code=400)
        try:
            at = director.finish(force=force)
        except DirectorError as error:
            return JSONResponse({"error": str(error)}, status_code=409)
        return JSONResponse({"ok": True, "final": at})

    async def cards_page(request: Request) -> Response:
        return FileResponse(STATIC / "cards.html", media_type="text/html")

    async def scorecards_json(request: Request) -> Response:
        return JSONResponse({"event": director.event, "cards": director.scorecards()})

    async def scorecards_csv(request: Request) -> Response:
        return PlainTextResponse(cards_csv(director.scorecards()), media_type="text/csv")

    async def scorecards_html(request: Request) -> Response:
        return HTMLResponse(cards_html(director.event, director.scorecards()))

    async def qr_code(request: Request) -> Response:
        return Response(qr_svg(f"{room_url(request)}/cards"), media_type="image/svg+xml")

    async def events(request: Request) -> Response:
        from sse_starlette.sse import EventSourceResponse

        async def stream() -> AsyncIterator[dict[str, str]]:
            seen = -1
            while not await request.is_disconnected():
                if director.version != seen:
                    seen = director.version
                    yield {"event": "board", "data": json.dumps(director.board(),
                                                                ensure_ascii=False)}
                await asyncio.sleep(PUSH_POLL_S)

        return EventSourceResponse(stream(), ping=15)

    app = Starlette(routes=[
        Route("/", page),
        Route("/standings.json", standings),
        Route("/board.json", board),
        Route("/standings.csv", standings_csv),
        Route("/logs", logs),
        Route("/logs/{round:int}/{table:int}", one_log),
        Route("/players", register, methods=["POST"]),
        Route("/rounds", start_round, methods=["POST"]),
        Route("/corrections", correct, methods=["POST"]),
        Route("/corrections.json", corrections),
        Route("/corrections.csv", corrections_csv),
        Route("/final", finish, methods=["POST"]),
        Route("/events", events),
        Route("/cards", cards_page),
        Route("/scorecards.json", scorecards_json),
        Route("/scorecards.csv", scorecards_csv),
        Route("/scorecards.html", scorecards_html),
        Route("/qr.svg", qr_code),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ])
    app.state.organiser_token = token or organiser_token(director.state_dir)
    return app


def room_url(request: Request) -> str:
    """This server's address as a phone in the room reaches it: the one the
    request came to, or, when that is the laptop's own loopback (a projector
    on the laptop), the laptop's address on the room's network."""
    url = request.base_url
    host = url.hostname or ""
    if host in ("localhost", "::1") or host.startswith("127."):
        import socket

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:  # no packet is sent: only the route out is looked up
                probe.connect(("192.0.2.1", 9))
                host = probe.getsockname()[0]
            except OSError:  # no route out: the address the request came to stands
                pass
    port = f":{url.port}" if url.port else ""
    return f"{url.scheme}://{host}{port}"


def qr_svg(text: str) -> bytes:
    """A QR code of ``text`` as SVG (segno), black on white with its quiet zone."""
    import segno

    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="svg", scale=8, border=4, dark="#000",
                                     light="#fff", xmldecl=False, svgns=True)
    return out.getvalue()


async def _json(request: Request) -> Any:
    try:
        return await request.json()
    except (ValueError, UnicodeDecodeError):
        return None
