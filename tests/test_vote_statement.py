"""A vote on PostgreSQL is one round trip: one prepared statement that checks the request still
waits, records the vote, chains its audit events and, when it decides, ends the request and
writes its webhook delivery. Round trips are counted on the wire, by a proxy between the store
and the server: each time the store speaks after the server has, it waited for an answer.

On every store, a deciding vote leaves the same audit chain and outbox row as `finish` does."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path

import pytest

from askbridge.core.models import Policy, Status
from askbridge.core.store import Store, open_store
from askbridge.core.store.base import VoteOutcome
from askbridge.core.store.codec import event_row
from askbridge.core.store.postgres import PostgresStore
from tests.pg_relay import Relay
from tests.stores import database_url, postgres_schema
from tests.test_stores import ANSWERS, NOW, person, request

HOOK = "https://receiver.example/hook"
HOSTILE = {"Database": 'Post"gres\n\\ é 😀 \u2028 <@U1>', "Features": "Logging"}
NOTES = {"Database": "tab\there, \x01 and ü"}


class Wire(Relay):
    """Counts the store's round trips while `counting`: the store speaking after the server
    is a new one (a pipelined statement is several messages sent in one go, one trip)."""

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream)
        self.counting = False
        self.round_trips = 0
        self._store_spoke_last: dict[asyncio.StreamWriter, bool] = {}

    def passes(self, data: bytes, client: asyncio.StreamWriter, upward: bool) -> bool:
        if upward and self.counting and not self._store_spoke_last.get(client, False):
            self.round_trips += 1
        self._store_spoke_last[client] = upward
        return True

    async def count(self, work: Awaitable[object]) -> int:
        self.round_trips, self.counting = 0, True
        try:
            await work
        finally:
            self.counting = False
        return self.round_trips


@contextlib.asynccontextmanager
async def through_wire() -> AsyncIterator[tuple[PostgresStore, Wire]]:
    async with postgres_schema() as url:
        wire = Wire(url)
        # One pooled connection, so the warmed one is used.
        store = PostgresStore(await wire.start(), max_size=1, check_every_s=3600)
        await store.open()
        try:
            await store.listen(lambda _request_id: asyncio.sleep(0))
            yield store, wire
        finally:
            await store.close()
            await wire.close()


async def test_every_vote_is_one_round_trip_on_postgresql() -> None:
    async with through_wire() as (store, wire):
        policy = Policy(quorum=2, callback_url=HOOK)
        for request_id in ("warm", "r1", "r2"):
            await store.create(request(request_id, policy=policy))
        # The first statement on a connection is prepared first: a round trip of its own.
        await store.vote("warm", person(1), ANSWERS, 1, NOW)
        trips = {}
        trips["counted"] = await wire.count(store.vote("r1", person(1), ANSWERS, 2, NOW, NOW))
        trips["replayed"] = await wire.count(store.vote("r1", person(1), HOSTILE, 2, NOW, NOW))
        trips["decided"] = await wire.count(store.vote("r1", person(2), ANSWERS, 2, NOW))
        trips["closed"] = await wire.count(store.vote("r1", person(3), ANSWERS, 2, NOW))
        with pytest.raises(KeyError):
            await wire.count(store.vote("nowhere", person(1), ANSWERS, 1, NOW))
        trips["missing"] = wire.round_trips
        assert trips == dict.fromkeys(trips, 1)
        assert (await store.get("r1")) is not None
        assert (await store.get("r2")) is not None


async def test_each_outcome_comes_back_with_the_request_as_it_is_after() -> None:
    async with through_wire() as (store, _wire):
        await store.create(request("r1", policy=Policy(quorum=2)))
        voted, outcome = await store.vote("r1", person(1), ANSWERS, 2, NOW, NOW)
        assert (outcome, voted.status, len(voted.votes)) == (VoteOutcome.COUNTED, Status.WAITING, 1)
        again, outcome = await store.vote("r1", person(1), HOSTILE, 2, NOW, NOW)
        assert (outcome, again) == (VoteOutcome.REPLAYED, voted)
        decided, outcome = await store.vote("r1", person(2), ANSWERS, 2, NOW)
        assert (outcome, decided.status, decided.answers) == (
            VoteOutcome.DECIDED,
            Status.ANSWERED,
            ANSWERS,
        )
        assert decided == await store.get("r1")
        closed, outcome = await store.vote("r1", person(3), ANSWERS, 2, NOW)
        assert (outcome, closed) == (VoteOutcome.CLOSED, decided)
        with pytest.raises(KeyError):
            await store.vote("nowhere", person(1), ANSWERS, 1, NOW)


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    async with database_url(request.param, tmp_path) as url:
        opened = open_store(url)
        await opened.open()
        yield opened
        await opened.close()


@pytest.mark.parametrize("digest", [None, "ab" * 32])
async def test_a_deciding_vote_chains_its_events_and_writes_its_delivery(
    store: Store, digest: str | None
) -> None:
    policy = Policy(callback_url=HOOK, subject_sha256=digest)
    await store.create(request("r1", policy=policy))
    voted, outcome = await store.vote("r1", person(1), HOSTILE, 1, NOW, notes=NOTES)
    assert (outcome, voted.answers) == (VoteOutcome.DECIDED, HOSTILE)
    events = await store.events("r1")
    assert [e.kind for e in events] == ["created", "vote", "answered"]
    assert events[1].data == {"answers": HOSTILE, "notes": NOTES}
    subject = {} if digest is None else {"subject_sha256": digest}
    assert events[2].data == {"answers": HOSTILE, **subject}
    assert [e.prev_hash for e in events[1:]] == [e.hash for e in events[:-1]]
    for event in events:
        # The hash the audit log's own code gives the event as it reads back.
        assert event.hash == event_row(event, event.prev_hash)[3], event.kind
    (delivery,) = await store.claim_deliveries("me", NOW, NOW, 10)
    assert (delivery.request_id, delivery.url, delivery.created_at) == ("r1", HOOK, NOW)
