"""A form posted again (a reload, back and submit again, a double click) is one click: it is
recorded once, and the browser is sent back to the question as it stands, with no second note."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from askbridge.bots.service import Service
from tests.conftest import DEPLOY, audit_events, settings_for
from tests.stores import database_url
from tests.web_person import read_form

COUNTED = "Your vote is counted: 1 of 2 matching votes so far, for Deploy: Approve."


@pytest.fixture(params=["sqlite", "postgres"])
async def service(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Service]:
    async with database_url(request.param, tmp_path) as url:
        running = Service(settings_for(tmp_path, database_url=url))
        await running.start()
        try:
            yield running
        finally:
            await running.stop()


async def ask(http: aiohttp.ClientSession, url: str, **policy: Any) -> None:
    body = {"request_id": "ask_deploy", "questions": [DEPLOY], **policy}
    async with http.post(f"{url}/v1/questions", json=body) as response:
        assert response.status == 201, await response.text()


async def filled(
    http: aiohttp.ClientSession, url: str, action: str = "submit", **fields: str
) -> dict[str, str]:
    """The form as a browser posts it: every hidden field, Approve chosen, Ada's name."""
    form = await read_form(http, url, "ask_deploy")
    assert form.click, "each form the page shows has a one-use id"
    field, value = form.options["Deploy"]["Approve"]
    return {"csrf": form.csrf, "click": form.click, "name": "Ada", "action": action} | (
        {field: value} | fields
    )


async def post(http: aiohttp.ClientSession, url: str, data: dict[str, str]) -> tuple[int, str]:
    async with http.post(f"{url}/q/ask_deploy", data=data, allow_redirects=False) as response:
        return response.status, await response.text()


async def kinds(http: aiohttp.ClientSession, url: str) -> list[str]:
    return [e["kind"] for e in await audit_events(http, url, "ask_deploy")]


async def test_a_vote_posted_twice_is_counted_once(
    service: Service, http: aiohttp.ClientSession
) -> None:
    await ask(http, service.url, quorum=2)
    data = await filled(http, service.url)
    status, page = await post(http, service.url, data)
    assert (status, COUNTED in page) == (200, True)
    # The browser posts the same form again: sent back to the question, nothing recorded.
    status, page = await post(http, service.url, data)
    assert status == 303
    assert COUNTED not in page
    assert (await kinds(http, service.url)).count("vote") == 1
    # A form shown anew is a click of its own.
    status, page = await post(http, service.url, await filled(http, service.url))
    assert (status, COUNTED in page) == (200, True)


async def test_an_answer_posted_again_after_it_decided_gets_no_second_note(
    service: Service, http: aiohttp.ClientSession
) -> None:
    await ask(http, service.url)
    data = await filled(http, service.url)
    assert (await post(http, service.url, data))[0] == 303
    # Back, and submit again: not "already answered by Ada", just the answered question.
    status, page = await post(http, service.url, data)
    assert status == 303
    assert "already answered" not in page
    async with http.get(f"{service.url}/q/ask_deploy") as response:
        assert "Answered by Ada" in await response.text()
    assert (await kinds(http, service.url)).count("answered") == 1


async def test_a_cancel_posted_twice_cancels_once_and_says_nothing_more(
    service: Service, http: aiohttp.ClientSession
) -> None:
    await ask(http, service.url)
    # Said yes to, as the page's script or the page that asks first sends it.
    data = await filled(http, service.url, action="cancel", confirmed="yes")
    assert (await post(http, service.url, data))[0] == 303
    status, page = await post(http, service.url, data)
    assert status == 303
    assert "already" not in page
    assert (await kinds(http, service.url)).count("cancelled") == 1


async def test_a_form_shown_again_after_a_refusal_is_a_click_of_its_own(
    service: Service, http: aiohttp.ClientSession
) -> None:
    await ask(http, service.url)
    form = await read_form(http, service.url, "ask_deploy")
    empty = {"csrf": form.csrf, "click": form.click, "name": "Ada", "action": "submit"}
    status, page = await post(http, service.url, empty)
    assert status == 422
    # The page that asks for the missing answer carries a form of its own to post.
    again = next(
        line for line in page.splitlines() if "name='click'" in line and form.click not in line
    )
    click = again.split("value='")[1].split("'")[0]
    assert click != form.click
    field, value = form.options["Deploy"]["Approve"]
    status, _ = await post(http, service.url, {**empty, "click": click, field: value})
    assert status == 303
    async with http.get(f"{service.url}/v1/questions/ask_deploy") as response:
        assert (await response.json())["answers"] == {"Deploy": "Approve"}
