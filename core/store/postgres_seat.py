"""A seat for `core/election.py` on PostgreSQL: a session-level advisory lock, per schema (so that
deployments sharing a database do not meet), held on a connection of its own. The server lets it
go as soon as that connection ends, whether the replica stopped, died or lost the network."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import asyncpg

from askbridge.core.store.postgres import CONNECT_TIMEOUT_S

SEAT_LOCKS = 0x61736B73
"""The seed that hashes a seat's name into its advisory lock key."""
CLOSE_TIMEOUT_S = 1.0


class PostgresSeat:
    shared = True

    def __init__(self, url: str, name: str) -> None:
        self.url = url
        self.name = name
        self._db: asyncpg.Connection[Any] | None = None
        self._closed = asyncio.Event()

    async def take(self) -> bool:
        if self._db is None or self._db.is_closed():
            await self.leave()
            self._closed = asyncio.Event()
            closed = self._closed
            self._db = await asyncpg.connect(
                self.url,
                timeout=CONNECT_TIMEOUT_S,
                server_settings={"application_name": f"askbridge-{self.name}"},
            )
            self._db.add_termination_listener(lambda _connection: closed.set())
        held = await self._db.fetchval(
            "SELECT pg_try_advisory_lock(hashtextextended(current_schema() || ':' || $1, $2))",
            self.name,
            SEAT_LOCKS,
            timeout=CONNECT_TIMEOUT_S,
        )
        return bool(held)

    async def lost(self, check_s: float, within_s: float | None = None) -> str | None:
        db, closed = self._db, self._closed
        if db is None or db.is_closed():
            return "the connection was closed"
        loop = asyncio.get_running_loop()
        until = None if within_s is None else loop.time() + within_s
        while True:
            wait_s = check_s if until is None else min(check_s, until - loop.time())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(closed.wait(), max(wait_s, 0.0))
                return "the connection was closed"
            if until is not None and loop.time() >= until:
                return None
            try:
                await db.fetchval("SELECT 1", timeout=check_s)
            except TimeoutError:
                return f"it did not answer a check within {check_s:g}s"
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
                return f"a check failed: {type(error).__name__}: {error}"

    async def leave(self) -> None:
        """Closing the connection lets the lock go; a connection that does not answer is cut,
        and the server lets go once it notices."""
        db, self._db = self._db, None
        if db is None or db.is_closed():
            return
        try:
            await db.close(timeout=CLOSE_TIMEOUT_S)
        except Exception:  # whatever happened, the connection must go
            db.terminate()
