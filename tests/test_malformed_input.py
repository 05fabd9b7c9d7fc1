"""Malformed input gets a 4xx JSON error or an error frame: never a 500, never a dead socket."""

from __future__ import annotations

import aiohttp

from askbridge.bots.service import Service
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
