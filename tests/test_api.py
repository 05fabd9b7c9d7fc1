"""The agent API over real HTTP against a running server."""

from __future__ import annotations

import asyncio
import base64
import copy
from typing import Any

import aiohttp
import pytest

from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from askbridge.core.errors import StartupError
from askbridge.core.permissions import permission_questions
from askbridge.core.version import VERSION
from tests.conftest import DATABASE, EXPECTED, StartService
from tests.web_person import answer_on_web


def ask(request_id: str = "ask_db", **extra: Any) -> dict[str, Any]:
    body = copy.deepcopy(DATABASE)
    body["request_id"] = request_id
    body.update(extra)
    return body


async def post(http: aiohttp.ClientSession, service: Service, body: Any) -> tuple[int, Any]:
    async with http.post(f"{service.url}/v1/questions", json=body) as response:
        return response.status, await response.json()


async def test_create_answer_and_long_poll(service: Service, http: aiohttp.ClientSession) -> None:
    status, created = await post(http, service, ask(context="deploy-bot: choosing a store"))
    assert status == 201
    assert created["status"] == "waiting"
    assert created["target"] == "web"
    assert created["context"] == "deploy-bot: choosing a store"

    poll = asyncio.create_task(http.get(f"{service.url}/v1/questions/ask_db?wait=30"))
    picks = {"Database": ["PostgreSQL"], "Features": ["Metrics", "Caching"]}
    page_status, page = await answer_on_web(http, service.url, "ask_db", picks, name="Grace")
    assert page_status == 200
    assert "Answered by Grace" in page

    async with await poll as response:
        final = await response.json()
    assert final["status"] == "answered"
    assert final["answers"] == EXPECTED
    assert final["answers_by_question"] == {
        "Which database should we use?": "PostgreSQL",
        "Which features do you want?": "Caching, Metrics",
    }
    assert final["answered_by"] == {"platform": "web", "id": "Grace", "name": "Grace"}
    assert "error" not in final


async def test_long_poll_returns_the_waiting_status_when_time_is_up(
    service: Service, http: aiohttp.ClientSession
) -> None:
    await post(http, service, ask())
    async with http.get(f"{service.url}/v1/questions/ask_db?wait=0.05") as response:
        assert response.status == 200
        assert (await response.json())["status"] == "waiting"
    async with http.get(f"{service.url}/v1/questions/ask_db?wait=soon") as response:
        assert response.status == 400
        assert "wait must be a number" in (await response.json())["error"]


async def test_repeating_a_request_is_idempotent(
    service: Service, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    first_status, first = await post(http, service, ask())
    again_status, again = await post(http, service, ask())
    assert (first_status, again_status) == (201, 200)
    assert again["created_at"] == first["created_at"]
    async with http.get(f"{service.url}/v1/questions?status=waiting") as response:
        listed = (await response.json())["questions"]
    assert [q["request_id"] for q in listed] == ["ask_db"]
    await clock.advance(1)
    await post(http, service, ask("ask_second"))
    async with http.get(f"{service.url}/v1/questions?limit=1") as response:
        newest = (await response.json())["questions"]
    assert [q["request_id"] for q in newest] == ["ask_second"]


async def test_camel_case_request_id_is_accepted(
    service: Service, http: aiohttp.ClientSession
) -> None:
    body = ask()
    body["requestId"] = body.pop("request_id")
    status, created = await post(http, service, body)
    assert status == 201
    assert created["request_id"] == "ask_db"
    assert created["questions"][1]["multi_select"] is True


async def test_same_id_with_other_questions_is_a_conflict(
    service: Service, http: aiohttp.ClientSession
) -> None:
    await post(http, service, ask())
    other = ask()
    other["questions"][0]["question"] = "Which cache should we use?"
    status, body = await post(http, service, other)
    assert status == 409
    assert "already exists with other questions" in body["error"]


async def test_same_id_with_another_subject_is_a_conflict(
    service: Service, http: aiohttp.ClientSession
) -> None:
    """An approval's questions are the same for every command: a repeat that names another
    command must not be given the answer about the first."""
    approval = {
        "request_id": "ask_run",
        "questions": permission_questions({"tool_name": "Bash"}, always=None, shown=True),
        "tool": {"name": "Bash"},
    }
    status, _ = await post(http, service, {**approval, "subject": {"command": "ls"}})
    assert status == 201
    status, _ = await post(http, service, {**approval, "subject": {"command": "ls"}})
    assert status == 200
    status, body = await post(http, service, {**approval, "subject": {"command": "rm -rf ~"}})
    assert status == 409
    assert "already exists with another subject" in body["error"]
    status, body = await post(http, service, {k: v for k, v in approval.items() if k != "tool"})
    assert status == 409


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        ({"questions": []}, 422, "questions: must hold 1-4 questions, got 0"),
        (
            {"questions": [{"question": "Q?", "header": "H", "options": [{"label": "x"}]}]},
            422,
            "questions[0].options: must hold 2-4 options, got 1",
        ),
        (ask(target="telegram:42"), 422, "unknown platform 'telegram'"),
        (ask(target="slack:C0123"), 422, "set SLACK_BOT_TOKEN"),
        (ask(target="discord:@42"), 422, "set DISCORD_BOT_TOKEN"),
        (ask(target="web:somewhere"), 422, "the web page takes no channel"),
        (ask(timeout_s="soon"), 422, "timeout_s: must be a number of seconds"),
        (ask(timeout_s=-1), 422, "timeout_s: must be a number of seconds above 0"),
        (ask(request_id="has spaces"), 422, "request_id: must be 1-64 letters"),
        # A URL path drops them: GET /v1/questions/.. would never reach the request.
        (ask(request_id=".."), 422, "request_id: must hold a letter, digit, '_' or '-'"),
        (ask(request_id="."), 422, "request_id: must hold a letter, digit, '_' or '-'"),
        (ask(context=["x"]), 422, "context: must be a text"),
        ([1, 2], 400, "request body must be a JSON object"),
    ],
)
async def test_invalid_requests_get_a_json_error(
    service: Service, http: aiohttp.ClientSession, body: Any, status: int, fragment: str
) -> None:
    got_status, got = await post(http, service, body)
    assert got_status == status
    assert fragment in got["error"]


