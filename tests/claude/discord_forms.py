"""The expense form of `form_mcp.py`, filled in by a person in Discord (the strict emulator,
askbridge's real discord.py client): Fill in… opens the modal, Decline and Cancel end it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from askbridge.core.models import Request
from tests.conftest import settings_for
from tests.discord.conftest import check_discord_was_never_let_down, discord_env
from tests.emulators.discord import DiscordEmulator, InteractionHandle, Message, User

FILLED: dict[str, str | list[str]] = {
    "Your email": "ada@example.com",
    "Amount (EUR)": "7",
    "Urgent": ["Yes"],
    "Category": ["Meals"],
    "Tags": ["q3", "client"],
}
"""What a person types and picks in the modal, by each field's label."""


@dataclass
class OnDiscord:
    service: Service
    emulator: DiscordEmulator
    ada: User

    def message(self, request: Request) -> Message:
        [posted] = [m for m in request.messages if m.platform == "discord"]
        return self.emulator.message(int(posted.message_id))

    async def fill_in(
        self, request: Request, values: dict[str, str | list[str]]
    ) -> InteractionHandle:
        """Fill in… then submit the modal with `values`; the submission's interaction."""
        opened = await self.emulator.click(self.message(request), self.ada.id, "Fill in…")
        await opened.modal()
        submitted = await self.emulator.submit_modal(opened, values)
        await submitted.response()
        return submitted

    async def press(self, request: Request, button: str) -> None:
        """Decline, Done, or Cancel (which Discord has confirmed first)."""
        clicked = await self.emulator.click(self.message(request), self.ada.id, button)
        if button == "Cancel":
            sure = await clicked.wait_for_ephemeral("Cancel")
            clicked = await self.emulator.click(sure, self.ada.id, "Cancel question")
        await clicked.response()


@asynccontextmanager
async def on_discord(folder: Path, clock: ManualClock) -> AsyncIterator[OnDiscord]:
    """askbridge (its database in `folder`) asking in a Discord channel where Ada is; it stops
    before Discord goes, so that it does not wait for Discord to come back."""
    async with DiscordEmulator(bot_username="askbridge-bot") as emulator:
        guild = emulator.add_guild("team")
        channel = emulator.add_text_channel(guild.id, "questions")
        ada = emulator.add_user("ada", global_name="Ada")
        emulator.add_member(guild.id, ada.id)
        settings = settings_for(
            folder, **discord_env(emulator), default_target=f"discord:{channel.id}"
        )
        service = Service(settings, clock=clock)
        await service.start()
        try:
            yield OnDiscord(service, emulator, ada)
            await check_discord_was_never_let_down(emulator)
        finally:
            await service.stop()
