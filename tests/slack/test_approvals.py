"""Team approvals in Slack: who may answer, user groups, a quorum with a live tally, deadlines
and reminders, restarts, the CLI deploy gate, and tool-permission prompts, each with its story
in the audit trail."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askbridge.adapters.slack.ids import ActionId
from askbridge.adapters.slack.render import one_line, render
from askbridge.adapters.slack.text import FENCE, prose
from askbridge.core.clock import ManualClock
from askbridge.core.models import (
    Person,
    Policy,
    QuestionOption,
    Request,
    Status,
    UserQuestion,
    Vote,
)
from askbridge.core.view import RequestView
from tests.conftest import DEPLOY, story
from tests.emulators.slack import Message, SlackEmulator, block_texts, validate_blocks
from tests.hostile import nodes
from tests.server_process import ServerProcess
from tests.slack.conftest import (
    CHANNEL,
    TARGET,
    Bridge,
    Mode,
    answer_fully,
    ask_body,
    serving,
)

APPROVE = {"Deploy": "Approve"}


async def ask_deploy(bridge: Bridge, request_id: str, **fields: Any) -> Message:
    return await bridge.ask(
        {"request_id": request_id, "questions": [DEPLOY], "target": TARGET, **fields}
    )


def block_ids(message: Message) -> set[str]:
    return {str(block["block_id"]) for block in message.blocks}


def thread_replies(slack: SlackEmulator, message: Message) -> list[Message]:
    return [m for m in slack.messages(message.channel) if m.thread_ts == message.ts]


def voters(found: dict[str, Any]) -> list[tuple[str, dict[str, str]]]:
    return sorted((v["voter"]["id"], v["answers"]) for v in found["votes"])


# ---- who may answer -----------------------------------------------------------------------------


async def test_a_non_answerer_is_told_who_may_answer(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await ask_deploy(bridge, "ask_who", answerers=["slack:U2"])
    assert "Who may answer: <@U2>" in message.visible_text

    alice = slack.person("U1")
    (await alice.click_button(message, "Approve")).assert_acked()
    note = await slack.wait_for_ephemeral(
        "U1", contains="Only these people may answer this question: <@U2>."
    )
    assert "Your click was not counted." in note.visible_text
    assert note.channel == message.channel
    # Cancelling is answering too.
    (await alice.click_button(message, "Cancel")).assert_acked()
    await slack.wait_for_ephemeral("U1", contains="Only these people may answer", after=1)

    found = await bridge.status("ask_who")
    assert found["status"] == "waiting"
    assert found["votes"] == []
    assert slack.call_count("chat.update") == 0
    assert await story(bridge.http, bridge.url, "ask_who", who="id") == [
        ("created", None),
        ("posted", None),
        ("denied", "U1"),
        ("denied", "U1"),
    ]

    (await slack.person("U2").click_button(message, "Reject")).assert_acked()
    outcome = await bridge.outcome("ask_who")
    assert outcome["answers"] == {"Deploy": "Reject"}
    assert outcome["answered_by"]["id"] == "U2"
    final = await bridge.final(message)
    assert "Answered by <@U2>" in final.visible_text
    assert slack.ephemerals("U2") == []
    assert slack.call_count("usergroups.users.list") == 0
    assert await story(bridge.http, bridge.url, "ask_who", who="id") == [
        ("created", None),
        ("posted", None),
        ("denied", "U1"),
        ("denied", "U1"),
        ("vote", "U2"),
        ("answered", "U2"),
    ]


async def test_user_group_membership_decides_who_may_answer(
    bridge: Bridge, clock: ManualClock
) -> None:
    slack = bridge.slack
    slack.add_user("U3", "carol")
    slack.add_usergroup("S0123", ["U1", "U2"])
    message = await ask_deploy(bridge, "ask_group", answerers=["slack-group:S0123"])
    assert "Who may answer: <!subteam^S0123>" in message.visible_text

    (await slack.person("U3").click_button(message, "Approve")).assert_acked()
    await slack.wait_for_ephemeral("U3", contains="may answer this question: <!subteam^S0123>.")
    assert (await bridge.status("ask_group"))["votes"] == []

    (await slack.person("U2").click_button(message, "Approve")).assert_acked()
    outcome = await bridge.outcome("ask_group")
    assert outcome["answers"] == APPROVE
    assert outcome["answered_by"]["id"] == "U2"
    assert await story(bridge.http, bridge.url, "ask_group", who="id") == [
        ("created", None),
        ("posted", None),
        ("denied", "U3"),
        ("vote", "U2"),
        ("answered", "U2"),
    ]
    # Both clicks were decided by one look at the group.
    assert [c["usergroup"] for c in slack.calls("usergroups.users.list")] == ["S0123"]

    # Carol joins the group: askbridge notices within a minute, not on every click.
    slack.add_usergroup("S0123", ["U1", "U2", "U3"])
    second = await ask_deploy(bridge, "ask_group_2", answerers=["slack-group:S0123"])
    carol = slack.person("U3")
    (await carol.click_button(second, "Reject")).assert_acked()
    await slack.wait_for_ephemeral("U3", contains="may answer", after=1)
    await clock.advance(61)
    (await carol.click_button(second, "Reject")).assert_acked()
    outcome = await bridge.outcome("ask_group_2")
    assert outcome["answered_by"]["id"] == "U3"
    assert slack.call_count("usergroups.users.list") == 2
    assert await story(bridge.http, bridge.url, "ask_group_2", who="id") == [
        ("created", None),
        ("posted", None),
        ("denied", "U3"),
        ("vote", "U3"),
        ("answered", "U3"),
    ]


async def test_a_group_slack_cannot_list_is_named_in_the_note(http_bridge: Bridge) -> None:
    bridge, slack = http_bridge, http_bridge.slack
    slack.add_usergroup("S0123", ["U1"])
    message = await ask_deploy(bridge, "ask_scope", answerers=["slack-group:S0123"])
    slack.fail_next("usergroups.users.list", 200, error="missing_scope")
    alice = slack.person("U1")
    (await alice.click_button(message, "Approve")).assert_acked()
    note = await slack.wait_for_ephemeral("U1", contains="could not check who is in")
    assert "<!subteam^S0123>" in note.visible_text
    # The failure is not remembered: the next click asks Slack again and counts.
    (await alice.click_button(message, "Approve")).assert_acked()
    assert (await bridge.outcome("ask_scope"))["answered_by"]["id"] == "U1"
    assert slack.call_count("usergroups.users.list") == 2
    assert await bridge.event_kinds("ask_scope") == [
        "created",
        "posted",
        "denied",
        "vote",
        "answered",
    ]


# ---- quorum -------------------------------------------------------------------------------------


async def test_a_quorum_of_two_needs_two_matching_votes(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await ask_deploy(bridge, "ask_quorum", quorum=2)
    assert "Needs 2 matching votes" in message.visible_text
    alice, bob = slack.person("U1"), slack.person("U2")

    (await alice.click_button(message, "Approve")).assert_acked()
    await slack.wait_for_ephemeral(
        "U1", contains="Your vote is counted: 1 of 2 matching votes so far, for Deploy: Approve."
    )
    shown = await slack.wait_for_update(
        message.channel, message.ts, lambda m: "Approve — 1/2 (<@U1>)" in m.visible_text
    )
    assert shown.has_interactive_elements
    # Progress renders keep the block_ids, so nobody's unsubmitted choices are cleared.
    assert block_ids(message) < block_ids(shown)

    # A different answer from someone else does not end it.
    (await bob.click_button(message, "Reject")).assert_acked()
    await slack.wait_for_ephemeral(
        "U2", contains="1 of 2 matching votes so far, for Deploy: Reject."
    )
    shown = await slack.wait_for_update(
        message.channel, message.ts, lambda m: "Reject — 1/2 (<@U2>)" in m.visible_text
    )
    assert "Approve — 1/2 (<@U1>)" in shown.visible_text
    assert (await bridge.status("ask_quorum"))["status"] == "waiting"

    # Bob changes his vote: now two people agree.
    (await bob.click_button(message, "Approve")).assert_acked()
    final = await bridge.outcome("ask_quorum")
    assert final["status"] == "answered"
    assert final["answers"] == APPROVE
    assert final["answered_by"]["id"] == "U2"
    assert voters(final) == [("U1", APPROVE), ("U2", APPROVE)]

    ended = await bridge.final(message)
    # The mark and the words it heads apart, as the code says.
    assert ":white_check_mark: Answered by <@U1>, <@U2> (2 matching votes)" in ended.visible_text
    assert "Approve — 2/2 (<@U1>, <@U2>)" in ended.visible_text
    assert block_ids(ended).isdisjoint(block_ids(message))
    assert "alice, bob" in ended.text
    # The deciding vote needs no note: the message says it all.
    assert len(slack.ephemerals("U2")) == 1
    assert await bridge.event_kinds("ask_quorum") == [
        "created",
        "posted",
        "vote",
        "vote",
        "vote",
        "answered",
    ]
    assert slack.invalid_blocks_count == 0, slack.block_rejections
    assert slack.unacked == []


async def test_a_tally_update_keeps_everyones_unsubmitted_choices(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(ask_body("ask_keep", quorum=2))
    alice = slack.person("U1")
    await alice.choose_radio(message, "SQLite")

    (await answer_fully(bridge, "U2", message)).assert_acked()
    await slack.wait_for_update(message.channel, message.ts, lambda m: "1/2" in m.visible_text)

    # Alice goes on where she left off; her radio choice was not cleared by the update.
    await alice.tick_checkboxes(message, ["Logging"])
    (await alice.click_button(message, "Submit")).assert_acked()
    await slack.wait_for_ephemeral("U1", contains="Your vote is counted: 1 of 2")
    found = await bridge.status("ask_keep")
    assert found["status"] == "waiting"
    assert voters(found) == [
        ("U1", {"Database": "SQLite", "Features": "Logging"}),
        ("U2", {"Database": "PostgreSQL", "Features": "Caching, Metrics"}),
    ]


async def test_a_replayed_click_never_changes_a_vote(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await ask_deploy(bridge, "ask_replay", quorum=2)
    alice, bob = slack.person("U1"), slack.person("U2")
    approve = await alice.click_button(message, "Approve")
    approve.assert_acked()
    await slack.wait_for_ephemeral(
        "U1", contains="1 of 2 matching votes so far, for Deploy: Approve."
    )
    (await alice.click_button(message, "Reject")).assert_acked()
    await slack.wait_for_ephemeral(
        "U1", contains="1 of 2 matching votes so far, for Deploy: Reject.", after=1
    )

    # The earlier click, replayed within Slack's five minutes with its valid signature.
    (await slack.replay(approve)).assert_acked()
    # Had the replay counted, Alice would agree with Bob now, and his vote would decide.
    (await bob.click_button(message, "Approve")).assert_acked()
    await slack.wait_for_ephemeral(
        "U2", contains="1 of 2 matching votes so far, for Deploy: Approve."
    )
    found = await bridge.status("ask_replay")
    assert found["status"] == "waiting"
    assert voters(found) == [("U1", {"Deploy": "Reject"}), ("U2", APPROVE)]
    assert (await bridge.event_kinds("ask_replay")).count("vote") == 3
    assert len(slack.ephemerals("U1")) == 2, "the replay is not answered"


# ---- deadlines and reminders --------------------------------------------------------------------


async def test_the_deadline_gives_the_default_answers_after_one_reminder(
    bridge: Bridge, clock: ManualClock
) -> None:
    slack = bridge.slack
    slack.add_usergroup("S0123", ["U2"])
    message = await ask_deploy(
        bridge,
        "ask_default",
        answerers=["slack:U1", "slack-group:S0123"],
        timeout_s=300,
        on_timeout={"answers": {"Deploy": "Reject"}},
        remind_after_s=120,
    )
    assert "Who may answer: <@U1>, <!subteam^S0123>" in message.visible_text
    assert "If nobody decides by <!date^" in message.visible_text
    assert "UTC>, the answer is Reject" in message.visible_text

    await clock.advance(120)
    reminder = await slack.wait_for_message(CHANNEL, lambda m: m.thread_ts == message.ts)
    assert reminder.text.startswith(
        ":bell: Reminder for <@U1>, <!subteam^S0123>: this question is still"
    )
    assert "UTC>, the answer is Reject." in reminder.text
    assert (await bridge.status("ask_default"))["reminded_at"] is not None

    await clock.advance(180)
    outcome = await bridge.outcome("ask_default")
    assert outcome["status"] == "answered"
    assert outcome["answers"] == {"Deploy": "Reject"}
    assert outcome["decided_by"] == "timeout"
    assert "answered_by" not in outcome
    final = await bridge.final(message)
    assert "Decided by timeout" in final.visible_text
    assert "→ *Reject*" in final.visible_text
    assert final.text == "Decided by timeout: Deploy: Reject"
    assert thread_replies(slack, message) == [reminder]
    assert await bridge.event_kinds("ask_default") == ["created", "posted", "reminder", "answered"]


async def test_the_deadline_expires_a_request_without_default_answers(
    bridge: Bridge, clock: ManualClock
) -> None:
    slack = bridge.slack
    message = await ask_deploy(bridge, "ask_lapse", quorum=2, timeout_s=300, remind_after_s=200)
    assert "Open until <!date^" in message.visible_text
    (await slack.person("U1").click_button(message, "Approve")).assert_acked()
    await slack.wait_for_update(message.channel, message.ts, lambda m: "1/2" in m.visible_text)

    await clock.advance(200)
    reminder = await slack.wait_for_message(CHANNEL, lambda m: m.thread_ts == message.ts)
    # Anyone may answer, so nobody in particular is mentioned.
    assert reminder.text.startswith(":bell: Reminder: this question is still waiting")
    assert "<@" not in reminder.text
    assert "It has 1 of 2 matching votes so far." in reminder.text

    await clock.advance(100)
    outcome = await bridge.outcome("ask_lapse")
    assert outcome["status"] == "expired"
    assert outcome["error"] == "Timed out waiting for an answer"
    final = await bridge.final(message)
    assert "Expired without an answer" in final.visible_text
    assert "Approve — 1/2 (<@U1>)" in final.visible_text
    assert thread_replies(slack, message) == [reminder]
    assert await bridge.event_kinds("ask_lapse") == [
        "created",
        "posted",
        "vote",
        "reminder",
        "expired",
    ]


async def test_a_reminder_for_a_question_in_a_thread_goes_to_that_thread(
    bridge: Bridge, clock: ManualClock
) -> None:
    slack = bridge.slack
    parent = await slack.workspace.post(CHANNEL, "Release 4711", [])
    target = f"{TARGET}/{parent.ts}"
    message = await ask_deploy(bridge, "ask_in_thread", target=target, remind_after_s=60)
    await clock.advance(60)
    reminder = await slack.wait_for_message(
        CHANNEL, lambda m: m.thread_ts == parent.ts and m.ts != message.ts
    )
    assert "still waiting" in reminder.text
    assert thread_replies(slack, message) == []
    assert await bridge.event_kinds("ask_in_thread") == ["created", "posted", "reminder"]


# ---- restarts and the CLI -----------------------------------------------------------------------


async def test_a_half_reached_quorum_survives_a_crash(
    server: ServerProcess, slack: SlackEmulator, mode: Mode, http: aiohttp.ClientSession
) -> None:
    await serving(server, slack, mode)
    body = {"request_id": "ask_crash_vote", "questions": [DEPLOY], "target": TARGET, "quorum": 2}
    async with http.post(f"{server.url}/v1/questions", json=body) as response:
        created = await response.json()
        assert response.status == 201, created
    message = slack.message(CHANNEL, created["messages"][0]["message_id"])
    (await slack.person("U1").click_button(message, "Approve")).assert_acked()
    await slack.wait_for_ephemeral("U1", contains="Your vote is counted: 1 of 2")

    await server.kill()
    await serving(server, slack, mode, port=server.port)
    async with http.get(f"{server.url}/v1/questions/ask_crash_vote") as response:
        found = await response.json()
    assert found["status"] == "waiting"
    assert voters(found) == [("U1", APPROVE)]

    (await slack.person("U2").click_button(message, "Approve")).assert_acked()
    async with http.get(f"{server.url}/v1/questions/ask_crash_vote?wait=10") as response:
        final = await response.json()
    assert final["status"] == "answered"
    assert voters(final) == [("U1", APPROVE), ("U2", APPROVE)]
    ended = await slack.wait_for_update(
        message.channel, message.ts, lambda m: not m.has_interactive_elements
    )
    assert "Answered by <@U1>, <@U2>" in ended.visible_text
    assert await story(http, server.url, "ask_crash_vote", who="id") == [
        ("created", None),
        ("posted", None),
        ("vote", "U1"),
        ("vote", "U2"),
        ("answered", "U2"),
    ]


@pytest.mark.parametrize("mode", ["socket"])
async def test_askbridge_ask_exits_0_once_two_group_members_approve(
    server: ServerProcess, slack: SlackEmulator, mode: Mode, http: aiohttp.ClientSession
) -> None:
    slack.add_user("U3", "carol")
    slack.add_usergroup("S0123", ["U1", "U2"])
    await serving(server, slack, mode)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASKBRIDGE_", "SLACK_"))}
    ask = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "askbridge.bots.cli",
        "ask",
        "--url",
        server.url,
        "--target",
        TARGET,
        "--answerer",
        "slack-group:S0123",
        "--quorum",
        "2",
        "--request-id",
        "ask_cli_gate",
        "--question",
        "Deploy build 4711 to production?",
        "--header",
        "Deploy",
        "--option",
        "Approve=Ship it",
        "--option",
        "Reject=Hold the release",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        message = await slack.wait_for_message(CHANNEL, timeout=20)
        assert "Who may answer: <!subteam^S0123> · Needs 2 matching votes" in message.visible_text
        (await slack.person("U3").click_button(message, "Approve")).assert_acked()
        await slack.wait_for_ephemeral("U3", contains="<!subteam^S0123>")
        (await slack.person("U1").click_button(message, "Approve")).assert_acked()
        await slack.wait_for_ephemeral("U1", contains="Your vote is counted: 1 of 2")
        (await slack.person("U2").click_button(message, "Approve")).assert_acked()
        out, err = await asyncio.wait_for(ask.communicate(), 30)
    finally:
        if ask.returncode is None:
            ask.kill()
            await ask.wait()
    assert ask.returncode == 0, err.decode()
    assert json.loads(out) == APPROVE
    assert await story(http, server.url, "ask_cli_gate", who="id") == [
        ("created", None),
        ("posted", None),
        ("denied", "U3"),
        ("vote", "U1"),
        ("vote", "U2"),
        ("answered", "U2"),
    ]


# ---- tool-permission prompts --------------------------------------------------------------------

PROMPT = {
    "PermissionRequest": {
        "tool_name": "Bash",
        "action": "run a shell command",
        "input": {"command": "rm -rf build/ && make release"},
        "details": "in /srv/app",
    }
}


def question_section(message: Message) -> str:
    """The question's block, as a person reads it (styles and code fences in mrkdwn style)."""
    return next(
        "\n".join(block_texts(b))
        for b in message.blocks
        if b["type"] == "rich_text" and "*Permission*" in "\n".join(block_texts(b))
    )


