"""How much askbridge holds: create throughput, memory per waiting request, start-up time with
many waiting, and the memory of many concurrent long-polls. SQLite, default settings, Slack
HTTP mode; every request is posted to the emulator's Slack like a real one.

Memory is the resident set (RSS) of the `askbridge serve` process, read from /proc: what the
operating system has to give it, fragmentation and caches included.
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from tests.bench.children import Child
from tests.bench.clicks import latency_round
from tests.bench.report import Json
from tests.bench.sides import (
    AskbridgeSide,
    SlackApp,
    SlackControl,
    Target,
    session,
    until_waiting,
)

MIB = 2**20
POLL_BATCH = 500
"""Long-polls opened at a time: a server's listen backlog drops connections beyond it."""
WAITING = "wait-{}"
FIRST = "first-{}"
EMPTY = "empty-{}"


@dataclass(frozen=True)
class CapacityOptions:
    one_agent_creates: int
    concurrent_agents: int
    waiting_sizes: Sequence[int]
    startup_waiting: int
    startup_runs: int
    long_polls: int


Progress = Callable[[str], None]
StartServer = Callable[[Path, dict[str, str]], Child]


async def measure(
    options: CapacityOptions,
    control: SlackControl,
    folder: Path,
    start_server: StartServer,
    progress: Progress,
) -> Json:
    app = await control.app("askbridge-capacity")
    database = folder / "capacity.db"
    startup_copy = folder / "startup.db"
    empty_copy = folder / "empty.db"
    targets: dict[str, Target] = {}
    result: Json = {}
    async with session() as http:
        server = start_server(database, app.env("http"))
        try:
            progress("capacity: starting askbridge (SQLite, Slack HTTP mode)")
            url = await server.start(cwd=folder)
            await control.deliver_to(app, f"{url}/slack/events")
            side = AskbridgeSide(http, url, app)
            await latency_round(side, control, "http", [f"warm-{i}" for i in range(20)])
            base_rss = server.rss_bytes()
            # The same start-up, with (almost) nothing waiting: what the process itself costs.
            keys = [EMPTY.format(run) for run in range(options.startup_runs)]
            await create_many(side, keys, 1, targets)
            backup(database, empty_copy)

            progress(f"capacity: {options.one_agent_creates} creates from one agent")
            keys = [WAITING.format(i) for i in range(options.one_agent_creates)]
            started = time.perf_counter()
            await create_many(side, keys, 1, targets)
            one_agent_s = time.perf_counter() - started
            made = len(keys)

            memory: Json = {}
            concurrent_made = 0
            concurrent_s = 0.0
            for size in sorted(options.waiting_sizes):
                progress(
                    f"capacity: {options.concurrent_agents} agents create up to {size} waiting"
                )
                keys = [WAITING.format(i) for i in range(made, size)]
                started = time.perf_counter()
                await create_many(side, keys, options.concurrent_agents, targets)
                concurrent_s += time.perf_counter() - started
                concurrent_made += len(keys)
                made = max(made, size)
                rss = server.rss_bytes()
                memory[str(size)] = {
                    "rss_mib": round(rss / MIB, 1),
                    "rss_delta_bytes": rss - base_rss,
                    "bytes_per_request": round((rss - base_rss) / size, 1),
                }
                if size == options.startup_waiting:
                    # The requests the start-up runs click, then a copy to start from.
                    keys = [FIRST.format(run) for run in range(options.startup_runs)]
                    await create_many(side, keys, 1, targets)
                    backup(database, startup_copy)
            result["creates"] = {
                "one_agent_per_s": round(options.one_agent_creates / one_agent_s, 1),
                "concurrent_agents": options.concurrent_agents,
                "concurrent_per_s": round(concurrent_made / concurrent_s, 1),
            }
            result["memory_per_waiting"] = memory
        finally:
            await server.stop()
        result.update(
            await startup(
                options, control, app, (empty_copy, startup_copy), start_server, progress, targets
            )
        )
    return result


