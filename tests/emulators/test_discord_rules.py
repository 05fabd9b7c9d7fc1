"""The Discord emulator refuses what Discord refuses in layouts and allowed_mentions, and knows
whom each message pings and which markdown a text renders."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import discord
import pytest

from .discord import (
    DiscordEmulator,
    Message,
    Pings,
    User,
    live_markdown,
    mentioned_in,
)
from .discord.dpy import discord_py_pointed_at

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


def row(*components: dict[str, Any]) -> dict[str, Any]:
    return {"type": 1, "components": list(components)}


def link_button(url: str) -> dict[str, Any]:
    return {"type": 2, "style": 5, "label": "Open", "url": url}


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
    "parse users and a users list": (
        {"content": "hi", "allowed_mentions": {"parse": ["users"], "users": ["1"]}},
        ("allowed_mentions",),
        "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE",
    ),
    "parse roles and a roles list": (
        {"content": "hi", "allowed_mentions": {"parse": ["roles"], "roles": [2]}},
        ("allowed_mentions",),
        "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE",
    ),
    "unknown parse value": (
        {"content": "hi", "allowed_mentions": {"parse": ["users", "channels"]}},
        ("allowed_mentions", "parse", "1"),
        "BASE_TYPE_CHOICES",
    ),
    "101 users": (
        {"content": "hi", "allowed_mentions": {"users": [str(i) for i in range(1, 102)]}},
        ("allowed_mentions", "users"),
        "BASE_TYPE_MAX_LENGTH",
    ),
    "a role that is no snowflake": (
        {"content": "hi", "allowed_mentions": {"roles": ["admins"]}},
        ("allowed_mentions", "roles", "0"),
        "NUMBER_TYPE_COERCE",
    ),
    "a link button's url over 512 characters": (
        {"components": [row(link_button("https://example.com/" + "a" * 493))]},
        ("components", "0", "components", "0", "url"),
        "BASE_TYPE_MAX_LENGTH",
    ),
    "a url on a button that is not a link": (
        {"components": [row({**link_button("https://example.com"), "style": 1, "custom_id": "a"})]},
        ("components", "0", "components", "0", "url"),
        "BUTTON_COMPONENT_INVALID",
    ),
    "allowed_mentions that is no object": (
        {"content": "hi", "allowed_mentions": ["users"]},
        ("allowed_mentions",),
        "DICT_TYPE_CONVERT",
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


@pytest.mark.parametrize("content", ["", " ", "\n", " \n\t "])
async def test_content_of_only_whitespace_is_an_empty_message(place: Place, content: str) -> None:
    status, answer = await place.post({"content": content})
    assert (status, answer) == (400, {"code": 50006, "message": "Cannot send an empty message"})
    message = await place.posted({"content": "hi"})
    path = f"/channels/{place.channel_id}/messages/{message.id}"
    status, answer = await place.call("PATCH", path, {"content": content})
    assert (status, answer["code"]) == (400, 50006)
    assert place.emulator.message(message.id).content == "hi"


async def test_a_link_button_of_512_characters_is_taken(place: Place) -> None:
    url = "https://example.com/" + "a" * 492
    message = await place.posted({"components": [row(link_button(url))]})
    assert message.payload["components"][0]["components"][0]["url"] == url


async def test_an_interaction_token_is_refused_after_fifteen_minutes() -> None:
    async with DiscordEmulator(token_lifetime=0.0) as emulator, aiohttp.ClientSession() as http:
        guild = emulator.add_guild("g")
        channel = emulator.add_text_channel(guild.id, "c")
        alice = emulator.add_user("alice")
        emulator.add_member(guild.id, alice.id)
        place = Place(emulator, http, channel.id, alice, alice, 0)
        button = {"type": 2, "style": 1, "label": "Yes", "custom_id": "yes"}
        question = await place.posted({"content": "Ship?", "components": [row(button)]})
        click = await emulator.click(question, alice.id, "Yes")
        callback = f"/interactions/{click.id}/{click.token}/callback"
        assert (await place.call("POST", callback, {"type": 6}))[0] == 204
        webhook = f"/webhooks/{emulator.application_id}/{click.token}"
        expired = (401, {"code": 50027, "message": "Invalid Webhook Token"})
        assert await place.call("POST", webhook, {"content": "late"}) == expired
        assert await place.call("PATCH", f"{webhook}/messages/@original", {"content": "x"}) == (
            expired
        )
        assert emulator.message(question.id).content == "Ship?"


async def test_edits_are_checked_too(place: Place) -> None:
    message = await place.posted({"content": "hi"})
    path = f"/channels/{place.channel_id}/messages/{message.id}"
    exclusive = {"allowed_mentions": {"parse": ["users"], "users": [place.alice.id]}}
    status, answer = await place.call("PATCH", path, {"content": "hi again", **exclusive})
    assert status == 400
    assert "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE" in str(answer["errors"])
    assert place.emulator.message(message.id).content == "hi"


def test_what_discord_accepts_passes() -> None:
    from .discord import validate_message

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
    allowed = {"parse": ["everyone"], "users": ["1"], "roles": [], "replied_user": True}
    assert validate_message({"content": "x", "allowed_mentions": allowed}) is None
    assert validate_message({"content": "x", "allowed_mentions": None}) is None


# ---- whom a message pings ----------------------------------------------------------------------


async def test_without_allowed_mentions_everything_in_the_text_pings(place: Place) -> None:
    alice, role = place.alice.id, place.role_id
    message = await place.posted({"content": f"@everyone <@{alice}> <@&{role}> <@!{place.bob.id}>"})
    assert message.pings == Pings(
        users=frozenset({alice, place.bob.id}), roles=frozenset({role}), everyone=True
    )
    assert message.payload["mention_everyone"] is True
    assert sorted(int(u["id"]) for u in message.payload["mentions"]) == sorted(
        [alice, place.bob.id]
    )
    assert message.payload["mention_roles"] == [str(role)]


async def test_allowed_mentions_decide_who_is_pinged(place: Place) -> None:
    alice, bob, role = place.alice.id, place.bob.id, place.role_id
    content = f"@here <@{alice}> <@{bob}> <@&{role}>"
    nobody = await place.posted({"content": content, "allowed_mentions": {"parse": []}})
    assert nobody.pings.nobody
    assert nobody.pings.users == set()
    assert nobody.payload["mention_everyone"] is False
    assert nobody.payload["mentions"] == []

    listed = {"parse": ["everyone"], "users": [str(bob)], "roles": [role]}
    some = await place.posted({"content": content, "allowed_mentions": listed})
    assert some.pings == Pings(users=frozenset({bob}), roles=frozenset({role}), here=True)
    assert some.pings.mention_everyone

    users_only = await place.posted({"content": content, "allowed_mentions": {"parse": ["users"]}})
    assert users_only.pings == Pings(users=frozenset({alice, bob}))


async def test_text_displays_ping_and_escapes_and_code_do_not(place: Place) -> None:
    alice, bob = place.alice.id, place.bob.id
    body = layout(
        {
            "type": 17,
            "components": [
                text(f"Asked by <@{alice}>"),
                text(f"\\<@{bob}> \\@everyone `@here` ```\n<@&{place.role_id}>\n```"),
            ],
        }
    )
    message = await place.posted(body)
    assert message.pings == Pings(users=frozenset({alice}))


async def test_an_edit_recomputes_pings_with_its_own_allowed_mentions(place: Place) -> None:
    alice = place.alice.id
    message = await place.posted({"content": "hi", "allowed_mentions": {"parse": []}})
    path = f"/channels/{place.channel_id}/messages/{message.id}"
    await place.call("PATCH", path, {"content": f"hi <@{alice}>"})
    assert place.emulator.message(message.id).pings.users == {alice}
    await place.call("PATCH", path, {"flags": 0})
    assert place.emulator.message(message.id).pings.users == {alice}
    await place.call("PATCH", path, {"content": f"bye <@{alice}>", "allowed_mentions": {}})
    assert place.emulator.message(message.id).pings.nobody


async def test_replies_ping_the_replied_author_when_allowed(place: Place) -> None:
    # The emulator only holds the bot's messages; make this one alice's, as if she wrote it.
    original = await place.posted({"content": "question"})
    original.payload["author"]["id"] = str(place.alice.id)
    reference = {"message_id": str(original.id), "channel_id": str(place.channel_id)}
    quiet = {"parse": [], "replied_user": False}
    reply = await place.posted(
        {"content": "noted", "message_reference": reference, "allowed_mentions": quiet}
    )
    assert reply.pings.nobody
    loud = await place.posted({"content": "noted", "message_reference": reference})
    assert loud.pings.users == {place.alice.id}


async def test_interaction_responses_and_followups_read_allowed_mentions(place: Place) -> None:
    button = {"type": 2, "style": 1, "label": "Go", "custom_id": "go"}
    question = await place.posted(
        {"content": "Q", "components": [{"type": 1, "components": [button]}]}
    )
    alice = place.alice.id
    handle = await place.emulator.click(question, alice, "Go")
    callback = f"/interactions/{handle.id}/{handle.token}/callback"
    reply = {"content": f"<@{alice}> @everyone", "allowed_mentions": {"users": [alice]}}
    status, _ = await place.call("POST", callback, {"type": 4, "data": reply})
    assert status == 204
    response = await handle.response()
    assert response.type == 4
    assert handle.original is not None
    assert handle.original.pings == Pings(users=frozenset({alice}))

    webhook = f"/webhooks/{place.emulator.application_id}/{handle.token}?wait=true"
    status, followup = await place.call("POST", webhook, {"content": "@everyone"})
    assert status == 200
    assert place.emulator.message(int(followup["id"])).pings.everyone
    bad = {"content": "x", "allowed_mentions": {"parse": ["everyone", "nobody"]}}
    status, answer = await place.call("POST", webhook, bad)
    assert (status, answer["code"]) == (400, 50035)


async def test_discord_py_allowed_mentions_reach_the_emulator(place: Place) -> None:
    emulator = place.emulator
    intents = discord.Intents.none()
    intents.guilds = True
    client = discord.Client(intents=intents, guild_ready_timeout=0.05)
    ready = asyncio.Event()
    client.event(_set_on_ready(ready))
    with discord_py_pointed_at(emulator):
        runner = asyncio.create_task(client.start(TOKEN), name="test-mentions-client")
        try:
            async with asyncio.timeout(5):
                await ready.wait()
            channel = client.get_partial_messageable(place.channel_id)
            loud = await channel.send(f"@everyone <@{place.alice.id}>")
            quiet = await channel.send(
                f"@everyone <@{place.alice.id}>", allowed_mentions=discord.AllowedMentions.none()
            )
            only_alice = await channel.send(
                f"<@{place.alice.id}> <@{place.bob.id}>",
                allowed_mentions=discord.AllowedMentions(users=[discord.Object(place.alice.id)]),
            )
        finally:
            await client.close()
            await runner
    assert emulator.message(loud.id).pings.everyone
    assert loud.mention_everyone
    assert emulator.message(quiet.id).pings.nobody
    assert not quiet.mention_everyone
    assert emulator.message(only_alice.id).pings.users == {place.alice.id}
    assert [u.id for u in only_alice.mentions] == [place.alice.id]


async def test_everything_sent_can_be_checked_at_once(place: Place) -> None:
    first = await place.posted({"content": "quiet"})
    path = f"/channels/{place.channel_id}/messages/{first.id}"
    await place.call("PATCH", path, {"content": "@everyone"})
    await place.call("DELETE", path, None)
    await place.posted({"content": f"<@{place.alice.id}>", "allowed_mentions": {"parse": []}})
    sent = place.emulator.sent()
    assert [m.content for m in sent] == ["quiet", "@everyone", f"<@{place.alice.id}>"]
    assert [m.pings.nobody for m in sent] == [True, False, True]


def _set_on_ready(ready: asyncio.Event) -> Any:
    async def on_ready() -> None:
        ready.set()

    return on_ready


# ---- mentions and markdown in one text ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "users", "roles", "everyone", "here"),
    [
        ("<@1> <@!2> <@&3> @everyone @here", {1, 2}, {3}, True, True),
        ("\\<@1> \\<@&3> \\@everyone \\@here", set(), set(), False, False),
        ("`<@1>` ``@everyone`` ```\n<@&3>\n```", set(), set(), False, False),
        (
            discord.utils.escape_mentions("<@123456789012345678> @everyone"),
            set(),
            set(),
            False,
            False,
        ),
        ("**<@1>** [<@2>](https://e.example)", {1, 2}, set(), False, False),
        ("@\\everyone @\u200bhere", set(), set(), False, False),
    ],
)
def test_mentions_in_a_text(
    text: str, users: set[int], roles: set[int], everyone: bool, here: bool
) -> None:
    found = mentioned_in(text)
    assert (set(found.users), set(found.roles)) == (users, roles)
    assert (found.everyone, found.here) == (everyone, here)


HOSTILE = [
    "[x](https://e.example)",
    "[x](<https://e.example>)",
    "**bold** *it* __under__ _it_ ~~gone~~ ||secret||",
    "```\nopen fence",
    "`code` and ``more``",
    "# Heading\n-# subtext\n> quote\n>>> block",
    "a_b_c 2*3*4 snake_case_name",
    "https://e.example/_x_/*y*",
    "\\",
    "\\\\*x*",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_escape_markdown_output_is_inert(text: str) -> None:
    escaped = discord.utils.escape_markdown(text)
    assert not live_markdown(escaped).live, (escaped, live_markdown(escaped))


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        ("see [x](https://e.example)", "masked_links", ("[x](https://e.example)",)),
        ("[x](<https://e.example/a>)", "masked_links", ("[x](<https://e.example/a>)",)),
        ("**bold**", "emphasis", ("**bold**",)),
        ("*it*", "emphasis", ("*it*",)),
        ("a _it_ b", "emphasis", ("_it_",)),
        ("__u__", "emphasis", ("__u__",)),
        ("~~s~~", "emphasis", ("~~s~~",)),
        ("||spoiler||", "emphasis", ("||spoiler||",)),
        ("`code`", "code", ("`code`",)),
        ("```py\nx\n```", "code", ("```py\nx\n```",)),
        ("# big", "line_markup", ("# big",)),
        ("x\n-# small", "line_markup", ("-# small",)),
        ("> quoted", "line_markup", ("> quoted",)),
        ("one ``` fence", "open_fence", True),
        ("\\[x](https://e.example)", "masked_links", ()),
        ("*\\*a*", "emphasis", ("*…a*",)),
        ("* a *", "emphasis", ()),
        ("snake_case_name", "emphasis", ()),
        ("https://e.example/_x_", "emphasis", ()),
        ("\\# not a heading", "line_markup", ()),
    ],
)
def test_live_markdown(text: str, field: str, expected: object) -> None:
    assert getattr(live_markdown(text), field) == expected


def test_plain_words_are_not_markdown() -> None:
    assert not live_markdown("plain words, 2 * 3, a_b, 1 ~ 2, a | b, <@1>").live
