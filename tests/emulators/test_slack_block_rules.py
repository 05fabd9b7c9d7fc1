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
    validate_view,
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
    "checkboxes with no initial options": (
        [actions({**radio("a", "b"), "type": "checkboxes", "initial_options": []})],
        "must provide at least 1 items [json-pointer:/blocks/0/elements/0/initial_options]",
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


# ---- modals ------------------------------------------------------------------------------------


def text_input(**extra: Any) -> dict[str, Any]:
    return {
        "type": "input",
        "block_id": "i",
        "label": plain("Why?"),
        "element": {"type": "plain_text_input", "action_id": "t", **extra},
    }


def view(*blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    base = {"type": "modal", "title": plain("Answer"), "submit": plain("Send")}
    return {**base, "blocks": list(blocks or [text_input()]), **extra}


def radio_input(**extra: Any) -> dict[str, Any]:
    return {"type": "input", "block_id": "r", "label": plain("Pick"), "element": radio("a", "b")}


VIEW_PROBES: dict[str, tuple[dict[str, Any], str]] = {
    "home view": (view(type="home"), "type must be modal, not 'home' [json-pointer:/view/type]"),
    "no title": ({"type": "modal", "blocks": []}, "missing required field: title"),
    "title over 24": (view(title=plain("t" * 25)), "less than 25 characters"),
    "submit over 24": (view(submit=plain("s" * 25)), "/view/submit/text"),
    "close over 24": (view(close=plain("c" * 25)), "/view/close/text"),
    "mrkdwn title": (view(title=mrkdwn("*t*")), "must be plain_text, not mrkdwn"),
    "inputs without submit": (
        {"type": "modal", "title": plain("t"), "blocks": [text_input()]},
        "missing required field: submit",
    ),
    "101 blocks": (
        view(*[section(mrkdwn("x")) | {"block_id": f"b{i}"} for i in range(101)]),
        "less than 101 items",
    ),
    "private_metadata over 3000": (
        view(private_metadata="m" * 3001),
        "less than 3001 characters (got 3001) [json-pointer:/view/private_metadata]",
    ),
    "callback_id over 255": (view(callback_id="c" * 256), "/view/callback_id"),
    "unknown view field": (view(color="red"), "invalid additional property: color"),
    "max_length over 3000": (view(text_input(max_length=3001)), "max_length must be an integer"),
    "max_length 0": (view(text_input(max_length=0)), "from 1 to 3000"),
    "min_length over max_length": (
        view(text_input(min_length=5, max_length=4)),
        "min_length must not be more than max_length",
    ),
    "initial_value over max_length": (
        view(text_input(max_length=3, initial_value="four")),
        "initial_value is longer than max_length 3",
    ),
    "initial_value over 3000": (
        view(text_input(initial_value="v" * 3001)),
        "longer than max_length 3000",
    ),
    "multiline not a boolean": (view(text_input(multiline="yes")), "/element/multiline"),
    "label over 2000": (
        view(text_input() | {"label": plain("l" * 2001)}),
        "/view/blocks/0/label/text",
    ),
    "hint over 2000": (view(text_input() | {"hint": plain("h" * 2001)}), "/view/blocks/0/hint"),
    "two focused elements": (
        view(text_input(focus_on_load=True), text_input(focus_on_load=True) | {"block_id": "j"}),
        "only one element may set focus_on_load",
    ),
    "initial option not offered": (
        view(
            radio_input()
            | {"element": radio("a") | {"initial_option": {"text": plain("A"), "value": "a"}}}
        ),
        "must match one of the options exactly",
    ),
    "a multi-select with no initial options": (
        view(
            radio_input()
            | {"element": radio("a") | {"type": "multi_static_select", "initial_options": []}}
        ),
        "must provide at least 1 items [json-pointer:/view/blocks/0/element/initial_options]",
    ),
    "button in an input block": (
        view(text_input() | {"element": button(plain("Go"))}),
        "button is not allowed in an input block",
    ),
}


@pytest.mark.parametrize("case", sorted(VIEW_PROBES))
async def test_the_emulator_refuses_the_modals_slack_refuses(
    slack: SlackEmulator, client: AsyncWebClient, case: str
) -> None:
    shown, expected = VIEW_PROBES[case]
    trigger = slack.views.issue_trigger("U1")
    with pytest.raises(SlackApiError) as error:
        await client.views_open(trigger_id=trigger, view=shown)
    answer = error.value.response
    assert answer["error"] == "invalid_arguments"
    assert any(expected in e for e in answer["errors"]), answer["errors"]
    assert slack.block_rejections[0].source == "views.open"
    assert slack.open_views("U1") == []
    # The trigger was not spent on a view Slack refused.
    assert not slack.views.triggers[trigger].used


def test_a_modal_at_the_limits_passes() -> None:
    options = [{"text": plain("A"), "value": "a"}, {"text": plain("B"), "value": "b"}]
    checks = {
        "type": "checkboxes",
        "action_id": "c",
        "options": options,
        "initial_options": [options[1]],
    }
    fields = [
        text_input(max_length=3000, initial_value="v" * 3000, multiline=True, focus_on_load=True),
        {"type": "input", "block_id": "c", "label": plain("l" * 2000), "element": checks},
        text_input(min_length=0, max_length=1) | {"block_id": "n", "optional": True},
    ]
    padding = [section(mrkdwn("x")) | {"block_id": f"p{i}"} for i in range(97)]
    full = view(
        *fields,
        *padding,
        title=plain("t" * 24),
        submit=plain("s" * 24),
        close=plain("c" * 24),
        private_metadata="m" * 3000,
        callback_id="c" * 255,
        clear_on_close=True,
        notify_on_close=False,
    )
    assert validate_view(full) == []
    assert validate_view(view(submit=None) | {"blocks": []}) == [
        "missing required field: text object [json-pointer:/view/submit]"
    ]
    assert validate_view({"type": "modal", "title": plain("Read only"), "blocks": []}) == []
