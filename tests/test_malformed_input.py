"""Malformed input gets a 4xx JSON error or an error frame: never a 500, never a dead socket."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest
from yarl import URL

from askbridge.bots.service import Service
from tests.server_process import ServerProcess
from tests.test_agent_socket import ask_frame, receive, wait_until_waiting

JSON = {"Content-Type": "application/json"}


async def test_bodies_that_are_not_json_are_a_400(
    service: Service, http: aiohttp.ClientSession
) -> None:
    url = f"{service.url}/v1/questions"
    bodies = {
        "deep": b"[" * 5000 + b"]" * 5000,
        "deep object": b'{"a":' * 3000 + b"1" + b"}" * 3000,
        "bad utf-8": b'{"questions": "\xff\xfe"}',
    }
    for name, body in bodies.items():
        async with http.post(url, data=body, headers=JSON) as response:
            assert response.status == 400, name
            assert "not valid JSON" in (await response.json())["error"], name


async def test_a_malformed_frame_leaves_the_socket_working(
    service: Service, http: aiohttp.ClientSession
) -> None:
    async with http.ws_connect(f"{service.url}/v1/agent") as socket:
        await socket.send_str("[" * 5000 + "]" * 5000)
        await socket.send_json({"AskUserQuestion": "oops"})
        error = await receive(socket)
        assert "AskUserQuestion must be an object" in error["error"]
        assert await receive(socket) == "Interrupt"
        # The next valid ask on the same socket is taken.
        await socket.send_json(ask_frame("ask_after_garbage"))
        await wait_until_waiting(http, service.url, "ask_after_garbage")


QUESTION = [
    {
        "question": "Deploy now?",
        "header": "Deploy",
        "options": [{"label": "Yes", "description": ""}, {"label": "No", "description": ""}],
        "multiSelect": False,
    }
]
LONE = "\ud800"
"""Half of a UTF-16 pair: JSON may carry it escaped, UTF-8 cannot hold it."""


def form(**schema_properties: Any) -> dict[str, Any]:
    schema = {"type": "object", "properties": schema_properties}
    return {"form": {"message": "m", "requested_schema": schema}}


def quiet_in(tz: str) -> dict[str, Any]:
    ladder = {
        "steps": [{"after_s": 5}],
        "quiet_hours": {"tz": tz, "start": "22:00", "end": "07:00"},
    }
    return {"questions": QUESTION, "escalation": ladder}


@pytest.mark.parametrize(
    ("body", "location", "fragment"),
    [
        (quiet_in("Europe"), "escalation.quiet_hours.tz", "IANA time zone"),
        (quiet_in("Etc"), "escalation.quiet_hours.tz", "IANA time zone"),
        (quiet_in("x" * 300), "escalation.quiet_hours.tz", "IANA time zone"),
        (
            form(a={"type": "string", "format": []}),
            "form.requested_schema.properties.a.format",
            "must be one of",
        ),
        (
            {"questions": QUESTION, "tool": {"name": "Bash", "input": {"command": f"ls {LONE}"}}},
            "tool.input.command",
            "lone surrogate",
        ),
        (
            {"questions": QUESTION, "tool": {"name": "Bash", "input": {f"c{LONE}": "ls"}}},
            "tool.input",
            "lone surrogate",
        ),
        (
            {"questions": QUESTION, "tool": {"name": "Bash", "input": {}, "cwd": f"/{LONE}"}},
            "tool.cwd",
            "lone surrogate",
        ),
        (
            {"questions": QUESTION, "tool": {"name": f"Ba{LONE}sh", "input": {}}},
            "tool.name",
            "lone surrogate",
        ),
        (
            {"form": {"message": "m", "url": f"https://example.com/{LONE}"}},
            "form.url",
            "lone surrogate",
        ),
        (
            form(**{f"a{LONE}": {"type": "string"}}),
            "form.requested_schema.properties",
            "field name",
        ),
        (
            {**form(a={"type": "string"}), "on_timeout": {"content": {f"a{LONE}": "x"}}},
            "on_timeout",
            "",
        ),
    ],
)
async def test_an_ask_that_breaks_a_rule_is_a_422_that_names_it(
    service: Service, http: aiohttp.ClientSession, body: Any, location: str, fragment: str
) -> None:
    # json.dumps escapes the lone surrogates, as an agent's JSON would.
    url = f"{service.url}/v1/questions"
    async with http.post(url, data=json.dumps(body), headers=JSON) as response:
        assert response.status == 422
        assert response.content_type == "application/json"
        got = await response.json()
    assert any(
        d["location"].startswith(location) and fragment in d["message"] for d in got["details"]
    ), got


async def test_a_form_that_breaks_a_rule_gets_an_error_frame_and_its_cancel(
    service: Service, http: aiohttp.ClientSession
) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "format": []}}}
    frame = {"AskForm": {"request_id": "wsf1", "message": "m", "requested_schema": schema}}
    async with http.ws_connect(f"{service.url}/v1/agent") as socket:
        await socket.send_json(frame)
        error = await receive(socket)
        closing = await receive(socket)
    assert error["request_id"] == "wsf1"
    assert "requested_schema.properties.a.format: must be one of" in error["error"]
    assert closing == {"FormResponse": {"request_id": "wsf1", "action": "cancel"}}


async def test_a_ladder_the_query_string_breaks_gets_an_error_frame_and_interrupt(
    service: Service, http: aiohttp.ClientSession
) -> None:
    quiet = {"tz": "x" * 300, "start": "22:00", "end": "07:00"}
    ladder = json.dumps({"steps": [{"after_s": 5}], "quiet_hours": quiet})
    async with http.ws_connect(f"{service.url}/v1/agent", params={"escalation": ladder}) as socket:
        await socket.send_json(ask_frame("ws_tz"))
        error = await receive(socket)
        assert "escalation.quiet_hours.tz: must be an IANA time zone" in error["error"]
        assert await receive(socket) == "Interrupt"


REFUSED_BY_THE_PARSER = {
    "a URL over 8190 bytes": b"GET /v1/questions?" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n",
    "raw non-ASCII in the query": "GET /v1/questions?\u00e9 HTTP/1.1\r\n\r\n".encode(),
    **{
        f"Content-Encoding: {coding}": (
            f"POST /v1/questions HTTP/1.1\r\nContent-Encoding: {coding}\r\n"
            "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
        ).encode()
        for coding in ("br", "zstd")
    },
}
"""Requests aiohttp's own parser refuses, before any route sees them."""


async def test_a_request_the_http_parser_refuses_is_one_warning_line(
    server: ServerProcess,
) -> None:
    url = URL(await server.start())
    assert url.host is not None
    assert url.port is not None
    for what, request in REFUSED_BY_THE_PARSER.items():
        reader, writer = await asyncio.open_connection(url.host, url.port)
        writer.write(request.replace(b"\r\n", b"\r\nHost: 127.0.0.1\r\n", 1))
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), timeout=10)
        writer.close()
        assert answer.startswith(b"HTTP/1.0 400 "), what
    await server.stop()
    said = [line for line in server.log if "aiohttp.server" in line]
    assert len(said) == len(REFUSED_BY_THE_PARSER), server.log
    assert all(" WARNING " in line for line in said), said
    assert not any("Traceback" in line or " ERROR " in line for line in server.log), server.log
    assert "Got more than 8190 bytes" in said[0]
    assert "Can not decode content-encoding: brotli (br)" in said[2]
