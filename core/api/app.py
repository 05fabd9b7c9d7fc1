"""HTTP routes of the agent API."""

from __future__ import annotations

import json
import logging
import weakref
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs

from aiohttp import web

from askbridge.core import audit_log
from askbridge.core.api.agent_socket import agent_socket, close_agent_sockets
from askbridge.core.api.auth import (
    Guard,
    loopback_hosts_only,
    require_token,
    same_origin_only,
)
from askbridge.core.api.bodies import json_body
from askbridge.core.api.errors import Handler, error_response, json_error, parse_json
from askbridge.core.api.health import count_request
from askbridge.core.api.keys import BROKER, ORPHANS, SOCKETS, WORDS
from askbridge.core.api.limits import MAX_EVENTS, MAX_LIST, MAX_WAIT_S
from askbridge.core.api.openapi import openapi_document
from askbridge.core.api.orphans import GRACE_S as ORPHAN_GRACE_S
from askbridge.core.api.orphans import Orphans
from askbridge.core.api.reading import read_body
from askbridge.core.api.status import AuditEvent, EventList, QuestionList, StatusObject
from askbridge.core.ask import Ask, ask_schema
from askbridge.core.broker import Broker
from askbridge.core.clock import iso
from askbridge.core.metrics import Metrics
from askbridge.core.models import Status
from askbridge.core.surface import SurfaceWords

log = logging.getLogger("askbridge.agent")

EXPORT_PAGE = 1000


