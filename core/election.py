"""Electing the one replica that does what only one may do at a time, such as holding a chat
platform's gateway (every session opened with a bot token receives every click).

A `Seat` is a PostgreSQL session-level advisory lock on a connection of its own, or, on SQLite,
the `SoleSeat`. A holder that loses its connection resigns first; a new holder settles for
`SETTLE_CHECKS` checks before leading, so two never lead at once (docs/explanation/durability.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

log = logging.getLogger("askbridge.election")

CHECK_S = 1.0
SETTLE_CHECKS = 3
"""A holder that lost its connection finds out within two checks (one to come round, one to go
unanswered), and resigns within a third."""


class Seat(Protocol):
    @property
    def shared(self) -> bool:
        """Whether other processes compete for it (then a newcomer settles before leading)."""

    async def take(self) -> bool:
        """Try once; whether this process holds the seat now. Raises if the database cannot
        be reached."""

    async def lost(self, check_s: float, within_s: float | None = None) -> str | None:
        """Return, saying why, once the seat may no longer be held: the connection closed, or
        a check every `check_s` did not answer within `check_s`. With `within_s`, return None
        if it is still held after that long."""

    async def leave(self) -> None:
        """Give the seat up (nothing happens if it is not held)."""


class SoleSeat:
    """The seat of a process that has its store to itself: always taken, never lost."""

    shared = False

    async def take(self) -> bool:
        return True

    async def lost(self, check_s: float, within_s: float | None = None) -> str | None:
        if within_s is None:
            never: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            return await never  # a sole seat is never lost
        await asyncio.sleep(within_s)
        return None

    async def leave(self) -> None:
        return None


def seat_for(database_url: str, name: str) -> Seat:
    """The seat called `name` among the replicas sharing `database_url`."""
    if database_url.startswith(("postgresql://", "postgres://")):
        from askbridge.core.store.postgres_seat import PostgresSeat  # asyncpg only when asked for

        return PostgresSeat(database_url, name)
    return SoleSeat()


Callback = Callable[[], Awaitable[None]]


class Election:
    """Holds `seat` for this process when it can, calling `lead` on taking it and `resign` on
    losing it (and on `stop`). `what` names the seat in log lines: "the gateway"."""

    def __init__(
        self, seat: Seat, what: str, *, lead: Callback, resign: Callback, check_s: float = CHECK_S
    ) -> None:
        self._seat = seat
        self._what = what
        self._lead = lead
        self._resign = resign
        self.check_s = check_s
        self.holding = False
        self._task: asyncio.Task[None] | None = None
        self._unreachable = False

    @property
    def shared(self) -> bool:
        """Whether other processes compete for the seat."""
        return self._seat.shared

    @property
    def settle_s(self) -> float:
        """How long a newly taken seat is held before leading."""
        return SETTLE_CHECKS * self.check_s if self.shared else 0.0

    async def start(self) -> bool:
        """Try to take the seat once (settling and leading if taken: an error in `lead` is
        raised here), then go on in the background; whether this process leads."""
        if await self._take():
            await self._settle_then_lead()
        self._task = asyncio.create_task(self._run(), name="askbridge-election")
        return self.holding

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        if self.holding:
            await self._step_down()
        await self._seat.leave()

    async def _run(self) -> None:
        while True:
            if self.holding:
                why = await self._seat.lost(self.check_s)
                assert why is not None
                log.warning(
                    "lost the database connection that holds %s (%s): resigning, and standing by "
                    "for %s",
                    self._what,
                    why,
                    self._what,
                )
                await self._step_down()
                await self._seat.leave()
                # The standbys, whose connections work, get the first chance to take over.
                await asyncio.sleep(self.settle_s)
            elif await self._take():
                try:
                    await self._settle_then_lead()
                except Exception:
                    log.exception("taking %s over failed; resigning", self._what)
                    await self._step_down()
                    await self._seat.leave()
                else:
                    if self.holding:
                        log.info("holding %s: took over from the replica that held it", self._what)
            else:
                # A timer between attempts, not a wait for something: another replica's lock
                # is let go without telling anyone.
                await asyncio.sleep(self.check_s)

    async def _take(self) -> bool:
        try:
            taken = await self._seat.take()
        except Exception as error:  # any failure to reach the database
            if not self._unreachable:
                log.warning(
                    "cannot reach the database to hold %s (%r); standing by, trying every %gs",
                    self._what,
                    error,
                    self.check_s,
                )
            self._unreachable = True
            await self._seat.leave()
            return False
        if self._unreachable:
            log.info("the database is reachable again; trying to hold %s", self._what)
            self._unreachable = False
        return taken

    async def _settle_then_lead(self) -> None:
        if self.settle_s > 0 and await self._seat.lost(self.check_s, self.settle_s) is not None:
            await self._seat.leave()
            return
        self.holding = True
        await self._lead()

    async def _step_down(self) -> None:
        self.holding = False
        try:
            await self._resign()
        except Exception:
            log.exception("resigning %s failed", self._what)
