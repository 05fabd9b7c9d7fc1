"""The webhook outbox keeps its promises on every store: written with the ending, claimed by one
process at a time, left to another when its holder dies, kept across restarts."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from askbridge.core.models import Policy, Status
from askbridge.core.store import Store, open_store
from askbridge.core.store.base import Attempt, Ending
from tests.test_stores import ANSWERS, NOW, person, request

HOOK = "https://receiver.example/hook?token=s3cret"
LEASE = timedelta(seconds=120)


async def ended(store: Store, request_id: str, callback_url: str | None = HOOK) -> None:
    await store.create(request(request_id, policy=Policy(callback_url=callback_url)))
    _, won = await store.finish(request_id, Ending(Status.ANSWERED, NOW, ANSWERS, person(1)))
    assert won


async def test_an_ending_with_a_callback_url_writes_one_delivery(
    store_replicas: tuple[Store, Store],
) -> None:
    one, two = store_replicas
    await ended(one, "r1")
    await ended(one, "r2", callback_url=None)
    assert await one.next_delivery() == NOW
    (delivery,) = await two.claim_deliveries("two", NOW, NOW + LEASE, 10)
    assert (delivery.request_id, delivery.url, delivery.attempts) == ("r1", HOOK, 0)
    assert delivery.created_at == NOW
    # A second ending of the same request writes nothing: finish is a compare-and-set.
    _, won = await one.finish("r1", Ending(Status.CANCELLED, NOW))
    assert not won
    assert await one.claim_deliveries("one", NOW + LEASE, NOW + 2 * LEASE, 10) == [delivery]


async def test_one_replica_at_a_time_and_a_dead_ones_deliveries_go_to_another(
    store_replicas: tuple[Store, Store],
) -> None:
    one, two = store_replicas
    await ended(one, "r1")
    claims = await asyncio.gather(
        one.claim_deliveries("one", NOW, NOW + LEASE, 10),
        two.claim_deliveries("two", NOW, NOW + LEASE, 10),
    )
    assert sorted(len(c) for c in claims) == [0, 1]
    holder, (delivery,) = ("one", claims[0]) if claims[0] else ("two", claims[1])
    other = "two" if holder == "one" else "one"
    stores = {"one": one, "two": two}
    # While the lease runs, nobody else gets it; the earliest moment to look is its end.
    assert await stores[other].claim_deliveries(other, NOW + LEASE / 2, NOW + LEASE, 10) == []
    assert await one.next_delivery() == NOW + LEASE

    # The holder died without a word: once its lease has run out, the other takes over.
    later = NOW + LEASE
    (taken,) = await stores[other].claim_deliveries(other, later, later + LEASE, 10)
    assert taken == delivery
    late = Attempt(later, "delivered", status=200)
    assert not await stores[holder].record_attempt(delivery, holder, late)
    retry_at = later + timedelta(seconds=30)
    failed = Attempt(later, "retrying", status=500, next_at=retry_at)
    assert await stores[other].record_attempt(taken, other, failed)
    assert await one.next_delivery() == retry_at
    assert await two.claim_deliveries("two", later, later + LEASE, 10) == []

    (again,) = await one.claim_deliveries("one", retry_at, retry_at + LEASE, 10)
    assert again.attempts == 1
    assert await one.record_attempt(again, "one", Attempt(retry_at, "delivered", status=204))
    assert await one.next_delivery() is None
    assert await two.claim_deliveries("two", retry_at + LEASE, retry_at + 2 * LEASE, 10) == []
    trail = [e.data for e in await two.events("r1") if e.kind == "webhook"]
    assert [(t["attempt"], t["status"], t["result"]) for t in trail] == [
        (1, 200, "delivered"),  # the late report of the holder that lost its claim
        (1, 500, "retrying"),
        (2, 204, "delivered"),
    ]
    assert all("s3cret" not in str(t) for t in trail)


async def test_deliveries_survive_a_restart_and_go_with_pruned_requests(
    store_url: str,
) -> None:
    store = open_store(store_url)
    await store.open()
    await ended(store, "r1")
    await store.close()

    store = open_store(store_url)
    await store.open()
    try:
        (delivery,) = await store.claim_deliveries("after", NOW, NOW + LEASE, 10)
        assert delivery.request_id == "r1"
        assert await store.prune(NOW + timedelta(days=1)) == 1
        assert await store.next_delivery() is None
    finally:
        await store.close()
