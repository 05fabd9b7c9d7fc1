"""`--stages`: where the time of each interleaved click goes, and what lies in the slowest 1%.

Every process of a comparison runs under `tests.bench.marks`. A latency round has one click in
flight at a time on the whole machine, so every mark between a click and its agent's answer
belongs to that click's way or happened beside it: the way is cut at checkpoints (the emulator
has the click, sends it, the server has it, bolt dispatches it, the listener runs, the agent's
long-poll is answered), and the rest of the marks in the window (a garbage
collection, a Web API call of an earlier click) are counted beside it. Each side's slowest 1%
of clicks is then set against all its clicks: the stages, and what happened beside them.
"""

from __future__ import annotations

import bisect
import json
import math
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from tests.bench.clicks import Span
from tests.bench.report import Json
from tests.bench.sides import Via

SLOWEST = 0.01
COUNTED_APART = frozenset({"gc start", "gc stop", "call", "return"})
"""Marks that are not listed beside a click's way: collections and steps have figures of
their own."""
KEYED = re.compile(r"/[^/\s]*\d[^/\s]*$")
EMULATOR = "emulator"


@dataclass(frozen=True)
class Mark:
    t: float
    process: str
    event: str
    detail: str

    @property
    def label(self) -> str:
        """What happened where, a key at the end of a path left out so that alike count alike."""
        detail = KEYED.sub("/…", self.detail)
        return f"{self.process}: {self.event} {detail}".rstrip()


def read(path: Path, process: str) -> list[Mark]:
    """A process's marks; none when it wrote none (it died before writing them)."""
    if not path.exists():
        return []
    found = []
    for line in path.read_text().splitlines():
        t, event, detail = json.loads(line)
        found.append(Mark(t, process, event, detail))
    return found


@dataclass(frozen=True)
class Checkpoint:
    name: str
    process: str
    """`EMULATOR`, or "server": the clicked side's own process."""
    matches: Callable[[Mark, str, str], bool]
    """(mark, the side's app name, the click's key) -> whether this is the checkpoint."""


def checkpoints(via: Via) -> list[Checkpoint]:
    """The way of a click, in order, in the marks of `tests.bench.marks`."""

    def event(name: str, detail: str = "") -> Callable[[Mark, str, str], bool]:
        return lambda mark, app, key: mark.event == name and mark.detail.startswith(detail)

    def answered(name: str) -> Callable[[Mark, str, str], bool]:
        return lambda mark, app, key: mark.event == name and mark.detail.endswith(f"/{key}")

    def control(mark: Mark, app: str, key: str) -> bool:
        return mark.event == "request in" and mark.detail == f"POST /apps/{app}/click"

    if via == "http":
        sent = Checkpoint("emulator → sent", EMULATOR, event("client call", "POST /slack/events"))
        arrived = Checkpoint(
            "sent → server has it", "server", event("request in", "POST /slack/events")
        )
    else:
        sent = Checkpoint("emulator → sent", EMULATOR, event("websocket send"))
        arrived = Checkpoint("sent → server has it", "server", event("socket mode in"))
    return [
        Checkpoint("click → emulator has it", EMULATOR, control),
        sent,
        arrived,
        Checkpoint("server → bolt dispatches", "server", event("bolt dispatch")),
        Checkpoint("bolt → listener runs", "server", event("listener called")),
        Checkpoint("listener → long-poll answered", "server", answered("request handled")),
    ]


LAST_STAGE = "answered → agent has it"
"""aiohttp writing the answer, the kernel, and the agent reading it: the agent may have it
before the server's write returns, so nothing marks the write's end."""


def stage_names(via: Via) -> list[str]:
    return [point.name for point in checkpoints(via)] + [LAST_STAGE]


@dataclass(frozen=True)
class Click:
    span: Span
    stages_ms: dict[str, float] | None
    """None when a checkpoint's mark was not found."""
    beside: list[Mark]
    gc_ms: dict[str, float]
    """Time each process spent collecting garbage within the click, by process."""
    missing: list[str]
    """The checkpoints whose marks were not found, in order."""
    calls_ms: dict[str, float]
    """Time in each of the server's own marked steps (`tests.bench.marks.OWN`) within the
    click; a step that returns after the agent has its answer counts until then."""

    @property
    def total_ms(self) -> float:
        return 1000 * (self.span.arrived - self.span.clicked)


class Timeline:
    """The marks of every process of one comparison, in time order."""

    def __init__(self, marks: Sequence[Mark]) -> None:
        self.marks = sorted(marks, key=lambda mark: mark.t)
        self.times = [mark.t for mark in self.marks]
        self.collections = collections(self.marks)

    def between(self, start: float, end: float) -> list[Mark]:
        return self.marks[
            bisect.bisect_left(self.times, start) : bisect.bisect_right(self.times, end)
        ]

    def click(self, span: Span, server: str, app: str, via: Via) -> Click:
        window = self.between(span.clicked, span.arrived)
        used: set[int] = set()
        times = [span.clicked]
        position = 0
        missing = []
        for point in checkpoints(via):
            process = server if point.process == "server" else EMULATOR
            for index in range(position, len(window)):
                mark = window[index]
                if mark.process == process and point.matches(mark, app, span.key):
                    times.append(mark.t)
                    used.add(index)
                    position = index + 1
                    break
            else:
                missing.append(point.name)
        stages: dict[str, float] | None = None
        if not missing:
            times.append(span.arrived)
            stages = {
                name: 1000 * (b - a)
                for name, (a, b) in zip(stage_names(via), pairwise(times), strict=True)
            }
        beside = [
            mark
            for index, mark in enumerate(window)
            if index not in used and mark.event not in COUNTED_APART
        ]
        gc_ms = self.gc_within(span.clicked, span.arrived)
        own = [mark for mark in window if mark.process == server]
        return Click(span, stages, beside, gc_ms, missing, calls(own, span.arrived))

    def gc_within(self, start: float, end: float) -> dict[str, float]:
        found: defaultdict[str, float] = defaultdict(float)
        for process, began, ended in self.collections:
            overlap = min(end, ended) - max(start, began)
            if overlap > 0:
                found[process] += 1000 * overlap
        return dict(found)


