"""In-process wake-ups: whoever waits on a request is woken by the transition itself."""

from __future__ import annotations

import asyncio
from types import TracebackType

from askbridge.core.models import Request


class Watch:
    """One waiter's mailbox: `changed` is done on its request's next change, and `latest` is
    the request as published then (None: read it again). Also the context that keeps it
    registered with the hub.

    Ten thousand agents may wait at once, so a watch is small: two slots for the mailbox and
    two to leave the hub by, a bare future rather than an event (and its queue), and whether
    its time is up."""

    __slots__ = ("_hub", "_request_id", "changed", "expired", "latest")

    def __init__(self, hub: Hub, request_id: str) -> None:
        self._hub = hub
        self._request_id = request_id
        self.changed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.latest: Request | None = None
        self.expired = False

    def expire(self) -> None:
        """The waiter's time is up: wake it for good."""
        self.expired = True
        self.wake(self.latest)

    def wake(self, request: Request | None) -> None:
        self.latest = request
        if not self.changed.done():
            self.changed.set_result(None)

    def take(self) -> Request | None:
        """What the last change brought, after awaiting `changed`; the next change sets a new
        `changed`, so one published while the waiter reads is not missed."""
        self.changed = self.changed.get_loop().create_future()
        latest, self.latest = self.latest, None
        return latest

    def __enter__(self) -> Watch:
        return self

    def __exit__(
        self,
        _kind: type[BaseException] | None,
        _error: BaseException | None,
        _trace: TracebackType | None,
    ) -> None:
        self._hub._leave(self._request_id, self)


class Hub:
    """Who is waiting for which request, and a change counter for lists of requests.

    Only requests that someone is waiting on cost memory here: one watch, or a set of them
    when several wait on one request.
    """

    def __init__(self) -> None:
        self._waiters: dict[str, Watch | set[Watch]] = {}
        self._bumped = asyncio.Event()
        self.version = 0
        self.closed = False

    def watch(self, request_id: str) -> Watch:
        """A mailbox woken on the next change of `request_id`, held for a `with` block;
        subscribe before reading state."""
        watch = Watch(self, request_id)
        found = self._waiters.get(request_id)
        if found is None:
            self._waiters[request_id] = watch
        elif isinstance(found, Watch):
            self._waiters[request_id] = {found, watch}
        else:
            found.add(watch)
        return watch

    def _leave(self, request_id: str, watch: Watch) -> None:
        found = self._waiters.get(request_id)
        if found is watch:
            del self._waiters[request_id]
        elif isinstance(found, set):
            found.discard(watch)
            if len(found) == 1:
                self._waiters[request_id] = found.pop()

    def _watches(self, request_id: str) -> tuple[Watch, ...] | set[Watch]:
        found = self._waiters.get(request_id)
        return (found,) if isinstance(found, Watch) else found or ()

    def _every_watch(self) -> list[Watch]:
        return [w for request_id in self._waiters for w in self._watches(request_id)]

    def publish(self, request_id: str, request: Request | None = None) -> None:
        """Wake the waiters of `request_id`, handing them `request` so they need not re-read it."""
        for watch in tuple(self._watches(request_id)):
            watch.wake(request)
        self._bump()

    def wake_all(self) -> None:
        """Wake every waiter to read its request again: changes may have gone unheard."""
        for watch in self._every_watch():
            watch.wake(None)
        self._bump()

    def close(self) -> None:
        """Wake every waiter for good: the process is shutting down, long-polls should return."""
        self.closed = True
        for watch in self._every_watch():
            watch.wake(watch.latest)
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
