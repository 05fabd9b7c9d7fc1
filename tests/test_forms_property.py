"""HTTP and the agent WebSocket accept and refuse exactly the same typed forms, in the same
words, and never fail on one.

Forms are drawn from MCP elicitation's schema subset (every kind of field, with and without
its keywords) with mutations: keywords outside the subset, nested objects, wrong types, bounds
the wrong way round, defaults that do not fit, choices without titles or repeated, too many
fields, lone surrogates (in annotations too), deadlines' content that does not fit. Each is
sent to one running server as `POST /v1/questions` and as an `AskForm` frame on `/v1/agent`:
both accept it (and give the form back as it was sent), or both refuse it with the same
`error` and `details`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from askbridge.bots.service import Service
from askbridge.core.forms import MAX_FIELDS
from tests.conftest import waiting_ids
from tests.test_ask_paths import brief, receive, withdraw_all

names = st.sampled_from(["ticket", "amount", "due", "ok", "team", "name", "Ärger", "a b"])
texts = st.sampled_from(["", "x", "Ticket", "café", "<@U1> *bold*", "a" * 80, "\ud800"])
numbers = st.one_of(
    st.integers(min_value=-(2**54), max_value=2**54),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)
values = st.one_of(st.none(), st.booleans(), numbers, texts, st.lists(texts, max_size=3))


@st.composite
def choices(draw: st.DrawFn) -> dict[str, Any]:
    picked = draw(st.lists(st.sampled_from(["eu", "us", "ap", "x" * 101, ""]), max_size=4))
    if draw(st.booleans()):
        return {"oneOf": [{"const": v, "title": v.upper() or "?"} for v in picked]}
    found: dict[str, Any] = {"enum": picked}
    if draw(st.booleans()):
        found["enumNames"] = [v.title() for v in picked][: draw(st.integers(0, len(picked)))]
    return found


@st.composite
def properties(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["string", "number", "integer", "boolean", "choice", "array"]))
    found: dict[str, Any] = {}
    if draw(st.booleans()):
        found["title"] = draw(texts)
    if draw(st.booleans()):
        found["description"] = draw(texts)
    if kind == "string":
        found["type"] = "string"
        if draw(st.booleans()):
            found["format"] = draw(st.sampled_from(["email", "uri", "date", "date-time", "ipv4"]))
        for key in ("minLength", "maxLength"):
            if draw(st.booleans()):
                found[key] = draw(st.integers(min_value=-1, max_value=3001))
    elif kind in ("number", "integer"):
        found["type"] = kind
        for key in ("minimum", "maximum"):
            if draw(st.booleans()):
                found[key] = draw(numbers)
    elif kind == "boolean":
        found["type"] = "boolean"
    elif kind == "choice":
        found.update({"type": "string", **draw(choices())})
    else:
        found.update({"type": "array", "items": {"type": "string", **draw(choices())}})
        for key in ("minItems", "maxItems"):
            if draw(st.booleans()):
                found[key] = draw(st.integers(min_value=0, max_value=5))
    if draw(st.integers(0, 3)) == 0:
        found["default"] = draw(values)
    return found


def _spoil(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    """One thing wrong with a schema (or, now and then, nothing)."""
    spoiled: dict[str, Any] = json.loads(json.dumps(schema))
    props = spoiled["properties"]
    name = next(iter(props))
    match draw(st.integers(0, 11)):
        case 0:
            props[name]["pattern"] = "^[0-9]+$"
        case 1:
            props[name] = {"type": "object", "properties": {}}
        case 2:
            props[name]["type"] = draw(st.sampled_from([None, 7, "null", ["string"]]))
        case 3:
            spoiled["required"] = draw(st.sampled_from([["nope"], "ticket", [7]]))
        case 4:
            for index in range(6):
                props[f"extra{index}"] = {"type": "boolean"}
        case 5:
            spoiled["properties"] = draw(st.sampled_from([{}, [], None]))
        case 6:
            spoiled["type"] = draw(st.sampled_from(["array", None]))
        case 7:
            spoiled["additionalProperties"] = False
        case 8:
            props[name]["default"] = draw(values)
        case 9:
            # Annotations are kept and given back as they came.
            spoiled[draw(st.sampled_from(["$comment", "title", "description"]))] = draw(texts)
        case 10:
            props[name][draw(st.sampled_from(["$comment", "examples"]))] = draw(texts)
        case _:
            pass
    return spoiled


@st.composite
def forms(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    """A form, perhaps spoiled, and a deadline's on_timeout for it (perhaps absent)."""
    fields = draw(st.dictionaries(names, properties(), min_size=1, max_size=MAX_FIELDS + 1))
    schema: dict[str, Any] = {"type": "object", "properties": fields}
    if draw(st.booleans()):
        schema["required"] = draw(st.lists(st.sampled_from(list(fields)), unique=True))
    if draw(st.booleans()):
        schema = _spoil(draw, schema)
    key = draw(st.sampled_from(["requested_schema", "requestedSchema"]))
    form: dict[str, Any] = {"message": draw(texts), key: schema}
    if draw(st.integers(0, 9)) == 0:
        form = draw(
            st.sampled_from(
                [
                    {"message": "Open it", "url": "https://example.com/x"},
                    {"message": "Open it", "url": "javascript:alert(1)"},
                    {"message": "Both", "url": "https://example.com/", key: schema},
                ]
            )
        )
    timeout = draw(
        st.sampled_from(
            [
                None,
                "decline",
                "expire",
                "later",
                {"content": {n: draw(values) for n in fields}},
                {"answers": {"x": "y"}},
            ]
        )
    )
    return form, timeout


