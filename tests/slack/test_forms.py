"""Typed forms in Slack: the message lists the form's fields, "Fill in…" opens a modal with
Slack's own input for each, and what a person fills in reaches the agent with its types;
values the inputs cannot hold to the form are refused under the inputs, and nothing is
recorded; Decline tells the agent no, Cancel interrupts it. Hostile text stays inert."""

from __future__ import annotations

import copy
from typing import Any

from askbridge.adapters.slack.ids import field_block_id
from askbridge.core.clock import ManualClock
from tests.conftest import audit_events
from tests.emulators.slack import (
    Mentions,
    Message,
    OpenView,
    mentions,
    mrkdwn_markup,
    validate_blocks,
    validate_view,
)
from tests.slack.conftest import TARGET, Bridge, ask_body

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "contact": {
            "type": "string",
            "format": "email",
            "title": "Contact",
            "description": "Who to page if it goes wrong",
        },
        "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10},
        "confirm": {"type": "boolean", "title": "Runbook read", "default": False},
        "region": {
            "type": "string",
            "title": "Region",
            "oneOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "Americas"}],
        },
        "checks": {
            "type": "array",
            "title": "Checks",
            "items": {"type": "string", "enum": ["smoke", "load", "chaos"]},
            "minItems": 2,
        },
    },
    "required": ["contact", "replicas", "region"],
}
MESSAGE = "Deploy build 4711: how should it roll out?"


def form_body(request_id: str, schema: dict[str, Any] | None = None, **extra: Any) -> Any:
    form = {"message": MESSAGE, "requested_schema": copy.deepcopy(schema or SCHEMA)}
    return {"request_id": request_id, "target": TARGET, "form": form, **extra}


async def fill_in(bridge: Bridge, user: str, message: Message) -> OpenView:
    """`user` clicks "Fill in…"; the modal it opens."""
    slack = bridge.slack
    before = len(slack.open_views(user))
    (await slack.person(user).click_button(message, "Fill in…")).assert_acked()
    return await slack.wait_for_view(user, after=before)


