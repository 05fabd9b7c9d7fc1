"""Keeping under a platform's rate limit for one kind of call, instead of meeting its 429s.

A `Pace` hands out turns first come, first served: `burst` at once, then one every
`60 / per_minute` seconds (the generic cell rate algorithm: one number, no timer). Why:
docs/explanation/speed.md, "Keeping under a platform's rate limit".
"""

from __future__ import annotations

import asyncio

BURST = 10
"""Calls that may go at once after a quiet spell."""


class Pace:
    def __init__(self, per_minute: float, burst: int = BURST) -> None:
        if per_minute <= 0 or burst < 1:
            raise ValueError("a pace needs per_minute > 0 and burst >= 1")
        self.per_minute = per_minute
        self._interval = 60.0 / per_minute
        self._leeway = (burst - 1) * self._interval
        self._due = float("-inf")
        """When the latest turn handed out would have been due at an even pace."""

    def _next(self, now: float) -> float:
        """When the next turn would be due at an even pace, asked at `now`."""
        return max(self._due, now)

    def free(self, now: float) -> bool:
        """Whether a turn taken at `now` would start at once."""
        return self._next(now) - self._leeway <= now

    def reserve(self, now: float) -> float:
        """Take the next turn; how many seconds from `now` it starts."""
        due = self._next(now)
        self._due = due + self._interval
        return max(0.0, due - self._leeway - now)

    async def turn(self) -> None:
        """Wait for the next turn."""
        wait = self.reserve(asyncio.get_running_loop().time())
        if wait > 0:
            await asyncio.sleep(wait)
