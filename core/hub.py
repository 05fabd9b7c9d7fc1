"""In-process wake-ups: whoever waits on a request is woken by the transition itself."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager


class Hub:
    """Who is waiting for which request, and a change counter for lists of requests.

    Only requests that someone is waiting on cost memory here.
    """

    def __init__(self) -> None:
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._changed = asyncio.Condition()
        self.version = 0
        self.closed = False

    @contextmanager
    def watch(self, request_id: str) -> Iterator[asyncio.Event]:
        """An event set on the next change of `request_id`; subscribe before reading state."""
        event = asyncio.Event()
        self._waiters.setdefault(request_id, set()).add(event)
        try:
            yield event
        finally:
            waiters = self._waiters.get(request_id)
            if waiters is not None:
                waiters.discard(event)
                if not waiters:
                    del self._waiters[request_id]

    async def publish(self, request_id: str) -> None:
        for event in self._waiters.get(request_id, ()):
            event.set()
        async with self._changed:
            self.version += 1
            self._changed.notify_all()

    async def close(self) -> None:
        """Wake every waiter for good: the process is shutting down, long-polls should return."""
        self.closed = True
        for waiters in self._waiters.values():
            for event in waiters:
                event.set()
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
