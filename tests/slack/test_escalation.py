"""Escalation ladders and approvals bound to their requester and subject, in Slack: a request
nobody answers reminds its team, then moves to the on-call group in their channel; quiet hours
hold a step; the requester cannot approve their own request; the decision names its subject."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from askbridge.core.clock import ManualClock
from askbridge.core.subject import subject_sha256
from askbridge.core.view import SELF_APPROVAL
from tests.conftest import DEPLOY, audit_events, story
from tests.emulators.slack import Message
from tests.slack.conftest import CHANNEL, TARGET, Bridge

ONCALL_CHANNEL = "C0ONCALL"
LADDER = [
    {"after_s": 60},
    {
        "after_s": 120,
        "answerers": ["slack-group:S0ONCALL"],
        "target": f"slack:{ONCALL_CHANNEL}",
    },
]


async def ask_deploy(bridge: Bridge, request_id: str, **fields: Any) -> Message:
    return await bridge.ask(
        {"request_id": request_id, "questions": [DEPLOY], "target": TARGET, **fields}
    )


async def test_a_two_step_ladder_reminds_the_team_then_hands_over_to_on_call(
    bridge: Bridge, clock: ManualClock
) -> None:
    """The first step reminds the team; the second opens the request to the on-call group
    only (per the ladder's rules: the step's answerers replace the team's), posts it in their
    channel and pings them there. A team member's vote no longer counts; on-call's does."""
    slack = bridge.slack
    slack.add_user("U3", "carol")
    slack.add_channel(ONCALL_CHANNEL, "oncall")
    slack.add_usergroup("S0TEAM", ["U1"])
    slack.add_usergroup("S0ONCALL", ["U2"])
    message = await ask_deploy(
        bridge,
        "ask_ladder",
        answerers=["slack-group:S0TEAM"],
        timeout_s=3600,
        escalation=LADDER,
    )
    assert "Who may answer: <!subteam^S0TEAM>" in message.visible_text
    assert (await bridge.status("ask_ladder"))["escalate_at"] == "2030-01-01T00:01:00.000Z"

    await clock.advance(60)
    reminder = await slack.wait_for_message(CHANNEL, lambda m: m.thread_ts == message.ts)
    assert reminder.text.startswith(
        ":bell: Reminder for <!subteam^S0TEAM>: this question is still waiting"
    )
    assert reminder.mentions.usergroups == {"S0TEAM"}
    found = await bridge.status("ask_ladder")
    assert found["escalation_step"] == 1
    assert found["answerers"] == ["slack-group:S0TEAM"]

    await clock.advance(60)
    oncall = await slack.wait_for_message(ONCALL_CHANNEL, lambda m: m.has_interactive_elements)
    assert "Who may answer: <!subteam^S0ONCALL>" in oncall.visible_text
    assert "Escalated to <!subteam^S0ONCALL> after 2 min" in oncall.visible_text
    ping = await slack.wait_for_message(ONCALL_CHANNEL, lambda m: m.thread_ts == oncall.ts)
    assert ping.mentions.usergroups == {"S0ONCALL"}
    shown = await slack.wait_for_update(
        CHANNEL, message.ts, lambda m: "Escalated to <!subteam^S0ONCALL>" in m.visible_text
    )
    assert "Who may answer: <!subteam^S0ONCALL>" in shown.visible_text
    found = await bridge.status("ask_ladder")
    assert found["escalation_step"] == 2
    assert found["answerers"] == ["slack-group:S0ONCALL"]
    assert found["target"] == [TARGET, f"slack:{ONCALL_CHANNEL}"]
    assert "escalate_at" not in found

    # The team's member no longer decides, in either message.
    (await slack.person("U1").click_button(shown, "Approve")).assert_acked()
    await slack.wait_for_ephemeral("U1", contains="may answer this question: <!subteam^S0ONCALL>")
    assert (await bridge.status("ask_ladder"))["votes"] == []

    (await slack.person("U2").click_button(oncall, "Reject")).assert_acked()
    outcome = await bridge.outcome("ask_ladder")
    assert outcome["answers"] == {"Deploy": "Reject"}
    assert outcome["answered_by"]["id"] == "U2"
    for posted in (message, oncall):
        final = await bridge.final(posted)
        assert "Answered by <@U2>" in final.visible_text

    assert await story(bridge.http, bridge.url, "ask_ladder", who="id") == [
        ("created", None),
        ("posted", None),
        ("escalated", None),
        ("escalated", None),
        ("posted", None),
        ("denied", "U1"),
        ("vote", "U2"),
        ("answered", "U2"),
    ]
    trail = await audit_events(bridge.http, bridge.url, "ask_ladder")
    steps = [e["data"] for e in trail if e["kind"] == "escalated"]
    assert steps == [
        {"step": 1, "after_s": 60.0},
        {
            "step": 2,
            "after_s": 120.0,
            "answerers": ["slack-group:S0ONCALL"],
            "target": f"slack:{ONCALL_CHANNEL}",
        },
    ]
    assert [e["at"] for e in trail if e["kind"] == "escalated"] == [
        "2030-01-01T00:01:00.000Z",
        "2030-01-01T00:02:00.000Z",
    ]


async def test_quiet_hours_hold_a_step_until_they_end(bridge: Bridge, clock: ManualClock) -> None:
    """The clock starts at 01:00 in Berlin, inside 22:00-07:00: the step due a minute later
    waits until 07:00 Berlin (06:00 UTC), while a ladder without quiet hours goes at once."""
    slack = bridge.slack
    quiet = {"tz": "Europe/Berlin", "start": "22:00", "end": "07:00"}
    held = await ask_deploy(
        bridge, "ask_quiet", escalation={"steps": [{"after_s": 60}], "quiet_hours": quiet}
    )
    control = await ask_deploy(bridge, "ask_loud", escalation=[{"after_s": 60}])
    assert (await bridge.status("ask_quiet"))["escalate_at"] == "2030-01-01T06:00:00.000Z"

    await clock.advance(60)
    await slack.wait_for_message(CHANNEL, lambda m: m.thread_ts == control.ts)
    assert "escalation_step" not in await bridge.status("ask_quiet")

    until_seven = (datetime(2030, 1, 1, 6, tzinfo=UTC) - clock.now()).total_seconds()
    await clock.advance(until_seven)
    reminder = await slack.wait_for_message(CHANNEL, lambda m: m.thread_ts == held.ts)
    assert "still waiting" in reminder.text
    trail = await audit_events(bridge.http, bridge.url, "ask_quiet")
    assert [e["at"] for e in trail if e["kind"] == "escalated"] == ["2030-01-01T06:00:00.000Z"]


async def test_a_hand_over_held_by_quiet_hours_says_when_it_came_and_to_whom(
    bridge: Bridge, clock: ManualClock
) -> None:
    """A step due a minute after 01:00 in Berlin hands the request to on-call at 07:00, when
    the quiet hours end: the message says it came after 6 h, not after the minute the ladder
    asked for, and the ping tells on-call the request was handed to them."""
    slack = bridge.slack
    slack.add_usergroup("S0ONCALL", ["U2"])
    quiet = {"tz": "Europe/Berlin", "start": "22:00", "end": "07:00"}
    ladder = {
        "steps": [{"after_s": 60, "answerers": ["slack-group:S0ONCALL"]}],
        "quiet_hours": quiet,
    }
    message = await ask_deploy(bridge, "ask_held", answerers=["slack:U1"], escalation=ladder)

    await clock.advance((datetime(2030, 1, 1, 6, tzinfo=UTC) - clock.now()).total_seconds())
    shown = await slack.wait_for_update(
        CHANNEL, message.ts, lambda m: "Escalated to" in m.visible_text
    )
    assert "Escalated to <!subteam^S0ONCALL> after 6 h" in shown.visible_text
    ping = await slack.wait_for_message(CHANNEL, lambda m: m.thread_ts == message.ts)
    assert ping.text.startswith(
        ":bell: Escalated to <!subteam^S0ONCALL> after 6 h: this question is still waiting for"
        " an answer."
    )
    assert ping.mentions.usergroups == {"S0ONCALL"}


async def test_the_requester_cannot_approve_their_own_request(bridge: Bridge) -> None:
    slack = bridge.slack
    subject = {"command": "deploy", "args": ["--build", 4711, "--env", "production"]}
    message = await ask_deploy(
        bridge,
        "ask_self",
        requested_by="slack:U1",
        no_self_approval=True,
        subject=subject,
    )
    alice = slack.person("U1")
    (await alice.click_button(message, "Approve")).assert_acked()
    note = await slack.wait_for_ephemeral("U1", contains=SELF_APPROVAL)
    assert note.channel == message.channel
    found = await bridge.status("ask_self")
    assert found["status"] == "waiting"
    assert found["votes"] == []
    assert found["requested_by"] == "slack:U1"

    (await slack.person("U2").click_button(message, "Approve")).assert_acked()
    outcome = await bridge.outcome("ask_self")
    assert outcome["answered_by"]["id"] == "U2"
    # The decision names exactly what was approved.
    assert outcome["subject_sha256"] == subject_sha256(subject)
    assert await story(bridge.http, bridge.url, "ask_self", who="id") == [
        ("created", None),
        ("posted", None),
        ("denied", "U1"),
        ("vote", "U2"),
        ("answered", "U2"),
    ]
    trail = await audit_events(bridge.http, bridge.url, "ask_self")
    assert trail[2]["data"]["reason"] == "self_approval"
    assert trail[-1]["data"]["subject_sha256"] == subject_sha256(subject)
