"""`GET /v1/agent`: a WebSocket that speaks the agent framework's own externally tagged JSON.

In: `{"AskUserQuestion": {...}}`, `{"AskForm": {...}}` (a typed form) and
`{"PermissionRequest": {...}}`; every other chunk is ignored, so an agent can forward its whole
output stream. Out: `{"UserQuestionResponse": {...}}`, or `"Interrupt"` when a question ends
without answers; `{"FormResponse": {...}}` however a form ends; `{"PermissionResponse":
{...}}` for a permission prompt.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
import weakref
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web

from askbridge.core.api.errors import parse_json, unavailable
from askbridge.core.api.keys import BROKER, ORPHANS, SOCKETS, WORDS
from askbridge.core.api.orphans import Orphans, digest
from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.errors import AskbridgeError, InvalidQuestion
from askbridge.core.models import Request, Status
from askbridge.core.permissions import permission_questions, permission_response, tool_use
from askbridge.core.surface import SurfaceWords
from askbridge.core.wire import (
    ASK,
    FORM,
    FORM_FIELDS,
    PERMISSION,
    form_outcome,
    form_response,
    interrupt,
    permission_answer,
    question_response,
)

log = logging.getLogger("askbridge.agent")

WAIT_SLICE_S = 300.0


@dataclass
class Connection:
    """One agent's socket and what it asked for in its query string."""

    socket: web.WebSocketResponse
    broker: Broker
    settings: dict[str, Any]
    tagged: bool
    """`?interrupt=tagged`: every Interrupt names its request."""
    reasons: bool
    """`?reasons=true`: a denied PermissionResponse carries its reason (`wire.REASON`)."""
    words: SurfaceWords
    """The server's surfaces, for the examples in validation messages."""
    prompts: dict[str, str] = field(default_factory=dict)
    """Permission prompts still waiting: digest -> request id."""

    def interrupt(self, request_id: Any) -> Any:
        tagged = self.tagged and isinstance(request_id, str)
        return interrupt(request_id if tagged else None)


async def agent_socket(request: web.Request) -> web.WebSocketResponse:
    socket = web.WebSocketResponse(heartbeat=30.0)
    tagged = request.query.get("interrupt") == "tagged"
    reasons = request.query.get("reasons") == "true"
    connection = Connection(
        socket, request.app[BROKER], _settings(request), tagged, reasons, request.app[WORDS]
    )
    orphans = request.app[ORPHANS]
    await socket.prepare(request)
    request.app[SOCKETS].add(socket)
    pending: set[asyncio.Task[None]] = set()
    try:
        async for message in socket:
            if message.type is not WSMsgType.TEXT:
                continue
            frame = _frame(message.data)
            if isinstance(frame.get(ASK), dict):
                work = _answer(connection, frame[ASK])
            elif isinstance(frame.get(FORM), dict):
                work = _fill_in(connection, frame[FORM])
            elif isinstance(frame.get(PERMISSION), dict):
                work = _approve(connection, frame[PERMISSION], orphans)
            elif ASK in frame or PERMISSION in frame or FORM in frame:
                # A malformed ask must not leave its agent waiting for an answer forever.
                kind = next(k for k in (ASK, FORM, PERMISSION) if k in frame)
                await _send(socket, {"error": f"{kind} must be an object", "request_id": None})
                await _send(socket, interrupt())
                continue
            else:
                continue
            task = asyncio.create_task(work, name="askbridge-agent-request")
            pending.add(task)
            task.add_done_callback(pending.discard)
    finally:
        request.app[SOCKETS].discard(socket)
        # Before awaiting anything: a lost connection may cancel this handler again.
        if not connection.broker.closed:
            for key, request_id in connection.prompts.items():
                orphans.leave(key, request_id)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    return socket


def _settings(request: web.Request) -> dict[str, Any]:
    """The ask fields the query string sets for every ask on this socket, as `Ask` reads
    them from a JSON body: lists split at commas, numbers as JSON numbers, other text as is
    (for `Ask` to refuse with the same words as over HTTP)."""
    query = request.query
    fields: dict[str, Any] = {}
    for key in ("target", "answerers"):
        values = [v for value in query.getall(key, []) for v in value.split(",") if v]
        if values:
            fields[key] = values[0] if key == "target" and len(values) == 1 else values
    for key in ("timeout_s", "remind_after_s", "quorum"):
        if key in query:
            fields[key] = _number(query[key])
    for key in ("context", "callback_url", "requested_by"):
        if query.get(key):
            fields[key] = query[key]
    for key in ("allow_other", "allow_notes", "no_self_approval"):
        if key in query:
            fields[key] = query[key]
    if query.get("escalation"):
        fields["escalation"] = _json(query["escalation"])
    return fields


