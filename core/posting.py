"""Posting a request's messages, and finishing a posting that a crash or an outage cut short.

The store holds the request before anything is posted and each message as soon as its platform
returns it; an unfinished posting (`Store.unposted`) is taken up again when the agent asks
again and by a sweep, only where a target has no message, adopting one a `Finding` surface
finds. See ARCHITECTURE.md and docs/explanation/durability.md.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable, Mapping, Sequence

from askbridge.core import request_log
from askbridge.core.clock import Clock
from askbridge.core.crash_points import CrashPoint
from askbridge.core.errors import AskbridgeError, SurfaceUnavailable
from askbridge.core.message_updates import BACKOFF_S, SWEEP_S, MessageUpdates
from askbridge.core.models import MessageRef, Request
from askbridge.core.retry import Backoff, HonouringRetryAfter, stepped
from askbridge.core.store.base import Postings
from askbridge.core.surface import Finding, Surface

log = logging.getLogger("askbridge.posting")


class Posting:
    def __init__(
        self,
        store: Postings,
        surfaces: Mapping[str, Surface],
        messages: MessageUpdates,
        clock: Clock,
        crash_point: CrashPoint,
        changed: Callable[[str], None],
        *,
        backoff_s: Sequence[float] = BACKOFF_S,
        sweep_s: float = SWEEP_S,
    ) -> None:
        self._store = store
        self._surfaces = surfaces
        self._messages = messages
        self._clock = clock
        self._crash = crash_point
        self._changed = changed
        self._backoff = Backoff(HonouringRetryAfter(stepped(backoff_s)))
        self._sweep_s = sweep_s
        self._retrying: dict[str, asyncio.Task[None]] = {}
        self._sweeper: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Take up every unfinished posting now (a crash before this start left them), and
        look again every `sweep_s` (for those a dead replica left)."""
        self._sweeper = asyncio.create_task(self._sweep_forever(), name="askbridge-post-sweep")

    async def stop(self) -> None:
        tasks = [*self._retrying.values(), *([self._sweeper] if self._sweeper else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def first(self, request: Request) -> None:
        """Post a new request to every target (the caller holds `Store.posting`). When a
        platform fails, the request is forgotten (nobody was shown it: what was posted is
        withdrawn) and SurfaceUnavailable says why."""
        posted: list[MessageRef] = []
        for index, target in enumerate(request.targets):
            surface = self._surfaces[target.platform]
            try:
                message = await surface.post(request, target)
            except Exception as error:
                reason = str(error) if isinstance(error, AskbridgeError) else repr(error)
                log.warning("posting %s to %s failed: %s", request.request_id, target, reason)
                await self._store.discard(request.request_id, self._clock.now(), reason)
                await self._messages.retract(request, posted, self._clock.now())
                raise SurfaceUnavailable(
                    f"could not post the question to {target}: {reason}"
                ) from error
            posted.append(message)
            await self._record(request, message.model_copy(update={"target": index}))
        await self._store.mark_posted(request.request_id, self._clock.now())

    async def again(self, request: Request) -> None:
        """Finish an unfinished posting once, now (the caller holds `Store.posting`); if a
        platform fails, keep trying in the background. Never raises for a platform."""
        try:
            await self._finish(request)
        except Exception as error:
            delay = self._backoff.after(1, error)
            log.warning(
                "posting %s again failed; trying again in %.1f s: %s",
                request.request_id,
                delay,
                error,
            )
            self._retry(request.request_id, delay)

    async def _finish(self, request: Request) -> None:
        done = {m.target for m in request.messages}
        waiting = not request.status.is_terminal
        found_any, complete = False, True
        for index, target in enumerate(request.targets):
            if index in done:
                continue
            surface = self._surfaces.get(target.platform)
            if surface is None:
                if waiting:
                    log.warning(
                        "cannot post %s to %s: %s is not set up; it is posted once it is",
                        request.request_id,
                        target,
                        target.platform,
                    )
                    complete = False
                continue
            found = await surface.find(request, target) if isinstance(surface, Finding) else None
            if found is not None:
                log.info(
                    "found the message of %s in %s that was posted but not recorded; adopting it",
                    request.request_id,
                    target,
                )
                found_any = True
            elif waiting:
                found = await surface.post(request, target)
            else:
                continue
            await self._record(request, found.model_copy(update={"target": index}))
        if complete:
            await self._store.mark_posted(request.request_id, self._clock.now())
        self._changed(request.request_id)
        if found_any or not waiting:
            # An adopted message shows the request as it was when posted; an ending shows.
            now = await self._store.get(request.request_id)
            if now is not None:
                self._messages.changed(now)
        if complete:
            log.info("posting %s is finished", request.request_id)

    async def _record(self, request: Request, message: MessageRef) -> None:
        self._crash("ask.posted")
        await self._store.add_message(request.request_id, message, self._clock.now())
        self._crash("ask.recorded")
        request_log.step(request.request_id, "posted", [message.platform])

    def _retry(self, request_id: str, wait_s: float) -> None:
        if request_id not in self._retrying:
            self._retrying[request_id] = asyncio.create_task(
                self._keep_trying(request_id, wait_s), name=f"askbridge-post-{request_id}"
            )

    async def _keep_trying(self, request_id: str, wait_s: float) -> None:
        """Finish `request_id`'s posting, backing off between failures, for as long as the
        process lives and the request is unposted; while another task or replica is posting
        it, look again later (it may fail)."""
        try:
            for attempt in itertools.count(1):
                await asyncio.sleep(wait_s)
                async with self._store.posting(request_id) as mine:
                    request = await self._store.get(request_id)
                    if request is None or request.posted_at is not None:
                        return
                    try:
                        if mine:
                            await self._finish(request)
                            return
                        wait_s = self._backoff.after(attempt)
                    except Exception as error:
                        wait_s = self._backoff.after(attempt, error)
                        log.warning(
                            "posting %s again failed (attempt %d); trying again in %.1f s: %s",
                            request_id,
                            attempt,
                            wait_s,
                            error,
                        )
        finally:
            self._retrying.pop(request_id, None)

    async def _sweep_forever(self) -> None:
        while True:
            try:
                for request in await self._store.unposted():
                    self._retry(request.request_id, 0.0)
            except Exception:
                log.warning("looking for requests to post failed", exc_info=True)
            await asyncio.sleep(self._sweep_s)
