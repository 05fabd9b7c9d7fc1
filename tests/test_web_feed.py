"""The page's change feed: a question's page follows its own request; the list pages."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import pytest

from askbridge.bots.service import Service
from tests.conftest import DATABASE, StartService
from tests.stores import database_url
from tests.web_person import answer_on_web

PICKS = {"Database": ["SQLite"], "Features": ["Logging"]}


@pytest.fixture(params=["sqlite", "postgres"])
async def service(
    request: pytest.FixtureRequest, start_service: StartService, tmp_path: Path
) -> AsyncIterator[Service]:
    async with database_url(request.param, tmp_path) as url:
        started = await start_service(database_url=url)
        yield started
        await started.stop()  # before its database goes


async def ask(http: aiohttp.ClientSession, url: str, request_id: str, **extra: Any) -> None:
    body = {**copy.deepcopy(DATABASE), "request_id": request_id, **extra}
    async with http.post(f"{url}/v1/questions", json=body) as response:
        assert response.status == 201, await response.text()


async def feed(http: aiohttp.ClientSession, url: str, query: str) -> tuple[int, Any]:
    async with http.get(f"{url}/web/changes?{query}") as response:
        return response.status, await response.json()


async def test_a_question_follows_only_its_own_request(
    service: Service, http: aiohttp.ClientSession
) -> None:
    url = service.url
    await ask(http, url, "ask_mine", quorum=2)
    await ask(http, url, "ask_other")
    follow = asyncio.create_task(feed(http, url, "request=ask_mine"))
    # Other requests come, get answered and go, and a first vote leaves ask_mine waiting: a
    # feed that woke for any of it would have answered "waiting".
    await ask(http, url, "ask_new")
    await answer_on_web(http, url, "ask_other", PICKS)
    async with http.delete(f"{url}/v1/questions/ask_new") as response:
        assert response.status == 200
    await answer_on_web(http, url, "ask_mine", PICKS, name="Grace")
    assert not follow.done()
    await answer_on_web(http, url, "ask_mine", PICKS, name="Lin")
    assert await follow == (200, {"request_id": "ask_mine", "status": "answered"})
    # An ended request answers at once; an unknown one says so.
    assert await feed(http, url, "request=ask_other") == (
        200,
        {"request_id": "ask_other", "status": "answered"},
    )
    for unknown in ("ask_nope", "\0x", "\ufffd"):
        assert await feed(http, url, f"request={quote(unknown)}") == (
            404,
            {"request_id": unknown, "status": None},
        )


async def test_the_list_feed_carries_only_a_version(
    service: Service, http: aiohttp.ClientSession
) -> None:
    _, before = await feed(http, service.url, "since=-1")
    waking = asyncio.create_task(feed(http, service.url, f"since={before['version']}"))
    await ask(http, service.url, "ask_list")
    status, body = await waking
    assert status == 200
    assert body.keys() == {"version"}
    assert body["version"] > before["version"]


@pytest.mark.parametrize("before", ["ask_gone", "\0x"])
async def test_a_page_of_the_list_after_a_question_that_is_not_there(
    service: Service, http: aiohttp.ClientSession, before: str
) -> None:
    await ask(http, service.url, "ask_one")
    async with http.get(f"{service.url}/", params={"before": before}) as response:
        assert response.status == 200
        page = await response.text()
    assert "No older question is waiting." in page
    assert "<a href='/'>Newest questions</a>" in page
    assert "ask_one" not in page


async def test_a_question_follows_an_answer_given_on_another_replica(
    start_service: StartService, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    async with database_url("postgres", tmp_path) as url:
        first = await start_service(database_url=url)
        second = await start_service(database_url=url)
        await ask(http, first.url, "ask_shared")
        follow = asyncio.create_task(feed(http, first.url, "request=ask_shared"))
        await answer_on_web(http, second.url, "ask_shared", PICKS)
        assert await asyncio.wait_for(follow, 20) == (
            200,
            {"request_id": "ask_shared", "status": "answered"},
        )
        await first.stop()
        await second.stop()
