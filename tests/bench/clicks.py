"""Click→agent: latency rounds and bursts, of one side at a time or of both interleaved.

A round first asks for every message and opens every agent's long-poll, and waits until the
server says it holds them all: nothing of that is timed. Then a person clicks. The time of a
click runs from just before this process asks the emulator to click to the moment the
agent's long-poll has returned the answer; the emulator builds the `block_actions` payload and
delivers it (signed HTTP POST, or a Socket Mode envelope) exactly as for the other side.

Interleaved, both sides are set up first and then take turns click by click (or burst by
burst) in ABBA order, A B B A A B …, so that the machine's drift over seconds lands on both
alike and neither always goes first.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

from tests.bench.children import cpu_seconds
from tests.bench.sides import Side, SlackControl, Target, Via, until_waiting

CREATE_CONCURRENCY = 10


@dataclass(frozen=True)
class Span:
    """One click of a latency round: when it was asked for and when its agent had the
    answer, on `time.perf_counter()`, which is one clock for every process of the machine."""

    key: str
    clicked: float
    arrived: float


@dataclass
class RoundResult:
    latencies_s: list[float] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    elapsed_s: float = 0.0
    unacked: int = 0
    cpu_s: float = 0.0
    """CPU time the side's server used while the clicks were timed (all its threads)."""

    @property
    def cpu_ms_per_click(self) -> float:
        return 1000 * self.cpu_s / max(1, len(self.latencies_s))

    @property
    def busy(self) -> float:
        """The side's server's CPU while the clicks were timed, in cores: near 1.0 in a burst
        says its event loop's one thread was what held the answers back."""
        return self.cpu_s / self.elapsed_s if self.elapsed_s > 0 else 0.0


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


def abba(sides: Sequence[Side], turn: int) -> Sequence[Side]:
    """The sides' order on a turn: A B, B A, A B, … so that A B B A A B B A … runs on."""
    return sides if turn % 2 == 0 else sides[::-1]


async def click_once(
    side: Side,
    control: SlackControl,
    via: Via,
    target: Target,
    polls: dict[str, asyncio.Task[float]],
    result: RoundResult,
) -> None:
    """One click timed, from asking the emulator to the agent holding the answer."""
    clicked = time.perf_counter()
    if not await control.click(side.app, target, via):
        result.unacked += 1
    arrived = await polls[target.key]
    result.latencies_s.append(arrived - clicked)
    result.spans.append(Span(target.key, clicked, arrived))


async def latency_round(
    side: Side, control: SlackControl, via: Via, keys: list[str]
) -> RoundResult:
    """One click at a time, each on a message whose agent is waiting."""
    targets = await create_all(side, keys)
    result = RoundResult()
    async with agents_waiting(side, targets) as polls, no_collector(control):
        started, cpu = time.perf_counter(), cpu_seconds(side.pid)
        for target in targets:
            await click_once(side, control, via, target, polls, result)
        result.elapsed_s = time.perf_counter() - started
        result.cpu_s = cpu_seconds(side.pid) - cpu
    return result


async def interleaved_latency_round(
    sides: Sequence[Side], control: SlackControl, via: Via, keys: list[str]
) -> dict[str, RoundResult]:
    """Every side's clicks, one at a time, the sides taking turns click by click in ABBA
    order; each side's agents all waiting from the start, as in `latency_round`."""
    targets = {side.name: await create_all(side, keys) for side in sides}
    results = {side.name: RoundResult() for side in sides}
    async with AsyncExitStack() as stack:
        polls = {
            side.name: await stack.enter_async_context(agents_waiting(side, targets[side.name]))
            for side in sides
        }
        await stack.enter_async_context(no_collector(control))
        started = time.perf_counter()
        cpu = {side.name: cpu_seconds(side.pid) for side in sides}
        for turn in range(len(keys)):
            for side in abba(sides, turn):
                name = side.name
                await click_once(
                    side, control, via, targets[name][turn], polls[name], results[name]
                )
        for side in sides:
            results[side.name].elapsed_s = time.perf_counter() - started
            results[side.name].cpu_s = cpu_seconds(side.pid) - cpu[side.name]
    return results


async def burst(
    side: Side,
    control: SlackControl,
    via: Via,
    targets: list[Target],
    polls: dict[str, asyncio.Task[float]],
    senders: int,
) -> RoundResult:
    """Every target clicked at once from `senders` people clicking one message after
    another; the time runs from the first click to the last agent's answer."""
    result = RoundResult()
    queue: Iterator[Target] = iter(targets)
    clicked: dict[str, float] = {}

    async def sender() -> None:
        for target in queue:
            clicked[target.key] = time.perf_counter()
            if not await control.click(side.app, target, via):
                result.unacked += 1

    started, cpu = time.perf_counter(), cpu_seconds(side.pid)
    await asyncio.gather(*(sender() for _ in range(senders)))
    arrived = {target.key: await polls[target.key] for target in targets}
    result.cpu_s = cpu_seconds(side.pid) - cpu
    result.elapsed_s = max(arrived.values()) - started
    result.latencies_s = [arrived[key] - clicked[key] for key in arrived]
    return result


async def burst_round(
    side: Side, control: SlackControl, via: Via, keys: list[str], senders: int
) -> RoundResult:
    """One side's burst, its messages asked for and its agents waiting just before."""
    targets = await create_all(side, keys)
    async with agents_waiting(side, targets) as polls, no_collector(control):
        return await burst(side, control, via, targets, polls, senders)


async def interleaved_bursts(
    sides: Sequence[Side], control: SlackControl, via: Via, keys: list[str], senders: int
) -> dict[str, RoundResult]:
    """One burst of each side, back to back in the order given, every side's messages
    asked for and agents waiting before the first: nothing but the other side's burst lies
    between them."""
    targets = {side.name: await create_all(side, keys) for side in sides}
    results: dict[str, RoundResult] = {}
    async with AsyncExitStack() as stack:
        polls = {
            side.name: await stack.enter_async_context(agents_waiting(side, targets[side.name]))
            for side in sides
        }
        await stack.enter_async_context(no_collector(control))
        for side in sides:
            name = side.name
            results[name] = await burst(side, control, via, targets[name], polls[name], senders)
    return results
