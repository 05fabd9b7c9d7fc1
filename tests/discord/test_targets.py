"""Where a request goes: a channel, a thread, a DM; and targets that cannot work."""

from __future__ import annotations

import aiohttp
import pytest

from askbridge.bots.service import Service
from tests.conftest import DATABASE, EXPECTED

from .conftest import World, ask, outcome, posted
from .test_answering import DEPLOY, ended


async def test_a_dm_target_asks_one_person_privately(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    status = await ask(http, bridge.url, {**DATABASE, "target": f"discord:@{alice.id}"})
    assert status["target"] == f"discord:@{alice.id}"
    question = posted(emulator, status)
    dm = emulator.dm_channel(alice.id)
    assert question.channel_id == dm.id
    assert question.guild_id is None
    assert emulator.messages(world.channel.id) == []

    chose = await emulator.click(question, alice.id, "PostgreSQL")
    await chose.wait_for_ephemeral("Still to answer")
    assert "user" in chose.payload  # a DM click carries a user, not a member
    picked = await emulator.choose(question, alice.id, ["Caching", "Metrics"])
    await picked.wait_for_ephemeral("Press **Submit**")
    await (await emulator.click(question, alice.id, "Submit")).response()

    final = await outcome(http, bridge.url, "ask_db")
    assert final["answers"] == EXPECTED
    assert final["answered_by"]["name"] == "Alice"
    assert final["messages"][0]["channel"] == str(dm.id)
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "Answered by **Alice**" in edited.text


@pytest.mark.parametrize("form", ["thread", "channel/thread"])
async def test_a_thread_target_asks_in_the_thread(
    bridge: Service, world: World, http: aiohttp.ClientSession, form: str
) -> None:
    emulator = world.emulator
    thread = emulator.add_thread(world.channel.id, "release-42")
    target = (
        f"discord:{thread.id}" if form == "thread" else f"discord:{world.channel.id}/{thread.id}"
    )
    question = posted(emulator, await ask(http, bridge.url, {**DEPLOY, "target": target}))
    assert question.channel_id == thread.id
    assert emulator.messages(world.channel.id) == []

    await (await emulator.click(question, world.bob.id, "Yes")).response()
    final = await outcome(http, bridge.url, "ask_deploy")
    assert final["answers"] == {"Deploy": "Yes"}
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "Answered by **Bob**" in edited.text


async def test_a_question_in_a_thread_archived_since_is_still_brought_up_to_date(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator = world.emulator
    thread = emulator.add_thread(world.channel.id, "release-42")
    status = await ask(http, bridge.url, {**DATABASE, "target": f"discord:{thread.id}"})
    question = posted(emulator, status)
    emulator.archive_thread(thread.id)  # quiet for its auto-archive duration
    async with http.delete(f"{bridge.url}/v1/questions/ask_db") as response:
        assert response.status == 200
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "Withdrawn by the agent" in edited.text
    assert not thread.archived  # as a reply in it would have unarchived it


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (
            "discord:general",
            "'general' is not a Discord id (channels and users are named by number",
        ),
        ("discord", "names no channel; use 'discord:<channel id>'"),
        ("discord:@alice", "'alice' is not a Discord id"),
        ("discord:@123/456", "a direct message has no threads"),
    ],
)
async def test_a_target_that_cannot_work_is_refused_with_a_fix(
    bridge: Service, http: aiohttp.ClientSession, target: str, expected: str
) -> None:
    async with http.post(
        f"{bridge.url}/v1/questions", json={**DEPLOY, "target": target}
    ) as response:
        assert response.status == 422
        error = (await response.json())["error"]
    assert expected in error
    assert "Copy ID" in error


async def test_a_channel_the_bot_cannot_see_fails_the_ask_clearly(
    bridge: Service, http: aiohttp.ClientSession
) -> None:
    async with http.post(
        f"{bridge.url}/v1/questions", json={**DEPLOY, "target": "discord:123456789012345678"}
    ) as response:
        assert response.status == 502
        error = (await response.json())["error"]
    assert "the bot cannot post in 'discord:123456789012345678'" in error
    assert "Send Messages" in error


async def test_a_person_who_blocks_dms_fails_the_ask_clearly(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    shy = world.emulator.add_user("shy", dms_blocked=True)
    async with http.post(
        f"{bridge.url}/v1/questions", json={**DEPLOY, "target": f"discord:@{shy.id}"}
    ) as response:
        assert response.status == 502
        error = (await response.json())["error"]
    assert f"user {shy.id} does not accept direct messages from the bot" in error
