"""Discord's HTTP interactions mode, end to end: the emulator POSTs signed interactions to
askbridge's Interactions Endpoint URL, as Discord does once the URL is set in the Developer
Portal, and applies the HTTP replies as Discord would. No gateway connection is opened."""

from __future__ import annotations

import copy
import logging
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from nacl.signing import SigningKey, VerifyKey

from askbridge.adapters.discord import DiscordRuntime
from askbridge.adapters.discord.endpoint import PATH, Signatures
from askbridge.bots.service import Service
from askbridge.core.errors import StartupError
from tests.conftest import DATABASE, EXPECTED, StartService, audit_events, story
from tests.emulators.discord import (
    DiscordEmulator,
    Forgery,
    InteractionFailed,
    InteractionHandle,
    live_markdown,
    mentioned_in,
)
from tests.emulators.discord.components import TEXT_DISPLAY, walk
from tests.emulators.discord.store import SUPPRESS_EMBEDS
from tests.hostile import HOSTILE

from .conftest import World, ask, outcome, posted
from .test_answering import DEPLOY, ended
from .test_hostile_text import assert_shown_as_written

CALLBACK = "/interactions/{interaction_id}/{token}/callback"
OPEN = {**copy.deepcopy(DATABASE), "allow_other": True, "allow_notes": True}


def http_env(emulator: DiscordEmulator) -> dict[str, str]:
    """Discord in HTTP interactions mode: the token for REST, the public key for signatures."""
    return {
        "DISCORD_BOT_TOKEN": emulator.bot_token,
        "DISCORD_API_URL": emulator.api_url,
        "DISCORD_PUBLIC_KEY": emulator.public_key,
    }


@pytest.fixture
async def bridge(world: World, start_service: StartService) -> AsyncIterator[Service]:
    """askbridge in HTTP interactions mode, its endpoint set as the application's URL."""
    service = await start_service(
        **http_env(world.emulator), default_target=f"discord:{world.channel.id}"
    )
    await world.emulator.use_interactions_endpoint(service.url + PATH)
    yield service
    # Every interaction Discord signed was answered in time; those the test forged were not.
    for handle in world.emulator.interactions:
        if handle.forged is None:
            await handle.response()
            assert handle.refused == [], handle
    assert world.emulator.rejections == []


async def answered(handle: InteractionHandle, kind: int) -> None:
    """The endpoint's reply was the interaction's response, of this type, and nothing went
    through the REST callback route."""
    assert (await handle.response()).type == kind
    assert handle.endpoint_reply is not None
    assert handle.endpoint_reply.status == 200


async def test_no_gateway_is_opened_and_readyz_says_so(
    bridge: Service,
    world: World,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
) -> None:
    emulator = world.emulator
    assert emulator.gateway_stats.identifies == 0
    assert emulator.gateway_events() == []
    async with http.get(f"{bridge.url}/readyz") as response:
        assert response.status == 200
        ready = await response.json()
    assert "HTTP interactions as askbridge-bot" in str(ready)
    [runtime] = [r for r in bridge.runtimes if isinstance(r, DiscordRuntime)]
    assert runtime.mode == "http"
    # The Developer Portal's two checks passed: a PONG, and a 401 for a bad signature.
    assert [r.status for r in emulator.endpoint_replies] == [200, 401]


async def test_startup_says_which_mode(
    world: World, start_service: StartService, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="askbridge")
    await start_service(**http_env(world.emulator))
    [line] = [m for m in caplog.messages if m.startswith("discord:")]
    assert line.startswith(
        "discord: HTTP interactions mode (no gateway connection), logged in as askbridge-bot "
    )
    assert f"Interactions Endpoint URL to https://<this server's public address>{PATH}" in line


