"""Only genuine clicks on the request's own message count, each once; nobody goes unanswered."""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest

from askbridge.adapters.slack.ids import FILL_CALLBACK_ID, FORM_CALLBACK_ID, ActionId
from askbridge.core.intents import Action
from tests.conftest import StartService
from tests.emulators.slack import Delivery, SlackEmulator
from tests.emulators.slack.delivery import signed_headers
from tests.server_process import ServerProcess
from tests.slack.conftest import (
    Bridge,
    answer_fully,
    ask_body,
    serving,
    slack_settings,
    start_bridge,
)


def retargeted(delivery: Delivery, action_id: str, **changes: Any) -> dict[str, Any]:
    """The payload of a genuine click, pointed at another element and otherwise changed."""
    payload = copy.deepcopy(delivery.payload)
    action = payload["actions"][0]
    payload["actions"] = [
        {
            "action_id": action_id,
            "block_id": action["block_id"],
            "type": "button",
            "action_ts": action["action_ts"],
        }
    ]
    payload.update(changes)
    return payload


async def test_forged_or_stale_signatures_get_401_and_change_nothing(
    http_bridge: Bridge,
) -> None:
    bridge, slack = http_bridge, http_bridge.slack
    message = await bridge.ask(ask_body("ask_forged"))
    alice = slack.person("U1")
    await alice.choose_radio(message, "PostgreSQL")
    await alice.tick_checkboxes(message, ["Caching"])
    for tamper in ("forged_signature", "stale_timestamp", "unsigned"):
        refused = await alice.click_button(message, "Submit", tamper=tamper)
        assert refused.status == 401, tamper
        refused = await alice.click_button(message, "Cancel", tamper=tamper)
        assert refused.status == 401, tamper

    assert (await bridge.status("ask_forged"))["status"] == "waiting"
    assert await bridge.event_kinds("ask_forged") == ["created", "posted"]
    assert slack.ephemerals("U1") == []
    assert slack.call_count("chat.update") == 0

    (await alice.click_button(message, "Submit")).assert_acked()
    assert (await bridge.outcome("ask_forged"))["status"] == "answered"


async def test_a_click_from_another_message_or_install_is_refused(bridge: Bridge) -> None:
    slack = bridge.slack
    target = await bridge.ask(ask_body("ask_target"))
    other = await bridge.ask(ask_body("ask_other"))
    alice = slack.person("U1")
    submit_target = ActionId("ask_target", Action.SUBMIT).pack()

    # A genuine click on the other request's message, naming this request's Submit.
    on_other = await alice.choose_radio(other, "PostgreSQL")
    (await slack.deliver(retargeted(on_other, submit_target))).assert_acked()
    await slack.wait_for_ephemeral("U1", contains="does not belong to this question")

    # This request's own message, but from another Slack app or another workspace.
    await alice.tick_checkboxes(target, ["Caching"])
    on_target = await alice.choose_radio(target, "SQLite")
    foreign = [
        retargeted(on_target, submit_target, api_app_id="A0OTHER"),
        retargeted(on_target, submit_target, team={"id": "T0OTHER", "domain": "elsewhere"}),
    ]
    for number, payload in enumerate(foreign, start=1):
        # Each a click of its own: the same click delivered again would get no note.
        payload["actions"][0]["action_ts"] = slack.action_ts()
        (await slack.deliver(payload)).assert_acked()
        await slack.wait_for_ephemeral("U1", contains="does not belong", after=number)

    for request_id in ("ask_target", "ask_other"):
        assert (await bridge.status(request_id))["status"] == "waiting"
        assert await bridge.event_kinds(request_id) == ["created", "posted"]
    assert slack.call_count("chat.update") == 0

    # The same payload unchanged is an answer.
    (await slack.deliver(retargeted(on_target, submit_target))).assert_acked()
    outcome = await bridge.outcome("ask_target")
    assert outcome["answers"] == {"Database": "SQLite", "Features": "Caching"}


