"""A click is one store call: its vote, cancel or draft written in one transaction with no read
before it, the request's questions, policy and messages coming from what the broker already
holds. A click that only changes a draft, takes the rest of its answer from one, or comes to a
broker that holds nothing of the request (after a restart) reads it once, then writes."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import pytest

from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.clock import ManualClock
from askbridge.core.intents import Cancel, Choose, Intent, Pick, Refused, Submit
from askbridge.core.models import Person
from askbridge.core.store.base import Store
from askbridge.core.store.sqlite import SQLiteStore
from tests.chat import Chat
from tests.conftest import DATABASE

READS = {"get", "status", "get_with_draft", "draft", "list_requests", "events"}
WRITES = {"vote", "save_draft", "finish", "add_event", "create", "add_message"}
ADA = Person(platform="chat", id="U1", name="Ada")


class RecordingStore:
    """The real store behind the real seam, noting the name of every call made to it."""

    def __init__(self, inner: SQLiteStore) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.inner, name)
        if not callable(found):
            return found

        def recorded(*args: Any, **kwargs: Any) -> Awaitable[Any]:
            self.calls.append(name)
            return cast("Callable[..., Awaitable[Any]]", found)(*args, **kwargs)

        return recorded


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[RecordingStore]:
    inner = SQLiteStore(tmp_path / "reads.db")
    await inner.open()
    yield RecordingStore(inner)
    await inner.close()


@pytest.fixture
async def broker(store: RecordingStore) -> AsyncIterator[Broker]:
    made = Broker(cast("Store", store), clock=ManualClock(), default_target="chat:C1")
    made.add_surface(Chat())
    await made.start()
    yield made
    await made.stop()


def two_questions() -> list[dict[str, Any]]:
    return cast("list[dict[str, Any]]", copy.deepcopy(DATABASE["questions"]))


def one_question() -> list[dict[str, Any]]:
    return two_questions()[:1]


@pytest.mark.parametrize(
    ("name", "questions", "intent", "quorum", "reads"),
    [
        ("pick", one_question, Pick(0, 1), 1, 0),
        ("pick-vote", one_question, Pick(0, 1), 2, 0),
        ("choose", two_questions, Choose(1, (0, 2)), 1, 1),
        ("submit-all", two_questions, Submit({0: (0,), 1: (1,)}), 1, 0),
        # The second answer comes from the draft the person made before.
        ("submit-draft", two_questions, Submit({0: (0,)}), 1, 1),
        ("cancel", two_questions, Cancel(), 1, 0),
    ],
)
async def test_a_click_is_one_store_call_or_one_read_and_a_write(
    broker: Broker,
    store: RecordingStore,
    name: str,
    questions: Callable[[], list[dict[str, Any]]],
    intent: Intent,
    quorum: int,
    reads: int,
) -> None:
    ask = Ask.parse({"questions": questions(), "request_id": f"ask_{name}", "quorum": quorum})
    asked, _ = await broker.ask(ask)
    if name == "submit-draft":
        await broker.act(asked.request_id, ADA, Choose(1, (1,)), asked.messages[0])
    store.calls.clear()
    outcome = await broker.act(asked.request_id, ADA, intent, asked.messages[0])
    assert not isinstance(outcome, Refused), outcome
    first_write = next(i for i, call in enumerate(store.calls) if call in WRITES)
    assert len(store.calls[:first_write]) == reads, store.calls
    assert all(call in READS for call in store.calls[:first_write]), store.calls


async def test_a_broker_that_holds_nothing_of_the_request_reads_it_once(
    store: RecordingStore,
) -> None:
    """As after a restart, or on a replica that did not post the request."""
    first = Broker(cast("Store", store), clock=ManualClock(), default_target="chat:C1")
    first.add_surface(Chat())
    ask = Ask.parse({"questions": one_question(), "request_id": "ask_restarted"})
    asked, _ = await first.ask(ask)
    second = Broker(cast("Store", store), clock=ManualClock(), default_target="chat:C1")
    second.add_surface(Chat())
    store.calls.clear()
    outcome = await second.act(asked.request_id, ADA, Pick(0, 1), asked.messages[0])
    assert not isinstance(outcome, Refused), outcome
    assert store.calls[:2] == ["get", "vote"], store.calls


async def test_a_click_from_a_message_recorded_after_the_request_was_held_is_taken(
    broker: Broker, store: RecordingStore
) -> None:
    """The held request is missing a message recorded since: the click reads it again rather
    than refusing it as foreign."""
    asked, _ = await broker.ask(
        Ask.parse({"questions": one_question(), "request_id": "ask_second_message"})
    )
    later = asked.messages[0].model_copy(update={"message_id": "later"})
    await store.inner.add_message(asked.request_id, later, asked.created_at)
    store.calls.clear()
    outcome = await broker.act(asked.request_id, ADA, Pick(0, 1), later)
    assert not isinstance(outcome, Refused), outcome
    assert store.calls[:2] == ["get", "vote"], store.calls
