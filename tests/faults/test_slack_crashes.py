"""askbridge killed at each point of asking, voting and finishing, with a question in Slack.

Each test starts `askbridge serve` with `ASKBRIDGE_TEST_CRASH_AT=<point>`, sees it SIGKILL
itself there, starts it again, and checks that nothing was lost: the agent gets its answer,
every vote counts, and the one message of the request ends up showing how it ended.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import aiohttp
import pytest

from askbridge.bots.client import AskbridgeClient, request_body
from tests.conftest import DEPLOY
from tests.emulators.slack import Message, SlackEmulator
from tests.slack.conftest import CHANNEL, TARGET, Mode

from .conftest import Crashable, MakeCrashable, ask, outcome, recorded

APPROVED = {"Deploy": "Approve"}
RESTART_S = 60.0
"""How long the agent keeps asking while the server is down and starting again."""


def deploy(request_id: str, **policy: Any) -> dict[str, Any]:
    """The deploy gate as an agent asks it in #general."""
    questions = [copy.deepcopy(DEPLOY)]
    return request_body(questions, TARGET, request_id=request_id, **policy)


def agent(server: Crashable, request_id: str) -> asyncio.Task[dict[str, Any]]:
    """The agent asks with the client, which asks again when the server goes away before it
    answers, and long-polls until the request ends: the status object it ends with. It rides
    out the whole restart, however long a busy machine takes to start Python again: the
    client's default patience with a create (a few seconds) would make the test a race."""

    async def asking() -> dict[str, Any]:
        body = deploy(request_id)
        async with AskbridgeClient(server.url, create_patience_s=RESTART_S) as client:
            await client.create(body["questions"], target=TARGET, request_id=request_id)
            return await client.wait(request_id, recreate=body)

    return asyncio.create_task(asking(), name=f"agent-{request_id}")


async def question(
    http: aiohttp.ClientSession, server: Crashable, slack: SlackEmulator, request_id: str
) -> Message:
    """The request's one message in #general, once askbridge has recorded it."""
    found = await recorded(http, server.url, request_id)
    [message] = slack.messages(CHANNEL)
    assert [m["message_id"] for m in found["messages"]] == [message.ts]
    return message


async def final(slack: SlackEmulator, message: Message) -> Message:
    """The message once askbridge has replaced its buttons with how the request ended."""
    return await slack.wait_for_update(
        message.channel, message.ts, lambda m: not m.has_interactive_elements, timeout=10
    )


async def test_a_request_stored_but_never_posted_is_posted_on_restart(
    crashable: MakeCrashable, slack: SlackEmulator, http: aiohttp.ClientSession
) -> None:
    server = crashable(slack=slack)
    await server.start(crash_at="ask.stored")
    asking = agent(server, "ask_stored")
    await server.crashed("ask.stored")
    assert slack.messages(CHANNEL) == []

    # The startup sweep and the agent's retry both try to post it; it is posted once.
    await server.start()
    message = await question(http, server, slack, "ask_stored")
    (await slack.person("U1").click_button(message, "Approve")).assert_acked()
    assert (await asyncio.wait_for(asking, 10))["answers"] == APPROVED
    assert "Approve" in (await final(slack, message)).visible_text
    assert slack.call_count("chat.postMessage") == 1


async def test_a_message_slack_made_but_askbridge_never_recorded_is_found_not_repeated(
    crashable: MakeCrashable, slack: SlackEmulator, http: aiohttp.ClientSession
) -> None:
    server = crashable(slack=slack)
    await server.start(crash_at="ask.posted")
    asking = agent(server, "ask_posted")
    await server.crashed("ask.posted")
    # Slack shows the question; askbridge died before it wrote down where.
    [orphan] = slack.messages(CHANNEL)

    await server.start()
    assert await question(http, server, slack, "ask_posted") == slack.message(CHANNEL, orphan.ts)
    (await slack.person("U1").click_button(orphan, "Approve")).assert_acked()
    assert (await asyncio.wait_for(asking, 10))["answers"] == APPROVED
    assert "Approve" in (await final(slack, orphan)).visible_text
    assert slack.call_count("chat.postMessage") == 1
    assert slack.ephemerals("U1") == []  # the click was not refused as a stranger's


