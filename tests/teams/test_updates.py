"""Teams' card updates: a Submit that leaves a question unanswered is refused on the card of
the person who pressed; the message is replaced after Teams' 429 as its Retry-After says; a
restart between asking and answering loses nothing."""

from __future__ import annotations

import copy

import aiohttp
import pytest

from askbridge.bots.service import Service
from tests.conftest import DATABASE, DEPLOY, EXPECTED, StartService
from tests.emulators.teams import TeamsEmulator
from tests.emulators.teams.cards import plain_texts
from tests.teams.conftest import ALICE, actions
from tests.teams.test_answering import ask, ended, status


async def test_a_missing_answer_is_refused_in_place(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    await ask(http, bridge.url, **copy.deepcopy(DATABASE), target=f"teams:{conversation}")
    message = await teams.wait_for_message(conversation)
    submit = actions(message.card)["Submit"]
    code, answer = await teams.press(bridge.url, message, ALICE, submit, {"q0": "1"})
    assert code == 200
    card = answer["value"]
    assert 'Please answer "Features" before submitting.' in list(plain_texts(card))
    assert "Submit" in actions(card), "the controls stay for another try"
    assert (await status(http, bridge.url, "ask_db"))["status"] == "waiting"
    assert len(message.versions) == 1, "nobody else's card changed"

    code, answer = await teams.press(bridge.url, message, ALICE, submit, {"q0": "0", "q1": "0,2"})
    assert code == 200
    assert (await status(http, bridge.url, "ask_db"))["answers"] == EXPECTED


async def test_an_update_teams_throttles_waits_its_retry_after(
    teams: TeamsEmulator,
    bridge: Service,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
) -> None:
    conversation = teams.add_conversation()
    await ask(
        http,
        bridge.url,
        request_id="ask_429",
        questions=[copy.deepcopy(DEPLOY)],
        target=f"teams:{conversation}",
    )
    message = await teams.wait_for_message(conversation)
    teams.updates_to_refuse.append(1)
    code, _ = await teams.press(bridge.url, message, ALICE, actions(message.card)["Approve"])
    assert code == 200
    # The agent has its answer while Teams still says "wait a second" about the update.
    assert (await status(http, bridge.url, "ask_429"))["answers"] == {"Deploy": "Approve"}
    await teams.wait_for_card(message, ended)
    assert teams.update_statuses == [429, 200]
    assert teams.issued
    assert not any(token in caplog.text for token in teams.issued), "the bot's token was logged"


async def test_a_restart_between_asking_and_answering_loses_nothing(
    teams: TeamsEmulator, trusted: None, start_service: StartService, http: aiohttp.ClientSession
) -> None:
    first = await start_service(**teams.settings())
    conversation = teams.add_conversation()
    await ask(
        http,
        first.url,
        request_id="ask_restart",
        questions=[copy.deepcopy(DEPLOY)],
        target=f"teams:{conversation}",
    )
    message = await teams.wait_for_message(conversation)
    await first.stop()

    second = await start_service(**teams.settings())
    code, _ = await teams.press(second.url, message, ALICE, actions(message.card)["Reject"])
    assert code == 200
    assert (await status(http, second.url, "ask_restart"))["answers"] == {"Deploy": "Reject"}
    shown = await teams.wait_for_card(message, ended)
    assert any("Answered by Alice" in text for text in plain_texts(shown))
