"""Team approvals in Discord, end to end: who may answer (people and roles), quorum votes with a
live tally, deadlines and reminders, a restart half way, permission prompts, and the audit
trail of each request."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest

from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from tests.conftest import DATABASE, audit_events, story
from tests.emulators.discord import DiscordEmulator, InteractionHandle, Message, Role, User
from tests.emulators.discord.store import SUPPRESS_EMBEDS
from tests.server_process import ServerProcess

from .conftest import World, ask, check_discord_was_never_let_down, outcome, posted
from .test_answering import ended

DEPLOY = {
    "request_id": "ask_deploy",
    "questions": [
        {
            "question": "Deploy build 4711 to production?",
            "header": "Deploy",
            "options": [
                {"label": "Approve", "description": "Ship it"},
                {"label": "Reject", "description": "Hold the release"},
            ],
        }
    ],
}
"""One single-select question: each click is a vote."""

POST_MESSAGE = "/channels/{channel_id}/messages"
FOLLOWUP = "/webhooks/{application_id}/{token}"
NO_PINGS: dict[str, list[str]] = {"parse": []}


def followup_body(emulator: DiscordEmulator, handle: InteractionHandle) -> dict[str, Any]:
    """What askbridge sent as the ephemeral reply to one click."""
    [request] = [
        r for r in emulator.requests_to("POST", FOLLOWUP) if r.path.endswith(f"/{handle.token}")
    ]
    body: dict[str, Any] = request.body
    return body


def replies(emulator: DiscordEmulator, channel_id: int) -> list[Message]:
    """Messages in the channel that reply to another message (reminders)."""
    return [m for m in emulator.messages(channel_id) if "message_reference" in m.payload]


def sent_replies(emulator: DiscordEmulator) -> list[dict[str, Any]]:
    """The bodies askbridge POSTed as replies: what it asked Discord to ping."""
    return [
        r.body
        for r in emulator.requests_to("POST", POST_MESSAGE)
        if isinstance(r.body, dict) and "message_reference" in r.body
    ]


@pytest.fixture
def sre(world: World) -> Role:
    return world.emulator.add_role(world.guild.id, "sre")


@pytest.fixture
def carol(world: World, sre: Role) -> User:
    """A member with the sre role (Alice and Bob have no roles)."""
    carol = world.emulator.add_user("carol", global_name="Carol")
    world.emulator.add_member(world.guild.id, carol.id, [sre.id])
    return carol


async def test_a_non_answerer_is_told_who_may_answer_and_nothing_is_recorded(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    body = {**DEPLOY, "answerers": [f"discord:@{alice.id}"]}
    question = posted(emulator, await ask(http, bridge.url, body))
    assert f"Who may answer: <@{alice.id}>" in question.text

    refused = await emulator.click(question, bob.id, "Approve")
    await refused.response()
    note = await refused.wait_for_ephemeral()
    assert note.text == (
        f"Only these people may answer this question: <@{alice.id}>. Your click was not counted."
    )
    # Naming Alice in Bob's note does not ping her.
    assert followup_body(emulator, refused)["allowed_mentions"] == NO_PINGS
    waiting = await outcome(http, bridge.url, "ask_deploy", wait=0)
    assert (waiting["status"], waiting["votes"]) == ("waiting", [])
    assert emulator.message(question.id).is_interactive

    await (await emulator.click(question, alice.id, "Reject")).response()
    final = await outcome(http, bridge.url, "ask_deploy")
    assert final["answers"] == {"Deploy": "Reject"}
    assert final["answered_by"]["name"] == "Alice"
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "✅ Answered by **Alice**" in edited.text

    assert await story(http, bridge.url, "ask_deploy") == [
        ("created", None),
        ("posted", None),
        ("denied", "Bob"),
        ("vote", "Alice"),
        ("answered", "Alice"),
    ]
    denied = next(
        e for e in await audit_events(http, bridge.url, "ask_deploy") if e["kind"] == "denied"
    )
    assert denied["actor"]["id"] == str(bob.id)
    assert denied["data"]["origin"] == {
        "platform": "discord",
        "channel": str(world.channel.id),
        "message_id": str(question.id),
    }


async def test_discord_roles_decide_who_may_answer(
    bridge: Service, world: World, http: aiohttp.ClientSession, sre: Role, carol: User
) -> None:
    emulator, alice = world.emulator, world.alice
    body = {**DEPLOY, "answerers": [f"discord-role:{sre.id}"]}
    question = posted(emulator, await ask(http, bridge.url, body))
    assert f"Who may answer: <@&{sre.id}>" in question.text

    # Alice is a member of the server, but not an sre.
    refused = await emulator.click(question, alice.id, "Approve")
    note = await refused.wait_for_ephemeral()
    assert note.text.startswith(f"Only these people may answer this question: <@&{sre.id}>.")
    assert (await outcome(http, bridge.url, "ask_deploy", wait=0))["status"] == "waiting"

    await (await emulator.click(question, carol.id, "Approve")).response()
    final = await outcome(http, bridge.url, "ask_deploy")
    assert final["answers"] == {"Deploy": "Approve"}
    assert final["answered_by"] == {"platform": "discord", "id": str(carol.id), "name": "Carol"}
    assert await story(http, bridge.url, "ask_deploy") == [
        ("created", None),
        ("posted", None),
        ("denied", "Alice"),
        ("vote", "Carol"),
        ("answered", "Carol"),
    ]


async def test_a_role_given_while_the_question_waits_counts(
    bridge: Service, world: World, http: aiohttp.ClientSession, sre: Role
) -> None:
    emulator, bob = world.emulator, world.bob
    body = {**DEPLOY, "answerers": [f"discord-role:{sre.id}"]}
    question = posted(emulator, await ask(http, bridge.url, body))
    refused = await emulator.click(question, bob.id, "Approve")
    await refused.wait_for_ephemeral("was not counted")

    # Eligibility is read from each click, so a role granted now counts at once.
    emulator.set_member_roles(world.guild.id, bob.id, [sre.id])
    await (await emulator.click(question, bob.id, "Approve")).response()
    final = await outcome(http, bridge.url, "ask_deploy")
    assert final["answered_by"]["name"] == "Bob"
    assert await story(http, bridge.url, "ask_deploy") == [
        ("created", None),
        ("posted", None),
        ("denied", "Bob"),
        ("vote", "Bob"),
        ("answered", "Bob"),
    ]


async def test_a_role_the_bots_cache_never_saw_still_counts(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, bob = world.emulator, world.bob
    # Made behind the gateway's back: no GUILD_ROLE_CREATE, so discord.py's guild cache lacks
    # it, as it lacks every role of a guild it has not cached yet. The click still carries it.
    oncall = emulator.registry.add_role(world.guild.id, "oncall")
    emulator.set_member_roles(world.guild.id, bob.id, [oncall.id])
    body = {**DEPLOY, "answerers": [f"discord-role:{oncall.id}"]}
    question = posted(emulator, await ask(http, bridge.url, body))
    await (await emulator.click(question, bob.id, "Approve")).response()
    final = await outcome(http, bridge.url, "ask_deploy")
    assert final["answered_by"]["name"] == "Bob"
    kinds = [kind for kind, _ in await story(http, bridge.url, "ask_deploy")]
    assert kinds == ["created", "posted", "vote", "answered"]


async def test_a_quorum_of_two_shows_the_tally_and_ends_on_two_matching_votes(
    bridge: Service, world: World, http: aiohttp.ClientSession, carol: User
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    status = await ask(http, bridge.url, {**DEPLOY, "quorum": 2})
    question = posted(emulator, status)
    assert "**Needs 2 matching votes**" in question.text
    assert "One click votes; click another option to change your vote." in question.text
    agent = asyncio.create_task(outcome(http, bridge.url, "ask_deploy", wait=30), name="agent")

    first = await emulator.click(question, alice.id, "Approve")
    note = await first.wait_for_ephemeral()
    assert note.text == (
        "Your vote is counted: 1 of 2 matching votes so far, for **Deploy: Approve**. "
        "You can change it until the question is decided."
    )
    tallied = await emulator.wait_for_edit(question.id, lambda m: "1/2" in m.text)
    assert "- **Approve** — 1/2 (Alice)" in tallied.text
    assert tallied.is_interactive

    # A different answer from someone else does not end it; both answers are on the message.
    second = await emulator.click(question, bob.id, "Reject")
    await second.wait_for_ephemeral("1 of 2 matching votes so far, for **Deploy: Reject**")
    both = await emulator.wait_for_edit(question.id, lambda m: "(Bob)" in m.text)
    assert "- **Approve** — 1/2 (Alice)\n- **Reject** — 1/2 (Bob)" in both.text
    assert both.is_interactive
    assert not agent.done()

    # Carol agrees with Alice: two matching votes decide it.
    third = await emulator.click(question, carol.id, "Approve")
    await third.response()
    final = await asyncio.wait_for(agent, 10)
    assert final["status"] == "answered"
    assert final["answers"] == {"Deploy": "Approve"}
    assert [(v["voter"]["name"], v["answers"]) for v in final["votes"]] == [
        ("Alice", {"Deploy": "Approve"}),
        ("Bob", {"Deploy": "Reject"}),
        ("Carol", {"Deploy": "Approve"}),
    ]
    edited = await emulator.wait_for_edit(question.id, ended)
    assert third.followups == []  # the deciding vote needs no note: the message says it
    assert "→ **Approve**" in edited.text
    assert "✅ Answered by **Alice**, **Carol** (2 matching votes) · <t:" in edited.text
    assert "-# Other votes:\n- **Reject** — 1/2 (Bob)" in edited.text

    assert await story(http, bridge.url, "ask_deploy") == [
        ("created", None),
        ("posted", None),
        ("vote", "Alice"),
        ("vote", "Bob"),
        ("vote", "Carol"),
        ("answered", "Carol"),
    ]


async def test_submit_votes_and_a_second_submit_changes_the_vote(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    question = posted(emulator, await ask(http, bridge.url, {**DATABASE, "quorum": 2}))
    assert "Submit, which casts your vote; submit again to change it." in question.text

    await (await emulator.click(question, alice.id, "PostgreSQL")).wait_for_ephemeral()
    await (await emulator.choose(question, alice.id, ["Caching"])).wait_for_ephemeral()
    voted = await emulator.click(question, alice.id, "Submit")
    await voted.wait_for_ephemeral(
        "1 of 2 matching votes so far, for **Database: PostgreSQL; Features: Caching**"
    )

    # Alice changes her mind: her earlier vote is replaced, not added to.
    await (await emulator.click(question, alice.id, "SQLite")).wait_for_ephemeral("SQLite")
    changed = await emulator.click(question, alice.id, "Submit")
    await changed.wait_for_ephemeral("for **Database: SQLite; Features: Caching**")
    tallied = await emulator.wait_for_edit(question.id, lambda m: "SQLite; Features" in m.text)
    assert "- **Database: SQLite; Features: Caching** — 1/2 (Alice)" in tallied.text
    assert "PostgreSQL; Features" not in tallied.text

    await (await emulator.click(question, bob.id, "SQLite")).wait_for_ephemeral()
    await (await emulator.choose(question, bob.id, ["Caching"])).wait_for_ephemeral()
    await (await emulator.click(question, bob.id, "Submit")).response()
    final = await outcome(http, bridge.url, "ask_db")
    assert final["answers"] == {"Database": "SQLite", "Features": "Caching"}
    assert [v["voter"]["name"] for v in final["votes"]] == ["Alice", "Bob"]
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "✅ Answered by **Alice**, **Bob**" in edited.text
    assert "Other votes" not in edited.text
    kinds = [kind for kind, _ in await story(http, bridge.url, "ask_db")]
    assert kinds == ["created", "posted", "vote", "vote", "vote", "answered"]


async def test_the_deadline_gives_the_default_answers_after_one_reminder(
    bridge: Service,
    world: World,
    http: aiohttp.ClientSession,
    clock: ManualClock,
    sre: Role,
) -> None:
    emulator, alice = world.emulator, world.alice
    body = {
        **DEPLOY,
        "answerers": [f"discord:@{alice.id}", f"discord-role:{sre.id}"],
        "timeout_s": 600,
        "remind_after_s": 300,
        "on_timeout": {"answers": {"Deploy": "Reject"}},
    }
    status = await ask(http, bridge.url, body)
    question = posted(emulator, status)
    at = int(clock.now().timestamp()) + 600
    deadline = f"<t:{at}:f> (<t:{at}:R>)"
    assert f"Who may answer: <@{alice.id}>, <@&{sre.id}>" in question.text
    assert f"⏳ If nobody decides by {deadline}, the answer is **Reject**" in question.text
    agent = asyncio.create_task(outcome(http, bridge.url, "ask_deploy", wait=30), name="agent")

    await clock.advance(300)
    reminder = await emulator.wait_for_message(world.channel.id, lambda m: m.id != question.id)
    assert reminder.content == (
        f"⏰ Reminder for <@{alice.id}>, <@&{sre.id}>: this question is still waiting for an "
        f"answer. If nobody decides by {deadline}, the answer is **Reject**."
    )
    assert int(reminder.payload["message_reference"]["message_id"]) == question.id
    [sent] = sent_replies(emulator)
    # The reminder pings exactly the answerers: Alice and the sre role, nobody else.
    assert sent["allowed_mentions"] == {"parse": [], "users": [alice.id], "roles": [sre.id]}

    await clock.advance(300)
    final = await asyncio.wait_for(agent, 10)
    assert final["status"] == "answered"
    assert final["answers"] == {"Deploy": "Reject"}
    assert final["decided_by"] == "timeout"
    assert "answered_by" not in final
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "→ **Reject**" in edited.text
    assert "⏱️ Decided by timeout · <t:" in edited.text

    assert replies(emulator, world.channel.id) == [reminder]
    assert await story(http, bridge.url, "ask_deploy") == [
        ("created", None),
        ("posted", None),
        ("reminder", None),
        ("answered", None),
    ]


async def test_the_deadline_expires_a_half_voted_question_after_a_plain_reminder(
    bridge: Service, world: World, http: aiohttp.ClientSession, clock: ManualClock
) -> None:
    emulator, alice = world.emulator, world.alice
    body = {**DEPLOY, "quorum": 2, "timeout_s": 600, "remind_after_s": 60, "on_timeout": "expire"}
    question = posted(emulator, await ask(http, bridge.url, body))
    at = int(clock.now().timestamp()) + 600
    deadline = f"<t:{at}:f> (<t:{at}:R>)"
    assert f"⏳ Open until {deadline}; then it expires" in question.text

    await (await emulator.click(question, alice.id, "Approve")).wait_for_ephemeral("1 of 2")
    await clock.advance(60)
    reminder = await emulator.wait_for_message(world.channel.id, lambda m: m.id != question.id)
    assert reminder.content == (
        "⏰ Reminder: this question is still waiting for an answer. "
        f"It has 1 of 2 matching votes so far. Open until {deadline}; then it expires."
    )
    [sent] = sent_replies(emulator)
    assert sent["allowed_mentions"] == NO_PINGS  # nobody in particular to ping

    await clock.advance(540)
    final = await outcome(http, bridge.url, "ask_deploy")
    assert final["status"] == "expired"
    assert final["error"] == "Timed out waiting for an answer"
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "⌛ Expired without an answer" in edited.text
    assert "-# Votes:\n- **Approve** — 1/2 (Alice)" in edited.text
    assert replies(emulator, world.channel.id) == [reminder]
    assert await story(http, bridge.url, "ask_deploy") == [
        ("created", None),
        ("posted", None),
        ("vote", "Alice"),
        ("reminder", None),
        ("expired", None),
    ]


async def test_a_half_reached_quorum_survives_a_crash(
    server: ServerProcess, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    url = await server.start()
    question = posted(emulator, await ask(http, url, {**DEPLOY, "quorum": 2}))
    first = await emulator.click(question, alice.id, "Approve")
    await first.wait_for_ephemeral("1 of 2 matching votes so far")
    await emulator.wait_for_edit(question.id, lambda m: "1/2 (Alice)" in m.text)

    await server.kill()
    url = await server.start(port=server.port)
    await emulator.wait_gateway_ready(identifies=2)
    assert [v["voter"]["name"] for v in (await outcome(http, url, "ask_deploy", 0))["votes"]] == [
        "Alice"
    ]

    second = await emulator.click(question, bob.id, "Approve")
    await second.response()
    assert (second.delivered_to, second.queued_for) == (1, 1)
    final = await outcome(http, url, "ask_deploy")
    assert final["status"] == "answered"
    assert final["answers"] == {"Deploy": "Approve"}
    assert [v["voter"]["name"] for v in final["votes"]] == ["Alice", "Bob"]
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "✅ Answered by **Alice**, **Bob**" in edited.text
    assert await story(http, url, "ask_deploy") == [
        ("created", None),
        ("posted", None),
        ("vote", "Alice"),
        ("vote", "Bob"),
        ("answered", "Bob"),
    ]
    await check_discord_was_never_let_down(emulator)


PROMPT = {
    "PermissionRequest": {
        "tool_name": "Bash",
        "action": "run a shell command",
        "input": {"command": "rm -rf build/ && make release"},
        "details": "in /srv/app",
    }
}
SHOWN = (
    "**Permission** · Allow Bash to run a shell command?\nin /srv/app\n"
    "- **Allow once** — Let this one call run\n"
)
COMMAND = "**Run a command**\n```\nrm -rf build/ && make release\n```"
"""The command as the agent sent it, in a code block: no JSON."""


async def permission(
    bridge: Service,
    world: World,
    http: aiohttp.ClientSession,
    choice: str | None,
    query: str = "",
    clock: ManualClock | None = None,
) -> tuple[Any, Message]:
    """Send the prompt over the agent socket, click `choice` in Discord (or let the deadline
    pass); the PermissionResponse and the question message."""
    emulator = world.emulator
    target = f"discord:{world.channel.id}"
    async with http.ws_connect(f"{bridge.url}/v1/agent?target={target}{query}") as socket:
        await socket.send_json({"TextDelta": "I need to run a command."})
        await socket.send_json(PROMPT)
        question = await emulator.wait_for_message(world.channel.id)
        assert SHOWN in question.text
        assert COMMAND in question.text
        assert question.controls().split("; ") == [
            "button 'Allow once' in row 0",
            "button 'Always allow' in row 0",
            "button 'Deny' in row 0",
            # A note given with Deny is its reason.
            "button 'Submit with a note…' in row 1",
            "button 'Cancel' in row 1",
        ]
        if choice is not None:
            await (await emulator.click(question, world.bob.id, choice)).response()
        if clock is not None:
            await clock.advance(31)
        frame = await socket.receive(timeout=10)
    return json.loads(frame.data), question


@pytest.mark.parametrize(
    ("choice", "allowed", "remember"),
    [("Allow once", True, False), ("Always allow", True, True), ("Deny", False, False)],
)
async def test_a_permission_prompt_is_answered_in_discord(
    bridge: Service,
    world: World,
    http: aiohttp.ClientSession,
    choice: str,
    allowed: bool,
    remember: bool,
) -> None:
    response, question = await permission(bridge, world, http, choice)
    assert response == {
        "PermissionResponse": {"tool_name": "Bash", "allowed": allowed, "remember": remember}
    }
    edited = await world.emulator.wait_for_edit(question.id, ended)
    assert f"→ **{choice}**" in edited.text
    assert COMMAND in edited.text
    [request_id] = [r.request_id for r in await bridge.broker.list_requests()]
    assert await story(http, bridge.url, request_id) == [
        ("created", None),
        ("posted", None),
        ("vote", "Bob"),
        ("answered", "Bob"),
    ]


async def test_a_permission_prompt_nobody_answers_is_denied(
    bridge: Service, world: World, http: aiohttp.ClientSession, clock: ManualClock
) -> None:
    response, question = await permission(bridge, world, http, None, "&timeout_s=30", clock)
    assert response == {
        "PermissionResponse": {"tool_name": "Bash", "allowed": False, "remember": False}
    }
    edited = await world.emulator.wait_for_edit(question.id, ended)
    assert "⌛ Expired without an answer" in edited.text
    [request_id] = [r.request_id for r in await bridge.broker.list_requests()]
    kinds = [kind for kind, _ in await story(http, bridge.url, request_id)]
    assert kinds == ["created", "posted", "expired"]


async def test_permission_prompts_follow_the_connections_policy(
    bridge: Service, world: World, http: aiohttp.ClientSession, sre: Role, carol: User
) -> None:
    emulator = world.emulator
    query = f"?target=discord:{world.channel.id}&answerers=discord-role:{sre.id}"
    async with http.ws_connect(f"{bridge.url}/v1/agent{query}") as socket:
        await socket.send_json(PROMPT)
        question = await emulator.wait_for_message(world.channel.id)
        assert f"Who may answer: <@&{sre.id}>" in question.text
        refused = await emulator.click(question, world.alice.id, "Always allow")
        await refused.wait_for_ephemeral("was not counted")
        await (await emulator.click(question, carol.id, "Deny")).response()
        frame = await socket.receive(timeout=10)
    assert json.loads(frame.data) == {
        "PermissionResponse": {"tool_name": "Bash", "allowed": False, "remember": False}
    }
    [request_id] = [r.request_id for r in await bridge.broker.list_requests()]
    assert await story(http, bridge.url, request_id) == [
        ("created", None),
        ("posted", None),
        ("denied", "Alice"),
        ("vote", "Carol"),
        ("answered", "Carol"),
    ]


async def test_links_an_agent_chose_get_no_preview_in_reminders_and_notes(
    bridge: Service, world: World, http: aiohttp.ClientSession, clock: ManualClock
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    evil = "https://evil.example/askbridge-approved"
    options = [{"label": evil, "description": "Ship it"}, {"label": "Reject"}]
    deploy: dict[str, Any] = {"question": "Deploy?", "header": "Deploy", "options": options}
    body = {
        **DEPLOY,
        "questions": [deploy],
        "quorum": 2,
        "timeout_s": 600,
        "remind_after_s": 300,
        "on_timeout": {"answers": {"Deploy": evil}},
    }
    question = posted(emulator, await ask(http, bridge.url, body))
    counted = await (await emulator.click(question, alice.id, evil)).wait_for_ephemeral("1 of 2")
    await clock.advance(300)
    reminder = await emulator.wait_for_message(world.channel.id, lambda m: m.id != question.id)
    assert f"the answer is **{evil}**" in reminder.content
    regions = [{"label": "eu"}, {"label": "us"}]
    region = {"question": "Where?", "header": "Region", "options": regions}
    two = {"request_id": "ask_two", "questions": [deploy, region]}
    drafted = posted(emulator, await ask(http, bridge.url, two))
    chosen = await (await emulator.click(drafted, bob.id, evil)).wait_for_ephemeral(evil)

    # Each shows the link as the agent wrote it, and Discord made a card of none of them.
    for sent in (counted, reminder, chosen):
        assert evil in sent.content
        assert sent.flags & SUPPRESS_EMBEDS
    assert [m for m in emulator.sent() if m.link_previews] == []


async def test_the_largest_approval_is_still_edited_once_votes_come_in(
    bridge: Service, world: World, http: aiohttp.ClientSession, carol: User
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    # Labels and a tool call's values whose every character is escaped, twice as long as
    # written: the first post is within Discord's 4,000 characters, the tally pushes it over.
    questions = [
        {
            "question": "q?",
            "header": f"Q{q}",
            "options": [{"label": f"{q}{o}" + "*" * 78} for o in range(4)],
        }
        for q in range(4)
    ]
    voters = [alice, bob, carol]
    values = {f"v{n}": "*" * 300 for n in range(8)}
    others = [f"discord:@{100000000000000000 + n}" for n in range(17)]
    body = {
        "request_id": "ask_big",
        "questions": questions,
        "tool": {"name": "Deploy", "input": {"command": "rm -rf /srv/app", **values}},
        "answerers": [*(f"discord:@{v.id}" for v in voters), *others],
        "quorum": 3,
        "timeout_s": 600,
        "on_timeout": {"answers": {f"Q{q}": f"{q}0" + "*" * 78 for q in range(4)}},
    }
    question = posted(emulator, await ask(http, bridge.url, body))
    assert "rm -rf /srv/app" in question.text

    for o, voter in enumerate(voters):
        for q in range(4):
            await (await emulator.click(question, voter.id, f"{q}{o}" + "*" * 78)).response()
        await (await emulator.click(question, voter.id, "Submit")).wait_for_ephemeral("of 3")

    # Three differing votes, each a row of the tally: the message is edited to show them all.
    edited = await emulator.wait_for_edit(question.id, lambda m: m.text.count("— 1/3") == 3)
    assert "rm -rf /srv/app" in edited.text
    assert (await outcome(http, bridge.url, "ask_big", wait=0))["status"] == "waiting"
    await check_discord_was_never_let_down(emulator)
