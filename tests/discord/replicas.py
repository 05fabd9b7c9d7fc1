"""Three `askbridge serve` processes on one PostgreSQL schema against the Discord emulator:
starting them, Alice and Bob racing on every question, and what must hold of the races."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp

from tests.emulators.discord import InteractionHandle, Message
from tests.server_process import ServerProcess

from .conftest import World, ask, outcome, posted
from .test_answering import ended

REQUESTS = 100
"""200 clicks: Alice and Bob both answer every question at once."""
REPLICAS = 3
Race = tuple[InteractionHandle, InteractionHandle]


def deploy(n: int) -> dict[str, object]:
    return {
        "request_id": f"ask_deploy_{n}",
        "questions": [
            {
                "question": f"Deploy build {n} to production now?",
                "header": "Deploy",
                "options": [{"label": "Yes"}, {"label": "No"}],
            }
        ],
    }


def replicas(folder: Path, env: Mapping[str, str]) -> list[ServerProcess]:
    made = []
    for i in range(REPLICAS):
        (folder / f"replica{i}").mkdir()
        made.append(ServerProcess(folder / f"replica{i}" / "unused.db", env=dict(env)))
    return made


async def start(servers: list[ServerProcess]) -> list[str]:
    """The first creates the schema; the others start together."""
    urls = [await servers[0].start()]
    urls += await asyncio.gather(*(server.start() for server in servers[1:]))
    return urls


async def race_on_every_question(
    world: World, http: aiohttp.ClientSession, urls: list[str]
) -> tuple[list[Message], list[Race], list[dict[str, Any]]]:
    """The agent asks on every replica in turn and reads each outcome from the next one;
    Alice and Bob click every question at once. Returns once every message shows its end."""
    emulator = world.emulator
    questions = [
        posted(emulator, await ask(http, urls[n % REPLICAS], deploy(n))) for n in range(REQUESTS)
    ]
    races: list[Race] = []
    for question in questions:
        race = (
            await emulator.click(question, world.alice.id, "Yes"),
            await emulator.click(question, world.bob.id, "No"),
        )
        # Both in flight at once; the next pair once these are acknowledged, so that a loaded
        # test machine does not miss Discord's 3 s for a burst of 200.
        for handle in race:
            await handle.response()
        races.append(race)
    finals = await asyncio.gather(
        *(outcome(http, urls[(n + 1) % REPLICAS], f"ask_deploy_{n}") for n in range(REQUESTS))
    )
    for question in questions:
        await emulator.wait_for_edit(question.id, ended, timeout=10)
    return questions, races, list(finals)


async def check_races(
    world: World, questions: list[Message], races: list[Race], finals: list[dict[str, Any]]
) -> None:
    """Every click answered once (acknowledged, never refused), the loser told once, the
    winner not at all, and each message shown in its final state once."""
    for race in races:
        for handle in race:
            assert (await handle.response()).type == 6, handle
            assert handle.refused == [], handle
    for final, question, (alices, bobs) in zip(finals, questions, races, strict=True):
        assert final["status"] == "answered"
        winner = final["answered_by"]["name"]
        assert final["answers"] == {"Deploy": "Yes" if winner == "Alice" else "No"}
        won, lost = (alices, bobs) if winner == "Alice" else (bobs, alices)
        assert won.followups == [], won
        [told] = lost.followups
        assert told.text == f"This question was already answered by {winner}."
        history = world.emulator.history(question.id)
        final_versions = [m for m in history[1:] if ended(m)]
        assert len(final_versions) == 1, [m.text for m in history]
        assert f"Answered by **{winner}**" in final_versions[0].text
