"""`python -m tests.bench`: run every phase, print the table, optionally write the JSON."""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import asyncpg

from tests.bench import capacity
from tests.bench.children import Child
from tests.bench.clicks import (
    RoundResult,
    Span,
    abba,
    burst_round,
    interleaved_bursts,
    interleaved_latency_round,
    latency_round,
)
from tests.bench.floor import __doc__ as floor_doc
from tests.bench.report import (
    Json,
    against_targets,
    latency_ratios,
    latency_summary,
    machine,
    progress,
    ratio,
    table,
)
from tests.bench.sides import AskbridgeSide, FloorSide, Side, SlackApp, SlackControl, Via, session
from tests.bench.stages import EMULATOR, Profiled, analyse
from tests.stores import POSTGRES_URL, schema_in

Say = Callable[[str], None]
STORES = ("sqlite", "postgresql")
MODES: tuple[Via, ...] = ("http", "socket")


@dataclass(frozen=True)
class Options:
    rounds: int
    clicks: int
    warmup: int
    burst: int
    burst_rounds: int
    senders: int
    stores: Sequence[str]
    modes: Sequence[Via]
    postgres_url: str
    one_agent_creates: int
    concurrent_agents: int
    waiting_sizes: Sequence[int]
    startup_waiting: int
    startup_runs: int
    long_polls: int
    stages: bool = False

    def capacity(self) -> capacity.CapacityOptions:
        return capacity.CapacityOptions(
            one_agent_creates=self.one_agent_creates,
            concurrent_agents=self.concurrent_agents,
            waiting_sizes=self.waiting_sizes,
            startup_waiting=self.startup_waiting,
            startup_runs=self.startup_runs,
            long_polls=self.long_polls,
        )


QUICK = {
    "rounds": 2,
    "clicks": 12,
    "warmup": 3,
    # Enough clicks for each server's CPU time, which /proc counts in 10 ms ticks, to show.
    "burst": 150,
    "burst_rounds": 1,
    "senders": 5,
    "one_agent_creates": 20,
    "agents": 5,
    "waiting": "100,200",
    "startup_waiting": 200,
    "startup_runs": 1,
    "long_polls": 200,
}


def launch(
    module: str,
    args: Sequence[str] = (),
    env: dict[str, str] | None = None,
    marks: Path | None = None,
) -> Child:
    """`python -m module args`, or, given a file for its marks, the same under
    `tests.bench.marks` (`--stages`)."""
    if marks is None:
        return Child(module, args, env)
    return Child("tests.bench.marks", [str(marks), module, *args], env)


def askbridge_server(database_url: str, slack: dict[str, str], marks: Path | None = None) -> Child:
    """`askbridge serve` with default settings but for where it listens, its database and
    the Slack app it is."""
    env = {
        "ASKBRIDGE_HOST": "127.0.0.1",
        "ASKBRIDGE_PORT": "0",
        "ASKBRIDGE_DATABASE_URL": database_url,
        **slack,
    }
    return launch("askbridge.bots.cli", ["serve"], env, marks)


def sqlite_server(database: Path, slack: dict[str, str]) -> Child:
    return askbridge_server(f"sqlite:///{database}", slack)


@asynccontextmanager
async def postgres_schema(url: str) -> AsyncIterator[str]:
    """A database URL whose tables live in a fresh schema, dropped afterwards."""
    admin = await asyncpg.connect(url)
    try:
        async with schema_in(admin, url, "askbridge_bench") as found:
            yield found
    finally:
        await admin.close()


async def connect(control: SlackControl, app: SlackApp, via: Via, url: str) -> None:
    """Make the emulator reach a server that just started: its request URL, or its socket."""
    if via == "http":
        await control.deliver_to(app, f"{url}/slack/events")
    else:
        await control.wait_socket(app, after=0)


def latency_figures(rounds: Sequence[dict[str, RoundResult]], ours: str, floor: str) -> Json:
    """Each side's percentiles over all its rounds' clicks, each round's, and the ratios."""
    found: Json = {}
    for name in (ours, floor):
        results = [by_side[name] for by_side in rounds]
        found[name] = {
            **latency_summary([s for r in results for s in r.latencies_s]),
            "cpu_ms_per_click": round(statistics.median(r.cpu_ms_per_click for r in results), 3),
            "rounds": [latency_summary(r.latencies_s) for r in results],
            "unacked": sum(r.unacked for r in results),
        }
    found["ratio"] = latency_ratios(found[ours], found[floor])
    return found


