"""`/healthz`, `/readyz` and `/metrics` on a server with the web page only, and what the
broker counts."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest

from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.clock import ManualClock
from askbridge.core.intents import Cancel, Counted, Decided, Pick
from askbridge.core.metrics import Metrics
from askbridge.core.models import MessageRef, Person, Request
from askbridge.core.store import migrations as sqlite_schema
from askbridge.core.store import postgres_schema as pg_schema
from askbridge.core.store.sqlite import SQLiteStore
from tests.chat import Chat
from tests.conftest import DEPLOY, StartService
from tests.scrape import scrape, until, value
from tests.stores import database_url

ADA = Person(platform="chat", id="U1", name="Ada")
BOB = Person(platform="chat", id="U2", name="Bob")


class Held(Chat):
    """Its updates wait until `release` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.updating = asyncio.Event()

    async def update(self, request: Request, message: MessageRef) -> None:
        self.updating.set()
        await self.release.wait()


def ask(request_id: str, **extra: Any) -> Ask:
    return Ask.parse(
        {"request_id": request_id, "questions": [DEPLOY], "target": "chat:C1", **extra}
    )


def exposition(broker: Broker) -> str:
    return broker.metrics.exposition().decode()


async def test_every_ending_is_counted_by_surface(store: SQLiteStore, clock: ManualClock) -> None:
    # Not started: the test ends requests itself, so no expiry loop races it.
    broker = Broker(store, clock=clock)
    broker.add_surface(Chat())
    try:
        assert value(exposition(broker), "askbridge_requests_answered_total", surface="chat") == 0
        for request_id in ("ask_a", "ask_c", "ask_w"):
            await broker.ask(ask(request_id))
        await broker.ask(ask("ask_e", timeout_s=60))
        await clock.advance(30)
        assert isinstance(await broker.act("ask_a", ADA, Pick(question=0, option=0)), Decided)
        assert isinstance(await broker.act("ask_c", ADA, Cancel()), Decided)
        await broker.withdraw("ask_w")
        await clock.advance(31)
        assert await broker.expire_due() == 1
        # A click on an ended request is no decision: it moves nothing.
        await broker.act("ask_a", BOB, Pick(question=0, option=1))
        text = exposition(broker)
    finally:
        await broker.stop()
    assert value(text, "askbridge_requests_created_total", surface="chat") == 4
    for status in ("answered", "cancelled", "withdrawn", "expired"):
        assert value(text, f"askbridge_requests_{status}_total", surface="chat") == 1, status
    assert value(text, "askbridge_time_to_answer_seconds_count", surface="chat") == 1
    assert value(text, "askbridge_time_to_answer_seconds_sum", surface="chat") == 30
    # The answer and the cancel woke their agents.
    assert value(text, "askbridge_click_to_agent_seconds_count", surface="chat") == 2


async def test_the_backlog_counts_messages_still_being_updated(store: SQLiteStore) -> None:
    surface = Held()
    broker = Broker(store)
    broker.add_surface(surface)
    try:
        await broker.ask(ask("ask_vote", quorum=2))
        assert isinstance(await broker.act("ask_vote", ADA, Pick(question=0, option=0)), Counted)
        await surface.updating.wait()
        # The second vote decides while the first vote's update is still in flight.
        assert isinstance(await broker.act("ask_vote", BOB, Pick(question=0, option=0)), Decided)
        text = exposition(broker)
        assert value(text, "askbridge_message_updates_backlog", state="in_flight") == 1
        assert value(text, "askbridge_message_updates_backlog", state="queued") == 1
        surface.release.set()
    finally:
        await broker.stop()
    text = exposition(broker)
    assert value(text, "askbridge_message_updates_backlog", state="in_flight") == 0
    assert value(text, "askbridge_message_updates_backlog", state="queued") == 0


def test_platform_calls_errors_and_429s_are_counted_apart() -> None:
    metrics = Metrics()
    metrics.record_api_call("slack", "chat.update", status=200)
    metrics.record_api_call("slack", "chat.update", status=429)
    metrics.record_api_call("slack", "chat.update", status=200, failed=True)
    metrics.record_api_call("slack", "chat.update", status=None)
    metrics.record_api_call("slack", "chat.update", status=503)
    text = metrics.exposition().decode()
    method = {"platform": "slack", "method": "chat.update"}
    assert value(text, "askbridge_platform_api_calls_total", **method) == 5
    assert value(text, "askbridge_platform_api_rate_limited_total", **method) == 1
    assert value(text, "askbridge_platform_api_errors_total", **method) == 3


def test_each_service_counts_in_a_registry_of_its_own() -> None:
    first, second = Metrics(), Metrics()
    first.record_http("GET", "/healthz", 200)
    assert value(first.exposition().decode(), "askbridge_http_requests_total") == 1
    assert value(second.exposition().decode(), "askbridge_http_requests_total") == 0


