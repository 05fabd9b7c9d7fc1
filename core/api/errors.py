"""The one place where askbridge errors become HTTP responses."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from pydantic import ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from askbridge.core.api.bodies import Body, json_body, omitted
from askbridge.core.api.keys import BROKER
from askbridge.core.errors import (
    AlreadyEnded,
    AskbridgeError,
    Conflict,
    InvalidQuestion,
    NotFound,
    SurfaceUnavailable,
    UnknownTarget,
)

log = logging.getLogger("askbridge.api")
RETRY_AFTER_S = 5
"""What a 503 asks the agent to wait before trying again: the database cannot serve for now."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def parse_json(raw: bytes | str) -> Any:
    """JSON from an agent, or ValueError saying why not: bad UTF-8, bad syntax, or nesting so
    deep that the parser runs out of recursion."""
    try:
        return json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except RecursionError:
        raise ValueError("nested too deeply") from None


class ProblemDetail(Body):
    location: str = Field(description="where in the body, such as questions[0].header")
    message: str = Field(description="the rule that is broken and the value that breaks it")


class ErrorBody(Body):
    """What every refusal and failure sends."""

    model_config = ConfigDict(title="Error")

    error: str = Field(description="what is wrong and how to fix it")
    details: list[ProblemDetail] | SkipJsonSchema[None] = omitted("each problem of a refused ask")


def error_response(
    status: int, message: str, details: list[ProblemDetail] | None = None
) -> web.Response:
    sendable = None if details is None else [_sendable_detail(d) for d in details]
    return json_body(ErrorBody(error=_sendable(message), details=sendable), status)


def _sendable_detail(detail: ProblemDetail) -> ProblemDetail:
    return ProblemDetail(location=_sendable(detail.location), message=_sendable(detail.message))


def _sendable(text: str) -> str:
    """`text` with what UTF-8 cannot hold (a lone surrogate the refused ask carried, quoted back
    in its error) written as its escape, so that the error itself can always be sent."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def from_error(error: AskbridgeError) -> web.Response:
    if isinstance(error, InvalidQuestion):
        return error_response(422, str(error), [ProblemDetail(**d) for d in error.details()])
    if isinstance(error, UnknownTarget):
        return error_response(422, str(error))
    if isinstance(error, NotFound):
        return error_response(404, str(error))
    if isinstance(error, Conflict | AlreadyEnded):
        return error_response(409, str(error))
    if isinstance(error, SurfaceUnavailable):
        return error_response(502, str(error))
    return error_response(400, str(error))


def unavailable(why: str) -> str:
    """What an agent is told while the database cannot serve, on every way of asking."""
    return f"the database is unavailable: {why}; try again in {RETRY_AFTER_S} s"


def json_error(request: web.Request, error: Exception) -> web.StreamResponse:
    """Every failure is a JSON body with an `error` text; nothing leaks a traceback. An HTTP
    exception that is not a failure, or that has a JSON body already, is raised again."""
    if isinstance(error, AskbridgeError):
        return from_error(error)
    if isinstance(error, web.HTTPException):
        if error.status < 400 or error.content_type == "application/json":
            raise error
        message = {
            404: f"no route {request.method} {request.path}",
            405: f"{request.method} is not allowed on {request.path}",
            413: "request body is too large",
        }.get(error.status, error.text or error.reason)
        response = error_response(error.status, message)
        for name in ("WWW-Authenticate", "Allow", "Location"):
            if name in error.headers:
                response.headers[name] = error.headers[name]
        return response
    broker = request.app.get(BROKER)
    why = None if broker is None else broker.store.unavailable(error)
    if why is not None:
        log.warning("%s %s: the database is unavailable: %s", request.method, request.path, why)
        response = error_response(503, unavailable(why))
        response.headers["Retry-After"] = str(RETRY_AFTER_S)
        return response
    log.error("unexpected error on %s %s", request.method, request.path, exc_info=error)
    return error_response(500, "internal error; see the askbridge log")
