"""A posted message always ends up showing its request's outcome: updates are retried for as
long as askbridge runs, wait as long as the platform asks, and any replica finishes them."""

from __future__ import annotations

import asyncio
import itertools
import time
from datetime import UTC, datetime

from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.errors import RetryLater
from askbridge.core.intents import Cancel, Decided
from askbridge.core.models import MessageRef, Person, Request, Target
from askbridge.core.store.base import Store
from askbridge.core.store.sqlite import SQLiteStore
from tests.conftest import DEPLOY

ADA = Person(platform="chat", id="U1", name="Ada")


class Flaky:
    """A surface on the real seam whose updates fail `failures` times, then work."""

    platform = "chat"
    answerer_kinds: tuple[str, ...] = ("chat",)

    def __init__(self, failures: int = 0, retry_after_s: float | None = None) -> None:
        self.failures = failures
        self.retry_after_s = retry_after_s
        self.attempts: list[float] = []
        self.rendered: asyncio.Queue[Request] = asyncio.Queue()

    def check_target(self, target: Target) -> None:
        pass

    async def post(self, request: Request, target: Target) -> MessageRef:
        return MessageRef(platform="chat", channel="C1", message_id=request.request_id)

    async def update(self, request: Request, message: MessageRef) -> None:
        self.attempts.append(time.monotonic())
        if self.failures:
            self.failures -= 1
            if self.retry_after_s is not None:
                raise RetryLater(self.retry_after_s, "chat")
            raise ConnectionError("the platform is down")
        await self.rendered.put(request)


def ask(request_id: str) -> Ask:
    return Ask.parse({"request_id": request_id, "questions": [DEPLOY], "target": "chat:C1"})


async def started(
    store: Store,
    surface: Flaky,
    render_backoff_s: tuple[float, ...] = (1.0,),
    render_sweep_s: float = 60.0,
) -> Broker:
    broker = Broker(store, render_backoff_s=render_backoff_s, render_sweep_s=render_sweep_s)
    broker.add_surface(surface)
    await broker.start()
    return broker


async def test_an_update_is_retried_until_the_platform_is_back(store: SQLiteStore) -> None:
    # Far more failures than any fixed schedule of retries would allow.
    surface = Flaky(failures=25)
    broker = await started(store, surface, render_backoff_s=(0.001, 0.002, 0.005))
    await broker.ask(ask("ask_outage"))
    assert isinstance(await broker.act("ask_outage", ADA, Cancel()), Decided)
    shown = await asyncio.wait_for(surface.rendered.get(), 10)
    await broker.stop()
    assert shown.status.value == "cancelled"
    assert len(surface.attempts) == 26
    assert await store.unrendered() == []


async def test_an_update_waits_as_long_as_retry_after_says(store: SQLiteStore) -> None:
    surface = Flaky(failures=2, retry_after_s=0.3)
    broker = await started(store, surface, render_backoff_s=(0.001,))
    await broker.ask(ask("ask_429"))
    await broker.act("ask_429", ADA, Cancel())
    await asyncio.wait_for(surface.rendered.get(), 10)
    await broker.stop()
    gaps = [later - earlier for earlier, later in itertools.pairwise(surface.attempts)]
    assert len(gaps) == 2
    assert all(gap >= 0.3 for gap in gaps), gaps


async def test_another_replica_finishes_the_updates_of_one_that_died(
    store_replicas: tuple[Store, Store],
) -> None:
    first_store, second_store = store_replicas
    down = Flaky(failures=1_000_000)
    healthy = Flaky()
    first = await started(first_store, down, render_backoff_s=(0.01,))
    second = await started(second_store, healthy, render_sweep_s=0.05)
    try:
        await first.ask(ask("ask_orphan"))
        await first.act("ask_orphan", ADA, Cancel())
        # The first replica dies with its update undone; the second, already running, sees the
        # stale message on its next sweep and brings it up to date.
        await first.stop(grace_s=0)
        shown = await asyncio.wait_for(healthy.rendered.get(), 10)
        assert shown.request_id == "ask_orphan"
        assert shown.status.value == "cancelled"
    finally:
        await second.stop()


async def test_two_replicas_told_of_one_change_update_the_message_once(
    store_replicas: tuple[Store, Store],
) -> None:
    surfaces = (Flaky(), Flaky())
    brokers = []
    for store, surface in zip(store_replicas, surfaces, strict=True):
        brokers.append(await started(store, surface))
    try:
        await brokers[0].ask(ask("ask_once"))
        await brokers[0].act("ask_once", ADA, Cancel())
        # The other replica hears of the same change (as a sweep or a listener would) at once.
        brokers[1].messages.changed(await brokers[1].get("ask_once"))
    finally:
        # A clean stop lets each finish what it started.
        for broker in brokers:
            await broker.stop()
    shown = [surface.rendered.get_nowait() for surface in surfaces if surface.rendered.qsize()]
    assert [request.status.value for request in shown] == ["cancelled"]
    assert sum(len(surface.attempts) for surface in surfaces) == 1


class Pinging(Flaky):
    """A surface that also reminds (pings) in a message's thread."""

    def __init__(self, failures: int = 0) -> None:
        super().__init__(failures)
        self.tried = asyncio.Event()
        self.pinged: list[str] = []
        self.pinged_once = asyncio.Event()

    async def update(self, request: Request, message: MessageRef) -> None:
        self.tried.set()
        await super().update(request, message)

    async def remind(self, request: Request, message: MessageRef) -> None:
        self.pinged.append(request.request_id)
        self.pinged_once.set()


async def test_a_reminder_a_dying_replica_never_sent_is_sent_by_another(
    store_replicas: tuple[Store, Store],
) -> None:
    first_store, second_store = store_replicas
    down, healthy = Pinging(failures=1_000_000), Pinging()
    first = await started(first_store, down, render_backoff_s=(0.01,))
    second = await started(second_store, healthy, render_sweep_s=0.05)
    try:
        await first.ask(ask("ask_remind"))
        # The reminder falls due on the first replica, which claims it and the message, and
        # dies before the platform takes the update that the ping follows.
        assert await first_store.mark_reminded("ask_remind", datetime.now(UTC))
        first.messages.changed(await first.get("ask_remind"))
        await asyncio.wait_for(down.tried.wait(), 10)
        await first.stop(grace_s=0)
        shown = await asyncio.wait_for(healthy.rendered.get(), 10)
        assert shown.request_id == "ask_remind"
        await asyncio.wait_for(healthy.pinged_once.wait(), 10)
        # Sent once: a later change updates the message without pinging again.
        await second.act("ask_remind", ADA, Cancel())
        final = await asyncio.wait_for(healthy.rendered.get(), 10)
        assert final.status.value == "cancelled"
    finally:
        await second.stop()
    assert down.pinged == []
    assert healthy.pinged == ["ask_remind"]
