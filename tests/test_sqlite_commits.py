"""The SQLite store's commits: checkpoints off the writing connection with a bounded WAL, and
the power-loss durable setting, whose transactions queued together share one commit."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from askbridge.core.ask import Ask
from askbridge.core.models import Person, Request, Target
from askbridge.core.store.checkpoints import Checkpoints
from askbridge.core.store.group_commit import Sync
from askbridge.core.store.sqlite import SQLiteStore
from tests.conftest import DATABASE

AT = datetime(2026, 1, 1, tzinfo=UTC)
ADA = Person(platform="web", id="ada", name="Ada")


def request(index: int) -> Request:
    ask = Ask.parse({"questions": copy.deepcopy(DATABASE["questions"])})
    return Request(
        request_id=f"ask_{index}",
        questions=ask.questions,
        targets=(Target(platform="web"),),
        context="x" * 2000,
        created_at=AT,
    )


async def test_many_creates_keep_the_wal_under_its_bound(tmp_path: Path) -> None:
    path = tmp_path / "wal.db"
    limit = 512 * 1024
    # No timer: only the WAL's size asks for checkpoints.
    checkpoints = Checkpoints(str(path), every_s=3600, soft_bytes=64 * 1024, limit_bytes=limit)
    store = SQLiteStore(path, checkpoints=checkpoints)
    await store.open()
    try:
        autocheckpoint = await pragma(store, "PRAGMA wal_autocheckpoint")
        assert autocheckpoint == (0,)
        largest = 0
        for index in range(1500):
            await store.create(request(index))
            largest = max(largest, checkpoints.wal_size())
    finally:
        await store.close()
    # Without checkpoints the WAL holds every page written: far more than the bound.
    assert path.stat().st_size > 4 * limit
    assert checkpoints.runs > 0
    assert largest <= 2 * limit, largest


@pytest.mark.parametrize("sync", ["normal", "full"])
async def test_transactions_queued_together_share_commits(tmp_path: Path, sync: Sync) -> None:
    """With "normal", those that reach the store in one turn of the loop; with "full", those
    that queue up while the database thread waits for the disk."""
    store = SQLiteStore(tmp_path / "group.db", sync=sync)
    await store.open()
    try:
        synchronous = {"normal": 1, "full": 2}[sync]
        assert await pragma(store, "PRAGMA synchronous") == (synchronous,)
        before = store.commits
        created = await asyncio.gather(*(store.create(request(i)) for i in range(50)))
        assert all(new for _, new in created)
        assert store.commits - before < 25, store.commits - before
    finally:
        await store.close()
    reopened = SQLiteStore(tmp_path / "group.db", sync=sync)
    await reopened.open()
    try:
        assert await reopened.count_requests(request(0).status) == 50
    finally:
        await reopened.close()


@pytest.mark.parametrize("sync", ["normal", "full"])
async def test_a_failing_transaction_in_a_group_leaves_the_others_committed(
    tmp_path: Path, sync: Sync
) -> None:
    store = SQLiteStore(tmp_path / "group.db", sync=sync)
    await store.open()
    try:
        votes = [
            store.vote("ask_missing", ADA, {"Database": "PostgreSQL"}, 1, AT),
            *(store.create(request(i)) for i in range(10)),
        ]
        results = await asyncio.gather(*votes, return_exceptions=True)
        assert isinstance(results[0], KeyError)
        assert all(isinstance(r, tuple) and r[1] for r in results[1:]), results
        assert await store.count_requests(request(0).status) == 10
    finally:
        await store.close()


async def test_a_call_whose_task_is_cancelled_before_its_turn_never_runs(
    tmp_path: Path,
) -> None:
    """Not later either, with the next call that takes its turn."""
    store = SQLiteStore(tmp_path / "cancel.db")
    await store.open()
    try:
        # A call after a quiet spell runs at once; one right behind another waits its turn,
        # which another call may take before the cancelled task hears of its cancellation.
        first = asyncio.create_task(store.create(request(2)))
        cancelled = asyncio.create_task(store.create(request(1)))
        await asyncio.sleep(0)  # both have reached the store; the second waits for its turn
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        assert (await first)[1]
        await store.create(request(0))
        assert await store.get("ask_0") is not None
        assert await store.get("ask_1") is None
    finally:
        await store.close()


async def test_a_task_that_outlived_a_cancellation_still_has_its_calls_run(
    tmp_path: Path,
) -> None:
    """A task that caught a cancellation without `uncancel()` still counts as being cancelled;
    its own calls, when it resumes normally, run all the same."""
    store = SQLiteStore(tmp_path / "outlived.db")
    await store.open()

    async def outlives() -> bool:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.Event().wait()  # until cancelled
        # A call right behind another waits its turn, which this task then takes itself.
        await store.get("ask_0")
        return (await store.create(request(3)))[1]

    try:
        task = asyncio.create_task(outlives())
        await asyncio.sleep(0)
        task.cancel()
        assert await task
        assert await store.get("ask_3") is not None
    finally:
        await store.close()


async def test_the_default_survives_a_crash_of_the_process_not_a_power_loss(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "normal.db")
    await store.open()
    try:
        # NORMAL (1): commits reach the WAL file, which the OS keeps when the process dies.
        assert await pragma(store, "PRAGMA synchronous") == (1,)
    finally:
        await store.close()


async def test_a_lock_held_by_another_process_holds_up_no_other_call(tmp_path: Path) -> None:
    """`askbridge prune` beside a running server takes the write lock a batch at a time: a
    write that finds it taken waits without holding up the event loop, then goes through."""
    path = tmp_path / "busy.db"
    store = SQLiteStore(path)
    await store.open()
    elsewhere = sqlite3.connect(path, isolation_level=None)
    try:
        await store.create(request(0))
        elsewhere.execute("BEGIN IMMEDIATE")
        creating = asyncio.create_task(store.create(request(1)))
        await asyncio.sleep(0)  # its first try, which finds the lock taken
        # A read meanwhile: on the loop's thread too, so it answers only if the loop runs on.
        found = await asyncio.wait_for(store.get("ask_0"), 2.0)
        assert found is not None
        assert not creating.done()
        elsewhere.execute("COMMIT")
        stored, created = await asyncio.wait_for(creating, 5.0)
        assert created
        assert stored.request_id == "ask_1"
    finally:
        elsewhere.close()
        await store.close()


async def pragma(store: SQLiteStore, name: str) -> tuple[object, ...]:
    """The store's connection's `name` setting, read where its calls run."""
    return tuple(await store._run(lambda: store.db.execute(name).fetchone()))
