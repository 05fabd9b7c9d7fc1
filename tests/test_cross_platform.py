"""One request on Slack and Discord at once: votes from both count toward one quorum."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from askbridge.bots.service import Service
from tests.conftest import DEPLOY, StartService
from tests.discord.conftest import check_discord_was_never_let_down, discord_env, posted
from tests.emulators.discord import DiscordEmulator
from tests.emulators.slack import SlackEmulator
from tests.slack.conftest import CHANNEL, slack_settings


async def votes(http: aiohttp.ClientSession, url: str, count: int) -> dict[str, Any]:
    """The status object once `count` votes are in; woken by askbridge's change feed."""
    since = 0
    while True:
        async with http.get(f"{url}/v1/questions/ask_both") as response:
            found: dict[str, Any] = await response.json()
        if len(found["votes"]) >= count or found["status"] != "waiting":
            return found
        async with http.get(f"{url}/web/changes?since={since}") as response:
            since = (await response.json())["version"]


@pytest.fixture
async def slack() -> AsyncIterator[SlackEmulator]:
    async with SlackEmulator() as emulator:
        emulator.add_user("U1", "alice")
        emulator.add_user("U2", "bob")
        emulator.add_channel(CHANNEL, "deploys")
        yield emulator


@pytest.fixture
async def discord() -> AsyncIterator[DiscordEmulator]:
    async with DiscordEmulator(bot_username="askbridge-bot") as emulator:
        yield emulator


async def test_votes_on_both_platforms_count_together(
    slack: SlackEmulator,
    discord: DiscordEmulator,
    start_service: StartService,
    http: aiohttp.ClientSession,
) -> None:
    guild = discord.add_guild("team")
    channel = discord.add_text_channel(guild.id, "deploys")
    carol = discord.add_user("carol", global_name="Carol")
    discord.add_member(guild.id, carol.id)
    dave = discord.add_user("dave", global_name="Dave")
    discord.add_member(guild.id, dave.id)
    connections = slack.socket.connections_total
    service: Service = await start_service(
        **slack_settings(slack, "socket"), **discord_env(discord)
    )
    await slack.wait_socket_connected(after=connections)

    body: dict[str, Any] = {
        "request_id": "ask_both",
        "questions": [DEPLOY],
        "target": [f"slack:{CHANNEL}", f"discord:{channel.id}"],
        "quorum": 2,
    }
    async with http.post(f"{service.url}/v1/questions", json=body) as response:
        created = await response.json()
        assert response.status == 201, created
    assert created["target"] == [f"slack:{CHANNEL}", f"discord:{channel.id}"]
    assert [m["platform"] for m in created["messages"]] == ["slack", "discord"]
    slack_ref = created["messages"][0]
    slack_message = slack.message(slack_ref["channel"], slack_ref["message_id"])
    discord_message = posted(discord, created)

    # Alice approves in Slack; Dave, in Discord, rejects: no quorum yet.
    (await slack.person("U1").click_button(slack_message, "Approve")).assert_acked()
    await votes(http, service.url, 1)
    await (await discord.click(discord_message, dave.id, "Reject")).response()
    waiting = await votes(http, service.url, 2)
    assert waiting["status"] == "waiting"
    assert sorted(v["answers"]["Deploy"] for v in waiting["votes"]) == ["Approve", "Reject"]

    # Carol approves in Discord: two matching votes across the two platforms.
    await (await discord.click(discord_message, carol.id, "Approve")).response()
    async with http.get(f"{service.url}/v1/questions/ask_both?wait=10") as response:
        final = await response.json()
    assert final["status"] == "answered"
    assert final["answers"] == {"Deploy": "Approve"}
    approvers = sorted(
        (v["voter"]["platform"], v["voter"]["id"])
        for v in final["votes"]
        if v["answers"] == {"Deploy": "Approve"}
    )
    assert approvers == [("discord", str(carol.id)), ("slack", "U1")]

    # Both messages end updated, with nothing left to click.
    ended_slack = await slack.wait_for_update(
        slack_message.channel, slack_message.ts, lambda m: not m.has_interactive_elements
    )
    assert "Approve" in ended_slack.visible_text
    ended_discord = await discord.wait_for_edit(discord_message.id, lambda m: not m.is_interactive)
    assert "Approve" in ended_discord.text
    assert slack.invalid_blocks_count == 0
    await check_discord_was_never_let_down(discord)
