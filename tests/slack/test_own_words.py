"""Answers in a person's own words and notes on answers, in Slack: "Other…" and "Add a note"
open a form; what it sends is counted like a click, refused inline, or told why it cannot be."""

from __future__ import annotations

import copy
import json
from typing import Any

import aiohttp

from tests.conftest import DEPLOY, audit_events
from tests.emulators.slack import (
    Mentions,
    Message,
    OpenView,
    SlackEmulator,
    answer_of,
    mrkdwn_markup,
    validate_blocks,
)
from tests.server_process import ServerProcess
from tests.slack.conftest import TARGET, Bridge, Mode, ask_body, serving

OWN_WORDS = {"allow_other": True, "allow_notes": True}


def deploy_body(request_id: str, **extra: Any) -> dict[str, Any]:
    """A one-question approval: its message answers in one click."""
    return ask_body(request_id, questions=[copy.deepcopy(DEPLOY)], **extra)


async def open_form(bridge: Bridge, user: str, message: Message, button: str) -> OpenView:
    """`user` clicks `button` ("Other…" or "Add a note"); the form it opens."""
    slack = bridge.slack
    before = len(slack.open_views(user))
    (await slack.person(user).click_button(message, button)).assert_acked()
    return await slack.wait_for_view(user, after=before)


