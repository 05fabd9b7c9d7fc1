"""A press in the Teams emulator sends what Teams sends (Adaptive Cards `associatedInputs`):
the value of every input of the card the action is on and of the cards around it, not those
behind another ShowCard; what a person did not change keeps what the card gave it; an action
with `associatedInputs: none` sends nothing; the client checks what it sends first."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.emulators.teams.cards import associated_inputs, sent_values
from tests.emulators.teams.emulator import ClientRefused, Person, Posted, TeamsEmulator

ADA = Person("aad-ada", "Ada")
GO = {"type": "Action.Execute", "title": "Go", "verb": "go", "data": {"id": "r1", "q0": "x"}}
NONE = {**GO, "title": "Quit", "associatedInputs": "none"}
INNER = {"type": "Action.Execute", "title": "Inner", "verb": "inner", "data": {}}
BODY = [
    {"type": "Input.Text", "id": "typed", "value": "as given"},
    {"type": "Input.Text", "id": "empty"},
    {"type": "Input.Number", "id": "count", "value": 3, "max": 5},
    {"type": "Input.Toggle", "id": "on", "title": "On", "value": "yes", "valueOn": "yes"},
    {"type": "Input.Toggle", "id": "off", "title": "Off"},
    {
        "type": "Container",
        "items": [
            {"type": "Input.ChoiceSet", "id": "q0", "choices": [{"title": "A", "value": "0"}]}
        ],
    },
]
BEHIND = {"type": "Input.Text", "id": "behind", "value": "hidden", "isRequired": True}
CARD: dict[str, Any] = {
    "type": "AdaptiveCard",
    "version": "1.5",
    "body": BODY,
    "actions": [
        GO,
        NONE,
        {
            "type": "Action.ShowCard",
            "title": "More",
            "card": {
                "type": "AdaptiveCard",
                "version": "1.5",
                "body": [BEHIND],
                "actions": [INNER],
            },
        },
    ],
}
AS_GIVEN = {"typed": "as given", "empty": "", "count": "3", "on": "yes", "off": "false", "q0": ""}


def test_a_press_sends_every_input_of_its_card_as_the_card_gave_it() -> None:
    assert sent_values(associated_inputs(CARD, GO), {}) == AS_GIVEN


def test_what_a_person_changed_replaces_what_the_card_gave() -> None:
    sent = sent_values(associated_inputs(CARD, GO), {"empty": "typed", "q0": "0"})
    assert sent == {**AS_GIVEN, "empty": "typed", "q0": "0"}


def test_a_press_behind_a_show_card_sends_its_inputs_and_those_around_it() -> None:
    assert sent_values(associated_inputs(CARD, INNER), {}) == {**AS_GIVEN, "behind": "hidden"}


def test_an_action_without_inputs_sends_none() -> None:
    assert associated_inputs(CARD, NONE) == {}
    with pytest.raises(ValueError, match="does not send"):
        sent_values({}, {"typed": "x"})


def test_no_press_sends_an_input_it_is_not_associated_with_nor_presses_what_is_not_there() -> None:
    with pytest.raises(ValueError, match=r"does not send \['behind'\]"):
        sent_values(associated_inputs(CARD, GO), {"behind": "x"})
    with pytest.raises(ValueError, match="not on the card"):
        associated_inputs(CARD, {**GO, "title": "Elsewhere", "verb": "elsewhere"})


async def test_the_bot_gets_the_inputs_merged_into_the_actions_data(tmp_path: Path) -> None:
    got: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    async def bot(request: web.Request) -> web.Response:
        got.set_result(await request.json())
        return web.json_response({})

    app = web.Application()
    app.router.add_post("/teams/messages", bot)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        async with TeamsEmulator(tmp_path) as teams:
            conversation = teams.add_conversation(ADA)
            message = Posted(conversation, "1", CARD, [CARD])
            bot_url = f"http://127.0.0.1:{runner.addresses[0][1]}"
            with pytest.raises(ClientRefused, match="above its max"):
                await teams.press(bot_url, message, ADA, GO, {"count": "6"})
            with pytest.raises(ClientRefused, match="behind is required"):
                await teams.press(bot_url, message, ADA, INNER, {"behind": ""})
            code, _ = await teams.press(bot_url, message, ADA, GO, {"empty": "typed"})
            activity = await asyncio.wait_for(got, 10)
    finally:
        await runner.cleanup()
    assert code == 200
    action = activity["value"]["action"]
    # An input's value wins over the action's data of the same key, as in Teams.
    assert action["data"] == {"id": "r1", **AS_GIVEN, "empty": "typed"}
