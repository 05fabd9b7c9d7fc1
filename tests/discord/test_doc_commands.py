"""The Discord tutorial's question, run as written against the Discord emulator."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.conftest import StartService
from tests.docs.commands import doc_command
from tests.test_doc_commands import shell

from .conftest import World, check_discord_was_never_let_down, discord_env

CHANNEL_ID = 123456789012345678


async def test_the_discord_tutorials_first_question(
    world: World, start_service: StartService, tmp_path: Path
) -> None:
    emulator = world.emulator
    emulator.add_text_channel(world.guild.id, "general", channel_id=CHANNEL_ID)
    service = await start_service(**discord_env(emulator))
    command = doc_command("docs/tutorials/discord.md", "askbridge ask --target discord:")
    ask = await shell(command, tmp_path, ASKBRIDGE_URL=service.url)
    message = await emulator.wait_for_message(CHANNEL_ID, timeout=30)
    await emulator.click(message, world.alice.id, "PostgreSQL")
    out, err = await asyncio.wait_for(ask.communicate(), 30)
    assert ask.returncode == 0, err.decode()
    assert json.loads(out) == {"Database": "PostgreSQL"}
    await check_discord_was_never_let_down(emulator)
