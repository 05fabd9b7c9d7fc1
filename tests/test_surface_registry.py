"""A surface is one registry entry, one settings model and its own code: Pigeon post, defined
in `tests/surfaces/` and registered beside the real surfaces, is asked on, answered, refused
and cancelled over the agent API and its own clicks, through the service `askbridge serve`
runs; its words reach the API's messages and documents, its settings the secrets to scrub."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from askbridge.bots.service import Service
from askbridge.bots.surfaces import SURFACES, surface_words
from askbridge.core.clock import ManualClock
from askbridge.core.models import Status
from tests.conftest import DEPLOY, settings_for
from tests.surfaces.pigeon import CLICKS_PATH, Loft, PigeonSettings, pigeon_entry

StartPigeons = Callable[..., Awaitable[Service]]


@pytest.fixture
def loft() -> Loft:
    return Loft()


@pytest.fixture
async def start_pigeons(
    tmp_path: Path, clock: ManualClock, loft: Loft
) -> AsyncIterator[StartPigeons]:
    started: list[Service] = []

    async def start(**overrides: Any) -> Service:
        surfaces = (*SURFACES, pigeon_entry(loft))
        service = Service(settings_for(tmp_path, **overrides), clock=clock, surfaces=surfaces)
        await service.start()
        started.append(service)
        return service

    yield start
    for service in reversed(started):
        await service.stop()


async def ask(http: aiohttp.ClientSession, url: str, **fields: Any) -> tuple[int, Any]:
    body = {"questions": [copy.deepcopy(DEPLOY)], "target": "pigeon:roof", **fields}
    async with http.post(f"{url}/v1/questions", json=body) as response:
        return response.status, await response.json()


async def click(
    http: aiohttp.ClientSession, url: str, asked: dict[str, Any], ring: str, pick: int | str
) -> str:
    body = {
        "request_id": asked["request_id"],
        "message_id": asked["messages"][0]["message_id"],
        "ring": ring,
        "name": ring.title(),
        "pick": pick,
    }
    async with http.post(f"{url}{CLICKS_PATH}", json=body) as response:
        assert response.status == 200
        said: str = (await response.json())["outcome"]
    return said


async def status(http: aiohttp.ClientSession, url: str, request_id: str) -> dict[str, Any]:
    async with http.get(f"{url}/v1/questions/{request_id}") as response:
        found: dict[str, Any] = await response.json()
    return found


async def test_a_registered_surface_is_asked_answered_refused_and_cancelled(
    start_pigeons: StartPigeons, http: aiohttp.ClientSession, loft: Loft
) -> None:
    service = await start_pigeons(PIGEON_LOFT="roof")
    url = service.url
    code, asked = await ask(http, url, request_id="ask_pigeon", answerers=["pigeon:alice"])
    assert code == 201, asked
    message = asked["messages"][0]
    assert (message["platform"], message["channel"]) == ("pigeon", "roof")
    assert loft.shown[message["message_id"]].status is Status.WAITING

    assert await click(http, url, asked, "bob", 0) == "refused: not_answerer"
    assert (await status(http, url, "ask_pigeon"))["status"] == "waiting"
    assert await click(http, url, asked, "alice", 0) == "decided"
    final = await status(http, url, "ask_pigeon")
    assert final["status"] == "answered"
    assert final["answers"] == {"Deploy": "Approve"}
    assert final["answered_by"] == {"platform": "pigeon", "id": "alice", "name": "Alice"}
    shown = await loft.wait_for(message["message_id"], lambda r: r.status is Status.ANSWERED)
    assert shown.request_id == "ask_pigeon"

    code, second = await ask(http, url, request_id="ask_pigeon_2")
    assert code == 201, second
    assert await click(http, url, second, "carol", "cancel") == "decided"
    assert (await status(http, url, "ask_pigeon_2"))["status"] == "cancelled"
    await loft.wait_for(second["messages"][0]["message_id"], lambda r: r.status is Status.CANCELLED)

    async with http.get(f"{url}/readyz") as response:
        parts = (await response.json())["parts"]
    assert parts["pigeon"] == {"ready": True, "detail": "the loft is open"}


async def test_its_words_reach_the_agent_api(
    start_pigeons: StartPigeons, http: aiohttp.ClientSession
) -> None:
    service = await start_pigeons(PIGEON_LOFT="roof")
    url = service.url
    code, refused = await ask(http, url, answerers=["pigeons"])
    assert code == 422
    assert "web:<name>, pigeon:<ring> or pigeon-flock:<flock>, got 'pigeons'" in refused["error"]
    code, refused = await ask(http, url, target="pigeon:cellar")
    assert code == 422
    assert "pigeons fly to 'roof' only" in refused["error"]
    code, typo = await ask(http, url, answerers=["pigeon-flok:north"])
    assert code == 422
    assert "valid here:" in typo["error"]
    assert "pigeon-flock:…" in typo["error"]
    async with http.get(f"{url}/v1/openapi.json") as response:
        document = await response.json()
    description = document["info"]["description"]
    assert "Slack, Discord, Microsoft Teams, a web page or Pigeon post" in description
    answerers = document["components"]["schemas"]["Ask"]["properties"]["answerers"]
    assert "pigeon-flock:<flock>" in answerers["description"]
    async with http.get(f"{url}/v1/schema") as response:
        target = (await response.json())["$defs"]["TargetObject"]["properties"]["platform"]
    assert target["description"] == "slack, discord, teams, web or pigeon"


async def test_a_surface_that_is_not_set_up_says_how(
    start_pigeons: StartPigeons, http: aiohttp.ClientSession
) -> None:
    service = await start_pigeons()
    code, refused = await ask(http, service.url)
    assert code == 422
    assert "pigeon is not set up; set PIGEON_LOFT" in refused["error"]
    code, refused = await ask(http, service.url, target="web", answerers=["pigeon:alice"])
    assert code == 422
    assert "pigeon is not set up (set PIGEON_LOFT" in refused["error"]


def test_its_secrets_are_scrubbed_and_its_variables_named(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, PIGEON_LOFT="roof", PIGEON_RING_KEY="coo-coo-secret")
    assert settings.platform(PigeonSettings).loft == "roof"
    assert "coo-coo-secret" in settings.secrets()
    words = surface_words((*SURFACES, pigeon_entry(Loft())))
    assert words.targets().endswith("'web', 'pigeon:<loft>'")
