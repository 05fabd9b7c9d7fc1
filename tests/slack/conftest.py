"""askbridge with Slack on, against the local Slack emulator, in Socket Mode and in HTTP mode."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import aiohttp
import pytest

from askbridge.bots.service import Service
from tests.conftest import DATABASE, StartService
from tests.emulators.slack import Delivery, Message, SlackEmulator
from tests.server_process import ServerProcess

Mode = Literal["socket", "http"]
CHANNEL = "C0GENERAL"
TARGET = f"slack:{CHANNEL}"


def slack_settings(slack: SlackEmulator, mode: Mode) -> dict[str, str]:
    """The SLACK_* settings that point askbridge at the emulator in `mode`."""
    identity = slack.identity
    settings = {"SLACK_BOT_TOKEN": identity.bot_token, "SLACK_API_URL": slack.api_url}
    if mode == "socket":
        settings["SLACK_APP_TOKEN"] = identity.app_token
    else:
        settings["SLACK_SIGNING_SECRET"] = identity.signing_secret
    return settings


def ask_body(request_id: str, **extra: Any) -> dict[str, Any]:
    """The spec's example request, posted to the Slack channel unless `extra` says otherwise."""
    body = copy.deepcopy(DATABASE)
    body.update(request_id=request_id, target=TARGET)
    body.update(extra)
    return body


async def answer_fully(bridge: Bridge, user: str, message: Message) -> Delivery:
    """`user` picks the spec's expected answers and presses Submit."""
    person = bridge.slack.person(user)
    await person.choose_radio(message, "PostgreSQL")
    await person.tick_checkboxes(message, ["Caching", "Metrics"])
    return await person.click_button(message, "Submit")


@dataclass
class Bridge:
    """A running askbridge with Slack on, the emulator it talks to, and an agent's HTTP client."""

    slack: SlackEmulator
    service: Service
    http: aiohttp.ClientSession
    mode: Mode

    @property
    def url(self) -> str:
        return self.service.url

    async def ask(self, body: dict[str, Any]) -> Message:
        """Ask as an agent; return the message the request became in Slack."""
        async with self.http.post(f"{self.url}/v1/questions", json=body) as response:
            created = await response.json()
            assert response.status == 201, created
        posted = created["messages"][0]
        return self.slack.message(posted["channel"], posted["message_id"])

    async def status(self, request_id: str, wait: float | None = None) -> dict[str, Any]:
        """The status object; with `wait`, the agent's long-poll for the outcome."""
        query = "" if wait is None else f"?wait={wait}"
        async with self.http.get(f"{self.url}/v1/questions/{request_id}{query}") as response:
            assert response.status == 200
            found: dict[str, Any] = await response.json()
        return found

    async def outcome(self, request_id: str) -> dict[str, Any]:
        """The status object once the request has ended (the agent's long-poll)."""
        found = await self.status(request_id, wait=10)
        assert found["status"] != "waiting", found
        return found

    async def event_kinds(self, request_id: str) -> list[str]:
        async with self.http.get(f"{self.url}/v1/questions/{request_id}/events") as response:
            return [e["kind"] for e in (await response.json())["events"]]

    async def final(self, message: Message) -> Message:
        """The message once askbridge has replaced its interactive elements with the outcome."""
        return await self.slack.wait_for_update(
            message.channel, message.ts, lambda m: not m.has_interactive_elements
        )


@pytest.fixture
async def slack() -> AsyncIterator[SlackEmulator]:
    async with SlackEmulator() as emulator:
        emulator.add_user("U1", "alice")
        emulator.add_user("U2", "bob")
        emulator.add_channel(CHANNEL, "general")
        yield emulator


@pytest.fixture(params=["socket", "http"])
def mode(request: pytest.FixtureRequest) -> Mode:
    chosen: Mode = request.param
    return chosen


async def start_bridge(
    slack: SlackEmulator,
    mode: Mode,
    start_service: StartService,
    http: aiohttp.ClientSession,
    **overrides: Any,
) -> Bridge:
    connections = slack.socket.connections_total
    service = await start_service(**{**slack_settings(slack, mode), **overrides})
    if mode == "http":
        slack.interactions_url = f"{service.url}/slack/events"
    else:
        await slack.wait_socket_connected(after=connections)
    return Bridge(slack, service, http, mode)


@pytest.fixture
async def bridge(
    slack: SlackEmulator, mode: Mode, start_service: StartService, http: aiohttp.ClientSession
) -> Bridge:
    return await start_bridge(slack, mode, start_service, http)


@pytest.fixture
async def http_bridge(
    slack: SlackEmulator, start_service: StartService, http: aiohttp.ClientSession
) -> Bridge:
    """HTTP mode only: for what exists only there (signatures)."""
    return await start_bridge(slack, "http", start_service, http)


@pytest.fixture
async def server(tmp_path: Path, slack: SlackEmulator, mode: Mode) -> AsyncIterator[ServerProcess]:
    """`askbridge serve` as a child process with Slack on, in `mode`; started by the test."""
    process = ServerProcess(tmp_path / "askbridge.db", env=slack_settings(slack, mode))
    yield process
    await process.stop()


async def serving(server: ServerProcess, slack: SlackEmulator, mode: Mode, port: int = 0) -> None:
    """Start `askbridge serve` and wait until Slack can reach it."""
    connections = slack.socket.connections_total
    url = await server.start(port)
    if mode == "http":
        slack.interactions_url = f"{url}/slack/events"
    else:
        await slack.wait_socket_connected(after=connections)
