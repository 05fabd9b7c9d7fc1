"""Answers in a person's own words, and notes, in Discord, end to end: the button, the modal
(interaction response type 9), its submission (MODAL_SUBMIT), what the agent receives, what
is refused, the final message, and a form that outlives a restart."""

from __future__ import annotations

import copy

import aiohttp
import pytest

from askbridge.bots.service import Service
from tests.conftest import DATABASE, DEPLOY, audit_events, story
from tests.emulators.discord import (
    CannotSubmit,
    DiscordEmulator,
    InteractionHandle,
    Message,
    live_markdown,
    mentioned_in,
)
from tests.server_process import ServerProcess

from .conftest import World, ask, check_discord_was_never_let_down, outcome, posted

WORDS = "Answer in my words…"
OPEN = {**copy.deepcopy(DATABASE), "allow_other": True, "allow_notes": True}
"""The spec's two questions, taking words of one's own and notes."""
QUESTION = "Which database should we use?"


def ended(message: Message) -> bool:
    return not message.is_interactive


async def open_form(
    emulator: DiscordEmulator, question: Message, user_id: int
) -> InteractionHandle:
    opened = await emulator.click(question, user_id, WORDS)
    await opened.modal()
    return opened


async def test_own_words_for_one_question_and_an_option_for_another(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, OPEN))
    assert question.controls().endswith(
        "button 'Submit' in row 2; button 'Answer in my words…' in row 2; button 'Cancel' in row 2"
    )
    picked = await emulator.choose(question, alice.id, ["Caching", "Metrics"])
    await picked.wait_for_ephemeral("Still to answer: **Database**")

    opened = await open_form(emulator, question, alice.id)
    form = await opened.modal()
    assert form.title == "Answer in your own words"
    database, features, note = form.fields
    assert (database.label, database.description) == ("Database", QUESTION)
    assert database.value == ""  # nothing picked yet
    assert database.placeholder == "One of PostgreSQL / SQLite, or your own answer"
    assert (database.required, database.min_length, database.max_length) == (True, 1, 2000)
    assert features.value == "Caching, Metrics"  # what Alice picked
    assert (note.label, note.required, note.style) == ("A note for the agent", False, 2)

    submitted = await emulator.submit_modal(opened, {"Database": "  Neither — use MySQL 8 "})
    assert (await submitted.response()).type == 6
    final = await outcome(http, bridge.url, "ask_db")
    assert final["answers"] == {"Database": "Neither — use MySQL 8", "Features": "Caching, Metrics"}
    assert final["answered_by"]["name"] == "Alice"
    assert "notes" not in final
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "→ **Neither — use MySQL 8**" in edited.text
    assert "→ **Caching, Metrics**" in edited.text
    assert submitted.followups == []  # the message says it all


async def test_multi_select_options_and_own_words_in_one_field(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, OPEN))
    await (await emulator.click(question, alice.id, "SQLite")).wait_for_ephemeral("Still")
    picked = await emulator.choose(question, alice.id, ["Caching", "Logging"])
    await picked.wait_for_ephemeral("Press **Submit**")  # the choice is kept

    opened = await open_form(emulator, question, alice.id)
    form = await opened.modal()
    assert [f.value for f in form.fields] == ["SQLite", "Caching, Logging", ""]
    # The field is the whole answer: Logging, deleted there, is no longer chosen.
    typed = {"Features": "Metrics, Caching, tracing too"}
    await (await emulator.submit_modal(opened, typed)).response()

    final = await outcome(http, bridge.url, "ask_db")
    assert final["answers"] == {"Database": "SQLite", "Features": "Caching, Metrics, tracing too"}


async def test_a_note_comes_back_and_the_audit_trail_keeps_it_with_who(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, OPEN))
    opened = await open_form(emulator, question, alice.id)
    typed = {
        "Database": "PostgreSQL",
        "Features": "Caching",
        "A note for the agent": "Ask ops first.\nThanks",
    }
    await (await emulator.submit_modal(opened, typed)).response()

    final = await outcome(http, bridge.url, "ask_db")
    assert final["answers"] == {"Database": "PostgreSQL", "Features": "Caching"}
    assert final["notes"] == {"Database": "Ask ops first.\nThanks"}
    assert final["annotations"] == {QUESTION: {"notes": "Ask ops first.\nThanks"}}
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "→ **PostgreSQL**\n📝 Ask ops first.\nThanks" in edited.text

    [vote] = [e for e in await audit_events(http, bridge.url, "ask_db") if e["kind"] == "vote"]
    assert vote["actor"]["name"] == "Alice"
    assert vote["actor"]["id"] == str(alice.id)
    assert vote["data"] == {"answers": final["answers"], "notes": final["notes"]}
    assert vote["at"]


