"""What an operator sees: the requests waiting now, counted in the database at each scrape
(every replica's, through restarts), and one INFO line naming the request, the surface and the
person for each step of a request's life, in both log formats."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path

import aiohttp
import pytest

from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.clock import ManualClock
from askbridge.core.intents import Cancel
from askbridge.core.models import Person
from askbridge.core.store.sqlite import SQLiteStore
from tests.chat import Chat
from tests.conftest import DATABASE, DEPLOY, StartService
from tests.scrape import scrape, value
from tests.server_process import ServerProcess
from tests.stores import database_url
from tests.test_escalation import ONCALL
from tests.web_person import answer_on_web

ADA = Person(platform="chat", id="U1", name="Ada Lovelace")
WAITING = "askbridge_requests_waiting"


async def ask(http: aiohttp.ClientSession, url: str, request_id: str) -> None:
    body = {"request_id": request_id, "questions": [DEPLOY]}
    async with http.post(f"{url}/v1/questions", json=body) as response:
        assert response.status == 201, await response.text()


async def waiting_on_web(http: aiohttp.ClientSession, url: str) -> float:
    text = await scrape(http, url)
    assert f'{WAITING}{{surface="web"}}' in text, "the gauge shows every running surface"
    return value(text, WAITING, surface="web")


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_the_waiting_gauge_counts_the_database_through_restarts_and_replicas(
    kind: str, tmp_path: Path, start_service: StartService, http: aiohttp.ClientSession
) -> None:
    async with database_url(kind, tmp_path) as url:
        first = await start_service(database_url=url)
        assert await waiting_on_web(http, first.url) == 0
        for request_id in ("ask_one", "ask_two", "ask_three"):
            await ask(http, first.url, request_id)
        async with http.delete(f"{first.url}/v1/questions/ask_three") as response:
            assert response.status == 200
        assert await waiting_on_web(http, first.url) == 2
        await first.stop()
        # A restart counts nothing in memory: what waits is in the database.
        second = await start_service(database_url=url)
        assert await waiting_on_web(http, second.url) == 2
        if kind == "postgres":
            # Another replica ends one: both count what the database holds.
            third = await start_service(database_url=url)
            async with http.delete(f"{third.url}/v1/questions/ask_one") as response:
                assert response.status == 200
            assert await waiting_on_web(http, third.url) == 1
            await third.stop()
        else:
            async with http.delete(f"{second.url}/v1/questions/ask_one") as response:
                assert response.status == 200
        assert await waiting_on_web(http, second.url) == 1
        await second.stop()


async def test_a_name_typed_on_the_web_writes_no_line_of_its_own(
    tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    server = ServerProcess(tmp_path / "askbridge.db", env={"ASKBRIDGE_LOG_LEVEL": "INFO"})
    url = await server.start()
    forged = "2026-12-07T20:30:00.000+00:00 ERROR askbridge: FORGED"
    try:
        await ask(http, url, "ask_named")
        name = f"bob\r\n{forged}\u2028\x1b[2J mallory\u202e"
        status, _ = await answer_on_web(http, url, "ask_named", {"Deploy": ["Approve"]}, name=name)
        assert status == 200
        async with http.get(f"{url}/v1/questions/ask_named") as response:
            answered_by = (await response.json())["answered_by"]
    finally:
        assert await server.stop() == 0
    # One line, no control character, nothing that turns the page's or the log's text around.
    kept = f"bob {forged} [2J mallory"
    assert answered_by == {"platform": "web", "id": kept, "name": kept}
    lines = "".join(server.log).splitlines()
    assert not [line for line in lines if line.startswith(forged)], lines
    assert any(f"request ask_named answered on web by web:{kept}" in line for line in lines)


async def test_a_request_posted_to_two_surfaces_waits_on_each(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "two.db")
    await store.open()
    broker = Broker(store, default_target="chat:C1")
    broker.add_surface(Chat())
    try:
        body = {"request_id": "ask_both", "questions": [DEPLOY], "target": ["chat:C1", "chat:C2"]}
        await broker.ask(Ask.parse(body))
        assert await broker.waiting_by_surface() == {"chat": 1}
        await broker.act("ask_both", ADA, Cancel())
        assert await broker.waiting_by_surface() == {}
    finally:
        await broker.stop()
        await store.close()


@pytest.mark.parametrize("form", ["json", "text"])
async def test_a_request_asked_and_answered_on_the_web_is_logged_by_id(
    form: str, tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    env = {"ASKBRIDGE_LOG_FORMAT": form, "ASKBRIDGE_LOG_LEVEL": "INFO"}
    server = ServerProcess(tmp_path / "askbridge.db", env=env)
    url = await server.start()
    try:
        await ask(http, url, "ask_logged")
        status, _ = await answer_on_web(http, url, "ask_logged", {"Deploy": ["Approve"]})
        assert status == 200
    finally:
        # Stopped, the server has written every line.
        assert await server.stop() == 0
    log = "".join(server.log)
    # Ids only: nothing of the question, the answer or a person's display name.
    assert "Deploy build 4711" not in log
    about = [line for line in server.log if "ask_logged" in line]
    assert not [line for line in about if "Approve" in line], about
    if form == "text":
        order = ["created on web", "posted on web", "answered on web by web:Ada"]
        logged = [step for line in about for step in order if f"ask_logged {step}" in line]
        assert logged == order, about
        return
    lines = [json.loads(line) for line in about]
    steps = {
        line["message"]: (line["surface"], line.get("person"))
        for line in lines
        if line["request_id"] == "ask_logged"
    }
    assert steps == {
        "request ask_logged created on web": ("web", None),
        "request ask_logged posted on web": ("web", None),
        "request ask_logged answered on web by web:Ada": ("web", "web:Ada"),
    }
    assert all(line["level"] == "INFO" for line in lines)


async def test_every_step_of_a_request_is_logged_with_its_surface_and_person(
    store: SQLiteStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="askbridge")
    clock = ManualClock()
    broker = Broker(store, clock=clock, default_target="chat:C1")
    broker.add_surface(Chat())
    try:
        await broker.ask(Ask.parse({"request_id": "ask_c", "questions": [DEPLOY]}))
        await broker.act("ask_c", ADA, Cancel())
        await broker.ask(Ask.parse({"request_id": "ask_w", "questions": [DEPLOY]}))
        await broker.withdraw("ask_w")
        ladder = ONCALL.model_dump(mode="json")
        body = {**copy.deepcopy(DATABASE), "request_id": "ask_e", "escalation": ladder}
        await broker.ask(Ask.parse({**body, "timeout_s": 90}))
        await clock.advance(60)
        await broker.expire_due()
        await clock.advance(30)
        await broker.expire_due()
    finally:
        await broker.stop()
    found = {
        (r.getMessage(), r.__dict__["request_id"], r.__dict__["surface"], r.__dict__.get("person"))
        for r in caplog.records
        if r.name == "askbridge.requests"
    }
    assert found >= {
        ("request ask_c cancelled on chat by chat:U1", "ask_c", "chat", "chat:U1"),
        ("request ask_w withdrawn on chat", "ask_w", "chat", None),
        ("request ask_e escalated (step 1) on chat", "ask_e", "chat", None),
        ("request ask_e expired on chat", "ask_e", "chat", None),
    }
    assert "Ada Lovelace" not in caplog.text
