"""Escalation and self-approval in Discord, end to end: a step hands the request from a person
to a role, pinging exactly that role; the requester's own click is refused privately."""

from __future__ import annotations

import aiohttp

from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from askbridge.core.view import SELF_APPROVAL
from tests.conftest import story
from tests.emulators.discord import Role, User

from .conftest import World, ask, outcome, posted
from .test_answering import ended
from .test_approvals import DEPLOY, NO_PINGS, carol, followup_body, sent_replies, sre

__all__ = ["carol", "sre"]  # fixtures from test_approvals, used by name below


async def test_a_step_hands_the_request_to_a_role_and_pings_only_it(
    bridge: Service,
    world: World,
    http: aiohttp.ClientSession,
    clock: ManualClock,
    sre: Role,
    carol: User,
) -> None:
    emulator, alice = world.emulator, world.alice
    ladder = [{"after_s": 1800, "answerers": [f"discord-role:{sre.id}"]}]
    body = {**DEPLOY, "answerers": [f"discord:@{alice.id}"], "escalation": ladder}
    question = posted(emulator, await ask(http, bridge.url, body))
    assert f"Who may answer: <@{alice.id}>" in question.text

    await clock.advance(1800)
    ping = await emulator.wait_for_message(world.channel.id, lambda m: m.id != question.id)
    assert int(ping.payload["message_reference"]["message_id"]) == question.id
    [sent] = sent_replies(emulator)
    assert sent["allowed_mentions"] == {"parse": [], "roles": [sre.id]}
    edited = await emulator.wait_for_edit(question.id, lambda m: "Escalated" in m.text)
    assert f"Escalated to <@&{sre.id}> after 30 min" in edited.text
    assert f"Who may answer: <@&{sre.id}>" in edited.text

    refused = await emulator.click(question, alice.id, "Approve")
    await refused.response()
    note = await refused.wait_for_ephemeral()
    assert note.text.startswith(f"Only these people may answer this question: <@&{sre.id}>.")

    await (await emulator.click(question, carol.id, "Approve")).response()
    final = await outcome(http, bridge.url, "ask_deploy")
    assert final["answered_by"]["name"] == "Carol"
    await emulator.wait_for_edit(question.id, ended)
    assert await story(http, bridge.url, "ask_deploy") == [
        ("created", None),
        ("posted", None),
        ("escalated", None),
        ("denied", "Alice"),
        ("vote", "Carol"),
        ("answered", "Carol"),
    ]


async def test_the_requester_is_told_privately_their_vote_cannot_count(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    body = {**DEPLOY, "requested_by": f"discord:@{alice.id}", "no_self_approval": True}
    question = posted(emulator, await ask(http, bridge.url, body))

    refused = await emulator.click(question, alice.id, "Approve")
    await refused.response()
    note = await refused.wait_for_ephemeral()
    assert note.text == SELF_APPROVAL
    assert followup_body(emulator, refused)["allowed_mentions"] == NO_PINGS
    waiting = await outcome(http, bridge.url, "ask_deploy", wait=0)
    assert (waiting["status"], waiting["votes"]) == ("waiting", [])

    await (await emulator.click(question, bob.id, "Approve")).response()
    final = await outcome(http, bridge.url, "ask_deploy")
    assert final["answered_by"]["name"] == "Bob"
