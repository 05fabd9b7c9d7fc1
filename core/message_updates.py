"""Keeping posted messages in step with their requests, in the background.

The agent never waits on a chat platform: after a transition one worker per message renders the
newest state, under a claim in the store, retrying (`core/outages.py`) and pacing (`core/pace.py`)
per platform. How it survives crashes and outages, across replicas:
docs/explanation/durability.md, "Work that outlives a click".
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from tenacity import AsyncRetrying, RetryCallState

from askbridge.core.clock import Clock, SystemClock
from askbridge.core.crash_points import CrashPoint, no_crash
from askbridge.core.errors import MessageRefused, RetryLater
from askbridge.core.models import MessageRef, Request, Status
from askbridge.core.outages import PROBE_S, Outage
from askbridge.core.retry import HonouringRetryAfter, stepped
from askbridge.core.store.base import Render, RenderClaims
from askbridge.core.surface import Reminding, Surface, pace_of

log = logging.getLogger("askbridge.messages")

BACKOFF_S = (1.0, 2.0, 5.0, 15.0, 60.0)
"""Waits between attempts, each within ±20 %; the last one repeats for as long as it takes."""
SWEEP_S = 60.0
TAKEOVER_S = 15.0
"""How long a message claim lasts unless renewed: how soon another replica takes over the
updates of one that died."""
START_AFTER_S = 0.005
"""A message update starts this long after the transition that asked for it: the click's
acknowledgement and the agent's wake-up, which follow the same commit, go first instead of
queuing behind rendering the message and sending it; the person sees no difference (a platform
takes longer than this to show an edit), and a burst of votes on one message is one update."""
CALLS_AT_ONCE = 4
"""Calls (updates, reminders) in flight at once on one platform: a burst of clicks queues its
message updates behind the agents' wake-ups instead of opening dozens of connections at the
same moment, and a platform's rate limit (429 + Retry-After, honoured below) is met by a few
callers, not by all of them. Per platform, so that calls hanging on one that is down never
hold up another's."""
MessageKey = tuple[str, str, str, str]


