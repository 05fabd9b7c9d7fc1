"""askbridge killed with a Discord question waiting: a new process, a new client, old buttons."""

from __future__ import annotations

import asyncio
import copy

from askbridge.bots.client import AskbridgeClient
from tests.conftest import DATABASE, EXPECTED
from tests.server_process import ServerProcess

from .conftest import World, check_discord_was_never_let_down


async def test_clicks_on_a_message_from_before_a_crash_are_handled(
    server: ServerProcess, world: World
) -> None:
    emulator, alice = world.emulator, world.alice
    url = await server.start()
    questions = copy.deepcopy(DATABASE["questions"])
    async with AskbridgeClient(url) as client:
        agent = asyncio.create_task(
            client.ask(questions, request_id="ask_restart"),  # type: ignore[arg-type]
            name="agent",
        )
        question = await emulator.wait_for_message(world.channel.id)
        chose = await emulator.click(question, alice.id, "PostgreSQL")
        await chose.wait_for_ephemeral("Still to answer")

        await server.kill()
        assert not agent.done()
        await server.start(port=server.port)
        await emulator.wait_gateway_ready(identifies=2)

        # The new process's client serves the old message; Alice's earlier choice was kept.
        picked = await emulator.choose(question, alice.id, ["Caching", "Metrics"])
        await picked.wait_for_ephemeral("Press **Submit**")
        submitted = await emulator.click(question, alice.id, "Submit")
        await submitted.response()
        answer = await asyncio.wait_for(agent, 30)
        # Only the new process's session was there to receive the click.
        assert (submitted.delivered_to, submitted.queued_for) == (1, 1)

    assert answer.request_id == "ask_restart"
    assert answer.answers == EXPECTED
    edited = await emulator.wait_for_edit(question.id, lambda m: not m.is_interactive)
    assert "Answered by **Alice**" in edited.text
    assert emulator.messages(world.channel.id) == [edited]  # answered in place, not re-posted
    await check_discord_was_never_let_down(emulator)


async def test_a_typed_form_opened_before_a_crash_is_submitted_after_it(
    server: ServerProcess, world: World
) -> None:
    emulator, alice = world.emulator, world.alice
    url = await server.start()
    schema = {
        "type": "object",
        "properties": {"ticket": {"type": "integer", "title": "Ticket", "maximum": 9}},
        "required": ["ticket"],
    }
    async with AskbridgeClient(url) as client:
        agent = asyncio.create_task(
            client.ask_form("Which ticket?", schema, request_id="form_restart"), name="agent"
        )
        question = await emulator.wait_for_message(world.channel.id)
        opened = await emulator.click(question, alice.id, "Fill in…")
        await opened.modal()

        await server.kill()
        await server.start(port=server.port)
        await emulator.wait_gateway_ready(identifies=2)

        # The new process reads the submission from the interaction alone.
        submitted = await emulator.submit_modal(opened, {"Ticket": "7"})
        await submitted.response()
        answer = await asyncio.wait_for(agent, 30)

    assert (answer.action, answer.content) == ("accept", {"ticket": 7})
    await emulator.wait_for_edit(question.id, lambda m: not m.is_interactive)
    await check_discord_was_never_let_down(emulator)
