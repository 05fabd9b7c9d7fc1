"""Pointing an unmodified discord.py at an emulator."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TypeVar

with warnings.catch_warnings():
    # discord.py's voice player imports `audioop`, deprecated since Python 3.11; the test
    # suite turns warnings into errors, and voice is never used here.
    warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
    import discord.gateway
    import discord.http

import yarl

from .emulator import DiscordEmulator


@contextmanager
def discord_py_pointed_at(emulator: DiscordEmulator) -> Iterator[None]:
    """Redirect discord.py's REST base and default gateway; restore both afterwards."""
    saved_base = discord.http.Route.BASE
    saved_gateway = discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    discord.http.Route.BASE = emulator.api_url
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(emulator.gateway_url)
    try:
        yield
    finally:
        discord.http.Route.BASE = saved_base
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = saved_gateway


Client = TypeVar("Client", bound=discord.Client)


@asynccontextmanager
async def connected(client: Client, ready: asyncio.Event, token: str) -> AsyncIterator[Client]:
    """`client` started with `token` and past on_ready (which sets `ready`); closed after."""
    runner = asyncio.create_task(client.start(token), name="test-discord-client")
    waiting = asyncio.create_task(ready.wait(), name="test-discord-ready")
    try:
        async with asyncio.timeout(5):
            done, _ = await asyncio.wait({runner, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if runner in done:
            runner.result()
            raise AssertionError("the client stopped before on_ready")
        yield client
    finally:
        waiting.cancel()
        await client.close()
        await runner
