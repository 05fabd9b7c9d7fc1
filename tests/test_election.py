"""One leader among processes sharing a PostgreSQL schema: two electors in this process, each
with a connection of its own, as two replicas would have."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import parse_qs, urlsplit

import asyncpg

from askbridge.core.election import SETTLE_CHECKS, Election, SoleSeat
from askbridge.core.store.postgres_seat import SEAT_LOCKS, PostgresSeat
from tests.pg_relay import Relay
from tests.stores import POSTGRES_URL, postgres_schema

CHECK_S = 0.1
TAKEOVER_S = CHECK_S * (SETTLE_CHECKS + 2)
"""A standby's next attempt, its settling, and a check's worth of slack."""
PATIENCE_S = 10.0
"""How long a test waits for what should take `TAKEOVER_S`, on a loaded machine."""


class Leaders:
    """Who leads, as the callbacks say; fails the test if two ever lead at once."""

    def __init__(self) -> None:
        self.now: set[str] = set()
        self.changed = asyncio.Condition()
        self.history: list[str] = []

    def elector(self, name: str, seat: PostgresSeat | SoleSeat) -> Election:
        async def lead() -> None:
            assert not self.now, f"{name} leads while {self.now} still lead"
            await self._change(name, "+")

        async def resign() -> None:
            await self._change(name, "-")

        return Election(seat, f"the test seat ({name})", lead=lead, resign=resign, check_s=CHECK_S)

    async def _change(self, name: str, sign: str) -> None:
        async with self.changed:
            (self.now.add if sign == "+" else self.now.discard)(name)
            self.history.append(sign + name)
            self.changed.notify_all()

    async def until(self, leading: set[str], within_s: float = PATIENCE_S) -> float:
        """Wait until exactly `leading` lead; how long it took."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        async with asyncio.timeout(within_s), self.changed:
            await self.changed.wait_for(lambda: self.now == leading)
        return loop.time() - began


@asynccontextmanager
async def admin_and_seat_name() -> AsyncIterator[tuple[asyncpg.Connection, str, str]]:
    async with postgres_schema() as url:
        admin = await asyncpg.connect(POSTGRES_URL)
        try:
            yield admin, url, f"test-{uuid.uuid4().hex[:8]}"
        finally:
            await admin.close()


async def holder_pid(admin: asyncpg.Connection, url: str, name: str) -> int:
    """The server process of the connection holding seat `name` in the schema of `url`."""
    schema = parse_qs(urlsplit(url).query)["search_path"][0]
    pids = await admin.fetch(
        "WITH seat AS (SELECT hashtextextended($1 || ':' || $2, $3) AS key) "
        "SELECT pid FROM pg_locks, seat WHERE locktype = 'advisory' AND granted "
        "AND objsubid = 1 AND classid::bigint = (key >> 32) & 4294967295 "
        "AND objid::bigint = key & 4294967295",
        schema,
        name,
        SEAT_LOCKS,
    )
    assert len(pids) == 1, pids
    return int(pids[0]["pid"])


async def test_one_leads_and_the_other_takes_over_when_its_connection_is_closed() -> None:
    leaders = Leaders()
    async with admin_and_seat_name() as (admin, url, name):
        a = leaders.elector("a", PostgresSeat(url, name))
        b = leaders.elector("b", PostgresSeat(url, name))
        try:
            assert await a.start() is True
            assert await b.start() is False
            assert leaders.now == {"a"}

            # The server ends a's session (as a restart or a network failure it noticed would).
            pid = await holder_pid(admin, url, name)
            await admin.execute("SELECT pg_terminate_backend($1)", pid)
            took = await leaders.until({"b"})
            assert took < TAKEOVER_S + 1.0, took
            assert leaders.history == ["+a", "-a", "+b"]

            # a stands by again, and takes over when b stops.
            await b.stop()
            await leaders.until({"a"})
            assert leaders.history == ["+a", "-a", "+b", "-b", "+a"]
        finally:
            await a.stop()
            await b.stop()
    assert leaders.history[-1] == "-a"


async def test_a_holder_whose_connection_goes_silent_resigns_before_another_leads() -> None:
    leaders = Leaders()
    async with admin_and_seat_name() as (_admin, url, name):
        relay = SilentRelay(url)
        relayed = await relay.start()
        a = leaders.elector("a", PostgresSeat(relayed, name))
        b = leaders.elector("b", PostgresSeat(url, name))
        try:
            assert await a.start() is True
            assert await b.start() is False

            # The network drops a's packets: its connection stays open, its checks go unanswered.
            relay.go_silent()
            await leaders.until({"b"})
            # The lead callback itself asserts that a had resigned first.
            assert leaders.history == ["+a", "-a", "+b"]
        finally:
            await a.stop()
            await b.stop()
            await relay.close()


async def test_a_process_with_its_own_store_always_leads() -> None:
    leaders = Leaders()
    sole = leaders.elector("sole", SoleSeat())
    assert await sole.start() is True
    assert leaders.now == {"sole"}
    await sole.stop()
    assert leaders.history == ["+sole", "-sole"]


class SilentRelay(Relay):
    """Stops passing anything on, keeping its connections open, as a network failure
    leaves them."""

    silent = False

    def go_silent(self) -> None:
        self.silent = True

    def passes(self, data: bytes, client: asyncio.StreamWriter, upward: bool) -> bool:
        return not self.silent
