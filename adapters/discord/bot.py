"""The discord.py client askbridge runs: minimal intents, no pings, and every click and
submitted form handed to the broker."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import aiohttp
import discord

from askbridge.adapters.discord import handlers, pointing
from askbridge.adapters.discord.ids import (
    DYNAMIC_ITEMS,
    BadCustomId,
    ClickHandler,
    CustomId,
    unpack,
)
from askbridge.core.broker import Broker
from askbridge.core.intents import Action


class BridgeBot(discord.Client, ClickHandler):
    """A plain `discord.Client` with minimal intents; it hands every click and every submitted
    form to the broker."""

    def __init__(
        self,
        broker: Broker,
        http_trace: aiohttp.TraceConfig,
        *,
        api_url: str | None = None,
        gateway_url: str | None = None,
    ) -> None:
        # Read by _get_state(), which discord.py calls from its __init__.
        self._api_url, self._gateway_url = api_url, gateway_url
        intents = discord.Intents.none()
        # Clicks (INTERACTION_CREATE) need no intent at all; `guilds` keeps the guild and role
        # caches filled, for checking roles (a click's member carries its role ids in any case).
        intents.guilds = True
        # Nothing askbridge sends pings anyone unless it says so (only reminders do).
        super().__init__(
            intents=intents,
            max_messages=None,
            chunk_guilds_at_startup=False,
            allowed_mentions=discord.AllowedMentions.none(),
            http_trace=http_trace,
        )
        self.broker = broker
        self.kept = handlers.Kept()
        """What people gave typed forms that refused it, to open them again as they left it."""
        self.connected = asyncio.Event()
        """Set while the gateway session is up (from READY or RESUMED to a disconnect): then
        clicks arrive."""

    def _get_state(self, **options: Any) -> Any:
        # discord.py's one hook between making its HTTP client and handing it to everything
        # else: this client's own URLs, if any, and its gateway sockets (see `pointing`).
        self.http = self.sockets = pointing.PointedHTTP(self.http, self._api_url, self._gateway_url)
        return super()._get_state(**options)

    async def setup_hook(self) -> None:
        # Runs once, inside login(), before the gateway connects: every message askbridge ever
        # posted is served from here on, with no view to re-register.
        self.add_dynamic_items(*DYNAMIC_ITEMS)

    def dispatch(self, event: str, /, *args: Any, **kwargs: Any) -> None:
        # Kept in step here, before any listener runs, so that readiness never lags.
        if event in ("connect", "resumed"):
            self.connected.set()
        elif event == "disconnect":
            self.connected.clear()
        super().dispatch(event, *args, **kwargs)

    @property
    def state(self) -> Any:
        """discord.py's connection state: what reads an interaction that came over HTTP."""
        return self._connection

    async def handle_click(
        self, interaction: discord.Interaction[Any], custom_id: CustomId, values: Sequence[str]
    ) -> None:
        """A click that came over the gateway (from the DynamicItems)."""
        await self.on_click(interaction, handlers.Callback(interaction), custom_id, values)

    async def on_click(
        self,
        interaction: discord.Interaction[Any],
        first: handlers.First,
        custom_id: CustomId,
        values: Sequence[str],
    ) -> None:
        if custom_id.action in (Action.WORDS, Action.CHANGE):
            await handlers.open_form(self.broker, interaction, first, custom_id)
        elif custom_id.action is Action.FILL:
            await handlers.open_fill(self.broker, interaction, first, custom_id, self.kept)
        else:
            await handlers.respond(self.broker, interaction, first, custom_id, values)

    async def on_form(
        self, interaction: discord.Interaction[Any], first: handlers.First, custom_id: CustomId
    ) -> None:
        if custom_id.action is Action.FILL:
            await handlers.fill_submitted(self.broker, interaction, first, custom_id, self.kept)
        else:
            await handlers.submitted(self.broker, interaction, first, custom_id)

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        """Every interaction comes here as well; askbridge takes its forms' submissions, which
        discord.py would only route to a modal held in memory (see `forms`)."""
        if interaction.type is not discord.InteractionType.modal_submit:
            return
        data: dict[str, Any] = dict(interaction.data or {})
        try:
            custom_id = unpack(str(data.get("custom_id")))
        except BadCustomId:
            return  # not askbridge's
        if custom_id.action in (Action.FORM, Action.FILL):
            await self.on_form(interaction, handlers.Callback(interaction), custom_id)
