"""The two sides of a comparison, as the benchmark's agents see them, and the emulator's
control API. Both sides are servers in processes of their own that post a message with an
Approve button when asked, and hold an agent's HTTP long-poll until someone clicks it."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import aiohttp

from tests.conftest import DEPLOY

Via = Literal["http", "socket"]
LONG_POLL_S = 120
LONG_POLLS_OPEN = re.compile(r"^askbridge_long_polls_open(?:\{[^}]*\})? (\S+)$", re.MULTILINE)
REGISTER_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Target:
    """One message with an Approve button, and the key its agent waits on."""

    key: str
    channel: str
    ts: str


@dataclass(frozen=True)
class SlackApp:
    """One app in the emulator process: its own tokens, Socket Mode and request URL."""

    name: str
    api_url: str
    bot_token: str
    app_token: str
    signing_secret: str
    channel: str

    def env(self, via: Via) -> dict[str, str]:
        """The SLACK_* settings that put a server (askbridge or the floor) on this app."""
        settings = {"SLACK_BOT_TOKEN": self.bot_token, "SLACK_API_URL": self.api_url}
        if via == "socket":
            settings["SLACK_APP_TOKEN"] = self.app_token
        else:
            settings["SLACK_SIGNING_SECRET"] = self.signing_secret
        return settings


class SlackControl:
    """The control API of `tests.bench.slack_process`."""

    def __init__(self, http: aiohttp.ClientSession, url: str) -> None:
        self.http = http
        self.url = url

    async def _call(self, method: str, path: str, body: Any = None) -> Any:
        async with self.http.request(method, f"{self.url}{path}", json=body) as response:
            found = await response.json()
            if response.status >= 300:
                raise RuntimeError(f"emulator control {method} {path}: {response.status} {found}")
            return found

    async def app(self, name: str) -> SlackApp:
        found = await self._call("POST", f"/apps/{name}")
        return SlackApp(name=name, **found)

    async def deliver_to(self, app: SlackApp, url: str) -> None:
        await self._call("PUT", f"/apps/{app.name}/interactions", {"url": url})

    async def connections(self, app: SlackApp) -> int:
        found: int = (await self._call("GET", f"/apps/{app.name}/socket"))["connections"]
        return found

    async def wait_socket(self, app: SlackApp, after: int) -> None:
        await self._call("POST", f"/apps/{app.name}/socket?after={after}")

    async def click(self, app: SlackApp, target: Target, via: Via) -> bool:
        """A person clicks Approve on `target`; whether the app acknowledged it in time."""
        body = {"channel": target.channel, "ts": target.ts, "label": "Approve", "via": via}
        acked: bool = (await self._call("POST", f"/apps/{app.name}/click", body))["acked"]
        return acked

    async def collector(self, on: bool) -> None:
        """Turn the emulator's garbage collector on, or collect and turn it off."""
        await self._call("PUT", "/collector", {"on": on})

    async def calls(self, app: SlackApp) -> dict[str, int]:
        found: dict[str, int] = await self._call("GET", f"/apps/{app.name}/calls")
        return found


class Side(Protocol):
    name: str
    app: SlackApp
    pid: int | None
    """The server's process, whose CPU time a round reads (None: not read)."""

    async def create(self, key: str) -> Target:
        """Ask: post a message with an Approve button whose answer `key`'s agent waits for."""

    async def poll(self, key: str) -> float:
        """The agent's long-poll; the `perf_counter()` at which the answer arrived."""

    async def waiting(self) -> int:
        """How many long-polls the server holds now."""


class AskbridgeSide:
    """`askbridge serve`: the agent API's create and long-poll, `/metrics` for the count."""

    name = "askbridge"

    def __init__(
        self, http: aiohttp.ClientSession, url: str, app: SlackApp, pid: int | None = None
    ) -> None:
        self.http = http
        self.url = url
        self.app = app
        self.pid = pid

    async def create(self, key: str) -> Target:
        body = {"request_id": key, "questions": [DEPLOY], "target": f"slack:{self.app.channel}"}
        async with self.http.post(f"{self.url}/v1/questions", json=body) as response:
            created = await response.json()
            if response.status != 201:
                raise RuntimeError(f"creating {key}: {response.status} {created}")
        posted = created["messages"][0]
        return Target(key, posted["channel"], posted["message_id"])

    async def poll(self, key: str) -> float:
        url = f"{self.url}/v1/questions/{key}?wait={LONG_POLL_S}"
        async with self.http.get(url) as response:
            found = await response.json()
            arrived = time.perf_counter()
        if found.get("status") != "answered":
            raise RuntimeError(f"the agent of {key} got no answer: {found}")
        return arrived

    async def waiting(self) -> int:
        async with self.http.get(f"{self.url}/metrics") as response:
            text = await response.text()
        found = LONG_POLLS_OPEN.search(text)
        if found is None:
            raise RuntimeError("askbridge's /metrics has no askbridge_long_polls_open gauge")
        return int(float(found.group(1)))


class FloorSide:
    """The bare slack-bolt app of `tests.bench.floor`."""

    name = "floor"

    def __init__(
        self, http: aiohttp.ClientSession, url: str, app: SlackApp, pid: int | None = None
    ) -> None:
        self.http = http
        self.url = url
        self.app = app
        self.pid = pid

    async def create(self, key: str) -> Target:
        body = {"key": key, "channel": self.app.channel}
        async with self.http.post(f"{self.url}/ask", json=body) as response:
            posted = await response.json()
            if response.status != 201:
                raise RuntimeError(f"posting {key}: {response.status} {posted}")
        return Target(key, posted["channel"], posted["ts"])

    async def poll(self, key: str) -> float:
        async with self.http.get(f"{self.url}/wait/{key}?wait={LONG_POLL_S}") as response:
            found = await response.json()
            arrived = time.perf_counter()
        if found.get("status") != "answered":
            raise RuntimeError(f"the floor's agent of {key} got no answer: {found}")
        return arrived

    async def waiting(self) -> int:
        async with self.http.get(f"{self.url}/waiting") as response:
            found: int = (await response.json())["waiting"]
        return found


async def until_waiting(
    side: Side, count: int, polls: Collection[asyncio.Task[float]] = ()
) -> None:
    """Return once the server holds at least `count` long-polls (asking it, not guessing);
    fail at once if one of `polls` ended before that."""
    async with asyncio.timeout(REGISTER_TIMEOUT_S):
        while await side.waiting() < count:
            ended = next((poll for poll in polls if poll.done()), None)
            if ended is not None:
                ended.result()
                raise RuntimeError(f"{ended.get_name()} got its answer before anyone clicked")


def session(limit: int = 0) -> aiohttp.ClientSession:
    """An HTTP client for agents: no cap on connections, no total timeout on long-polls."""
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=limit),
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=30),
    )
