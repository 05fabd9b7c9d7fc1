"""The broker against surfaces that fail: nothing the agent needs depends on a platform call."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator

import pytest

from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.clock import ManualClock
from askbridge.core.errors import NotFound, SurfaceUnavailable
from askbridge.core.intents import (
    Cancel,
    Choose,
    Counted,
    Decided,
    FormOpens,
    Outcome,
    Refusal,
    Refused,
    Submit,
)
from askbridge.core.models import MessageRef, Person, Request, Status, Target
from askbridge.core.store.sqlite import SQLiteStore
from askbridge.core.view import end_sentence
from tests.conftest import DATABASE

ADA = Person(platform="chat", id="U1", name="Ada")


class ChatSurface:
    """A surface on the real seam whose platform fails as often as a test says."""

    platform = "chat"
    answerer_kinds: tuple[str, ...] = ("chat",)

    def __init__(self) -> None:
        self.post_failures = 0
        self.update_failures = 0
        self.posted: list[Request] = []
        self.updates: asyncio.Queue[tuple[Request, MessageRef]] = asyncio.Queue()
        self.update_attempts = 0
        self.reminders: asyncio.Queue[tuple[Request, MessageRef]] = asyncio.Queue()
        self.remind_failures = 0

    def check_target(self, target: Target) -> None:
        pass

    async def post(self, request: Request, target: Target) -> MessageRef:
        if self.post_failures:
            self.post_failures -= 1
            raise ConnectionError("chat platform unreachable")
        self.posted.append(request)
        return MessageRef(platform="chat", channel=target.channel, message_id=str(len(self.posted)))

    async def update(self, request: Request, message: MessageRef) -> None:
        self.update_attempts += 1
        if self.update_failures:
            self.update_failures -= 1
            raise ConnectionError("rate limited")
        await self.updates.put((request, message))

    async def notify(self, person: Person, message: MessageRef, text: str) -> None:
        pass

    async def remind(self, request: Request, message: MessageRef) -> None:
        if self.remind_failures:
            self.remind_failures -= 1
            raise ConnectionError("rate limited")
        await self.reminders.put((request, message))


@pytest.fixture
async def chat() -> ChatSurface:
    return ChatSurface()


@pytest.fixture
async def broker(store: SQLiteStore, chat: ChatSurface) -> AsyncIterator[Broker]:
    made = Broker(store, clock=ManualClock(), default_target="chat:C1", render_backoff_s=(0, 0))
    made.add_surface(chat)
    await made.start()
    yield made
    await made.stop()


def refused(outcome: Outcome | FormOpens) -> tuple[Refusal, str]:
    """Why a click (or a form's button) was refused, and the sentence a person reads when it
    came too late."""
    assert isinstance(outcome, Refused), outcome
    return outcome.reason, end_sentence(outcome.view) if outcome.view else ""


def decided(outcome: Outcome) -> Request:
    assert isinstance(outcome, Decided), outcome
    return outcome.view.request


def questions() -> list[dict[str, object]]:
    return copy.deepcopy(DATABASE["questions"])  # type: ignore[arg-type]


def asking(request_id: str, **fields: object) -> Ask:
    return Ask.parse({"questions": questions(), "request_id": request_id, **fields})


async def test_a_failed_post_is_a_502_and_leaves_nothing_behind(
    broker: Broker, chat: ChatSurface
) -> None:
    chat.post_failures = 1
    with pytest.raises(SurfaceUnavailable, match="could not post the question to chat:C1"):
        await broker.ask(asking("ask_1"))
    with pytest.raises(NotFound):
        await broker.get("ask_1")
    # The agent may simply ask again with the same id.
    request, created = await broker.ask(asking("ask_1"))
    assert created
    assert request.messages == (
        MessageRef(platform="chat", channel="C1", message_id="1", target=0),
    )
    kinds = [e.kind for e in await broker.store.events("ask_1")]
    assert kinds == ["created", "post_failed", "created", "posted"]


async def test_the_agent_is_answered_even_while_updates_fail(
    broker: Broker, chat: ChatSurface
) -> None:
    request, _ = await broker.ask(asking("ask_2"))
    chat.update_failures = 2
    waiting = asyncio.create_task(broker.wait("ask_2", 30))
    answered = decided(
        await broker.act("ask_2", ADA, Submit({0: (1,), 1: (0,)}), request.messages[0])
    )
    assert (await waiting).answers == {"Database": "SQLite", "Features": "Caching"}
    rendered, message = await asyncio.wait_for(chat.updates.get(), 10)
    assert rendered.status is Status.ANSWERED
    assert message == answered.messages[0]
    assert chat.update_attempts == 3
    assert await broker.store.unrendered() == []


async def test_unrendered_messages_are_rendered_after_a_restart(
    store: SQLiteStore, chat: ChatSurface
) -> None:
    first = Broker(store, default_target="chat:C1", render_backoff_s=(0.01,))
    first.add_surface(chat)
    await first.ask(asking("ask_3"))
    chat.update_failures = 1_000_000
    decided(await first.act("ask_3", ADA, Cancel()))
    # The platform stays down until this broker stops: the message still shows the question.
    await first.stop(grace_s=0)
    assert [request_id for request_id, _ in await store.unrendered()] == ["ask_3"]
    chat.update_failures = 0

    second = Broker(store, default_target="chat:C1")
    second.add_surface(chat)
    await second.start()
    rendered, _ = await asyncio.wait_for(chat.updates.get(), 10)
    await second.stop()
    assert rendered.status is Status.CANCELLED
    assert await store.unrendered() == []


async def test_clicks_are_checked_against_the_request_and_its_message(broker: Broker) -> None:
    request, _ = await broker.ask(asking("ask_4"))
    elsewhere = MessageRef(platform="chat", channel="C1", message_id="999")
    origin = request.messages[0]
    clicked = await broker.act("ask_4", ADA, Submit({0: (0,), 1: (0,)}), elsewhere)
    assert refused(clicked)[0] is Refusal.FOREIGN_MESSAGE
    clicked = await broker.act("ask_4", ADA, Choose(0, (7,)), origin)
    assert refused(clicked)[0] is Refusal.FOREIGN_MESSAGE
    assert refused(await broker.act("ask_gone", ADA, Choose(0, (0,))))[0] is (
        Refusal.UNKNOWN_REQUEST
    )
    await broker.withdraw("ask_4")
    assert refused(await broker.act("ask_4", ADA, Choose(0, (0,)), origin)) == (
        Refusal.ALREADY_ENDED,
        "The agent withdrew this question.",
    )


async def test_drafts_are_per_person_and_single_select_keeps_the_last_choice(
    broker: Broker,
) -> None:
    request, _ = await broker.ask(asking("ask_5"))
    grace = Person(platform="chat", id="U2", name="Grace")
    origin = request.messages[0]
    await broker.act("ask_5", ADA, Choose(0, (0,)), origin)
    await broker.act("ask_5", ADA, Choose(0, (1,)), origin)
    await broker.act("ask_5", ADA, Choose(1, (2, 0)), origin)
    await broker.act("ask_5", grace, Choose(0, (0,)), origin)
    answered = decided(await broker.act("ask_5", ADA, Submit(), origin))
    assert answered.answers == {"Database": "SQLite", "Features": "Caching, Metrics"}
    assert answered.answered_by == ADA


async def test_one_reminder_before_the_deadline_even_across_a_restart(
    store: SQLiteStore, chat: ChatSurface
) -> None:
    clock = ManualClock()
    first = Broker(store, clock=clock, default_target="chat:C1", render_backoff_s=(0,))
    first.add_surface(chat)
    await first.start()
    await first.ask(asking("ask_6", timeout_s=600, remind_after_s=300))
    chat.remind_failures = 1  # the first attempt fails; it is tried again
    await clock.advance(299)
    assert chat.reminders.empty()
    await clock.advance(1)
    reminded, message = await asyncio.wait_for(chat.reminders.get(), 10)
    assert reminded.request_id == "ask_6"
    assert message.channel == "C1"
    await first.stop()

    second = Broker(store, clock=clock, default_target="chat:C1")
    second.add_surface(chat)
    await second.start()
    await clock.advance(301)
    request = await second.wait("ask_6", 10)
    await second.stop()
    assert request.status is Status.EXPIRED
    assert chat.reminders.empty()
    kinds = [e.kind for e in await store.events("ask_6")]
    assert kinds == ["created", "posted", "reminder", "expired"]


async def test_a_reminder_after_the_deadline_is_never_scheduled(broker: Broker) -> None:
    request, _ = await broker.ask(asking("ask_7", timeout_s=60, remind_after_s=90))
    assert request.remind_at is None


async def test_a_request_that_cannot_be_posted_everywhere_is_retracted(
    store: SQLiteStore, chat: ChatSurface
) -> None:
    other = ChatSurface()
    other.platform = "other"
    other.post_failures = 1
    broker = Broker(store, default_target="chat:C1")
    broker.add_surface(chat)
    broker.add_surface(other)
    with pytest.raises(SurfaceUnavailable, match="other:C2"):
        await broker.ask(asking("ask_8", target=["chat:C1", "other:C2"]))
    retracted, message = chat.updates.get_nowait()
    assert retracted.status is Status.WITHDRAWN
    assert message.message_id == "1"
    with pytest.raises(NotFound):
        await broker.get("ask_8")


async def test_a_late_click_hears_how_the_request_ended(broker: Broker) -> None:
    await broker.ask(asking("ask_9", quorum=2))
    grace = Person(platform="chat", id="U2", name="Grace")
    lin = Person(platform="chat", id="U3", name="Lin")
    first = await broker.act("ask_9", ADA, Submit({0: (0,), 1: (0,)}))
    assert isinstance(first, Counted)
    decided(await broker.act("ask_9", grace, Submit({0: (0,), 1: (0,)})))
    late = await broker.act("ask_9", lin, Submit({0: (0,), 1: (0,)}))
    assert "already answered by Ada, Grace" in refused(late)[1]

    await broker.ask(
        asking(
            "ask_10",
            timeout_s=60,
            on_timeout={"answers": {"Database": "SQLite", "Features": "Logging"}},
        )
    )
    assert isinstance(broker.clock, ManualClock)
    await broker.clock.advance(60)
    ended = await broker.wait("ask_10", 10)
    assert ended.decided_by_timeout
    assert "already decided by timeout" in refused(await broker.act("ask_10", lin, Cancel()))[1]


async def test_the_woken_agent_is_answered_before_the_click_finishes(broker: Broker) -> None:
    """The agent's answer goes out first; the person's note, the message update and the
    metrics are worked out after it, off the click→agent path."""
    request, _ = await broker.ask(asking("ask_first"))
    waiting = asyncio.create_task(broker.wait("ask_first", 30))
    for _ in range(10):
        await asyncio.sleep(0)  # the waiter reads the status (a turn of the store) and parks
    assert not waiting.done()
    decided(await broker.act("ask_first", ADA, Submit({0: (1,), 1: (0,)}), request.messages[0]))
    assert waiting.done()
    assert waiting.result().answers == {"Database": "SQLite", "Features": "Caching"}


async def test_an_answer_form_opens_only_for_someone_who_could_submit_it(broker: Broker) -> None:
    """A form refused when it is opened, as its submission would be: nobody types an answer
    that cannot count. A person who may not answer is recorded as denied, as for a click."""
    grace = Person(platform="chat", id="U2", name="Grace")
    request, _ = await broker.ask(
        asking(
            "ask_form",
            answerers=["chat:U1", "chat:U2"],
            requested_by="chat:U2",
            no_self_approval=True,
        )
    )
    origin = request.messages[0]
    await broker.act("ask_form", ADA, Choose(0, (1,)), origin)
    opened = await broker.answer_form("ask_form", ADA, origin)
    assert isinstance(opened, FormOpens)
    assert opened.draft == {0: (1,)}
    assert opened.view.request_id == "ask_form"

    lin = Person(platform="chat", id="U3", name="Lin")
    assert refused(await broker.answer_form("ask_form", lin, origin))[0] is Refusal.NOT_ANSWERER
    assert refused(await broker.answer_form("ask_form", grace, origin))[0] is (
        Refusal.SELF_APPROVAL
    )
    elsewhere = MessageRef(platform="chat", channel="C1", message_id="999")
    assert refused(await broker.answer_form("ask_form", ADA, elsewhere))[0] is (
        Refusal.FOREIGN_MESSAGE
    )
    assert refused(await broker.answer_form("ask_gone", ADA))[0] is Refusal.UNKNOWN_REQUEST
    story = [
        (e.kind, e.actor.id if e.actor else None) for e in await broker.store.events("ask_form")
    ]
    assert story == [("created", None), ("posted", None), ("denied", "U3"), ("denied", "U2")]

    await broker.withdraw("ask_form")
    assert refused(await broker.answer_form("ask_form", ADA, origin)) == (
        Refusal.ALREADY_ENDED,
        "The agent withdrew this question.",
    )
