"""Starting and stopping Discord: the log line, the invite URL, and failures that name the fix."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import discord.gateway
import discord.http
import pytest

from askbridge.adapters.discord import DiscordRuntime, invite_url
from askbridge.bots.service import Service
from askbridge.core.errors import StartupError
from tests.conftest import StartService
from tests.emulators.discord import DiscordEmulator

from .conftest import World, discord_env

DEFAULT_API = "https://discord.com/api/v10"
DEFAULT_GATEWAY = "wss://gateway.discord.gg/"
VIEW_CHANNEL, SEND_MESSAGES, READ_MESSAGE_HISTORY = 1 << 10, 1 << 11, 1 << 16
SEND_MESSAGES_IN_THREADS = 1 << 38


def test_the_invite_asks_for_exactly_the_permissions_needed() -> None:
    needed = VIEW_CHANNEL | SEND_MESSAGES | SEND_MESSAGES_IN_THREADS | READ_MESSAGE_HISTORY
    assert needed == 274877975552
    assert invite_url(42) == (
        f"https://discord.com/oauth2/authorize?client_id=42&scope=bot&permissions={needed}"
    )


@pytest.mark.parametrize("right", [True, False])
async def test_an_application_id_that_is_not_the_tokens_is_named(
    world: World, start_service: StartService, caplog: pytest.LogCaptureFixture, right: bool
) -> None:
    app_id = world.emulator.application_id
    given = app_id if right else app_id + 1
    await start_service(**discord_env(world.emulator), DISCORD_APPLICATION_ID=str(given))
    warned = [m for m in caplog.messages if m.startswith("DISCORD_APPLICATION_ID is")]
    if right:
        assert warned == []
    else:
        assert warned == [
            f"DISCORD_APPLICATION_ID is {given}, but DISCORD_BOT_TOKEN belongs to application "
            f"{app_id}: askbridge discord invite-url prints a link that adds another "
            f"application's bot. Set DISCORD_APPLICATION_ID={app_id}"
        ]


async def test_startup_logs_the_bot_and_its_invite_url(
    world: World, start_service: StartService, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="askbridge")
    await start_service(**discord_env(world.emulator))
    app_id = world.emulator.application_id
    assert (
        f"discord: connected as askbridge-bot (id {world.emulator.bot.id}); invite the bot to a "
        f"server with {invite_url(app_id)}"
    ) in caplog.messages
    # The client went to the emulator with URLs of its own: discord.py's class-wide defaults,
    # which every other client in the process reads, are untouched.
    assert discord.http.Route.BASE == DEFAULT_API
    assert str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY) == DEFAULT_GATEWAY


async def test_two_clients_in_one_process_each_use_their_own_urls(
    world: World, service: Service
) -> None:
    async with DiscordEmulator(bot_username="other-bot") as other:
        channel = other.add_text_channel(other.add_guild("elsewhere").id, "questions")
        runtimes = [
            DiscordRuntime(
                service.broker,
                token=emulator.bot_token,
                api_url=emulator.api_url,
                gateway_url=emulator.gateway_url,
            )
            for emulator in (world.emulator, other)
        ]
        try:
            lines = [await runtime.start() for runtime in runtimes]
            assert lines[0].startswith("discord: connected as askbridge-bot ")
            assert lines[1].startswith("discord: connected as other-bot ")
            for runtime, place in zip(runtimes, (world.channel, channel), strict=True):
                await runtime.client.get_partial_messageable(place.id).send("hello")
        finally:
            for runtime in runtimes:
                await runtime.stop()
        for emulator, place in ((world.emulator, world.channel), (other, channel)):
            assert emulator.gateway_stats.identifies == 1
            assert [m.text for m in emulator.messages(place.id)] == ["hello"]


async def test_a_wrong_token_fails_startup_naming_the_setting(
    emulator: DiscordEmulator, start_service: StartService
) -> None:
    settings = {**discord_env(emulator), "DISCORD_BOT_TOKEN": "not-the-token"}
    with pytest.raises(StartupError, match="Discord refused DISCORD_BOT_TOKEN") as refused:
        await start_service(**settings)
    assert "Reset Token" in str(refused.value)
    assert [r.status for r in emulator.requests_to("GET", "/users/@me")] == [401]
    # The failed start put discord.py's class-wide defaults back.
    assert discord.http.Route.BASE == DEFAULT_API
    assert str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY) == DEFAULT_GATEWAY


async def test_an_unreachable_api_fails_startup_naming_the_setting(
    emulator: DiscordEmulator, start_service: StartService
) -> None:
    settings = {**discord_env(emulator), "DISCORD_API_URL": emulator.base_url + "/nowhere/v10"}
    await emulator.stop()
    with pytest.raises(StartupError, match=r"could not reach Discord at .*check DISCORD_API_URL"):
        await start_service(**settings)


@pytest.fixture
async def silent_gateway() -> AsyncIterator[str]:
    """A server that accepts connections and never says a word."""

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()
        writer.close()

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"ws://127.0.0.1:{port}/"


@pytest.mark.parametrize(
    ("gateway", "ready_timeout_s", "expected"),
    [
        ("silent", 0.3, "did not answer within 0.3 s"),
        ("missing", 10, "could not be reached (AttributeError"),
    ],
)
async def test_a_gateway_that_does_not_work_fails_startup_naming_the_setting(
    emulator: DiscordEmulator,
    service: Service,
    silent_gateway: str,
    gateway: str,
    ready_timeout_s: float,
    expected: str,
) -> None:
    urls = {"silent": silent_gateway, "missing": emulator.gateway_url + "/not-here"}
    runtime = DiscordRuntime(
        service.broker,
        token=emulator.bot_token,
        api_url=emulator.api_url,
        gateway_url=urls[gateway],
        ready_timeout_s=ready_timeout_s,
    )
    try:
        with pytest.raises(StartupError) as failed:
            await runtime.start()
    finally:
        await runtime.stop()
    message = str(failed.value)
    assert message.startswith("Discord accepted DISCORD_BOT_TOKEN but its gateway ")
    assert expected in message
    assert message.endswith("; check the network, and DISCORD_GATEWAY_URL")
    assert runtime.client.is_closed()
    assert discord.http.Route.BASE == DEFAULT_API