async def test_the_same_click_delivered_twice_answers_once(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(ask_body("ask_twice"))
    click = await answer_fully(bridge, "U1", message)
    (await slack.replay(click)).assert_acked()

    outcome = await bridge.outcome("ask_twice")
    assert outcome["answered_by"]["id"] == "U1"
    await bridge.final(message)
    assert (await bridge.event_kinds("ask_twice")).count("answered") == 1
    # The redelivery is acknowledged and nothing else; a click of its own is told.
    (await slack.deliver(clicked_again(slack, click))).assert_acked()
    await slack.wait_for_ephemeral("U1", contains="already answered by alice")
    assert len(slack.ephemerals("U1")) == 1


def clicked_again(slack: SlackEmulator, click: Delivery) -> dict[str, Any]:
    """The payload of `click`, clicked anew: the same button, a click of its own."""
    payload = copy.deepcopy(click.payload)
    payload["actions"][0]["action_ts"] = slack.action_ts()
    return payload


async def test_a_losing_click_delivered_twice_is_told_once(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(ask_body("ask_lost"))
    await answer_fully(bridge, "U1", message)
    await bridge.outcome("ask_lost")
    losing = await slack.person("U2").click_button(message, "Submit", stale=True)
    losing.assert_acked()
    await slack.wait_for_ephemeral("U2", contains="already answered by alice")
    (await slack.replay(losing)).assert_acked()
    (await slack.deliver(clicked_again(slack, losing))).assert_acked()
    await slack.wait_for_ephemeral("U2", contains="already answered by alice", after=1)
    # Two clicks, two notes: the redelivery between them got none.
    assert len(slack.ephemerals("U2")) == 2


async def test_two_people_submitting_at_once_give_one_answer(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(ask_body("ask_race"))
    alice, bob = slack.person("U1"), slack.person("U2")
    await alice.choose_radio(message, "PostgreSQL")
    await alice.tick_checkboxes(message, ["Caching"])
    await bob.choose_radio(message, "SQLite")
    await bob.tick_checkboxes(message, ["Logging"])

    clicks = await asyncio.gather(
        alice.click_button(message, "Submit"), bob.click_button(message, "Submit")
    )
    assert all(click.acked for click in clicks)

    outcome = await bridge.outcome("ask_race")
    winner = outcome["answered_by"]["id"]
    loser = "U2" if winner == "U1" else "U1"
    expected = {
        "U1": {"Database": "PostgreSQL", "Features": "Caching"},
        "U2": {"Database": "SQLite", "Features": "Logging"},
    }
    assert outcome["answers"] == expected[winner]
    winner_name = outcome["answered_by"]["name"]
    await slack.wait_for_ephemeral(loser, contains=f"already answered by {winner_name}")
    assert slack.ephemerals(winner) == []
    assert (await bridge.event_kinds("ask_race")).count("answered") == 1
    assert f"Answered by <@{winner}>" in (await bridge.final(message)).visible_text


async def test_unknown_old_and_ended_clicks_are_acked_and_answered(bridge: Bridge) -> None:
    slack = bridge.slack
    message = await bridge.ask(ask_body("ask_old"))
    alice, bob = slack.person("U1"), slack.person("U2")
    genuine = await alice.choose_radio(message, "SQLite")

    # An element from some older version of askbridge, and a request the store does not have.
    for number, action_id in enumerate(["approve_v0", "ab|ask_gone|submit"], start=1):
        (await slack.deliver(retargeted(genuine, action_id))).assert_acked()
        await slack.wait_for_ephemeral(
            "U1", contains="This question is no longer available", after=number - 1
        )

    await answer_fully(bridge, "U1", message)
    await bridge.outcome("ask_old")
    # Bob's screen still shows the buttons: he is told who answered.
    (await bob.click_button(message, "Cancel", stale=True)).assert_acked()
    await slack.wait_for_ephemeral("U2", contains="already answered by alice")
    assert (await bridge.status("ask_old"))["status"] == "answered"
    assert slack.unacked == []


FORM = "application/x-www-form-urlencoded"
JSON = "application/json"
NESTED = "[" * 20_000 + "]" * 20_000
"""Deeper than the JSON parser can go."""


def errors_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def test_unsigned_bodies_of_any_shape_get_a_json_4xx_and_log_no_error(
    http_bridge: Bridge, http: aiohttp.ClientSession, caplog: pytest.LogCaptureFixture
) -> None:
    bodies = {
        "nested JSON": (NESTED, JSON),
        "a JSON list": ("[1, 2]", JSON),
        "a JSON string": ('"x"', JSON),
        "nested payload": (urlencode({"payload": NESTED}), FORM),
        "a payload list": (urlencode({"payload": "[1]"}), FORM),
        "who is a number": (json.dumps({"type": "block_actions", "user": 1}), JSON),
        "a form without a payload": ("command=%2Fdeploy", FORM),
        "not UTF-8": ("payload=%7B%7D\udcff", FORM),
    }
    headers: dict[str, dict[str, str]] = {
        "unsigned": {},
        "a timestamp that is no number": {
            "X-Slack-Request-Timestamp": "abc",
            "X-Slack-Signature": "v0=00",
        },
        "a timestamp of 5000 digits": {
            "X-Slack-Request-Timestamp": "1" * 5000,
            "X-Slack-Signature": "v0=00",
        },
        "a signature that is not ASCII": {
            "X-Slack-Request-Timestamp": "1700000000",
            "X-Slack-Signature": "v0=\u00e9",
        },
    }
    for what, (body, content_type) in bodies.items():
        for how, extra in headers.items():
            sent = {"Content-Type": content_type, **extra}
            raw = body.encode("utf-8", "surrogateescape")
            async with http.post(f"{http_bridge.url}/slack/events", data=raw, headers=sent) as r:
                assert r.status in (400, 401), (what, how, r.status)
                assert "error" in await r.json(), (what, how)
    assert errors_logged(caplog) == []


ODD: tuple[object, ...] = (1, "x", [], [1], {}, None, True, "{bad")
"""Values no field of Slack's payloads holds in all of them."""


def changed(
    payload: dict[str, Any], paths: Sequence[tuple[str | int, ...]]
) -> Iterator[dict[str, Any]]:
    """`payload` with each field at `paths`, in turn, set to each odd value."""
    for path in paths:
        for value in ODD:
            each = copy.deepcopy(payload)
            *parents, last = path
            place: Any = each
            for step in parents:
                place = place[step]
            place[last] = value
            yield each


def odd_shapes(slack: SlackEmulator, click: dict[str, Any]) -> list[dict[str, Any]]:
    """Clicks and forms, each with one field of a shape Slack never sends (about 200)."""
    clicks = [
        "type", "actions", "user", "team", "container", "message", "channel", "state",
        "response_url", "response_urls", "authorizations", "enterprise", "api_app_id",
    ]  # fmt: skip
    inner = [("actions", 0), ("actions", 0, "action_id"), ("actions", 0, "action_ts")]
    submission: dict[str, Any] = {
        "type": "view_submission",
        "user": {"id": "U1", "team_id": slack.identity.team_id},
        "team": {"id": slack.identity.team_id},
        "view": {
            "type": "modal",
            "callback_id": FORM_CALLBACK_ID,
            "private_metadata": "{}",
            "state": {"values": {}},
        },
    }
    views = [("view",), *[("view", key) for key in submission["view"]], ("view", "state", "values")]
    return [
        *changed(click, [(key,) for key in clicks] + inner),
        *changed(submission, views),
        *changed(
            {**submission, "view": {**submission["view"], "callback_id": FILL_CALLBACK_ID}}, views
        ),
    ]


async def test_signed_deliveries_of_a_shape_slack_never_sends_are_refused_or_ignored(
    http_bridge: Bridge, http: aiohttp.ClientSession, caplog: pytest.LogCaptureFixture
) -> None:
    """Only Slack can sign, but a payload it signs is read as data: whatever its shape, the
    answer is a 4xx or an acknowledgement that does nothing, never a 500 or a traceback."""
    bridge, slack = http_bridge, http_bridge.slack
    message = await bridge.ask(ask_body("ask_shapes"))
    click = (await slack.person("U1").choose_radio(message, "SQLite")).payload
    payloads = odd_shapes(slack, click)
    for payload in payloads:
        delivered = await slack.deliver(payload)
        assert delivered.status is not None, (payload, delivered)
        assert delivered.status < 500, (payload, delivered)
    for body, content_type in (
        ("[1]", JSON),
        (NESTED, JSON),
        (urlencode({"payload": NESTED}), FORM),
    ):
        raw = body.encode()
        sent = signed_headers(
            slack.identity.signing_secret, raw, content_type, slack.clock(), "none"
        )
        async with http.post(f"{bridge.url}/slack/events", data=raw, headers=sent) as response:
            assert response.status == 400, body[:10]
            assert "error" in await response.json()
    assert errors_logged(caplog) == []
    assert (await bridge.status("ask_shapes"))["status"] == "waiting"


MARKER = "xoxb-in-a-payload-7f3a"
"""Held by every odd payload, where a payload keeps its verification token: never logged."""


async def test_socket_mode_envelopes_of_a_shape_slack_never_sends_are_acked_and_ignored(
    slack: SlackEmulator,
    start_service: StartService,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Over Socket Mode a payload is held to the shape the HTTP endpoint holds a body to: an
    envelope of another shape is acknowledged (or Slack sends it again) and logged once as a
    warning that leaves the payload out, never as bolt's traceback."""
    bridge = await start_bridge(slack, "socket", start_service, http)
    message = await bridge.ask(ask_body("ask_socket_shapes"))
    click = (await slack.person("U1").choose_radio(message, "SQLite")).payload
    for payload in odd_shapes(slack, click):
        (await slack.deliver({**payload, "token": MARKER})).assert_acked()
    caplog.clear()
    # Envelopes whose payload is no object at all, which slack_sdk cannot even read.
    odd = (None, 1, MARKER, [{**click, "token": MARKER}])
    for value in odd:
        envelope = {"envelope_id": str(uuid.uuid4()), "type": "interactive", "payload": value}
        outcome = await slack.socket.push(envelope)
        assert outcome.acked, (value, outcome)
        assert outcome.ack == {"envelope_id": envelope["envelope_id"]}
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == len(odd), [r.getMessage() for r in warned]
    assert all(r.name == "askbridge.slack" for r in warned)
    assert errors_logged(caplog) == []
    assert MARKER not in caplog.text
    assert (await bridge.status("ask_socket_shapes"))["status"] == "waiting"
    # A genuine click after them all still counts.
    await answer_fully(bridge, "U1", message)
    assert (await bridge.outcome("ask_socket_shapes"))["status"] == "answered"


async def test_a_bad_or_missing_signature_is_one_warning_that_leaves_the_body_out(
    tmp_path: Path, slack: SlackEmulator, http: aiohttp.ClientSession
) -> None:
    """A body Slack did not sign may still hold a token or what people wrote: the server's log
    names why it was refused, once, at WARNING, and holds nothing of the body."""
    written = "written-by-a-person-4c9e"
    server = ServerProcess(tmp_path / "askbridge.db", env=slack_settings(slack, "http"))
    try:
        await serving(server, slack, "http")
        body = ask_body("ask_unsigned")
        body["questions"][0]["question"] = f"Which database, {written}?"
        async with http.post(f"{server.url}/v1/questions", json=body) as response:
            posted = (await response.json())["messages"][0]
        message = slack.message(posted["channel"], posted["message_id"])
        for tamper in ("forged_signature", "stale_timestamp", "unsigned"):
            refused = await slack.person("U1").click_button(message, "Cancel", tamper=tamper)
            assert refused.status == 401, tamper
            assert written in (refused.request_body or b"").decode(), tamper
    finally:
        await server.stop()
    logged = "".join(server.log)
    assert written not in logged
    refusals = [line for line in server.log if "refused a request to /slack/events" in line]
    assert len(refusals) == 3, logged
    assert all(" WARNING " in line for line in refusals), refusals
    reasons = ("is not the body's signature", "five minutes", "unsigned request")
    assert [reason in line for reason, line in zip(reasons, refusals, strict=True)] == [True] * 3
