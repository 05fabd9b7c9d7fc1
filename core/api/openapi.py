"""The OpenAPI 3.1 document of the agent API (`GET /v1/openapi.json`).

Its schemas are generated from the models the routes use: `Ask` reads every request body and
the bodies in `status.py` and `errors.py` are what the routes send. Only the paths, their
parameters and which status codes each route answers with are written here.
"""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from askbridge.core.api.errors import ErrorBody
from askbridge.core.api.limits import MAX_EVENTS, MAX_LIST, MAX_WAIT_S
from askbridge.core.api.status import EventList, Health, QuestionList, StatusObject
from askbridge.core.ask import Ask, describe_question_rules, describe_surfaces
from askbridge.core.hooks.claude_code import (
    CLAUDE_CODE_PATH,
    DEFAULT_HOOK_TIMEOUT_S,
    MAX_HOOK_TIMEOUT_S,
    MIN_HOOK_TIMEOUT_S,
)
from askbridge.core.hooks.wire import ElicitationInput, HookInput, HookOutput
from askbridge.core.models import Status
from askbridge.core.surface import SurfaceWords
from askbridge.core.version import VERSION

Schema = dict[str, Any]
Answers = dict[int, tuple[str, Schema] | str]
"""Status code -> (description, body schema), or the JSON type of a body described no further."""

MODELS: list[tuple[type[BaseModel], JsonSchemaMode]] = [
    (Ask, "validation"),
    *((body, "serialization") for body in (StatusObject, QuestionList, EventList, Health)),
    (ErrorBody, "serialization"),
    (HookInput, "validation"),
    (ElicitationInput, "validation"),
    (HookOutput, "serialization"),
]
READ: tuple[type[BaseModel], ...] = (Ask, HookInput, ElicitationInput)
"""The models of request bodies; every other model is a body the API sends."""

ERRORS = {
    400: "the query or the body is malformed",
    401: "the API token is missing or wrong (only when ASKBRIDGE_API_TOKEN is set)",
    403: "a browser request from another site, or a Host that is not loopback on an open server",
    404: "no request has this request_id",
    408: "the body did not arrive in time",
    409: "the request_id was asked with other questions or another subject, or the request "
    "has already ended",
    413: "the body is larger than ASKBRIDGE_MAX_BODY_BYTES",
    415: "the body is not sent as application/json",
    422: "the ask breaks a rule; `error` is written for the agent's model to fix its call",
    502: "the platform could not be reached",
    503: "the database cannot serve for now (down, unreachable, full, or its SQLite file held by "
    "another process); `error` says which, and `Retry-After` when to try again",
}
GUARDS = (401, 403)
"""What every route under /v1/ may answer, whatever it does."""
STORE_DOWN = (503,)
"""What every route that reads or writes the database may answer."""


def openapi_document(words: SurfaceWords | None = None) -> Schema:
    """The document, its descriptions worded from the server's surfaces (`words`)."""
    words = words or SurfaceWords()
    refs, top = models_json_schema(MODELS, ref_template="#/components/schemas/{model}")
    schemas: Schema = top["$defs"]
    describe_question_rules(schemas)
    describe_surfaces(schemas[Ask.__name__], schemas, words)

    def ref(model: type[BaseModel]) -> Schema:
        mode: JsonSchemaMode = "validation" if model in READ else "serialization"
        found: Schema = refs[(model, mode)]
        return found

    return {
        "openapi": "3.1.0",
        "info": {
            "title": "askbridge agent API",
            "version": VERSION,
            "description": f"Ask people multiple-choice questions in {words.titles()} and read "
            "their answers. The agent WebSocket (`GET /v1/agent`) is described in "
            "docs/reference/websocket.md.",
        },
        "paths": _paths(ref),
        "components": {
            "schemas": schemas,
            "responses": {
                _response_name(code): {"description": text, "content": _json(ref(ErrorBody))}
                for code, text in ERRORS.items()
            },
            "securitySchemes": {
                "apiToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "ASKBRIDGE_API_TOKEN; without it the server listens on "
                    "loopback only and takes no token",
                }
            },
        },
        "security": [{"apiToken": []}],
    }


