"""askbridge killed while posting to Discord, alone or together with Slack."""

from __future__ import annotations

import copy
from typing import Any

import aiohttp
import pytest

from askbridge.bots.client import request_body
from tests.conftest import DEPLOY
from tests.discord.conftest import World
from tests.emulators.discord import Message
from tests.emulators.slack import SlackEmulator
from tests.slack.conftest import CHANNEL, TARGET

from .conftest import MakeCrashable, ask, outcome, recorded

APPROVED = {"Deploy": "Approve"}


def deploy(request_id: str, *targets: str) -> dict[str, Any]:
    return request_body([copy.deepcopy(DEPLOY)], list(targets), request_id=request_id)


def ended(message: Message) -> bool:
    return not message.is_interactive


async def test_a_message_discord_made_but_askbridge_never_recorded_is_found_not_repeated(
    crashable: MakeCrashable, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, channel = world.emulator, world.channel.id
    server = crashable(discord=emulator)
    await server.start(crash_at="ask.posted")
    body = deploy("ask_posted", f"discord:{channel}")
    with pytest.raises(aiohttp.ClientConnectionError):
        await ask(http, server.url, body)
    await server.crashed("ask.posted")
    [orphan] = emulator.messages(channel)

    await server.start()
    # The agent asks again, as its client does when the server went away before answering.
    await ask(http, server.url, body, expect=200)
    found = await recorded(http, server.url, "ask_posted")
    assert [m["message_id"] for m in found["messages"]] == [str(orphan.id)]
    await (await emulator.click(orphan, world.alice.id, "Approve")).response()
    assert (await outcome(http, server.url, "ask_posted"))["answers"] == APPROVED
    edited = await emulator.wait_for_edit(orphan.id, ended, timeout=10)
    assert "Answered by **Alice**" in edited.text
    assert [m.id for m in emulator.messages(channel)] == [orphan.id]


async def test_a_crash_between_two_targets_posts_only_the_one_left(
    crashable: MakeCrashable, world: World, slack: SlackEmulator, http: aiohttp.ClientSession
) -> None:
    emulator, channel = world.emulator, world.channel.id
    server = crashable(slack=slack, discord=emulator)
    # The first target's message is recorded, then the process dies.
    await server.start(crash_at="ask.recorded#1")
    body = deploy("ask_both", TARGET, f"discord:{channel}")
    with pytest.raises(aiohttp.ClientConnectionError):
        await ask(http, server.url, body)
    await server.crashed("ask.recorded")
    [in_slack] = slack.messages(CHANNEL)
    assert emulator.messages(channel) == []

    await server.start()
    await recorded(http, server.url, "ask_both")
    [in_discord] = emulator.messages(channel)
    assert slack.messages(CHANNEL) == [slack.message(CHANNEL, in_slack.ts)]
    await (await emulator.click(in_discord, world.alice.id, "Approve")).response()
    assert (await outcome(http, server.url, "ask_both"))["answers"] == APPROVED
    await emulator.wait_for_edit(in_discord.id, ended, timeout=10)
    await slack.wait_for_update(
        CHANNEL, in_slack.ts, lambda m: not m.has_interactive_elements, timeout=10
    )
    assert slack.call_count("chat.postMessage") == 1
