"""Every click reads its request once, then writes: no surface or broker reads it twice."""

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

READS = {"get", "get_with_draft", "draft", "list_requests", "events"}
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
    ("name", "questions", "intent", "quorum"),
    [
        ("pick", one_question, Pick(0, 1), 1),
        ("pick-vote", one_question, Pick(0, 1), 2),
        ("choose", two_questions, Choose(1, (0, 2)), 1),
        ("submit-all", two_questions, Submit({0: (0,), 1: (1,)}), 1),
        # The second answer comes from the draft the person made before.
        ("submit-draft", two_questions, Submit({0: (0,)}), 1),
        ("cancel", two_questions, Cancel(), 1),
    ],
)
async def test_a_click_reads_its_request_once_before_writing(
    broker: Broker,
    store: RecordingStore,
    name: str,
    questions: Callable[[], list[dict[str, Any]]],
    intent: Intent,
    quorum: int,
) -> None:
    ask = Ask.parse({"questions": questions(), "request_id": f"ask_{name}", "quorum": quorum})
    asked, _ = await broker.ask(ask)
    if name == "submit-draft":
        await broker.act(asked.request_id, ADA, Choose(1, (1,)), asked.messages[0])
    store.calls.clear()
    outcome = await broker.act(asked.request_id, ADA, intent, asked.messages[0])
    assert not isinstance(outcome, Refused), outcome
    first_write = next(i for i, call in enumerate(store.calls) if call in WRITES)
    reads = [call for call in store.calls[:first_write] if call in READS]
    assert len(reads) == 1, store.calls
