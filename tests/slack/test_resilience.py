"""An answer is never lost: not to a rate-limited or failing update, nor to a crash."""

from __future__ import annotations

import asyncio
import copy

import aiohttp
import pytest

from askbridge.bots.client import AskbridgeClient
from askbridge.core.ask import Ask
from askbridge.core.models import Request, Target
from tests.conftest import DATABASE, EXPECTED, StartService
from tests.emulators.slack import SlackEmulator
from tests.server_process import ServerProcess
from tests.slack.conftest import (
    CHANNEL,
    TARGET,
    Bridge,
    Mode,
    answer_fully,
    ask_body,
    serving,
    start_bridge,
)


def update_statuses(slack: SlackEmulator) -> list[int]:
    return [call.status for call in slack.api_calls if call.method == "chat.update"]


async def test_a_rate_limited_update_answers_the_agent_first(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(ask_body("ask_429"))
    slack.fail_next("chat.update", 429, retry_after=1)
    (await answer_fully(bridge, "U1", message)).assert_acked()

    outcome = await bridge.outcome("ask_429")
    assert outcome["answers"] == EXPECTED
    # The agent has its answer while Slack still says "wait a second" about the update.
    assert slack.message(message.channel, message.ts).has_interactive_elements
    final = await bridge.final(message)
    assert "Answered by <@U1>" in final.visible_text
    assert update_statuses(slack) == [429, 200]
    assert slack.call_count("chat.postEphemeral") == 0


async def test_a_clean_stop_finishes_the_message_updates_in_hand(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(ask_body("ask_stop"))
    slack.fail_next("chat.update", 429, retry_after=1)
    (await answer_fully(bridge, "U1", message)).assert_acked()
    assert (await bridge.outcome("ask_stop"))["answers"] == EXPECTED

    # SIGTERM while the update waits out Slack's Retry-After: the Web API client stays open
    # until the broker has finished it.
    await bridge.service.stop()
    assert not slack.message(message.channel, message.ts).has_interactive_elements
    assert update_statuses(slack) == [429, 200]


async def test_an_update_slack_refuses_is_retried_later(
    slack: SlackEmulator, start_service: StartService, http: aiohttp.ClientSession
) -> None:
    bridge = await start_bridge(slack, "socket", start_service, http)
    message = await bridge.ask(ask_body("ask_refused"))
    # An error the SDK does not retry by itself: the broker tries the update again later.
    slack.fail_next("chat.update", 200, error="internal_error")
    await answer_fully(bridge, "U1", message)
    assert (await bridge.outcome("ask_refused"))["answers"] == EXPECTED
    await bridge.final(message)
    calls = [call for call in slack.api_calls if call.method == "chat.update"]
    assert [call.response.get("error") for call in calls] == ["internal_error", None]


async def test_a_note_goes_through_response_url_when_ephemerals_fail(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(ask_body("ask_note"))
    slack.fail_next("chat.postEphemeral", 200, error="user_not_in_channel")
    await slack.person("U1").click_button(message, "Submit")
    note = await slack.wait_for_ephemeral("U1", contains='Please answer "Database", "Features"')
    assert note.via == "response_url"


async def test_a_request_waiting_in_slack_survives_a_crash(
    server: ServerProcess, slack: SlackEmulator, mode: Mode
) -> None:
    await serving(server, slack, mode)
    questions = copy.deepcopy(DATABASE["questions"])
    async with AskbridgeClient(server.url) as client:
        agent = asyncio.create_task(
            client.ask(questions, request_id="ask_crash", target=TARGET)  # type: ignore[arg-type]
        )
        message = await slack.wait_for_message(CHANNEL)
        alice = slack.person("U1")
        (await alice.choose_radio(message, "PostgreSQL")).assert_acked()
        await alice.tick_checkboxes(message, ["Caching", "Metrics"])

        await server.kill()
        await serving(server, slack, mode, port=server.port)
        assert not agent.done()

        (await alice.click_button(message, "Submit")).assert_acked()
        answer = await asyncio.wait_for(agent, 30)
    assert answer.answers == EXPECTED
    final = await slack.wait_for_update(
        message.channel, message.ts, lambda m: not m.has_interactive_elements
    )
    assert "Answered by <@U1>" in final.visible_text
    assert slack.unacked == []


async def test_clicks_are_acked_before_the_slow_work(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(ask_body("ask_slow"))
    # The note to alice will wait out a 2 s rate limit; her click must be acked well before.
    slack.ack_timeout = slack.socket.ack_timeout = 1.0
    slack.fail_next("chat.postEphemeral", 429, retry_after=2)
    click = await slack.person("U1").click_button(message, "Submit")
    click.assert_acked()
    assert slack.ephemerals("U1") == []
    await slack.wait_for_ephemeral("U1", contains="Please answer", timeout=10)


async def test_posting_rides_out_a_rate_limit_and_a_server_error(
    slack: SlackEmulator, start_service: StartService, http: aiohttp.ClientSession
) -> None:
    bridge = await start_bridge(slack, "http", start_service, http)
    slack.fail_next("chat.postMessage", 429, retry_after=1)
    slack.fail_next("chat.postMessage", 503)
    message = await bridge.ask(ask_body("ask_retry"))
    assert [c.status for c in slack.api_calls if c.method == "chat.postMessage"] == [429, 503, 200]
    assert message.has_interactive_elements


async def test_socket_mode_reconnects_when_slack_asks(
    slack: SlackEmulator, start_service: StartService, http: aiohttp.ClientSession
) -> None:
    bridge = await start_bridge(slack, "socket", start_service, http)
    message = await bridge.ask(ask_body("ask_reconnect"))
    first = await slack.wait_socket_connected()
    assert await slack.disconnect_socket("refresh_requested") == 1
    await slack.wait_socket_connected(after=first)
    assert slack.call_count("apps.connections.open") == 2

    (await answer_fully(bridge, "U1", message)).assert_acked()
    assert (await bridge.outcome("ask_reconnect"))["answers"] == EXPECTED


@pytest.mark.parametrize("refusal", ["missing_scope", "not_in_channel"])
async def test_a_question_slack_will_not_let_askbridge_look_for_is_posted_again(
    slack: SlackEmulator,
    start_service: StartService,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
    refusal: str,
) -> None:
    bridge = await start_bridge(slack, "http", start_service, http)
    # What a crash right after storing the request leaves; the agent then asks again.
    ask = Ask.parse(ask_body("ask_look"))
    stored = Request(
        request_id="ask_look",
        questions=ask.questions,
        targets=(Target(platform="slack", channel=CHANNEL),),
        created_at=bridge.service.broker.clock.now(),
    )
    await bridge.service.store.create(stored)
    slack.fail_next("conversations.history", 200, error=refusal)
    async with http.post(f"{bridge.url}/v1/questions", json=ask_body("ask_look")) as response:
        assert response.status == 200
        [posted] = (await response.json())["messages"]
    assert [m.ts for m in slack.messages(CHANNEL)] == [posted["message_id"]]
    assert f"cannot look in slack:{CHANNEL} for a message of ask_look" in caplog.text
