"""Team approvals on the web page and the agent WebSocket: who may answer, quorum, deadlines,
permission prompts, and the audit trail that tells each story."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
from typing import Any

import aiohttp
import pytest

from askbridge.bots.service import Service
from askbridge.client import subject_matches
from askbridge.core.clock import ManualClock
from tests.conftest import DATABASE, DEPLOY, story, waiting_ids
from tests.server_process import ServerProcess
from tests.web_person import answer_on_web


async def create(http: aiohttp.ClientSession, url: str, **fields: Any) -> dict[str, Any]:
    body = {"request_id": "ask_deploy", "questions": [DEPLOY], **fields}
    async with http.post(f"{url}/v1/questions", json=body) as response:
        created: dict[str, Any] = await response.json()
        assert response.status == 201, created
    return created


async def status(http: aiohttp.ClientSession, url: str, wait: float = 0) -> dict[str, Any]:
    async with http.get(f"{url}/v1/questions/ask_deploy?wait={wait}") as response:
        found: dict[str, Any] = await response.json()
    return found


async def test_only_answerers_may_answer(service: Service, http: aiohttp.ClientSession) -> None:
    await create(http, service.url, answerers=["web:Grace"])
    code, page = await answer_on_web(http, service.url, "ask_deploy", {"Deploy": ["Approve"]})
    assert code == 403
    assert "Only these people may answer this question: Grace." in page
    found = await status(http, service.url)
    assert found["status"] == "waiting"
    assert found["votes"] == []

    code, _ = await answer_on_web(
        http, service.url, "ask_deploy", {"Deploy": ["Reject"]}, name="Grace"
    )
    assert code == 200
    found = await status(http, service.url)
    assert found["answers"] == {"Deploy": "Reject"}
    assert found["answered_by"]["name"] == "Grace"
    assert await story(http, service.url, "ask_deploy") == [
        ("created", None),
        ("posted", None),
        ("denied", "Ada"),
        ("vote", "Grace"),
        ("answered", "Grace"),
    ]


async def test_quorum_of_two(service: Service, http: aiohttp.ClientSession) -> None:
    await create(http, service.url, quorum=2)
    agent = asyncio.create_task(status(http, service.url, wait=60))

    code, page = await answer_on_web(http, service.url, "ask_deploy", {"Deploy": ["Approve"]})
    assert code == 200
    assert "Your vote is counted: 1 of 2 matching votes so far, for Deploy: Approve." in page
    assert "Approve — 1/2 (Ada)" in page
    assert "Needs 2 matching votes." in page

    # A different answer from someone else does not end it.
    _, page = await answer_on_web(
        http, service.url, "ask_deploy", {"Deploy": ["Reject"]}, name="Lin"
    )
    assert "Your vote is counted: 1 of 2 matching votes so far, for Deploy: Reject." in page
    assert (await status(http, service.url))["status"] == "waiting"
    assert not agent.done()

    # Lin changes their mind: now two people agree.
    await answer_on_web(http, service.url, "ask_deploy", {"Deploy": ["Approve"]}, name="Lin")
    final = await agent
    assert final["status"] == "answered"
    assert final["answers"] == {"Deploy": "Approve"}
    assert sorted((v["voter"]["name"], v["answers"]["Deploy"]) for v in final["votes"]) == [
        ("Ada", "Approve"),
        ("Lin", "Approve"),
    ]
    kinds = [kind for kind, _ in await story(http, service.url, "ask_deploy")]
    assert kinds == ["created", "posted", "vote", "vote", "vote", "answered"]


async def test_the_deadline_gives_the_default_answers(
    service: Service, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    created = await create(
        http, service.url, timeout_s=300, on_timeout={"answers": {"Deploy": "Reject"}}
    )
    assert created["on_timeout"] == {"answers": {"Deploy": "Reject"}}
    agent = asyncio.create_task(status(http, service.url, wait=60))
    await clock.advance(300)
    final = await agent
    assert final["status"] == "answered"
    assert final["answers"] == {"Deploy": "Reject"}
    assert final["decided_by"] == "timeout"
    assert "answered_by" not in final
    async with http.get(f"{service.url}/q/ask_deploy") as response:
        assert "Decided by timeout" in await response.text()


async def test_the_deadline_expires_by_default(
    service: Service, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    await create(http, service.url, timeout_s=300, on_timeout="expire")
    agent = asyncio.create_task(status(http, service.url, wait=60))
    await clock.advance(301)
    final = await agent
    assert final["status"] == "expired"
    assert final["error"] == "Timed out waiting for an answer"


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"on_timeout": {"answers": {"Deploy": "Maybe"}}}, "on_timeout.answers: must answer"),
        ({"on_timeout": "later"}, 'on_timeout: must be "expire"'),
        ({"answerers": ["bob"]}, "answerers[0]: must be slack:U…"),
        ({"quorum": 0}, "quorum: must be a whole number from 1 to 50"),
        ({"answerers": ["web:a"], "quorum": 2}, "2 votes can never come from 1 answerer;"),
        (
            {"answerers": ["web:a", "web:b"], "quorum": 3},
            "3 votes can never come from 2 answerers;",
        ),
        ({"remind_after_s": -5}, "remind_after_s: must be a positive number"),
    ],
)
async def test_policy_mistakes_are_422(
    service: Service, http: aiohttp.ClientSession, fields: dict[str, Any], fragment: str
) -> None:
    body = {"questions": [DEPLOY], **fields}
    async with http.post(f"{service.url}/v1/questions", json=body) as response:
        assert response.status == 422
        assert fragment in (await response.json())["error"]


async def test_a_half_reached_quorum_survives_a_crash(
    server: ServerProcess, http: aiohttp.ClientSession
) -> None:
    url = await server.start()
    await create(http, url, quorum=2)
    await answer_on_web(http, url, "ask_deploy", {"Deploy": ["Approve"]}, name="Ada")
    await server.kill()
    url = await server.start(port=server.port)
    found = await status(http, url)
    assert [v["voter"]["name"] for v in found["votes"]] == ["Ada"]
    await answer_on_web(http, url, "ask_deploy", {"Deploy": ["Approve"]}, name="Lin")
    final = await status(http, url)
    assert final["status"] == "answered"
    assert {v["voter"]["name"] for v in final["votes"]} == {"Ada", "Lin"}


PROMPT = {
    "PermissionRequest": {
        "tool_name": "Bash",
        "action": "run a shell command",
        "input": {"command": "rm -rf build/ && make release"},
        "details": "in /srv/app",
    }
}


async def answer_permission(
    service: Service,
    http: aiohttp.ClientSession,
    choice: str | None,
    query: str = "",
    clock: ManualClock | None = None,
) -> Any:
    async with http.ws_connect(f"{service.url}/v1/agent{query}") as socket:
        await socket.send_json({"TextDelta": "I need to run a command."})
        await socket.send_json(PROMPT)
        (request_id,) = await waiting_ids(http, service.url)
        async with http.get(f"{service.url}/v1/questions/{request_id}") as response:
            asked = await response.json()
        # The question names the call; the web page shows its command as a command.
        assert (
            asked["questions"][0]["question"] == "Allow Bash to run a shell command?\nin /srv/app"
        )
        async with http.get(f"{service.url}/q/{request_id}") as response:
            page = await response.text()
        assert "<pre class='code'>rm -rf build/ &amp;&amp; make release</pre>" in page
        if clock is not None:
            await clock.advance(31)
        if choice is not None:
            await answer_on_web(http, service.url, request_id, {"Permission": [choice]})
        message = await socket.receive(timeout=10)
        return json.loads(message.data)


@pytest.mark.parametrize(
    ("choice", "allowed", "remember"),
    [("Allow once", True, False), ("Always allow", True, True), ("Deny", False, False)],
)
async def test_permission_prompts(
    service: Service, http: aiohttp.ClientSession, choice: str, allowed: bool, remember: bool
) -> None:
    response = await answer_permission(service, http, choice)
    assert response == {
        "PermissionResponse": {"tool_name": "Bash", "allowed": allowed, "remember": remember}
    }


async def test_a_permission_prompt_nobody_answers_is_denied(
    service: Service, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    response = await answer_permission(service, http, None, "?timeout_s=30", clock)
    assert response == {
        "PermissionResponse": {"tool_name": "Bash", "allowed": False, "remember": False}
    }


async def test_permission_prompts_follow_the_connection_policy(
    service: Service, http: aiohttp.ClientSession
) -> None:
    query = "?answerers=web:Grace,web:Lin&quorum=2"
    async with http.ws_connect(f"{service.url}/v1/agent{query}") as socket:
        await socket.send_json(PROMPT)
        (request_id,) = await waiting_ids(http, service.url)
        picks = {"Permission": ["Allow once"]}
        code, _ = await answer_on_web(http, service.url, request_id, picks, name="Mallory")
        assert code == 403
        await answer_on_web(http, service.url, request_id, picks, name="Grace")
        await answer_on_web(http, service.url, request_id, picks, name="Lin")
        message = await socket.receive(timeout=10)
    assert json.loads(message.data)["PermissionResponse"]["allowed"] is True


async def test_the_audit_endpoint_filters_by_time_and_request(
    service: Service, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    body = copy.deepcopy(DATABASE)
    async with http.post(f"{service.url}/v1/questions", json=body) as response:
        assert response.status == 201
    await clock.advance(60)
    await create(http, service.url)
    async with http.get(f"{service.url}/v1/events?since=2030-01-01T00:00:30Z") as response:
        events = (await response.json())["events"]
    assert {e["request_id"] for e in events} == {"ask_deploy"}
    async with http.get(f"{service.url}/v1/events?request_id=ask_db") as response:
        assert [e["kind"] for e in (await response.json())["events"]] == ["created", "posted"]
    async with http.get(f"{service.url}/v1/events?since=yesterday") as response:
        assert response.status == 400


async def test_a_permission_prompt_whose_input_is_a_text_is_bound_to_it(
    service: Service, http: aiohttp.ClientSession
) -> None:
    command = "rm -rf build/ && make release"
    prompt = {"PermissionRequest": {**PROMPT["PermissionRequest"], "input": command}}
    async with http.ws_connect(f"{service.url}/v1/agent") as socket:
        await socket.send_json(prompt)
        (request_id,) = await waiting_ids(http, service.url)
        await answer_on_web(http, service.url, request_id, {"Permission": ["Allow once"]})
        message = await socket.receive(timeout=10)
    assert json.loads(message.data)["PermissionResponse"]["allowed"] is True
    async with http.get(f"{service.url}/v1/questions/{request_id}") as response:
        decision = await response.json()
    # The RFC 8785 canonical JSON of a text is the JSON string.
    expected = hashlib.sha256(json.dumps(command).encode()).hexdigest()
    assert decision["subject_sha256"] == expected
    assert subject_matches(decision, command)
    assert not subject_matches(decision, command + " && deploy")
