"""Shared fixtures: an askbridge server on a real port, with a clock the test controls."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import aiohttp
import pytest

from askbridge.bots.service import Service
from askbridge.bots.settings import Settings
from askbridge.core.clock import ManualClock
from askbridge.core.store import Store, open_store
from askbridge.core.store.sqlite import SQLiteStore
from tests.editable import stale_install_message
from tests.server_process import ServerProcess
from tests.stores import database_url

StartService = Callable[..., Awaitable[Service]]


def pytest_sessionstart(session: pytest.Session) -> None:
    message = stale_install_message()
    if message is not None:
        pytest.exit(message, returncode=pytest.ExitCode.USAGE_ERROR)


DATABASE = {
    "request_id": "ask_db",
    "questions": [
        {
            "question": "Which database should we use?",
            "header": "Database",
            "multiSelect": False,
            "options": [
                {"label": "PostgreSQL", "description": "Relational with advanced features"},
                {"label": "SQLite", "description": "Lightweight embedded database"},
            ],
        },
        {
            "question": "Which features do you want?",
            "header": "Features",
            "multiSelect": True,
            "options": [
                {"label": "Caching", "description": "Response caching"},
                {"label": "Logging", "description": "Detailed logs"},
                {"label": "Metrics", "description": "Performance monitoring"},
            ],
        },
    ],
}
"""The spec's two example questions as one request."""

EXPECTED = {"Database": "PostgreSQL", "Features": "Caching, Metrics"}

DEPLOY = {
    "question": "Deploy build 4711 to production?",
    "header": "Deploy",
    "options": [
        {"label": "Approve", "description": "Ship it"},
        {"label": "Reject", "description": "Hold the release"},
    ],
}
"""A one-question approval, as a deploy gate asks it."""


def settings_for(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": 0,
        "database_url": f"sqlite:///{tmp_path / 'askbridge.db'}",
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)


async def waiting_ids(
    http: aiohttp.ClientSession, url: str, until: Callable[[list[str]], bool] = bool
) -> list[str]:
    """The ids of the waiting requests, newest first, once `until(ids)` holds (by default: once
    any request waits); woken by the web page's change feed, not by polling."""
    since = -1  # lower than any version: the first call answers at once
    while True:
        async with http.get(f"{url}/web/changes?since={since}") as response:
            since = (await response.json())["version"]
        async with http.get(f"{url}/v1/questions?status=waiting") as response:
            ids = [q["request_id"] for q in (await response.json())["questions"]]
        if until(ids):
            return ids


async def audit_events(
    http: aiohttp.ClientSession, url: str, request_id: str
) -> list[dict[str, Any]]:
    """A request's audit trail, from the events endpoint."""
    async with http.get(f"{url}/v1/questions/{request_id}/events") as response:
        assert response.status == 200
        found: list[dict[str, Any]] = (await response.json())["events"]
    return found


async def story(
    http: aiohttp.ClientSession,
    url: str,
    request_id: str,
    who: Literal["name", "id"] = "name",
) -> list[tuple[str, str | None]]:
    """Each audit event's kind and who acted (their name, or their platform id), in order."""
    trail = await audit_events(http, url, request_id)
    return [(e["kind"], e["actor"][who] if e["actor"] else None) for e in trail]


@pytest.fixture(autouse=True, scope="session")
def data_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The per-user data directory (XDG_DATA_HOME), where settings without
    ASKBRIDGE_DATABASE_URL keep their database: in the tests a temporary one, never the home's;
    `askbridge` processes the tests start inherit it."""
    with pytest.MonkeyPatch.context() as patch:
        found = tmp_path_factory.mktemp("data-home")
        patch.setenv("XDG_DATA_HOME", str(found))
        yield found


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def start_service(tmp_path: Path, clock: ManualClock) -> AsyncIterator[StartService]:
    started: list[Service] = []

    async def start(**overrides: Any) -> Service:
        service = Service(settings_for(tmp_path, **overrides), clock=clock)
        await service.start()
        started.append(service)
        return service

    yield start
    for service in reversed(started):
        await service.stop()


@pytest.fixture
async def service(start_service: StartService) -> Service:
    return await start_service()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    """An open SQLite store in tmp_path (a test module may have a `store` of its own)."""
    opened = SQLiteStore(tmp_path / "store.db")
    await opened.open()
    yield opened
    await opened.close()


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[ServerProcess]:
    """`askbridge serve` as a child process on a database in tmp_path; started by the test."""
    process = ServerProcess(tmp_path / "askbridge.db")
    yield process
    await process.stop()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


@pytest.fixture(params=["sqlite", "postgres"])
async def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A database of each kind: a SQLite file, a PostgreSQL schema of its own."""
    async with database_url(request.param, tmp_path) as found:
        yield found


@pytest.fixture
async def store_replicas(store_url: str) -> AsyncIterator[tuple[Store, Store]]:
    """Two stores on one database, as two replicas have."""
    first, second = open_store(store_url), open_store(store_url)
    await first.open()
    await second.open()
    yield first, second
    await first.close()
    await second.close()