def _json(text: str) -> Any:
    """A JSON value, or the text as it is (for `Ask` to refuse in its own words)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def _number(text: str) -> Any:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    return value if isinstance(value, int | float) and not isinstance(value, bool) else text


def _frame(text: str) -> dict[str, Any]:
    try:
        frame = parse_json(text)
    except ValueError:
        # Not a frame askbridge can read (not JSON, or nested too deeply): ignored like any
        # other output of the agent.
        return {}
    return frame if isinstance(frame, dict) else {}


async def _answer(connection: Connection, frame: dict[str, Any]) -> None:
    broker, socket, settings = connection.broker, connection.socket, connection.settings
    request_id = frame.get("request_id", frame.get("requestId"))
    # The frame carries the question and its id (as the agent framework sends them); the
    # connection's query string carries the settings.
    sent = {key: frame[key] for key in ("questions", "request_id", "requestId") if key in frame}
    try:
        outcome = await _ask_and_wait(broker, Ask.parse({**settings, **sent}, connection.words))
    except Exception as error:
        await _send(socket, _refusal(connection, request_id, error))
        await _send(socket, connection.interrupt(request_id))
        return
    if outcome is not None:
        await _send(socket, _outcome_frame(outcome, connection))


async def _fill_in(connection: Connection, frame: dict[str, Any]) -> None:
    """A typed form: asked with the connection's settings, answered with how it ended."""
    broker, socket, settings = connection.broker, connection.socket, connection.settings
    request_id = frame.get("request_id", frame.get("requestId"))
    form = {key: frame[key] for key in FORM_FIELDS if key in frame}
    # What the deadline gives is the form's own (its fields'), so the frame carries it.
    sent = {key: frame[key] for key in ("request_id", "requestId", "on_timeout") if key in frame}
    try:
        ask = Ask.parse({**settings, **sent, "form": form}, connection.words)
        outcome = await _ask_and_wait(broker, ask)
    except Exception as error:
        await _send(socket, _refusal(connection, request_id, error))
        shown = request_id if isinstance(request_id, str) else None
        await _send(socket, form_response(shown, "cancel"))
        return
    if outcome is not None:
        await _send(socket, form_outcome(outcome))


def _subject(prompt: dict[str, Any]) -> dict[str, Any]:
    """The prompt's tool input as the ask's subject, so the decision is bound to it: an object
    or a text (a command, say) alike; and the tool call, shown as people know it."""
    tool_input = prompt.get("input")
    subject = {"subject": tool_input} if isinstance(tool_input, dict | str) else {}
    use = tool_use(prompt)
    return subject if use is None else {**subject, "tool": use}


async def _approve(connection: Connection, prompt: dict[str, Any], orphans: Orphans) -> None:
    broker, socket, settings = connection.broker, connection.socket, connection.settings
    key = digest(prompt)
    request_id = orphans.adopt(key) or f"perm_{uuid.uuid4()}"
    questions = permission_questions(prompt, shown=tool_use(prompt) is not None)
    connection.prompts[key] = request_id
    # A note given with Deny is its reason, as the Claude Code hooks take it.
    fields = {"questions": questions, "request_id": request_id, "allow_notes": True}
    try:
        ask = Ask.parse({**settings, **fields, **_subject(prompt)}, connection.words)
        outcome = await _ask_and_wait(broker, ask)
        connection.prompts.pop(key, None)
    except Exception as error:
        connection.prompts.pop(key, None)
        if isinstance(error, AskbridgeError):
            log.warning("permission prompt for %s failed: %s", prompt.get("tool_name"), error)
        await _send(socket, _refusal(connection, request_id, error))
        outcome = None
    if outcome is None and not broker.closed:
        await _send(socket, permission_response(prompt, _nothing(request_id)))
    elif outcome is not None:
        await _send(socket, permission_answer(prompt, outcome, reasons=connection.reasons))


async def _ask_and_wait(broker: Broker, ask: Ask) -> Request | None:
    """The ended request; None when askbridge is shutting down first."""
    asked, _ = await broker.ask(ask)
    outcome = asked
    while not outcome.status.is_terminal:
        outcome = await broker.wait(asked.request_id, WAIT_SLICE_S)
        if broker.closed:
            return None
    return outcome


def _nothing(request_id: str) -> Request:
    """A stand-in for a prompt that could not be asked: it reads as denied."""
    return Request(
        request_id=request_id,
        questions=(),
        targets=(),
        status=Status.WITHDRAWN,
        created_at=datetime.now(UTC),
    )


def _outcome_frame(request: Request, connection: Connection) -> Any:
    if request.status is Status.ANSWERED and request.answers is not None:
        return question_response(request.request_id, request.answers)
    return connection.interrupt(request.request_id)


def _refusal(connection: Connection, request_id: Any, error: Exception) -> dict[str, Any]:
    """The error frame for an ask that failed, whatever failed: its agent waits for a frame.
    A failure askbridge did not mean is logged here, once, with its traceback."""
    if isinstance(error, AskbridgeError):
        return _error_frame(request_id, error)
    shown = request_id if isinstance(request_id, str) else None
    why = connection.broker.store.unavailable(error)
    if why is not None:
        log.warning("agent socket: ask %s: the database is unavailable: %s", shown, why)
        message = unavailable(why)
    else:
        log.error("agent socket: unexpected error asking %s", shown, exc_info=error)
        message = "internal error; see the askbridge log"
    return {"error": message, "request_id": shown}


def _error_frame(request_id: Any, error: AskbridgeError) -> dict[str, Any]:
    """The same `error` (and `details`) as the HTTP API's body for the same ask."""
    shown = request_id if isinstance(request_id, str) else None
    frame: dict[str, Any] = {"error": str(error), "request_id": shown}
    if isinstance(error, InvalidQuestion):
        frame["details"] = error.details()
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