def burst_figures(
    bursts: Sequence[dict[str, RoundResult]], clicks: int, ours: str, floor: str
) -> Json:
    """Each side's answers a second (the median of its bursts), each burst's, the ratio."""
    found: Json = {}
    for name in (ours, floor):
        results = [by_side[name] for by_side in bursts]
        found[name] = {
            "answers_per_s": round(statistics.median(clicks / r.elapsed_s for r in results), 1),
            "cpu_ms_per_click": round(statistics.median(r.cpu_ms_per_click for r in results), 3),
            "server_busy": round(statistics.median(r.busy for r in results), 2),
            "rounds": [
                {
                    "answers_per_s": round(clicks / r.elapsed_s, 1),
                    "cpu_ms_per_click": round(r.cpu_ms_per_click, 3),
                    "server_busy": round(r.busy, 2),
                    **latency_summary(r.latencies_s),
                }
                for r in results
            ],
            "unacked": sum(r.unacked for r in results),
        }
    found["ratio"] = ratio(found[ours]["answers_per_s"], found[floor]["answers_per_s"])
    return found


async def compare(
    sides: tuple[Side, Side], control: SlackControl, via: Via, options: Options, say: Say
) -> tuple[Json, dict[str, list[Span]]]:
    """askbridge and the floor two ways. Interleaved: both set up, then taking turns click by
    click, and burst by burst, in ABBA order, so that the machine's drift over seconds lands
    on both alike. By round: whole rounds of one side in turn, also in ABBA order, as
    measured before; kept beside the other to compare."""
    for side in sides:
        await latency_round(side, control, via, [f"warm-{i}" for i in range(options.warmup)])
    ours, floor = (side.name for side in sides)
    interleaved: list[dict[str, RoundResult]] = []
    for number in range(options.rounds):
        say(f"interleaved latency round {number + 1}/{options.rounds}, click by click")
        keys = [f"mixed{number}-{i}" for i in range(options.clicks)]
        interleaved.append(await interleaved_latency_round(abba(sides, number), control, via, keys))
    by_round: list[dict[str, RoundResult]] = []
    for number in range(options.rounds):
        found: dict[str, RoundResult] = {}
        for side in abba(sides, number):
            say(f"latency round {number + 1}/{options.rounds}, {side.name}")
            keys = [f"click{number}-{i}" for i in range(options.clicks)]
            found[side.name] = await latency_round(side, control, via, keys)
        by_round.append(found)
    interleaved_bursts_found: list[dict[str, RoundResult]] = []
    for number in range(options.burst_rounds):
        say(f"interleaved burst {number + 1}/{options.burst_rounds}, burst by burst")
        keys = [f"mixed-burst{number}-{i}" for i in range(options.burst)]
        interleaved_bursts_found.append(
            await interleaved_bursts(abba(sides, number), control, via, keys, options.senders)
        )
    bursts: list[dict[str, RoundResult]] = []
    for number in range(options.burst_rounds):
        found = {}
        for side in abba(sides, number):
            say(f"burst {number + 1}/{options.burst_rounds}, {side.name}")
            keys = [f"burst{number}-{i}" for i in range(options.burst)]
            found[side.name] = await burst_round(side, control, via, keys, options.senders)
        bursts.append(found)
    spans = {
        side.name: [s for found in interleaved for s in found[side.name].spans] for side in sides
    }
    figures = {
        "interleaved": {
            "latency": latency_figures(interleaved, ours, floor),
            "burst": burst_figures(interleaved_bursts_found, options.burst, ours, floor),
        },
        "by_round": {
            "latency": latency_figures(by_round, ours, floor),
            "burst": burst_figures(bursts, options.burst, ours, floor),
        },
    }
    return figures, spans


@asynccontextmanager
async def database_url(store: str, folder: Path, name: str, options: Options) -> AsyncIterator[str]:
    """A fresh database for one askbridge: a SQLite file, or a PostgreSQL schema of its own."""
    if store == "sqlite":
        yield f"sqlite:///{folder / f'{name}.db'}"
    else:
        async with postgres_schema(options.postgres_url) as url:
            yield url


async def unreachable(url: str) -> str | None:
    """Why PostgreSQL at `url` cannot be used, or None when it answers."""
    try:
        connection = await asyncpg.connect(url, timeout=10)
    except (OSError, TimeoutError, asyncpg.PostgresError) as error:
        return f"PostgreSQL (--postgres-url) is not reachable: {type(error).__name__}: {error}"
    await connection.close()
    return None


