"""Typed forms in Teams end to end: each field as the Adaptive Card input made for it, the
values the agent receives typed, a value refused in place with what was typed kept, Decline,
Cancel, and hostile text kept plain."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from askbridge.bots.service import Service
from askbridge.core.view import LINK_HOW_TO_ANSWER
from tests.emulators.teams import TeamsEmulator
from tests.emulators.teams.cards import card_inputs, markdown_texts, mentioned, plain_texts
from tests.emulators.teams.emulator import ClientRefused
from tests.teams.conftest import ALICE, BOB, actions
from tests.teams.test_answering import ask, ended, status

HOSTILE = "<at>Bob</at> @everyone **bold** [x](https://evil.example)"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email", "title": "Reply to"},
        "count": {
            "type": "integer",
            "title": "Replicas",
            "description": "How many to run",
            "minimum": 1,
            "maximum": 10,
            "default": 3,
        },
        "urgent": {"type": "boolean", "title": "Urgent"},
        "env": {
            "type": "string",
            "title": "Environment",
            "oneOf": [
                {"const": "prod", "title": "Production"},
                {"const": "stg,eu", "title": "Staging, EU"},
            ],
        },
        "regions": {
            "type": "array",
            "title": "Regions",
            "items": {"type": "string", "enum": ["eu", "us", "ap"]},
            "minItems": 1,
        },
    },
    "required": ["email", "count", "regions"],
}


async def ask_form(
    teams: TeamsEmulator, http: aiohttp.ClientSession, bridge: Service, **extra: Any
) -> tuple[str, Any]:
    conversation = teams.add_conversation()
    form = {"message": "Where should it run?", "requested_schema": SCHEMA} | extra.pop("form", {})
    await ask(
        http,
        bridge.url,
        request_id="form_teams",
        form=form,
        target=f"teams:{conversation}",
        **extra,
    )
    return conversation, await teams.wait_for_message(conversation)


async def test_a_form_is_filled_in_with_teams_own_inputs(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    _, message = await ask_form(teams, http, bridge)
    inputs = card_inputs(message.card)
    assert {i: e["type"] for i, e in inputs.items()} == {
        "f0": "Input.Text",
        "f1": "Input.Number",
        "f2": "Input.Toggle",
        "f3": "Input.ChoiceSet",
        "f4": "Input.ChoiceSet",
    }
    assert inputs["f0"]["style"] == "email"
    assert inputs["f0"]["isRequired"] is True
    assert (inputs["f1"]["min"], inputs["f1"]["max"], inputs["f1"]["value"]) == (1, 10, 3)
    assert inputs["f4"]["isMultiSelect"] is True
    # A toggle's title is drawn beside it: a label above would name the field twice.
    assert inputs["f2"]["title"] == "Urgent"
    assert "label" not in inputs["f2"]
    assert [c["title"] for c in inputs["f3"]["choices"]] == ["Production", "Staging, EU"]
    assert "How many to run" in list(plain_texts(message.card))
    assert set(actions(message.card)) == {"Submit", "Decline", "Cancel question"}

    submit = actions(message.card)["Submit"]
    given = {"f0": "ops@example.com", "f1": "4", "f2": "true", "f3": "1", "f4": "2,0"}
    code, answer = await teams.press(bridge.url, message, ALICE, submit, given)
    assert code == 200, answer
    final = await status(http, bridge.url, "form_teams")
    assert final["status"] == "answered"
    assert final["action"] == "accept"
    assert final["content"] == {
        "email": "ops@example.com",
        "count": 4,
        "urgent": True,
        "env": "stg,eu",
        "regions": ["eu", "ap"],
    }
    shown = await teams.wait_for_card(message, ended)
    texts = list(plain_texts(shown))
    assert "Replicas" in texts
    assert "4" in texts
    assert "Staging, EU" in texts
    assert "Yes" in texts


async def test_values_teams_lets_through_are_refused_in_place_and_kept(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    _, message = await ask_form(teams, http, bridge)
    submit = actions(message.card)["Submit"]
    # Teams checks bounds and required inputs itself; an integer and an address it does not.
    given = {"f0": "not an address", "f1": "2.5", "f2": "false", "f4": "1"}
    code, answer = await teams.press(bridge.url, message, ALICE, submit, given)
    assert code == 200, answer
    card = answer["value"]
    said = list(plain_texts(card))
    assert said[0].startswith("Nothing was recorded:")
    assert "Reply to" in said[0]
    assert "Replicas" in said[0]
    assert any("email address" in t for t in said)
    assert any("whole number" in t for t in said)
    kept = card_inputs(card)
    assert kept["f0"]["value"] == "not an address"
    assert kept["f1"]["value"] == 2.5
    assert kept["f4"]["value"] == "1"
    final = await status(http, bridge.url, "form_teams")
    assert final["status"] == "waiting"
    assert final["votes"] == []

    with pytest.raises(ClientRefused, match="above its max"):
        await teams.press(bridge.url, message, ALICE, submit, {**given, "f1": "42"})


async def test_decline_tells_the_agent_no_and_cancel_interrupts(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    _, message = await ask_form(teams, http, bridge)
    decline = actions(message.card)["Decline"]
    code, _ = await teams.press(bridge.url, message, BOB, decline)
    assert code == 200
    final = await status(http, bridge.url, "form_teams")
    assert (final["status"], final["action"]) == ("declined", "decline")
    shown = await teams.wait_for_card(message, ended)
    assert any("Declined by Bob" in t for t in plain_texts(shown))

    conversation = teams.add_conversation()
    await ask(
        http,
        bridge.url,
        request_id="form_cancel",
        form={"message": "Again?", "requested_schema": SCHEMA},
        target=f"teams:{conversation}",
    )
    again = await teams.wait_for_message(conversation)
    code, _ = await teams.press(bridge.url, again, ALICE, actions(again.card)["Cancel question"])
    assert code == 200
    cancelled = await status(http, bridge.url, "form_cancel")
    assert (cancelled["status"], cancelled["action"]) == ("cancelled", "cancel")


async def test_a_link_to_open_is_done_or_declined(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    await ask(
        http,
        bridge.url,
        request_id="form_link",
        form={"message": "Sign in to the tracker", "url": "https://tracker.example/auth?x=1"},
        target=f"teams:{conversation}",
    )
    message = await teams.wait_for_message(conversation)
    found = actions(message.card)
    opened = next(a for a in message.card["actions"] if a["type"] == "Action.OpenUrl")
    assert opened["url"] == "https://tracker.example/auth?x=1"
    assert any(t.startswith(LINK_HOW_TO_ANSWER) for t in plain_texts(message.card))
    await teams.press(bridge.url, message, ALICE, found["Done"])
    final = await status(http, bridge.url, "form_link")
    assert (final["status"], final["action"], final["content"]) == ("answered", "accept", {})


async def test_hostile_text_in_a_form_stays_plain(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "note": {"type": "string", "title": HOSTILE, "description": HOSTILE},
            "pick": {"type": "string", "enum": ["a", "b"], "enumNames": [HOSTILE[:70], "b"]},
        },
    }
    _, message = await ask_form(
        teams, http, bridge, form={"message": HOSTILE, "requested_schema": schema}
    )
    assert not any("<at>" in t or "evil" in t for t in markdown_texts(message.card))
    assert all(mentioned(card) == [] for card in [message.card, *message.versions])
    submit = actions(message.card)["Submit"]
    await teams.press(bridge.url, message, ALICE, submit, {"f0": HOSTILE, "f1": "0"})
    shown = await teams.wait_for_card(message, ended)
    assert HOSTILE in list(plain_texts(shown))
    assert not any("<at>" in t or "evil" in t for t in markdown_texts(shown))
    assert all(mentioned(card) == [] for card in [message.card, *message.versions])


async def test_a_press_delivered_again_counts_once(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    _, message = await ask_form(teams, http, bridge, quorum=2)
    submit = actions(message.card)["Submit"]
    given = {"f0": "ops@example.com", "f1": "4", "f2": "false", "f4": "0"}
    first = await teams.press(bridge.url, message, ALICE, submit, given, activity_id="press-1")
    again = await teams.press(bridge.url, message, ALICE, submit, given, activity_id="press-1")
    assert first[0] == again[0] == 200
    said = [next(iter(plain_texts(answer["value"]))) for _, answer in (first, again)]
    assert "counted" in said[0]
    assert "counted" not in said[1]
    final = await status(http, bridge.url, "form_teams")
    assert len(final["votes"]) == 1
    async with http.get(f"{bridge.url}/v1/questions/form_teams/events") as response:
        kinds = [e["kind"] for e in (await response.json())["events"]]
    assert kinds.count("vote") == 1


async def test_a_required_multi_choice_that_may_hold_none_is_answered_with_none(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    """Required with minItems 0: Teams does not insist on a pick, and none picked is []."""
    tags = {"type": "array", "title": "Tags", "items": {"enum": ["a", "b"]}, "minItems": 0}
    schema = {"type": "object", "properties": {"tags": tags}, "required": ["tags"]}
    _, message = await ask_form(teams, http, bridge, form={"requested_schema": schema})
    assert card_inputs(message.card)["f0"]["isRequired"] is False
    submit = actions(message.card)["Submit"]
    code, answer = await teams.press(bridge.url, message, ALICE, submit, {"f0": ""})
    assert code == 200, answer
    final = await status(http, bridge.url, "form_teams")
    assert (final["status"], final["content"]) == ("answered", {"tags": []})


async def test_a_date_and_time_default_is_shown_in_utc_as_the_inputs_say(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    """A card's date and time inputs are in UTC: a default at another offset is shown as the
    same instant in UTC, and submitted as it stands it is that instant."""
    at = {
        "type": "string",
        "format": "date-time",
        "title": "Start",
        "default": "2026-03-01T00:30:00+01:00",
    }
    schema = {"type": "object", "properties": {"start": at}}
    _, message = await ask_form(teams, http, bridge, form={"requested_schema": schema})
    inputs = card_inputs(message.card)
    shown = {"f0": inputs["f0"]["value"], "f0t": inputs["f0t"]["value"]}
    assert shown == {"f0": "2026-02-28", "f0t": "23:30"}
    submit = actions(message.card)["Submit"]
    code, answer = await teams.press(bridge.url, message, ALICE, submit, shown)
    assert code == 200, answer
    final = await status(http, bridge.url, "form_teams")
    assert final["content"] == {"start": "2026-02-28T23:30:00+00:00"}
