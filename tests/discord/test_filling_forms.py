"""Typed forms (issue 38) in Discord, end to end, against the strict emulator with the real
discord.py client: the message, "Fill in…" opening a modal of text inputs and string selects,
the typed values reaching the agent over HTTP, a value out of bounds refused privately with
nothing recorded, Decline, Cancel, and hostile text inert in everything Discord received."""

from __future__ import annotations

import copy
from typing import Any

import aiohttp

from askbridge.bots.service import Service
from tests.emulators.discord import (
    DiscordEmulator,
    InteractionHandle,
    Message,
    live_markdown,
    mentioned_in,
)

from .conftest import World, ask, outcome, posted

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "email": {
            "type": "string",
            "format": "email",
            "title": "Contact email",
            "description": "Who to tell when it is done",
        },
        "count": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10},
        "urgent": {"type": "boolean", "title": "Urgent", "default": False},
        "env": {
            "type": "string",
            "title": "Environment",
            "oneOf": [
                {"const": "prod", "title": "Production"},
                {"const": "staging", "title": "Staging"},
            ],
        },
        "regions": {
            "type": "array",
            "title": "Regions",
            "items": {
                "type": "string",
                "enum": ["eu", "us", "ap"],
                "enumNames": ["Europe", "Americas", "Asia"],
            },
            "minItems": 1,
            "maxItems": 2,
        },
    },
    "required": ["email", "count", "env"],
}
FORM = {
    "request_id": "form_deploy",
    "form": {"message": "Deploy details, please", "requested_schema": SCHEMA},
}
FILL_IN = "Fill in…"


def ended(message: Message) -> bool:
    return not message.is_interactive


async def fill_in(emulator: DiscordEmulator, question: Message, user_id: int) -> InteractionHandle:
    opened = await emulator.click(question, user_id, FILL_IN)
    await opened.modal()
    return opened


async def test_a_form_is_filled_in_and_the_agent_gets_the_typed_values(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, FORM))
    text = question.text
    assert "Deploy details, please" in text
    assert "- **Contact email** (required) — Who to tell when it is done" in text
    assert "- **Regions**" in text
    assert question.controls() == (
        "button 'Fill in…' in row 0; button 'Decline' in row 0; button 'Cancel' in row 0"
    )

    opened = await fill_in(emulator, question, alice.id)
    form = await opened.modal()
    assert form.title == "Deploy details, please"
    assert form.labels == ["Contact email", "Replicas", "Urgent", "Environment", "Regions"]
    assert form.field("Replicas").placeholder == "A whole number from 1 to 10"
    assert form.select("Urgent").chosen == ["No"]  # the default
    submitted = await emulator.submit_modal(
        opened,
        {
            "Contact email": "ada@example.com",
            "Replicas": " 7 ",
            "Urgent": ["Yes"],
            "Environment": ["Staging"],
            "Regions": ["Asia", "Europe"],
        },
    )
    assert (await submitted.response()).type == 6
    final = await outcome(http, bridge.url, "form_deploy")
    assert final["status"] == "answered"
    assert final["action"] == "accept"
    assert final["content"] == {
        "email": "ada@example.com",
        "count": 7,
        "urgent": True,
        "env": "staging",
        "regions": ["eu", "ap"],
    }
    assert final["answered_by"]["name"] == "Alice"
    edited = await emulator.wait_for_edit(question.id, ended)
    for shown in (
        "**Contact email**: ada@example.com",
        "**Replicas**: 7",
        "**Urgent**: Yes",
        "**Environment**: Staging",
        "**Regions**: Europe, Asia",
        "Answered by **Alice**",
    ):
        assert shown in edited.text
    assert submitted.followups == []  # the message says it all


async def test_a_value_out_of_bounds_is_refused_privately_and_nothing_is_recorded(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, FORM))
    opened = await fill_in(emulator, question, alice.id)
    given = {
        "Contact email": "not an address",
        "Replicas": "11",
        "Environment": ["Production"],
    }
    submitted = await emulator.submit_modal(opened, given)
    note = await submitted.wait_for_ephemeral("Nothing was recorded")
    assert note.ephemeral_for == alice.id
    assert note.controls() == "button 'Fill in again' in row 0"
    assert "- **Contact email**: must be an email address" in note.text
    assert "- **Replicas**: must be at most 10, got 11" in note.text
    assert "Environment" not in note.text
    status = await outcome(http, bridge.url, "form_deploy", wait=0)
    assert status["status"] == "waiting"
    assert status.get("votes", []) == []
    assert emulator.history(question.id)[-1].is_interactive

    # "Fill in…" opens the form again as Alice left it; she puts it right.
    again = await fill_in(emulator, question, alice.id)
    form = await again.modal()
    assert [f.value for f in form.fields] == ["not an address", "11"]
    assert form.select("Environment").chosen == ["Production"]
    fixed = await emulator.submit_modal(
        again, {"Contact email": "ops@example.com", "Replicas": "10"}
    )
    await fixed.response()
    final = await outcome(http, bridge.url, "form_deploy")
    assert final["content"] == {
        "email": "ops@example.com",
        "count": 10,
        "urgent": False,
        "env": "prod",
    }