async def test_own_words_for_one_question_and_an_option_for_another(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(ask_body("ask_other", **OWN_WORDS))
    assert "Other…" in message.visible_text
    assert "Add a note" in message.visible_text
    alice = slack.person("U1")
    await alice.tick_checkboxes(message, ["Caching"])

    form = await open_form(bridge, "U1", message, "Other…")
    assert form.title == "Answer in your own words"
    assert "Which database should we use?" in form.visible_text
    # Each field says what it takes, in the words Discord's form uses too.
    assert "One of PostgreSQL / SQLite, or your own answer" in form.visible_text
    assert "Any of Caching, Logging, Metrics, then your own words" in form.visible_text
    # Prefilled with what alice had ticked; nothing for the question she had not answered.
    assert (form.value("Database"), form.value("Features")) == (None, "Caching")
    assert validate_blocks(form.blocks) == []
    sent = await alice.submit_view(form, text={"Database": " Neither — use MySQL 8 "})
    sent.assert_sent()
    assert sent.closed

    outcome = await bridge.outcome("ask_other")
    assert outcome["answers"] == {"Database": "Neither — use MySQL 8", "Features": "Caching"}
    assert outcome["answered_by"]["id"] == "U1"
    trail = await audit_events(bridge.http, bridge.url, "ask_other")
    vote = next(e for e in trail if e["kind"] == "vote")
    assert (vote["actor"]["id"], vote["data"]) == ("U1", {"answers": outcome["answers"]})
    final = await bridge.final(message)
    assert "Neither — use MySQL 8" in final.visible_text
    assert "Answered by <@U1>" in final.visible_text
    assert slack.unacked == []
    assert slack.invalid_blocks_count == 0


async def test_options_and_own_words_in_a_multi_select_answer(bridge: Bridge) -> None:
    message = await bridge.ask(ask_body("ask_multi", allow_other=True))
    assert "Add a note" not in message.visible_text
    alice = bridge.slack.person("U1")
    await alice.choose_radio(message, "PostgreSQL")
    await alice.tick_checkboxes(message, ["Caching", "Metrics"])

    form = await open_form(bridge, "U1", message, "Other…")
    assert (form.value("Database"), form.value("Features")) == ("PostgreSQL", "Caching, Metrics")
    assert "note" not in {t.block_id for t in form.inputs()}
    typed = {"Features": "Caching, Metrics, tracing too"}
    (await alice.submit_view(form, text=typed)).assert_sent()

    outcome = await bridge.outcome("ask_multi")
    assert outcome["answers"] == {
        "Database": "PostgreSQL",
        "Features": "Caching, Metrics, tracing too",
    }
    assert "notes" not in outcome


async def test_a_note_comes_back_with_the_answer(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(deploy_body("ask_note", allow_notes=True))
    assert "Other…" not in message.visible_text
    form = await open_form(bridge, "U1", message, "Add a note")
    assert form.title == "Add a note"
    assert "Deploy build 4711 to production?" in form.visible_text
    note = "Only after 18:00 — ops are on call then.\nPing me if it slips."
    sent = await slack.person("U1").submit_view(
        form, choose={"Deploy": ["Approve"]}, text={"note": f"  {note}\n"}
    )
    sent.assert_sent()
    assert sent.closed

    outcome = await bridge.outcome("ask_note")
    assert outcome["answers"] == {"Deploy": "Approve"}
    assert outcome["notes"] == {"Deploy": note}
    assert outcome["annotations"] == {DEPLOY["question"]: {"notes": note}}
    assert outcome["votes"][0]["notes"] == {"Deploy": note}
    final = await bridge.final(message)
    assert f"Note from <@U1>: {note}" in final.visible_text

    trail = await audit_events(bridge.http, bridge.url, "ask_note")
    vote = next(e for e in trail if e["kind"] == "vote")
    assert vote["actor"] == {"platform": "slack", "id": "U1", "name": "alice"}
    assert vote["data"] == {"answers": {"Deploy": "Approve"}, "notes": {"Deploy": note}}
    assert vote["at"]


async def test_empty_long_or_malformed_words_are_refused_in_the_form(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(ask_body("ask_refused", **OWN_WORDS))
    alice = slack.person("U1")
    form = await open_form(bridge, "U1", message, "Other…")

    blank = await alice.submit_view(form, text={"Database": "   ", "Features": "Caching"})
    blank.assert_sent()
    assert blank.errors == {"q0": "Please answer this question."}
    assert not blank.closed
    # Slack's client itself stops text past the form's 2000 characters…
    refused = await alice.submit_view(form, text={"Database": "x" * 2001})
    assert refused.delivery is None
    assert "2000 characters or fewer" in refused.errors["q0"]
    # …and askbridge refuses it too, should any arrive.
    long = await alice.submit_view(form, client_checks=False)
    long.assert_sent()
    assert long.errors == {"q0": "Please keep it to 2000 characters (this is 2001)."}
    control = await alice.submit_view(form, text={"Database": "MySQL", "note": "bell\x07here"})
    control.assert_sent()
    assert control.errors == {"note": "Please remove the control characters."}
    assert not control.closed

    assert (await bridge.status("ask_refused"))["status"] == "waiting"
    assert await bridge.event_kinds("ask_refused") == ["created", "posted"]
    assert slack.ephemerals("U1") == []

    fixed = await alice.submit_view(form, text={"note": "tabs gone"})
    fixed.assert_sent()
    assert fixed.closed
    outcome = await bridge.outcome("ask_refused")
    assert outcome["answers"] == {"Database": "MySQL", "Features": "Caching"}
    assert outcome["notes"] == {"Database": "tabs gone"}


async def test_a_form_sent_after_the_question_ended_gets_a_polite_note(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(deploy_body("ask_late", **OWN_WORDS))
    form = await open_form(bridge, "U1", message, "Other…")
    (await slack.person("U2").click_button(message, "Reject")).assert_acked()
    assert (await bridge.outcome("ask_late"))["answers"] == {"Deploy": "Reject"}

    late = await slack.person("U1").submit_view(form, text={"Deploy": "Approve after 18:00"})
    late.assert_sent()
    assert not late.closed
    assert form.submit_label is None
    assert "This question was already answered by bob." in form.visible_text
    assert validate_blocks(form.blocks) == []
    kinds = await bridge.event_kinds("ask_late")
    assert kinds.count("vote") == 1
    # A click on the old message's "Other…" is told the same, in a note.
    await slack.person("U1").click_button(message, "Other…", stale=True)
    await slack.wait_for_ephemeral("U1", contains="already answered by bob")


async def test_a_form_on_a_quorum_closes_and_the_receipt_follows(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(deploy_body("ask_quorum", quorum=2, **OWN_WORDS))
    form = await open_form(bridge, "U1", message, "Other…")
    sent = await slack.person("U1").submit_view(form, text={"Deploy": "After 18:00"})
    sent.assert_sent()
    assert sent.closed
    receipt = await slack.wait_for_ephemeral("U1", contains="Your vote is counted: 1 of 2")
    assert "After 18:00" in receipt.visible_text
    tally = await slack.wait_for_update(
        message.channel, message.ts, lambda m: "After 18:00" in m.visible_text
    )
    assert tally.has_interactive_elements

    bobs = await open_form(bridge, "U2", message, "Other…")
    await slack.person("U2").submit_view(bobs, text={"Deploy": "After 18:00 "})
    outcome = await bridge.outcome("ask_quorum")
    assert outcome["answers"] == {"Deploy": "After 18:00"}
    assert [v["voter"]["id"] for v in outcome["votes"]] == ["U1", "U2"]


async def test_a_form_pointing_at_another_message_is_refused(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(deploy_body("ask_here", **OWN_WORDS))
    elsewhere = await bridge.ask(deploy_body("ask_elsewhere", **OWN_WORDS))
    form = await open_form(bridge, "U1", message, "Other…")
    form.state.type_text(form.find_input("Deploy", frozenset({"plain_text_input"})), "Approve")
    payload: dict[str, Any] = {
        "type": "view_submission",
        "team": {"id": slack.identity.team_id, "domain": slack.identity.team_domain},
        "user": {"id": "U1", "username": "alice", "name": "alice", "team_id": "T0TEST"},
        "api_app_id": slack.identity.app_id,
        "view": slack.views.to_slack(form),
    }
    forged = json.loads(form.private_metadata) | {"m": elsewhere.ts}
    payload["view"]["private_metadata"] = json.dumps(forged)
    delivery = await slack.deliver(payload)
    delivery.assert_acked()
    answer = answer_of(delivery)
    assert answer is not None
    assert answer["response_action"] == "update"
    assert "does not belong to this question" in json.dumps(answer["view"])
    assert await bridge.event_kinds("ask_here") == ["created", "posted"]


async def test_hostile_own_words_and_notes_are_inert(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(deploy_body("ask_hostile", **OWN_WORDS))
    form = await open_form(bridge, "U1", message, "Other…")
    answer = "<!channel> *ship* it ```rm -rf /` <https://e.example|here> <@U2>"
    note = "_cc_ <!subteam^S1> ~now~ &amp; <#C1>\n```"
    sent = await slack.person("U1").submit_view(form, text={"Deploy": f"  {answer} ", "note": note})
    sent.assert_sent()

    outcome = await bridge.outcome("ask_hostile")
    assert outcome["answers"] == {"Deploy": answer}
    assert outcome["notes"] == {"Deploy": note}
    final = await bridge.final(message)
    assert validate_blocks(final.blocks) == []
    assert final.mentions == Mentions(users=frozenset({"U1"}))
    assert not mrkdwn_markup(final.text).live, final.text
    assert answer in final.visible_text
    assert note in final.visible_text
    assert all(m.mentions.users <= {"U1"} and not m.mentions.broadcasts for m in slack.sent())


async def test_no_buttons_for_words_or_notes_unless_the_ask_allows_them(bridge: Bridge) -> None:
    message = await bridge.ask(ask_body("ask_plain"))
    assert "Other…" not in message.visible_text
    assert "Add a note" not in message.visible_text


async def test_a_form_opened_before_a_restart_still_counts(
    server: ServerProcess, slack: SlackEmulator, mode: Mode
) -> None:
    await serving(server, slack, mode)
    async with aiohttp.ClientSession() as http:
        body = deploy_body("ask_restart", **OWN_WORDS)
        async with http.post(f"{server.url}/v1/questions", json=body) as response:
            assert response.status == 201, await response.text()
        message = await slack.wait_for_message(TARGET.removeprefix("slack:"))
        alice = slack.person("U1")
        (await alice.click_button(message, "Other…")).assert_acked()
        form = await slack.wait_for_view("U1")

        await server.kill()
        await serving(server, slack, mode, port=server.port)

        sent = await alice.submit_view(form, text={"Deploy": "Approve, after the backup"})
        sent.assert_sent()
        assert sent.closed
        async with http.get(f"{server.url}/v1/questions/ask_restart?wait=10") as response:
            outcome = await response.json()
    assert outcome["answers"] == {"Deploy": "Approve, after the backup"}
    assert outcome["answered_by"]["id"] == "U1"
    final = await slack.wait_for_update(
        message.channel, message.ts, lambda m: not m.has_interactive_elements
    )
    assert "Approve, after the backup" in final.visible_text
    assert slack.unacked == []


async def test_who_may_not_answer_gets_no_form(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(deploy_body("ask_form_gated", answerers=["slack:U2"], **OWN_WORDS))
    (await slack.person("U1").click_button(message, "Other…")).assert_acked()
    note = await slack.wait_for_ephemeral(
        "U1", contains="Only these people may answer this question: <@U2>."
    )
    assert note.channel == message.channel
    assert slack.open_views("U1") == []
    assert slack.call_count("views.open") == 0
    assert await bridge.event_kinds("ask_form_gated") == ["created", "posted", "denied"]
    # Who may answer gets the form.
    form = await open_form(bridge, "U2", message, "Other…")
    assert form.title == "Answer in your own words"


async def test_a_form_delivered_twice_counts_once_and_is_told_once(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(deploy_body("ask_twice", quorum=2, **OWN_WORDS))
    form = await open_form(bridge, "U1", message, "Other…")
    sent = await slack.person("U1").submit_view(form, text={"Deploy": "After 18:00"})
    sent.assert_sent()
    await slack.wait_for_ephemeral("U1", contains="Your vote is counted: 1 of 2")
    # Slack delivers the same submission again (a retry, or to another replica): it carries
    # the same trigger_id, and is acknowledged and nothing else.
    assert sent.delivery is not None
    (await slack.replay(sent.delivery)).assert_acked()
    # A submission of its own is counted and told.
    again = await open_form(bridge, "U1", message, "Other…")
    (await slack.person("U1").submit_view(again, text={"Deploy": "After 19:00"})).assert_sent()
    await slack.wait_for_ephemeral("U1", contains="After 19:00")
    assert len(slack.ephemerals("U1")) == 2
    assert (await bridge.event_kinds("ask_twice")).count("vote") == 2
