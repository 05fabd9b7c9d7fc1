"""Fixtures for the platform emulators' own tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from .discord import DiscordEmulator
from .discord.dpy import discord_py_pointed_at


@pytest.fixture
async def discord_emulator() -> AsyncIterator[DiscordEmulator]:
    """A running Discord emulator, stopped after the test."""
    async with DiscordEmulator() as emulator:
        yield emulator


@pytest.fixture
def discord_py_redirected(discord_emulator: DiscordEmulator) -> Iterator[DiscordEmulator]:
    """The emulator, with discord.py's REST base and gateway pointed at it for the test."""
    with discord_py_pointed_at(discord_emulator):
        yield discord_emulator
