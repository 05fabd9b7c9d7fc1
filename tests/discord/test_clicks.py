"""Clicks that race: repeated, or by two people at once. One answer; everyone is told why."""

from __future__ import annotations

import aiohttp

from askbridge.bots.service import Service
from tests.emulators.discord import InteractionHandle

from .conftest import World, ask, outcome, posted
from .test_answering import DEPLOY


async def answered_events(http: aiohttp.ClientSession, url: str, request_id: str) -> list[str]:
    async with http.get(f"{url}/v1/questions/{request_id}/events") as response:
        events = (await response.json())["events"]
    return [e["actor"]["name"] for e in events if e["kind"] == "answered"]


async def replies(handles: list[InteractionHandle]) -> list[str]:
    """Each handle's ephemeral reply text, or "" when it got none (its click counted)."""
    texts = []
    for handle in handles:
        await handle.response()
        texts.append("\n".join(m.text for m in handle.followups))
    return texts


async def test_the_same_click_twice_gives_one_answer(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, DEPLOY))
    # A double click: both arrive before askbridge has handled either.
    first = await emulator.click(question, alice.id, "Yes")
    second = await emulator.click(question, alice.id, "Yes")

    final = await outcome(http, bridge.url, "ask_deploy")
    assert final["answers"] == {"Deploy": "Yes"}
    told = await emulator.wait_for_ephemeral(alice.id, "already answered")
    assert told.text == "This question was already answered by Alice."
    assert sorted(await replies([first, second])) == ["", told.text]
    assert await answered_events(http, bridge.url, "ask_deploy") == ["Alice"]


async def test_two_people_at_once_give_one_answer_and_the_other_is_told(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    question = posted(emulator, await ask(http, bridge.url, DEPLOY))
    alices = await emulator.click(question, alice.id, "Yes")
    bobs = await emulator.click(question, bob.id, "No")

    final = await outcome(http, bridge.url, "ask_deploy")
    winner = final["answered_by"]["name"]
    loser, expected = (bob, {"Deploy": "Yes"}) if winner == "Alice" else (alice, {"Deploy": "No"})
    assert final["answers"] == expected
    told = await emulator.wait_for_ephemeral(loser.id)
    assert told.text == f"This question was already answered by {winner}."
    assert sorted(await replies([alices, bobs])) == ["", told.text]
    assert await answered_events(http, bridge.url, "ask_deploy") == [winner]
