"""The Slack emulator speaks Slack well enough for the unmodified slack_sdk and slack_bolt."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from .slack import Message, NothingSent, SlackEmulator, has_interactive_elements, visible_text

CHANNEL = "C0GENERAL"


# ---- fixtures and builders ---------------------------------------------------------------------


@pytest.fixture
async def slack() -> AsyncIterator[SlackEmulator]:
    async with SlackEmulator() as emulator:
        emulator.add_user("U1", "alice")
        emulator.add_user("U2", "bob")
        emulator.add_user("U9", "mallory", team_id="T0OTHER")
        emulator.add_usergroup("S0123", ["U1", "U2"])
        emulator.add_channel(CHANNEL, "general")
        yield emulator


@pytest.fixture
async def web_client(slack: SlackEmulator) -> AsyncWebClient:
    return AsyncWebClient(token=slack.identity.bot_token, base_url=slack.api_url)


def button(action_id: str, label: str, value: str, **extra: Any) -> dict[str, Any]:
    text = {"type": "plain_text", "text": label}
    return {"type": "button", "action_id": action_id, "text": text, "value": value, **extra}


def option(label: str, value: str, description: str | None = None) -> dict[str, Any]:
    built: dict[str, Any] = {"text": {"type": "plain_text", "text": label}, "value": value}
    if description is not None:
        built["description"] = {"type": "mrkdwn", "text": description}
    return built


def question_blocks(rev: str = "r1", radio_block: str | None = None) -> list[dict[str, Any]]:
    """A two-question form: a radio question, a checkbox question, then Approve/Reject."""
    confirm = {
        "title": {"type": "plain_text", "text": "Sure?"},
        "text": {"type": "plain_text", "text": "This cannot be undone."},
        "confirm": {"type": "plain_text", "text": "Yes"},
        "deny": {"type": "plain_text", "text": "No"},
    }
    return [
        {
            "type": "header",
            "block_id": f"h-{rev}",
            "text": {"type": "plain_text", "text": "Deploy?"},
        },
        {
            "type": "section",
            "block_id": radio_block or f"q1-{rev}",
            "text": {"type": "mrkdwn", "text": "*Which database?*"},
            "accessory": {
                "type": "radio_buttons",
                "action_id": "q1",
                "options": [option("Postgres", "pg", "Battle-tested"), option("SQLite", "lite")],
            },
        },
        {
            "type": "section",
            "block_id": f"q2-{rev}",
            "text": {"type": "mrkdwn", "text": "*Regions*"},
        },
        {
            "type": "actions",
            "block_id": f"q2a-{rev}",
            "elements": [
                {
                    "type": "checkboxes",
                    "action_id": "q2",
                    "options": [option("EU", "eu"), option("US", "us"), option("Asia", "asia")],
                }
            ],
        },
        {
            "type": "actions",
            "block_id": f"submit-{rev}",
            "elements": [
                button("approve", "Approve", "req-1|approve", style="primary"),
                button("reject", "Reject", "req-1|reject", style="danger", confirm=confirm),
            ],
        },
    ]


async def post_question(slack: SlackEmulator, client: AsyncWebClient) -> Message:
    """Post the form through the real SDK and return the emulator's record of it."""
    response = await client.chat_postMessage(
        channel=CHANNEL, text="Deploy?", blocks=question_blocks()
    )
    return slack.message(response["channel"], response["ts"])


def bolt_app(slack: SlackEmulator, client: AsyncWebClient) -> AsyncApp:
    return AsyncApp(client=client, signing_secret=slack.identity.signing_secret)