async def test_healthz_names_each_loop_and_fails_once_one_stopped(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service()
    async with http.get(f"{service.url}/healthz") as response:
        assert response.status == 200
        health = await response.json()
    assert health["ok"] is True
    assert health["parts"] == {
        "deadlines": {"ok": True, "detail": "running"},
        "message_updates": {"ok": True, "detail": "running"},
    }
    # The broker's loops stop, the HTTP server does not: alive, but not healthy.
    await service.broker.stop()
    async with http.get(f"{service.url}/healthz") as response:
        assert response.status == 503
        health = await response.json()
    assert health["ok"] is False
    assert health["parts"]["deadlines"] == {"ok": False, "detail": "stopped; restart askbridge"}
    async with http.get(f"{service.url}/readyz") as response:
        assert response.status == 503
        assert (await response.json())["parts"]["server"] == {
            "ready": False,
            "detail": "shutting down",
        }


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_readyz_fails_while_the_store_does_not_answer(
    kind: str, tmp_path: Path, start_service: StartService, http: aiohttp.ClientSession
) -> None:
    async with database_url(kind, tmp_path) as url:
        service = await start_service(database_url=url)
        async with http.get(f"{service.url}/readyz") as response:
            assert response.status == 200
            ready = await response.json()
        assert ready["ready"] is True
        assert ready["parts"] == {"store": {"ready": True, "detail": "the database answers"}}
        await _break(url)
        async with http.get(f"{service.url}/readyz") as response:
            assert response.status == 503
            ready = await response.json()
        assert ready["ready"] is False
        assert ready["parts"]["store"]["ready"] is False
        assert "schema_version" in ready["parts"]["store"]["detail"]
        await service.stop()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_readyz_fails_once_a_newer_askbridge_upgrades_the_schema(
    kind: str, tmp_path: Path, start_service: StartService, http: aiohttp.ClientSession
) -> None:
    """A replica left running through a rolling upgrade would misread what the newer ones
    write: it is taken out of the load balancer, saying why."""
    async with database_url(kind, tmp_path) as url:
        service = await start_service(database_url=url)
        async with http.get(f"{service.url}/readyz") as response:
            assert response.status == 200
        known = (sqlite_schema if kind == "sqlite" else pg_schema).MIGRATIONS[-1][0]
        await _upgrade(url, known + 1)
        async with http.get(f"{service.url}/readyz") as response:
            assert response.status == 503
            ready = await response.json()
        assert ready["parts"]["store"] == {
            "ready": False,
            "detail": f"the database's schema is version {known + 1}, newer than this "
            f"askbridge knows (up to {known}): a newer askbridge upgraded it while this one "
            "ran, and this one would misread what that one writes. Stop this one and run the "
            "newer askbridge in its place",
        }
        await service.stop()


async def _upgrade(url: str, version: int) -> None:
    """Record `version` as a newer askbridge's migration would, from another connection."""
    insert = f"INSERT INTO schema_version (version) VALUES ({version})"
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as file:
            file.execute(insert)
        return
    server = await asyncpg.connect(url)
    try:
        await server.execute(insert)
    finally:
        await server.close()


async def _break(url: str) -> None:
    """Take away the table every store reads first, from another connection."""
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as file:
            file.execute("DROP TABLE schema_version")
        return
    server = await asyncpg.connect(url)
    try:
        await server.execute("DROP TABLE schema_version")
    finally:
        await server.close()


async def test_metrics_needs_the_api_token_when_one_is_set_and_the_probes_do_not(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service(api_token="s3cret-token")
    async with http.get(f"{service.url}/metrics") as response:
        assert response.status == 401
        assert "ASKBRIDGE_API_TOKEN" in (await response.json())["error"]
    text = await scrape(http, service.url, {"Authorization": "Bearer s3cret-token"})
    assert value(text, "askbridge_http_requests_total", route="/metrics", status="401") == 1
    for probe in ("/healthz", "/readyz"):
        async with http.get(f"{service.url}{probe}") as response:
            assert response.status == 200, probe


async def test_metrics_count_requests_long_polls_and_agent_sockets(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service()
    url = service.url
    body = {"request_id": "ask_poll", "questions": [DEPLOY]}
    async with http.post(f"{url}/v1/questions", json=body) as response:
        assert response.status == 201
    async with http.get(f"{url}/v1/questions/ask_nope") as response:
        assert response.status == 404
    polling = asyncio.create_task(_long_poll(http, f"{url}/v1/questions/ask_poll?wait=30"))
    await until(http, url, "askbridge_long_polls_open", 1)
    async with http.ws_connect(f"{url}/v1/agent") as socket:
        # An answer to a frame shows that the server holds the connection.
        await socket.send_json({"AskUserQuestion": "oops"})
        assert "error" in await socket.receive_json(timeout=10)
        text = await scrape(http, url)
        assert value(text, "askbridge_agent_sockets_open") == 1
    async with http.delete(f"{url}/v1/questions/ask_poll") as response:
        assert response.status == 200
    assert (await polling)["status"] == "withdrawn"
    text = await scrape(http, url)
    assert value(text, "askbridge_long_polls_open") == 0
    created = {"method": "POST", "route": "/v1/questions", "status": "201"}
    assert value(text, "askbridge_http_requests_total", **created) == 1
    missing = {"method": "GET", "route": "/v1/questions/{request_id}", "status": "404"}
    assert value(text, "askbridge_http_requests_total", **missing) == 1
    assert value(text, "askbridge_requests_created_total", surface="web") == 1
    assert value(text, "askbridge_requests_withdrawn_total", surface="web") == 1
    assert value(text, "process_resident_memory_bytes") > 0


async def _long_poll(http: aiohttp.ClientSession, url: str) -> dict[str, Any]:
    async with http.get(url) as response:
        assert response.status == 200
        found: dict[str, Any] = await response.json()
    return found
