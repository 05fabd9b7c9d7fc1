"""Catching up once a platform answers again, instead of when each message's backoff runs out.

Each platform has its own `Outage`: the first call that the platform answers after a failure
(it succeeds, or the platform refuses that one message: `MessageRefused`) wakes every update
waiting on that platform, and while they wait one of them probes at least every `PROBE_S`. See
docs/explanation/durability.md, "Work that outlives a click".
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from datetime import datetime, timedelta
from typing import Any

from tenacity import RetryCallState

from askbridge.core.clock import Clock
from askbridge.core.errors import MessageRefused, RetryLater

PROBE_S = 5.0
"""While updates wait on a failing platform, one of them tries it at least this often."""


class Outage:
    """One platform's failures, as the updates waiting on it see them."""

    def __init__(self, clock: Clock, probe_s: float = PROBE_S) -> None:
        self._clock = clock
        self._probe = timedelta(seconds=probe_s)
        self._failing = False
        self._back = asyncio.Event()
        self._wakes: list[datetime] = []
        """When each update waiting on the platform (and listening) tries it again."""

    def failed(self) -> None:
        self._failing = True

    def succeeded(self) -> None:
        """The platform answered: if it had failed, every update waiting on it tries again
        (each still after its own Retry-After)."""
        if self._failing:
            self._failing = False
            self._back.set()
            self._back = asyncio.Event()

    def waiter(self) -> Waiter:
        return Waiter(self)

    async def pause(self, delay_s: float, not_before_s: float, listening: bool) -> bool:
        """Wait `delay_s`, never less than `not_before_s`; when `listening`, less if the
        platform comes back, or if no other update tries it within the probe interval.
        True: the platform's return ended the wait."""
        now = self._clock.now()
        not_before = now + timedelta(seconds=not_before_s)
        until = max(now + timedelta(seconds=delay_s), not_before)
        if not listening:
            await self._clock.sleep_until(until)
            return False
        probe_at = max(now + self._probe, not_before)
        # Only listening updates count: another's own failures say nothing of the platform's.
        if probe_at < until and not any(wake <= probe_at for wake in self._wakes):
            until = probe_at
        back = self._back
        self._wakes.append(until)
        try:
            await self._clock.sleep_until(not_before)
            if back.is_set() or self._clock.now() >= until:
                return back.is_set()
            return await _first(self._clock.sleep_until(until), back.wait())
        finally:
            self._wakes.remove(until)


class Waiter:
    """One update's tries on a platform: `failed` after each failure, then `pause` (tenacity's
    `before_sleep` and `sleep`), and the platform's `succeeded` once it is through.

    A message the platform refuses (`MessageRefused`) keeps its own backoff for the rest of its
    tries, neither probing nor woken; the refusal itself is the platform's answer, so it wakes
    the updates waiting on the platform as a success would."""

    def __init__(self, outage: Outage) -> None:
        self._outage = outage
        self._not_before_s = 0.0
        self._listening = True
        self._woken = False

    def failed(self, state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        self._not_before_s = error.after_s if isinstance(error, RetryLater) else 0.0
        if isinstance(error, MessageRefused):
            self._listening = False
            self._outage.succeeded()
            return
        if self._woken:
            # Woken by the platform's return, and failing still: not the platform's outage.
            self._listening = False
        self._outage.failed()

    async def pause(self, delay_s: float) -> None:
        self._woken = await self._outage.pause(delay_s, self._not_before_s, self._listening)


async def _first(sleeping: Coroutine[Any, Any, None], back: Coroutine[Any, Any, bool]) -> bool:
    """Whether `back` (the platform's return) finished before `sleeping` did."""
    sleeper, returned = asyncio.ensure_future(sleeping), asyncio.ensure_future(back)
    try:
        await asyncio.wait((sleeper, returned), return_when=asyncio.FIRST_COMPLETED)
    finally:
        sleeper.cancel()
        returned.cancel()
    return returned.done() and not returned.cancelled()
