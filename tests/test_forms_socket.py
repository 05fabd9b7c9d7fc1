"""A typed form over the agent WebSocket (`{"AskForm": …}` in, `{"FormResponse": …}` out) and
through the Python client's `ask_form`: the values arrive typed, a decline is a decline."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest

from askbridge.bots.service import Service
from askbridge.client import AskbridgeClient, FormAnswer, InvalidRequest
from askbridge.core.clock import ManualClock
from askbridge.core.intents import Decided, Decline, Fill
from tests.conftest import waiting_ids
from tests.test_forms_api import ADA, SCHEMA


async def receive(socket: aiohttp.ClientWebSocketResponse) -> Any:
    message = await socket.receive(timeout=10)
    assert message.type is aiohttp.WSMsgType.TEXT, message
    return json.loads(message.data)


async def waiting(http: aiohttp.ClientSession, service: Service, request_id: str) -> None:
    await waiting_ids(http, service.url, lambda ids: request_id in ids)


def form_frame(request_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "AskForm": {
            "request_id": request_id,
            "message": "Which ticket?",
            "requestedSchema": SCHEMA,
            **extra,
        }
    }


async def test_a_form_frame_is_answered_with_typed_content(
    service: Service, http: aiohttp.ClientSession
) -> None:
    async with http.ws_connect(f"{service.url}/v1/agent?quorum=1") as socket:
        await socket.send_json({"TextDelta": "Let me ask."})
        await socket.send_json(form_frame("form_ws1"))
        await waiting(http, service, "form_ws1")
        values = {"ticket": "12", "urgent": True, "due": "2027-01-31", "teams": ["web", "ops"]}
        assert isinstance(await service.broker.act("form_ws1", ADA, Fill(values)), Decided)
        frame = await receive(socket)
    assert frame == {
        "FormResponse": {
            "request_id": "form_ws1",
            "action": "accept",
            # A multi-choice in the schema's order, however it was picked.
            "content": {"ticket": 12, "urgent": True, "due": "2027-01-31", "teams": ["ops", "web"]},
        }
    }


async def test_decline_and_cancel_reach_the_agent_as_such(
    service: Service, http: aiohttp.ClientSession
) -> None:
    async with http.ws_connect(f"{service.url}/v1/agent?interrupt=tagged") as socket:
        await socket.send_json(form_frame("form_no"))
        await waiting(http, service, "form_no")
        await service.broker.act("form_no", ADA, Decline())
        assert await receive(socket) == {
            "FormResponse": {"request_id": "form_no", "action": "decline"}
        }
        await socket.send_json(form_frame("form_gone"))
        await waiting(http, service, "form_gone")
        async with http.delete(f"{service.url}/v1/questions/form_gone") as response:
            assert response.status == 200
        assert await receive(socket) == {
            "FormResponse": {"request_id": "form_gone", "action": "cancel"}
        }
        # Sent again after it ended: the stored outcome at once.
        await socket.send_json(form_frame("form_no"))
        assert await receive(socket) == {
            "FormResponse": {"request_id": "form_no", "action": "decline"}
        }


async def test_an_invalid_form_frame_is_told_why_and_cancelled(
    service: Service, http: aiohttp.ClientSession
) -> None:
    async with http.ws_connect(f"{service.url}/v1/agent") as socket:
        bad = {"type": "object", "properties": {"n": {"type": "object"}}}
        await socket.send_json(form_frame("form_bad", requestedSchema=bad))
        error = await receive(socket)
        assert error["request_id"] == "form_bad"
        assert error["error"].startswith("The form was rejected (1 problem)")
        assert error["details"][0]["location"] == "form.requested_schema.properties.n.type"
        assert await receive(socket) == {
            "FormResponse": {"request_id": "form_bad", "action": "cancel"}
        }
        await socket.send_json({"AskForm": "not an object"})
        assert (await receive(socket))["error"] == "AskForm must be an object"
        assert await receive(socket) == "Interrupt"


async def test_the_python_client_asks_a_form_and_gets_typed_content(
    service: Service, http: aiohttp.ClientSession
) -> None:
    async with AskbridgeClient(service.url) as client:
        asking = asyncio.create_task(
            client.ask_form("Which ticket?", SCHEMA, request_id="form_py", quorum=1)
        )
        await waiting(http, service, "form_py")
        await service.broker.act("form_py", ADA, Fill({"ticket": "99", "urgent": "no"}))
        answer = await asking
        assert isinstance(answer, FormAnswer)
        assert (answer.action, answer.content) == ("accept", {"ticket": 99, "urgent": False})
        assert answer.status_object["answered_by"]["name"] == "Ada"

        declining = asyncio.create_task(
            client.ask_form("Open the dashboard", url="https://example.com/d", request_id="u_1")
        )
        await waiting(http, service, "u_1")
        await service.broker.act("u_1", ADA, Decline())
        assert (await declining).action == "decline"

        with pytest.raises(InvalidRequest, match="The form was rejected") as refused:
            await client.ask_form("Which ticket?", {"type": "object", "properties": {}})
        assert refused.value.status == 422


async def test_the_frame_says_what_the_deadline_gives(
    service: Service, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    async with http.ws_connect(f"{service.url}/v1/agent?timeout_s=30") as socket:
        content = {"ticket": 1, "urgent": False}
        await socket.send_json(form_frame("form_t1", on_timeout={"content": content}))
        await socket.send_json(form_frame("form_t2", on_timeout="decline"))
        await waiting_ids(http, service.url, lambda ids: {"form_t1", "form_t2"} <= set(ids))
        await clock.advance(31)
        frames = [await receive(socket), await receive(socket)]
    assert sorted(frames, key=lambda f: f["FormResponse"]["request_id"]) == [
        {"FormResponse": {"request_id": "form_t1", "action": "accept", "content": content}},
        {"FormResponse": {"request_id": "form_t2", "action": "decline"}},
    ]
