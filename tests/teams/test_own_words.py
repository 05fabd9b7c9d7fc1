"""Answers in one's own words and notes on a Teams card: `Input.Text` fields sent with the
press, taken by the broker as on every surface, refused in place when they cannot be."""

from __future__ import annotations

import copy

import aiohttp

from askbridge.bots.service import Service
from tests.conftest import DATABASE, DEPLOY
from tests.emulators.teams import TeamsEmulator
from tests.emulators.teams.cards import plain_texts
from tests.teams.conftest import ALICE, actions
from tests.teams.test_answering import ask, ended, status


async def test_own_words_and_a_note_reach_the_agent(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    await ask(
        http,
        bridge.url,
        **copy.deepcopy(DATABASE),
        target=f"teams:{conversation}",
        allow_other=True,
        allow_notes=True,
    )
    message = await teams.wait_for_message(conversation)
    texts = {e["id"]: e for e in message.card["body"] if e["type"] == "Input.Text"}
    assert set(texts) == {"w0", "w1", "note"}
    submit = actions(message.card)["Submit"]
    inputs = {"q0": "1", "w1": "Caching, tracing too", "note": "Ask ops first."}
    code, answer = await teams.press(bridge.url, message, ALICE, submit, inputs)
    assert code == 200, answer
    final = await status(http, bridge.url, "ask_db")
    assert final["answers"] == {"Database": "SQLite", "Features": "Caching, tracing too"}
    assert final["notes"] == {"Database": "Ask ops first."}
    shown = await teams.wait_for_card(message, ended)
    assert "Ask ops first." in list(plain_texts(shown))


async def test_a_note_goes_with_one_click(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    await ask(
        http,
        bridge.url,
        request_id="ask_note",
        questions=[copy.deepcopy(DEPLOY)],
        target=f"teams:{conversation}",
        allow_notes=True,
    )
    message = await teams.wait_for_message(conversation)
    approve = actions(message.card)["Approve"]
    await teams.press(bridge.url, message, ALICE, approve, {"note": "After 5 pm."})
    final = await status(http, bridge.url, "ask_note")
    assert final["answers"] == {"Deploy": "Approve"}
    assert final["notes"] == {"Deploy": "After 5 pm."}


async def test_words_that_cannot_be_taken_are_refused_in_place(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    await ask(
        http,
        bridge.url,
        **copy.deepcopy(DATABASE),
        target=f"teams:{conversation}",
        allow_other=True,
    )
    message = await teams.wait_for_message(conversation)
    submit = actions(message.card)["Submit"]
    # The card has no note field: only a tampered client sends one.
    sneaked = {**submit["data"], "q0": "0", "q1": "0", "note": "sneaked in"}
    code, answer = await teams.deliver(bridge.url, message, ALICE, submit["verb"], sneaked)
    assert code == 200
    said = next(iter(plain_texts(answer["value"])))
    assert said.startswith("Nothing was recorded:")
    assert "takes no notes" in said
    assert (await status(http, bridge.url, "ask_db"))["status"] == "waiting"
