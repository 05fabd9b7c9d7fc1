"""The Discord emulator, proven against an unmodified discord.py client."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Self

import aiohttp
import discord
import pytest
from discord import ui

from .discord import (
    ComponentNotFound,
    DiscordEmulator,
    InteractionFailed,
    Message,
    NothingSent,
    User,
    WaitTimeout,
    snowflake_ms,
    validate_message,
)
from .discord.dpy import connected, discord_py_pointed_at

TOKEN = "test-bot-token"


# --- a tiny bot built only from discord.py's public API --------------------------------


class Bot(discord.Client):
    """Minimal intents plus guilds, DynamicItems registered in setup_hook."""

    def __init__(self, *, guilds_intent: bool = True) -> None:
        intents = discord.Intents.none()
        intents.guilds = guilds_intent
        super().__init__(intents=intents, guild_ready_timeout=0.05)
        self.ready = asyncio.Event()
        self.handled: asyncio.Queue[tuple[str, int, list[str]]] = asyncio.Queue()
        self.errors: asyncio.Queue[BaseException] = asyncio.Queue()
        self.release = asyncio.Event()
        self.clickers: list[discord.User | discord.Member] = []

    async def setup_hook(self) -> None:
        self.add_dynamic_items(Answer, Pick)

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """discord.py waits 5 s before every IDENTIFY but the first; tests need not."""

    async def on_ready(self) -> None:
        self.ready.set()


async def respond(interaction: discord.Interaction[discord.Client], mode: str, text: str) -> None:
    """What the bot does with a click depends on the mode written into the custom_id."""
    bot = interaction.client
    assert isinstance(bot, Bot)
    data: dict[str, Any] = dict(interaction.data or {})
    bot.clickers.append(interaction.user)
    await bot.handled.put((str(data.get("custom_id")), interaction.user.id, data.get("values", [])))
    try:
        if mode == "eph":
            await interaction.response.send_message(f"you chose {text}", ephemeral=True)
        elif mode == "defer":
            await interaction.response.defer()
            await interaction.edit_original_response(content=f"answered: {text}", view=None)
        elif mode == "edit":
            await interaction.response.edit_message(content=f"answered: {text}", view=None)
        elif mode == "think":
            await interaction.response.defer(ephemeral=True, thinking=True)
            await interaction.followup.send(f"done: {text}", ephemeral=True)
        elif mode == "huge":
            await interaction.response.send_message("x" * 2001, ephemeral=True)
        elif mode == "late":
            await bot.release.wait()
            await interaction.response.send_message("too late", ephemeral=True)
    except Exception as exc:
        await bot.errors.put(exc)
        raise


class Answer(ui.DynamicItem[ui.Button[ui.View]], template=r"t:(?P<mode>[a-z]+):(?P<option>\d+)"):
    def __init__(self, mode: str, option: int, label: str) -> None:
        super().__init__(ui.Button(label=label, custom_id=f"t:{mode}:{option}"))
        self.mode = mode
        self.option = option

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[discord.Client],
        item: ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> Self:
        label = item.label if isinstance(item, ui.Button) else None
        return cls(match["mode"], int(match["option"]), label or "")

    async def callback(self, interaction: discord.Interaction[discord.Client]) -> None:
        await respond(interaction, self.mode, f"option {self.option}")


class Pick(ui.DynamicItem[ui.Select[ui.View]], template=r"pick:(?P<mode>[a-z]+)"):
    def __init__(self, mode: str, options: list[discord.SelectOption], max_values: int) -> None:
        select: ui.Select[ui.View] = ui.Select(
            custom_id=f"pick:{mode}",
            placeholder="Pick some",
            options=options,
            min_values=1,
            max_values=max_values,
        )
        super().__init__(select)
        self.mode = mode

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[discord.Client],
        item: ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> Self:
        assert isinstance(item, ui.Select)
        return cls(match["mode"], list(item.options), item.max_values)

    async def callback(self, interaction: discord.Interaction[discord.Client]) -> None:
        await respond(interaction, self.mode, "+".join(self.item.values))


def question_view(mode: str = "eph") -> ui.View:
    view = ui.View(timeout=None)
    view.add_item(Answer(mode, 1, "Yes"))
    view.add_item(Answer(mode, 2, "No"))
    options = [
        discord.SelectOption(label="Apple", value="a", description="red"),
        discord.SelectOption(label="Banana", value="b"),
        discord.SelectOption(label="Cherry", value="c"),
    ]
    view.add_item(Pick(mode, options, max_values=2))
    return view


@asynccontextmanager
async def running_bot(token: str = TOKEN, *, guilds_intent: bool = True) -> AsyncIterator[Bot]:
    bot = Bot(guilds_intent=guilds_intent)
    async with connected(bot, bot.ready, token):
        yield bot


@dataclass
class World:
    emulator: DiscordEmulator
    guild_id: int
    channel_id: int
    alice: User
    bob: User
    carol: User


@pytest.fixture
def world(discord_py_redirected: DiscordEmulator) -> World:
    emulator = discord_py_redirected
    guild = emulator.add_guild("askbridge-test")
    role = emulator.add_role(guild.id, "answerers")
    channel = emulator.add_text_channel(guild.id, "questions")
    alice = emulator.add_user("alice", global_name="Alice")
    bob = emulator.add_user("bob")
    carol = emulator.add_user("carol")
    emulator.add_member(guild.id, alice.id, [role.id])
    emulator.add_member(guild.id, bob.id)
    return World(emulator, guild.id, channel.id, alice, bob, carol)


async def post_question(bot: Bot, world: World, mode: str = "eph") -> Message:
    channel = bot.get_channel(world.channel_id)
    assert isinstance(channel, discord.TextChannel)
    sent = await channel.send("Which fruit?", view=question_view(mode))
    return world.emulator.message(sent.id)


# --- login and the gateway ---------------------------------------------------------------


async def test_login_and_ready_fill_discord_py_caches(world: World) -> None:
    async with running_bot() as bot:
        assert bot.user is not None
        assert bot.user.id == world.emulator.bot.id
        assert bot.application_id == world.emulator.application_id
        guild = bot.get_guild(world.guild_id)
        assert guild is not None
        assert guild.name == "askbridge-test"
        assert [r.name for r in guild.roles] == ["@everyone", "answerers"]
        assert isinstance(guild.get_channel(world.channel_id), discord.TextChannel)
    stats = world.emulator.gateway_stats
    assert (stats.connections, stats.identifies, stats.resumes) == (1, 1, 0)
    assert stats.heartbeats >= 1
    routes = [(r.method, r.route) for r in world.emulator.requests]
    assert routes[:2] == [("GET", "/users/@me"), ("GET", "/oauth2/applications/@me")]


async def test_wrong_token_is_refused_like_discord(world: World) -> None:
    with pytest.raises(discord.LoginFailure):
        async with running_bot(token="not-the-token"):
            pass
    me = world.emulator.requests_to("GET", "/users/@me")
    assert [r.status for r in me] == [401]


async def test_json_content_type_is_exact_and_errors_have_discord_shape(
    discord_emulator: DiscordEmulator,
) -> None:
    api = discord_emulator.api_url
    async with aiohttp.ClientSession() as http:
        async with http.get(api + "/users/@me", headers={"Authorization": "Bot nope"}) as r:
            assert r.status == 401
            assert r.headers["Content-Type"] == "application/json"
            assert await r.json() == {"message": "401: Unauthorized", "code": 0}
        auth = {"Authorization": f"Bot {TOKEN}"}
        async with http.get(api + "/users/@me", headers=auth) as r:
            assert r.headers["Content-Type"] == "application/json"
            assert (await r.json())["bot"] is True
        async with http.get(api + "/no/such/route", headers=auth) as r:
            assert r.status == 404
            assert (await r.json())["code"] == 0


# --- clicks reach DynamicItems --------------------------------------------------------------


async def test_click_reaches_dynamic_item_and_ephemeral_reply_arrives(world: World) -> None:
    emulator = world.emulator
    async with running_bot() as bot:
        question = await post_question(bot, world)
        assert question.is_interactive
        assert "Which fruit?" in question.text
        assert "[Yes]" in question.text
        assert "- Apple: red" in question.text

        handle = await emulator.click(question, world.alice.id, "Yes")
        callback = await handle.response()
        assert callback.type == 4
        assert callback.ephemeral
        assert await bot.handled.get() == ("t:eph:1", world.alice.id, [])
        member = bot.clickers[-1]
        assert isinstance(member, discord.Member)
        assert [r.name for r in member.roles] == ["@everyone", "answerers"]
        reply = await emulator.wait_for_ephemeral(world.alice.id, contains="you chose option 1")
        assert reply.interaction_id == handle.id
        assert emulator.ephemerals(world.bob.id) == []
        assert emulator.messages(world.channel_id) == [question]
    # the click carried a real snowflake: its time is now-ish
    assert abs(snowflake_ms(handle.id) - snowflake_ms(question.id)) < 60_000
    assert "member" in handle.payload
    assert "user" not in handle.payload
    assert handle.payload["message"]["components"] == question.components
    assert emulator.rejections == []


async def test_choose_in_select_sends_values(world: World) -> None:
    async with running_bot() as bot:
        question = await post_question(bot, world)
        handle = await world.emulator.choose(question, world.bob.id, ["Apple", "Cherry"])
        await handle.response()
        assert await bot.handled.get() == ("pick:eph", world.bob.id, ["a", "c"])
        await handle.wait_for_ephemeral("you chose a+c")


async def test_picking_again_what_a_select_shows_sends_nothing_until_the_message_changes(
    world: World,
) -> None:
    async with running_bot() as bot:
        question = await post_question(bot, world)
        await (await world.emulator.choose(question, world.bob.id, ["Apple", "Cherry"])).response()
        with pytest.raises(NothingSent, match="sends nothing when the same options"):
            await world.emulator.choose(question, world.bob.id, ["Cherry", "Apple"])
        # Another person's select, and another pick, are their own.
        await (
            await world.emulator.choose(question, world.alice.id, ["Apple", "Cherry"])
        ).response()
        await (await world.emulator.choose(question, world.bob.id, ["Apple"])).response()
        edit = bot.get_partial_messageable(world.channel_id).get_partial_message(question.id)
        await edit.edit(content="Which fruit, again?")
        # Once the message changed, the select shows its defaults (none) again.
        await (await world.emulator.choose(question, world.bob.id, ["Apple"])).response()


async def test_defer_then_edit_original_updates_the_clicked_message(world: World) -> None:
    async with running_bot() as bot:
        question = await post_question(bot, world, mode="defer")
        handle = await world.emulator.click(question, world.alice.id, "No")
        assert (await handle.response()).type == 6
        edited = await world.emulator.wait_for_edit(question.id)
        assert edited.content == "answered: option 2"
        assert not edited.is_interactive
        assert [m.version for m in world.emulator.history(question.id)] == [0, 1]


async def test_edit_message_response_updates_the_message(world: World) -> None:
    async with running_bot() as bot:
        question = await post_question(bot, world, mode="edit")
        handle = await world.emulator.choose(question, world.alice.id, ["Banana"])
        callback = await handle.response()
        assert callback.type == 7
        assert callback.data["components"] == []
        assert world.emulator.message(question.id).content == "answered: b"
        assert handle.original == world.emulator.message(question.id)


async def test_first_followup_after_thinking_defer_replaces_the_loading_message(
    world: World,
) -> None:
    async with running_bot() as bot:
        question = await post_question(bot, world, mode="think")
        handle = await world.emulator.click(question, world.bob.id, "Yes")
        callback = await handle.response()
        assert callback.type == 5
        assert callback.ephemeral
        done = await handle.wait_for_ephemeral("done: option 1")
        assert not done.is_loading
        assert handle.followups == []


async def test_a_click_nobody_answers_fails_like_discord(world: World) -> None:
    async with running_bot() as bot:
        question = await post_question(bot, world, mode="silent")
        handle = await world.emulator.click(question, world.alice.id, "Yes")
        await bot.handled.get()
        with pytest.raises(InteractionFailed, match="This interaction failed"):
            await handle.response(timeout=0.2)


async def test_a_response_after_three_seconds_is_refused() -> None:
    async with DiscordEmulator(response_window=0.3) as emulator:
        with discord_py_pointed_at(emulator):
            guild = emulator.add_guild("g")
            channel = emulator.add_text_channel(guild.id, "c")
            alice = emulator.add_user("alice")
            emulator.add_member(guild.id, alice.id)
            world = World(emulator, guild.id, channel.id, alice, alice, alice)
            async with running_bot() as bot:
                question = await post_question(bot, world, mode="late")
                handle = await emulator.click(question, alice.id, "Yes")
                with pytest.raises(InteractionFailed):
                    await handle.response()
                bot.release.set()
                error = await asyncio.wait_for(bot.errors.get(), 5)
                assert isinstance(error, discord.NotFound)
                assert error.code == 10062
                assert "after the 3 s window" in handle.refused[0]


async def test_an_invalid_response_is_refused_and_the_interaction_fails(world: World) -> None:
    async with running_bot() as bot:
        question = await post_question(bot, world, mode="huge")
        handle = await world.emulator.click(question, world.alice.id, "Yes")
        error = await asyncio.wait_for(bot.errors.get(), 5)
        assert isinstance(error, discord.HTTPException)
        assert error.code == 50035
        with pytest.raises(InteractionFailed, match="refused responses: type 4"):
            await handle.response(timeout=0)
    assert [r.where for r in world.emulator.rejections] == ["interaction callback type 4"]


async def test_without_the_guilds_intent_clicks_arrive_but_roles_are_unknown(
    world: World,
) -> None:
    async with running_bot(guilds_intent=False) as bot:
        guild = bot.get_guild(world.guild_id)
        assert guild is not None
        assert guild.unavailable  # known from READY only; no GUILD_CREATE filled it in
        channel = bot.get_partial_messageable(world.channel_id)
        sent = await channel.send("Which fruit?", view=question_view("silent"))
        await world.emulator.click(sent.id, world.alice.id, "Yes")
        assert await bot.handled.get() == ("t:silent:1", world.alice.id, [])
        member = bot.clickers[-1]
        assert isinstance(member, discord.Member)
        # the role ids arrive, but discord.py drops roles missing from its guild cache
        assert member.roles == []
    assert "GUILD_CREATE" not in world.emulator.gateway_events()


async def test_waiting_for_something_that_never_comes_says_what_is_there(
    discord_emulator: DiscordEmulator,
) -> None:
    guild = discord_emulator.add_guild("g")
    channel = discord_emulator.add_text_channel(guild.id, "c")
    with pytest.raises(WaitTimeout, match=r"no matching message in channel \d+; messages: \[\]"):
        await discord_emulator.wait_for_message(channel.id, timeout=0.05)


async def test_people_only_use_what_they_can_see(world: World) -> None:
    async with running_bot() as bot:
        question = await post_question(bot, world)
        with pytest.raises(ComponentNotFound, match=r"button 'Yes' in row 0.*'Apple'"):
            await world.emulator.click(question, world.alice.id, "Maybe")
        with pytest.raises(ComponentNotFound, match="not a member"):
            await world.emulator.click(question, world.carol.id, "Yes")
        with pytest.raises(ComponentNotFound, match="1 to 2 distinct options"):
            await world.emulator.choose(question, world.alice.id, ["Apple", "Banana", "Cherry"])
        handle = await world.emulator.click(question, world.alice.id, "Yes")
        reply = await handle.wait_for_ephemeral()
        with pytest.raises(ComponentNotFound, match="ephemeral for user"):
            await world.emulator.click(reply, world.bob.id, "Yes")


# --- persistence, DMs, threads -------------------------------------------------------------


async def test_a_new_client_handles_clicks_on_an_old_message(world: World) -> None:
    async with running_bot() as first:
        question = await post_question(first, world)
    async with running_bot() as second:
        handle = await world.emulator.click(question, world.alice.id, "No")
        assert (await handle.response()).type == 4
        assert await second.handled.get() == ("t:eph:2", world.alice.id, [])
    assert world.emulator.gateway_stats.identifies == 2
    # discord.py's close() reaches the wire as close code 4000, so the first session stays
    # resumable (as on Discord) and only holds the click in its backlog.
    assert (handle.delivered_to, handle.queued_for) == (1, 1)


async def test_two_sessions_of_one_token_both_get_a_click_and_only_one_may_answer(
    world: World,
) -> None:
    """The problem of running a bot twice: both get every click, and the slower answer is
    refused with 40060, "Interaction has already been acknowledged"."""
    async with running_bot() as first, running_bot() as second:
        assert world.emulator.open_gateway_sessions == 2
        question = await post_question(first, world)
        handle = await world.emulator.click(question, world.alice.id, "Yes")
        assert handle.delivered_to == 2
        assert await first.handled.get() == ("t:eph:1", world.alice.id, [])
        assert await second.handled.get() == ("t:eph:1", world.alice.id, [])
        failures = [asyncio.create_task(bot.errors.get()) for bot in (first, second)]
        done, pending = await asyncio.wait(failures, timeout=5, return_when=asyncio.FIRST_COMPLETED)
        for waiting in pending:
            waiting.cancel()
        [error] = [failure.result() for failure in done]
        assert isinstance(error, discord.HTTPException)
        assert (error.status, error.code) == (400, 40060)
        assert (await handle.response()).type == 4
        assert handle.refused == ["second response (type 4) after type 4"]
    assert world.emulator.open_gateway_sessions == 0


async def test_dm_created_by_discord_py_and_clicked_by_its_recipient(world: World) -> None:
    emulator = world.emulator
    async with running_bot() as bot:
        dm = await bot.create_dm(discord.Object(world.alice.id))
        assert dm.id == emulator.dm_channel(world.alice.id).id
        sent = await dm.send("Private question", view=question_view())
        question = emulator.message(sent.id)
        assert question.guild_id is None
        with pytest.raises(ComponentNotFound, match="in the DM with user"):
            await emulator.click(question, world.bob.id, "Yes")
        handle = await emulator.click(question, world.alice.id, "Yes")
        await handle.response()
        assert "user" in handle.payload
        assert "guild_id" not in handle.payload
        assert await bot.handled.get() == ("t:eph:1", world.alice.id, [])


async def test_dm_to_a_user_who_blocks_dms_is_refused(world: World) -> None:
    shy = world.emulator.add_user("shy", dms_blocked=True)
    async with running_bot() as bot:
        dm = await bot.create_dm(discord.Object(shy.id))
        with pytest.raises(discord.Forbidden) as raised:
            await dm.send("hello")
        assert raised.value.code == 50007


async def test_sending_to_an_archived_thread_unarchives_it(world: World) -> None:
    thread = world.emulator.add_thread(world.channel_id, "q-1", archived=True)
    async with running_bot() as bot:
        await bot.get_partial_messageable(thread.id).send("in a thread")
    found = await world.emulator.wait_for_message(thread.id, lambda m: "thread" in m.content)
    assert found.channel_id == thread.id
    assert not thread.archived


async def test_a_message_in_an_archived_thread_is_edited_only_once_it_is_unarchived(
    world: World,
) -> None:
    thread = world.emulator.add_thread(world.channel_id, "q-1")
    async with running_bot() as bot:
        sent = await bot.get_partial_messageable(thread.id).send("waiting")
        world.emulator.archive_thread(thread.id)
        with pytest.raises(discord.HTTPException) as refused:
            await sent.edit(content="answered")
        assert (refused.value.status, refused.value.code) == (400, 50083)
        assert world.emulator.message(sent.id).content == "waiting"
        await bot.http.edit_channel(thread.id, archived=False)
        assert not thread.archived
        await sent.edit(content="answered")
        assert world.emulator.message(sent.id).content == "answered"


async def test_a_locked_thread_stays_archived_for_the_bot(world: World) -> None:
    thread = world.emulator.add_thread(world.channel_id, "q-1")
    world.emulator.archive_thread(thread.id, locked=True)
    async with running_bot() as bot:
        with pytest.raises(discord.Forbidden) as refused:
            await bot.http.edit_channel(thread.id, archived=False)
        assert refused.value.code == 50013
        with pytest.raises(discord.Forbidden):
            await bot.http.edit_channel(world.channel_id, name="renamed")
    assert thread.archived


# --- validation, rate limits ---------------------------------------------------------------


async def test_invalid_messages_are_rejected_with_invalid_form_body(world: World) -> None:
    async with running_bot() as bot:
        channel = bot.get_channel(world.channel_id)
        assert isinstance(channel, discord.TextChannel)
        with pytest.raises(discord.HTTPException) as too_long:
            await channel.send("x" * 2001)
        assert too_long.value.status == 400
        assert too_long.value.code == 50035
        rows = [
            {"type": 1, "components": [{"type": 2, "style": 1, "label": "b", "custom_id": f"{i}"}]}
            for i in range(6)
        ]
        route = discord.http.Route("POST", "/channels/{channel_id}/messages", channel_id=channel.id)
        with pytest.raises(discord.HTTPException) as too_many_rows:
            await bot.http.request(route, json={"content": "rows", "components": rows})
        assert too_many_rows.value.code == 50035
    assert [r.where for r in world.emulator.rejections] == [
        "POST /channels/{channel_id}/messages"
    ] * 2
    assert world.emulator.messages(world.channel_id) == []


async def test_a_429_on_an_edit_is_waited_out_and_retried(world: World) -> None:
    emulator = world.emulator
    async with running_bot() as bot:
        question = await post_question(bot, world)
        emulator.rate_limit_next(
            "PATCH", "/channels/{channel_id}/messages/{message_id}", retry_after=0.05
        )
        partial = bot.get_partial_messageable(world.channel_id).get_partial_message(question.id)
        await partial.edit(content="closed", view=None)
    patches = emulator.requests_to("PATCH", f"/channels/{world.channel_id}/messages/{{id}}")
    assert [r.status for r in patches] == [429, 200]
    assert emulator.message(question.id).content == "closed"


async def test_429_response_carries_the_headers_discord_py_needs(
    discord_emulator: DiscordEmulator,
) -> None:
    discord_emulator.rate_limit_next("GET", "/users/@me", retry_after=1.5, is_global=True)
    async with aiohttp.ClientSession() as http:
        url = discord_emulator.api_url + "/users/@me"
        async with http.get(url, headers={"Authorization": f"Bot {TOKEN}"}) as r:
            assert r.status == 429
            assert r.headers["Via"]
            assert r.headers["Retry-After"] == "2"
            assert r.headers["X-RateLimit-Global"] == "true"
            body = await r.json()
        async with http.get(url, headers={"Authorization": f"Bot {TOKEN}"}) as r:
            assert r.status == 200
    assert body == {"message": "You are being rate limited.", "retry_after": 1.5, "global": True}


async def test_a_server_error_is_raised_or_retried_as_discord_py_does(world: World) -> None:
    emulator = world.emulator
    edit = "/channels/{channel_id}/messages/{message_id}"
    async with running_bot() as bot:
        question = await post_question(bot, world)
        partial = bot.get_partial_messageable(world.channel_id).get_partial_message(question.id)
        emulator.fail_next("PATCH", edit, status=503)
        with pytest.raises(discord.DiscordServerError):
            await partial.edit(content="closed", view=None)
        emulator.fail_next("PATCH", edit, status=500)
        await partial.edit(content="closed", view=None)
    assert [r.status for r in emulator.requests_to("PATCH", edit)] == [503, 500, 200]


async def test_history_pages_before_and_after_a_message_newest_first(world: World) -> None:
    async with running_bot() as bot:
        channel = bot.get_partial_messageable(world.channel_id)
        sent = [await channel.send(f"message {n}") for n in range(5)]
        after = [m.id async for m in channel.history(after=sent[1], limit=None)]
        before = [m.id async for m in channel.history(before=sent[3], limit=2)]
        newest = [m.id async for m in channel.history(limit=2)]
    ids = [m.id for m in sent]
    assert after == ids[2:]  # discord.py turns `after` pages oldest first
    assert before == [ids[2], ids[1]]
    assert newest == [ids[4], ids[3]]


def _button(custom_id: str, label: str = "ok") -> dict[str, Any]:
    return {"type": 2, "style": 1, "label": label, "custom_id": custom_id}


def _row(*items: dict[str, Any]) -> dict[str, Any]:
    return {"type": 1, "components": list(items)}


def _select(options: int = 2, **extra: Any) -> dict[str, Any]:
    choices = [{"label": f"o{i}", "value": f"v{i}"} for i in range(options)]
    return {"type": 3, "custom_id": "s", "options": choices, **extra}


V2 = 1 << 15


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"content": "x" * 2001}, "content: BASE_TYPE_MAX_LENGTH"),
        ({"components": [_row(_button(f"{i}")) for i in range(6)]}, "components: BASE_TYPE_MAX"),
        ({"components": [_row(*(_button(f"{i}") for i in range(6)))]}, "components.0.components"),
        ({"components": [_row(_select(), _button("b"))]}, "COMPONENT_LAYOUT_WIDTH_EXCEEDED"),
        ({"components": [_row(_button("b", "L" * 81))]}, "components.0.components.0.label"),
        ({"components": [_row(_button(""))]}, "custom_id: BASE_TYPE_BAD_LENGTH"),
        ({"components": [_row(_button("x" * 101))]}, "custom_id: BASE_TYPE_BAD_LENGTH"),
        ({"components": [_row(_button("a"), _button("a"))]}, "COMPONENT_CUSTOM_ID_DUPLICATED"),
        ({"components": [_row(_select(26))]}, "components.0.components.0.options"),
        ({"components": [_row(_select(2, max_values=3))]}, "max_values"),
        ({"components": [_row(_select(2, placeholder="p" * 151))]}, "placeholder"),
        ({"components": [_row(_select(2, min_values=26))]}, "min_values"),
        ({"components": [{"type": 10, "content": "hi"}]}, "UNION_TYPE_CHOICES"),
        (
            {"flags": V2, "components": [{"type": 10, "content": f"{i}"} for i in range(41)]},
            "COMPONENT_MAX_TOTAL_COMPONENTS_EXCEEDED",
        ),
        (
            {"flags": V2, "components": [{"type": 10, "content": "t" * 2001}] * 2},
            "MAX_TEXT_DISPLAY_LENGTH_EXCEEDED",
        ),
        (
            {"flags": V2, "content": "hi", "components": [{"type": 10, "content": "t"}]},
            "content: LEGACY_FIELDS_WITH_COMPONENTS_V2",
        ),
        ({"content": ""}, "empty message"),
    ],
)
def test_validation_refuses_what_discord_refuses(message: dict[str, Any], expected: str) -> None:
    invalid = validate_message(message)
    assert invalid is not None, "the emulator accepted a message Discord refuses"
    assert any(expected in problem for problem in invalid.problems), invalid.problems


def test_validation_accepts_a_full_question_layout() -> None:
    rows = [_row(*(_button(f"q{q}o{o}") for o in range(4))) for q in range(3)]
    legacy = {"content": "q", "components": [*rows, _row(_select(4, max_values=4))]}
    assert validate_message(legacy) is None
    container = {"type": 17, "components": [{"type": 10, "content": "Q1"}, *rows]}
    assert validate_message({"flags": V2, "components": [container]}) is None


# --- gateway faults -------------------------------------------------------------------------


@pytest.mark.parametrize("close_code", [None, 4000], ids=["cut", "close-4000"])
async def test_dropped_gateway_resumes_and_replays_a_click_made_meanwhile(
    world: World, close_code: int | None
) -> None:
    emulator = world.emulator
    async with running_bot() as bot:
        question = await post_question(bot, world)
        await emulator.drop_gateway(code=close_code)
        handle = await emulator.click(question, world.alice.id, "No")
        await emulator.wait_gateway_ready(resumes=1)
        assert (await handle.response()).type == 4
        stats = emulator.gateway_stats
        assert (stats.connections, stats.identifies, stats.resumes) == (2, 1, 1)
        later = await emulator.click(question, world.bob.id, "Yes")
        await later.response()


async def test_invalidated_session_makes_discord_py_identify_again(world: World) -> None:
    emulator = world.emulator
    async with running_bot() as bot:
        question = await post_question(bot, world)
        bot.ready.clear()
        await emulator.drop_gateway(invalidate_session=True)
        await emulator.wait_gateway_ready(identifies=2)
        await asyncio.wait_for(bot.ready.wait(), 5)
        assert emulator.gateway_stats.failed_resumes == 1
        handle = await emulator.click(question, world.alice.id, "Yes")
        await handle.response()


async def test_layout_view_message_is_components_v2_and_clickable(world: World) -> None:
    class Layout(ui.LayoutView):
        def __init__(self) -> None:
            super().__init__(timeout=None)
            row: ui.ActionRow[Layout] = ui.ActionRow()
            row.add_item(Answer("eph", 7, "Seven"))
            self.add_item(ui.Container(ui.TextDisplay("Pick a number"), row))

    async with running_bot() as bot:
        channel = bot.get_channel(world.channel_id)
        assert isinstance(channel, discord.TextChannel)
        sent = await channel.send(view=Layout())
        question = world.emulator.message(sent.id)
        assert question.is_components_v2
        assert "Pick a number" in question.text
        handle = await world.emulator.click(question, world.alice.id, "Seven")
        await handle.response()
        assert await bot.handled.get() == ("t:eph:7", world.alice.id, [])
