"""askbridge killed while it acts on a form posted from the web page; the browser posts the same
form again once the server is back, as a reload does."""

from __future__ import annotations

import copy

import aiohttp
import pytest

from askbridge.bots.client import request_body
from tests.conftest import DEPLOY
from tests.web_person import read_form

from .conftest import MakeCrashable, ask, outcome


async def test_a_cancel_cut_short_by_a_crash_cancels_when_the_form_is_posted_again(
    crashable: MakeCrashable, http: aiohttp.ClientSession
) -> None:
    server = crashable()
    await server.start(crash_at="cancel.checked")
    await ask(http, server.url, request_body([copy.deepcopy(DEPLOY)], "web", request_id="ask_w"))
    form = await read_form(http, server.url, "ask_w")
    data = {"csrf": form.csrf, "click": form.click, "name": "Ada", "action": "cancel"}
    data["confirmed"] = "yes"  # as the page's script, or the page that asks first, sends it
    with pytest.raises(aiohttp.ClientConnectionError):
        async with http.post(f"{server.url}/q/ask_w", data=data):
            pass
    await server.crashed("cancel.checked")

    await server.start()
    async with http.post(f"{server.url}/q/ask_w", data=data, allow_redirects=False) as response:
        assert response.status == 303
    cancelled = await outcome(http, server.url, "ask_w")
    assert cancelled["status"] == "cancelled"
    assert cancelled["cancelled_by"]["name"] == "Ada"
    # Posted a third time, it only sends the browser back to the question.
    async with http.post(f"{server.url}/q/ask_w", data=data, allow_redirects=False) as response:
        assert response.status == 303
    async with http.get(f"{server.url}/v1/questions/ask_w/events") as response:
        kinds = [e["kind"] for e in (await response.json())["events"]]
    assert kinds.count("cancelled") == 1