async def test_fill_in_again_reopens_the_form_from_the_note_as_it_was_left(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, FORM))
    given = {"Contact email": "a@example.com", "Replicas": "0", "Environment": ["Production"]}
    first = await emulator.submit_modal(await fill_in(emulator, question, alice.id), given)
    note = await first.wait_for_ephemeral("- **Replicas**: must be at least 1, got 0")

    again = await emulator.click(note, alice.id, "Fill in again")
    form = await again.modal()
    assert [f.value for f in form.fields] == ["a@example.com", "0"]
    second = await emulator.submit_modal(again, {"Replicas": "12"})
    assert (await second.response()).type == 6
    # Told in the same note, which keeps its button.
    told = await emulator.wait_for_edit(note.id, lambda m: "got 12" in m.text)
    assert told.controls() == "button 'Fill in again' in row 0"
    assert second.followups == []
    assert (await outcome(http, bridge.url, "form_deploy", wait=0))["status"] == "waiting"

    third = await emulator.click(told, alice.id, "Fill in again")
    assert (await third.modal()).field("Replicas").value == "12"
    done = await emulator.submit_modal(third, {"Replicas": "3"})
    await done.response()
    final = await outcome(http, bridge.url, "form_deploy")
    assert final["content"]["count"] == 3
    await emulator.wait_for_edit(question.id, ended)


async def test_decline_tells_the_agent_no(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator = world.emulator
    question = posted(emulator, await ask(http, bridge.url, FORM))
    opened = await fill_in(emulator, question, world.alice.id)
    clicked = await emulator.click(question, world.bob.id, "Decline")
    assert (await clicked.response()).type == 6
    final = await outcome(http, bridge.url, "form_deploy")
    assert (final["status"], final["action"]) == ("declined", "decline")
    assert "content" not in final
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "Declined by **Bob**" in edited.text
    # Alice's form, opened before, comes too late.
    late = await emulator.submit_modal(
        opened, {"Contact email": "a@example.com", "Replicas": "2", "Environment": ["Staging"]}
    )
    await late.wait_for_ephemeral("This form was declined by Bob.")
    assert (await outcome(http, bridge.url, "form_deploy"))["status"] == "declined"


async def test_cancel_is_confirmed_then_interrupts_the_agent(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, FORM))
    asked = await emulator.click(question, alice.id, "Cancel")
    sure = await asked.wait_for_ephemeral("Cancel")
    confirmed = await emulator.click(sure, alice.id, "Cancel question")
    await confirmed.response()
    final = await outcome(http, bridge.url, "form_deploy")
    assert (final["status"], final["action"]) == ("cancelled", "cancel")
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "Cancelled by **Alice**" in edited.text


OURS = ("-# Fill in the form", "-# Filling in the form", "- **")
"""The small print askbridge itself sets under a form, and its list of the form's fields."""
HOSTILE = "@everyone <@&1> <@1> [x](https://e.example) **b** `c` ```\n# h\n-# s\n1. n\n- l"


