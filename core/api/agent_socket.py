"""`GET /v1/agent`: a WebSocket that speaks the agent framework's own externally tagged JSON.

In: `{"AskUserQuestion": {...}}` (every other chunk is ignored, so an agent can forward its
whole output stream). Out: `{"UserQuestionResponse": {...}}`, or `"Interrupt"` when the
request ends without answers.
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web

from core.api.keys import BROKER, SOCKETS
from core.broker import Broker
from core.errors import AskbridgeError, InvalidQuestion
from core.models import Request, Status
from core.wire import ASK, interrupt, question_response

log = logging.getLogger("askbridge.agent")

WAIT_SLICE_S = 300.0


async def agent_socket(request: web.Request) -> web.WebSocketResponse:
    broker = request.app[BROKER]
    options = _options(request)
    socket = web.WebSocketResponse(heartbeat=30.0)
    await socket.prepare(request)
    request.app[SOCKETS].add(socket)
    pending: set[asyncio.Task[None]] = set()
    try:
        async for message in socket:
            if message.type is not WSMsgType.TEXT:
                continue
            ask = _ask_frame(message.data)
            if ask is None:
                continue
            task = asyncio.create_task(
                _answer(broker, socket, ask, options),
                name=f"askbridge-agent-{ask.get('request_id')}",
            )
            pending.add(task)
            task.add_done_callback(pending.discard)
    finally:
        request.app[SOCKETS].discard(socket)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    return socket


def _options(request: web.Request) -> dict[str, Any]:
    query = request.query
    options: dict[str, Any] = {"target": query.get("target") or None}
    if "timeout_s" in query:
        try:
            options["timeout_s"] = float(query["timeout_s"])
        except ValueError as error:
            raise web.HTTPBadRequest(
                text=json.dumps({"error": "timeout_s must be a number of seconds"}),
                content_type="application/json",
            ) from error
    if query.get("context"):
        options["context"] = query["context"]
    return options


def _ask_frame(text: str) -> dict[str, Any] | None:
    try:
        frame = json.loads(text)
    except json.JSONDecodeError:
        return None
    if isinstance(frame, dict) and isinstance(frame.get(ASK), dict):
        ask: dict[str, Any] = frame[ASK]
        return ask
    return None


async def _answer(
    broker: Broker, socket: web.WebSocketResponse, ask: dict[str, Any], options: dict[str, Any]
) -> None:
    request_id = ask.get("request_id", ask.get("requestId"))
    try:
        asked, _ = await broker.ask(ask.get("questions"), request_id=request_id, **options)
        outcome = asked
        while not outcome.status.is_terminal:
            outcome = await broker.wait(asked.request_id, WAIT_SLICE_S)
            if broker.hub.closed:
                return
    except AskbridgeError as error:
        await _send(socket, _error_frame(request_id, error))
        await _send(socket, interrupt())
        return
    await _send(socket, _outcome_frame(outcome))


def _outcome_frame(request: Request) -> Any:
    if request.status is Status.ANSWERED and request.answers is not None:
        return question_response(request.request_id, request.answers)
    return interrupt()


def _error_frame(request_id: Any, error: AskbridgeError) -> dict[str, Any]:
    frame: dict[str, Any] = {"error": str(error), "request_id": request_id}
    if isinstance(error, InvalidQuestion):
        frame["details"] = [{"location": p.location, "message": p.message} for p in error.problems]
    return frame


async def _send(socket: web.WebSocketResponse, frame: Any) -> None:
    if socket.closed:
        log.info("agent socket closed before its outcome could be sent")
        return
    await socket.send_str(json.dumps(frame))


async def close_agent_sockets(app: web.Application) -> None:
    """On shutdown: tell connected agents we are going away, so they reconnect elsewhere."""
    sockets: weakref.WeakSet[web.WebSocketResponse] = app[SOCKETS]
    for socket in list(sockets):
        await socket.close(code=WSCloseCode.GOING_AWAY, message=b"askbridge is restarting")
