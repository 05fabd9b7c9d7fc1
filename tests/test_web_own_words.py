"""Answering on the web page in one's own words, with a note."""

from __future__ import annotations

from typing import Any

import aiohttp

from askbridge.bots.service import Service
from tests.conftest import DATABASE
from tests.web_person import answer_on_web, read_form


async def ask(http: aiohttp.ClientSession, url: str, request_id: str, **fields: Any) -> None:
    body = {**DATABASE, "request_id": request_id, **fields}
    async with http.post(f"{url}/v1/questions", json=body) as response:
        assert response.status == 201, await response.text()


async def status(http: aiohttp.ClientSession, url: str, request_id: str) -> dict[str, Any]:
    async with http.get(f"{url}/v1/questions/{request_id}") as response:
        found: dict[str, Any] = await response.json()
    return found


async def test_own_words_and_a_note_reach_the_agent(
    service: Service, http: aiohttp.ClientSession
) -> None:
    await ask(http, service.url, "ask_own", allow_other=True, allow_notes=True)
    code, page = await answer_on_web(
        http,
        service.url,
        "ask_own",
        {"Features": ["Caching"]},
        typed={"Database": "Neither — use MySQL 8", "Features": "tracing"},
        note="Ask ops first.",
    )
    assert code == 200
    assert "Neither — use MySQL 8" in page
    assert "Ask ops first." in page
    found = await status(http, service.url, "ask_own")
    assert found["answers"] == {"Database": "Neither — use MySQL 8", "Features": "Caching, tracing"}
    assert found["notes"] == {"Database": "Ask ops first."}


async def test_a_form_without_the_option_has_no_fields_for_it(
    service: Service, http: aiohttp.ClientSession
) -> None:
    await ask(http, service.url, "ask_plain")
    form = await read_form(http, service.url, "ask_plain")
    assert form.own == {}
    assert not form.takes_a_note


async def test_over_long_words_come_back_marked_and_nothing_is_recorded(
    service: Service, http: aiohttp.ClientSession
) -> None:
    await ask(http, service.url, "ask_long", allow_other=True, allow_notes=True)
    code, page = await answer_on_web(
        http,
        service.url,
        "ask_long",
        {"Database": ["SQLite"], "Features": ["Logging"]},
        typed={"Database": "x" * 2001},
        note="kept as typed",
    )
    assert code == 422
    assert "Please keep it to 2000 characters" in page
    assert "kept as typed" in page, "what the person typed is still there"
    found = await status(http, service.url, "ask_long")
    assert found["status"] == "waiting"
    assert found["votes"] == []