def marks_file(folder: Path, process: str, options: Options) -> Path | None:
    """Where a process writes its marks under `--stages`; None without it."""
    return folder / f"marks-{process}.jsonl" if options.stages else None


Profiles = dict[tuple[str, Via], Profiled]
"""Under `--stages`, each comparison's marks files and clicks, by store and mode."""


async def store_clicks(
    store: str,
    floors: dict[Via, FloorSide],
    control: SlackControl,
    agents: aiohttp.ClientSession,
    folder: Path,
    options: Options,
    say: Say,
    profiles: Profiles,
) -> Json:
    found: Json = {}
    for via in options.modes:
        label = f"clicks, {store}, Slack {via} mode"
        say(f"{label}: starting askbridge")
        app = await control.app(f"askbridge-{store}-{via}")
        marks = marks_file(folder, app.name, options)
        async with database_url(store, folder, f"clicks-{via}", options) as url:
            server = askbridge_server(url, app.env(via), marks)
            found[via], spans = await compare_with(
                server, app, floors[via], control, agents, folder, via, options, say, label
            )
        floor_marks = marks_file(folder, floors[via].app.name, options)
        emulator_marks = marks_file(folder, EMULATOR, options)
        if marks and floor_marks and emulator_marks:
            profiles[store, via] = Profiled(
                via=via,
                files={EMULATOR: emulator_marks, "askbridge": marks, "floor": floor_marks},
                apps={"askbridge": app.name, "floor": floors[via].app.name},
                spans=spans,
            )
    return found


async def compare_with(
    server: Child,
    app: SlackApp,
    floor: FloorSide,
    control: SlackControl,
    agents: aiohttp.ClientSession,
    folder: Path,
    via: Via,
    options: Options,
    say: Say,
    label: str,
) -> tuple[Json, dict[str, list[Span]]]:
    try:
        url = await server.start(cwd=folder)
        await connect(control, app, via, url)
        sides = (AskbridgeSide(agents, url, app, server.pid), floor)
        return await compare(sides, control, via, options, lambda m: say(f"{label}: {m}"))
    finally:
        await server.stop()


async def clicks(
    control: SlackControl,
    agents: aiohttp.ClientSession,
    folder: Path,
    options: Options,
    say: Say,
    profiles: Profiles,
) -> Json:
    """Every store and mode, each against the floor of its mode; the floors run throughout."""
    floors: dict[Via, FloorSide] = {}
    children: list[Child] = []
    found: Json = {}
    try:
        for via in options.modes:
            say(f"clicks: starting the floor in Slack {via} mode")
            app = await control.app(f"floor-{via}")
            child = launch(
                "tests.bench.floor", (), app.env(via), marks_file(folder, app.name, options)
            )
            children.append(child)
            url = await child.start(cwd=folder)
            await connect(control, app, via, url)
            floors[via] = FloorSide(agents, url, app, child.pid)
        for store in options.stores:
            why = await unreachable(options.postgres_url) if store == "postgresql" else None
            if why is not None:
                say(f"clicks, postgresql: skipped; {why}")
                found[store] = {"skipped": why}
                continue
            found[store] = await store_clicks(
                store, floors, control, agents, folder, options, say, profiles
            )
    finally:
        for child in children:
            await child.stop()
    return found


async def run(options: Options, started: float) -> Json:
    def say(message: str) -> None:
        progress(started, time.perf_counter(), message)

    document: Json = {
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "options": {**asdict(options), "postgres_url": None},
        "floor": (floor_doc or "").strip().splitlines()[0],
    }
    profiles: Profiles = {}
    with tempfile.TemporaryDirectory(prefix="askbridge-bench-") as name:
        folder = Path(name)
        emulator = launch("tests.bench.slack_process", marks=marks_file(folder, EMULATOR, options))
        async with session() as http, session() as agents:
            try:
                say("starting the Slack emulator")
                await emulator.start(cwd=folder)
                control = SlackControl(http, emulator.url)
                document["clicks"] = await clicks(control, agents, folder, options, say, profiles)
                document["targets"] = against_targets(document["clicks"])
                document.update(
                    await capacity.measure(options.capacity(), control, folder, sqlite_server, say)
                )
            finally:
                await emulator.stop()
        # Every process has written its marks once it has stopped.
        for (store, via), profiled in profiles.items():
            say(f"stages, {store}, Slack {via} mode")
            document["clicks"][store][via]["stages"] = analyse(profiled)
    document["duration_s"] = round(time.perf_counter() - started, 1)
    return document


