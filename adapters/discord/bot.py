"""The discord.py client: minimal intents, the broker at hand, DynamicItems registered once."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import discord
from discord import ui

from core.broker import Broker


class BridgeBot(discord.Client):
    """A plain `discord.Client`; clicks reach the broker through `interaction.client.broker`."""

    def __init__(self, broker: Broker, dynamic_items: Sequence[type[ui.DynamicItem[Any]]]) -> None:
        intents = discord.Intents.none()
        # Clicks (INTERACTION_CREATE) need no intent at all; `guilds` keeps the guild, channel
        # and role caches filled, for jump links and for checking roles (a click's member
        # carries its role ids in any case).
        intents.guilds = True
        # Nothing askbridge sends pings anyone unless it says so (only reminders do).
        super().__init__(
            intents=intents,
            max_messages=None,
            chunk_guilds_at_startup=False,
            allowed_mentions=discord.AllowedMentions.none(),
        )
        self.broker = broker
        self._dynamic_items = tuple(dynamic_items)
        self.connected = asyncio.Event()
        """Set once the gateway session is up (READY): from then on clicks arrive."""

    async def setup_hook(self) -> None:
        # Runs once, inside login(), before the gateway connects: every message askbridge ever
        # posted is served from here on, with no view to re-register.
        self.add_dynamic_items(*self._dynamic_items)

    async def on_connect(self) -> None:
        self.connected.set()