async def test_a_vote_recorded_but_not_acknowledged_counts_after_a_restart(
    crashable: MakeCrashable, slack: SlackEmulator, http: aiohttp.ClientSession
) -> None:
    server = crashable(slack=slack)
    await server.start(crash_at="vote.recorded")
    await ask(http, server.url, deploy("ask_vote"))
    message = await question(http, server, slack, "ask_vote")
    click = await slack.person("U1").click_button(message, "Approve")
    await server.crashed("vote.recorded")
    assert not click.acked  # Slack tells alice it failed; her vote is in the store all the same

    await server.start()
    assert (await outcome(http, server.url, "ask_vote"))["answers"] == APPROVED
    assert "Approve" in (await final(slack, message)).visible_text


@pytest.mark.parametrize("mode", ["socket", "http"])
async def test_a_kill_right_after_slack_got_the_ack_loses_no_click(
    crashable: MakeCrashable, slack: SlackEmulator, http: aiohttp.ClientSession, mode: Mode
) -> None:
    server = crashable(slack=slack, mode=mode)
    await server.start()
    await ask(http, server.url, deploy("ask_ack", quorum=2))
    message = await question(http, server, slack, "ask_ack")
    # Slack never delivers an acknowledged click again: it must be in the store by now.
    (await slack.person("U1").click_button(message, "Approve")).assert_acked()
    await server.kill()

    await server.start()
    (await slack.person("U2").click_button(message, "Approve")).assert_acked()
    answered = await outcome(http, server.url, "ask_ack")
    assert answered["answers"] == APPROVED
    assert sorted(v["voter"]["id"] for v in answered["votes"]) == ["U1", "U2"]
    assert "Approve" in (await final(slack, message)).visible_text


async def test_a_cancel_cut_short_by_a_crash_cancels_when_delivered_again(
    crashable: MakeCrashable, slack: SlackEmulator, http: aiohttp.ClientSession
) -> None:
    server = crashable(slack=slack)
    await server.start(crash_at="cancel.checked")
    await ask(http, server.url, deploy("ask_cancel"))
    message = await question(http, server, slack, "ask_cancel")
    click = await slack.person("U1").click_button(message, "Cancel")
    await server.crashed("cancel.checked")
    assert not click.acked

    await server.start()
    # The same click delivered again is the first of it the store hears of: it cancels.
    (await slack.replay(click)).assert_acked()
    cancelled = await outcome(http, server.url, "ask_cancel")
    assert cancelled["status"] == "cancelled"
    assert cancelled["cancelled_by"]["id"] == "U1"
    assert "Cancelled by <@U1>" in (await final(slack, message)).visible_text
    # Delivered a third time, it is acknowledged and nothing else.
    (await slack.replay(click)).assert_acked()
    assert slack.ephemerals("U1") == []


async def test_a_request_that_ended_just_before_a_crash_shows_it_after_the_restart(
    crashable: MakeCrashable, slack: SlackEmulator, http: aiohttp.ClientSession
) -> None:
    server = crashable(slack=slack)
    await server.start(crash_at="finish.recorded")
    await ask(http, server.url, deploy("ask_finish"))
    message = await question(http, server, slack, "ask_finish")
    with pytest.raises(aiohttp.ClientConnectionError):
        async with http.delete(f"{server.url}/v1/questions/ask_finish"):
            pass
    await server.crashed("finish.recorded")
    assert slack.message(CHANNEL, message.ts).has_interactive_elements

    await server.start()
    assert (await outcome(http, server.url, "ask_finish"))["status"] == "withdrawn"
    assert "Withdrawn by the agent" in (await final(slack, message)).visible_text


async def test_a_final_update_the_store_did_not_hear_of_is_made_again(
    crashable: MakeCrashable, slack: SlackEmulator, http: aiohttp.ClientSession
) -> None:
    server = crashable(slack=slack)
    await server.start(crash_at="render.updated")
    await ask(http, server.url, deploy("ask_render"))
    message = await question(http, server, slack, "ask_render")
    # The update runs beside the click's acknowledgement: the click may die unacknowledged.
    await slack.person("U1").click_button(message, "Approve")
    await server.crashed("render.updated")
    shown = slack.message(CHANNEL, message.ts)
    assert not shown.has_interactive_elements

    # Not knowing that the message shows the ending, the restarted server renders it again.
    await server.start()
    again = await slack.wait_for_update(CHANNEL, message.ts, after_version=shown.version)
    assert again.visible_text == shown.visible_text
    assert (await outcome(http, server.url, "ask_render"))["answers"] == APPROVED