async def test_a_ping_gets_a_pong_and_anything_not_signed_by_discord_gets_401(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator = world.emulator
    pong = await emulator.ping()
    assert (pong.status, pong.body) == (200, {"type": 1})
    for forgery in Forgery:
        refused = await emulator.ping(forgery)
        assert refused.status == 401, forgery
        assert refused.content_type == "application/json"
        assert "this endpoint takes only Discord's interactions" in refused.body["error"]
    async with http.post(bridge.url + PATH, data=b"{}") as response:
        assert response.status == 401
    async with http.post(
        bridge.url + PATH,
        data=b"not json",
        headers={"X-Signature-Ed25519": "zz", "X-Signature-Timestamp": "1"},
    ) as response:
        assert response.status == 401


async def test_gateway_mode_warns_when_clicks_go_to_an_endpoint_url(
    bridge: Service, world: World, caplog: pytest.LogCaptureFixture
) -> None:
    emulator = world.emulator
    gateway = DiscordRuntime(
        bridge.broker,
        token=emulator.bot_token,
        api_url=emulator.api_url,
        gateway_url=emulator.gateway_url,
    )
    try:
        await gateway.start()
    finally:
        await gateway.stop()
    assert (
        f"the application has an Interactions Endpoint URL ({bridge.url}{PATH}): Discord sends "
        "clicks there, not over the gateway."
    ) in caplog.text


async def test_the_endpoint_is_reachable_through_a_tunnel_while_the_api_is_not(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    """A token-less loopback server refuses a Host that is not local (DNS rebinding), except
    on the signed endpoint, which a tunnel forwards with its own Host."""
    tunnel = {"Host": "askbridge.tunnel.example"}
    pong = await world.emulator.post_to_endpoint({"type": 1}, headers=tunnel)
    assert (pong.status, pong.body) == (200, {"type": 1})
    async with http.get(f"{bridge.url}/v1/questions", headers=tunnel) as response:
        assert response.status == 403


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"not json", "the body is not JSON"),
        (b"\xff\xfe", "the body is not JSON"),
        ([1, 2], "not type None"),
        ({"type": 2, "data": {"name": "ask"}}, "not type 2"),
        ({"type": "3"}, "not type '3'"),
        ({"type": 3, "data": {"custom_id": "ab:x:s"}}, "not an interaction Discord would send"),
    ],
)
async def test_a_signed_body_that_is_no_interaction_askbridge_takes_gets_400(
    bridge: Service, world: World, body: object, expected: str
) -> None:
    refused = await world.emulator.post_to_endpoint(body)
    assert refused.status == 400, refused
    assert expected in refused.body["error"]


ODD_GUILD_IDS: tuple[object, ...] = (5, [1], "abc", None, "", {}, True, "1" * 30, "１２")
"""Not a snowflake string, though discord.py reads some as one (a number, fullwidth digits) and
others as no server at all."""


@pytest.mark.parametrize(
    "change",
    [
        *({"guild_id": odd} for odd in ODD_GUILD_IDS),
        {"member": None},
        {"member": "x"},
    ],
    ids=repr,
)
async def test_a_signed_click_naming_its_server_or_clicker_oddly_gets_400_and_no_traceback(
    bridge: Service,
    world: World,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
    change: dict[str, Any],
) -> None:
    """discord.py reads a guild_id that is no snowflake string as some server's, or as none,
    and then finds no one who clicked: the endpoint refuses it first."""
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, DEPLOY))
    genuine = await emulator.click(question, alice.id, "Yes")
    await answered(genuine, 6)
    payload = {**copy.deepcopy(dict(genuine.payload)), **change}
    payload["id"] = str(int(payload["id"]) + 1)
    refused = await emulator.post_to_endpoint(payload)
    assert refused.status == 400, refused
    assert refused.body["error"].startswith("not an interaction Discord would send: "), refused
    assert [
        r.getMessage() for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR
    ] == []


