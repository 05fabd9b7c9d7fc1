"""Click→agent: one side's latency round and burst round.

A round first asks for every message and opens every agent's long-poll, and waits until the
server says it holds them all: nothing of that is timed. Then a person clicks. The time of a
click runs from just before this process asks the emulator to click to the moment the
agent's long-poll has returned the answer; the emulator builds the `block_actions` payload and
delivers it (signed HTTP POST, or a Socket Mode envelope) exactly as for the other side.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from tests.bench.children import cpu_seconds
from tests.bench.sides import Side, SlackControl, Target, Via, until_waiting

CREATE_CONCURRENCY = 10


@dataclass
class RoundResult:
    latencies_s: list[float] = field(default_factory=list)
    elapsed_s: float = 0.0
    unacked: int = 0
    cpu_s: float = 0.0
    """CPU time the side's server used while the clicks were timed (all its threads)."""

    @property
    def cpu_ms_per_click(self) -> float:
        return 1000 * self.cpu_s / max(1, len(self.latencies_s))


async def create_all(side: Side, keys: list[str]) -> list[Target]:
    """Ask for every key, a few at a time; in order."""
    found: dict[str, Target] = {}
    pending = iter(keys)

    async def worker() -> None:
        for key in pending:
            found[key] = await side.create(key)

    await asyncio.gather(*(worker() for _ in range(min(CREATE_CONCURRENCY, len(keys)))))
    return [found[key] for key in keys]


@asynccontextmanager
async def agents_waiting(
    side: Side, targets: list[Target]
) -> AsyncIterator[dict[str, asyncio.Task[float]]]:
    """Every target's agent long-polling, held by the server; on leaving, all answered."""
    polls = {
        target.key: asyncio.create_task(side.poll(target.key), name=f"agent-{target.key}")
        for target in targets
    }
    try:
        await until_waiting(side, len(targets), polls.values())
        yield polls
        await asyncio.gather(*polls.values())
    finally:
        for poll in polls.values():
            poll.cancel()
        await asyncio.gather(*polls.values(), return_exceptions=True)


@asynccontextmanager
async def no_collector(control: SlackControl) -> AsyncIterator[None]:
    """The garbage collectors of this process and of the emulator off while clicks are timed,
    so that their pauses land on neither side; they run in between."""
    gc.collect()
    gc.disable()
    await control.collector(on=False)
    try:
        yield
    finally:
        gc.enable()
        await control.collector(on=True)


async def latency_round(
    side: Side, control: SlackControl, via: Via, keys: list[str]
) -> RoundResult:
    """One click at a time, each on a message whose agent is waiting."""
    targets = await create_all(side, keys)
    result = RoundResult()
    async with agents_waiting(side, targets) as polls, no_collector(control):
        started, cpu = time.perf_counter(), cpu_seconds(side.pid)
        for target in targets:
            clicked = time.perf_counter()
            if not await control.click(side.app, target, via):
                result.unacked += 1
            result.latencies_s.append(await polls[target.key] - clicked)
        result.elapsed_s = time.perf_counter() - started
        result.cpu_s = cpu_seconds(side.pid) - cpu
    return result


async def burst_round(
    side: Side, control: SlackControl, via: Via, keys: list[str], senders: int
) -> RoundResult:
    """Every click at once from `senders` people clicking one message after another; the
    time runs from the first click to the last agent's answer."""
    targets = await create_all(side, keys)
    result = RoundResult()
    async with agents_waiting(side, targets) as polls, no_collector(control):
        queue: Iterator[Target] = iter(targets)
        clicked: dict[str, float] = {}

        async def sender() -> None:
            for target in queue:
                clicked[target.key] = time.perf_counter()
                if not await control.click(side.app, target, via):
                    result.unacked += 1

        started, cpu = time.perf_counter(), cpu_seconds(side.pid)
        await asyncio.gather(*(sender() for _ in range(senders)))
        arrived = {key: await poll for key, poll in polls.items()}
        result.cpu_s = cpu_seconds(side.pid) - cpu
        result.elapsed_s = max(arrived.values()) - started
        result.latencies_s = [arrived[key] - clicked[key] for key in arrived]
    return result