def api_middlewares(
    *,
    token: str | None,
    loopback_only: bool,
    signed_paths: tuple[str, ...] = (),
    metrics: Metrics | None = None,
) -> list[Any]:
    """One middleware that does, in order, what every request meets: it is counted (refusals
    too), checked (a loopback Host when there is no token, the token, the same origin) and any
    failure becomes a JSON body. One, not one each: every middleware is a frame that each
    waiting long-poll holds, and ten thousand agents may be waiting."""
    guards: list[Guard] = [require_token(token), same_origin_only(signed_paths)]
    if loopback_only:
        guards.insert(0, loopback_hosts_only(signed_paths))

    def counted(request: web.Request, status: int) -> None:
        if metrics is not None:
            count_request(metrics, request, status)

    @web.middleware
    async def api(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            response = next(filter(None, (g(request) for g in guards)), None)
            if response is None:
                response = await handler(request)
        except Exception as error:
            try:
                response = json_error(request, error)
            except web.HTTPException as passed:
                counted(request, passed.status)
                raise
        counted(request, response.status)
        return response

    return [api]


async def _close_orphans(app: web.Application) -> None:
    await app[ORPHANS].close()


def add_api_routes(
    app: web.Application,
    broker: Broker,
    *,
    words: SurfaceWords | None = None,
    orphan_grace_s: float = ORPHAN_GRACE_S,
) -> None:
    """Serve the agent API; `words` are the server's surfaces, for examples in its messages."""
    app[BROKER] = broker
    app[WORDS] = words or SurfaceWords()
    app[SOCKETS] = weakref.WeakSet()
    app[ORPHANS] = Orphans(broker, orphan_grace_s)
    app.on_shutdown.append(close_agent_sockets)
    app.on_cleanup.append(_close_orphans)
    app.router.add_get("/v1/schema", schema)
    app.router.add_get("/v1/openapi.json", openapi)
    app.router.add_post("/v1/questions", create_question)
    app.router.add_get("/v1/questions", list_questions)
    app.router.add_get("/v1/questions/{request_id}", get_question)
    app.router.add_delete("/v1/questions/{request_id}", withdraw_question)
    app.router.add_get("/v1/questions/{request_id}/events", question_events)
    app.router.add_get("/v1/events", all_events)
    app.router.add_get("/v1/audit/export", export_audit)
    app.router.add_get("/v1/agent", agent_socket)


async def schema(request: web.Request) -> web.Response:
    return web.json_response(ask_schema(request.app[WORDS]))


async def openapi(request: web.Request) -> web.Response:
    return web.json_response(openapi_document(request.app[WORDS]))


async def create_question(request: web.Request) -> web.Response:
    ask = Ask.parse(await read_json_object(request), request.app[WORDS])
    if _agent_gone(request):
        # Read only after the agent gave up on it (this server was stopped or stuck, and its
        # withdrawal, sent to a server that did not answer, is never read): nobody waits for
        # the answer, so nobody is asked. The agent asks again with the same id if it still
        # wants to.
        log.warning("did not ask %s: its agent had stopped waiting for this server", ask.request_id)
        return error_response(408, "the agent stopped waiting before askbridge read its request")
    asked, created = await request.app[BROKER].ask(ask)
    return json_body(StatusObject.of(asked), 201 if created else 200)


def _agent_gone(request: web.Request) -> bool:
    """Whether the connection that sent `request` had closed before it was handled."""
    return request.transport is None or request.transport.is_closing()


async def get_question(request: web.Request) -> web.Response:
    broker = request.app[BROKER]
    request_id = request.match_info["request_id"]
    wait = _first(request, "wait")
    if wait is None:
        return json_body(StatusObject.of(await broker.get(request_id)))
    try:
        seconds = float(wait)
    except ValueError:
        return error_response(400, f"wait must be a number of seconds (0-300), got {wait!r}")
    if not seconds >= 0:
        return error_response(400, f"wait must be a number of seconds (0-300), got {wait!r}")
    with broker.metrics.long_poll():
        found = await broker.wait(request_id, min(seconds, MAX_WAIT_S))
    return json_body(StatusObject.of(found))


async def list_questions(request: web.Request) -> web.Response:
    raw = request.query.get("status")
    try:
        status = Status(raw) if raw else None
    except ValueError:
        names = ", ".join(s.value for s in Status)
        return error_response(400, f"status must be one of {names}, got {raw!r}")
    found = await request.app[BROKER].list_requests(status, _limit(request, 100, MAX_LIST))
    return json_body(QuestionList(questions=[StatusObject.of(r) for r in found]))


async def withdraw_question(request: web.Request) -> web.Response:
    withdrawn = await request.app[BROKER].withdraw(request.match_info["request_id"])
    return json_body(StatusObject.of(withdrawn))


async def question_events(request: web.Request) -> web.Response:
    events = await request.app[BROKER].events(request.match_info["request_id"])
    return json_body(EventList(events=[AuditEvent.of(e) for e in events]))


async def all_events(request: web.Request) -> web.Response:
    """The audit trail across requests: `?since=<ISO time>&request_id=…&limit=…`."""
    since = _time(request, "since")
    limit = _limit(request, 1000, MAX_EVENTS)
    events = await request.app[BROKER].events(request.query.get("request_id"), since, limit)
    return json_body(EventList(events=[AuditEvent.of(e) for e in events]))


async def export_audit(request: web.Request) -> web.StreamResponse:
    """The audit log with its hash chain, as JSON lines (`askbridge audit --export`): a header
    line saying how it was filtered, every event, oldest first, and an end line counting them:
    `?request_id=…&since=<ISO time>&until=<ISO time>`."""
    broker = request.app[BROKER]
    request_id = request.query.get("request_id") or None
    since, until = _time(request, "since"), _time(request, "until")
    page = await broker.events(request_id, since, EXPORT_PAGE, until=until)
    header = {
        "version": 1,
        "canonical_json": audit_log.CANONICAL_JSON,
        "exported_at": iso(broker.now()),
        "request_id": request_id,
        "since": None if since is None else iso(since),
        "until": None if until is None else iso(until),
    }
    response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
    await response.prepare(request)
    await response.write(_line({audit_log.HEADER: header}))
    count = 0
    while page:
        chunk = b"".join(_line(AuditEvent.of(e).model_dump(mode="json")) for e in page)
        await response.write(chunk)
        count += len(page)
        if len(page) < EXPORT_PAGE:
            break
        page = await broker.events(request_id, since, EXPORT_PAGE, until=until, after=page[-1].seq)
    # Only a complete export has it: a failure above ends the response without it.
    await response.write(_line({audit_log.END: {"events": count}}))
    await response.write_eof()
    return response


def _line(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode() + b"\n"


def _time(request: web.Request, name: str) -> datetime | None:
    """An ISO 8601 time from the query string (UTC unless it says otherwise)."""
    raw = request.query.get(name)
    try:
        when = datetime.fromisoformat(raw.replace("Z", "+00:00")) if raw else None
    except ValueError:
        raise _bad_request(f"{name} must be an ISO 8601 time, got {raw!r}") from None
    if when is None:
        return None
    if when.tzinfo is None:
        return when.replace(tzinfo=UTC)
    try:
        # Stored and compared in UTC: year 1 east of UTC or year 9999 west of it is not there.
        return when.astimezone(UTC)
    except OverflowError:
        raise _bad_request(
            f"{name} must be a time in UTC's years 1-9999, got {raw!r}; give it in UTC (Z)"
        ) from None


async def read_json_object(request: web.Request) -> dict[str, Any]:
    raw = await read_body(request)
    try:
        # Malformed JSON, bytes that are not UTF-8, nesting too deep, 4300-digit numbers…
        body = parse_json(raw)
    except ValueError as error:
        raise _bad_request(f"request body is not valid JSON: {error}") from error
    if not isinstance(body, dict):
        raise _bad_request("request body must be a JSON object")
    return body


def _first(request: web.Request, name: str) -> str | None:
    """The first value of query parameter `name`, read without `request.query`: that parses
    the whole query into a dict kept with the request, which each waiting long-poll holds."""
    found = parse_qs(request.rel_url.raw_query_string, keep_blank_values=True).get(name)
    return found[0] if found else None


def _limit(request: web.Request, default: int, most: int) -> int:
    raw = request.query.get("limit")
    if raw is None:
        return default
    if not (raw.isdecimal() and len(raw) <= len(str(most)) and 1 <= int(raw) <= most):
        raise _bad_request(f"limit must be a whole number from 1 to {most}, got {raw!r}")
    return int(raw)


def _bad_request(message: str) -> web.HTTPBadRequest:
    return web.HTTPBadRequest(text=json.dumps({"error": message}), content_type="application/json")


__all__ = ["BROKER", "Handler", "add_api_routes", "api_middlewares"]