async def test_hostile_text_is_inert_in_everything_discord_received(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    schema = copy.deepcopy(SCHEMA)
    schema["properties"]["email"]["description"] = HOSTILE
    schema["properties"]["count"]["title"] = HOSTILE[:60]
    schema["properties"]["env"]["oneOf"][0]["title"] = HOSTILE[:70]
    schema["properties"]["notes"] = {"type": "string", "title": "Notes"}
    del schema["properties"]["regions"]
    body = {
        "request_id": "form_hostile",
        "form": {"message": HOSTILE, "requested_schema": schema},
    }
    question = posted(emulator, await ask(http, bridge.url, body))
    opened = await fill_in(emulator, question, alice.id)
    form = await opened.modal()
    choice = form.select("Environment").options[0].label
    typed = {"Contact email": "x@example.com", "Environment": [choice], "Notes": HOSTILE}
    submitted = await emulator.submit_modal(opened, {**typed, form.labels[1]: "3"})
    await submitted.response()
    final = await outcome(http, bridge.url, "form_hostile")
    assert final["content"]["notes"] == HOSTILE
    await emulator.wait_for_edit(question.id, ended)
    for message in emulator.sent():
        assert message.pings.nobody, message
        found = live_markdown(message.text)
        assert found.masked_links == (), message.text
        assert not found.open_fence, message.text
        assert all(e.startswith("**") and e.endswith("**") for e in found.emphasis), message.text
        # The agent's own code blocks stay (closed); nobody else's markup is live.
        assert all(c.startswith("```") for c in found.code), message.text
        assert all(m.startswith(OURS) for m in found.line_markup), found.line_markup
        assert mentioned_in(message.text).everyone is False


async def test_a_form_that_is_a_link_is_done_or_declined(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    link = "https://auth.example.com/connect?state=1_2"
    body = {"request_id": "form_link", "form": {"message": "Connect your account", "url": link}}
    question = posted(emulator, await ask(http, bridge.url, body))
    assert f"🔗 <{link}>" in question.text
    assert live_markdown(question.text).masked_links == ()
    assert question.controls() == (
        "button 'Done' in row 0; button 'Decline' in row 0; button 'Cancel' in row 0"
    )
    done = await emulator.click(question, alice.id, "Done")
    assert (await done.response()).type == 6
    final = await outcome(http, bridge.url, "form_link")
    assert (final["status"], final["action"], final["content"]) == ("answered", "accept", {})
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "Answered by **Alice**" in edited.text


async def test_two_matching_forms_decide_and_a_stranger_gets_no_form(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    carol = emulator.add_user("carol", global_name="Carol")
    emulator.add_member(world.guild.id, carol.id)
    answerers = [f"discord:@{alice.id}", f"discord:@{bob.id}"]
    body = {**FORM, "quorum": 2, "answerers": answerers}
    question = posted(emulator, await ask(http, bridge.url, body))
    values = {"Contact email": "a@example.com", "Replicas": "2", "Environment": ["Staging"]}

    stranger = await emulator.click(question, carol.id, FILL_IN)
    assert (await stranger.response()).type == 4  # a note, not a modal
    await stranger.wait_for_ephemeral("Only these people may answer")

    first = await emulator.submit_modal(await fill_in(emulator, question, alice.id), values)
    note = await first.wait_for_ephemeral("Your vote is counted: 1 of 2")
    assert "Replicas: 2" in note.text
    assert (await outcome(http, bridge.url, "form_deploy", wait=0))["status"] == "waiting"
    second = await emulator.submit_modal(await fill_in(emulator, question, bob.id), values)
    await second.response()
    final = await outcome(http, bridge.url, "form_deploy")
    assert final["content"] == {
        "email": "a@example.com",
        "count": 2,
        "urgent": False,
        "env": "staging",
    }
    assert [v["content"] for v in final["votes"]] == [final["content"]] * 2


async def test_a_form_longer_than_a_modal_is_refused_for_discord_and_shown_on_the_web_page(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    """Discord's modal holds five inputs: a form of seven is refused where it would be shown
    there, as a target or an escalation's, naming the surfaces that show it whole."""
    seven = {f"f{i}": {"type": "string", "title": f"Field {i}"} for i in range(7)}
    form = {"message": "Seven things", "requested_schema": {"type": "object", "properties": seven}}
    channel = f"discord:{world.channel.id}"
    rule = "holds 7 fields, and {where} shows at most 5 in one form: ask with at most 5 fields"
    refusals = [
        ({}, f"target {channel!r}"),
        ({"target": "web", "escalation": [{"after_s": 60, "target": channel}]}, ""),
    ]
    for number, (extra, where) in enumerate(refusals):
        body = {"request_id": f"long_{number}", "form": form, **extra}
        async with http.post(f"{bridge.url}/v1/questions", json=body) as response:
            assert response.status == 422
            refused = await response.json()
        where = where or f"escalation[0].target {channel!r}"
        assert refused["details"] == [
            {
                "location": "form.requested_schema.properties",
                "message": rule.format(where=where) + ", or target web",
            }
        ]

    shown = await ask(http, bridge.url, {"request_id": "long_web", "form": form, "target": "web"})
    assert shown["status"] == "waiting"
    assert [f"f{i}" for i in range(7)] == list(shown["form"]["requested_schema"]["properties"])
    assert world.emulator.messages(world.channel.id) == []
