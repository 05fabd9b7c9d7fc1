"""What Discord answers to an edit or a reminder, as the broker's retries read it: Discord
busy or down (an outage, which the updates waiting on Discord wait out), or Discord refusing
that one message (`MessageRefused`: Discord is up)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import discord
import pytest

from askbridge.adapters.discord.surface import DiscordSurface
from askbridge.core.errors import MessageRefused, SurfaceUnavailable
from askbridge.core.models import Request, Status, Target
from askbridge.core.questions import parse_questions
from tests.conftest import DEPLOY
from tests.emulators.discord.dpy import discord_py_pointed_at

from .conftest import World

EDIT = "/channels/{channel_id}/messages/{message_id}"
SEND = "/channels/{channel_id}/messages"


@pytest.fixture
async def surface(world: World) -> AsyncIterator[DiscordSurface]:
    """The surface on a discord.py client logged in to the emulator (REST only)."""
    with discord_py_pointed_at(world.emulator):
        client = discord.Client(intents=discord.Intents.none())
        await client.login(world.emulator.bot_token)
        try:
            yield DiscordSurface(client)
        finally:
            await client.close()


async def test_discord_refusing_the_message_is_told_apart_from_discord_being_down(
    world: World, surface: DiscordSurface
) -> None:
    emulator = world.emulator
    request = Request(
        request_id="ask_r",
        questions=parse_questions([DEPLOY]),
        targets=(Target(platform="discord", channel=str(world.channel.id)),),
        created_at=datetime.now(UTC),
    )
    message = await surface.post(request, request.targets[0])

    emulator.fail_next("PATCH", EDIT, status=503)
    with pytest.raises(discord.DiscordServerError):
        await surface.update(request, message)
    emulator.fail_next("POST", SEND, status=503)
    with pytest.raises(SurfaceUnavailable):
        await surface.remind(request, message)

    emulator.refuse_next("PATCH", EDIT)
    with pytest.raises(MessageRefused, match="403 Missing Access"):
        await surface.update(request, message)
    emulator.refuse_next("POST", SEND, code=50013, message="Missing Permissions")
    with pytest.raises(MessageRefused, match="403 Missing Permissions"):
        await surface.remind(request, message)


@pytest.mark.parametrize("locked", [False, True], ids=["archived", "archived-and-locked"])
async def test_an_edit_in_an_archived_thread_reopens_it_unless_it_is_locked(
    world: World, surface: DiscordSurface, locked: bool
) -> None:
    emulator = world.emulator
    thread = emulator.add_thread(world.channel.id, "release-42")
    request = Request(
        request_id="ask_r",
        questions=parse_questions([DEPLOY]),
        targets=(Target(platform="discord", channel=str(thread.id)),),
        created_at=datetime.now(UTC),
    )
    message = await surface.post(request, request.targets[0])
    emulator.archive_thread(thread.id, locked=locked)
    withdrawn = request.model_copy(update={"status": Status.WITHDRAWN})
    if locked:
        with pytest.raises(MessageRefused, match="archived and locked, and only a moderator"):
            await surface.update(withdrawn, message)
        assert thread.archived
        assert emulator.message(int(message.message_id)).version == 0
    else:
        await surface.update(withdrawn, message)
        assert not thread.archived
        assert "Withdrawn" in emulator.message(int(message.message_id)).text
