"""In-process wake-ups: whoever waits on a request is woken by the transition itself."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from askbridge.core.models import Request


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
        self._bumped = asyncio.Event()
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

    def publish(self, request_id: str, request: Request | None = None) -> None:
        """Wake the waiters of `request_id`, handing them `request` so they need not re-read it."""
        for watch in self._waiters.get(request_id, ()):
            watch.latest = request
            watch.changed.set()
        self._bump()

    def wake_all(self) -> None:
        """Wake every waiter to read its request again: changes may have gone unheard."""
        for waiters in self._waiters.values():
            for watch in waiters:
                watch.latest = None
                watch.changed.set()
        self._bump()

    def close(self) -> None:
        """Wake every waiter for good: the process is shutting down, long-polls should return."""
        self.closed = True
        for waiters in self._waiters.values():
            for watch in waiters:
                watch.changed.set()
        self._bump()

    async def wait_for_change(self, since: int, max_wait_s: float) -> int:
        """Return the change counter once it passes `since`, or after `max_wait_s` seconds."""
        try:
            async with asyncio.timeout(max_wait_s):
                while self.version <= since and not self.closed:
                    await self._bumped.wait()
        except TimeoutError:
            pass
        return self.version

    def _bump(self) -> None:
        self.version += 1
        # Everyone waiting on this event wakes; later waiters wait on a fresh one.
        self._bumped.set()
        self._bumped = asyncio.Event()
