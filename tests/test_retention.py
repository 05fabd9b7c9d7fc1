"""Ended requests can be forgotten after a while, with their trail; waiting ones never."""

from __future__ import annotations

import asyncio
import os
import sys
from datetime import timedelta
from pathlib import Path

import aiohttp
import pytest

from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.clock import ManualClock
from askbridge.core.intents import Cancel
from askbridge.core.models import Person
from askbridge.core.store import Store, open_store
from askbridge.core.store.transactions import PRUNE_BATCH
from tests.chat import Chat
from tests.conftest import DEPLOY, StartService
from tests.stores import database_url

ADA = Person(platform="chat", id="U1", name="Ada")


async def ask(broker: Broker, request_id: str) -> None:
    await broker.ask(Ask.parse({"request_id": request_id, "questions": [DEPLOY]}))


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_old_ended_requests_go_with_their_trail(kind: str, tmp_path: Path) -> None:
    async with database_url(kind, tmp_path) as url:
        store = open_store(url)
        await store.open()
        try:
            await prune_story(store)
        finally:
            await store.close()


async def prune_story(store: Store) -> None:
    clock = ManualClock()
    broker = Broker(store, clock=clock, default_target="chat:C1")
    broker.add_surface(Chat())
    await ask(broker, "ask_old")
    await broker.act("ask_old", ADA, Cancel())
    await ask(broker, "ask_waiting")
    await clock.advance(10 * 86400)
    await ask(broker, "ask_recent")
    await broker.act("ask_recent", ADA, Cancel())

    assert await broker.prune(timedelta(days=5)) == 1
    assert await store.get("ask_old") is None
    assert await store.events("ask_old") == []
    assert await store.get("ask_waiting") is not None, "a waiting request is never pruned"
    assert await store.get("ask_recent") is not None
    assert [e.kind for e in await store.events("ask_recent")] == ["created", "posted", "cancelled"]
    assert await broker.prune(timedelta(days=5)) == 0


async def test_many_ended_requests_are_pruned_a_batch_at_a_time(store_url: str) -> None:
    store = open_store(store_url)
    await store.open()
    clock = ManualClock()
    broker = Broker(store, clock=clock, default_target="chat:C1")
    broker.add_surface(Chat())
    try:
        count = 2 * PRUNE_BATCH + 1
        for number in range(count):
            await ask(broker, f"ask_{number}")
            await broker.act(f"ask_{number}", ADA, Cancel())
        await ask(broker, "ask_waiting")
        await clock.advance(10 * 86400)
        # Clicks are served between the batches: the loop is never held for all of it.
        served: list[int] = []
        pruning = asyncio.create_task(broker.prune(timedelta(days=5)))
        while not pruning.done():
            served.append(len(await store.list_requests(limit=1)))
        assert await pruning == count
        assert len(served) >= 3
        assert [r.request_id for r in await store.list_requests()] == ["ask_waiting"]
    finally:
        await store.close()


async def test_askbridge_prune_works_on_the_configured_database(tmp_path: Path) -> None:
    async with database_url("sqlite", tmp_path) as url:
        store = open_store(url)
        await store.open()
        broker = Broker(store, default_target="chat:C1")
        broker.add_surface(Chat())
        await ask(broker, "ask_done")
        await broker.act("ask_done", ADA, Cancel())
        env = {**os.environ, "ASKBRIDGE_DATABASE_URL": url}
        for flags, code in (("ninety",), 2), (("1d",), 0), (("0s",), 2), (("0s", "--yes"), 0):
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "askbridge.bots.cli",
                "prune",
                "--older-than",
                *flags,
                env=env,
                stderr=asyncio.subprocess.PIPE,
            )
            _, err = await process.communicate()
            assert process.returncode == code, err
        assert b"deleted 1 request that" in err
        assert await store.get("ask_done") is None
        await store.close()


async def test_askbridge_retention_days_prunes_on_its_own(
    start_service: StartService, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    first = await start_service()
    await ask(first.broker, "ask_aged")
    await first.broker.act("ask_aged", ADA, Cancel())
    await clock.advance(2 * 86400)
    # The first sweep is done before the service serves.
    second = await start_service(retention_days=1)
    async with http.get(f"{second.url}/v1/questions/ask_aged") as response:
        assert response.status == 404
