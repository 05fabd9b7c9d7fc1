"""Three `askbridge serve` processes on one PostgreSQL schema, in Discord's HTTP interactions
mode, behind no sticky routing: the emulator hands each click to the next replica in turn.
Every click is answered exactly once, every person who must be told is told exactly once, and
every message ends in its final state."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp

from askbridge.adapters.discord.endpoint import PATH
from tests.stores import postgres_schema

from .conftest import World
from .replicas import REPLICAS, check_races, race_on_every_question, replicas, start
from .test_http_interactions import http_env


async def test_three_replicas_answer_every_click_exactly_once(
    tmp_path: Path, world: World, http: aiohttp.ClientSession
) -> None:
    emulator = world.emulator
    async with postgres_schema() as database_url:
        env = {
            **http_env(emulator),
            "ASKBRIDGE_DATABASE_URL": database_url,
            "ASKBRIDGE_DEFAULT_TARGET": f"discord:{world.channel.id}",
        }
        servers = replicas(tmp_path, env)
        try:
            urls = await start(servers)
            await emulator.use_interactions_endpoint(*(url + PATH for url in urls))
            questions, races, finals = await race_on_every_question(world, http, urls)
        finally:
            # SIGTERM: each replica lets the clicks it acknowledged finish (their notes).
            codes = await asyncio.gather(*(server.stop() for server in servers))
        assert codes == [0] * REPLICAS

    await check_races(world, questions, races, finals)
    for question in questions:
        # One change (the answer), one edit.
        edits = emulator.history(question.id)[1:]
        assert len(edits) == 1, [m.text for m in emulator.history(question.id)]
    # No replica opened a gateway session, and every one of them took clicks.
    assert emulator.gateway_stats.identifies == 0
    handled = [
        len([line for line in server.log if "discord: pick on ask_deploy_" in line])
        for server in servers
    ]
    assert sorted(handled) == [66, 67, 67], handled  # in turn: 200 clicks over three
