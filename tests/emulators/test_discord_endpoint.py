"""The emulator's Interactions Endpoint URL flow, against a small endpoint written here: signed
deliveries, the replies Discord applies (types 4, 5, 6, 7, 9, and 202 after a callback), and
the replies it refuses (late, malformed, invalid), as strictly as the callback route."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

from .discord import (
    DiscordEmulator,
    EndpointRejected,
    Forgery,
    InteractionFailed,
    Message,
    User,
)

Reply = Callable[[dict[str, Any]], Awaitable[web.Response]]


@dataclass
class Bot:
    """An Interactions Endpoint that checks signatures and answers each interaction with the
    next of `replies`."""

    emulator: DiscordEmulator
    replies: list[Reply] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        key = VerifyKey(bytes.fromhex(self.emulator.public_key))
        try:
            signed = request.headers["X-Signature-Timestamp"].encode() + body
            key.verify(signed, bytes.fromhex(request.headers["X-Signature-Ed25519"]))
        except (KeyError, ValueError, BadSignatureError):
            return web.json_response({"error": "bad signature"}, status=401)
        payload = json.loads(body)
        if payload["type"] == 1:
            return web.json_response({"type": 1})
        self.received.append(payload)
        return await self.replies.pop(0)(payload)


@dataclass
class World:
    emulator: DiscordEmulator
    bot: Bot
    alice: User
    question: Message


def reply(body: object, status: int = 200) -> Reply:
    async def answer(payload: dict[str, Any]) -> web.Response:
        return web.json_response(body, status=status)

    return answer


@pytest.fixture
async def world(discord_emulator: DiscordEmulator) -> AsyncIterator[World]:
    emulator = discord_emulator
    guild = emulator.add_guild("team")
    channel = emulator.add_text_channel(guild.id, "questions")
    alice = emulator.add_user("alice")
    emulator.add_member(guild.id, alice.id)
    bot = Bot(emulator)
    app = web.Application()
    app.router.add_post("/interactions", bot.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    bot.url = f"http://127.0.0.1:{runner.addresses[0][1]}/interactions"
    button = {"type": 2, "style": 1, "label": "Go", "custom_id": "go"}
    body = {"content": "Ready?", "components": [{"type": 1, "components": [button]}]}
    headers = {"Authorization": f"Bot {emulator.bot_token}"}
    async with aiohttp.ClientSession() as http:
        url = f"{emulator.api_url}/channels/{channel.id}/messages"
        async with http.post(url, json=body, headers=headers) as response:
            assert response.status == 200, await response.text()
    question = await emulator.wait_for_message(channel.id)
    await emulator.use_interactions_endpoint(bot.url)
    yield World(emulator, bot, alice, question)
    await runner.cleanup()


async def test_deliveries_are_signed_and_not_sent_over_the_gateway(world: World) -> None:
    world.bot.replies.append(reply({"type": 6}))
    handle = await world.emulator.click(world.question, world.alice.id, "Go")
    assert (await handle.response()).type == 6
    [payload] = world.bot.received
    assert payload["type"] == 3
    assert (payload["data"]["custom_id"], payload["data"]["component_type"]) == ("go", 2)
    assert payload["member"]["user"]["id"] == str(world.alice.id)
    assert payload["message"]["id"] == str(world.question.id)
    assert world.emulator.gateway_events() == []


async def test_a_type_4_reply_shows_a_private_message(world: World) -> None:
    world.bot.replies.append(reply({"type": 4, "data": {"content": "Only you", "flags": 64}}))
    handle = await world.emulator.click(world.question, world.alice.id, "Go")
    callback = await handle.response()
    assert (callback.type, callback.ephemeral) == (4, True)
    shown = await world.emulator.wait_for_ephemeral(world.alice.id, "Only you")
    assert shown.ephemeral_for == world.alice.id


async def test_a_type_7_reply_updates_the_message(world: World) -> None:
    world.bot.replies.append(reply({"type": 7, "data": {"content": "Done", "components": []}}))
    handle = await world.emulator.click(world.question, world.alice.id, "Go")
    assert (await handle.response()).type == 7
    edited = await world.emulator.wait_for_edit(world.question.id)
    assert edited.text == "Done"
    assert not edited.is_interactive


async def test_a_type_5_reply_shows_thinking(world: World) -> None:
    world.bot.replies.append(reply({"type": 5, "data": {"flags": 64}}))
    handle = await world.emulator.click(world.question, world.alice.id, "Go")
    assert (await handle.response()).type == 5
    assert handle.original is not None
    assert handle.original.is_loading


async def test_a_modal_reply_is_shown_and_can_be_submitted(world: World) -> None:
    field_ = {"type": 4, "custom_id": "words", "style": 1}
    modal = {
        "custom_id": "form",
        "title": "Your words",
        "components": [{"type": 18, "label": "Words", "component": field_}],
    }
    world.bot.replies += [reply({"type": 9, "data": modal}), reply({"type": 6})]
    opened = await world.emulator.click(world.question, world.alice.id, "Go")
    shown = await opened.modal()
    assert shown.title == "Your words"
    submitted = await world.emulator.submit_modal(opened, {"Words": "mine"})
    assert (await submitted.response()).type == 6
    assert world.bot.received[-1]["type"] == 5


async def test_a_202_is_taken_only_after_a_callback(world: World) -> None:
    async def through_the_callback_route(payload: dict[str, Any]) -> web.Response:
        route = f"/interactions/{payload['id']}/{payload['token']}/callback"
        url = world.emulator.api_url + route
        async with aiohttp.ClientSession() as http, http.post(url, json={"type": 6}) as response:
            assert response.status == 204
        return web.Response(status=202)

    world.bot.replies += [through_the_callback_route, reply(None, status=202)]
    handle = await world.emulator.click(world.question, world.alice.id, "Go")
    assert (await handle.response()).type == 6
    assert handle.refused == []
    unanswered = await world.emulator.click(world.question, world.alice.id, "Go")
    with pytest.raises(InteractionFailed, match="answered 202"):
        await unanswered.response()


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (reply({"type": 8}), "type 8 response refused: 50035 Invalid Form Body"),
        (reply({"type": 1}), "with a PONG"),
        (reply({"type": 4, "data": {"content": ""}}), "refused"),
        (reply({"error": "no"}, status=500), "answered 500"),
        (reply(["not", "an", "object"]), "answered 200"),
    ],
)
async def test_a_reply_discord_would_not_take_fails_the_interaction(
    world: World, answer: Reply, why: str
) -> None:
    world.bot.replies.append(answer)
    handle = await world.emulator.click(world.question, world.alice.id, "Go")
    with pytest.raises(InteractionFailed, match=why):
        await handle.response()
    assert handle.refused


async def test_a_reply_after_the_window_fails_the_interaction() -> None:
    async with DiscordEmulator(response_window=0.2) as emulator:
        guild = emulator.add_guild("team")
        channel = emulator.add_text_channel(guild.id, "questions")
        alice = emulator.add_user("alice")
        emulator.add_member(guild.id, alice.id)
        never = asyncio.Event()
        bot = Bot(emulator)

        async def too_late(payload: dict[str, Any]) -> web.Response:
            await never.wait()
            return web.json_response({"type": 6})

        bot.replies.append(too_late)
        app = web.Application()
        app.router.add_post("/i", bot.handle)
        runner = web.AppRunner(app, handler_cancellation=True)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        try:
            button = {"type": 2, "style": 1, "label": "Go", "custom_id": "go"}
            headers = {"Authorization": f"Bot {emulator.bot_token}"}
            body = {"content": "?", "components": [{"type": 1, "components": [button]}]}
            async with aiohttp.ClientSession() as http:
                url = f"{emulator.api_url}/channels/{channel.id}/messages"
                async with http.post(url, json=body, headers=headers) as response:
                    assert response.status == 200
            question = await emulator.wait_for_message(channel.id)
            await emulator.use_interactions_endpoint(f"http://127.0.0.1:{runner.addresses[0][1]}/i")
            handle = await emulator.click(question, alice.id, "Go")
            with pytest.raises(InteractionFailed, match="This interaction failed"):
                await handle.response(timeout=5)
            assert handle.endpoint_reply is None
            assert handle.callback is None
        finally:
            never.set()
            await runner.cleanup()


async def test_the_portal_refuses_an_endpoint_that_takes_a_bad_signature(
    discord_emulator: DiscordEmulator,
) -> None:
    async def anything(request: web.Request) -> web.Response:
        return web.json_response({"type": 1})

    app = web.Application()
    app.router.add_post("/i", anything)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        url = f"http://127.0.0.1:{runner.addresses[0][1]}/i"
        with pytest.raises(EndpointRejected, match=r"badly signed PING to .* got 200"):
            await discord_emulator.use_interactions_endpoint(url)
        assert [r.status for r in discord_emulator.endpoint_replies] == [200, 200]
    finally:
        await runner.cleanup()


async def test_forged_deliveries_and_the_application_s_public_key(world: World) -> None:
    emulator = world.emulator
    for forgery in Forgery:
        assert (await emulator.ping(forgery)).status in (200, 401)
    # This small bot checks signatures but not their age: a stale one passes here, which is
    # why askbridge checks the timestamp too.
    assert (await emulator.ping(Forgery.STALE)).status == 200
    assert (await emulator.ping(Forgery.SIGNATURE)).status == 401
    assert (await emulator.ping(Forgery.UNSIGNED)).status == 401
    headers = {"Authorization": f"Bot {emulator.bot_token}"}
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"{emulator.api_url}/oauth2/applications/@me", headers=headers) as response,
    ):
        application = await response.json()
    assert application["verify_key"] == emulator.public_key
    assert application["interactions_endpoint_url"] == world.bot.url
