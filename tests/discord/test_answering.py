"""Answering in Discord, end to end: the agent API, askbridge's discord.py client, the emulator."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import aiohttp

from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from askbridge.core.models import Request, Target
from askbridge.core.questions import parse_questions
from tests.conftest import DATABASE, EXPECTED, story
from tests.emulators.discord import Message

from .conftest import World, ask, outcome, posted

DEPLOY = {
    "request_id": "ask_deploy",
    "questions": [
        {
            "question": "Deploy to production now?",
            "header": "Deploy",
            "options": [
                {"label": "Yes", "description": "Ship it"},
                {"label": "No", "description": "Wait for the next window"},
            ],
        }
    ],
}
"""One single-select question: answered by one click."""


def ended(message: Message) -> bool:
    return not message.is_interactive


async def test_the_spec_example(bridge: Service, world: World, http: aiohttp.ClientSession) -> None:
    emulator, alice = world.emulator, world.alice
    body = {**DATABASE, "context": "demo agent: setting up a new service"}
    question = posted(emulator, await ask(http, bridge.url, body))

    # Everything a person needs to decide is on the message.
    assert question.channel_id == world.channel.id
    assert question.is_components_v2
    for text in (
        "demo agent: setting up a new service",
        "**Database** · Which database should we use?",
        "**PostgreSQL** — Relational with advanced features",
        "**SQLite** — Lightweight embedded database",
        "**Features** · Which features do you want?",
        "- Caching: Response caching",
        "- Logging: Detailed logs",
        "- Metrics: Performance monitoring",
    ):
        assert text in question.text
    assert question.controls() == (
        "button 'PostgreSQL' in row 0; button 'SQLite' in row 0; "
        "select placeholder='Features: choose one or more' "
        "options=['Caching', 'Logging', 'Metrics'] min=1 max=3 in row 1; "
        "button 'Submit' in row 2; button 'Cancel' in row 2"
    )

    chose = await emulator.click(question, alice.id, "PostgreSQL")
    await chose.response()
    await chose.wait_for_ephemeral("**Database**: PostgreSQL. Still to answer: **Features**")
    picked = await emulator.choose(question, alice.id, ["Caching", "Metrics"])
    await picked.response()
    await picked.wait_for_ephemeral("**Features**: Caching, Metrics. Press **Submit**")
    submitted = await emulator.click(question, alice.id, "Submit")
    await submitted.response()

    final = await outcome(http, bridge.url, "ask_db")
    assert final["status"] == "answered"
    assert final["answers"] == EXPECTED
    assert final["answered_by"] == {"platform": "discord", "id": str(alice.id), "name": "Alice"}

    edited = await emulator.wait_for_edit(question.id, ended)
    assert edited.components, "the final message still shows the questions"
    assert "→ **PostgreSQL**" in edited.text
    assert "→ **Caching, Metrics**" in edited.text
    assert "Answered by **Alice** · <t:" in edited.text
    assert submitted.followups == []  # a successful submit needs no extra message
    assert emulator.rejections == []


async def test_one_click_answers_a_single_single_select_question(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator = world.emulator
    question = posted(emulator, await ask(http, bridge.url, DEPLOY))
    assert "[Submit]" not in question.text
    assert "[Cancel]" in question.text

    click = await emulator.click(question, world.bob.id, "No")
    await click.response()

    final = await outcome(http, bridge.url, "ask_deploy")
    assert final["answers"] == {"Deploy": "No"}
    assert final["answered_by"]["name"] == "Bob"
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "→ **No**" in edited.text


async def test_submit_with_a_missing_answer_names_it(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, DATABASE))
    chose = await emulator.click(question, alice.id, "SQLite")
    await chose.wait_for_ephemeral("Still to answer")

    early = await emulator.click(question, alice.id, "Submit")
    await early.response()
    reply = await early.wait_for_ephemeral()
    assert reply.text == 'Please answer "Features" before submitting.'
    assert emulator.ephemerals(world.bob.id) == []
    assert (await outcome(http, bridge.url, "ask_db", wait=0))["status"] == "waiting"
    assert emulator.message(question.id).is_interactive

    # Bob's choices are his own: Alice's SQLite does not count for him.
    bobs = await emulator.choose(question, world.bob.id, ["Logging"])
    await bobs.wait_for_ephemeral("Still to answer: **Database**")

    picked = await emulator.choose(question, alice.id, ["Logging"])
    await picked.wait_for_ephemeral("Press **Submit**")
    await (await emulator.click(question, alice.id, "Submit")).response()
    final = await outcome(http, bridge.url, "ask_db")
    assert final["answers"] == {"Database": "SQLite", "Features": "Logging"}


async def test_cancel_interrupts_the_agent(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator = world.emulator
    async with http.ws_connect(f"{bridge.url}/v1/agent") as socket:
        await socket.send_json({"AskUserQuestion": DATABASE})
        question = await emulator.wait_for_message(world.channel.id)
        cancel = await emulator.click(question, world.bob.id, "Cancel")
        sure = await cancel.wait_for_ephemeral(
            "Cancel this question? The agent will be interrupted"
        )
        # Asking does not cancel: the agent still waits, and the message still takes answers.
        assert (await outcome(http, bridge.url, "ask_db", wait=0))["status"] == "waiting"
        assert emulator.message(question.id).is_interactive
        confirmed = await emulator.click(sure, world.bob.id, "Cancel question")
        await confirmed.response()
        frame = await socket.receive(timeout=10)
    assert json.loads(frame.data) == "Interrupt"
    # The private question becomes what came of it, without its button.
    done = await emulator.wait_for_edit(sure.id, lambda m: not m.is_interactive)
    assert done.text == "Cancelled by **Bob** — the agent was interrupted."
    assert done.ephemeral_for == world.bob.id

    final = await outcome(http, bridge.url, "ask_db")
    assert final["status"] == "cancelled"
    assert final["error"] == "Interrupted"
    assert final["cancelled_by"]["name"] == "Bob"
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "Cancelled by **Bob** — the agent was interrupted · <t:" in edited.text
    assert "**Database** · Which database should we use?" in edited.text


async def test_a_cancel_confirmed_by_someone_who_may_not_answer_is_refused(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    only_bob = {**DEPLOY, "answerers": [f"discord:@{bob.id}"]}
    question = posted(emulator, await ask(http, bridge.url, only_bob))
    asked = await emulator.click(question, alice.id, "Cancel")
    sure = await asked.wait_for_ephemeral("Cancel this question?")
    await (await emulator.click(sure, alice.id, "Cancel question")).response()
    refused = await emulator.wait_for_edit(sure.id, lambda m: not m.is_interactive)
    assert refused.text.startswith(f"Only these people may answer this question: <@{bob.id}>.")
    assert (await outcome(http, bridge.url, "ask_deploy", wait=0))["status"] == "waiting"
    assert await story(http, bridge.url, "ask_deploy") == [
        ("created", None),
        ("posted", None),
        ("denied", "Alice"),
    ]


async def test_a_cancel_confirmed_too_late_says_how_the_question_ended(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    question = posted(emulator, await ask(http, bridge.url, DEPLOY))
    sure = await (await emulator.click(question, bob.id, "Cancel")).wait_for_ephemeral("Cancel")
    await (await emulator.click(question, alice.id, "Yes")).response()
    assert (await outcome(http, bridge.url, "ask_deploy"))["answers"] == {"Deploy": "Yes"}
    await (await emulator.click(sure, bob.id, "Cancel question")).response()
    late = await emulator.wait_for_edit(sure.id, lambda m: not m.is_interactive)
    assert late.text == "This question was already answered by Alice."
    assert (await outcome(http, bridge.url, "ask_deploy", wait=0))["status"] == "answered"


async def test_withdrawing_edits_the_message(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    question = posted(world.emulator, await ask(http, bridge.url, DATABASE))
    async with http.delete(f"{bridge.url}/v1/questions/ask_db") as response:
        assert response.status == 200
    edited = await world.emulator.wait_for_edit(question.id, ended)
    assert "Withdrawn by the agent" in edited.text


async def test_expiry_edits_the_message(
    bridge: Service, world: World, http: aiohttp.ClientSession, clock: ManualClock
) -> None:
    question = posted(world.emulator, await ask(http, bridge.url, {**DATABASE, "timeout_s": 30}))
    await clock.advance(31)
    final = await outcome(http, bridge.url, "ask_db")
    assert final["error"] == "Timed out waiting for an answer"
    edited = await world.emulator.wait_for_edit(question.id, ended)
    assert "Expired without an answer" in edited.text


async def test_a_click_for_an_unknown_request_says_it_is_gone(
    bridge: Service, world: World
) -> None:
    # A message whose request the store never had (its database was deleted, say).
    [runtime] = bridge.runtimes
    ghost = Request(
        request_id="ask_ghost",
        questions=parse_questions(DEPLOY["questions"]),
        targets=(Target(platform="discord", channel=str(world.channel.id)),),
        created_at=datetime.now(UTC),
    )
    ref = await runtime.surface.post(ghost, ghost.targets[0])
    click = await world.emulator.click(int(ref.message_id), world.alice.id, "Yes")
    await click.response()
    reply = await click.wait_for_ephemeral()
    assert reply.text == "This question is no longer available."