class MessageUpdates:
    def __init__(
        self,
        store: RenderClaims,
        surfaces: Mapping[str, Surface],
        *,
        backoff_s: Sequence[float] = BACKOFF_S,
        sweep_s: float = SWEEP_S,
        takeover_s: float = TAKEOVER_S,
        crash_point: CrashPoint = no_crash,
        clock: Clock | None = None,
        probe_s: float = PROBE_S,
    ) -> None:
        """`clock`: real time, whatever clock the broker's deadlines use: the leases between
        processes and the waits between a platform's failures are told on it."""
        self._store = store
        self.owner = uuid.uuid4().hex
        """Who holds this process's message claims in the store."""
        self._clock = clock or SystemClock()
        self._takeover = timedelta(seconds=takeover_s)
        self._crash = crash_point
        self._surfaces = surfaces
        self._backoff = HonouringRetryAfter(stepped(backoff_s))
        self._probe_s = probe_s
        self._outages: dict[str, Outage] = {}
        # Claims left by a replica that died are found by the next sweep after they run out.
        self._sweep_s = min(sweep_s, takeover_s)
        self._queue: dict[MessageKey, MessageRef] = {}
        self._workers: set[MessageKey] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self._renewer: asyncio.Task[None] | None = None
        self._calls: dict[str, asyncio.Semaphore] = {}
        self._pacing: set[asyncio.Task[Any]] = set()
        """Workers waiting for a turn under a platform's rate limit."""
        self._stopping = False

    def start(self) -> None:
        """Sweep the store for messages left stale (here, or by a replica that died)."""
        self._stopping = False
        self._sweeper = asyncio.create_task(self._sweep_forever(), name="askbridge-render-sweep")
        self._renewer = asyncio.create_task(self._renew_forever(), name="askbridge-render-leases")

    async def _sweep_forever(self) -> None:
        while True:
            try:
                for request_id, message in await self._store.unrendered(self._clock.now()):
                    if _key(request_id, message) not in self._workers:
                        self._enqueue(request_id, message)
            except Exception:
                log.warning("looking for messages to update failed", exc_info=True)
            await asyncio.sleep(self._sweep_s)

    async def _renew_forever(self) -> None:
        """Keep the claims of messages still being updated (a platform may be down for a long
        while) from running out under them."""
        while True:
            await asyncio.sleep(self._takeover.total_seconds() / 3)
            if self._workers:
                try:
                    await self._store.renew_claims(self.owner, self._lease_end())
                except Exception:
                    log.warning("renewing message claims failed", exc_info=True)

    def _lease_end(self) -> datetime:
        return self._clock.now() + self._takeover

    @property
    def running(self) -> bool:
        """The sweep for stale messages is alive."""
        return self._sweeper is not None and not self._sweeper.done()

    @property
    def backlog(self) -> dict[str, int]:
        """Messages being updated (or retried); of those, how many have a newer state
        waiting behind the update in flight; and messages waiting for a turn under their
        platform's rate limit."""
        paced = len(self._pacing)
        return {
            "in_flight": len(self._workers) - paced,
            "queued": len(self._queue) - paced,
            "paced": paced,
        }

    def changed(self, request: Request) -> None:
        """Re-render every message of `request`."""
        for message in request.messages:
            self._enqueue(request.request_id, message)

    def _enqueue(self, request_id: str, message: MessageRef) -> None:
        """Have the message show its request's newest state: a worker renders what the store
        holds when its turn comes, so one already at work on the message takes this too."""
        key = _key(request_id, message)
        self._queue[key] = message
        if key not in self._workers:
            self._workers.add(key)
            self._spawn(self._render_newest(key), f"askbridge-render-{request_id}")

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
        """Give updates in flight `grace_s` to finish, then cancel what is left and let go of
        its claims, so that another replica takes the updates over at once."""
        loops = [t for t in (self._sweeper, self._renewer) if t is not None]
        for loop in loops:
            loop.cancel()
        await asyncio.gather(*loops, return_exceptions=True)
        # Also for a worker that comes to wait for its turn only after this.
        self._stopping = True
        for waiting in self._pacing:
            waiting.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=grace_s)
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        try:
            await self._store.release_claims(self.owner)
        except Exception:
            log.warning("letting go of message claims failed; they run out by themselves")

    async def _render_newest(self, key: MessageKey) -> None:
        try:
            await asyncio.sleep(START_AFTER_S)
            while key in self._queue:
                surface = self._surfaces.get(key[1])
                if surface is not None and not await self._turn(surface):
                    return
                message = self._queue.pop(key)
                if surface is not None:
                    await self._render_claimed(surface, key[0], message)
        except Exception:
            # The store failed: the change stays unrendered in it, for the sweep.
            log.warning("updating a message of %s failed", key[0], exc_info=True)
        finally:
            self._workers.discard(key)

    async def _turn(self, surface: Surface) -> bool:
        """Wait for the platform's rate limit to allow one more edit; meanwhile newer states
        of the message replace the one queued, and nothing is claimed, so a stop cancels
        this wait at once and leaves the update to the sweep. False: stopping, and the turn
        is not there yet (one that is goes out within the stop's grace, as any in hand)."""
        pace = pace_of(surface)
        if pace is None:
            return True
        if self._stopping and not pace.free(asyncio.get_running_loop().time()):
            return False
        task = asyncio.current_task()
        assert task is not None
        self._pacing.add(task)
        try:
            await pace.turn()
        finally:
            self._pacing.discard(task)
        return True

    async def _render_claimed(self, surface: Surface, request_id: str, message: MessageRef) -> None:
        """Render each revision of the message's request that the store hands over, for as
        long as this process holds the message's claim and there is a newer one."""
        now = self._clock.now()
        # None: nothing to do, or another process holds the message and sees this change.
        claim = await self._store.claim_message(
            request_id, message, self.owner, now, now + self._takeover
        )
        while claim is not None:
            await self._show(surface, claim, message)
            self._crash("render.updated")
            if claim.ping and claim.request.status is Status.WAITING:
                await self._ping(surface, claim, message)
            claim = await self._store.mark_rendered(
                request_id, message, self.owner, claim, self._lease_end()
            )

    async def _show(self, surface: Surface, claim: Render, message: MessageRef) -> None:
        request = claim.request
        await self._retrying(
            message.platform,
            lambda: surface.update(request, message),
            f"updating the {message.platform} message of {request.request_id}",
        )

    async def _ping(self, surface: Surface, claim: Render, message: MessageRef) -> None:
        """Remind the people who may answer, in the message's thread: a reminder or an
        escalation step asked for it, and the store counts it sent once `mark_rendered` says so,
        so a process that dies first leaves it to the next claimant."""
        if isinstance(surface, Reminding):
            request = claim.request
            await self._retrying(
                message.platform,
                lambda: surface.remind(request, message),
                f"reminding on {message.platform} for {request.request_id}",
            )

    async def _retrying(
        self, platform: str, call: Callable[[], Awaitable[None]], what: str
    ) -> None:
        """Run `call` until it succeeds; the wait grows along the back-off schedule, with
        jitter, is never shorter than the platform's Retry-After, and ends early when the
        platform answers again."""
        outage = self._outages.get(platform)
        if outage is None:
            outage = self._outages[platform] = Outage(self._clock, self._probe_s)
        calls = self._calls.get(platform)
        if calls is None:
            calls = self._calls[platform] = asyncio.Semaphore(CALLS_AT_ONCE)
        waiter = outage.waiter()

        def failed(state: RetryCallState) -> None:
            waiter.failed(state)
            error = state.outcome.exception() if state.outcome else None
            log.warning(
                "%s failed (attempt %d); trying again in %.1f s: %s",
                what,
                state.attempt_number,
                state.upcoming_sleep,
                error,
                # The platform's answer says it all; a traceback is for what it did not say.
                exc_info=None if isinstance(error, RetryLater | MessageRefused) else error,
            )

        # The first try goes without tenacity's machinery (about a tenth of a millisecond an
        # update): nearly every update succeeds at once. A failure is handed to the retries as
        # their first attempt, so the schedule is the same.
        first: Exception | None = None
        try:
            async with calls:
                await call()
        except Exception as error:
            first = error
        else:
            outage.succeeded()
            return
        async for attempt in AsyncRetrying(
            wait=self._backoff, sleep=waiter.pause, before_sleep=failed, reraise=True
        ):
            with attempt:
                if first is not None:
                    failure, first = first, None
                    raise failure
                async with calls:
                    await call()
        outage.succeeded()

    def _spawn(self, coroutine: Coroutine[Any, Any, Any], name: str) -> None:
        task = asyncio.create_task(coroutine, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _key(request_id: str, message: MessageRef) -> MessageKey:
    return (request_id, message.platform, message.channel, message.message_id)
