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
from tests.emulators.discord import InteractionHandle
from tests.server_process import ServerProcess
from tests.stores import POSTGRES_URL, postgres_schema
from tests.test_election import holder_pid

from .conftest import World, ask, discord_env, outcome, posted
from .test_answering import ended
from .test_http_replicas import deploy

REQUESTS = 100
"""200 clicks: Alice and Bob both answer every question at once."""
REPLICAS = 3
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
    emulator, alice, bob = world.emulator, world.alice, world.bob
    async with postgres_schema() as database_url:
        env = {
            **discord_env(emulator),
            "ASKBRIDGE_DATABASE_URL": database_url,
            "ASKBRIDGE_DEFAULT_TARGET": f"discord:{world.channel.id}",
        }
        replicas = []
        for i in range(REPLICAS):
            folder = tmp_path / f"replica{i}"
            folder.mkdir()
            replicas.append(ServerProcess(folder / "unused.db", env=env))
        try:
            # The first creates the schema and takes the gateway; the others start together.
            urls = [await replicas[0].start()]
            urls += await asyncio.gather(*(replica.start() for replica in replicas[1:]))
            assert [await holds_the_gateway(http, url) for url in urls] == [True, False, False]
            assert emulator.open_gateway_sessions == 1

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
            for result, (alices, bobs) in zip(finals, clicks, strict=True):
                lost = bobs if result["answered_by"]["name"] == "Alice" else alices
                await lost.wait_for_ephemeral("already answered by")
            assert emulator.open_gateway_sessions == 1
            assert emulator.gateway_stats.identifies == 1

            # The holder dies; a standby takes the gateway over.
            loop = asyncio.get_running_loop()
            killed_at = loop.time()
            await replicas[0].kill()
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
            codes = await asyncio.gather(*(replica.stop() for replica in replicas))
        assert codes[1:] == [0] * (REPLICAS - 1)

    assert took < TAKEOVER_S, took
    # Every click was delivered to the one session open, and answered once: no replica's
    # answer was refused as a second one (40060), none came late.
    assert len(emulator.interactions) == 2 * REQUESTS + 1
    for handle in emulator.interactions:
        assert (await handle.response()).type == 6, handle
        assert handle.refused == [], handle
    for handles in clicks:
        for handle in handles:
            assert (handle.delivered_to, handle.queued_for) == (1, 0), handle
    assert next_click.delivered_to == 1, next_click
    for result, question, (alices, bobs) in zip(finals, questions, clicks, strict=True):
        assert result["status"] == "answered"
        winner = result["answered_by"]["name"]
        assert result["answers"] == {"Deploy": "Yes" if winner == "Alice" else "No"}
        won, lost = (alices, bobs) if winner == "Alice" else (bobs, alices)
        assert won.followups == [], won
        [told] = lost.followups
        assert told.text == f"This question was already answered by {winner}."
        final_versions = [m for m in emulator.history(question.id)[1:] if ended(m)]
        assert len(final_versions) == 1, [m.text for m in emulator.history(question.id)]
        assert f"Answered by **{winner}**" in final_versions[0].text
    assert final["status"] == "answered"
    assert final["answered_by"]["name"] == "Alice"
    assert next_click.followups == []
    assert len([m for m in emulator.history(after.id)[1:] if ended(m)]) == 1
    assert emulator.rejections == []

    # Only the holder handled clicks; every replica said what it did.
    logs = ["".join(replica.log) for replica in replicas]
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