@pytest.fixture
def counter() -> Iterator[int]:
    """Fresh request ids for every example of one test."""
    return itertools.count()


async def over_socket(
    http: aiohttp.ClientSession, url: str, query: dict[str, str], frame: dict[str, Any]
) -> dict[str, Any] | None:
    """The error frame the socket answers with, or None when it accepted the form."""
    async with http.ws_connect(f"{url}/v1/agent", params=query) as socket:
        await socket.send_json(frame)
        answer = asyncio.create_task(receive(socket))
        created = asyncio.create_task(waiting_ids(http, url))
        await asyncio.wait({answer, created}, return_when=asyncio.FIRST_COMPLETED)
        request_id = frame["AskForm"]["request_id"]
        if answer.done():
            created.cancel()
            cancel = {"FormResponse": {"request_id": request_id, "action": "cancel"}}
            assert await receive(socket) == cancel
            error: dict[str, Any] = answer.result()
            return error
        async with http.delete(f"{url}/v1/questions/{created.result()[0]}") as response:
            assert response.status == 200
        assert await answer == {"FormResponse": {"request_id": request_id, "action": "cancel"}}
        return None


@settings(
    max_examples=120,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(forms())
async def test_http_and_the_socket_accept_and_refuse_the_same_forms(
    service: Service,
    http: aiohttp.ClientSession,
    counter: Iterator[int],
    case: tuple[dict[str, Any], Any],
) -> None:
    form, timeout = case
    number = next(counter)
    settings_: dict[str, Any] = {"timeout_s": 600}
    if timeout is not None:
        settings_["on_timeout"] = timeout
    body = {"request_id": f"form_h{number}", "form": form, **settings_}
    note(f"HTTP body: {brief(body)}")
    async with http.post(f"{service.url}/v1/questions", json=body) as response:
        status, created = response.status, await response.json()
    await withdraw_all(http, service.url)
    event(f"HTTP {status}")
    assert status in (201, 422), created
    frame = {"AskForm": {"request_id": f"form_w{number}", **form}}
    if timeout is not None:
        frame["AskForm"]["on_timeout"] = timeout
    refused = await over_socket(http, service.url, {"timeout_s": "600"}, frame)
    if status == 201:
        sent = {"message": form["message"]}
        sent.update({k: v for k, v in form.items() if k == "url"})
        for key in ("requested_schema", "requestedSchema"):
            if key in form:
                sent["requested_schema"] = form[key]
        assert created["form"] == sent
        assert refused is None, refused
        return
    assert refused is not None, created
    assert refused["error"] == created["error"]
    assert refused.get("details") == created.get("details")
    assert created["error"].startswith("The form was rejected")
