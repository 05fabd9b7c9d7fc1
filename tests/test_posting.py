"""Finishing a posting that was cut short: by the agent's repeated ask, by the startup sweep,
through a platform outage, once across replicas, and adopting a message posted but not
recorded instead of posting a second one."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.clock import ManualClock
from askbridge.core.models import MessageRef, Request, Status, Target
from askbridge.core.store.base import Ending, Store
from askbridge.core.store.postgres import PostgresStore
from askbridge.core.store.sqlite import SQLiteStore
from tests.conftest import DEPLOY
from tests.stores import postgres_schema

NOW = datetime(2030, 1, 1, tzinfo=UTC)


class Chat:
    """A platform on the real seams (`Surface`, `Finding`) that can fail and be slow."""

    platform = "chat"
    answerer_kinds: tuple[str, ...] = ("chat",)

    def __init__(self) -> None:
        self.shown: dict[str, tuple[str, Status]] = {}
        """message id -> (request id, the status it shows)"""
        self.changed = asyncio.Condition()
        self.posts = 0
        self.failures = 0
        self.hold: asyncio.Event | None = None

    def check_target(self, target: Target) -> None:
        pass

    async def post(self, request: Request, target: Target) -> MessageRef:
        if self.hold is not None:
            await self.hold.wait()
        self._fail_while_down()
        self.posts += 1
        message_id = f"m{len(self.shown) + 1}"
        self.shown[message_id] = (request.request_id, request.status)
        return MessageRef(platform=self.platform, channel=target.channel, message_id=message_id)

    async def find(self, request: Request, target: Target) -> MessageRef | None:
        self._fail_while_down()
        for message_id, (request_id, status) in self.shown.items():
            if request_id == request.request_id and status is Status.WAITING:
                return MessageRef(platform=self.platform, channel="C1", message_id=message_id)
        return None

    def _fail_while_down(self) -> None:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("chat is down")

    async def update(self, request: Request, message: MessageRef) -> None:
        async with self.changed:
            self.shown[message.message_id] = (request.request_id, request.status)
            self.changed.notify_all()

    async def until_shown(self, message_id: str, status: Status) -> None:
        async with asyncio.timeout(5), self.changed:
            await self.changed.wait_for(lambda: self.shown[message_id][1] is status)


@pytest.fixture
def chat() -> Chat:
    return Chat()


def broker_on(store: Store, chat: Chat) -> Broker:
    broker = Broker(store, clock=ManualClock(NOW), default_target="chat:C1", render_backoff_s=(0,))
    broker.add_surface(chat)
    return broker


def deploy(request_id: str) -> Ask:
    return Ask.parse({"request_id": request_id, "questions": [copy.deepcopy(DEPLOY)]})


async def stored_unposted(store: Store, request_id: str) -> Request:
    """What a crash right after storing the request leaves: a request without messages."""
    draft = Request(
        request_id=request_id,
        questions=deploy(request_id).questions,
        targets=(Target(platform="chat", channel="C1"),),
        created_at=NOW,
    )
    request, created = await store.create(draft)
    assert created
    assert request.posted_at is None
    return request


async def until_posted(broker: Broker, *request_ids: str) -> None:
    """Wait, on the broker's change counter, until none of these requests is unposted."""
    version = 0
    async with asyncio.timeout(5):
        while any(r.request_id in request_ids for r in await broker.store.unposted()):
            version = await broker.wait_for_change(version, 5)


async def test_asking_again_posts_a_request_whose_posting_never_started(
    store: SQLiteStore, chat: Chat
) -> None:
    await stored_unposted(store, "ask_1")
    request, created = await broker_on(store, chat).ask(deploy("ask_1"))
    assert not created
    assert [m.message_id for m in request.messages] == ["m1"]
    assert request.messages[0].target == 0
    assert request.posted_at is not None
    assert await store.unposted() == []


async def test_asking_again_adopts_a_message_posted_but_not_recorded(
    store: SQLiteStore, chat: Chat
) -> None:
    orphan = await chat.post(
        await stored_unposted(store, "ask_2"), Target(platform="chat", channel="C1")
    )
    request, _ = await broker_on(store, chat).ask(deploy("ask_2"))
    assert request.messages == (orphan.model_copy(update={"target": 0}),)
    assert chat.posts == 1
    kinds = [e.kind for e in await store.events("ask_2")]
    assert kinds == ["created", "posted"]


