"""Replicas on one PostgreSQL database keep hearing each other when the listening connection
is lost: killed by the server, or left open but dead by the network."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import pytest

from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.intents import Submit
from askbridge.core.models import MessageRef, Person, Request, Selections, Status, Target
from askbridge.core.store.postgres import LISTENER_NAME, PostgresStore
from tests.conftest import DEPLOY
from tests.pg_relay import Relay
from tests.stores import POSTGRES_URL, postgres_schema

ADA = Person(platform="chat", id="U1", name="Ada")
APPROVE: Selections = {0: (0,)}
PASSWORD = "hunter2-not-for-logs"
FAST = {"reconnect_s": (0.05, 0.2)}
# A query text that starts with LISTEN, after the statement name of a Parse message; not the
# pool's `UNLISTEN *`.
LISTEN_QUERY = b'\x00LISTEN "'


class Room:
    """A surface on the real seam that shows questions nowhere."""

    platform = "chat"
    answerer_kinds: tuple[str, ...] = ("chat",)

    def check_target(self, target: Target) -> None:
        pass

    async def post(self, request: Request, target: Target) -> MessageRef:
        return MessageRef(platform="chat", channel=target.channel, message_id=request.request_id)

    async def update(self, request: Request, message: MessageRef) -> None:
        pass

    async def notify(self, person: Person, message: MessageRef, text: str) -> None:
        pass


class Records(logging.Handler):
    """The store's log records as they come, to wait on instead of sleeping."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.queue: asyncio.Queue[logging.LogRecord] = asyncio.Queue()

    def emit(self, record: logging.LogRecord) -> None:
        self.queue.put_nowait(record)

    async def until(self, matches: Callable[[logging.LogRecord], bool]) -> logging.LogRecord:
        async with asyncio.timeout(10):
            while not matches(record := await self.queue.get()):
                pass
        return record


@pytest.fixture
def records(caplog: pytest.LogCaptureFixture) -> Iterator[Records]:
    caplog.set_level(logging.INFO, logger="askbridge.store")
    handler = Records()
    logger = logging.getLogger("askbridge.store")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


@asynccontextmanager
async def replica(url: str, **store_options: Any) -> AsyncIterator[Broker]:
    """A started broker on its own store; a few pooled connections, so it never needs a new
    one while its role may not log in."""
    broker = Broker(PostgresStore(url, min_size=3, **store_options), default_target="chat:C1")
    broker.add_surface(Room())
    await broker.store.open()
    await broker.start()
    try:
        yield broker
    finally:
        await broker.stop()
        await broker.store.close()


@asynccontextmanager
async def own_role(admin: asyncpg.Connection[Any], url: str) -> AsyncIterator[tuple[str, str]]:
    """A login role with every right on the schema of `url`, and `url` as that role (with a
    password, which trust authentication ignores)."""
    role = f"askbridge_test_{uuid.uuid4().hex[:10]}"
    schema = url.rpartition("search_path=")[2]
    await admin.execute(f"CREATE ROLE {role} LOGIN")
    try:
        for grant in (
            f"GRANT USAGE, CREATE ON SCHEMA {schema} TO {role}",
            f"GRANT ALL ON ALL TABLES IN SCHEMA {schema} TO {role}",
            f"GRANT ALL ON ALL SEQUENCES IN SCHEMA {schema} TO {role}",
        ):
            await admin.execute(grant)
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        yield role, parts._replace(netloc=f"{role}:{PASSWORD}@{host}").geturl()
    finally:
        await admin.execute(f"DROP OWNED BY {role}")
        await admin.execute(f"DROP ROLE {role}")


@asynccontextmanager
async def admin_and_schema() -> AsyncIterator[tuple[asyncpg.Connection[Any], str]]:
    async with postgres_schema() as url:
        admin = await asyncpg.connect(POSTGRES_URL)
        try:
            yield admin, url
        finally:
            await admin.close()