async def test_invalid_question_details_list_every_problem(
    service: Service, http: aiohttp.ClientSession
) -> None:
    body = ask()
    body["questions"][0]["header"] = "Way too long header"
    body["questions"][1]["options"][0]["label"] = "one two three four five six"
    status, got = await post(http, service, body)
    assert status == 422
    assert [d["location"] for d in got["details"]] == [
        "questions[0].header",
        "questions[1].options[0].label",
    ]


async def test_malformed_and_unknown_requests_never_give_a_traceback(
    service: Service, http: aiohttp.ClientSession
) -> None:
    cases = [
        ("POST", "/v1/questions", b"{not json", 400, "not valid JSON"),
        ("POST", "/v1/questions", b"x" * 300_000, 413, "too large"),
        ("GET", "/v1/nothing-here", b"", 404, "no route"),
        ("PUT", "/v1/questions", b"", 405, "not allowed"),
        ("GET", "/v1/questions/missing", b"", 404, "no request"),
        ("GET", "/v1/questions?status=lost", b"", 400, "status must be one of"),
        ("GET", "/v1/questions?limit=0", b"", 400, "limit must be a whole number"),
        # int() refuses more than 4300 digits: this was a 500.
        ("GET", "/v1/questions?limit=" + "9" * 5000, b"", 400, "limit must be a whole number"),
        ("GET", "/v1/events?limit=0", b"", 400, "limit must be a whole number from 1 to 10000"),
        ("GET", "/v1/events?limit=10001", b"", 400, "limit must be a whole number"),
        ("GET", "/v1/events?since=yesterday", b"", 400, "since must be an ISO 8601 time"),
        # Valid ISO 8601, but beyond the years UTC can hold: this was a 500.
        *(
            ("GET", f"/v1/{path}?{name}={when}", b"", 400, f"{name} must be a time in UTC's")
            for path in ("audit/export", "events")
            for name, when in (
                ("since", "9999-12-31T23:59:59-01:00"),
                ("since", "0001-01-01T00:00:00%2B01:00"),
                ("until", "0001-01-01T00:00:00%2B01:00"),
            )
            if (path, name) != ("events", "until")
        ),
    ]
    json_body = {"Content-Type": "application/json"}
    for method, path, data, status, fragment in cases:
        request = http.request(method, service.url + path, data=data, headers=json_body)
        async with request as response:
            assert response.status == status, path
            assert response.content_type == "application/json"
            assert fragment in (await response.json())["error"]


