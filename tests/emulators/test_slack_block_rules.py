"""The Slack emulator refuses the blocks Slack refuses, reads rich_text like a person, and
tells which mentions and formatting a message would set off."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from .slack import (
    Mentions,
    SlackEmulator,
    mentions,
    mrkdwn_markup,
    validate_blocks,
    visible_text,
)

CHANNEL = "C0GENERAL"


@pytest.fixture
async def slack() -> AsyncIterator[SlackEmulator]:
    async with SlackEmulator() as emulator:
        emulator.add_user("U1", "alice")
        emulator.add_user("U2", "bob")
        emulator.add_usergroup("S0123", ["U1", "U2"], handle="deployers")
        emulator.add_channel(CHANNEL, "general")
        yield emulator


@pytest.fixture
def client(slack: SlackEmulator) -> AsyncWebClient:
    return AsyncWebClient(token=slack.identity.bot_token, base_url=slack.api_url)


# ---- builders ----------------------------------------------------------------------------------


def plain(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "plain_text", "text": text, **extra}


def mrkdwn(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text, **extra}


def section(text: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "section", "block_id": "s", "text": text, **extra}


def context(*elements: dict[str, Any]) -> dict[str, Any]:
    return {"type": "context", "block_id": "c", "elements": list(elements)}


def actions(*elements: dict[str, Any]) -> dict[str, Any]:
    return {"type": "actions", "block_id": "a", "elements": list(elements)}


def button(text: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "button", "action_id": "go", "text": text, "value": "1", **extra}


def radio(*values: str) -> dict[str, Any]:
    options = [{"text": plain(f"Option {v}"), "value": v} for v in values]
    return {"type": "radio_buttons", "action_id": "pick", "options": options}


def confirm(**parts: Any) -> dict[str, Any]:
    return {"title": plain("Sure?"), "text": plain("Really?"), "confirm": plain("Yes"), **parts}


def rich(*elements: dict[str, Any]) -> dict[str, Any]:
    return {"type": "rich_text", "block_id": "r", "elements": list(elements)}


def rsection(*elements: dict[str, Any]) -> dict[str, Any]:
    return {"type": "rich_text_section", "elements": list(elements)}


def rtext(text: str, **style: bool) -> dict[str, Any]:
    element: dict[str, Any] = {"type": "text", "text": text}
    if style:
        element["style"] = style
    return element


def rlist(style: str, *items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "rich_text_list", "style": style, "elements": list(items), **extra}


# ---- what Slack refuses ------------------------------------------------------------------------

PROBES: dict[str, tuple[list[dict[str, Any]], str]] = {
    "empty section text": ([section(mrkdwn(""))], "/blocks/0/text/text"),
    "blank section text": ([section(mrkdwn("  \n"))], "more than 0 characters"),
    "context text over 3000": ([context(mrkdwn("c" * 3001))], "less than 3001 characters"),
    "button in a context block": (
        [context(button(plain("Go")))],
        "button is not allowed in a context block",
    ),
    "mrkdwn button text": (
        [actions(button(mrkdwn("*Go*")))],
        "must be plain_text, not mrkdwn [json-pointer:/blocks/0/elements/0/text/type]",
    ),
    "duplicate option values": ([actions(radio("a", "b", "a"))], "duplicate option value 'a'"),
    "confirm without deny": (
        [actions(button(plain("Go"), confirm=confirm()))],
        "missing required field: deny",
    ),
    "unknown block type": ([{"type": "carousel", "block_id": "x"}], "unsupported type: carousel"),
    "unknown element type": (
        [actions({"type": "slider", "action_id": "s"})],
        "unsupported type: slider",
    ),
    "unknown block field": (
        [section(mrkdwn("x"), color="red")],
        "invalid additional property: color [json-pointer:/blocks/0]",
    ),
    "unknown element field": (
        [actions(button(plain("Go"), tooltip="hi"))],
        "invalid additional property: tooltip",
    ),
    "emoji on a mrkdwn text": (
        [section(mrkdwn("x", emoji=True))],
        "invalid additional property: emoji [json-pointer:/blocks/0/text]",
    ),
    "bogus text type": ([section({"type": "bogus", "text": "x"})], "unsupported type: bogus"),
    "mrkdwn header": (
        [{"type": "header", "block_id": "h", "text": mrkdwn("x")}],
        "must be plain_text, not mrkdwn",
    ),
    "mrkdwn select option": (
        [
            {
                "type": "section",
                "block_id": "s",
                "text": mrkdwn("Pick"),
                "accessory": {
                    "type": "static_select",
                    "action_id": "p",
                    "options": [{"text": mrkdwn("*a*"), "value": "a"}],
                },
            }
        ],
        "must be plain_text, not mrkdwn",
    ),
    "rich_text without elements": ([rich()], "must provide at least 1 item"),
    "unknown rich_text element": (
        [rich({"type": "rich_text_table", "elements": []})],
        "unsupported type: rich_text_table",
    ),
    "unknown inline element": (
        [rich(rsection({"type": "color", "value": "#fff"}))],
        "unsupported type: color",
    ),
    "empty rich text": ([rich(rsection(rtext("")))], "/blocks/0/elements/0/elements/0/text"),
    "unknown text field": (
        [rich(rsection({"type": "text", "text": "x", "bold": True}))],
        "invalid additional property: bold",
    ),
    "unknown style": ([rich(rsection(rtext("x", underline=True)))], "property: underline"),
    "non-boolean style": (
        [rich(rsection({"type": "text", "text": "x", "style": {"bold": 1}}))],
        "must be a boolean [json-pointer:/blocks/0/elements/0/elements/0/style/bold]",
    ),
    "list of plain text": (
        [rich(rlist("bullet", rtext("x")))],
        "unsupported type: text (expected rich_text_section)",
    ),
    "list style": ([rich(rlist("dashed", rsection(rtext("x"))))], "style must be one of"),
    "list indent 9": (
        [rich(rlist("bullet", rsection(rtext("x")), indent=9))],
        "indent must be an integer from 0 to 8",
    ),
    "bad broadcast range": (
        [rich(rsection({"type": "broadcast", "range": "all"}))],
        "range must be one of here | channel | everyone",
    ),
    "user without id": ([rich(rsection({"type": "user"}))], "/user_id"),
    "date without format": (
        [rich(rsection({"type": "date", "timestamp": 1700000000}))],
        "/elements/0/elements/0/format",
    ),
    "date with a string timestamp": (
        [rich(rsection({"type": "date", "timestamp": "1700000000", "format": "{date}"}))],
        "timestamp must be an integer",
    ),
    "mention in preformatted text": (
        [rich({"type": "rich_text_preformatted", "elements": [{"type": "user", "user_id": "U1"}]})],
        "unsupported type: user",
    ),
}


@pytest.mark.parametrize("case", sorted(PROBES))
async def test_the_emulator_refuses_what_slack_refuses(
    slack: SlackEmulator, client: AsyncWebClient, case: str
) -> None:
    blocks, expected = PROBES[case]
    with pytest.raises(SlackApiError) as error:
        await client.chat_postMessage(channel=CHANNEL, text="t", blocks=blocks)
    answer = error.value.response
    assert answer["error"] == "invalid_blocks"
    assert any(expected in e for e in answer["errors"]), answer["errors"]
    assert slack.block_rejections[0].errors == answer["errors"]
    assert slack.messages(CHANNEL) == []


ACCEPTED: dict[str, list[dict[str, Any]]] = {
    "plain context with emoji": [context(plain(":wave: hi", emoji=True), mrkdwn("*x*"))],
    "header": [{"type": "header", "block_id": "h", "text": plain("Deploy?", emoji=True)}],
    "mrkdwn radio options": [
        actions(
            {
                "type": "radio_buttons",
                "action_id": "r",
                "options": [{"text": mrkdwn("*a*"), "value": "a", "description": mrkdwn("d")}],
            }
        )
    ],
    "confirm with everything": [
        actions(button(plain("Go"), confirm=confirm(deny=plain("No"), style="danger")))
    ],
    "verbatim mrkdwn": [section(mrkdwn("<https://e.example>", verbatim=True))],
    "every rich_text element": [
        rich(
            rsection(
                rtext("Plain "),
                rtext("bold", bold=True, italic=True, strike=True, code=True),
                {"type": "link", "url": "https://e.example", "text": "a link"},
                {"type": "emoji", "name": "wave", "unicode": "1f44b"},
                {"type": "user", "user_id": "U1"},
                {"type": "usergroup", "usergroup_id": "S0123"},
                {"type": "channel", "channel_id": CHANNEL},
                {"type": "broadcast", "range": "here"},
                {"type": "date", "timestamp": 1700000000, "format": "{date}", "fallback": "Nov"},
            ),
            rlist("ordered", rsection(rtext("one")), rsection(rtext("two")), indent=8, offset=2),
            {"type": "rich_text_preformatted", "elements": [rtext("code *not bold*")], "border": 0},
            {"type": "rich_text_quote", "elements": [rtext("quoted")]},
        )
    ],
}


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_what_slack_accepts_passes(case: str) -> None:
    assert validate_blocks(ACCEPTED[case]) == []


# ---- reading rich_text -------------------------------------------------------------------------


async def test_rich_text_reads_as_a_person_sees_it(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    posted = await client.chat_postMessage(
        channel=CHANNEL, text="fallback", blocks=ACCEPTED["every rich_text element"]
    )
    shown = slack.message(CHANNEL, posted["ts"]).visible_text
    assert shown.splitlines() == [
        "Plain *_~`bold`~_*<https://e.example|a link>:wave:<@U1><!subteam^S0123>"
        f"<#{CHANNEL}><!here><!date^1700000000^{{date}}|Nov>",
        " " * 32 + "3. one",
        " " * 32 + "4. two",
        "```",
        "code *not bold*",
        "```",
        "> quoted",
    ]
    dated = rich(rsection({"type": "date", "timestamp": 0, "format": "{date_short}"}))
    assert visible_text("", [dated]) == "<!date^0^{date_short}|1970-01-01 00:00 UTC>"
    bullets = rich(rlist("bullet", rsection(rtext("a")), indent=1))
    assert visible_text("", [bullets]) == "    • a"


# ---- mentions ----------------------------------------------------------------------------------


def test_mentions_in_mrkdwn_text_and_rich_text() -> None:
    blocks = [
        section(mrkdwn("Hi <@U1> and <!subteam^S0123|@deployers>, see <https://e.example|this>")),
        context(mrkdwn("<!here> <#C0GENERAL|general>"), plain("<!everyone> <@U9>")),
        rich(
            rsection(
                rtext("<!channel> <@U8> is just text here"),
                {"type": "user", "user_id": "U2"},
                {"type": "usergroup", "usergroup_id": "S0999"},
                {"type": "broadcast", "range": "everyone"},
                {"type": "link", "url": "https://r.example"},
            )
        ),
    ]
    found = mentions("Deploy? <mailto:a@e.example|mail> <!date^1700000000^{date}|Nov 14>", blocks)
    assert found == Mentions(
        users=frozenset({"U1", "U2"}),
        usergroups=frozenset({"S0123", "S0999"}),
        broadcasts=frozenset({"here", "everyone"}),
        channels=frozenset({"C0GENERAL"}),
        links=frozenset({"https://e.example", "mailto:a@e.example", "https://r.example"}),
    )
    assert found.pings


def test_escaped_and_plain_text_mention_nobody() -> None:
    blocks = [
        section(mrkdwn("&lt;!channel&gt; &lt;@U1&gt; @here")),
        {"type": "header", "block_id": "h", "text": plain("<!channel>")},
        actions(button(plain("<@U1>"))),
    ]
    found = mentions("&lt;!everyone&gt;", blocks)
    assert found == Mentions()
    assert found.none
    assert found.broadcasts == set()


async def test_every_stored_message_and_note_records_its_mentions(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    posted = await client.chat_postMessage(
        channel=CHANNEL, text="<!channel> look", blocks=[section(mrkdwn("by <@U1>"))]
    )
    message = slack.message(CHANNEL, posted["ts"])
    assert message.mentions.broadcasts == {"channel"}
    assert message.mentions.users == {"U1"}
    quiet = rich(rsection(rtext("<!channel> by "), {"type": "user", "user_id": "U2"}))
    await client.chat_update(channel=CHANNEL, ts=posted["ts"], text="look", blocks=[quiet])
    updated = await slack.wait_for_update(CHANNEL, posted["ts"])
    assert updated.mentions == Mentions(users=frozenset({"U2"}))
    assert updated.visible_text == "<!channel> by <@U2>"

    await client.chat_postEphemeral(channel=CHANNEL, user="U2", text="only <@U2>, not <!here>")
    note = await slack.wait_for_ephemeral("U2", contains="only")
    assert note.mentions == Mentions(users=frozenset({"U2"}), broadcasts=frozenset({"here"}))


# ---- live mrkdwn -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "emphasis"),
    [
        ("*bold*", ["*bold*"]),
        ("a _b c_ d", ["_b c_"]),
        ("(~gone~)", ["~gone~"]),
        ("Yes *b*", ["*b*"]),
        ("* not bold *", []),
        ("*not bold *", []),
        ("snake_case_name", []),
        ("2*3*4", []),
        ("a * b * c", []),
        ("**", []),
        ("*one\nline*", []),
        ("`*in code*`", []),
        ("```*fenced*```", []),
        ("<https://e.example/_x_|link>", []),
        ("&lt;*b*&gt;", ["*b*"]),
    ],
)
def test_live_mrkdwn_emphasis(text: str, emphasis: list[str]) -> None:
    assert list(mrkdwn_markup(text).emphasis) == emphasis


def test_live_mrkdwn_code_and_fences() -> None:
    closed = mrkdwn_markup("run ```make``` or `ls`")
    assert closed.code == ("```make```", "`ls`")
    assert not closed.open_fence
    assert closed.live
    opened = mrkdwn_markup("one ``` fence, and *bold* after it")
    assert opened.open_fence
    assert opened.emphasis == ("*bold*",)
    assert not mrkdwn_markup("nothing at all: 2 * 3, a_b, ~ ` ").live


async def test_everything_sent_can_be_checked_at_once(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    posted = await client.chat_postMessage(channel=CHANNEL, text="quiet")
    await client.chat_update(channel=CHANNEL, ts=posted["ts"], text="now <!here>")
    await client.chat_delete(channel=CHANNEL, ts=posted["ts"])
    await client.chat_postEphemeral(channel=CHANNEL, user="U1", text="psst <@U1>")
    sent = slack.sent()
    assert [m.text for m in sent] == ["quiet", "now <!here>", "now <!here>", "psst <@U1>"]
    assert [m.mentions.pings for m in sent] == [False, True, True, True]