def test_signatures_are_checked_before_the_age_and_the_age_both_ways() -> None:
    key = SigningKey.generate()
    signatures = Signatures(VerifyKey(bytes(key.verify_key)), now=lambda: 1_000_000.0)

    def sign(timestamp: str, body: bytes = b"{}") -> str:
        return key.sign(timestamp.encode() + body).signature.hex()

    assert signatures.refusal("1000000", sign("1000000"), b"{}") is None
    assert signatures.refusal("999701", sign("999701"), b"{}") is None
    assert signatures.refusal("999699", sign("999699"), b"{}") == (
        "stale request: signed 301 s ago (at most 300 s)"
    )
    assert signatures.refusal("1000301", sign("1000301"), b"{}") == (
        "request signed 301 s in the future; check this machine's clock"
    )
    assert signatures.refusal("1000000", sign("1000000"), b"{ }") == "bad signature"
    assert signatures.refusal("1000001", sign("1000000"), b"{}") == "bad signature"
    assert signatures.refusal("1000000", "not hex", b"{}") == "bad signature"
    assert signatures.refusal("1000000", "ab" * 10, b"{}") == "bad signature"
    assert signatures.refusal("soon", sign("soon"), b"{}") == "X-Signature-Timestamp is not a time"
    assert signatures.refusal(None, sign("1000000"), b"{}") is not None
    assert signatures.refusal("1000000", "", b"{}") is not None


@pytest.mark.parametrize("forgery", list(Forgery))
async def test_a_click_not_signed_by_discord_is_refused_and_nothing_recorded(
    forgery: Forgery, bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, DEPLOY))
    emulator.forge_next_delivery(forgery)
    forged = await emulator.click(question, alice.id, "Yes")
    with pytest.raises(InteractionFailed, match="answered 401"):
        await forged.response()
    assert forged.endpoint_reply is not None
    assert forged.endpoint_reply.status == 401
    assert await story(http, bridge.url, "ask_deploy") == [("created", None), ("posted", None)]
    assert emulator.ephemerals(alice.id) == []
    # Only that delivery was refused; Discord's next one counts.
    await answered(await emulator.click(question, alice.id, "No"), 6)
    assert (await outcome(http, bridge.url, "ask_deploy"))["answers"] == {"Deploy": "No"}


async def test_a_click_answers_the_agent(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, DEPLOY))
    clicked = await emulator.click(question, alice.id, "Yes")
    await answered(clicked, 6)

    final = await outcome(http, bridge.url, "ask_deploy")
    assert final["answers"] == {"Deploy": "Yes"}
    assert final["answered_by"] == {"platform": "discord", "id": str(alice.id), "name": "Alice"}
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "Yes" in edited.text
    assert clicked.followups == []  # the message says it all
    assert emulator.requests_to("POST", CALLBACK) == []


async def test_a_multi_select_and_submit(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, DATABASE))
    chose = await emulator.click(question, alice.id, "PostgreSQL")
    await answered(chose, 6)
    await chose.wait_for_ephemeral("**Database**: PostgreSQL. Still to answer: **Features**")
    picked = await emulator.choose(question, alice.id, ["Caching", "Metrics"])
    await answered(picked, 6)
    await picked.wait_for_ephemeral("**Features**: Caching, Metrics. Press **Submit**")
    await answered(await emulator.click(question, alice.id, "Submit"), 6)

    final = await outcome(http, bridge.url, "ask_db")
    assert final["answers"] == EXPECTED
    assert final["answered_by"]["name"] == "Alice"
    await emulator.wait_for_edit(question.id, ended)


async def test_cancel(bridge: Service, world: World, http: aiohttp.ClientSession) -> None:
    emulator, bob = world.emulator, world.bob
    question = posted(emulator, await ask(http, bridge.url, DATABASE))
    asked = await emulator.click(question, bob.id, "Cancel")
    await answered(asked, 4)
    sure = await asked.wait_for_ephemeral("Cancel this question?")
    assert sure.flags & SUPPRESS_EMBEDS
    await answered(await emulator.click(sure, bob.id, "Cancel question"), 6)
    done = await emulator.wait_for_edit(sure.id, ended)
    assert done.text == "Cancelled by **Bob** — the agent was interrupted."
    final = await outcome(http, bridge.url, "ask_db")
    assert final["status"] == "cancelled"
    assert final["cancelled_by"]["name"] == "Bob"
    await emulator.wait_for_edit(question.id, ended)