async def test_a_wrong_token_gets_401(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service(api_token="s3cret-token")
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        async with http.post(f"{service.url}/v1/questions", json=ask(), headers=headers) as r:
            assert r.status == 401
            assert "ASKBRIDGE_API_TOKEN" in (await r.json())["error"]
    good = {"Authorization": "Bearer s3cret-token"}
    async with http.post(f"{service.url}/v1/questions", json=ask(), headers=good) as r:
        assert r.status == 201
    async with http.get(f"{service.url}/healthz") as r:
        assert r.status == 200


@pytest.mark.parametrize("host", ["0.0.0.0", "", "::", "[::]"])
async def test_a_public_address_without_a_token_refuses_to_start(
    start_service: StartService, host: str
) -> None:
    with pytest.raises(StartupError, match="ASKBRIDGE_API_TOKEN is not set"):
        await start_service(host=host)


async def test_a_foreign_host_header_is_refused_on_an_open_loopback_server(
    service: Service, http: aiohttp.ClientSession
) -> None:
    async with http.get(f"{service.url}/", headers={"Host": "evil.example:8765"}) as response:
        assert response.status == 403


async def test_cancel_gives_interrupted(service: Service, http: aiohttp.ClientSession) -> None:
    await post(http, service, ask())
    status, page = await answer_on_web(http, service.url, "ask_db", {}, action="cancel")
    assert status == 200
    assert "Cancelled by Ada" in page
    async with http.get(f"{service.url}/v1/questions/ask_db?wait=5") as response:
        final = await response.json()
    assert final["status"] == "cancelled"
    assert final["error"] == "Interrupted"
    assert final["cancelled_by"]["name"] == "Ada"
    assert "answers" not in final


async def test_withdraw(service: Service, http: aiohttp.ClientSession) -> None:
    await post(http, service, ask())
    async with http.delete(f"{service.url}/v1/questions/ask_db") as response:
        assert response.status == 200
        assert (await response.json())["status"] == "withdrawn"
    async with http.delete(f"{service.url}/v1/questions/ask_db") as response:
        assert response.status == 409
        assert "withdrew" in (await response.json())["error"]
    async with http.get(f"{service.url}/q/ask_db") as response:
        assert "Withdrawn by the agent" in await response.text()
    async with http.delete(f"{service.url}/v1/questions/nope") as response:
        assert response.status == 404


async def test_expiry_follows_the_injected_clock(
    service: Service, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    status, created = await post(http, service, ask(timeout_s=600))
    assert status == 201
    assert created["expires_at"] == "2030-01-01T00:10:00.000Z"
    poll = asyncio.create_task(http.get(f"{service.url}/v1/questions/ask_db?wait=30"))
    await clock.advance(599)
    async with http.get(f"{service.url}/v1/questions/ask_db") as response:
        assert (await response.json())["status"] == "waiting"
    await clock.advance(1)
    async with await poll as response:
        final = await response.json()
    assert final["status"] == "expired"
    assert final["error"] == "Timed out waiting for an answer"


async def test_default_timeout_comes_from_settings(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service(default_timeout_s=60)
    _, created = await post(http, service, ask())
    assert created["expires_at"] == "2030-01-01T00:01:00.000Z"


async def test_schema_and_health(service: Service, http: aiohttp.ClientSession) -> None:
    async with http.get(f"{service.url}/v1/schema") as response:
        schema = await response.json()
    assert schema["oneOf"] == [
        {"required": ["questions"]},
        {"required": ["form"], "properties": {"form": {"type": "object"}}},
    ]
    assert schema["properties"]["questions"]["maxItems"] == 4
    async with http.get(f"{service.url}/healthz") as response:
        health = await response.json()
    assert {k: health[k] for k in ("ok", "version", "surfaces")} == {
        "ok": True,
        "version": VERSION,
        "surfaces": ["web"],
    }


async def test_the_audit_trail_tells_the_story(
    service: Service, http: aiohttp.ClientSession
) -> None:
    await post(http, service, ask())
    await answer_on_web(
        http, service.url, "ask_db", {"Database": ["SQLite"], "Features": ["Logging"]}
    )
    async with http.get(f"{service.url}/v1/questions/ask_db/events") as response:
        events = (await response.json())["events"]
    assert [e["kind"] for e in events] == ["created", "posted", "vote", "answered"]
    assert events[3]["actor"]["name"] == "Ada"
    assert events[3]["data"]["answers"] == {"Database": "SQLite", "Features": "Logging"}


async def test_the_web_page_beyond_loopback_asks_for_the_token(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service(host="0.0.0.0", api_token="s3cret-token", web_ui="on")
    async with http.get(f"{service.url}/") as response:
        assert response.status == 401
        assert response.headers["WWW-Authenticate"].startswith("Basic")
    for password, status in (("s3cret-token", 200), ("wrong", 401)):
        basic = base64.b64encode(f"anyone:{password}".encode()).decode()
        headers = {"Authorization": f"Basic {basic}"}
        async with http.get(f"{service.url}/", headers=headers) as response:
            assert response.status == status


async def test_beyond_loopback_the_web_page_is_off_unless_asked_for(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service(host="0.0.0.0", api_token="s3cret-token")
    async with http.get(f"{service.url}/") as response:
        assert response.status == 404
    headers = {"Authorization": "Bearer s3cret-token"}
    async with http.post(f"{service.url}/v1/questions", json=ask(), headers=headers) as r:
        assert r.status == 422
        assert "set ASKBRIDGE_WEB_UI=on" in (await r.json())["error"]


async def test_answerers_nobody_could_ever_be_are_refused(
    service: Service, http: aiohttp.ClientSession
) -> None:
    for entries, fragment in (
        (["bogus:1"], "unknown kind 'bogus'; valid here: web:…"),
        (["slack:U1"], "slack is not set up (set SLACK_BOT_TOKEN"),
        (["web:ada", "slack-grup:S0SRE"], "answerers[1]"),
    ):
        body = {**ask(), "answerers": entries}
        async with http.post(f"{service.url}/v1/questions", json=body) as response:
            assert response.status == 422, entries
            assert fragment in (await response.json())["error"]
    async with http.get(f"{service.url}/v1/questions") as response:
        assert (await response.json())["questions"] == []
