"""Looking for stale messages on SQLite reads the requests that have one, not every message ever
posted: the sweep runs on the event loop's thread every 15 seconds, and history only grows."""

from __future__ import annotations

from datetime import UTC, datetime

from askbridge.core.models import MessageRef, Person, Request, Status, Target, UserQuestion
from askbridge.core.store import transactions
from askbridge.core.store.base import Ending
from askbridge.core.store.sqlite import SQLiteStore
from tests.conftest import DEPLOY

AT = datetime(2026, 1, 1, tzinfo=UTC)
ADA = Person(platform="chat", id="U1", name="Ada")
QUESTIONS = (UserQuestion.model_validate(DEPLOY),)


def message(request_id: str) -> MessageRef:
    return MessageRef(platform="chat", channel="C1", message_id=request_id)


async def posted(store: SQLiteStore, request_id: str) -> None:
    request = Request(
        request_id=request_id,
        questions=QUESTIONS,
        targets=(Target(platform="chat", channel="C1"),),
        created_at=AT,
    )
    await store.create(request)
    await store.add_message(request_id, message(request_id), AT)


async def answered_and_shown(store: SQLiteStore, request_id: str) -> None:
    """Answered, and its message updated to show it."""
    await store.finish(request_id, Ending(Status.ANSWERED, AT, answers={"Deploy": "Approve"}))
    claim = await store.claim_message(request_id, message(request_id), "me", AT, AT)
    assert claim is not None
    assert await store.mark_rendered(request_id, message(request_id), "me", claim, AT) is None


def steps_of_the_sweep(store: SQLiteStore) -> tuple[int, list[str]]:
    """How many virtual machine steps SQLite takes to find the stale messages (counted in
    tens), and whose they are."""
    counted = [0]

    def step() -> int:
        counted[0] += 1
        return 0

    store.db.set_progress_handler(step, 10)
    try:
        found = store._write_now(transactions.unrendered, None)
    finally:
        store.db.set_progress_handler(None, 0)
    return counted[0], [request_id for request_id, _ in found]


async def test_the_sweep_does_not_read_messages_already_shown(store: SQLiteStore) -> None:
    for number in range(50):
        await posted(store, f"old_{number}")
        await answered_and_shown(store, f"old_{number}")
    await posted(store, "stale")
    await store.finish("stale", Ending(Status.CANCELLED, AT, by=ADA))
    few, found = steps_of_the_sweep(store)
    assert found == ["stale"]

    for number in range(50, 1000):
        await posted(store, f"old_{number}")
        await answered_and_shown(store, f"old_{number}")
    many, found = steps_of_the_sweep(store)
    assert found == ["stale"]
    # Twenty times the history, about the same work (a scan of every message grows with it).
    assert many < few * 2, (few, many)


async def test_a_request_that_changed_without_a_message_leaves_nothing_to_sweep(
    store: SQLiteStore,
) -> None:
    await store.create(
        Request(
            request_id="never_posted",
            questions=QUESTIONS,
            targets=(Target(platform="chat", channel="C1"),),
            created_at=AT,
        )
    )
    await store.finish("never_posted", Ending(Status.WITHDRAWN, AT))
    assert steps_of_the_sweep(store)[1] == []
    # Nor will the next sweep look at it again.
    left = store.db.execute(
        "SELECT count(*) FROM requests INDEXED BY requests_unrendered WHERE rendered < revision"
    ).fetchone()
    assert left == (0,)
    # And once posted after all, its message is stale.
    await store.add_message("never_posted", message("never_posted"), AT)
    assert steps_of_the_sweep(store)[1] == ["never_posted"]
