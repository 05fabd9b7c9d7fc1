"""Keeping posted messages in step with their requests, in the background.

The agent never waits on a chat platform: after a transition the broker hands the request
here, after the waiters are woken, and one worker per message renders the newest state it has
been given (so a slow, retried update never lands after a newer one); at most CALLS_AT_ONCE
platform calls are in flight, the others queue. An update is retried for as long as the
process lives, backing off up to a minute (or as long as the platform's Retry-After says);
what a process leaves undone is in the store (`Store.unrendered`), which every replica sweeps
now and then, so a message never stays stale once its platform is back. Reminders use the
same retries.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from datetime import datetime
from typing import Any

from askbridge.core.crash_points import CrashPoint, no_crash
from askbridge.core.errors import RetryLater
from askbridge.core.models import MessageRef, Request, Status
from askbridge.core.store.base import Store
from askbridge.core.surface import Reminding, Surface

log = logging.getLogger("askbridge.messages")

BACKOFF_S = (1.0, 2.0, 5.0, 15.0, 60.0)
"""Waits between attempts; the last one repeats for as long as it takes."""
SWEEP_S = 60.0
START_AFTER_S = 0.005
"""A message update starts this long after the transition that asked for it: the click's
acknowledgement and the agent's wake-up, which follow the same commit, go first instead of
queuing behind rendering the message and sending it; the person sees no difference (a platform
takes longer than this to show an edit), and a burst of votes on one message is one update."""
CALLS_AT_ONCE = 4
"""Platform calls (updates, reminders) in flight at once: a burst of clicks queues its message
updates behind the agents' wake-ups instead of opening dozens of connections at the same
moment, and a platform's rate limit (429 + Retry-After, honoured below) is met by a few
callers, not by all of them."""
MessageKey = tuple[str, str, str, str]


class MessageUpdates:
    def __init__(
        self,
        store: Store,
        surfaces: Mapping[str, Surface],
        *,
        backoff_s: Sequence[float] = BACKOFF_S,
        sweep_s: float = SWEEP_S,
        crash_point: CrashPoint = no_crash,
    ) -> None:
        self._store = store
        self._crash = crash_point
        self._surfaces = surfaces
        self._backoff_s = tuple(backoff_s) or (0.0,)
        self._sweep_s = sweep_s
        self._queue: dict[MessageKey, tuple[Request, MessageRef]] = {}
        self._workers: set[MessageKey] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self._calls = asyncio.Semaphore(CALLS_AT_ONCE)

    def start(self) -> None:
        """Sweep the store for messages left stale (here, or by a replica that died)."""
        self._sweeper = asyncio.create_task(self._sweep_forever(), name="askbridge-render-sweep")

    async def _sweep_forever(self) -> None:
        while True:
            try:
                for request, message in await self._store.unrendered():
                    if _key(request, message) not in self._workers:
                        self.changed(request.model_copy(update={"messages": (message,)}))
            except Exception:
                log.warning("looking for messages to update failed", exc_info=True)
            await asyncio.sleep(self._sweep_s)

    @property
    def running(self) -> bool:
        """The sweep for stale messages is alive."""
        return self._sweeper is not None and not self._sweeper.done()

    @property
    def backlog(self) -> dict[str, int]:
        """Messages being updated (or retried) and, of those, how many have a newer state
        waiting behind the update in flight."""
        return {"in_flight": len(self._workers), "queued": len(self._queue)}

    def changed(self, request: Request) -> None:
        """Re-render every message of `request`."""
        for message in request.messages:
            key = _key(request, message)
            self._queue[key] = (request, message)
            if key not in self._workers:
                self._workers.add(key)
                self._spawn(self._render_newest(key), f"askbridge-render-{request.request_id}")

    def remind(self, request: Request) -> None:
        """Send the request's one reminder (already claimed in the store) on each message."""
        for message in request.messages:
            surface = self._surfaces.get(message.platform)
            if isinstance(surface, Reminding):
                reminding = surface
                self._spawn(
                    self._retrying(
                        lambda r=reminding, m=message: r.remind(request, m),
                        f"reminding on {message.platform} for {request.request_id}",
                    ),
                    f"askbridge-remind-{request.request_id}",
                )

    async def retract(self, request: Request, posted: Sequence[MessageRef], at: datetime) -> None:
        """Best effort: messages posted for a request that could not be posted everywhere
        show it as withdrawn, so nobody answers a request that is gone."""
        gone = request.model_copy(update={"status": Status.WITHDRAWN, "ended_at": at})
        for message in posted:
            try:
                await self._surfaces[message.platform].update(gone, message)
            except Exception:
                log.warning("could not retract %s on %s", request.request_id, message.platform)

    async def stop(self, grace_s: float) -> None:
        """Give updates in flight `grace_s` to finish, then cancel what is left."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=grace_s)
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _render_newest(self, key: MessageKey) -> None:
        try:
            await asyncio.sleep(START_AFTER_S)
            while key in self._queue:
                request, message = self._queue.pop(key)
                if not request.status.is_terminal:
                    # A progress render must not paint over an ending it raced with.
                    request = await self._store.get(request.request_id) or request
                await self._render(request, message)
        finally:
            self._workers.discard(key)

    async def _render(self, request: Request, message: MessageRef) -> None:
        surface = self._surfaces.get(message.platform)
        if surface is None:
            return
        done = await self._retrying(
            lambda: surface.update(request, message),
            f"updating the {message.platform} message of {request.request_id}",
        )
        if done and request.status.is_terminal:
            self._crash("render.updated")
            await self._store.mark_rendered(request.request_id, message, request.status)

    async def _retrying(self, call: Callable[[], Awaitable[None]], what: str) -> bool:
        """Run `call` until it succeeds; the wait grows along the back-off schedule, with
        jitter, and is never shorter than the platform's Retry-After."""
        for attempt in itertools.count(1):
            try:
                async with self._calls:
                    await call()
                return True
            except Exception as error:
                delay = backoff(self._backoff_s, attempt, error)
                log.warning(
                    "%s failed (attempt %d); trying again in %.1f s: %s",
                    what,
                    attempt,
                    delay,
                    error,
                    exc_info=not isinstance(error, RetryLater),
                )
                await asyncio.sleep(delay)
        return False

    def _spawn(self, coroutine: Coroutine[Any, Any, Any], name: str) -> None:
        task = asyncio.create_task(coroutine, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def backoff(schedule: Sequence[float], attempt: int, error: BaseException | None) -> float:
    """How long to wait after failed attempt number `attempt` (from 1): along `schedule`,
    whose last step repeats, with jitter; never shorter than the platform's Retry-After."""
    delay = schedule[min(attempt, len(schedule)) - 1] * random.uniform(0.8, 1.2)
    if isinstance(error, RetryLater):
        delay = max(delay, error.after_s)
    return delay


def _key(request: Request, message: MessageRef) -> MessageKey:
    return (request.request_id, message.platform, message.channel, message.message_id)
