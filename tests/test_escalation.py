"""Escalation ladders and bound approvals below the chat platforms: each step claimed once by
replicas on one store (both stores), quiet hours, the server's default ladder, what the ask
refuses and how, the web page's wording, and the subject digest an agent checks."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from pydantic import ValidationError

from askbridge.adapters.discord.render import policy_lines
from askbridge.bots.client import (
    AskbridgeClient,
    InvalidRequest,
    subject_matches,
)
from askbridge.bots.service import Service
from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.clock import ManualClock
from askbridge.core.errors import StartupError
from askbridge.core.escalation import read_ladder
from askbridge.core.hooks.claude_code import HookOptions, ToolCall, ask_for
from askbridge.core.ladder_time import due_at
from askbridge.core.models import Ladder, MessageRef, Policy, QuietHours, Request, Target
from askbridge.core.store import Store, open_store
from askbridge.core.subject import subject_sha256
from askbridge.core.view import SELF_APPROVAL, RequestView
from tests.conftest import (
    DATABASE,
    DEPLOY,
    StartService,
    audit_events,
    settings_for,
    story,
    waiting_ids,
)
from tests.stores import database_url
from tests.test_broker import ChatSurface
from tests.test_cli import DEPLOY_FLAGS, run_ask
from tests.test_mcp import connected, text_of
from tests.test_webhooks import SAME_MACHINE, SECRET, receiver, signed
from tests.test_webhooks import ask as webhook_ask
from tests.web_person import answer_on_web

START = ManualClock().now()
ONCALL = read_ladder(
    {"steps": [{"after_s": 60}, {"after_s": 120, "answerers": ["chat:U9"], "target": "chat:C2"}]}
)


def waiting(ladder: Ladder, **extra: Any) -> Request:
    fields: dict[str, Any] = {
        "request_id": "r_ladder",
        "questions": Ask.parse(copy.deepcopy(DATABASE)).questions,
        "targets": (Target(platform="chat", channel="C1"),),
        "created_at": START,
        "policy": Policy(escalation=ladder),
        **extra,
    }
    return Request.model_validate(fields)


@pytest.fixture(params=["sqlite", "postgres"])
async def replicas(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[list[Store]]:
    async with database_url(request.param, tmp_path) as url:
        stores = [open_store(url), open_store(url)]
        for store in stores:
            await store.open()
        yield stores
        for store in stores:
            await store.close()


# ---- claimed once ---------------------------------------------------------------------------


async def test_each_step_is_claimed_once_across_replicas(replicas: list[Store]) -> None:
    one, two = replicas
    first_due = START + timedelta(seconds=60)
    stored, _ = await one.create(waiting(ONCALL, escalate_at=first_due))
    assert stored.escalate_at == first_due
    assert await two.next_deadline() == first_due
    assert await two.due_escalations(START) == []
    assert await two.due_escalations(first_due) == ["r_ladder"]

    second_due = START + timedelta(seconds=120)
    claims = await asyncio.gather(
        *(store.escalate("r_ladder", 0, first_due, second_due) for store in (one, two, one, two))
    )
    assert sorted(claims) == [False, False, False, True]
    assert await one.escalate("r_ladder", 0, second_due, None) is False
    taken = await two.get("r_ladder")
    assert taken is not None
    assert (taken.escalation_step, taken.escalated_at, taken.escalate_at) == (
        1,
        first_due,
        second_due,
    )
    assert taken.targets == stored.targets

    again = await asyncio.gather(
        two.escalate("r_ladder", 1, second_due, None), one.escalate("r_ladder", 1, second_due, None)
    )
    assert sorted(again) == [False, True]
    # The step's target joins the request's targets, to be posted there.
    escalated = await one.get("r_ladder")
    assert escalated is not None
    assert escalated.targets == (*stored.targets, Target(platform="chat", channel="C2"))
    assert escalated.posted_at is None
    assert [r.request_id for r in await two.unposted()] == ["r_ladder"]
    assert escalated.escalate_at is None
    assert await one.due_escalations(second_due + timedelta(days=1)) == []
    assert await one.escalate("r_ladder", 2, second_due, None) is False
    kinds = [e.kind for e in await two.events("r_ladder")]
    assert kinds == ["created", "escalated", "escalated"]


async def next_ping(chats: list[ChatSurface]) -> tuple[Request, MessageRef]:
    """The next reminder any of `chats` sends."""
    waits = [asyncio.ensure_future(chat.reminders.get()) for chat in chats]
    try:
        done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
    got = [(chat, wait.result()) for chat, wait in zip(chats, waits, strict=True) if wait in done]
    # Both at once: the one not taken goes back.
    for chat, other in got[1:]:
        chat.reminders.put_nowait(other)
    return got[0][1]


async def test_two_brokers_on_one_store_take_each_step_once(replicas: list[Store]) -> None:
    clock = ManualClock()
    chats = [ChatSurface(), ChatSurface()]
    brokers = [Broker(store, clock=clock, default_target="chat:C1") for store in replicas]
    for broker, chat in zip(brokers, chats, strict=True):
        broker.add_surface(chat)
    ask = Ask.parse({**copy.deepcopy(DATABASE), "escalation": ONCALL.model_dump(mode="json")})
    request, _ = await brokers[0].ask(ask)
    assert request.escalate_at == START + timedelta(seconds=60)

    pinged: list[str] = []
    # Each step pings on every message the request has once the step is taken: 1, then 2.
    for seconds, pings in ((60, 1), (60, 2)):
        await clock.advance(seconds)
        await asyncio.gather(*(broker.expire_due() for broker in brokers))
        for _ in range(pings):
            _, message = await asyncio.wait_for(next_ping(chats), 10)
            pinged.append(message.channel)
    for broker in brokers:
        await broker.stop(grace_s=5)

    final = await brokers[1].get(request.request_id)
    assert final.escalation_step == 2
    events = await replicas[1].events(request.request_id)
    assert [e.kind for e in events].count("escalated") == 2
    # One message in C1 at the start, one in C2 from the second step; no ping twice.
    posted = [r for chat in chats for r in chat.posted]
    assert len(posted) == 2
    assert {m.channel for m in final.messages} == {"C1", "C2"}
    assert sorted(pinged) == ["C1", "C1", "C2"]
    assert sum(chat.reminders.qsize() for chat in chats) == 0
    assert RequestView.of(final).answerers == ("chat:U9",)


# ---- time -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("created", "quiet", "due"),
    [
        # Overnight window 22:00-07:00 in Berlin (UTC+1 in January): 01:01 waits until 07:00.
        ("2030-01-01T00:00", ("Europe/Berlin", "22:00", "07:00"), "2030-01-01T06:00"),
        # The same window in July (UTC+2): 23:31 local waits until 07:00 the next day.
        ("2030-07-01T21:30", ("Europe/Berlin", "22:00", "07:00"), "2030-07-02T05:00"),
        # Outside the window: on time.
        ("2030-01-01T10:00", ("Europe/Berlin", "22:00", "07:00"), "2030-01-01T10:01"),
        # A window within one day.
        ("2030-01-01T12:00", ("UTC", "12:00", "13:00"), "2030-01-01T13:00"),
        # Right at its end: on time.
        ("2030-01-01T12:59", ("UTC", "12:00", "13:00"), "2030-01-01T13:00"),
    ],
)
def test_quiet_hours_move_a_step_to_the_end_of_the_window(
    created: str, quiet: tuple[str, str, str], due: str
) -> None:
    tz, start, end = quiet
    ladder = Ladder(
        steps=read_ladder({"steps": [{"after_s": 60}]}).steps,
        quiet_hours=QuietHours(tz=tz, start=start, end=end),
    )
    at = datetime.fromisoformat(created).replace(tzinfo=UTC)
    request = waiting(ladder, created_at=at)
    assert due_at(request, 0, at) == datetime.fromisoformat(due).replace(tzinfo=UTC)


def test_steps_at_or_after_the_deadline_are_never_due() -> None:
    request = waiting(ONCALL, expires_at=START + timedelta(seconds=120))
    assert due_at(request, 0, START) == START + timedelta(seconds=60)
    assert due_at(request, 1, START) is None
    assert due_at(request, 2, START) is None
    # A step is never due before the one before it was taken.
    late = START + timedelta(seconds=90)
    assert due_at(waiting(ONCALL), 1, late + timedelta(seconds=60)) == late + timedelta(seconds=60)


# ---- the ask --------------------------------------------------------------------------------


async def post(http: aiohttp.ClientSession, url: str, **fields: Any) -> tuple[int, Any]:
    body = {"questions": [DEPLOY], **fields}
    async with http.post(f"{url}/v1/questions", json=body) as response:
        return response.status, await response.json()


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"escalation": "soon"}, "escalation: must be a list of steps or an object"),
        (
            {"escalation": [{"after_s": 60}, {"after_s": 30}]},
            "escalation[1].after_s: must be later than the step before (60 s)",
        ),
        ({"escalation": [{"after": 60}]}, "escalation[0]: unknown fields ['after']"),
        ({"escalation": [{"after_s": -1}]}, "escalation[0].after_s: must be a number of seconds"),
        (
            {"escalation": [{"after_s": 60, "answerers": ["oncall"]}]},
            "escalation[0].answerers[0]: must be slack:U…",
        ),
        (
            {"escalation": [{"after_s": 60, "answerers": []}]},
            "escalation[0].answerers: must name someone",
        ),
        ({"escalation": [{"after_s": 60, "mention": "yes"}]}, "mention: must be true or false"),
        (
            {"escalation": [{"after_s": 60, "target": "slack:C1"}]},
            "escalation[0].target: target 'slack:C1': slack is not set up",
        ),
        (
            {"escalation": [{"after_s": 60, "answerers": ["slack-group:S1"]}]},
            "escalation[0].answerers[0]: slack is not set up",
        ),
        (
            {"escalation": {"steps": [{"after_s": 60}], "quiet_hours": {"tz": "Mars/Base"}}},
            "escalation.quiet_hours.tz: must be an IANA time zone",
        ),
        (
            {
                "escalation": {
                    "steps": [{"after_s": 60}],
                    "quiet_hours": {"tz": "UTC", "start": "25:00", "end": "07:00"},
                }
            },
            "escalation.quiet_hours.start: must be a time HH:MM (24 h), got '25:00'",
        ),
        ({"escalation": [{"after_s": 60}] * 6}, "escalation: must have at most 5 steps, got 6"),
        (
            {"escalation": [{"after_s": 60}], "remind_after_s": 30},
            "escalation: cannot be used with remind_after_s",
        ),
        ({"no_self_approval": True}, "no_self_approval: needs requested_by"),
        ({"requested_by": "slack-group:S1"}, "requested_by: must name one person"),
        ({"subject": ["rm", "-rf"]}, "subject: must be a JSON object or a text, got ['rm', '-rf']"),
    ],
)
async def test_invalid_ladders_and_approval_fields_are_422(
    service: Service, http: aiohttp.ClientSession, fields: dict[str, Any], fragment: str
) -> None:
    code, body = await post(http, service.url, **fields)
    assert code == 422, body
    assert fragment in body["error"]


async def test_the_server_default_ladder_applies_unless_the_ask_says_otherwise(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service(escalation='[{"after_s": 600}]')
    code, defaulted = await post(http, service.url, request_id="ask_default")
    assert code == 201
    assert defaulted["escalate_at"] == "2030-01-01T00:10:00.000Z"
    code, own = await post(
        http, service.url, request_id="ask_own", escalation=[{"after_s": 60}, {"after_s": 120}]
    )
    assert own["escalate_at"] == "2030-01-01T00:01:00.000Z"
    code, reminded = await post(http, service.url, request_id="ask_remind", remind_after_s=60)
    assert "escalate_at" not in reminded
    code, none = await post(http, service.url, request_id="ask_none", escalation=[])
    assert code == 201
    assert "escalate_at" not in none


def test_a_broken_default_ladder_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"\[0\].after_s: must be a number of seconds"):
        settings_for(tmp_path, escalation='[{"after_s": "soon"}]')
    with pytest.raises(ValidationError, match="must be JSON such as"):
        settings_for(tmp_path, escalation="after 30 min")
    # A folder of zones, not a zone: zoneinfo fails to open it as a file.
    quiet = {"tz": "Europe", "start": "22:00", "end": "07:00"}
    ladder = json.dumps({"steps": [{"after_s": 5}], "quiet_hours": quiet})
    with pytest.raises(ValidationError, match=r"quiet_hours.tz: must be an IANA time zone"):
        settings_for(tmp_path, escalation=ladder)


async def test_a_default_ladder_for_a_platform_that_is_off_stops_the_start(
    tmp_path: Path, clock: ManualClock
) -> None:
    settings = settings_for(
        tmp_path, escalation='[{"after_s": 60, "answerers": ["slack-group:S1"]}]'
    )
    service = Service(settings, clock=clock)
    with pytest.raises(StartupError, match=r"ASKBRIDGE_ESCALATION: .*slack is not set up"):
        await service.start()


# ---- on the web page and in Discord ---------------------------------------------------------


async def test_the_web_page_shows_the_escalation_and_follows_its_answerers(
    service: Service, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    ladder = [{"after_s": 60, "answerers": ["web:Lin"], "mention": False}]
    code, _ = await post(
        http, service.url, request_id="ask_web", answerers=["web:Grace"], escalation=ladder
    )
    assert code == 201
    await clock.advance(60)
    since = -1  # lower than any version: the first look answers at once
    while True:
        # Woken by the web page's change feed when the step is taken, not by polling.
        async with http.get(f"{service.url}/web/changes?since={since}") as response:
            since = (await response.json())["version"]
        async with http.get(f"{service.url}/v1/questions/ask_web") as response:
            if (await response.json()).get("escalation_step") == 1:
                break
    async with http.get(f"{service.url}/q/ask_web") as response:
        page = await response.text()
    assert "Who may answer: Lin" in page
    assert "Escalated to Lin after 1 min." in page

    code, page = await answer_on_web(
        http, service.url, "ask_web", {"Deploy": ["Approve"]}, name="Grace"
    )
    assert code == 403
    assert "Only these people may answer this question: Lin." in page
    code, _ = await answer_on_web(http, service.url, "ask_web", {"Deploy": ["Approve"]}, name="Lin")
    assert code == 200
    assert await story(http, service.url, "ask_web") == [
        ("created", None),
        ("posted", None),
        ("escalated", None),
        ("denied", "Grace"),
        ("vote", "Lin"),
        ("answered", "Lin"),
    ]


def test_discord_shows_the_escalation_without_pinging_in_the_message() -> None:
    ladder = read_ladder({"steps": [{"after_s": 1800, "answerers": ["discord-role:42"]}]})
    before = RequestView.of(waiting(ladder))
    after = RequestView.of(waiting(ladder, escalation_step=1))
    assert not any("Escalated" in line for line in policy_lines(before))
    assert "Escalated to <@&42> after 30 min" in policy_lines(after)
    assert "Who may answer: <@&42>" in policy_lines(after)


# ---- the subject ----------------------------------------------------------------------------


async def test_the_decision_carries_the_subject_digest(
    service: Service, http: aiohttp.ClientSession
) -> None:
    subject = {"command": "kubectl", "args": ["rollout", "restart", "deploy/api"], "n": 1.5}
    code, created = await post(http, service.url, request_id="ask_subject", subject=subject)
    assert code == 201
    digest = created["subject_sha256"]
    assert digest == subject_sha256(subject)
    # Key order and spacing do not matter; any change to what is approved does.
    assert subject_sha256(json.loads(json.dumps(subject, indent=2, sort_keys=True))) == digest
    await answer_on_web(http, service.url, "ask_subject", {"Deploy": ["Approve"]})
    async with http.get(f"{service.url}/v1/questions/ask_subject?wait=5") as response:
        decision = await response.json()
    assert decision["status"] == "answered"
    assert subject_matches(decision, subject)
    assert not subject_matches(decision, {**subject, "args": ["rollout", "restart", "deploy/db"]})
    assert not subject_matches({"status": "answered"}, subject)
    trail = await audit_events(http, service.url, "ask_subject")
    assert trail[-1]["kind"] == "answered"
    assert trail[-1]["data"]["subject_sha256"] == digest


def test_a_permission_requests_subject_is_its_tool_input() -> None:
    tool_input = {"command": "rm -rf build/", "description": "Clean the build"}
    call = ToolCall.model_validate(
        {"source": "PermissionRequest", "tool_name": "Bash", "tool_input": tool_input}
    )
    ask = ask_for(call, HookOptions())
    assert ask is not None
    assert ask.policy.subject_sha256 == subject_sha256(tool_input)


# ---- the other ways to ask ------------------------------------------------------------------


async def test_the_python_client_and_the_mcp_tool_take_the_new_fields(
    service: Service, http: aiohttp.ClientSession
) -> None:
    subject = {"command": "deploy", "build": 4711}
    fields: dict[str, Any] = {
        "escalation": [{"after_s": 60}, {"after_s": 120, "answerers": ["web:Lin"]}],
        "subject": subject,
        "requested_by": "web:Grace",
        "no_self_approval": True,
    }
    async with AskbridgeClient(service.url) as client:
        created = await client.create([DEPLOY], request_id="ask_client", **fields)
        assert created["escalate_at"] == "2030-01-01T00:01:00.000Z"
        assert created["subject_sha256"] == subject_sha256(subject)
        assert created["requested_by"] == "web:Grace"
        with pytest.raises(InvalidRequest, match=r"escalation\[0\]: unknown fields \['after'\]"):
            await client.create([DEPLOY], escalation=[{"after": 60}])

    async with connected(service) as mcp:
        bad = await mcp.call_tool(
            "ask_user_question", {"questions": [DEPLOY], "escalation": [{"after_s": "soon"}]}
        )
        assert bad.is_error
        assert "escalation[0].after_s: must be a number of seconds" in text_of(bad)
        call = asyncio.create_task(
            mcp.call_tool("ask_user_question", {"questions": [DEPLOY], **fields})
        )
        asked_by_mcp = await waiting_ids(http, service.url, lambda ids: len(ids) == 2)
        (request_id,) = set(asked_by_mcp) - {"ask_client"}
        async with http.get(f"{service.url}/v1/questions/{request_id}") as response:
            asked = await response.json()
        assert asked["escalate_at"] == "2030-01-01T00:01:00.000Z"
        assert asked["subject_sha256"] == subject_sha256(subject)
        code, page = await answer_on_web(
            http, service.url, request_id, {"Deploy": ["Approve"]}, name="Grace"
        )
        assert code == 403
        assert SELF_APPROVAL in page
        await answer_on_web(http, service.url, request_id, {"Deploy": ["Approve"]}, name="Lin")
        result = await asyncio.wait_for(call, 30)
    assert not result.is_error, text_of(result)


async def test_askbridge_ask_takes_the_new_fields_as_flags(
    service: Service, http: aiohttp.ClientSession
) -> None:
    flags = (
        *DEPLOY_FLAGS,
        "--request-id",
        "ask_cli",
        "--escalation",
        '[{"after_s": 60}]',
        "--subject",
        '{"build": 4711}',
        "--requested-by",
        "web:Grace",
        "--no-self-approval",
    )
    ask = await run_ask(service.url, *flags)
    await waiting_ids(http, service.url)
    async with http.get(f"{service.url}/v1/questions/ask_cli") as response:
        asked = await response.json()
    assert asked["escalate_at"] == "2030-01-01T00:01:00.000Z"
    assert asked["subject_sha256"] == subject_sha256({"build": 4711})
    picks = {"Deploy": ["Approve"]}
    code, _ = await answer_on_web(http, service.url, "ask_cli", picks, name="Grace")
    assert code == 403
    await answer_on_web(http, service.url, "ask_cli", {"Deploy": ["Reject"]}, name="Lin")
    out, err = await ask.communicate()
    assert ask.returncode == 0, err.decode()
    assert json.loads(out) == {"Deploy": "Reject"}

    bad = await run_ask(service.url, *DEPLOY_FLAGS, "--escalation", "[{not json")
    _, err = await bad.communicate()
    assert bad.returncode == 2
    assert "--escalation: not JSON" in err.decode()


async def test_the_webhook_carries_the_subject_digest(
    start_service: StartService, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    subject = {"migration": "0042_drop_legacy", "database": "orders"}
    service = await start_service(webhook_secret=SECRET, webhook_allow=SAME_MACHINE)
    async with receiver([200]) as hook:
        await webhook_ask(http, service.url, callback_url=hook.url, subject=subject)
        await answer_on_web(http, service.url, "ask_deploy", {"Deploy": ["Approve"]})
        hit = await hook.next()
    assert signed(SECRET, hit)
    body = json.loads(hit.body)
    assert body["status"] == "answered"
    assert body["subject_sha256"] == subject_sha256(subject)
    assert subject_matches(body, subject)