async def test_startup_finishes_every_unfinished_posting(store: SQLiteStore, chat: Chat) -> None:
    await stored_unposted(store, "ask_new")
    orphan = await chat.post(
        await stored_unposted(store, "ask_orphan"), Target(platform="chat", channel="C1")
    )
    broker = broker_on(store, chat)
    await broker.start()
    try:
        await until_posted(broker, "ask_new", "ask_orphan")
    finally:
        await broker.stop()
    assert (await broker.get("ask_orphan")).messages[0].message_id == orphan.message_id
    assert len((await broker.get("ask_new")).messages) == 1
    assert chat.posts == 2


async def test_a_platform_down_while_posting_again_is_retried_until_it_is_back(
    store: SQLiteStore, chat: Chat
) -> None:
    await stored_unposted(store, "ask_down")
    broker = broker_on(store, chat)
    chat.failures = 3
    # The agent's retry is not turned away: the request is kept, and posted once Chat is up.
    request, created = await broker.ask(deploy("ask_down"))
    assert (created, request.messages, request.status) == (False, (), Status.WAITING)
    try:
        await until_posted(broker, "ask_down")
    finally:
        await broker.stop()
    assert len((await broker.get("ask_down")).messages) == 1
    assert (chat.failures, chat.posts) == (0, 1)


async def test_an_ended_request_is_not_posted_but_its_unrecorded_message_shows_the_end(
    store: SQLiteStore, chat: Chat
) -> None:
    orphan = await chat.post(
        await stored_unposted(store, "ask_ended"), Target(platform="chat", channel="C1")
    )
    await stored_unposted(store, "ask_ended_unseen")
    for request_id in ("ask_ended", "ask_ended_unseen"):
        await store.finish(request_id, Ending(Status.EXPIRED, NOW))
    broker = broker_on(store, chat)
    await broker.start()
    try:
        await until_posted(broker, "ask_ended", "ask_ended_unseen")
        await chat.until_shown(orphan.message_id, Status.EXPIRED)
    finally:
        await broker.stop()
    assert (await broker.get("ask_ended_unseen")).messages == ()
    assert chat.posts == 1


@asynccontextmanager
async def replicas(kind: str, folder: Path) -> AsyncIterator[list[Store]]:
    """Two replicas' stores on one database; one SQLite store, as one process owns its file."""
    async with AsyncExitStack() as stack:
        if kind == "sqlite":
            one = SQLiteStore(folder / "askbridge.db")
            stores: list[Store] = [one, one]
        else:
            url = await stack.enter_async_context(postgres_schema())
            stores = [PostgresStore(url), PostgresStore(url)]
        for opened in dict.fromkeys(stores):
            await opened.open()
            stack.push_async_callback(opened.close)
        yield stores


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_request_is_posted_once_however_many_replicas_ask_again(
    kind: str, tmp_path: Path, chat: Chat
) -> None:
    async with replicas(kind, tmp_path) as stores:
        await stored_unposted(stores[0], "ask_twice")
        chat.hold = asyncio.Event()
        repeats = [asyncio.create_task(broker_on(s, chat).ask(deploy("ask_twice"))) for s in stores]
        # One replica is posting, waiting on Chat; the other leaves the request to it.
        done, waiting = await asyncio.wait(repeats, return_when=asyncio.FIRST_COMPLETED)
        [(request, created)] = [task.result() for task in done]
        assert (created, request.messages) == (False, ())
        assert len(waiting) == 1
        chat.hold.set()
        [(request, _)] = [await task for task in waiting]
        assert len(request.messages) == 1
        assert chat.posts == 1


async def test_a_target_whose_platform_is_not_set_up_waits_without_holding_up_the_others(
    store: SQLiteStore, chat: Chat, caplog: pytest.LogCaptureFixture
) -> None:
    stored = await stored_unposted(store, "ask_gone")
    targets = (*stored.targets, Target(platform="gone", channel="X"))
    draft = stored.model_copy(update={"request_id": "ask_gone_too", "targets": targets})
    await store.create(draft)
    request, _ = await broker_on(store, chat).ask(deploy("ask_gone_too"))
    assert [m.target for m in request.messages] == [0]
    assert request.posted_at is None
    assert "cannot post ask_gone_too to gone:X: gone is not set up" in caplog.text
    # Once the request has ended, nothing is left to post there.
    await store.finish("ask_gone_too", Ending(Status.EXPIRED, NOW))
    await broker_on(store, chat).ask(deploy("ask_gone_too"))
    assert [r.request_id for r in await store.unposted()] == ["ask_gone"]
