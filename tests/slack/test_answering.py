"""People answer in Slack; the agent gets the answer; the message shows the outcome."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import asyncpg
import pytest

from askbridge.adapters.slack.handlers import ACK_WITHIN_S
from askbridge.core.clock import ManualClock
from askbridge.core.models import Person
from tests.conftest import DEPLOY, EXPECTED, StartService
from tests.emulators.slack import SlackEmulator
from tests.slack.conftest import Bridge, Mode, ask_body, start_bridge
from tests.stores import postgres_schema


def answered_by(user_id: str, name: str) -> Person:
    return Person(platform="slack", id=user_id, name=name)


async def test_the_spec_example_is_answered_in_slack(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(ask_body("ask_spec", context="deploy-bot: choosing a store"))
    shown = message.visible_text
    for piece in (
        "deploy-bot: choosing a store",
        "*Database*",
        "Which database should we use?",
        "PostgreSQL",
        "Relational with advanced features",
        "Which features do you want?",
        "Performance monitoring",
        "Submit",
        "Cancel",
    ):
        assert piece in shown
    assert message.text, "a plain-text fallback is always sent"

    alice = slack.person("U1")
    (await alice.choose_radio(message, "PostgreSQL")).assert_acked()
    for tick in await alice.tick_checkboxes(message, ["Metrics", "Caching"]):
        tick.assert_acked()
    # Choices stay in alice's client: nothing is stored or sent until she presses Submit.
    assert await bridge.event_kinds("ask_spec") == ["created", "posted"]
    _, draft = await bridge.service.store.get_with_draft("ask_spec", answered_by("U1", "alice"))
    assert draft == {}
    (await alice.click_button(message, "Submit")).assert_acked()

    outcome = await bridge.outcome("ask_spec")
    assert outcome["status"] == "answered"
    assert outcome["answers"] == EXPECTED
    assert outcome["answered_by"] == {"platform": "slack", "id": "U1", "name": "alice"}

    final = await bridge.final(message)
    assert not final.has_interactive_elements
    assert "Answered by <@U1>" in final.visible_text
    assert "PostgreSQL" in final.visible_text
    assert "Caching, Metrics" in final.visible_text
    assert "alice" in final.text
    assert slack.unacked == []
    assert slack.invalid_blocks_count == 0


async def test_one_single_select_question_is_answered_in_one_click(bridge: Bridge) -> None:
    body = ask_body("ask_one")
    body["questions"] = body["questions"][:1]
    message = await bridge.ask(body)
    assert "Submit" not in message.visible_text
    assert "Lightweight embedded database" in message.visible_text

    (await bridge.slack.person("U2").click_button(message, "SQLite")).assert_acked()

    outcome = await bridge.outcome("ask_one")
    assert outcome["answers"] == {"Database": "SQLite"}
    final = await bridge.final(message)
    assert "Answered by <@U2>" in final.visible_text
    assert "SQLite" in final.visible_text


async def test_submit_with_a_missing_answer_is_refused_with_a_note(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(ask_body("ask_missing"))
    alice = slack.person("U1")
    await alice.choose_radio(message, "SQLite")
    (await alice.click_button(message, "Submit")).assert_acked()

    note = await slack.wait_for_ephemeral("U1", contains='Please answer "Features"')
    assert note.channel == message.channel
    assert "Database" not in note.visible_text
    assert (await bridge.status("ask_missing"))["status"] == "waiting"
    assert await bridge.event_kinds("ask_missing") == ["created", "posted"]
    assert slack.message(message.channel, message.ts).has_interactive_elements

    await alice.tick_checkboxes(message, ["Logging"])
    await alice.click_button(message, "Submit")
    outcome = await bridge.outcome("ask_missing")
    assert outcome["answers"] == {"Database": "SQLite", "Features": "Logging"}


async def test_cancel_interrupts_the_agent(bridge: Bridge) -> None:
    slack = bridge.slack
    url = f"{bridge.url}/v1/agent?target=slack:C0GENERAL".replace("http", "ws", 1)
    async with bridge.http.ws_connect(url) as socket:
        await socket.send_json({"AskUserQuestion": ask_body("ask_cancel")})
        message = await slack.wait_for_message("C0GENERAL")
        click = await slack.person("U2").click_button(message, "Cancel")
        click.assert_acked()
        assert click.confirm is not None
        assert "The agent will be interrupted" in click.confirm["text"]["text"]
        assert await socket.receive_json(timeout=10) == "Interrupt"

    outcome = await bridge.status("ask_cancel")
    assert outcome["status"] == "cancelled"
    assert outcome["error"] == "Interrupted"
    assert outcome["cancelled_by"]["id"] == "U2"
    final = await bridge.final(message)
    assert "Cancelled by <@U2>" in final.visible_text
    assert "interrupted" in final.visible_text


async def test_withdrawing_updates_the_message(bridge: Bridge) -> None:
    message = await bridge.ask(ask_body("ask_withdraw"))
    async with bridge.http.delete(f"{bridge.url}/v1/questions/ask_withdraw") as response:
        assert response.status == 200
    final = await bridge.final(message)
    assert "Withdrawn by the agent" in final.visible_text
    assert "Which database should we use?" in final.visible_text


async def test_expiry_updates_the_message(bridge: Bridge, clock: ManualClock) -> None:
    message = await bridge.ask(ask_body("ask_expire", timeout_s=30))
    await clock.advance(31)
    outcome = await bridge.outcome("ask_expire")
    assert outcome["status"] == "expired"
    final = await bridge.final(message)
    assert "Expired without an answer" in final.visible_text
    # A click from a screen that has not refreshed yet is told what happened.
    await bridge.slack.person("U1").click_button(message, "Submit", stale=True)
    await bridge.slack.wait_for_ephemeral("U1", contains="expired before anyone answered")


async def test_a_member_id_target_asks_in_a_dm(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(ask_body("ask_dm", target="slack:U1"))
    dm = slack.dm_channel("U1")
    assert dm is not None
    assert message.channel == dm
    assert slack.calls("conversations.open")[0]["users"] == "U1"

    alice = slack.person("U1")
    await alice.choose_radio(message, "PostgreSQL")
    await alice.tick_checkboxes(message, ["Caching", "Metrics"])
    await alice.click_button(message, "Submit")
    outcome = await bridge.outcome("ask_dm")
    assert outcome["answers"] == EXPECTED
    assert outcome["messages"] == [{"platform": "slack", "channel": dm, "message_id": message.ts}]
    assert "Answered by <@U1>" in (await bridge.final(message)).visible_text


async def test_a_thread_target_asks_in_the_thread(bridge: Bridge) -> None:
    slack = bridge.slack
    parent = await slack.workspace.post("C0GENERAL", "Deploying the new service", [])
    message = await bridge.ask(ask_body("ask_thread", target=f"slack:C0GENERAL/{parent.ts}"))
    assert message.thread_ts == parent.ts

    alice = slack.person("U1")
    await alice.click_button(message, "Submit")
    note = await slack.wait_for_ephemeral("U1", contains='Please answer "Database", "Features"')
    assert note.thread_ts == parent.ts

    await alice.choose_radio(message, "PostgreSQL")
    await alice.tick_checkboxes(message, ["Caching", "Metrics"])
    await alice.click_button(message, "Submit")
    assert (await bridge.outcome("ask_thread"))["answers"] == EXPECTED
    final = await bridge.final(message)
    assert final.thread_ts == parent.ts


@pytest.fixture
async def postgres_url() -> AsyncIterator[str]:
    """Set up before (so torn down after) the service that uses it."""
    async with postgres_schema() as url:
        yield url


@pytest.mark.serial
async def test_a_click_the_store_holds_up_is_acknowledged_in_time_and_still_counts(
    postgres_url: str,
    slack: SlackEmulator,
    mode: Mode,
    start_service: StartService,
    http: aiohttp.ClientSession,
) -> None:
    """Slack gives up on a click unacknowledged after 3 s: a store that cannot record it at
    once (here a row lock held elsewhere) gets it acknowledged after ACK_WITHIN_S, and the vote
    is recorded and reaches the agent once the store can take it."""
    bridge = await start_bridge(slack, mode, start_service, http, database_url=postgres_url)
    message = await bridge.ask(ask_body("ask_held", questions=[DEPLOY]))
    holder = await asyncpg.connect(postgres_url.split("?")[0])
    try:
        schema = postgres_url.split("search_path=")[1]
        held = holder.transaction()
        await held.start()
        await holder.execute(
            f"SELECT 1 FROM {schema}.requests WHERE request_id = $1 FOR UPDATE", "ask_held"
        )
        clicked = await slack.person("U1").click_button(message, "Approve")
        clicked.assert_acked()
        assert ACK_WITHIN_S <= clicked.elapsed < 3.0
        assert (await bridge.status("ask_held"))["status"] == "waiting"
        await held.rollback()
    finally:
        await holder.close()
    outcome = await bridge.outcome("ask_held")
    assert outcome["answers"] == {"Deploy": "Approve"}
    assert outcome["answered_by"]["id"] == "U1"
