"""Time as the broker sees it. Expiry asks a Clock, so tests move time instead of waiting for it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Protocol


def iso(when: datetime) -> str:
    """A moment as every API body and the audit log write it: `2026-11-29T22:30:00.000Z`."""
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Clock(Protocol):
    def now(self) -> datetime: ...

    async def sleep_until(self, when: datetime) -> None:
        """Return once `now() >= when`."""


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep_until(self, when: datetime) -> None:
        delay = (when - self.now()).total_seconds()
        if delay > 0:
            await asyncio.sleep(delay)


class ManualClock:
    """A clock that only moves when told to; sleepers wake as soon as it passes their deadline."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2030, 1, 1, tzinfo=UTC)
        self._moved = asyncio.Condition()

    def now(self) -> datetime:
        return self._now

    async def advance(self, seconds: float) -> None:
        async with self._moved:
            self._now += timedelta(seconds=seconds)
            self._moved.notify_all()

    async def sleep_until(self, when: datetime) -> None:
        async with self._moved:
            await self._moved.wait_for(lambda: self._now >= when)