def assert_only_text(message: Message) -> None:
    """User text sits in rich text `text` elements only: it links nowhere and pings nobody."""
    kinds = {n.get("type") for n in nodes(message.blocks)}
    assert not kinds & {"link", "broadcast", "channel"}


async def permission_over_slack(
    bridge: Bridge, prompt: dict[str, Any], choice: str
) -> tuple[Message, dict[str, Any]]:
    """Send `prompt` on the agent WebSocket, click `choice` in Slack; the message and the
    agent's answer."""
    url = f"{bridge.url}/v1/agent?target={TARGET}".replace("http", "ws", 1)
    async with bridge.http.ws_connect(url) as socket:
        await socket.send_json({"TextDelta": "I need to run a command."})
        await socket.send_json(prompt)
        message = await bridge.slack.wait_for_message(CHANNEL)
        click = await bridge.slack.person("U1").click_button(message, choice)
        click.assert_acked()
        response: dict[str, Any] = await socket.receive_json(timeout=10)
    return message, response


def tool_text(message: Message) -> str:
    """The tool call's blocks, as a person reads them."""
    return "\n".join(
        "\n".join(block_texts(b)) for b in message.blocks if str(b["block_id"]).count("tool")
    )


async def test_a_permission_prompt_shows_the_command_verbatim_and_allow_once_allows(
    bridge: Bridge,
) -> None:
    message, response = await permission_over_slack(bridge, PROMPT, "Allow once")
    section = question_section(message)
    assert section.startswith("*Permission*  Allow Bash to run a shell command?\nin /srv/app")
    # The command, exactly as the agent sent it, in a preformatted block of its own: no JSON.
    shown = tool_text(message)
    assert "```\nrm -rf build/ && make release\n```" in shown
    assert "{" not in shown
    assert '"command"' not in shown
    assert shown.count(FENCE) == 2
    assert "Always allow" in message.visible_text
    assert "Deny" in message.visible_text
    # The notification text has no code block to leave open.
    assert FENCE not in message.text
    assert response == {
        "PermissionResponse": {"tool_name": "Bash", "allowed": True, "remember": False}
    }

    [buttons] = [b for b in message.blocks if b["type"] == "actions"]
    request_id = ActionId.unpack(buttons["elements"][0]["action_id"]).request_id
    final = await bridge.final(message)
    assert "→ *Allow once*" in final.visible_text
    assert tool_text(final) == shown
    assert await bridge.event_kinds(request_id) == ["created", "posted", "vote", "answered"]