async def test_a_terminated_listener_listens_again_and_wakes_waiters(
    records: Records, caplog: pytest.LogCaptureFixture
) -> None:
    async with (
        admin_and_schema() as (admin, url),
        replica(url) as one,
        own_role(admin, url) as (role, role_url),
        replica(role_url, **FAST) as two,
    ):
        await one.ask(Ask.parse({"questions": [DEPLOY], "request_id": "deploy_1"}))
        waiter = asyncio.create_task(two.wait("deploy_1", 60))

        # The listener is killed, and may not come back until the answer was given.
        await admin.execute(f"ALTER ROLE {role} NOLOGIN")
        pids = await admin.fetch(
            "SELECT pid FROM pg_stat_activity WHERE usename = $1 AND application_name = $2",
            role,
            LISTENER_NAME,
        )
        assert len(pids) == 1
        await admin.execute("SELECT pg_terminate_backend($1)", pids[0]["pid"])
        lost = await records.until(lambda r: "lost the connection" in r.getMessage())
        await records.until(lambda r: "not permitted to log in" in r.getMessage())
        await one.act("deploy_1", ADA, Submit(APPROVE))  # its NOTIFY reaches no one on two
        await admin.execute(f"ALTER ROLE {role} LOGIN")

        # Not a "trying again" of an attempt that failed before the role could log in again.
        back = await records.until(lambda r: r.getMessage().startswith("listening for changes"))
        answered = await asyncio.wait_for(waiter, 10)
        assert answered.status is Status.ANSWERED
        assert answered.answers == {"Deploy": "Approve"}

        # Changes made after the reconnect are heard as they happen.
        await one.ask(Ask.parse({"questions": [DEPLOY], "request_id": "deploy_2"}))
        waiter = asyncio.create_task(two.wait("deploy_2", 60))
        await one.act("deploy_2", ADA, Submit(APPROVE))
        assert (await asyncio.wait_for(waiter, 10)).status is Status.ANSWERED

    assert lost.levelno == logging.WARNING
    assert "connection was closed" in lost.getMessage()
    assert back.levelno == logging.INFO
    assert "127.0.0.1" in back.getMessage()
    assert PASSWORD not in caplog.text


async def test_listening_again_backs_off_doubling_with_jitter(records: Records) -> None:
    first, longest = FAST["reconnect_s"]
    async with (
        admin_and_schema() as (admin, url),
        own_role(admin, url) as (role, role_url),
        replica(role_url, **FAST),
    ):
        await admin.execute(f"ALTER ROLE {role} NOLOGIN")
        pids = await admin.fetch(
            "SELECT pid FROM pg_stat_activity WHERE usename = $1 AND application_name = $2",
            role,
            LISTENER_NAME,
        )
        await admin.execute("SELECT pg_terminate_backend($1)", pids[0]["pid"])
        pauses: list[float] = []
        while len(pauses) < 6:
            failed = await records.until(lambda r: "trying again in" in r.getMessage())
            assert isinstance(failed.args, tuple)
            pauses.append(float(failed.args[-1]))  # type: ignore[arg-type]
        await admin.execute(f"ALTER ROLE {role} LOGIN")
        await records.until(lambda r: r.getMessage().startswith("listening for changes"))
    for attempt, pause in enumerate(pauses, start=1):
        ceiling = min(longest, first * 2 ** (attempt - 1))
        assert ceiling / 2 <= pause <= ceiling, (attempt, pauses)


class ListenerRelay(Relay):
    """Can go silent on the connections that LISTEN while keeping them open, as a network
    blip leaves an idle connection."""

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream)
        self._listening: set[asyncio.StreamWriter] = set()
        self._silenced: set[asyncio.StreamWriter] = set()

    def go_silent(self) -> None:
        """From now on, drop whatever the connections listening now send or are sent."""
        self._silenced = set(self._listening)

    def passes(self, data: bytes, client: asyncio.StreamWriter, upward: bool) -> bool:
        if LISTEN_QUERY in data:
            self._listening.add(client)
        return client not in self._silenced


async def test_a_listener_that_stops_answering_is_replaced(records: Records) -> None:
    async with admin_and_schema() as (_admin, url), replica(url) as one:
        relay = ListenerRelay(url)
        relayed = await relay.start()
        try:
            async with replica(relayed, check_every_s=0.2, **FAST) as two:
                await one.ask(Ask.parse({"questions": [DEPLOY], "request_id": "deploy_3"}))
                waiter = asyncio.create_task(two.wait("deploy_3", 60))
                relay.go_silent()
                await one.act("deploy_3", ADA, Submit(APPROVE))  # its NOTIFY is dropped
                lost = await records.until(lambda r: "lost the connection" in r.getMessage())
                assert "did not answer a check within 0.2s" in lost.getMessage()
                await records.until(lambda r: "again" in r.getMessage())
                answered = await asyncio.wait_for(waiter, 10)
                assert answered.status is Status.ANSWERED
        finally:
            await relay.close()


async def test_wait_returns_the_request_as_it_is_when_its_timeout_passes() -> None:
    """A replica that hears nothing (its NOTIFY was lost) still reads the answer at the end."""
    async with postgres_schema() as url, replica(url) as one:
        deaf = Broker(PostgresStore(url))  # never listens
        await deaf.store.open()
        try:
            await one.ask(Ask.parse({"questions": [DEPLOY], "request_id": "deploy_4"}))
            waiter = asyncio.create_task(deaf.wait("deploy_4", 0.5))
            await one.act("deploy_4", ADA, Submit(APPROVE))
            answered = await asyncio.wait_for(waiter, 10)
            assert answered.status is Status.ANSWERED
        finally:
            await deaf.store.close()
