"""The Discord emulator refuses the layouts Discord refuses."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest

from .discord import DiscordEmulator, Message, User, validate_message

V2 = 1 << 15
TOKEN = "test-bot-token"


@dataclass
class Place:
    emulator: DiscordEmulator
    http: aiohttp.ClientSession
    channel_id: int
    alice: User
    bob: User
    role_id: int

    async def call(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        """A REST call with the bot's token; the status and the JSON answer."""
        headers = {"Authorization": f"Bot {TOKEN}"}
        url = self.emulator.api_url + path
        async with self.http.request(method, url, json=body, headers=headers) as response:
            return response.status, await response.json() if response.status != 204 else None

    async def post(self, body: dict[str, Any]) -> tuple[int, Any]:
        return await self.call("POST", f"/channels/{self.channel_id}/messages", body)

    async def posted(self, body: dict[str, Any]) -> Message:
        status, answer = await self.post(body)
        assert status == 200, answer
        return self.emulator.message(int(answer["id"]))


@pytest.fixture
async def place(discord_emulator: DiscordEmulator) -> AsyncIterator[Place]:
    guild = discord_emulator.add_guild("askbridge-test")
    role = discord_emulator.add_role(guild.id, "answerers")
    channel = discord_emulator.add_text_channel(guild.id, "questions")
    alice = discord_emulator.add_user("alice")
    bob = discord_emulator.add_user("bob")
    for user in (alice, bob):
        discord_emulator.add_member(guild.id, user.id, [role.id])
    async with aiohttp.ClientSession() as http:
        yield Place(discord_emulator, http, channel.id, alice, bob, role.id)


def text(content: str, **extra: Any) -> dict[str, Any]:
    return {"type": 10, "content": content, **extra}


def layout(*components: dict[str, Any]) -> dict[str, Any]:
    return {"flags": V2, "components": list(components)}


# ---- what Discord refuses ----------------------------------------------------------------------

PROBES: dict[str, tuple[dict[str, Any], tuple[str, ...], str]] = {
    "accent_color above 0xFFFFFF": (
        layout({"type": 17, "accent_color": 0x1000000, "components": [text("x")]}),
        ("components", "0", "accent_color"),
        "NUMBER_TYPE_MAX",
    ),
    "negative accent_color": (
        layout({"type": 17, "accent_color": -1, "components": [text("x")]}),
        ("components", "0", "accent_color"),
        "NUMBER_TYPE_MIN",
    ),
    "separator spacing 3": (
        layout(text("a"), {"type": 14, "spacing": 3}, text("b")),
        ("components", "1", "spacing"),
        "BASE_TYPE_CHOICES",
    ),
    "separator spacing 0 in a container": (
        layout({"type": 17, "components": [text("a"), {"type": 14, "spacing": 0}]}),
        ("components", "0", "components", "1", "spacing"),
        "BASE_TYPE_CHOICES",
    ),
    "duplicate component ids": (
        layout(text("a", id=7), {"type": 17, "components": [text("b", id=7)]}),
        ("components", "1", "components", "0", "id"),
        "COMPONENT_ID_DUPLICATED",
    ),
}


@pytest.mark.parametrize("case", sorted(PROBES))
async def test_the_emulator_refuses_what_discord_refuses(place: Place, case: str) -> None:
    body, path, code = PROBES[case]
    status, answer = await place.post(body)
    assert status == 400
    assert (answer["code"], answer["message"]) == (50035, "Invalid Form Body")
    node = answer["errors"]
    for part in path:
        node = node[part]
    assert [e["code"] for e in node["_errors"]] == [code], answer
    assert place.emulator.messages(place.channel_id) == []
    assert place.emulator.rejections[0].where == "POST /channels/{channel_id}/messages"


def test_what_discord_accepts_passes() -> None:
    accepted = layout(
        {
            "type": 17,
            "accent_color": 0xFFFFFF,
            "components": [text("a", id=1), {"type": 14, "spacing": 2, "divider": False}],
        },
        text("b", id=0),
        text("c", id=0),
    )
    assert validate_message(accepted) is None
