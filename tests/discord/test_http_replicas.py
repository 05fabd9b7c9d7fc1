"""Three `askbridge serve` processes on one PostgreSQL schema, in Discord's HTTP interactions
mode, behind no sticky routing: the emulator hands each click to the next replica in turn.
Every click is answered exactly once, every person who must be told is told exactly once, and
every message ends in its final state."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp

from askbridge.adapters.discord.endpoint import PATH
from tests.emulators.discord import InteractionHandle
from tests.server_process import ServerProcess
from tests.stores import postgres_schema

from .conftest import World, ask, outcome, posted
from .test_answering import ended
from .test_http_interactions import http_env

REQUESTS = 100
"""200 clicks, spread over the replicas in turn."""
REPLICAS = 3


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


async def test_three_replicas_answer_every_click_exactly_once(
    tmp_path: Path, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice, bob = world.emulator, world.alice, world.bob
    async with postgres_schema() as database_url:
        env = {
            **http_env(emulator),
            "ASKBRIDGE_DATABASE_URL": database_url,
            "ASKBRIDGE_DEFAULT_TARGET": f"discord:{world.channel.id}",
        }
        replicas = []
        for i in range(REPLICAS):
            folder = tmp_path / f"replica{i}"
            folder.mkdir()
            replicas.append(ServerProcess(folder / "unused.db", env=env))
        try:
            # The first creates the schema; the others start together.
            urls = [await replicas[0].start()]
            urls += await asyncio.gather(*(replica.start() for replica in replicas[1:]))
            await emulator.use_interactions_endpoint(*(url + PATH for url in urls))

            # The agent asks on every replica in turn; Alice and Bob race on every question.
            questions = [
                posted(emulator, await ask(http, urls[n % REPLICAS], deploy(n)))
                for n in range(REQUESTS)
            ]
            clicks: list[tuple[InteractionHandle, InteractionHandle]] = []
            for question in questions:
                pair = (
                    await emulator.click(question, alice.id, "Yes"),
                    await emulator.click(question, bob.id, "No"),
                )
                # Both in flight at once; the next pair once these are acknowledged, so that
                # a loaded test machine does not miss Discord's 3 s for a burst of 200.
                for handle in pair:
                    await handle.response()
                clicks.append(pair)
            finals = await asyncio.gather(
                *(
                    outcome(http, urls[(n + 1) % REPLICAS], f"ask_deploy_{n}")
                    for n in range(REQUESTS)
                )
            )
            for question in questions:
                await emulator.wait_for_edit(question.id, ended, timeout=10)
        finally:
            # SIGTERM: each replica lets the clicks it acknowledged finish (their notes).
            codes = await asyncio.gather(*(replica.stop() for replica in replicas))
        assert codes == [0] * REPLICAS

    for handles in clicks:
        for handle in handles:
            assert (await handle.response()).type == 6, handle
            assert handle.refused == [], handle
    for final, question, (alices, bobs) in zip(finals, questions, clicks, strict=True):
        assert final["status"] == "answered"
        winner = final["answered_by"]["name"]
        assert final["answers"] == {"Deploy": "Yes" if winner == "Alice" else "No"}
        won, lost = (alices, bobs) if winner == "Alice" else (bobs, alices)
        assert won.followups == [], won
        [told] = lost.followups
        assert told.text == f"This question was already answered by {winner}."
        # One change (the answer), one edit, showing it.
        edits = emulator.history(question.id)[1:]
        assert len(edits) == 1, [m.text for m in emulator.history(question.id)]
        final_versions = [m for m in edits if ended(m)]
        assert len(final_versions) == 1, [m.text for m in emulator.history(question.id)]
        assert f"Answered by **{winner}**" in final_versions[0].text
    # No replica opened a gateway session, and every one of them took clicks.
    assert emulator.gateway_stats.identifies == 0
    handled = [
        len([line for line in replica.log if "discord: pick on ask_deploy_" in line])
        for replica in replicas
    ]
    assert sorted(handled) == [66, 67, 67], handled  # in turn: 200 clicks over three