def parse(argv: Sequence[str] | None = None) -> tuple[Options, str | None]:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench",
        description="askbridge's benchmark of record: click→agent latency and bursts through "
        "Slack against a bare slack-bolt app, create throughput, memory and start-up.",
    )
    add = parser.add_argument
    add(
        "--quick",
        action="store_true",
        help="a smoke run: tiny sizes, under 30 s on an idle machine",
    )
    add(
        "--json",
        nargs="?",
        const="-",
        metavar="FILE",
        help="write the results as JSON to FILE, or to stdout (then the table goes to stderr)",
    )
    add("--rounds", type=int, default=3, help="latency rounds a side (default 3)")
    add("--clicks", type=int, default=200, help="clicks a latency round (default 200)")
    add("--warmup", type=int, default=20, help="unmeasured clicks a side first (default 20)")
    add("--burst", type=int, default=300, help="clicks a burst (default 300)")
    add("--burst-rounds", type=int, default=3, help="bursts a side (default 3)")
    add("--senders", type=int, default=20, help="people clicking at once in a burst (20)")
    add("--stores", default="sqlite,postgresql", help="sqlite,postgresql (default both)")
    add("--modes", default="http,socket", help="Slack modes: http,socket (default both)")
    add(
        "--postgres-url",
        default=POSTGRES_URL,
        help=f"default {POSTGRES_URL} (a schema of "
        "its own is made and dropped); ASKBRIDGE_TEST_POSTGRES_URL sets the default",
    )
    add("--one-agent-creates", type=int, default=500, help="creates timed from one agent")
    add("--agents", type=int, default=20, help="agents creating at once (default 20)")
    add(
        "--waiting",
        default="1000,10000",
        help="waiting requests at which memory is read "
        "(default 1000,10000; adding 100000 takes 5-15 min more)",
    )
    add(
        "--startup-waiting",
        type=int,
        default=10_000,
        help="waiting requests at start-up; one of --waiting (default 10000)",
    )
    add("--startup-runs", type=int, default=3, help="start-ups timed (default 3)")
    add("--long-polls", type=int, default=10_000, help="agents long-polling at once (10000)")
    add(
        "--stages",
        action="store_true",
        help="where each interleaved click's time goes: every process runs with timing marks "
        "at the library seams all share (tests/bench/marks.py), and the report sets the stages "
        "and what else happened of each side's slowest 1%% of clicks against all its clicks",
    )
    args = parser.parse_args(argv)
    if args.quick:
        parser.set_defaults(**QUICK)
        args = parser.parse_args(argv)
    waiting = sorted({int(size) for size in args.waiting.split(",") if size.strip()})
    if args.startup_waiting not in waiting:
        parser.error(f"--startup-waiting {args.startup_waiting} must be one of --waiting")
    if args.long_polls > args.startup_waiting:
        parser.error("--long-polls must not exceed --startup-waiting")
    if args.one_agent_creates > min(waiting):
        parser.error("--one-agent-creates must not exceed the smallest --waiting size")
    stores = [s for s in args.stores.split(",") if s]
    modes = [m for m in args.modes.split(",") if m]
    if not set(stores) <= set(STORES) or not set(modes) <= set(MODES):
        parser.error("--stores takes sqlite,postgresql and --modes http,socket")
    options = Options(
        rounds=args.rounds,
        clicks=args.clicks,
        warmup=args.warmup,
        burst=args.burst,
        burst_rounds=args.burst_rounds,
        senders=args.senders,
        stores=stores,
        modes=[m for m in MODES if m in modes],
        postgres_url=args.postgres_url,
        one_agent_creates=args.one_agent_creates,
        concurrent_agents=args.agents,
        waiting_sizes=waiting,
        startup_waiting=args.startup_waiting,
        startup_runs=args.startup_runs,
        long_polls=args.long_polls,
        stages=args.stages,
    )
    return options, args.json


def main(argv: Sequence[str] | None = None) -> None:
    options, json_to = parse(argv)
    started = time.perf_counter()
    document = asyncio.run(run(options, started))
    text = table(document) + "\n"
    if json_to == "-":
        sys.stderr.write(text)
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        sys.stdout.write(text)
        if json_to:
            Path(json_to).write_text(json.dumps(document, indent=2) + "\n")
