"""Discord misbehaving: a dropped gateway, rate limits on the message edit."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from askbridge.bots.service import Service
from tests.conftest import DATABASE, EXPECTED

from .conftest import World, ask, outcome, posted
from .test_answering import DEPLOY, ended

EDIT = "/channels/{channel_id}/messages/{message_id}"


async def test_a_dropped_gateway_reconnects_and_later_clicks_count(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, DATABASE))
    agent = asyncio.create_task(outcome(http, bridge.url, "ask_db", wait=20), name="agent")

    chose = await emulator.click(question, alice.id, "PostgreSQL")
    await chose.wait_for_ephemeral("Still to answer")
    await emulator.drop_gateway()
    await emulator.wait_gateway_ready(resumes=1)
    assert not agent.done()

    picked = await emulator.choose(question, alice.id, ["Caching", "Metrics"])
    await picked.wait_for_ephemeral("Press **Submit**")
    submitted = await emulator.click(question, alice.id, "Submit")
    await submitted.response()
    assert (submitted.delivered_to, submitted.queued_for) == (1, 0)

    final = await asyncio.wait_for(agent, 10)
    assert final["answers"] == EXPECTED
    stats = emulator.gateway_stats
    assert (stats.identifies, stats.resumes) == (1, 1)


async def test_a_rate_limited_edit_does_not_hold_up_the_answer(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator = world.emulator
    question = posted(emulator, await ask(http, bridge.url, DEPLOY))
    emulator.rate_limit_next("PATCH", EDIT, retry_after=1.0)

    await (await emulator.click(question, world.alice.id, "Yes")).response()
    final = await outcome(http, bridge.url, "ask_deploy")
    assert final["answers"] == {"Deploy": "Yes"}
    # The agent has its answer while discord.py is still waiting out the 429 ...
    assert 200 not in [r.status for r in emulator.requests_to("PATCH", EDIT)]
    # ... so the buttons are still there, and a late click is told who answered.
    late = await emulator.click(question, world.bob.id, "No")
    told = await late.wait_for_ephemeral()
    assert told.text == "This question was already answered by Alice."

    edited = await emulator.wait_for_edit(question.id, ended)
    assert "Answered by **Alice**" in edited.text
    assert [r.status for r in emulator.requests_to("PATCH", EDIT)] == [429, 200]


@pytest.mark.timeout(30)
async def test_an_edit_discord_py_gives_up_on_is_retried_later(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator = world.emulator
    question = posted(emulator, await ask(http, bridge.url, DEPLOY))
    # discord.py tries 5 times, then raises; the broker tries again a second later.
    emulator.rate_limit_next("PATCH", EDIT, times=5, retry_after=0.01)

    await (await emulator.click(question, world.bob.id, "No")).response()
    final = await outcome(http, bridge.url, "ask_deploy")
    assert final["answers"] == {"Deploy": "No"}

    edited = await emulator.wait_for_edit(question.id, ended)
    assert "Answered by **Bob**" in edited.text
    assert [r.status for r in emulator.requests_to("PATCH", EDIT)] == [429] * 5 + [200]


async def test_a_clean_stop_finishes_the_edits_in_hand(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator = world.emulator
    question = posted(emulator, await ask(http, bridge.url, DEPLOY))
    # discord.py raises on a 503; the broker tries the edit again a second later.
    emulator.fail_next("PATCH", EDIT, status=503)
    await (await emulator.click(question, world.alice.id, "Yes")).response()
    assert (await outcome(http, bridge.url, "ask_deploy"))["answers"] == {"Deploy": "Yes"}

    # SIGTERM with the edit still to do: the Discord client stays open until the broker has
    # finished it.
    await bridge.stop()
    assert ended(emulator.message(question.id))
    assert [r.status for r in emulator.requests_to("PATCH", EDIT)] == [503, 200]
