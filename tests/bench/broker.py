"""Throughput and memory of the broker on SQLite, in-process and without HTTP or a platform.

Creates N waiting requests, each with an agent waiting on it, then answers them one by one and
all at once. `tests/test_capacity.py` keeps wide floors on these figures; the benchmark of
record (`python -m tests.bench`) measures the whole path through real processes instead.
"""

from __future__ import annotations

import asyncio
import copy
import time
import tracemalloc
from pathlib import Path

from askbridge.adapters.web import WebSurface
from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.intents import Submit
from askbridge.core.models import Person, Request
from askbridge.core.store.sqlite import SQLiteStore
from tests.conftest import DATABASE


async def measure(count: int, folder: Path) -> dict[str, float]:
    store = SQLiteStore(folder / "bench.db")
    await store.open()
    broker = Broker(store)
    broker.add_surface(WebSurface())
    await broker.start()
    questions = copy.deepcopy(DATABASE["questions"])
    try:
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        started = time.perf_counter()
        for index in range(count):
            await broker.ask(Ask.parse({"questions": questions, "request_id": f"bench_{index}"}))
        created_s = time.perf_counter() - started
        waiters: list[asyncio.Task[Request]] = [
            asyncio.create_task(broker.wait(f"bench_{index}", 300)) for index in range(count)
        ]
        await asyncio.sleep(0)  # let every waiter subscribe and queue its first read
        await store.get("bench_0")  # the database thread is FIFO: all first reads are done
        per_request = (tracemalloc.get_traced_memory()[0] - before) / count
        tracemalloc.stop()

        person = Person(platform="web", id="bench")
        half = count // 2
        started = time.perf_counter()
        for index in range(half):
            await broker.act(f"bench_{index}", person, Submit({0: (0,), 1: (0, 2)}))
        sequential_s = time.perf_counter() - started
        started = time.perf_counter()
        await asyncio.gather(
            *(
                broker.act(f"bench_{index}", person, Submit({0: (1,), 1: (1,)}))
                for index in range(half, count)
            )
        )
        concurrent_s = time.perf_counter() - started
        answered = await asyncio.gather(*waiters)
        assert all(r.status.value == "answered" for r in answered)
        return {
            "creates_per_s": count / created_s,
            "answers_per_s_sequential": half / sequential_s,
            "answers_per_s_concurrent": (count - half) / concurrent_s,
            "kib_per_waiting_request": per_request / 1024,
        }
    finally:
        await broker.stop()
        await store.close()
