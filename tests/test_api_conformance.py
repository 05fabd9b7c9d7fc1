"""schemathesis against a real askbridge server: the API keeps to /v1/openapi.json.

Every operation gets generated requests, valid and invalid, with a fixed seed and a bounded
number of examples; each answer must be no 5xx, a documented status code and content type,
and a body that validates against the document's schemas (which come from the models the
routes send). Inputs that once made a 500 are sent as explicit cases through the same checks.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest
import schemathesis
from schemathesis import Case, HookContext
from schemathesis.checks import (
    content_type_conformance,
    ignored_auth,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from askbridge.bots.service import Service
from askbridge.core.api.openapi import openapi_document
from askbridge.core.hooks.claude_code import CLAUDE_CODE_PATH
from tests.conftest import DEPLOY, settings_for
from tests.stores import database_url

T = TypeVar("T")

TOKEN = "conformance-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    # The routes that declare the bearer token refuse a request without it.
    ignored_auth,
]
SETTINGS = {
    "seed": 20261129,
    "generation": {"max-examples": 25, "database": "none"},
    # Each call stands alone; the stateful phase, which chains calls, is left out for time.
    "phases": {"stateful": {"enabled": False}},
}


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """askbridge with a token on each store, on its own event loop in a thread: schemathesis
    calls it synchronously from the test."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="askbridge-conformance")
    thread.start()

    def run(step: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(step, loop).result(30)

    folder = tmp_path_factory.mktemp(request.param)
    database = database_url(request.param, folder)
    try:
        url = run(database.__aenter__())
        service = Service(settings_for(folder, database_url=url, api_token=TOKEN))
        run(service.start())
        try:
            yield service.url
        finally:
            run(service.stop())
            run(database.__aexit__(None, None, None))
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()


api = schemathesis.openapi.from_dict(
    openapi_document(), config=schemathesis.Config.from_dict(SETTINGS)
)


@api.hook
def map_query(context: HookContext, query: dict[str, Any] | None) -> dict[str, Any] | None:
    # A long-poll on a waiting request would hold the run for up to 300 s; a tenth of a second
    # tells the same.
    if query and isinstance(query.get("wait"), int | float) and query["wait"] > 0.1:
        query["wait"] = 0.1
    return query


@api.exclude(path=CLAUDE_CODE_PATH).parametrize()
def test_every_answer_is_documented_and_conforms(case: Case[Any], server_url: str) -> None:
    case.call_and_validate(base_url=server_url, headers=AUTH, checks=CHECKS)


HOOK_INPUT = {
    "session_id": "s",
    "cwd": "/work/app",
    "hook_event_name": "PreToolUse",
    "tool_name": "AskUserQuestion",
    "tool_input": {"questions": [DEPLOY]},
    "tool_use_id": "toolu_1",
}
HOOK_CASES: dict[str, tuple[dict[str, Any] | bytes, dict[str, str], int]] = {
    "a question where no surface is": (HOOK_INPUT, {"target": "nowhere:0"}, 200),
    "questions askbridge cannot show": (
        {**HOOK_INPUT, "tool_input": {"questions": []}},
        {},
        200,
    ),
    "the permission prompt after a question": (
        {**HOOK_INPUT, "hook_event_name": "PermissionRequest"},
        {},
        200,
    ),
    "another hook event": ({**HOOK_INPUT, "hook_event_name": "Stop"}, {}, 400),
    "no tool input": ({k: v for k, v in HOOK_INPUT.items() if k != "tool_input"}, {}, 400),
    "a timeout too short": (HOOK_INPUT, {"timeout": "1"}, 400),
    "a cwd that is half a character": (
        {
            **HOOK_INPUT,
            "hook_event_name": "PermissionRequest",
            "tool_name": "Bash",
            "tool_input": {"command": "ls"},
            "cwd": "/\ud800",
        },
        {},
        200,
    ),
    "not JSON": (b"{", {}, 400),
}
"""Claude Code's hook waits for a person, so it gets these cases instead of generated ones:
each answers at once."""


@pytest.mark.parametrize("name", HOOK_CASES)
def test_claude_code_hook_answers_conform(server_url: str, name: str) -> None:
    body, query, status = HOOK_CASES[name]
    operation = api[CLAUDE_CODE_PATH]["POST"]
    case = operation.Case(body=body, query=query, media_type="application/json")
    response = case.call_and_validate(base_url=server_url, headers=AUTH, checks=CHECKS)
    assert response.status_code == status, response.text


def question(**fields: Any) -> dict[str, Any]:
    return {**DEPLOY, **fields}


DEPLOY_JSON = json.dumps([DEPLOY]).encode()
ONCE_A_500: dict[str, tuple[dict[str, Any] | bytes, int]] = {
    # Python's JSON parser reads NaN and Infinity (which requests will not send): raw bytes.
    "NaN timeout": (b'{"timeout_s": NaN, "questions": ' + DEPLOY_JSON + b"}", 422),
    "infinite reminder": (b'{"remind_after_s": Infinity, "questions": ' + DEPLOY_JSON + b"}", 422),
    "1e308 reminder": ({"questions": [DEPLOY], "remind_after_s": 1e308}, 422),
    "30-digit reminder": ({"questions": [DEPLOY], "remind_after_s": 10**30}, 422),
    "30-digit quorum": ({"questions": [DEPLOY], "quorum": 10**30}, 422),
    "5000-digit quorum": (b'{"questions": [], "quorum": ' + b"9" * 5000 + b"}", 400),
    "lone surrogate question": ({"questions": [question(question="Deploy \ud800?")]}, 422),
    "lone surrogate header": ({"questions": [question(header="\udfff")]}, 422),
    "lone surrogate label": (
        {"questions": [question(options=[{"label": "\ud83d"}, {"label": "Reject"}])]},
        422,
    ),
    "lone surrogate context": ({"questions": [DEPLOY], "context": "\udc00"}, 422),
    "lone surrogate request_id": ({"questions": [DEPLOY], "request_id": "\ud800"}, 422),
    "20000 targets": ({"questions": [DEPLOY], "target": ["web"] * 20_000}, 422),
    "nested 5000 deep": (b"[" * 5000 + b"]" * 5000, 400),
    "object nested 3000 deep": (b'{"a":' * 3000 + b"1" + b"}" * 3000, 400),
    "invalid UTF-8": (b'{"questions": "\xff\xfe"}', 400),
    "a folder of zones as the quiet hours' zone": (
        {
            "questions": [DEPLOY],
            "escalation": {
                "steps": [{"after_s": 5}],
                "quiet_hours": {"tz": "Europe", "start": "22:00", "end": "07:00"},
            },
        },
        422,
    ),
    "a list as a field's format": (
        {
            "form": {
                "message": "m",
                "requested_schema": {
                    "type": "object",
                    "properties": {"a": {"type": "string", "format": []}},
                },
            }
        },
        422,
    ),
    "lone surrogate in a tool's input": (
        {"questions": [DEPLOY], "tool": {"name": "Bash", "input": {"command": "ls \ud800"}}},
        422,
    ),
    "lone surrogate in a field's name": (
        {
            "form": {
                "message": "m",
                "requested_schema": {
                    "type": "object",
                    "properties": {"a\ud800": {"type": "string"}},
                },
            }
        },
        422,
    ),
}
"""Bodies of POST /v1/questions that made a 500 before the hardening of issue 9."""


@pytest.mark.parametrize("name", ONCE_A_500)
def test_bodies_that_once_made_a_500_conform(server_url: str, name: str) -> None:
    body, status = ONCE_A_500[name]
    case = api["/v1/questions"]["POST"].Case(body=body, media_type="application/json")
    response = case.call_and_validate(base_url=server_url, headers=AUTH, checks=CHECKS)
    assert response.status_code == status, response.text


ODD_QUERIES: dict[str, tuple[str, dict[str, str], dict[str, str], int]] = {
    "5000-digit limit": ("/v1/questions", {}, {"limit": "9" * 5000}, 400),
    "NUL in the request_id": ("/v1/questions/{request_id}", {"request_id": "\x00"}, {}, 404),
    "NUL in events' request_id": ("/v1/events", {}, {"request_id": "\x00"}, 404),
    "NaN wait": ("/v1/questions/{request_id}", {"request_id": "x"}, {"wait": "nan"}, 400),
    # Beyond the years UTC holds: refused, naming the parameter, as the audit export refuses it.
    "since the end of time": ("/v1/events", {}, {"since": "9999-12-31T23:59:59-23:59"}, 400),
    "export since the end of time": (
        "/v1/audit/export",
        {},
        {"since": "9999-12-31T23:59:59-01:00"},
        400,
    ),
    "export until the start of time": (
        "/v1/audit/export",
        {},
        {"until": "0001-01-01T00:00:00+01:00"},
        400,
    ),
}
"""Path and query parameters that made a 500 on some store, or might."""


@pytest.mark.parametrize("name", ODD_QUERIES)
def test_odd_parameters_conform(server_url: str, name: str) -> None:
    path, path_parameters, query, status = ODD_QUERIES[name]
    case = api[path]["GET"].Case(path_parameters=path_parameters, query=query)
    response = case.call_and_validate(base_url=server_url, headers=AUTH, checks=CHECKS)
    assert response.status_code == status, response.text