async def test_a_form_filled_in_reaches_the_agent_typed(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(form_body("form_typed"))
    shown = message.visible_text
    assert message.text == f"Form from the agent: {MESSAGE}"
    assert MESSAGE in shown
    assert "*Contact* (required) — Who to page if it goes wrong" in shown
    assert "Checks" in shown
    assert validate_blocks(message.blocks) == []

    modal = await fill_in(bridge, "U1", message)
    assert modal.title == "Fill in the form"
    assert MESSAGE in modal.visible_text
    assert validate_view(modal.view) == []
    alice = slack.person("U1")
    sent = await alice.submit_view(
        modal,
        text={"Contact": "ops@example.com", "Replicas": "4"},
        choose={"Runbook": ["Yes"], "Region": ["Americas"], "Checks": ["load", "smoke"]},
    )
    sent.assert_sent()
    assert sent.closed

    outcome = await bridge.outcome("form_typed")
    assert outcome["status"] == "answered"
    assert outcome["action"] == "accept"
    assert outcome["content"] == {
        "contact": "ops@example.com",
        "replicas": 4,
        "confirm": True,
        "region": "us",
        "checks": ["smoke", "load"],
    }
    final = await bridge.final(message)
    assert "*Replicas*: 4" in final.visible_text
    assert "*Region*: Americas" in final.visible_text
    assert "*Runbook read*: Yes" in final.visible_text
    assert "*Checks*: smoke, load" in final.visible_text
    assert "Answered by <@U1>" in final.visible_text
    # The notification names people without pinging them, and gives the values.
    assert final.text == (
        "Answered by alice: Contact: ops@example.com; Replicas: 4; Runbook read: Yes; "
        "Region: Americas; Checks: smoke, load"
    )
    assert validate_blocks(final.blocks) == []
    assert slack.unacked == []
    assert slack.invalid_blocks_count == 0


async def test_values_out_of_bounds_are_refused_under_the_inputs(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(form_body("form_refused"))
    modal = await fill_in(bridge, "U1", message)
    alice = slack.person("U1")
    typed = {"Contact": "ops@example.com", "Replicas": "42"}
    chosen = {"Region": ["Europe"], "Checks": ["chaos"]}
    # Slack's client holds the number to the input's bounds itself…
    held = await alice.submit_view(modal, text=typed, choose=chosen)
    assert held.delivery is None
    assert held.errors == {field_block_id("replicas"): "Please enter a number of at most 10."}
    # …and askbridge refuses it too, should any arrive; one choice of two is only askbridge's.
    refused = await alice.submit_view(modal, client_checks=False)
    refused.assert_sent()
    assert not refused.closed
    assert refused.errors == {
        field_block_id("replicas"): "Replicas must be at most 10, got 42.",
        field_block_id("checks"): "Checks must hold at least 2 choices, got 1.",
    }
    # The modal keeps what was typed, and nothing was recorded.
    assert modal.value("Replicas") == "42"
    assert (await bridge.status("form_refused"))["status"] == "waiting"
    assert "vote" not in await bridge.event_kinds("form_refused")
    assert slack.ephemerals("U1") == []

    fixed = await alice.submit_view(
        modal, text={"Replicas": "10"}, choose={"Checks": ["smoke", "chaos"]}
    )
    fixed.assert_sent()
    assert fixed.closed
    outcome = await bridge.outcome("form_refused")
    assert outcome["content"] == {
        "contact": "ops@example.com",
        "replicas": 10,
        "confirm": False,
        "region": "eu",
        "checks": ["smoke", "chaos"],
    }
    trail = await audit_events(bridge.http, bridge.url, "form_refused")
    assert [e["kind"] for e in trail].count("vote") == 1


async def test_decline_tells_the_agent_no(bridge: Bridge) -> None:
    message = await bridge.ask(form_body("form_declined"))
    (await bridge.slack.person("U2").click_button(message, "Decline")).assert_acked()
    outcome = await bridge.outcome("form_declined")
    assert (outcome["status"], outcome["action"]) == ("declined", "decline")
    final = await bridge.final(message)
    assert "Declined by <@U2>" in final.visible_text
    assert MESSAGE in final.visible_text
    assert validate_blocks(final.blocks) == []


async def test_cancel_is_confirmed_and_interrupts_the_agent(bridge: Bridge) -> None:
    message = await bridge.ask(form_body("form_cancelled"))
    click = await bridge.slack.person("U1").click_button(message, "Cancel")
    click.assert_acked()
    assert click.confirm is not None
    outcome = await bridge.outcome("form_cancelled")
    assert (outcome["status"], outcome["action"]) == ("cancelled", "cancel")
    final = await bridge.final(message)
    assert "Cancelled by <@U1>" in final.visible_text


HOSTILE = "<!channel> <@U2> *bold* `code` <https://evil.example|click> &amp; _x_ ~s~"


async def test_hostile_text_is_inert_everywhere_slack_shows_it(bridge: Bridge) -> None:
    slack = bridge.slack
    schema = {
        "type": "object",
        "properties": {
            "reason": {"type": "string", "title": HOSTILE, "description": HOSTILE},
            "pick": {
                "type": "string",
                "title": "Pick",
                "enum": ["a", "b"],
                "enumNames": [HOSTILE[:75], "<@U1> <!here>"],
            },
        },
        "required": ["reason", "pick"],
    }
    body = form_body("form_hostile", schema) | {"context": HOSTILE}
    body["form"]["message"] = f"{HOSTILE}\n```{HOSTILE}```"
    message = await bridge.ask(body)
    modal = await fill_in(bridge, "U1", message)
    typed = f"{HOSTILE}\n<@U1> <#C0GENERAL> <!subteam^S1>"
    sent = await slack.person("U1").submit_view(
        modal, text={"reason": typed}, choose={"Pick": [HOSTILE[:75]]}
    )
    sent.assert_sent()
    assert (await bridge.outcome("form_hostile"))["content"] == {"reason": typed, "pick": "a"}
    final = await bridge.final(message)
    assert "<@U1> <#C0GENERAL> <!subteam^S1>" in final.visible_text

    assert slack.invalid_blocks_count == 0
    for shown in (message, final):
        found = mentions(shown.text, shown.blocks)
        # The only mention is askbridge's own, of who answered.
        assert found.users <= {"U1"}, found
        assert found == Mentions(users=found.users), found
        assert not mrkdwn_markup(shown.text).live
    assert mentions(None, modal.blocks).none


async def test_a_url_form_is_a_link_then_done(bridge: Bridge) -> None:
    slack = bridge.slack
    url = "https://auth.example.com/consent?state=a1&scope=repo"
    body = {
        "request_id": "form_url",
        "target": TARGET,
        "form": {"message": "Sign in to the deploy service.", "url": url},
    }
    message = await bridge.ask(body)
    assert f"Link: {url}" in message.visible_text
    assert validate_blocks(message.blocks) == []
    link = next(
        e for b in message.blocks if b["type"] == "actions" for e in b["elements"] if e.get("url")
    )
    assert (link["text"]["text"], link["url"]) == ("Open link", url)
    # The link opens in the person's browser; the app is told, and only acknowledges it.
    (await slack.person("U1").click_button(message, "Open link")).assert_acked()
    assert (await bridge.status("form_url"))["status"] == "waiting"
    assert slack.ephemerals("U1") == []

    (await slack.person("U1").click_button(message, "Done")).assert_acked()
    outcome = await bridge.outcome("form_url")
    assert (outcome["status"], outcome["action"], outcome["content"]) == ("answered", "accept", {})
    final = await bridge.final(message)
    assert "Answered by <@U1>" in final.visible_text


SMALL: dict[str, Any] = {
    "type": "object",
    "properties": {
        "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10},
        "note": {"type": "string", "title": "Note", "maxLength": 500},
    },
    "required": ["replicas"],
}


async def test_a_quorum_of_matching_values_decides_with_a_receipt_and_tally(
    bridge: Bridge,
) -> None:
    slack = bridge.slack
    message = await bridge.ask(form_body("form_quorum", SMALL, quorum=2))
    modal = await fill_in(bridge, "U1", message)
    sent = await slack.person("U1").submit_view(modal, text={"Replicas": "4", "Note": "go"})
    sent.assert_sent()
    assert sent.closed
    receipt = await slack.wait_for_ephemeral("U1", contains="Your vote is counted: 1 of 2")
    assert "Replicas: 4; Note: go" in receipt.visible_text
    tally = await slack.wait_for_update(
        message.channel, message.ts, lambda m: "Replicas: 4; Note: go" in m.visible_text
    )
    assert tally.has_interactive_elements
    assert validate_blocks(tally.blocks) == []

    bobs = await fill_in(bridge, "U2", message)
    # A long note takes several lines; the values agree when every value is equal.
    assert bobs.find_input("Note", frozenset({"plain_text_input"})).element["multiline"] is True
    (await slack.person("U2").submit_view(bobs, text={"Replicas": "4", "Note": "go"})).assert_sent()
    outcome = await bridge.outcome("form_quorum")
    assert outcome["content"] == {"replicas": 4, "note": "go"}
    assert [v["voter"]["id"] for v in outcome["votes"]] == ["U1", "U2"]
    final = await bridge.final(message)
    assert "(2 matching votes)" in final.visible_text


async def test_only_answerers_open_the_form(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(form_body("form_answerers", SMALL, answerers=["slack:U1"]))
    (await slack.person("U2").click_button(message, "Fill in…")).assert_acked()
    await slack.wait_for_ephemeral("U2", contains="Only these people may answer this question")
    assert slack.open_views("U2") == []
    (await slack.person("U2").click_button(message, "Decline")).assert_acked()
    await slack.wait_for_ephemeral("U2", contains="Only these people may answer", after=1)
    assert (await bridge.status("form_answerers"))["status"] == "waiting"


async def test_the_deadline_declines_a_form(bridge: Bridge, clock: ManualClock) -> None:
    message = await bridge.ask(
        form_body("form_deadline", SMALL, timeout_s=300, on_timeout="decline")
    )
    assert "If nobody fills it in by <!date^" in message.visible_text
    await clock.advance(300)
    outcome = await bridge.outcome("form_deadline")
    assert (outcome["status"], outcome["action"]) == ("declined", "decline")
    final = await bridge.final(message)
    assert "Declined at the deadline" in final.visible_text
    assert validate_blocks(final.blocks) == []


async def test_a_form_two_must_fill_in_says_what_its_deadline_waits_for(
    bridge: Bridge, clock: ManualClock
) -> None:
    """Once one of the two has filled it in, the message does not say "if nobody fills it
    in": it says the deadline declines it unless the two decide, and then it does."""
    slack = bridge.slack
    message = await bridge.ask(
        form_body("form_two", SMALL, quorum=2, timeout_s=300, on_timeout="decline")
    )
    modal = await fill_in(bridge, "U1", message)
    (await slack.person("U1").submit_view(modal, text={"Replicas": "3"})).assert_sent()
    voted = await slack.wait_for_update(
        message.channel, message.ts, lambda m: "Replicas: 3 — 1/2" in m.visible_text
    )
    assert "If nobody fills it in" not in voted.visible_text
    assert "If nobody decides by <!date^" in voted.visible_text
    assert ", it is declined" in voted.visible_text
    await clock.advance(300)
    final = await bridge.final(message)
    assert "Declined at the deadline" in final.visible_text


async def test_a_filled_in_form_delivered_twice_counts_once(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(form_body("form_twice", SMALL, quorum=2))
    modal = await fill_in(bridge, "U1", message)
    sent = await slack.person("U1").submit_view(modal, text={"Replicas": "3"})
    sent.assert_sent()
    await slack.wait_for_ephemeral("U1", contains="Your vote is counted: 1 of 2")
    # Slack delivers the same submission again (a retry, or to another replica).
    assert sent.delivery is not None
    (await slack.replay(sent.delivery)).assert_acked()
    # The replay recorded nothing and told nothing: one vote each, one note for alice.
    bobs = await fill_in(bridge, "U2", message)
    (await slack.person("U2").submit_view(bobs, text={"Replicas": "3"})).assert_sent()
    outcome = await bridge.outcome("form_twice")
    assert [v["voter"]["id"] for v in outcome["votes"]] == ["U1", "U2"]
    assert (await bridge.event_kinds("form_twice")).count("vote") == 2
    assert len(slack.ephemerals("U1")) == 1


async def test_fill_in_on_a_request_without_a_form_is_foreign(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(ask_body("ask_no_form"))
    # A client that shows a "Fill in…" the message never had (a forged or garbled click).
    forged = copy.deepcopy(message)
    buttons = next(
        b for b in forged.blocks if b["type"] == "actions" and "buttons" in b["block_id"]
    )
    fill = {
        "type": "button",
        "action_id": "ab|ask_no_form|fill",
        "text": {"type": "plain_text", "text": "Fill in…"},
        "value": "fill",
    }
    buttons["elements"].append(fill)
    (await slack.person("U1").click_button(forged, "Fill in…", stale=True)).assert_acked()
    await slack.wait_for_ephemeral("U1", contains="does not belong to this question")
    assert slack.open_views("U1") == []
    assert (await bridge.status("ask_no_form"))["status"] == "waiting"


async def test_a_form_of_ten_fields_is_shown_whole_and_filled_in(bridge: Bridge) -> None:
    """Slack's modal shows ten inputs (Discord's five): every field has its input, in order,
    and every value reaches the agent."""
    schema = copy.deepcopy(SCHEMA)
    for number in range(1, 6):
        schema["properties"][f"step{number}"] = {"type": "string", "title": f"Step {number}"}
    schema["required"].append("step5")
    message = await bridge.ask(form_body("form_ten", schema))
    assert validate_blocks(message.blocks) == []
    assert all(f"*Step {n}*" in message.visible_text for n in range(1, 6))

    modal = await fill_in(bridge, "U1", message)
    assert validate_view(modal.view) == []
    inputs = [b["block_id"] for b in modal.view["blocks"] if b["type"] == "input"]
    assert inputs == [field_block_id(name) for name in schema["properties"]]
    steps = {f"Step {n}": f"do {n}" for n in range(1, 6)}
    sent = await bridge.slack.person("U1").submit_view(
        modal,
        text={"Contact": "ops@example.com", "Replicas": "2", **steps},
        choose={"Region": ["Europe"], "Checks": ["smoke", "chaos"]},
    )
    sent.assert_sent()

    outcome = await bridge.outcome("form_ten")
    assert outcome["action"] == "accept"
    assert outcome["content"] == {
        "contact": "ops@example.com",
        "replicas": 2,
        "confirm": False,
        "region": "eu",
        "checks": ["smoke", "chaos"],
        **{f"step{n}": f"do {n}" for n in range(1, 6)},
    }


async def test_a_required_multi_choice_that_may_hold_none_is_answered_with_none(
    bridge: Bridge,
) -> None:
    """Required with minItems 0: the list must be there, and may be empty. Slack's client does
    not insist on a pick, and nothing picked comes back as []."""
    tags = {"type": "array", "title": "Tags", "items": {"enum": ["a", "b"]}, "minItems": 0}
    schema = {"type": "object", "properties": {"tags": tags}, "required": ["tags"]}
    message = await bridge.ask(form_body("form_none", schema))
    modal = await fill_in(bridge, "U1", message)
    sent = await bridge.slack.person("U1").submit_view(modal)
    sent.assert_sent()
    outcome = await bridge.outcome("form_none")
    assert (outcome["status"], outcome["content"]) == ("answered", {"tags": []})


async def test_a_date_and_time_default_slacks_picker_cannot_hold_still_opens_the_form(
    bridge: Bridge,
) -> None:
    """Slack's date-and-time picker starts at a UNIX timestamp of ten digits at most, from 1970
    to 2286: a default outside them is typed as text instead, so the modal opens and the
    default, submitted as it stands, is the answer."""
    landed = {"type": "string", "format": "date-time", "title": "Landed"}
    landed["default"] = "1969-07-20T20:17:40+00:00"
    schema = {"type": "object", "properties": {"landed": landed}}
    message = await bridge.ask(form_body("form_1969", schema))
    modal = await fill_in(bridge, "U1", message)
    assert validate_view(modal.view) == []
    sent = await bridge.slack.person("U1").submit_view(modal)
    sent.assert_sent()
    outcome = await bridge.outcome("form_1969")
    assert outcome["content"] == {"landed": "1969-07-20T20:17:40+00:00"}