async def test_empty_or_unfit_text_is_refused_with_a_note_and_nothing_recorded(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, OPEN))
    before = await audit_events(http, bridge.url, "ask_db")

    blank = await open_form(emulator, question, alice.id)
    sent = await emulator.submit_modal(blank, {"Database": "   ", "Features": "Caching"})
    reply = await sent.wait_for_ephemeral()
    assert reply.text == (
        'Please answer "Database" before submitting. What you typed was not recorded.'
    )

    tabbed = await open_form(emulator, question, alice.id)
    typed = {"Database": "MySQL\x1b8", "Features": "Caching", "A note for the agent": "ok\x07"}
    sent = await emulator.submit_modal(tabbed, typed)
    reply = await sent.wait_for_ephemeral()
    assert reply.text == (
        "Nothing was recorded:\n"
        "- **Database**: Please remove the control characters.\n"
        "- **A note for the agent**: Please remove the control characters."
    )

    # Discord's field stops at askbridge's limit, so over-long text never leaves Discord.
    long = await open_form(emulator, question, alice.id)
    with pytest.raises(CannotSubmit, match="takes 1-2000 characters"):
        await emulator.submit_modal(long, {"Database": "x" * 2001, "Features": "Caching"})
    with pytest.raises(CannotSubmit, match="takes 0-2000 characters"):
        await emulator.submit_modal(long, {**typed, "A note for the agent": "x" * 2001})
    with pytest.raises(CannotSubmit, match="'Features' is required"):
        await emulator.submit_modal(long, {"Database": "SQLite"})

    assert await audit_events(http, bridge.url, "ask_db") == before
    status = await outcome(http, bridge.url, "ask_db", wait=0)
    assert (status["status"], status["votes"]) == ("waiting", [])
    assert emulator.message(question.id).is_interactive