async def test_a_long_command_shows_its_first_lines_and_says_how_many_are_hidden(
    bridge: Bridge,
) -> None:
    # Escaping would make this command far longer than Slack allows; the cut is said.
    command = "\n".join(f"echo '<&> ``` <!channel> {n}'" for n in range(500))
    prompt = {"PermissionRequest": {**PROMPT["PermissionRequest"], "input": {"command": command}}}
    message, response = await permission_over_slack(bridge, prompt, "Deny")
    assert response["PermissionResponse"] == {
        "tool_name": "Bash",
        "allowed": False,
        "remember": False,
    }
    final = await bridge.final(message)
    for shown in (message, final):
        text = tool_text(shown)
        assert "echo '<&> ``` <!channel> 0'" in text
        hidden = [b for b in shown.blocks if "not shown here" in "\n".join(block_texts(b))]
        assert len(hidden) == 1
        kept = text.count("echo '")
        assert f"{500 - kept} more lines are not shown here" in text
        assert all(len("\n".join(block_texts(b))) <= 3000 for b in shown.blocks)
        assert_only_text(shown)
        assert not shown.mentions.broadcasts
    assert bridge.slack.invalid_blocks_count == 0, bridge.slack.block_rejections


@given(st.text(max_size=600))
def test_code_in_a_question_becomes_code_blocks_that_cannot_stay_open(text: str) -> None:
    elements = prose([], text)
    kinds = [e["type"] for e in elements]
    assert set(kinds) <= {"rich_text_section", "rich_text_preformatted"}
    for element in elements:
        for inline in element["elements"]:
            assert inline["type"] == "text"
            assert FENCE not in inline["text"]