async def create_many(
    side: AskbridgeSide, keys: list[str], agents: int, targets: dict[str, Target]
) -> None:
    """`agents` agents ask for `keys` between them, as fast as askbridge answers."""
    pending = iter(keys)

    async def agent() -> None:
        for key in pending:
            targets[key] = await side.create(key)

    await asyncio.gather(*(agent() for _ in range(agents)))


def backup(source: Path, copy: Path) -> None:
    """A consistent copy of a live SQLite database (its WAL included)."""
    live = sqlite3.connect(source)
    target = sqlite3.connect(copy)
    try:
        live.backup(target)
    finally:
        target.close()
        live.close()


async def startup(
    options: CapacityOptions,
    control: SlackControl,
    app: SlackApp,
    databases: tuple[Path, Path],
    start_server: StartServer,
    progress: Progress,
    targets: dict[str, Target],
) -> Json:
    """Start `askbridge serve` on a copy of the database from when `startup_waiting` requests
    waited, and on one from before any did, in turns; time each from the process's start to
    the first click answered (the agent's long-poll returning). Then hold many long-polls on
    the last one started."""
    runs: dict[str, list[Json]] = {"empty": [], "waiting": []}
    server: Child | None = None
    async with session() as agents:
        try:
            for run in range(options.startup_runs):
                progress(
                    f"capacity: start-up with {options.startup_waiting} waiting and with none, "
                    f"run {run + 1}/{options.startup_runs}"
                )
                for name, database, key in zip(
                    runs, databases, (EMPTY.format(run), FIRST.format(run)), strict=True
                ):
                    if server is not None:
                        await server.stop()
                    server = start_server(database, app.env("http"))
                    found_run = await first_answer(
                        server, database.parent, control, app, agents, targets[key]
                    )
                    runs[name].append(found_run)
            assert server is not None
            found: Json = {
                "waiting": options.startup_waiting,
                **medians(runs["waiting"]),
                "runs": runs["waiting"],
                "empty": {**medians(runs["empty"]), "runs": runs["empty"]},
            }
            side = AskbridgeSide(agents, server.url, app)
            keys = [WAITING.format(i) for i in range(options.long_polls)]
            progress(f"capacity: {options.long_polls} agents long-polling at once")
            polls = await hold_long_polls(side, server, keys)
        finally:
            if server is not None:
                await server.stop()
    return {"startup": found, "long_polls": polls}


async def first_answer(
    server: Child,
    folder: Path,
    control: SlackControl,
    app: SlackApp,
    agents: aiohttp.ClientSession,
    target: Target,
) -> Json:
    """Start `server`; as soon as it listens, an agent long-polls and a person clicks."""
    started = time.perf_counter()
    url = await server.start(cwd=folder)
    listening = time.perf_counter()
    await control.deliver_to(app, f"{url}/slack/events")
    side = AskbridgeSide(agents, url, app)
    poll = asyncio.create_task(side.poll(target.key), name="first-agent")
    await control.click(app, target, "http")
    answered = await poll
    return {
        "to_listening_s": round(listening - started, 3),
        "to_first_answer_s": round(answered - started, 3),
    }


def medians(runs: list[Json]) -> Json:
    return {
        name: statistics.median(run[name] for run in runs)
        for name in ("to_listening_s", "to_first_answer_s")
    }


async def hold_long_polls(side: AskbridgeSide, server: Child, keys: list[str]) -> Json:
    """The server's RSS before and while every key's agent long-polls."""
    before = server.rss_bytes()
    polls: list[asyncio.Task[float]] = []
    try:
        for start in range(0, len(keys), POLL_BATCH):
            batch = keys[start : start + POLL_BATCH]
            polls += [asyncio.create_task(side.poll(key), name=f"agent-{key}") for key in batch]
            await until_waiting(side, len(polls), polls)
        held = server.rss_bytes()
    finally:
        for poll in polls:
            poll.cancel()
        await asyncio.gather(*polls, return_exceptions=True)
    return {
        "count": len(keys),
        "rss_before_mib": round(before / MIB, 1),
        "rss_mib": round(held / MIB, 1),
        "bytes_per_poll": round((held - before) / max(1, len(keys)), 1),
    }
