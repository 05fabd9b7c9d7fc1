"""In-process wake-ups: whoever waits on a request is woken by the transition itself."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from core.models import Request


@dataclass(eq=False)
class Watch:
    """One waiter's mailbox: set when its request changes, with the request as published."""

    changed: asyncio.Event = field(default_factory=asyncio.Event)
    latest: Request | None = None


class Hub:
    """Who is waiting for which request, and a change counter for lists of requests.

    Only requests that someone is waiting on cost memory here.
    """

    def __init__(self) -> None:
        self._waiters: dict[str, set[Watch]] = {}
        self._changed = asyncio.Condition()
        self.version = 0
        self.closed = False

    @contextmanager
    def watch(self, request_id: str) -> Iterator[Watch]:
        """A mailbox set on the next change of `request_id`; subscribe before reading state."""
        watch = Watch()
        self._waiters.setdefault(request_id, set()).add(watch)
        try:
            yield watch
        finally:
            waiters = self._waiters.get(request_id)
            if waiters is not None:
                waiters.discard(watch)
                if not waiters:
                    del self._waiters[request_id]

    async def publish(self, request_id: str, request: Request | None = None) -> None:
        """Wake the waiters of `request_id`, handing them `request` so they need not re-read it."""
        for watch in self._waiters.get(request_id, ()):
            watch.latest = request
            watch.changed.set()
        async with self._changed:
            self.version += 1
            self._changed.notify_all()

    async def close(self) -> None:
        """Wake every waiter for good: the process is shutting down, long-polls should return."""
        self.closed = True
        for waiters in self._waiters.values():
            for watch in waiters:
                watch.changed.set()
        async with self._changed:
            self._changed.notify_all()

    async def wait_for_change(self, since: int, max_wait_s: float) -> int:
        """Return the change counter once it passes `since`, or after `max_wait_s` seconds."""
        async with self._changed:
            try:
                async with asyncio.timeout(max_wait_s):
                    await self._changed.wait_for(lambda: self.version > since or self.closed)
            except TimeoutError:
                pass
            return self.version
