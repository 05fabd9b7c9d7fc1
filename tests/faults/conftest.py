"""`askbridge serve` killed at named points (`ASKBRIDGE_TEST_CRASH_AT`, see core/crash_points.py)
and restarted, on SQLite and on PostgreSQL, against the Slack and Discord emulators."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from askbridge.bots.crash_hook import ENV
from tests.discord.conftest import World, discord_env
from tests.emulators.discord import DiscordEmulator
from tests.emulators.slack import SlackEmulator
from tests.server_process import ServerProcess
from tests.slack.conftest import CHANNEL, Mode, slack_settings
from tests.stores import database_url


@pytest.fixture(params=["sqlite", "postgres"])
async def database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """The URL of an empty store: a SQLite file, or a PostgreSQL schema of its own."""
    async with database_url(request.param, tmp_path) as url:
        yield url


@pytest.fixture
async def slack() -> AsyncIterator[SlackEmulator]:
    async with SlackEmulator() as emulator:
        emulator.add_user("U1", "alice")
        emulator.add_user("U2", "bob")
        emulator.add_channel(CHANNEL, "general")
        yield emulator


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async with DiscordEmulator(bot_username="askbridge-bot") as emulator:
        guild = emulator.add_guild("team")
        channel = emulator.add_text_channel(guild.id, "questions")
        alice = emulator.add_user("alice", global_name="Alice")
        bob = emulator.add_user("bob", global_name="Bob")
        emulator.add_member(guild.id, alice.id)
        emulator.add_member(guild.id, bob.id)
        yield World(emulator, guild, channel, alice, bob)


class Crashable:
    """`askbridge serve` on `database`, with Slack and/or Discord, that a test starts with a
    crash point, waits to see die there, and starts again on the same port."""

    def __init__(
        self,
        folder: Path,
        database: str,
        *,
        slack: SlackEmulator | None = None,
        mode: Mode = "http",
        discord: DiscordEmulator | None = None,
    ) -> None:
        # A restarted server is a new process: the updates its previous life had claimed are
        # its again once those claims run out.
        env = {"ASKBRIDGE_DATABASE_URL": database, "ASKBRIDGE_TAKEOVER_S": "1"}
        if slack is not None:
            env.update(slack_settings(slack, mode))
        if discord is not None:
            env.update(discord_env(discord))
        self.server = ServerProcess(folder / "askbridge.db", env=env)
        self.slack = slack
        self.mode = mode
        self.discord = discord
        self.starts = 0

    @property
    def url(self) -> str:
        return self.server.url

    async def start(self, crash_at: str | None = None) -> str:
        """Start (again, on the same port) and wait until the platforms can reach it."""
        self.server.env.pop(ENV, None)
        if crash_at is not None:
            self.server.env[ENV] = crash_at
        sockets = self.slack.socket.connections_total if self.slack else 0
        identifies = self.discord.gateway_stats.identifies if self.discord else 0
        url = await self.server.start(self.server.port if self.starts else 0)
        self.starts += 1
        if self.slack is not None and self.mode == "http":
            self.slack.interactions_url = f"{url}/slack/events"
        elif self.slack is not None:
            await self.slack.wait_socket_connected(after=sockets)
        if self.discord is not None:
            await self.discord.wait_gateway_ready(identifies=identifies + 1)
        return url

    async def crashed(self, point: str) -> None:
        """The process killed itself (SIGKILL) at `point`, and at nothing else."""
        code = await self.server.died()
        log = "".join(self.server.log)
        assert code == -signal.SIGKILL, f"exit code {code}:\n{log}"
        assert f"crashing at {point} ({ENV})" in log, log

    async def kill(self) -> None:
        await self.server.kill()

    async def stop(self) -> None:
        """At the end of a test: a kill, as these tests have nothing to learn from a clean
        stop, and it is quicker."""
        process = self.server.process
        if process is not None and process.returncode is None:
            await self.server.kill()


MakeCrashable = Callable[..., Crashable]


@pytest.fixture
async def crashable(tmp_path: Path, database: str) -> AsyncIterator[MakeCrashable]:
    """Makes `Crashable` servers on this test's store, and stops them afterwards."""
    made: list[Crashable] = []

    def make(**platforms: Any) -> Crashable:
        server = Crashable(tmp_path, database, **platforms)
        made.append(server)
        return server

    yield make
    for server in made:
        await server.stop()


async def ask(
    http: aiohttp.ClientSession, url: str, body: dict[str, Any], expect: int = 201
) -> dict[str, Any]:
    """What an agent does: POST the question (201; 200 when it asks again)."""
    async with http.post(f"{url}/v1/questions", json=body) as response:
        created: dict[str, Any] = await response.json()
        assert response.status == expect, created
    return created


async def outcome(http: aiohttp.ClientSession, url: str, request_id: str) -> dict[str, Any]:
    """The status object once the request has ended (the agent's long-poll)."""
    async with http.get(f"{url}/v1/questions/{request_id}?wait=10") as response:
        assert response.status == 200
        found: dict[str, Any] = await response.json()
    assert found["status"] != "waiting", found
    return found


async def recorded(http: aiohttp.ClientSession, url: str, request_id: str) -> dict[str, Any]:
    """The status object once the request exists and has every message recorded (until then
    a click on a message the platform already shows would be refused as a stranger's),
    waiting on the server's change feed."""
    version = 0
    async with asyncio.timeout(10):
        while True:
            async with http.get(f"{url}/v1/questions/{request_id}") as response:
                found: dict[str, Any] = await response.json()
            target = found.get("target")
            expected = len(target) if isinstance(target, list) else 1
            if response.status == 200 and len(found["messages"]) == expected:
                return found
            async with http.get(f"{url}/web/changes?since={version}") as response:
                version = (await response.json())["version"]
