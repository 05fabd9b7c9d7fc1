"""A client that never finishes its request cannot hold a connection open for long."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from yarl import URL

from tests.conftest import StartService
from tests.discord.test_http_interactions import http_env
from tests.emulators.discord import DiscordEmulator
from tests.emulators.slack import SlackEmulator
from tests.emulators.teams import TeamsEmulator
from tests.slack.conftest import slack_settings

PROMPTLY_S = 5.0
"""Well within aiohttp's lingering time, and far beyond a close on a busy machine."""


async def test_trickled_headers_and_silent_connections_are_closed(
    start_service: StartService,
) -> None:
    service = await start_service(idle_timeout_s=0.5)
    url = URL(service.url)
    assert url.host is not None
    assert url.port is not None
    silent = await asyncio.open_connection(url.host, url.port)
    trickling = await asyncio.open_connection(url.host, url.port)
    trickling[1].write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    await trickling[1].drain()
    for reader, writer in (silent, trickling):
        # The server hangs up: the read ends with EOF well before the test's own timeout.
        assert await asyncio.wait_for(reader.read(), timeout=10) == b""
        writer.close()


async def test_a_body_that_does_not_arrive_in_time_gets_408_on_every_route(
    start_service: StartService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with (
        SlackEmulator() as slack,
        TeamsEmulator(tmp_path) as teams,
        DiscordEmulator(bot_username="askbridge-bot") as discord,
    ):
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(teams.cert))
        service = await start_service(
            idle_timeout_s=0.5,
            **slack_settings(slack, "http"),
            **teams.settings(),
            **http_env(discord),
        )
        url = URL(service.url)
        assert url.host is not None
        assert url.port is not None
        stamp = str(int(time.time()))
        routes = {
            "/v1/questions": {"Content-Type": "application/json"},
            "/v1/hooks/claude-code": {"Content-Type": "application/json"},
            "/q/ask_slow": {"Content-Type": "application/x-www-form-urlencoded"},
            "/slack/events": {
                "Content-Type": "application/x-www-form-urlencoded",
                "X-Slack-Request-Timestamp": stamp,
                "X-Slack-Signature": "v0=" + "0" * 64,
            },
            "/teams/messages": {"Authorization": f"Bearer {teams.signed()}"},
            "/discord/interactions": {"Content-Type": "application/json"},
        }
        for path, headers in routes.items():
            reader, writer = await asyncio.open_connection(url.host, url.port)
            lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Length: 100"]
            lines += [f"{name}: {value}" for name, value in headers.items()]
            # One byte of the hundred promised, and no more.
            writer.write(("\r\n".join(lines) + "\r\n\r\n{").encode())
            await writer.drain()
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=10)
            assert head.startswith(b"HTTP/1.1 408 "), (path, head)
            assert b"application/json" in head, path
            length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            body = await reader.readexactly(length)
            # Then the server hangs up at once, rather than waiting up to aiohttp's lingering
            # time (10 s) for the rest of a body it will not read.
            assert await asyncio.wait_for(reader.read(), timeout=PROMPTLY_S) == b"", path
            writer.close()
            assert json.loads(body)["error"] == (
                "the request body did not arrive within 0.5 s (ASKBRIDGE_IDLE_TIMEOUT_S); "
                "send it whole"
            ), path