async def test_a_link_an_agent_chose_gets_no_preview_in_a_note(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    evil = "https://evil.example/askbridge-approved"
    body: dict[str, Any] = copy.deepcopy(DATABASE)
    body["questions"][0]["options"][0]["label"] = evil
    question = posted(emulator, await ask(http, bridge.url, body))
    chose = await emulator.click(question, alice.id, evil)
    await answered(chose, 6)
    note = await chose.wait_for_ephemeral(f"**Database**: {evil}")
    assert note.flags & SUPPRESS_EMBEDS
    assert [m for m in emulator.sent() if m.link_previews] == []


async def test_a_refused_click_gets_a_private_note(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    only_bob = {**DEPLOY, "answerers": [f"discord:@{bob.id}"]}
    question = posted(emulator, await ask(http, bridge.url, only_bob))
    refused = await emulator.click(question, alice.id, "Yes")
    await answered(refused, 6)
    told = await refused.wait_for_ephemeral("may answer this question")
    assert told.ephemeral_for == alice.id
    assert await story(http, bridge.url, "ask_deploy") == [
        ("created", None),
        ("posted", None),
        ("denied", "Alice"),
    ]

    await answered(await emulator.click(question, bob.id, "No"), 6)
    assert (await outcome(http, bridge.url, "ask_deploy"))["answers"] == {"Deploy": "No"}


async def test_a_form_in_own_words(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, OPEN))
    picked = await emulator.choose(question, alice.id, ["Caching", "Metrics"])
    await answered(picked, 6)
    await picked.wait_for_ephemeral("Still to answer: **Database**")

    opened = await emulator.click(question, alice.id, "Answer in my words…")
    await answered(opened, 9)
    form = await opened.modal()
    assert form.title == "Answer in your own words"
    assert [f.label for f in form.fields] == ["Database", "Features", "A note for the agent"]
    assert form.fields[1].value == "Caching, Metrics"
    typed = {"Database": "MariaDB 11", "A note for the agent": "if ops agree"}
    submitted = await emulator.submit_modal(opened, typed)
    await answered(submitted, 6)

    final = await outcome(http, bridge.url, "ask_db")
    assert final["answers"] == {"Database": "MariaDB 11", "Features": "Caching, Metrics"}
    assert final["notes"] == {"Database": "if ops agree"}
    await emulator.wait_for_edit(question.id, ended)


async def test_a_form_refused_before_it_opens_says_why_in_the_reply(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    only_bob = {**OPEN, "answerers": [f"discord:@{bob.id}"]}
    question = posted(emulator, await ask(http, bridge.url, only_bob))
    refused = await emulator.click(question, alice.id, "Answer in my words…")
    callback = await refused.response()
    assert (callback.type, callback.ephemeral) == (4, True)
    assert "may answer this question" in (callback.content or "")
    assert callback.data["allowed_mentions"] == {"parse": []}


async def test_hostile_words_and_notes_stay_inert(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    question = posted(emulator, await ask(http, bridge.url, OPEN))
    words = f"<@{bob.id}> @everyone [x](https://e.example) ```py\n# not a heading"
    note = f"-# <@&{world.guild.id}> **b** ||s|| ``` <#{world.channel.id}>\n> quote"
    opened = await emulator.click(question, alice.id, "Answer in my words…")
    await opened.modal()
    typed = {"Database": words, "Features": f"Caching, {words}", "A note for the agent": note}
    await answered(await emulator.submit_modal(opened, typed), 6)

    final = await outcome(http, bridge.url, "ask_db")
    assert final["answers"] == {"Database": words, "Features": f"Caching, {words}"}
    assert final["notes"] == {"Database": note}
    edited = await emulator.wait_for_edit(question.id, ended)
    found = live_markdown(edited.text)
    assert (found.masked_links, found.open_fence, found.line_markup) == ((), False, ())
    mentioned = mentioned_in(edited.text)
    assert (mentioned.users, mentioned.roles, mentioned.everyone) == (
        frozenset(),
        frozenset(),
        False,
    )
    assert all(m.pings.nobody for m in emulator.sent())


async def test_hostile_questions_names_and_words_stay_inert_in_every_reply_and_note(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator = world.emulator
    stranger = emulator.add_user(
        "mallory", global_name="**M** <@1> @everyone [x](https://e.example)"
    )
    emulator.add_member(world.guild.id, stranger.id)
    inline = [h for h in HOSTILE if "\n" not in h]
    body = {
        "request_id": "ask_hostile",
        "context": "".join(HOSTILE),
        "allow_other": True,
        "allow_notes": True,
        "questions": [
            {
                "question": "".join(inline) + "?",
                "header": inline[0][:12],
                "options": [{"label": label[:60], "description": label} for label in inline[1:3]],
            },
            {
                "question": "".join(reversed(inline)) + "?",
                "header": inline[3][:12],
                "multiSelect": True,
                "options": [{"label": label[:60]} for label in inline[4:7]],
            },
        ],
    }
    question = posted(emulator, await ask(http, bridge.url, body))
    first = await emulator.click(question, stranger.id, inline[1][:60])
    await answered(first, 6)
    drafted = await first.wait_for_ephemeral("Still to answer")
    opened = await emulator.click(question, stranger.id, "Answer in my words…")
    await opened.modal()
    typed = {inline[3][:12]: "".join(inline[:6]), "A note for the agent": "".join(HOSTILE)}
    await answered(await emulator.submit_modal(opened, typed), 6)
    final = await outcome(http, bridge.url, "ask_hostile")
    assert final["status"] == "answered"
    edited = await emulator.wait_for_edit(question.id, ended)
    # The messages' markdown (labels are plain text, which Discord never parses), and the note.
    shown = [
        p.component["content"]
        for message in (question, edited)
        for p in walk(message.components)
        if p.component["type"] == TEXT_DISPLAY
    ]
    assert any("📝" in text for text in shown)
    for text in [*shown, drafted.text]:
        assert_shown_as_written(text, ())
    assert all(m.pings.nobody for m in emulator.sent())


async def test_a_replayed_click_does_not_undo_a_later_one(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    question = posted(emulator, await ask(http, bridge.url, {**DEPLOY, "quorum": 2}))
    yes = await emulator.click(question, alice.id, "Yes")
    await answered(yes, 6)
    await yes.wait_for_ephemeral("Your vote is counted")
    no = await emulator.click(question, alice.id, "No")
    await answered(no, 6)
    await no.wait_for_ephemeral("Your vote is counted")
    # Within the 5 minutes a signature is good for, Alice's first click comes again.
    replayed = await emulator.redeliver(yes)
    assert (replayed.status, replayed.body) == (200, {"type": 6})
    await answered(await emulator.click(question, bob.id, "No"), 6)
    final = await outcome(http, bridge.url, "ask_deploy")
    assert final["answers"] == {"Deploy": "No"}
    assert {v["answers"]["Deploy"] for v in final["votes"]} == {"No"}


async def test_a_refused_click_delivered_twice_is_told_once(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    body = {**DEPLOY, "answerers": [f"discord:@{alice.id}"]}
    question = posted(emulator, await ask(http, bridge.url, body))
    told = "Only these people may answer"
    refused = await emulator.click(question, bob.id, "Yes")
    await refused.wait_for_ephemeral(told)
    # Delivered again (a retry, or to another replica): acknowledged, and nothing else.
    again = await emulator.redeliver(refused)
    assert (again.status, again.body) == (200, {"type": 6})
    # A click of Bob's own is told again.
    await (await emulator.click(question, bob.id, "Yes")).wait_for_ephemeral(told)
    assert len([m for m in emulator.ephemerals(bob.id) if told in m.text]) == 2
    events = await audit_events(http, bridge.url, "ask_deploy")
    assert [e["kind"] for e in events].count("denied") == 2, "denied once per click"


async def test_a_wrong_public_key_stops_startup_naming_the_setting(
    emulator: DiscordEmulator, start_service: StartService
) -> None:
    other = DiscordEmulator()
    settings: dict[str, Any] = {**http_env(emulator), "DISCORD_PUBLIC_KEY": other.public_key}
    with pytest.raises(StartupError, match="DISCORD_PUBLIC_KEY is not the public key"):
        await start_service(**settings)
    settings["DISCORD_PUBLIC_KEY"] = "not-hex"
    with pytest.raises(StartupError, match="General Information → Public Key"):
        await start_service(**settings)


async def test_a_form_delivered_twice_counts_once_and_is_told_once(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, {**OPEN, "quorum": 2}))
    counted = "Your vote is counted"
    words = {"Database": "MariaDB 11", "Features": "Caching"}
    opened = await emulator.click(question, alice.id, "Answer in my words…")
    await opened.modal()
    submitted = await emulator.submit_modal(opened, words)
    await answered(submitted, 6)
    await submitted.wait_for_ephemeral(counted)
    # The submission delivered again (its interaction id, hence its time, is the same):
    # acknowledged, and nothing else.
    again = await emulator.redeliver(submitted)
    assert (again.status, again.body) == (200, {"type": 6})
    # A submission of Alice's own is counted and told.
    reopened = await emulator.click(question, alice.id, "Answer in my words…")
    await reopened.modal()
    changed = await emulator.submit_modal(reopened, {**words, "Database": "MariaDB 12"})
    await changed.wait_for_ephemeral(counted)
    assert len([m for m in emulator.ephemerals(alice.id) if counted in m.text]) == 2
    events = await audit_events(http, bridge.url, "ask_db")
    assert [e["kind"] for e in events].count("vote") == 2, "one vote a submission"


async def test_a_typed_form_filled_in_refused_then_declined(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    question = posted(emulator, await ask(http, bridge.url, TYPED_FORM))
    opened = await emulator.click(question, alice.id, "Fill in…")
    await answered(opened, 9)
    form = await opened.modal()
    assert form.labels == ["Ticket", "Urgent"]
    submitted = await emulator.submit_modal(opened, {"Ticket": "0", "Urgent": ["Yes"]})
    await answered(submitted, 6)
    note = await submitted.wait_for_ephemeral("Nothing was recorded")
    assert "- **Ticket**: must be at least 1, got 0" in note.text
    assert (await outcome(http, bridge.url, "form_ticket", wait=0))["status"] == "waiting"
    again = await emulator.click(note, alice.id, "Fill in again")
    await answered(again, 9)
    assert (await again.modal()).field("Ticket").value == "0"

    await answered(await emulator.click(question, bob.id, "Decline"), 6)
    final = await outcome(http, bridge.url, "form_ticket")
    assert (final["status"], final["action"]) == ("declined", "decline")
    edited = await emulator.wait_for_edit(question.id, ended)
    assert "Declined by **Bob**" in edited.text


TYPED_FORM = {
    "request_id": "form_ticket",
    "form": {
        "message": "Which ticket?",
        "requested_schema": {
            "type": "object",
            "properties": {
                "ticket": {"type": "integer", "title": "Ticket", "minimum": 1},
                "urgent": {"type": "boolean", "title": "Urgent"},
            },
            "required": ["ticket"],
        },
    },
}