def recorder(app: AsyncApp, *action_ids: str) -> asyncio.Queue[dict[str, Any]]:
    """Ack-only listeners that hand every body they get to a queue."""
    bodies: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def listener(ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        await bodies.put(body)

    for action_id in action_ids:
        app.action(action_id)(listener)
    return bodies


async def next_body(bodies: asyncio.Queue[dict[str, Any]]) -> dict[str, Any]:
    async with asyncio.timeout(5):
        return await bodies.get()


async def connect(handler: AsyncSocketModeHandler) -> None:
    await handler.connect_async()  # type: ignore[no-untyped-call]  # unannotated in slack_bolt


async def close(handler: AsyncSocketModeHandler) -> None:
    await handler.close_async()  # type: ignore[no-untyped-call]  # unannotated in slack_bolt


@pytest.fixture
async def socket_app(
    slack: SlackEmulator, web_client: AsyncWebClient
) -> AsyncIterator[tuple[AsyncApp, AsyncSocketModeHandler]]:
    app = bolt_app(slack, web_client)
    handler = AsyncSocketModeHandler(app, app_token=slack.identity.app_token)
    await connect(handler)
    await slack.wait_socket_connected()
    yield app, handler
    await close(handler)


@pytest.fixture
async def http_app(slack: SlackEmulator, web_client: AsyncWebClient) -> AsyncIterator[AsyncApp]:
    app = bolt_app(slack, web_client)
    runner = web.AppRunner(app.web_app(path="/slack/events"), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    slack.interactions_url = f"http://127.0.0.1:{port}/slack/events"
    yield app
    await runner.cleanup()


# ---- Web API -----------------------------------------------------------------------------------


async def test_web_client_posts_and_updates_a_message(
    slack: SlackEmulator, web_client: AsyncWebClient
) -> None:
    first = await web_client.chat_postMessage(channel=CHANNEL, text="hi", blocks=question_blocks())
    second = await web_client.chat_postMessage(channel="#general", text="again")
    assert first["ok"]
    assert first["channel"] == CHANNEL
    assert float(second["ts"]) > float(first["ts"])
    assert first["message"]["bot_id"] == "B0BOT"
    assert first["message"]["blocks"][1]["block_id"] == "q1-r1"

    updated = await web_client.chat_update(
        channel=CHANNEL, ts=first["ts"], text="done", blocks=question_blocks("r2")
    )
    assert updated["ts"] == first["ts"]
    message = await slack.wait_for_update(CHANNEL, first["ts"], lambda m: "q1-r2" in str(m.blocks))
    assert message.version == 1
    assert slack.calls("chat.update")[0]["blocks"][0]["block_id"] == "h-r2"
    assert slack.call_count("chat.postMessage") == 2

    await web_client.chat_update(channel=CHANNEL, ts=first["ts"], text="text only")
    assert slack.message(CHANNEL, first["ts"]).blocks == []


async def test_an_update_to_nothing_is_refused(
    slack: SlackEmulator, web_client: AsyncWebClient
) -> None:
    posted = await web_client.chat_postMessage(channel=CHANNEL, text="hi", blocks=question_blocks())
    for empty in ({}, {"text": ""}, {"text": "", "blocks": []}):
        arguments = {"channel": CHANNEL, "ts": posted["ts"], **empty}
        with pytest.raises(SlackApiError) as error:
            # api_call, since chat_update itself warns of a missing text before it sends
            await web_client.api_call("chat.update", json=arguments)
        assert error.value.response.status_code == 200
        assert error.value.response.data == {"ok": False, "error": "no_text"}
    assert slack.message(CHANNEL, posted["ts"]).version == 0


async def test_tokens_are_checked_like_slack(slack: SlackEmulator) -> None:
    wrong = AsyncWebClient(token="xoxb-wrong", base_url=slack.api_url)
    with pytest.raises(SlackApiError) as error:
        await wrong.auth_test()
    assert error.value.response["error"] == "invalid_auth"

    app_client = AsyncWebClient(token=slack.identity.app_token, base_url=slack.api_url)
    with pytest.raises(SlackApiError) as error:
        await app_client.auth_test()
    assert error.value.response["error"] == "not_allowed_token_type"

    bot = AsyncWebClient(token=slack.identity.bot_token, base_url=slack.api_url)
    identity = await bot.auth_test()
    assert (identity["user_id"], identity["team_id"], identity["bot_id"]) == (
        "U0BOT",
        "T0TEST",
        "B0BOT",
    )
    with pytest.raises(SlackApiError) as error:
        await bot.apps_connections_open(app_token=slack.identity.bot_token)
    assert error.value.response["error"] == "not_allowed_token_type"
    opened = await bot.apps_connections_open(app_token=slack.identity.app_token)
    assert opened["url"].startswith(f"ws://127.0.0.1:{slack.port}/socket-mode/")

    with pytest.raises(SlackApiError) as error:
        await bot.api_call("chat.fly")
    assert error.value.response["error"] == "unknown_method"
    with pytest.raises(SlackApiError) as error:
        await bot.chat_update(channel=CHANNEL, ts="1.000001", text="x")
    assert error.value.response["error"] == "message_not_found"


async def test_form_bodies_with_blocks_as_a_json_string(slack: SlackEmulator) -> None:
    headers = {"Authorization": f"Bearer {slack.identity.bot_token}"}
    async with aiohttp.ClientSession() as session:
        form = {"channel": CHANNEL, "text": "hi", "blocks": json.dumps(question_blocks())}
        async with session.post(
            f"{slack.api_url}chat.postMessage", data=form, headers=headers
        ) as r:
            posted = await r.json()
        form["blocks"] = "[not json"
        async with session.post(
            f"{slack.api_url}chat.postMessage", data=form, headers=headers
        ) as r:
            broken = await r.json()
    assert posted["ok"], posted
    assert slack.message(CHANNEL, posted["ts"]).blocks[3]["block_id"] == "q2a-r1"
    assert broken == {"ok": False, "error": "invalid_blocks_format"}


async def test_directory_dms_threads_ephemerals_and_deletes(
    slack: SlackEmulator, web_client: AsyncWebClient
) -> None:
    opened = await web_client.conversations_open(users="U1")
    again = await web_client.conversations_open(users=["U1"])
    dm = opened["channel"]["id"]
    assert dm.startswith("D")
    assert again["channel"]["id"] == dm
    assert slack.dm_channel("U1") == dm

    parent = await web_client.chat_postMessage(channel=dm, text="a question")
    await web_client.chat_postMessage(channel=dm, text="a reply", thread_ts=parent["ts"])
    assert (await slack.wait_for_message("U1", lambda m: m.thread_ts is not None)).text == "a reply"
    link = await web_client.chat_getPermalink(channel=dm, message_ts=parent["ts"])
    assert link["permalink"].endswith(f"/archives/{dm}/p{parent['ts'].replace('.', '')}")
    replies = await web_client.conversations_replies(channel=dm, ts=parent["ts"])
    assert [m["text"] for m in replies["messages"]] == ["a question", "a reply"]

    assert (await web_client.usergroups_users_list(usergroup="S0123"))["users"] == ["U1", "U2"]
    assert (await web_client.users_info(user="U9"))["user"]["team_id"] == "T0OTHER"
    with pytest.raises(SlackApiError):
        await web_client.usergroups_users_list(usergroup="S0NONE")

    await web_client.chat_postEphemeral(channel=CHANNEL, user="U2", text="only for bob")
    note = await slack.wait_for_ephemeral("U2", contains="only for bob")
    assert note.via == "chat.postEphemeral"

    await web_client.chat_delete(channel=dm, ts=parent["ts"])
    assert [m.text for m in slack.messages("U1")] == ["a reply"]


async def test_channel_history_pages_newest_first_without_thread_replies(
    slack: SlackEmulator, web_client: AsyncWebClient
) -> None:
    sent = [await web_client.chat_postMessage(channel=CHANNEL, text=f"m{n}") for n in range(4)]
    await web_client.chat_postMessage(channel=CHANNEL, text="reply", thread_ts=sent[0]["ts"])
    first = await web_client.conversations_history(channel=CHANNEL, limit=2)
    assert [m["text"] for m in first["messages"]] == ["m3", "m2"]
    assert first["has_more"]
    cursor = first["response_metadata"]["next_cursor"]
    rest = await web_client.conversations_history(channel=CHANNEL, limit=2, cursor=cursor)
    assert [m["text"] for m in rest["messages"]] == ["m1", "m0"]
    assert not rest["has_more"]
    since = await web_client.conversations_history(channel=CHANNEL, oldest=sent[1]["ts"])
    assert [m["text"] for m in since["messages"]] == ["m3", "m2"]


async def test_rate_limit_is_retried_by_the_sdk_retry_handler(
    slack: SlackEmulator, web_client: AsyncWebClient
) -> None:
    slack.fail_next("chat.postMessage", 429, retry_after=1)
    with pytest.raises(SlackApiError) as error:
        await web_client.chat_postMessage(channel=CHANNEL, text="no retry handler")
    assert error.value.response.status_code == 429
    assert error.value.response.headers["Retry-After"] == "1"
    assert error.value.response["error"] == "ratelimited"

    slack.fail_next("chat.postMessage", 429, retry_after=1)
    web_client.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=1))
    posted = await web_client.chat_postMessage(channel=CHANNEL, text="retried")
    assert posted["ok"]
    assert slack.call_count("chat.postMessage") == 3
    assert [m.text for m in slack.messages(CHANNEL)] == ["retried"]

    slack.fail_next("chat.update", 503)
    with pytest.raises(SlackApiError) as error:
        await web_client.chat_update(channel=CHANNEL, ts=posted["ts"], text="x")
    assert error.value.response.status_code == 503


