"""Where Teams questions go: `teams:@<Entra user id>` starts (or finds) the bot's personal
chat with someone who has the app; targets Teams cannot take are refused when asked, saying
how to write one."""

from __future__ import annotations

import copy
from typing import Any

import aiohttp

from askbridge.bots.service import Service
from tests.conftest import DEPLOY, StartService
from tests.emulators.teams import TeamsEmulator
from tests.teams.conftest import ALICE, BOB, actions
from tests.teams.test_answering import ask, ended, status


async def test_a_personal_chat_is_asked_and_answered(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    teams.installed[ALICE.aad_id] = ALICE
    created = await ask(
        http,
        bridge.url,
        request_id="ask_dm",
        questions=[copy.deepcopy(DEPLOY)],
        target=f"teams:@{ALICE.aad_id}",
    )
    chat = f"a:chat-{ALICE.aad_id}"
    assert created["messages"][0]["channel"] == chat
    message = await teams.wait_for_message(chat)
    code, _ = await teams.press(bridge.url, message, ALICE, actions(message.card)["Approve"])
    assert code == 200
    assert (await status(http, bridge.url, "ask_dm"))["answers"] == {"Deploy": "Approve"}
    await teams.wait_for_card(message, ended)


async def post(http: aiohttp.ClientSession, url: str, target: str) -> tuple[int, Any]:
    body = {"questions": [copy.deepcopy(DEPLOY)], "target": target}
    async with http.post(f"{url}/v1/questions", json=body) as response:
        return response.status, await response.json()


async def test_targets_teams_cannot_take_are_refused(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    code, refused = await post(http, bridge.url, "teams:")
    assert code == 422
    assert "teams:@<Entra user id>" in refused["error"]
    # Someone without the app: Teams will not let the bot start a chat with them.
    code, refused = await post(http, bridge.url, f"teams:@{BOB.aad_id}")
    assert code >= 400, refused
    assert "403" in refused["error"]


async def test_a_personal_chat_needs_the_tenant(
    teams: TeamsEmulator, trusted: None, start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service(**{**teams.settings(), "TEAMS_TENANT_ID": ""})
    code, refused = await post(http, service.url, f"teams:@{ALICE.aad_id}")
    assert code == 422
    assert "set TEAMS_TENANT_ID" in refused["error"]
