"""429 and 503 storms from Slack and Discord at once, while agents ask and people vote: every
request is posted, every vote counts, every agent gets its answer, and once the storm has
passed every message shows how its request ended."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import aiohttp

from askbridge.bots.client import request_body
from askbridge.bots.service import Service
from tests.conftest import DEPLOY, StartService
from tests.discord.conftest import World, discord_env
from tests.emulators.discord import Message as DiscordMessage
from tests.emulators.slack import Message as SlackMessage
from tests.emulators.slack import SlackEmulator
from tests.slack.conftest import CHANNEL, TARGET, slack_settings

from .conftest import ask, outcome

APPROVED = {"Deploy": "Approve"}
EACH = 3
"""Requests per platform."""
POST = "/channels/{channel_id}/messages"
EDIT = "/channels/{channel_id}/messages/{message_id}"


def deploy(request_id: str, target: str) -> dict[str, Any]:
    return request_body([copy.deepcopy(DEPLOY)], target, request_id=request_id, quorum=2)


async def start(
    start_service: StartService, database: str, slack: SlackEmulator, world: World
) -> Service:
    service = await start_service(
        database_url=database, **slack_settings(slack, "http"), **discord_env(world.emulator)
    )
    slack.interactions_url = f"{service.url}/slack/events"
    return service


async def vote_in_slack(slack: SlackEmulator, message: SlackMessage) -> None:
    for user in ("U1", "U2"):
        (await slack.person(user).click_button(message, "Approve")).assert_acked()


async def vote_in_discord(world: World, message: DiscordMessage) -> None:
    for user in (world.alice, world.bob):
        await (await world.emulator.click(message, user.id, "Approve")).response()


async def test_nothing_is_lost_to_a_storm_of_429s_and_503s(
    start_service: StartService,
    database: str,
    slack: SlackEmulator,
    world: World,
    http: aiohttp.ClientSession,
) -> None:
    emulator = world.emulator
    service = await start(start_service, database, slack, world)
    discord_target = f"discord:{world.channel.id}"

    # While the agents ask: the platforms' own retries ride it out.
    slack.fail_next("chat.postMessage", 429, retry_after=1)
    slack.fail_next("chat.postMessage", 503)
    emulator.rate_limit_next("POST", POST, times=2, retry_after=0.1)
    created = [
        await ask(http, service.url, deploy(f"ask_slack_{n}", TARGET)) for n in range(EACH)
    ] + [
        await ask(http, service.url, deploy(f"ask_discord_{n}", discord_target))
        for n in range(EACH)
    ]

    # While the people vote: more than the platforms' retries can take, so askbridge's own
    # retries carry the updates (and the private notes) through.
    slack.fail_next("chat.update", 503, times=3)
    slack.fail_next("chat.update", 429, retry_after=1, times=3)
    slack.fail_next("chat.postEphemeral", 503, times=3)
    emulator.rate_limit_next("PATCH", EDIT, times=3, retry_after=0.1)
    emulator.fail_next("PATCH", EDIT, status=503, times=2)
    in_slack = slack.messages(CHANNEL)
    in_discord = emulator.messages(world.channel.id)
    assert (len(in_slack), len(in_discord)) == (EACH, EACH)
    await asyncio.gather(
        *(vote_in_slack(slack, m) for m in in_slack),
        *(vote_in_discord(world, m) for m in in_discord),
    )

    for request in created:
        ended = await outcome(http, service.url, request["request_id"])
        assert ended["answers"] == APPROVED
        assert len(ended["votes"]) == 2
    for message in in_slack:
        final = await slack.wait_for_update(
            CHANNEL, message.ts, lambda m: not m.has_interactive_elements, timeout=20
        )
        assert "Approve" in final.visible_text
    for question in in_discord:
        edited = await emulator.wait_for_edit(
            question.id, lambda m: not m.is_interactive, timeout=20
        )
        assert "Approve" in edited.text

    # The storm did blow: every injected failure was met.
    statuses = {(c.method, c.status) for c in slack.api_calls}
    assert {("chat.postMessage", 429), ("chat.update", 429), ("chat.update", 503)} <= statuses
    assert {r.status for r in emulator.requests_to("PATCH", EDIT)} == {200, 429, 503}
    assert slack.unacked == []