def calls(marks: Sequence[Mark], end: float) -> dict[str, float]:
    """Time from each "call" mark to its "return" (or to `end`), summed by step."""
    began: dict[str, list[float]] = defaultdict(list)
    spent: defaultdict[str, float] = defaultdict(float)
    for mark in marks:
        if mark.event == "call":
            began[mark.detail].append(mark.t)
        elif mark.event == "return" and began[mark.detail]:
            spent[mark.detail] += 1000 * (mark.t - began[mark.detail].pop())
    for step, times in began.items():
        for t in times:
            spent[step] += 1000 * (end - t)
    return dict(spent)


def collections(marks: Sequence[Mark]) -> list[tuple[str, float, float]]:
    """Each garbage collection as (process, start, stop), from its two marks."""
    started: dict[str, float] = {}
    found = []
    for mark in marks:
        if mark.event == "gc start":
            started[mark.process] = mark.t
        elif mark.event == "gc stop" and mark.process in started:
            found.append((mark.process, started.pop(mark.process), mark.t))
    return found


def slowest(clicks: Sequence[Click]) -> list[Click]:
    """The clicks at or above the 99th percentile (nearest rank), slowest first."""
    ordered = sorted(clicks, key=lambda click: click.total_ms, reverse=True)
    return ordered[: max(1, len(ordered) - math.ceil((1 - SLOWEST) * len(ordered)) + 1)]


def per_click(clicks: Sequence[Click]) -> dict[str, float]:
    """How often each mark beside the way came up, per click."""
    counted: Counter[str] = Counter(mark.label for click in clicks for mark in click.beside)
    return {label: round(count / len(clicks), 3) for label, count in counted.most_common()}


def gc_per_click(clicks: Sequence[Click]) -> dict[str, float]:
    spent: defaultdict[str, float] = defaultdict(float)
    for click in clicks:
        for process, ms in click.gc_ms.items():
            spent[process] += ms
    return {process: round(ms / len(clicks), 3) for process, ms in sorted(spent.items())}


def stage_figures(
    clicks: Sequence[Click], via: Via, figure: Callable[[list[float]], float]
) -> Json:
    complete = [click.stages_ms for click in clicks if click.stages_ms is not None]
    if not complete:
        return {}
    return {
        name: round(figure([stages[name] for stages in complete]), 3) for name in stage_names(via)
    }


def call_figures(clicks: Sequence[Click], figure: Callable[[list[float]], float]) -> Json:
    steps = sorted({step for click in clicks for step in click.calls_ms})
    return {
        step: round(figure([click.calls_ms.get(step, 0.0) for click in clicks]), 3)
        for step in steps
    }


def side_figures(clicks: Sequence[Click], via: Via) -> Json:
    tail = slowest(clicks)
    return {
        "clicks": len(clicks),
        "complete": sum(click.stages_ms is not None for click in clicks),
        "missing": dict(Counter(name for click in clicks for name in click.missing)),
        "median_ms": stage_figures(clicks, via, statistics.median),
        "slowest_mean_ms": stage_figures(tail, via, statistics.fmean),
        "steps_median_ms": call_figures(clicks, statistics.median),
        "steps_slowest_mean_ms": call_figures(tail, statistics.fmean),
        "beside_per_click": per_click(clicks),
        "slowest_beside_per_click": per_click(tail),
        "gc_ms_per_click": gc_per_click(clicks),
        "slowest_gc_ms_per_click": gc_per_click(tail),
        "slowest": [
            {
                "key": click.span.key,
                "total_ms": round(click.total_ms, 3),
                "stages_ms": {k: round(v, 3) for k, v in (click.stages_ms or {}).items()},
                "gc_ms": {k: round(v, 3) for k, v in click.gc_ms.items()},
                "steps_ms": {k: round(v, 3) for k, v in click.calls_ms.items()},
                "beside": [
                    [round(1000 * (mark.t - click.span.clicked), 3), mark.label]
                    for mark in click.beside
                ],
            }
            for click in tail
        ],
    }


@dataclass
class Profiled:
    """What one comparison leaves for the analysis once its processes have written marks."""

    via: Via
    files: dict[str, Path]
    """Each process's marks file: EMULATOR, and each side's name."""
    apps: dict[str, str]
    """Each side's app name in the emulator."""
    spans: dict[str, list[Span]]


def analyse(profiled: Profiled) -> Json:
    marks = [mark for process, path in profiled.files.items() for mark in read(path, process)]
    timeline = Timeline(marks)
    return {
        "stages": stage_names(profiled.via),
        **{
            side: side_figures(
                [timeline.click(span, side, profiled.apps[side], profiled.via) for span in spans],
                profiled.via,
            )
            for side, spans in profiled.spans.items()
        },
    }
