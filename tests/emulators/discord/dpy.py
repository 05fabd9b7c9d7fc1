"""Pointing an unmodified discord.py at an emulator."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

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