async def test_a_form_submitted_after_the_request_ended_gets_a_polite_note(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    body = {"request_id": "ask_deploy", "questions": [DEPLOY], "allow_other": True}
    question = posted(emulator, await ask(http, bridge.url, body))
    opened = await open_form(emulator, question, alice.id)
    [field] = (await opened.modal()).fields
    assert field.placeholder == "One of Approve / Reject, or your own answer"

    await (await emulator.click(question, bob.id, "Reject")).response()
    assert (await outcome(http, bridge.url, "ask_deploy"))["answers"] == {"Deploy": "Reject"}
    late = await emulator.submit_modal(opened, {"Deploy": "Approve after 18:00"})
    reply = await late.wait_for_ephemeral()
    assert reply.text == (
        "This question was already answered by Bob. What you typed was not recorded."
    )
    final = await outcome(http, bridge.url, "ask_deploy")
    assert [v["voter"]["name"] for v in final["votes"]] == ["Bob"]
    assert final["answers"] == {"Deploy": "Reject"}


async def test_a_note_alone_submits_the_picks(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    """Without words of one's own, the form holds the note only, and submits the picks."""
    emulator, alice = world.emulator, world.alice
    body = {**copy.deepcopy(DATABASE), "allow_notes": True}
    question = posted(emulator, await ask(http, bridge.url, body))
    early = await emulator.click(question, alice.id, "Submit with a note…")
    reply = await early.wait_for_ephemeral()
    assert reply.text == "Please answer **Database**, **Features** first; then add your note."

    await (await emulator.click(question, alice.id, "SQLite")).wait_for_ephemeral("Still")
    picked = await emulator.choose(question, alice.id, ["Logging"])
    await picked.wait_for_ephemeral("Press **Submit**")  # the choice is kept
    opened = await emulator.click(question, alice.id, "Submit with a note…")
    form = await opened.modal()
    assert (form.title, [f.label for f in form.fields]) == ("Add a note", ["A note for the agent"])
    await (
        await emulator.submit_modal(opened, {"A note for the agent": "SQLite for now"})
    ).response()

    final = await outcome(http, bridge.url, "ask_db")
    assert final["answers"] == {"Database": "SQLite", "Features": "Logging"}
    assert final["notes"] == {"Database": "SQLite for now"}


async def test_where_one_click_answers_a_note_comes_with_an_option_typed(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    body = {"request_id": "ask_deploy", "questions": [DEPLOY], "allow_notes": True}
    question = posted(emulator, await ask(http, bridge.url, body))
    assert question.text.endswith("[Submit with a note…]\n[Cancel]")

    opened = await emulator.click(question, alice.id, "Submit with a note…")
    deploy, note = (await opened.modal()).fields
    assert (deploy.label, deploy.placeholder, note.label) == (
        "Deploy",
        "One of Approve / Reject",
        "A note for the agent",
    )
    refused = await emulator.submit_modal(
        opened, {"Deploy": "Later", "A note for the agent": "why not"}
    )
    assert (await refused.wait_for_ephemeral()).text == (
        "Nothing was recorded:\n"
        "- **Deploy**: Please choose one of the options; this question takes no other answer."
    )

    again = await emulator.click(question, alice.id, "Submit with a note…")
    await again.modal()
    typed = {"Deploy": "Approve", "A note for the agent": "the migration is reversible"}
    await (await emulator.submit_modal(again, typed)).response()
    final = await outcome(http, bridge.url, "ask_deploy")
    assert final["answers"] == {"Deploy": "Approve"}
    assert final["notes"] == {"Deploy": "the migration is reversible"}


async def test_who_may_not_answer_gets_no_form(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator = world.emulator
    body = {**OPEN, "answerers": [f"discord:@{world.alice.id}"]}
    question = posted(emulator, await ask(http, bridge.url, body))
    refused = await emulator.click(question, world.bob.id, WORDS)
    assert (await refused.response()).type == 4
    reply = await refused.wait_for_ephemeral()
    assert reply.text.startswith(
        f"Only these people may answer this question: <@{world.alice.id}>."
    )
    assert reply.pings.nobody
    await open_form(emulator, question, world.alice.id)


async def test_hostile_words_and_notes_render_inert(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    question = posted(emulator, await ask(http, bridge.url, OPEN))
    words = f"<@{bob.id}> @everyone [x](https://e.example) ```py\n# not a heading"
    note = f"-# <@&{world.guild.id}> **b** ||s|| ``` <#{world.channel.id}>\n> quote"
    opened = await open_form(emulator, question, alice.id)
    typed = {"Database": words, "Features": f"Caching, {words}", "A note for the agent": note}
    await (await emulator.submit_modal(opened, typed)).response()

    final = await outcome(http, bridge.url, "ask_db")
    assert final["answers"] == {"Database": words, "Features": f"Caching, {words}"}
    assert final["notes"] == {"Database": note}
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "📝 \\-# \\<@\u200b&" in edited.text  # the note is there, as written
    found = live_markdown(edited.text)
    assert (found.masked_links, found.open_fence) == ((), False)
    assert all(e.startswith("**") for e in found.emphasis), found.emphasis
    assert found.line_markup == ()
    mentioned = mentioned_in(edited.text)
    assert (mentioned.users, mentioned.roles, mentioned.everyone) == (
        frozenset(),
        frozenset(),
        False,
    )
    assert all(m.pings.nobody for m in emulator.sent())


async def test_a_form_opened_before_a_restart_still_counts(
    server: ServerProcess, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    url = await server.start()
    question = posted(emulator, await ask(http, url, OPEN))
    opened = await open_form(emulator, question, alice.id)

    await server.kill()
    await server.start(port=server.port)
    await emulator.wait_gateway_ready(identifies=2)
    typed = {
        "Database": "MariaDB",
        "Features": "Caching",
        "A note for the agent": "after the restart",
    }
    submitted = await emulator.submit_modal(opened, typed)
    await submitted.response()
    # Only the new process's session was there to receive it.
    assert (submitted.delivered_to, submitted.queued_for) == (1, 1)

    final = await outcome(http, url, "ask_db")
    assert final["answers"] == {"Database": "MariaDB", "Features": "Caching"}
    assert final["notes"] == {"Database": "after the restart"}
    assert [kind for kind, _ in await story(http, url, "ask_db")][-2:] == ["vote", "answered"]
    await emulator.wait_for_edit(question.id, ended)
    await check_discord_was_never_let_down(emulator)
