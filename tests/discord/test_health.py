"""`/readyz` follows the Discord gateway; `/metrics` counts discord.py's calls by route."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest
import yarl

from askbridge.adapters.discord.api_calls import route
from askbridge.adapters.discord.runtime import DiscordRuntime
from askbridge.bots.service import Service
from tests.scrape import scrape, value

from .conftest import World, ask, outcome, posted
from .test_answering import DEPLOY, ended

API = "https://discord.com/api/v10"
EDIT = "/channels/{channel_id}/messages/{message_id}"


@pytest.mark.parametrize(
    ("method", "url", "expected"),
    [
        ("POST", f"{API}/channels/123/messages", "POST /channels/{id}/messages"),
        ("GET", f"{API}/users/@me", "GET /users/@me"),
        ("GET", f"{API}/oauth2/applications/@me", "GET /oauth2/applications/@me"),
        (
            "POST",
            f"{API}/interactions/123/aW50ZXJhY3Rpb246MTIz/callback?with_response=true",
            "POST /interactions/{id}/{token}/callback",
        ),
        ("PATCH", f"{API}/webhooks/1/lowercase/messages/@original", None),
        ("GET", "wss://gateway.discord.gg/?v=10&encoding=json", "gateway"),
    ],
)
def test_a_route_names_no_id_and_no_token(method: str, url: str, expected: str | None) -> None:
    found = route(method, yarl.URL(url), API)
    assert found == (expected or "PATCH /webhooks/{id}/{token}/messages/@original")


async def test_readyz_fails_once_the_gateway_is_gone(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    async with http.get(f"{bridge.url}/readyz") as response:
        assert response.status == 200
        ready = await response.json()
    [runtime] = [r for r in bridge.runtimes if isinstance(r, DiscordRuntime)]
    user = runtime.client.user
    assert user is not None
    assert ready["parts"]["discord"] == {
        "ready": True,
        "detail": f"gateway connected as askbridge-bot (id {user.id})",
    }

    disconnected = asyncio.ensure_future(runtime.client.wait_for("disconnect", timeout=10))
    await world.emulator.stop()
    await disconnected
    async with http.get(f"{bridge.url}/readyz") as response:
        assert response.status == 503
        ready = await response.json()
    assert ready["parts"]["discord"] == {
        "ready": False,
        "detail": "the gateway connection is down; reconnecting",
    }


async def test_metrics_count_discord_calls_by_route(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator = world.emulator
    question = posted(emulator, await ask(http, bridge.url, DEPLOY))
    emulator.rate_limit_next("PATCH", EDIT, retry_after=0.01)
    await (await emulator.click(question, world.alice.id, "Yes")).response()
    assert (await outcome(http, bridge.url, "ask_deploy"))["answers"] == {"Deploy": "Yes"}
    await emulator.wait_for_edit(question.id, ended)

    text = await scrape(http, bridge.url)
    assert value(text, "askbridge_requests_created_total", surface="discord") == 1
    assert value(text, "askbridge_requests_answered_total", surface="discord") == 1
    assert value(text, "askbridge_click_to_agent_seconds_count", surface="discord") == 1

    def calls(name: str, method: str) -> float:
        return value(text, name, platform="discord", method=method)

    sent = len(emulator.requests_to("POST", "/channels/{channel_id}/messages"))
    assert calls("askbridge_platform_api_calls_total", "POST /channels/{id}/messages") == sent
    edit = "PATCH /channels/{id}/messages/{id}"
    assert calls("askbridge_platform_api_rate_limited_total", edit) == 1
    assert calls("askbridge_platform_api_errors_total", edit) == 0
    answered = "POST /interactions/{id}/{token}/callback"
    assert calls("askbridge_platform_api_calls_total", answered) == 1
    assert calls("askbridge_platform_api_calls_total", "gateway") >= 1
