"""Three `askbridge serve` processes on one PostgreSQL schema in Discord's gateway mode. Every
gateway session opened with the bot's token receives every click, so only one replica may hold
one: it answers every click, once; the others post and edit over REST, and when the holder is
killed one of them takes the gateway over."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import asyncpg

from askbridge.bots.service import Service
from tests.conftest import settings_for
from tests.stores import POSTGRES_URL, postgres_schema
from tests.test_election import holder_pid

from .conftest import World, ask, discord_env, outcome, posted
from .replicas import (
    REPLICAS,
    REQUESTS,
    check_races,
    deploy,
    race_on_every_question,
    replicas,
    start,
)
from .test_answering import ended

TAKEOVER_S = 10.0


async def holds_the_gateway(http: aiohttp.ClientSession, url: str) -> bool:
    """What the replica's `/readyz` says of Discord: holding the gateway, or standing by."""
    async with http.get(f"{url}/readyz") as response:
        body = await response.json()
        assert response.status == 200, body
    detail: str = body["parts"]["discord"]["detail"]
    assert detail.startswith(("gateway connected as", "standing by for the Discord gateway"))
    return detail.startswith("gateway connected as")


async def test_one_replica_holds_the_gateway_and_another_takes_over_when_it_is_killed(
    tmp_path: Path, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    async with postgres_schema() as database_url:
        env = {
            **discord_env(emulator),
            "ASKBRIDGE_DATABASE_URL": database_url,
            "ASKBRIDGE_DEFAULT_TARGET": f"discord:{world.channel.id}",
        }
        servers = replicas(tmp_path, env)
        try:
            urls = await start(servers)
            assert [await holds_the_gateway(http, url) for url in urls] == [True, False, False]
            assert emulator.open_gateway_sessions == 1
            questions, races, finals = await race_on_every_question(world, http, urls)
            assert emulator.open_gateway_sessions == 1
            assert emulator.gateway_stats.identifies == 1

            # The holder dies; a standby takes the gateway over.
            loop = asyncio.get_running_loop()
            killed_at = loop.time()
            await servers[0].kill()
            await emulator.wait_gateway_ready(identifies=2, timeout=TAKEOVER_S)
            took = loop.time() - killed_at
            assert emulator.open_gateway_sessions == 1
            holding = [await holds_the_gateway(http, url) for url in urls[1:]]
            assert sorted(holding) == [False, True]
            standby = urls[1 + holding.index(False)]

            # A question asked on the standby is answered through the new holder.
            after = posted(emulator, await ask(http, standby, deploy(REQUESTS)))
            next_click = await emulator.click(after, alice.id, "Yes")
            assert (await next_click.response()).type == 6
            final = await outcome(http, standby, f"ask_deploy_{REQUESTS}")
            await emulator.wait_for_edit(after.id, ended, timeout=10)
        finally:
            codes = await asyncio.gather(*(server.stop() for server in servers))
        assert codes[1:] == [0] * (REPLICAS - 1)

    assert took < TAKEOVER_S, took
    # Every click was delivered to the one session open, and answered once: no replica's
    # answer was refused as a second one (40060), none came late.
    assert len(emulator.interactions) == 2 * REQUESTS + 1
    for handle in emulator.interactions:
        assert (await handle.response()).type == 6, handle
        assert handle.refused == [], handle
    await check_races(world, questions, races, finals)
    for race in races:
        for handle in race:
            assert (handle.delivered_to, handle.queued_for) == (1, 0), handle
    assert next_click.delivered_to == 1, next_click
    assert final["status"] == "answered"
    assert final["answered_by"]["name"] == "Alice"
    assert next_click.followups == []
    assert len([m for m in emulator.history(after.id)[1:] if ended(m)]) == 1
    assert emulator.rejections == []

    # Only the holder handled clicks; every replica said what it did.
    logs = ["".join(server.log) for server in servers]
    assert logs[0].count("discord: pick on ask_deploy_") == 2 * REQUESTS, logs[0]
    assert "discord: holding the Discord gateway, connected as" in logs[0]
    took_over = [log for log in logs[1:] if "holding the Discord gateway: took over" in log]
    assert len(took_over) == 1, logs[1:]
    assert took_over[0].count("discord: pick on ask_deploy_") == 1
    for log in logs[1:]:
        assert "discord: standing by for the Discord gateway" in log, log


async def test_a_holder_that_loses_its_database_connection_ends_its_session_first(
    tmp_path: Path, world: World, http: aiohttp.ClientSession
) -> None:
    """Alone, it takes the gateway again; what matters is that it closed the session it had
    (with code 1000, which ends it) instead of leaving it open beside the next one."""
    emulator = world.emulator
    async with postgres_schema() as database_url:
        service = Service(
            settings_for(
                tmp_path,
                **discord_env(emulator),
                database_url=database_url,
                default_target=f"discord:{world.channel.id}",
                election_check_s=0.1,
            )
        )
        await service.start()
        try:
            assert emulator.open_gateway_sessions == 1
            admin = await asyncpg.connect(POSTGRES_URL)
            try:
                pid = await holder_pid(admin, database_url, "discord-gateway")
                await admin.execute("SELECT pg_terminate_backend($1)", pid)
            finally:
                await admin.close()
            await emulator.wait_gateway_ready(identifies=2, timeout=TAKEOVER_S)
            assert emulator.open_gateway_sessions == 1

            question = posted(emulator, await ask(http, service.url, deploy(1)))
            click = await emulator.click(question, world.alice.id, "Yes")
            assert (await click.response()).type == 6
            assert (await outcome(http, service.url, "ask_deploy_1"))["status"] == "answered"
        finally:
            await service.stop()
    assert (click.delivered_to, click.queued_for) == (1, 0)
    assert emulator.gateway_stats.resumes == 0