# ---- Block Kit validation ----------------------------------------------------------------------


def section(block_id: str, text: str = "x") -> dict[str, Any]:
    return {"type": "section", "block_id": block_id, "text": {"type": "mrkdwn", "text": text}}


def actions(block_id: str, *elements: dict[str, Any]) -> dict[str, Any]:
    return {"type": "actions", "block_id": block_id, "elements": list(elements)}


def choices(kind: str, options: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": kind, "action_id": "pick", "options": options}


INVALID: dict[str, tuple[list[dict[str, Any]], str]] = {
    "51 blocks": ([section(f"b{i}") for i in range(51)], "less than 51 items"),
    "missing block_id": ([{"type": "divider"}], "missing block_id"),
    "duplicate block_id": ([section("same"), section("same")], "duplicate block_id"),
    "long block_id": ([section("b" * 256)], "/blocks/0/block_id"),
    "long action_id": ([actions("a", button("x" * 256, "Go", "1"))], "/action_id"),
    "duplicate action_id": (
        [actions("a", button("go", "Go", "1"), button("go", "Stop", "2"))],
        "duplicate action_id",
    ),
    "empty button text": ([actions("a", button("go", " ", "1"))], "more than 0 characters"),
    "long button text": ([actions("a", button("go", "g" * 76, "1"))], "less than 76"),
    "long option text": (
        [actions("a", choices("radio_buttons", [option("o" * 76, "v")]))],
        "/options/0/text/text",
    ),
    "long option description": (
        [actions("a", choices("checkboxes", [option("o", "v", "d" * 76)]))],
        "/options/0/description/text",
    ),
    "long option value": (
        [actions("a", choices("radio_buttons", [option("o", "v" * 151)]))],
        "/options/0/value",
    ),
    "11 radio options": (
        [actions("a", choices("radio_buttons", [option(f"o{i}", f"{i}") for i in range(11)]))],
        "less than 11 items",
    ),
    "11 checkboxes": (
        [actions("a", choices("checkboxes", [option(f"o{i}", f"{i}") for i in range(11)]))],
        "less than 11 items",
    ),
    "long section text": ([section("s", "t" * 3001)], "less than 3001"),
    "long header": (
        [{"type": "header", "block_id": "h", "text": {"type": "plain_text", "text": "h" * 151}}],
        "less than 151",
    ),
    "26 actions elements": (
        [actions("a", *[button(f"b{i}", f"B{i}", f"{i}") for i in range(26)])],
        "less than 26 items",
    ),
    "multi select in actions": (
        [actions("a", choices("multi_static_select", [option("o", "v")]))],
        "not allowed in an actions block",
    ),
}


@pytest.mark.parametrize("case", sorted(INVALID))
async def test_invalid_blocks_are_rejected(
    slack: SlackEmulator, web_client: AsyncWebClient, case: str
) -> None:
    blocks, expected = INVALID[case]
    with pytest.raises(SlackApiError) as error:
        await web_client.chat_postMessage(channel=CHANNEL, text="t", blocks=blocks)
    assert error.value.response["error"] == "invalid_blocks"
    assert any(expected in e for e in error.value.response["errors"]), error.value.response
    assert slack.invalid_blocks_count == 1
    assert slack.block_rejections[0].source == "chat.postMessage"
    assert slack.messages(CHANNEL) == []


async def test_blocks_at_the_limits_are_accepted(
    slack: SlackEmulator, web_client: AsyncWebClient
) -> None:
    ten = [option("o" * 75, f"{i}" * 150, "d" * 75) for i in range(10)]
    blocks = [
        {"type": "header", "block_id": "h", "text": {"type": "plain_text", "text": "h" * 150}},
        section("s", "t" * 3000),
        actions("a", choices("checkboxes", ten)),
        actions("b", *[button(f"b{i}", "g" * 75, f"{i}") for i in range(25)]),
        *[section(f"pad{i}") for i in range(46)],
    ]
    posted = await web_client.chat_postMessage(channel=CHANNEL, text="t", blocks=blocks)
    assert posted["ok"]
    with pytest.raises(SlackApiError):
        await web_client.chat_update(
            channel=CHANNEL, ts=posted["ts"], text="t", blocks=[*blocks, section("x")]
        )
    assert slack.invalid_blocks_count == 1
    assert slack.block_rejections[0].source == "chat.update"


def test_reading_a_message_like_a_person() -> None:
    blocks = question_blocks()
    shown = visible_text("fallback", blocks)
    for piece in ("Deploy?", "Which database?", "Postgres", "Battle-tested", "Asia", "Reject"):
        assert piece in shown
    assert "fallback" not in shown
    assert visible_text("fallback", []) == "fallback"
    assert has_interactive_elements(blocks)
    assert not has_interactive_elements([section("s"), {"type": "divider", "block_id": "d"}])


# ---- people and Socket Mode --------------------------------------------------------------------


async def test_click_over_socket_mode_reaches_bolt_with_slacks_payload(
    slack: SlackEmulator,
    web_client: AsyncWebClient,
    socket_app: tuple[AsyncApp, AsyncSocketModeHandler],
) -> None:
    app, _ = socket_app
    bodies = recorder(app, "q1", "q2", "reject")
    approvals: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def on_approve(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        await ack()
        await respond(text="Thanks, recorded.", response_type="ephemeral")
        await approvals.put(body)

    app.action("approve")(on_approve)
    message = await post_question(slack, web_client)
    alice = slack.person("U1")

    (await alice.choose_radio(message, "SQLite")).assert_acked()
    ticks = await alice.tick_checkboxes(message, ["EU", "Asia"])
    assert [d.acked for d in ticks] == [True, True]
    assert (await next_body(bodies))["actions"][0]["selected_option"]["value"] == "lite"
    await next_body(bodies)
    last_tick = (await next_body(bodies))["actions"][0]
    assert [o["value"] for o in last_tick["selected_options"]] == ["eu", "asia"]

    click = await alice.click_button(message, "Approve")
    assert click.acked
    assert click.via == "socket"
    body = await next_body(approvals)
    assert body["type"] == "block_actions"
    assert body["user"] == {"id": "U1", "username": "alice", "name": "alice", "team_id": "T0TEST"}
    assert body["api_app_id"] == "A0TEST"
    assert body["team"]["id"] == "T0TEST"
    assert body["container"] == {
        "type": "message",
        "message_ts": message.ts,
        "channel_id": CHANNEL,
        "is_ephemeral": False,
    }
    assert body["channel"] == {"id": CHANNEL, "name": "general"}
    assert body["message"]["ts"] == message.ts
    assert body["message"]["bot_id"] == "B0BOT"
    action = body["actions"][0]
    assert (action["action_id"], action["block_id"], action["value"]) == (
        "approve",
        "submit-r1",
        "req-1|approve",
    )
    values = body["state"]["values"]
    assert values["q1-r1"]["q1"]["selected_option"]["value"] == "lite"
    assert [o["value"] for o in values["q2a-r1"]["q2"]["selected_options"]] == ["eu", "asia"]
    await slack.wait_for_ephemeral("U1", contains="Thanks, recorded.")

    rejected = await slack.person("U2").click_button(message, "Reject")
    assert rejected.acked
    assert rejected.confirm is not None
    assert rejected.confirm["title"]["text"] == "Sure?"
    bob_values = (await next_body(bodies))["state"]["values"]
    assert bob_values["q1-r1"]["q1"]["selected_option"] is None
    assert slack.unacked == []


async def test_socket_mode_wire_protocol(slack: SlackEmulator, web_client: AsyncWebClient) -> None:
    opened = await web_client.apps_connections_open(app_token=slack.identity.app_token)
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{slack.base_url}socket-mode/forged-ticket") as refused:
            assert refused.status == 401
        async with session.ws_connect(opened["url"], autoping=False) as ws:
            hello = await ws.receive_json()
            assert hello["type"] == "hello"
            assert hello["num_connections"] == 1
            assert hello["connection_info"] == {"app_id": "A0TEST"}
            assert "host" in hello["debug_info"]
            await ws.ping(b"sdk-ping-pong:1")
            pong = await ws.receive()
            assert (pong.type, pong.data) == (aiohttp.WSMsgType.PONG, b"sdk-ping-pong:1")

            delivery = asyncio.create_task(slack.deliver({"type": "block_actions", "n": 1}))
            envelope = await ws.receive_json()
            assert envelope["type"] == "interactive"
            assert envelope["payload"] == {"type": "block_actions", "n": 1}
            assert envelope["accepts_response_payload"] is False
            assert (envelope["retry_attempt"], envelope["retry_reason"]) == (0, "")
            await ws.send_json({"envelope_id": envelope["envelope_id"]})
            acked = await delivery
    assert acked.acked
    assert acked.envelope_id == envelope["envelope_id"]
    assert slack.socket.received == [{"envelope_id": envelope["envelope_id"]}]


async def test_each_envelope_goes_to_one_of_ten_connections_in_turn(
    slack: SlackEmulator, web_client: AsyncWebClient
) -> None:
    received: list[list[int]] = [[] for _ in range(10)]

    async def ack_all(index: int, ws: aiohttp.ClientWebSocketResponse) -> None:
        async for frame in ws:
            envelope = json.loads(frame.data)
            received[index].append(envelope["payload"]["n"])
            await ws.send_json({"envelope_id": envelope["envelope_id"]})

    async with aiohttp.ClientSession() as session:
        sockets = []
        for count in range(1, 11):
            opened = await web_client.apps_connections_open(app_token=slack.identity.app_token)
            ws = await session.ws_connect(opened["url"])
            assert (await ws.receive_json())["num_connections"] == count
            sockets.append(ws)
        # Slack holds at most ten per app: the eleventh is told so and closed.
        opened = await web_client.apps_connections_open(app_token=slack.identity.app_token)
        async with session.ws_connect(opened["url"]) as eleventh:
            assert (await eleventh.receive_json())["reason"] == "too_many_websockets"
            assert (await eleventh.receive()).type is aiohttp.WSMsgType.CLOSE
        assert slack.socket.refused == 1
        assert len(slack.socket.connections) == 10

        readers = [asyncio.create_task(ack_all(i, ws)) for i, ws in enumerate(sockets)]
        deliveries = [await slack.deliver({"type": "block_actions", "n": n}) for n in range(30)]
        for ws in sockets:
            await ws.close()
        await asyncio.gather(*readers)
    assert all(delivery.acked for delivery in deliveries)
    assert received == [[i, i + 10, i + 20] for i in range(10)]


async def test_an_action_without_listener_is_not_acked() -> None:
    async with SlackEmulator(ack_timeout=0.3) as quick:
        quick.add_user("U1", "alice")
        quick.add_channel(CHANNEL, "general")
        client = AsyncWebClient(token=quick.identity.bot_token, base_url=quick.api_url)
        handler = AsyncSocketModeHandler(bolt_app(quick, client), quick.identity.app_token)
        await connect(handler)
        try:
            await quick.wait_socket_connected()
            message = await post_question(quick, client)
            delivery = await quick.person("U1").click_button(message, "Approve")
        finally:
            await close(handler)
    assert not delivery.acked
    assert quick.unacked == [delivery]
    with pytest.raises(AssertionError, match="did not acknowledge"):
        delivery.assert_acked()


async def test_disconnect_frame_makes_the_sdk_reconnect(
    slack: SlackEmulator,
    web_client: AsyncWebClient,
    socket_app: tuple[AsyncApp, AsyncSocketModeHandler],
) -> None:
    app, _ = socket_app
    bodies = recorder(app, "approve")
    first = await slack.wait_socket_connected()
    assert await slack.disconnect_socket("refresh_requested") == 1
    second = await slack.wait_socket_connected(after=first)
    assert second > first
    assert slack.call_count("apps.connections.open") == 2

    message = await post_question(slack, web_client)
    assert (await slack.person("U1").click_button(message, "Approve")).acked
    assert (await next_body(bodies))["actions"][0]["action_id"] == "approve"


async def test_choices_survive_updates_only_while_block_ids_stay(
    slack: SlackEmulator,
    web_client: AsyncWebClient,
    socket_app: tuple[AsyncApp, AsyncSocketModeHandler],
) -> None:
    recorder(socket_app[0], "q1")
    message = await post_question(slack, web_client)
    alice = slack.person("U1")
    await alice.choose_radio(message, "Postgres", hint="database")

    same_ids = question_blocks("r2", radio_block="q1-r1")
    await web_client.chat_update(channel=CHANNEL, ts=message.ts, text="v2", blocks=same_ids)
    kept = alice.selections(message)["values"]["q1-r1"]["q1"].get("selected_option")
    assert kept is not None
    assert kept["value"] == "pg"

    await web_client.chat_update(
        channel=CHANNEL, ts=message.ts, text="v3", blocks=question_blocks("r3")
    )
    assert alice.selections(message)["values"]["q1-r3"]["q1"]["selected_option"] is None
    assert (
        slack.person("U2").selections(message)["values"]["q1-r3"]["q1"]["selected_option"] is None
    )


async def test_selecting_the_selected_radio_button_again_sends_nothing(
    slack: SlackEmulator,
    web_client: AsyncWebClient,
    socket_app: tuple[AsyncApp, AsyncSocketModeHandler],
) -> None:
    recorder(socket_app[0], "q1")
    message = await post_question(slack, web_client)
    alice = slack.person("U1")
    (await alice.choose_radio(message, "Postgres", hint="database")).assert_acked()
    sent = len(slack.deliveries)
    with pytest.raises(NothingSent, match="already selected"):
        await alice.choose_radio(message, "Postgres", hint="database")
    assert len(slack.deliveries) == sent
    # Another person's radio buttons are their own; a new block_id starts unselected.
    (await slack.person("U2").choose_radio(message, "Postgres", hint="database")).assert_acked()
    await web_client.chat_update(
        channel=CHANNEL, ts=message.ts, text="v2", blocks=question_blocks("r2")
    )
    (await alice.choose_radio(message, "Postgres", hint="database")).assert_acked()


async def test_finding_things_by_text_fails_loudly(
    slack: SlackEmulator, web_client: AsyncWebClient
) -> None:
    blocks = [
        section("intro", "Two questions"),
        actions("qa", choices("radio_buttons", [option("Yes", "a-yes"), option("No", "a-no")])),
        section("second", "Second question"),
        actions("qb", choices("radio_buttons", [option("Yes", "b-yes"), option("No", "b-no")])),
    ]
    posted = await web_client.chat_postMessage(channel=CHANNEL, text="t", blocks=blocks)
    message = slack.message(CHANNEL, posted["ts"])
    alice = slack.person("U1")
    with pytest.raises(
        AssertionError, match=r"(?s)No button labelled 'Approve'.*Buttons on screen: none"
    ):
        await alice.click_button(message, "Approve")
    with pytest.raises(AssertionError, match="2 options"):
        await alice.choose_radio(message, "Yes")
    with pytest.raises(AssertionError, match="No option labelled 'Maybe'"):
        await alice.choose_radio(message, "Maybe")
    with pytest.raises(AssertionError, match="No user 'U404'"):
        slack.person("U404")
    with pytest.raises(AssertionError, match="no matching message"):
        await slack.wait_for_message(CHANNEL, lambda m: "never" in m.text, timeout=0.05)
    # A hint picks the question; the app is offline, so nothing acknowledges it.
    delivery = await alice.choose_radio(message, "Yes", hint="Second question")
    assert delivery.payload["actions"][0]["selected_option"]["value"] == "b-yes"
    assert delivery.error == "no Socket Mode connection"
    assert not delivery.acked


# ---- signed HTTP interactions and response_url -------------------------------------------------


async def test_signed_http_clicks_and_tampered_ones(
    slack: SlackEmulator, web_client: AsyncWebClient, http_app: AsyncApp
) -> None:
    bodies = recorder(http_app, "approve")
    message = await post_question(slack, web_client)
    alice = slack.person("U1")

    click = await alice.click_button(message, "Approve")
    assert (click.via, click.status) == ("http", 200)
    assert (await next_body(bodies))["actions"][0]["value"] == "req-1|approve"

    for tamper in ("forged_signature", "stale_timestamp", "unsigned"):
        rejected = await alice.click_button(message, "Approve", tamper=tamper)
        assert rejected.status == 401, tamper
        assert not rejected.acked

    replayed = await slack.replay(click)
    assert replayed.status == 200
    assert replayed.request_body == click.request_body
    assert (await next_body(bodies))["trigger_id"] == click.payload["trigger_id"]
    assert bodies.empty()
    assert len(slack.unacked) == 3


async def test_response_url_replies_replaces_deletes_and_wears_out(
    slack: SlackEmulator, web_client: AsyncWebClient
) -> None:
    message = await post_question(slack, web_client)
    delivery = await slack.person("U1").click_button(message, "Approve")
    url = delivery.payload["response_url"]

    async def respond(session: aiohttp.ClientSession, body: dict[str, Any]) -> int:
        async with session.post(url, json=body) as response:
            return response.status

    async with aiohttp.ClientSession() as session:
        assert await respond(session, {"text": "just you"}) == 200
        assert await respond(session, {"text": "all", "response_type": "in_channel"}) == 200
        assert (
            await respond(session, {"replace_original": True, "blocks": [{"type": "divider"}]})
            == 400
        )
        replaced = {
            "replace_original": True,
            "text": "Answered",
            "blocks": [section("done-1", "Answered")],
        }
        assert await respond(session, replaced) == 200
        assert await respond(session, {"delete_original": True}) == 200
        assert await respond(session, {"text": "fifth use"}) == 200
        assert await respond(session, {"text": "sixth use"}) == 404

    assert (await slack.wait_for_ephemeral("U1", contains="just you")).via == "response_url"
    await slack.wait_for_ephemeral("U1", contains="fifth use", after=1)
    versions = slack.versions(CHANNEL, message.ts)
    assert [v.visible_text for v in versions[1:2]] == ["Answered"]
    assert not versions[1].has_interactive_elements
    assert versions[-1].deleted
    assert [m.text for m in slack.messages(CHANNEL)] == ["all"]
    assert slack.invalid_blocks_count == 1


async def test_a_response_url_expires_after_thirty_minutes() -> None:
    now = [1_700_000_000.0]
    async with SlackEmulator(clock=lambda: now[0]) as slack, aiohttp.ClientSession() as session:
        slack.add_user("U1", "alice")
        slack.add_channel(CHANNEL, "general")
        client = AsyncWebClient(token=slack.identity.bot_token, base_url=slack.api_url)
        message = await post_question(slack, client)
        delivery = await slack.person("U1").click_button(message, "Approve")
        now[0] += 30 * 60 + 1
        async with session.post(delivery.payload["response_url"], json={"text": "late"}) as late:
            assert (late.status, await late.json()) == (404, {"ok": False, "error": "expired_url"})
        assert slack.ephemerals("U1") == []


# ---- modals ------------------------------------------------------------------------------------


def modal(**extra: Any) -> dict[str, Any]:
    """A form with a required text input (at most 20 characters) and an optional radio group."""
    plain = {"type": "plain_text", "text": "Reason"}
    text_input = {
        "type": "plain_text_input",
        "action_id": "text",
        "max_length": 20,
        "multiline": True,
        "initial_value": "because",
    }
    radio = {"type": "radio_buttons", "action_id": "pick", "options": [option("EU", "eu")]}
    return {
        "type": "modal",
        "callback_id": "form",
        "title": {"type": "plain_text", "text": "Why?"},
        "submit": {"type": "plain_text", "text": "Send"},
        "close": {"type": "plain_text", "text": "Back"},
        "private_metadata": "req-1",
        "blocks": [
            {"type": "input", "block_id": "reason", "label": plain, "element": text_input},
            {
                "type": "input",
                "block_id": "region",
                "optional": True,
                "label": {"type": "plain_text", "text": "Region"},
                "element": radio,
            },
        ],
        **extra,
    }


async def test_a_trigger_opens_one_modal_within_three_seconds() -> None:
    now = [1_700_000_000.0]
    async with SlackEmulator(clock=lambda: now[0]) as slack:
        slack.add_user("U1", "alice")
        slack.add_channel(CHANNEL, "general")
        client = AsyncWebClient(token=slack.identity.bot_token, base_url=slack.api_url)
        message = await post_question(slack, client)
        # Nobody listens, but the click still carries a trigger id, as in Slack.
        click = await slack.person("U1").click_button(message, "Approve")
        trigger = click.payload["trigger_id"]

        opened = await client.views_open(trigger_id=trigger, view=modal())
        assert opened["view"]["id"].startswith("V")
        assert opened["view"]["callback_id"] == "form"
        assert opened["view"]["root_view_id"] == opened["view"]["id"]
        view = await slack.wait_for_view("U1")
        assert (view.id, view.title, view.private_metadata) == (
            opened["view"]["id"],
            "Why?",
            "req-1",
        )
        assert "Reason" in view.visible_text
        assert view.value("Reason") == "because"

        with pytest.raises(SlackApiError) as error:
            await client.views_open(trigger_id=trigger, view=modal())
        assert error.value.response["error"] == "exchanged_trigger_id"

        late = await slack.person("U1").click_button(message, "Approve")
        now[0] += 3.5
        with pytest.raises(SlackApiError) as error:
            await client.views_open(trigger_id=late.payload["trigger_id"], view=modal())
        assert error.value.response["error"] == "expired_trigger_id"
        with pytest.raises(SlackApiError) as error:
            await client.views_open(trigger_id="1.2.forged", view=modal())
        assert error.value.response["error"] == "invalid_arguments"
        assert error.value.response["response_metadata"]["messages"] == [
            "[ERROR] invalid `trigger_id`"
        ]
        assert len(slack.open_views("U1")) == 1


def form_app(app: AsyncApp) -> asyncio.Queue[dict[str, Any]]:
    """Approve opens the modal; a submission is answered by what was typed: `bad` gets an
    error, `update` a new view, `clear` closes everything, `elsewhere` and `too long` answers
    Slack refuses, anything else a plain ack."""
    bodies: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def on_approve(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        await client.views_open(trigger_id=body["trigger_id"], view=modal())

    async def on_submit(ack: AsyncAck, body: dict[str, Any]) -> None:
        typed = body["view"]["state"]["values"]["reason"]["text"]["value"]
        if typed == "bad":
            await ack(response_action="errors", errors={"reason": "Not that."})
        elif typed == "update":
            done = {"type": "section", "block_id": "done", "text": {"type": "mrkdwn", "text": "ok"}}
            view = {"type": "modal", "title": {"type": "plain_text", "text": "Done"}}
            await ack(response_action="update", view={**view, "blocks": [done]})
        elif typed == "clear":
            await ack(response_action="clear")
        elif typed == "elsewhere":
            await ack(response_action="errors", errors={"nowhere": "Not here."})
        elif typed == "too long":
            title = {"type": "plain_text", "text": "t" * 25}
            await ack(response_action="update", view={"type": "modal", "title": title})
        else:
            await ack()
        await bodies.put(body)

    app.action("approve")(on_approve)
    app.view("form")(on_submit)
    return bodies


async def submit_and_check(slack: SlackEmulator, web_client: AsyncWebClient, app: AsyncApp) -> None:
    bodies = form_app(app)
    message = await post_question(slack, web_client)
    alice = slack.person("U1")
    (await alice.click_button(message, "Approve")).assert_acked()
    view = await slack.wait_for_view("U1")

    refused = await alice.submit_view(view, text={"Reason": "bad"}, choose={"Region": ["EU"]})
    refused.assert_sent()
    assert refused.errors == {"reason": "Not that."}
    assert not refused.closed
    body = await next_body(bodies)
    assert body["type"] == "view_submission"
    assert body["user"]["id"] == "U1"
    assert body["view"]["private_metadata"] == "req-1"
    assert body["view"]["state"]["values"]["region"]["pick"]["selected_option"]["value"] == "eu"

    # What was typed stays in the modal; the region chosen before is still chosen.
    accepted = await alice.submit_view(view, text={"Reason": "fine"})
    accepted.assert_sent()
    assert accepted.closed
    assert (await next_body(bodies))["view"]["state"]["values"]["region"]["pick"][
        "selected_option"
    ]["value"] == "eu"
    with pytest.raises(AssertionError, match="it is closed"):
        await alice.submit_view(view)

    await alice.click_button(message, "Approve")
    second = await slack.wait_for_view("U1", after=1)
    updated = await alice.submit_view(second, text={"Reason": "update"})
    updated.assert_sent()
    assert not updated.closed
    assert (second.title, second.submit_label, len(second.versions)) == ("Done", None, 2)
    assert slack.unacked == []


async def test_a_modal_is_submitted_over_socket_mode(
    slack: SlackEmulator,
    web_client: AsyncWebClient,
    socket_app: tuple[AsyncApp, AsyncSocketModeHandler],
) -> None:
    await submit_and_check(slack, web_client, socket_app[0])


async def test_a_modal_is_submitted_over_signed_http(
    slack: SlackEmulator, web_client: AsyncWebClient, http_app: AsyncApp
) -> None:
    await submit_and_check(slack, web_client, http_app)
    await slack.person("U1").click_button(slack.messages(CHANNEL)[0], "Approve")
    view = await slack.wait_for_view("U1", after=2)
    forged = await slack.person("U1").submit_view(view, tamper="forged_signature")
    assert forged.delivery is not None
    assert forged.delivery.status == 401
    assert not forged.closed
    cleared = await slack.person("U1").submit_view(view, text={"Reason": "clear"})
    cleared.assert_sent()
    assert all(v.closed for v in slack.open_views("U1"))


async def test_slacks_client_checks_a_modal_before_sending_it(
    slack: SlackEmulator, web_client: AsyncWebClient, socket_app: tuple[AsyncApp, Any]
) -> None:
    bodies = form_app(socket_app[0])
    message = await post_question(slack, web_client)
    alice = slack.person("U1")
    await alice.click_button(message, "Approve")
    view = await slack.wait_for_view("U1")

    empty = await alice.submit_view(view, text={"Reason": ""})
    assert empty.delivery is None
    assert empty.errors == {"reason": "Please complete this required field."}
    long = await alice.submit_view(view, text={"Reason": "x" * 21})
    assert long.delivery is None
    assert "20 characters or fewer" in long.errors["reason"]
    assert bodies.empty()

    sent = await alice.submit_view(view, client_checks=False)
    sent.assert_sent()
    assert (await next_body(bodies))["view"]["state"]["values"]["reason"]["text"]["value"] == (
        "x" * 21
    )
    with pytest.raises(AssertionError, match="No input"):
        view.find_input("Nope", frozenset({"plain_text_input"}))


async def test_answers_to_a_submission_that_slack_refuses(
    slack: SlackEmulator, web_client: AsyncWebClient, socket_app: tuple[AsyncApp, Any]
) -> None:
    form_app(socket_app[0])
    message = await post_question(slack, web_client)
    alice = slack.person("U1")
    await alice.click_button(message, "Approve")
    view = await slack.wait_for_view("U1")

    misplaced = await alice.submit_view(view, text={"Reason": "elsewhere"})
    assert misplaced.problems == (
        "errors names 'nowhere', which is not the block_id of an input block",
    )
    assert misplaced.errors == {}
    with pytest.raises(AssertionError, match="Slack refused the app's answer"):
        misplaced.assert_sent()
    invalid = await alice.submit_view(view, text={"Reason": "too long"})
    assert any("less than 25 characters" in p for p in invalid.problems)
    assert len(view.versions) == 1
    assert not view.closed
