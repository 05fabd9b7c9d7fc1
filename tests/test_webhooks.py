"""Signed webhook callbacks: a request's status object POSTed to its callback_url when it ends,
from an outbox in the store, retried on the broker's clock, across restarts."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from standardwebhooks import Webhook, WebhookVerificationError

from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from askbridge.core.errors import StartupError
from askbridge.core.store.base import Event
from tests.conftest import DEPLOY, StartService, settings_for, waiting_ids
from tests.stores import database_url
from tests.web_person import answer_on_web

SECRET = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
OTHER_SECRET = "whsec_ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA="
SAME_MACHINE = "127.0.0.1"
"""ASKBRIDGE_WEBHOOK_ALLOW for the receivers here, which listen on the loopback address."""
HIT_S = 10.0
"""How long a test waits for a webhook to arrive before it fails."""


@dataclass
class Hit:
    headers: dict[str, str]
    body: bytes


def signed(secret: str, hit: Hit) -> bool:
    """Whether `hit` is signed with `secret` at its webhook-timestamp, by the Standard Webhooks
    library (its `verify` also wants the timestamp near the system clock's time, and the
    broker's clock here is a manual one)."""
    headers = {name.lower(): value for name, value in hit.headers.items()}
    when = datetime.fromtimestamp(int(headers["webhook-timestamp"]), UTC)
    expected = Webhook(secret).sign(headers["webhook-id"], when, hit.body)
    return expected in headers["webhook-signature"].split(" ")


@dataclass
class Receiver:
    """A webhook receiver: answers each POST with the next of `statuses` (the last repeats)."""

    statuses: list[int]
    url: str = ""
    hits: asyncio.Queue[Hit] = field(default_factory=asyncio.Queue)
    seen: list[Hit] = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.Response:
        hit = Hit(dict(request.headers), await request.read())
        self.seen.append(hit)
        await self.hits.put(hit)
        status = self.statuses[min(len(self.seen), len(self.statuses)) - 1]
        return web.json_response({"ok": status < 300}, status=status)

    async def next(self) -> Hit:
        return await asyncio.wait_for(self.hits.get(), HIT_S)


@asynccontextmanager
async def receiver(statuses: Iterable[int]) -> AsyncIterator[Receiver]:
    found = Receiver(list(statuses))
    app = web.Application()
    app.router.add_post("/hook", found.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    found.url = f"http://127.0.0.1:{runner.addresses[0][1]}/hook"
    try:
        yield found
    finally:
        await runner.cleanup()


async def ask(http: aiohttp.ClientSession, url: str, **fields: Any) -> dict[str, Any]:
    body = {"request_id": "ask_deploy", "questions": [DEPLOY], **fields}
    async with http.post(f"{url}/v1/questions", json=body) as response:
        found: dict[str, Any] = await response.json()
        assert response.status == 201, found
    return found


async def trail(
    service: Service, request_id: str, done: Callable[[list[Event]], bool]
) -> list[Event]:
    """The request's audit trail once `done(trail)` holds; woken by the broker's changes."""
    broker = service.broker
    async with asyncio.timeout(HIT_S):
        while True:
            version = broker.version
            events = await broker.events(request_id)
            if done(events):
                return events
            await broker.wait_for_change(version, HIT_S)


def webhooks(events: list[Event]) -> list[dict[str, Any]]:
    return [e.data for e in events if e.kind == "webhook"]


def attempts(count: int) -> Callable[[list[Event]], bool]:
    return lambda events: len(webhooks(events)) >= count


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_receiver_that_fails_twice_gets_one_signed_delivery_across_a_restart(
    kind: str, tmp_path: Path, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    async with database_url(kind, tmp_path) as db, receiver([500, 500, 200]) as hook:
        settings = settings_for(
            tmp_path, database_url=db, webhook_secret=SECRET, webhook_allow=SAME_MACHINE
        )
        first = Service(settings, clock=clock)
        await first.start()
        try:
            await ask(http, first.url, callback_url=hook.url)
            await answer_on_web(http, first.url, "ask_deploy", {"Deploy": ["Approve"]})
            await hook.next()
            await trail(first, "ask_deploy", attempts(1))
            # Full jitter: the second attempt comes at most 10 s (the first delay) later.
            await clock.advance(10)
            await hook.next()
            await trail(first, "ask_deploy", attempts(2))
        finally:
            await first.stop()

        second = Service(settings, clock=clock)
        await second.start()
        try:
            await clock.advance(20)
            accepted = await hook.next()
            events = await trail(second, "ask_deploy", attempts(3))
            async with http.get(f"{second.url}/v1/questions/ask_deploy") as response:
                status_object = await response.json()
            assert await second.store.next_delivery() is None
        finally:
            await second.stop()

    assert [h.headers["webhook-id"] for h in hook.seen] == [accepted.headers["webhook-id"]] * 3
    assert json.loads(accepted.body) == status_object
    assert status_object["answers"] == {"Deploy": "Approve"}
    assert accepted.headers["Content-Type"] == "application/json"
    assert accepted.headers["webhook-timestamp"] == str(int(clock.now().timestamp()))
    assert accepted.headers["webhook-signature"].startswith("v1,")
    assert signed(SECRET, accepted)
    assert not signed(OTHER_SECRET, accepted)
    assert not signed(SECRET, Hit(accepted.headers, accepted.body + b" "))
    # The library's one call checks the signature and that it was made about now: this one
    # was made at the manual clock's time, years from now.
    with pytest.raises(WebhookVerificationError, match="too new"):
        Webhook(SECRET).verify(accepted.body, accepted.headers)
    assert [(w["attempt"], w.get("status"), w["result"]) for w in webhooks(events)] == [
        (1, 500, "retrying"),
        (2, 500, "retrying"),
        (3, 200, "delivered"),
    ]
    assert "next_attempt_at" in webhooks(events)[0]
    assert all(hook.url not in json.dumps(e.data) for e in events)


async def test_a_refusal_is_final_and_a_cancel_is_sent_too(
    start_service: StartService, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    service = await start_service(webhook_secret=SECRET, webhook_allow=SAME_MACHINE)
    async with receiver([410]) as hook:
        await ask(http, service.url, callback_url=hook.url)
        await answer_on_web(http, service.url, "ask_deploy", {}, action="cancel")
        hit = await hook.next()
        events = await trail(service, "ask_deploy", attempts(1))
    assert json.loads(hit.body)["status"] == "cancelled"
    assert webhooks(events) == [
        {
            "delivery_id": hit.headers["webhook-id"],
            "attempt": 1,
            "status": 410,
            "result": "failed",
        }
    ]
    assert await service.store.next_delivery() is None


async def test_retrying_stops_after_a_day(
    start_service: StartService, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    service = await start_service(webhook_secret=SECRET, webhook_allow=SAME_MACHINE)
    async with receiver([503]) as hook:
        await ask(http, service.url, callback_url=hook.url, timeout_s=60)
        await clock.advance(60)  # the request expires
        assert json.loads((await hook.next()).body)["status"] == "expired"
        await trail(service, "ask_deploy", attempts(1))
        await clock.advance(24 * 3600)
        await hook.next()
        events = await trail(service, "ask_deploy", attempts(2))
    assert [w["result"] for w in webhooks(events)] == ["retrying", "gave_up"]
    assert await service.store.next_delivery() is None


async def test_each_retry_is_stored_full_jitter_doubling_up_to_an_hour(
    start_service: StartService, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    service = await start_service(webhook_secret=SECRET, webhook_allow=SAME_MACHINE)
    delays: list[float] = []
    async with receiver([503]) as hook:
        await ask(http, service.url, callback_url=hook.url)
        async with http.delete(f"{service.url}/v1/questions/ask_deploy") as response:
            assert response.status == 200
        for attempt in range(1, 11):
            await hook.next()
            await trail(service, "ask_deploy", attempts(attempt))
            due = await service.store.next_delivery()
            assert due is not None
            delays.append((due - clock.now()).total_seconds())
            await clock.advance(delays[-1])
    ceilings = [min(3600.0, 10.0 * 2**n) for n in range(10)]
    assert all(0 <= d <= c for d, c in zip(delays, ceilings, strict=True)), delays


async def test_an_unreachable_receiver_is_retried(
    start_service: StartService, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    service = await start_service(webhook_secret=SECRET, webhook_allow=SAME_MACHINE)
    async with receiver([200]) as hook:
        gone = hook.url
    # Nothing listens at `gone` any more: the connection is refused.
    await ask(http, service.url, callback_url=gone)
    async with http.delete(f"{service.url}/v1/questions/ask_deploy") as response:
        assert response.status == 200
    events = await trail(service, "ask_deploy", attempts(1))
    (first,) = webhooks(events)
    assert first["result"] == "retrying"
    assert "status" not in first
    assert first["error"]


async def test_callback_url_needs_the_secret_and_a_web_url(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service()
    body = {"questions": [DEPLOY], "callback_url": "https://example.com/hook"}
    async with http.post(f"{service.url}/v1/questions", json=body) as response:
        assert response.status == 422
        refused = await response.json()
    assert "ASKBRIDGE_WEBHOOK_SECRET" in refused["error"]
    assert refused["details"][0]["location"] == "callback_url"
    for bad in ("ftp://example.com/x", "example.com/hook", "https://", "http://a b/", 42):
        async with http.post(
            f"{service.url}/v1/questions", json={**body, "callback_url": bad}
        ) as response:
            assert response.status == 422, bad
            assert (await response.json())["details"][0]["location"] == "callback_url"


@pytest.mark.parametrize(
    "secret",
    [
        "0123456789abcdef0123456789abcdef0123456789abcdef",  # `openssl rand -hex 32`
        "whsec_not base64!",
        "whsec_c2hvcnQ=",  # 5 bytes
    ],
)
async def test_a_webhook_secret_that_is_not_a_standard_one_is_refused_at_start(
    tmp_path: Path, secret: str
) -> None:
    service = Service(settings_for(tmp_path, webhook_secret=secret))
    with pytest.raises(StartupError) as refused:
        await service.start()
    message = str(refused.value)
    assert message.startswith("ASKBRIDGE_WEBHOOK_SECRET")
    assert "openssl rand -base64 32" in message
    assert secret not in message


async def test_callback_url_is_in_the_schema(http: aiohttp.ClientSession, service: Service) -> None:
    async with http.get(f"{service.url}/v1/openapi.json") as response:
        document = await response.json()
    ask = document["components"]["schemas"]["Ask"]
    assert "callback_url" in ask["properties"]


async def test_the_agent_sockets_query_string_sets_the_callback_url(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service(webhook_secret=SECRET, webhook_allow=SAME_MACHINE)
    async with receiver([200]) as hook:
        url = f"{service.url}/v1/agent?callback_url={hook.url}"
        async with http.ws_connect(url) as socket:
            ask_frame = {"AskUserQuestion": {"request_id": "ask_ws", "questions": [DEPLOY]}}
            await socket.send_json(ask_frame)
            await answer_on_web_when_waiting(http, service.url, "ask_ws")
            frame = await socket.receive_json(timeout=HIT_S)
        hit = await hook.next()
    assert frame["UserQuestionResponse"]["answers"] == {"Deploy": "Reject"}
    assert json.loads(hit.body)["answers"] == {"Deploy": "Reject"}


async def answer_on_web_when_waiting(
    http: aiohttp.ClientSession, url: str, request_id: str
) -> None:
    await waiting_ids(http, url, lambda ids: request_id in ids)
    await answer_on_web(http, url, request_id, {"Deploy": ["Reject"]})


async def test_askbridge_ask_passes_the_callback_url_on() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "askbridge.bots.cli",
        "ask",
        "--url",
        "http://127.0.0.1:9",
        *("--header", "Deploy", "--question", "Deploy build 4711?"),
        *("--option", "Approve=Ship it", "--option", "Reject=Hold it"),
        *("--callback-url", "ftp://receiver.example/hook"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2
    assert "callback_url: must be an http:// or https:// URL" in err.decode()
