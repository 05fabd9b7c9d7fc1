"""A Discord emulator with a server, a channel and two people, and askbridge pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from askbridge.bots.service import Service
from tests.conftest import StartService
from tests.emulators.discord import Channel, DiscordEmulator, Guild, Message, User
from tests.server_process import ServerProcess


@dataclass
class World:
    emulator: DiscordEmulator
    guild: Guild
    channel: Channel
    alice: User
    bob: User


def discord_env(emulator: DiscordEmulator) -> dict[str, str]:
    """The settings that point askbridge's discord.py at the emulator."""
    return {
        "DISCORD_BOT_TOKEN": emulator.bot_token,
        "DISCORD_API_URL": emulator.api_url,
        "DISCORD_GATEWAY_URL": emulator.gateway_url,
    }


@pytest.fixture
async def emulator() -> AsyncIterator[DiscordEmulator]:
    async with DiscordEmulator(bot_username="askbridge-bot") as emulator:
        yield emulator


@pytest.fixture
def world(emulator: DiscordEmulator) -> World:
    guild = emulator.add_guild("team")
    channel = emulator.add_text_channel(guild.id, "questions")
    alice = emulator.add_user("alice", global_name="Alice")
    bob = emulator.add_user("bob", global_name="Bob")
    emulator.add_member(guild.id, alice.id)
    emulator.add_member(guild.id, bob.id)
    return World(emulator, guild, channel, alice, bob)


@pytest.fixture
async def server(tmp_path: Path, world: World) -> AsyncIterator[ServerProcess]:
    """`askbridge serve` as a child process with Discord on, asking in #questions."""
    env = {
        **discord_env(world.emulator),
        "ASKBRIDGE_DEFAULT_TARGET": f"discord:{world.channel.id}",
    }
    process = ServerProcess(tmp_path / "askbridge.db", env=env)
    yield process
    await process.stop()


@pytest.fixture
async def bridge(world: World, start_service: StartService) -> AsyncIterator[Service]:
    """askbridge with Discord on, asking in #questions unless told otherwise."""
    service = await start_service(
        **discord_env(world.emulator), default_target=f"discord:{world.channel.id}"
    )
    yield service
    await check_discord_was_never_let_down(world.emulator)


async def check_discord_was_never_let_down(emulator: DiscordEmulator) -> None:
    """Every click was answered within Discord's 3 s (nobody saw "This interaction failed"),
    and Discord refused nothing askbridge sent."""
    for handle in emulator.interactions:
        await handle.response()
        assert handle.refused == [], handle
    assert emulator.rejections == []


async def ask(http: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> dict[str, Any]:
    """What the agent does: POST the question; the message is posted when this returns."""
    async with http.post(f"{url}/v1/questions", json=body) as response:
        status: dict[str, Any] = await response.json()
        assert response.status == 201, status
    return status


async def outcome(
    http: aiohttp.ClientSession, url: str, request_id: str, wait: float = 10
) -> dict[str, Any]:
    """What the agent does next: long-poll until the request ends."""
    async with http.get(f"{url}/v1/questions/{request_id}?wait={wait}") as response:
        assert response.status == 200
        status: dict[str, Any] = await response.json()
    return status


def posted(emulator: DiscordEmulator, status: dict[str, Any]) -> Message:
    """The Discord message a status object points to."""
    [message] = [m for m in status["messages"] if m["platform"] == "discord"]
    return emulator.message(int(message["message_id"]))