def test_one_line_leaves_code_out_of_notifications() -> None:
    assert one_line("Allow Bash?\nin /srv\n```\nrm -rf /\n```") == "Allow Bash? in /srv"
    assert one_line("```only code```") == "only code"


slack_ids = st.from_regex(r"U[A-Z0-9]{2,8}", fullmatch=True)
entries = st.one_of(
    slack_ids.map(lambda u: f"slack:{u}"),
    st.from_regex(r"S[A-Z0-9]{2,8}", fullmatch=True).map(lambda s: f"slack-group:{s}"),
    st.from_regex(r"[a-z0-9_.-]{1,64}", fullmatch=True).map(lambda n: f"web:{n}"),
)


@st.composite
def approvals(draw: st.DrawFn) -> Request:
    labels = draw(
        st.lists(
            st.text(min_size=1, max_size=300).filter(str.strip), min_size=2, max_size=4, unique=True
        )
    )
    question = UserQuestion(
        question=draw(st.text(min_size=1, max_size=3000).filter(str.strip)),
        header="Deploy",
        options=tuple(QuestionOption(label=label) for label in labels),
    )
    now = datetime(2030, 1, 1, tzinfo=UTC)
    people = draw(st.lists(slack_ids, max_size=60, unique=True))
    votes = tuple(
        Vote(
            person=Person(platform="slack", id=u, name=u.lower()),
            answers={"Deploy": draw(st.sampled_from(labels))},
            at=now,
        )
        for u in people
    )
    status = draw(st.sampled_from([Status.WAITING, Status.ANSWERED, Status.EXPIRED]))
    answers = {"Deploy": labels[0]} if status is Status.ANSWERED else None
    return Request(
        request_id="ask_any",
        questions=(question,),
        targets=(),
        created_at=now,
        expires_at=now + timedelta(seconds=300),
        status=status,
        ended_at=None if status is Status.WAITING else now,
        answers=answers,
        answered_by=votes[0].person if answers and votes and draw(st.booleans()) else None,
        policy=Policy(
            answerers=tuple(draw(st.lists(entries, max_size=80, unique=True))),
            quorum=draw(st.integers(min_value=1, max_value=50)),
            timeout_answers={"Deploy": labels[-1]} if draw(st.booleans()) else None,
        ),
        votes=votes,
    )


@settings(max_examples=100, deadline=None)
@given(approvals())
def test_every_approval_render_is_valid_block_kit(request: Request) -> None:
    payload = render(RequestView.of(request), "0000beef")
    assert validate_blocks(payload["blocks"]) == []
    mentioned = [
        (node["type"], node.get("user_id") or node.get("usergroup_id"))
        for node in nodes(payload["blocks"])
        if node.get("type") in ("user", "usergroup")
    ]
    entries = set(request.policy.answerers) | {f"slack:{v.person.id}" for v in request.votes}
    for kind, found in mentioned:
        prefix = "slack" if kind == "user" else "slack-group"
        assert f"{prefix}:{found}" in entries
