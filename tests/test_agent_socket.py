"""`/v1/agent`: the agent framework's own frames in and out."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import aiohttp

from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from tests.conftest import DATABASE, EXPECTED, StartService, waiting_ids
from tests.web_person import answer_on_web


def ask_frame(request_id: str) -> dict[str, Any]:
    body = copy.deepcopy(DATABASE)
    body["request_id"] = request_id
    return {"AskUserQuestion": body}


async def wait_until_waiting(http: aiohttp.ClientSession, url: str, request_id: str) -> None:
    await waiting_ids(http, url, lambda ids: request_id in ids)


async def receive(socket: aiohttp.ClientWebSocketResponse) -> Any:
    message = await socket.receive(timeout=10)
    assert message.type is aiohttp.WSMsgType.TEXT, message
    return json.loads(message.data)


async def test_question_in_response_out(service: Service, http: aiohttp.ClientSession) -> None:
    async with http.ws_connect(f"{service.url}/v1/agent") as socket:
        await socket.send_json({"TextDelta": "Let me ask you something."})
        await socket.send_json({"ToolStart": {"name": "AskUserQuestion"}})
        await socket.send_str("not json at all")
        await socket.send_json(ask_frame("ask_ws1"))
        await wait_until_waiting(http, service.url, "ask_ws1")
        picks = {"Database": ["PostgreSQL"], "Features": ["Caching", "Metrics"]}
        await answer_on_web(http, service.url, "ask_ws1", picks)
        frame = await receive(socket)
    assert frame == {"UserQuestionResponse": {"request_id": "ask_ws1", "answers": EXPECTED}}


async def test_cancel_sends_interrupt(service: Service, http: aiohttp.ClientSession) -> None:
    async with http.ws_connect(f"{service.url}/v1/agent") as socket:
        await socket.send_json(ask_frame("ask_ws2"))
        await wait_until_waiting(http, service.url, "ask_ws2")
        await answer_on_web(http, service.url, "ask_ws2", {}, action="cancel")
        assert await receive(socket) == "Interrupt"


async def test_expiry_sends_interrupt(
    service: Service, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    async with http.ws_connect(f"{service.url}/v1/agent?timeout_s=30") as socket:
        await socket.send_json(ask_frame("ask_ws3"))
        await wait_until_waiting(http, service.url, "ask_ws3")
        await clock.advance(31)
        assert await receive(socket) == "Interrupt"


async def test_invalid_question_gets_an_error_then_interrupt(
    service: Service, http: aiohttp.ClientSession
) -> None:
    frame = ask_frame("ask_ws4")
    frame["AskUserQuestion"]["questions"][0]["options"] = []
    async with http.ws_connect(f"{service.url}/v1/agent") as socket:
        await socket.send_json(frame)
        error = await receive(socket)
        assert error["request_id"] == "ask_ws4"
        assert "questions[0].options: must hold 2-4 options, got 0" in error["error"]
        assert await receive(socket) == "Interrupt"


async def test_reconnecting_agent_gets_the_stored_outcome(
    service: Service, http: aiohttp.ClientSession
) -> None:
    async with http.ws_connect(f"{service.url}/v1/agent") as socket:
        await socket.send_json(ask_frame("ask_ws5"))
        await wait_until_waiting(http, service.url, "ask_ws5")
    # The agent went away; someone answers meanwhile.
    picks = {"Database": ["SQLite"], "Features": ["Logging"]}
    await answer_on_web(http, service.url, "ask_ws5", picks)
    async with http.ws_connect(f"{service.url}/v1/agent") as socket:
        await socket.send_json(ask_frame("ask_ws5"))
        frame = await asyncio.wait_for(receive(socket), 5)
    assert frame["UserQuestionResponse"]["answers"] == {
        "Database": "SQLite",
        "Features": "Logging",
    }


async def test_target_from_the_query_string(service: Service, http: aiohttp.ClientSession) -> None:
    async with http.ws_connect(f"{service.url}/v1/agent?target=slack:C0123") as socket:
        await socket.send_json(ask_frame("ask_ws6"))
        error = await receive(socket)
        assert "set SLACK_BOT_TOKEN" in error["error"]
        assert await receive(socket) == "Interrupt"


PROMPT = {
    "PermissionRequest": {"tool_name": "Bash", "action": "run a command", "input": {"cmd": "ls"}}
}


async def test_tagged_interrupts_name_their_request(
    service: Service, http: aiohttp.ClientSession
) -> None:
    url = f"{service.url}/v1/agent?interrupt=tagged"
    async with http.ws_connect(url) as socket:
        await socket.send_json(ask_frame("ask_tag1"))
        await socket.send_json(ask_frame("ask_tag2"))
        await wait_until_waiting(http, service.url, "ask_tag2")
        await answer_on_web(http, service.url, "ask_tag2", {}, action="cancel")
        assert await receive(socket) == {"Interrupt": {"request_id": "ask_tag2"}}
        async with http.delete(f"{service.url}/v1/questions/ask_tag1") as response:
            assert response.status == 200
        assert await receive(socket) == {"Interrupt": {"request_id": "ask_tag1"}}


async def waiting_prompt(http: aiohttp.ClientSession, url: str) -> dict[str, Any]:
    """The one waiting permission prompt, once there is one."""
    since = 0
    while True:
        async with http.get(f"{url}/v1/questions?status=waiting") as response:
            found = [
                q
                for q in (await response.json())["questions"]
                if q["request_id"].startswith("perm_")
            ]
        if found:
            return dict(found[0])
        async with http.get(f"{url}/web/changes?since={since}") as response:
            since = (await response.json())["version"]


async def test_a_prompt_whose_agent_left_is_withdrawn(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service(permission_grace_s=0.2)
    async with http.ws_connect(f"{service.url}/v1/agent") as socket:
        await socket.send_json(PROMPT)
        left = await waiting_prompt(http, service.url)
    async with http.get(f"{service.url}/v1/questions/{left['request_id']}?wait=10") as response:
        assert (await response.json())["status"] == "withdrawn"


async def test_an_agent_that_comes_back_takes_its_prompt_over(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service(permission_grace_s=30)
    async with http.ws_connect(f"{service.url}/v1/agent") as socket:
        await socket.send_json(PROMPT)
        left = await waiting_prompt(http, service.url)
    async with http.ws_connect(f"{service.url}/v1/agent") as socket:
        await socket.send_json(PROMPT)
        await answer_on_web(http, service.url, left["request_id"], {"Permission": ["Allow once"]})
        answer = await receive(socket)
    assert answer["PermissionResponse"]["allowed"] is True
    async with http.get(f"{service.url}/v1/questions?status=waiting") as response:
        assert (await response.json())["questions"] == []


async def test_approval_and_escalation_fields_from_the_query_string(
    service: Service, http: aiohttp.ClientSession
) -> None:
    ladder = json.dumps([{"after_s": 60, "answerers": ["web:bob"]}])
    query = {
        "requested_by": "web:alice",
        "no_self_approval": "true",
        "escalation": ladder,
        "answerers": "web:alice,web:carol",
    }
    async with http.ws_connect(f"{service.url}/v1/agent", params=query) as socket:
        await socket.send_json(ask_frame("ask_ws_fields"))
        await wait_until_waiting(http, service.url, "ask_ws_fields")
        async with http.get(f"{service.url}/v1/questions/ask_ws_fields") as response:
            status = await response.json()
        assert status["requested_by"] == "web:alice"
        assert status["escalate_at"] is not None
        picks = {"Database": ["PostgreSQL"], "Features": ["Caching"]}
        refused, page = await answer_on_web(http, service.url, "ask_ws_fields", picks, name="alice")
        assert refused == 403, page

    # A ladder that is not JSON is refused as over HTTP, naming the field.
    async with http.ws_connect(
        f"{service.url}/v1/agent", params={"escalation": "[{after_s: 60"}
    ) as socket:
        await socket.send_json(ask_frame("ask_ws_bad_ladder"))
        error = await receive(socket)
        assert "escalation" in error["error"]
        assert await receive(socket) == "Interrupt"


async def test_a_denial_carries_its_reason_only_on_a_connection_that_asks_for_it(
    service: Service, http: aiohttp.ClientSession
) -> None:
    reason = "use the staging database <!channel>"
    async with http.ws_connect(f"{service.url}/v1/agent?reasons=true") as socket:
        await socket.send_json(PROMPT)
        asked = await waiting_prompt(http, service.url)
        assert asked["allow_notes"] is True
        await answer_on_web(
            http, service.url, asked["request_id"], {"Permission": ["Deny"]}, note=reason
        )
        answer = await receive(socket)
    assert answer == {
        "PermissionResponse": {
            "tool_name": "Bash",
            "allowed": False,
            "remember": False,
            "reason": f"Denied by Ada: {reason}",
        }
    }
    # The framework's own frame, exactly, for an agent that did not ask.
    async with http.ws_connect(f"{service.url}/v1/agent") as socket:
        await socket.send_json(PROMPT)
        asked = await waiting_prompt(http, service.url)
        await answer_on_web(
            http, service.url, asked["request_id"], {"Permission": ["Deny"]}, note=reason
        )
        answer = await receive(socket)
    assert answer == {
        "PermissionResponse": {"tool_name": "Bash", "allowed": False, "remember": False}
    }
    async with http.get(f"{service.url}/v1/questions/{asked['request_id']}") as response:
        assert (await response.json())["notes"] == {"Permission": reason}


async def test_an_allowed_or_cancelled_prompt_says_so_on_a_connection_that_asks(
    service: Service, http: aiohttp.ClientSession
) -> None:
    async with http.ws_connect(f"{service.url}/v1/agent?reasons=true") as socket:
        await socket.send_json(PROMPT)
        asked = await waiting_prompt(http, service.url)
        await answer_on_web(http, service.url, asked["request_id"], {"Permission": ["Allow once"]})
        allowed = await receive(socket)
        await socket.send_json(PROMPT)
        asked = await waiting_prompt(http, service.url)
        await answer_on_web(http, service.url, asked["request_id"], {}, action="cancel")
        cancelled = await receive(socket)
    assert "reason" not in allowed["PermissionResponse"]
    assert allowed["PermissionResponse"]["allowed"] is True
    assert cancelled["PermissionResponse"]["reason"] == "Interrupted by Ada"