def _paths(ref: Callable[[type[BaseModel]], Schema]) -> Schema:
    status = ref(StatusObject)
    request_id = _parameter("request_id", "path", {"type": "string", "minLength": 1})
    return {
        "/healthz": {
            "get": {
                "operationId": "health",
                "summary": "Whether askbridge is up, and which surfaces it posts to",
                "security": [],
                "responses": _responses(
                    {200: ("up", ref(Health)), 503: ("a background loop stopped", ref(Health))}
                ),
            }
        },
        "/v1/openapi.json": {
            "get": _operation("openapi", "This document", {200: "object"}, store=False)
        },
        "/v1/schema": {
            "get": _operation(
                "askSchema", "The JSON schema of an ask", {200: "object"}, store=False
            )
        },
        "/v1/questions": {
            "post": _operation(
                "ask",
                "Ask: create a request, or read back the same one when it was already asked",
                {201: ("created and posted", status), 200: ("already asked", status)},
                errors=(400, 408, 409, 413, 415, 422, 502),
                requestBody={"required": True, "content": _json(ref(Ask))},
            ),
            "get": _operation(
                "listQuestions",
                "Requests, newest first",
                {200: ("the requests", ref(QuestionList))},
                errors=(400,),
                parameters=[
                    _parameter(
                        "status", "query", {"$ref": f"#/components/schemas/{Status.__name__}"}
                    ),
                    _parameter(
                        "limit",
                        "query",
                        {"type": "integer", "minimum": 1, "maximum": MAX_LIST, "default": 100},
                    ),
                ],
            ),
        },
        "/v1/questions/{request_id}": {
            "get": _operation(
                "getQuestion",
                "The status object; with `wait`, a long-poll that returns when the request ends",
                {200: ("the request", status)},
                errors=(400, 404),
                parameters=[
                    request_id,
                    _parameter(
                        "wait",
                        "query",
                        {"type": "number", "minimum": 0},
                        f"seconds to wait for the request to end; at most {MAX_WAIT_S:g} are "
                        "waited",
                    ),
                ],
            ),
            "delete": _operation(
                "withdraw",
                "Withdraw a waiting request",
                {200: ("withdrawn", status)},
                errors=(404, 409),
                parameters=[request_id],
            ),
        },
        "/v1/questions/{request_id}/events": {
            "get": _operation(
                "questionEvents",
                "The audit trail of one request",
                {200: ("its events", ref(EventList))},
                errors=(404,),
                parameters=[request_id],
            )
        },
        CLAUDE_CODE_PATH: {"post": _claude_code_hook(ref)},
        "/v1/events": {
            "get": _operation(
                "events",
                "The audit trail across requests",
                {200: ("the events", ref(EventList))},
                errors=(400, 404),
                parameters=[
                    _parameter("since", "query", {"type": "string", "format": "date-time"}),
                    _parameter(
                        "request_id", "query", {"type": "string"}, "only this request's events"
                    ),
                    _parameter(
                        "limit",
                        "query",
                        {"type": "integer", "minimum": 1, "maximum": MAX_EVENTS, "default": 1000},
                    ),
                ],
            ),
        },
        "/v1/audit/export": {"get": _audit_export()},
    }


def _audit_export() -> Schema:
    when = {"type": "string", "format": "date-time"}
    operation = _operation(
        "auditExport",
        "The audit log with its hash chain, as JSON lines: a header line "
        '({"askbridge_audit_export": {...filters}}), then each event (as in /v1/events, '
        "with prev_hash and hash), oldest first; `askbridge audit --verify` checks it",
        {},
        errors=(400, 404),
        parameters=[
            _parameter("request_id", "query", {"type": "string"}, "only this request's events"),
            _parameter("since", "query", when, "only events at or after this time"),
            _parameter("until", "query", when, "only events before this time"),
        ],
    )
    lines = {"application/x-ndjson": {"schema": {"type": "string"}}}
    operation["responses"]["200"] = {"description": "JSON lines", "content": lines}
    return operation


def _claude_code_hook(ref: Callable[[type[BaseModel]], Schema]) -> Schema:
    listed = {"type": "array", "items": {"type": "string"}}
    timeout = {
        "type": "number",
        "minimum": MIN_HOOK_TIMEOUT_S,
        "maximum": MAX_HOOK_TIMEOUT_S,
        "default": DEFAULT_HOOK_TIMEOUT_S,
    }
    return _operation(
        "claudeCodeHook",
        "Claude Code's HTTP hook (PreToolUse, PermissionRequest, Elicitation): ask, wait, "
        "answer with the hook output; the query string overrides the ASKBRIDGE_HOOK_* settings",
        {200: ("the hook output; without hookSpecificOutput it decides nothing", ref(HookOutput))},
        errors=(400, 408, 413, 415),
        parameters=[
            _parameter("target", "query", listed, "where to ask; repeat, or separate by commas"),
            _parameter(
                "answerer", "query", listed, "who may answer; repeat, or separate by commas"
            ),
            _parameter("quorum", "query", {"type": "integer", "minimum": 1}),
            _parameter("timeout", "query", timeout, "the hook's timeout in Claude Code's settings"),
            _parameter("on_timeout", "query", {"enum": ["ask", "deny"], "default": "ask"}),
        ],
        requestBody={
            "required": True,
            "content": _json({"oneOf": [ref(HookInput), ref(ElicitationInput)]}),
        },
    )


def _operation(
    operation_id: str,
    summary: str,
    answers: Answers,
    errors: tuple[int, ...] = (),
    *,
    store: bool = True,
    **more: Any,
) -> Schema:
    """`store`: the route reads or writes the database."""
    return {
        "operationId": operation_id,
        "summary": summary,
        **more,
        "responses": _responses(answers, (*errors, *GUARDS, *(STORE_DOWN if store else ()))),
    }


def _responses(answers: Answers, errors: tuple[int, ...] = ()) -> Schema:
    found: Schema = {}
    for code, answer in answers.items():
        text, schema = answer if isinstance(answer, tuple) else ("a JSON object", {"type": answer})
        found[str(code)] = {"description": text, "content": _json(schema)}
    for code in sorted(errors):
        found[str(code)] = {"$ref": f"#/components/responses/{_response_name(code)}"}
    return found


def _response_name(code: int) -> str:
    """401 -> Unauthorized, 415 -> UnsupportedMediaType."""
    return HTTPStatus(code).name.title().replace("_", "")


def _parameter(name: str, where: str, schema: Schema, description: str = "") -> Schema:
    parameter: Schema = {"name": name, "in": where, "required": where == "path", "schema": schema}
    if description:
        parameter["description"] = description
    return parameter


def _json(schema: Schema) -> Schema:
    return {"application/json": {"schema": schema}}
