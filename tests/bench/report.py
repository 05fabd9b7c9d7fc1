"""Figures from measurements, the JSON document, and the table a person reads."""

from __future__ import annotations

import math
import os
import platform
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Json = dict[str, Any]
PERCENTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99))
STORES = (("sqlite", "SQLite"), ("postgresql", "PostgreSQL"))
MODES = (("http", "HTTP mode"), ("socket", "Socket Mode"))
SIDES = ("askbridge", "floor")
TAIL_MARGIN_MS = 0.05
TAIL_MARGIN_RATE = 0.5
"""What the slowest 1% must have more of than all clicks to be named beside them."""
TARGETS = (("sqlite", "p99", 1.5), ("sqlite", "burst", 0.8), ("postgresql", "p99", 2.0))
"""(store, figure, bound) in both Slack modes: askbridge's p99 at most `bound` times the
floor's, its bursts' answers a second at least `bound` times the floor's."""
METHODS = (("interleaved", "interleaved"), ("by_round", "by round"))


def percentile(ordered: Sequence[float], fraction: float) -> float:
    """Nearest rank: the smallest value at or above `fraction` of the values."""
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def latency_summary(seconds: Sequence[float]) -> Json:
    ordered = sorted(1000 * s for s in seconds)
    found: Json = {"clicks": len(ordered)}
    for name, fraction in PERCENTILES:
        found[f"{name}_ms"] = round(percentile(ordered, fraction), 3)
    found["max_ms"] = round(ordered[-1], 3)
    found["mean_ms"] = round(statistics.fmean(ordered), 3)
    return found


def ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 3) if denominator > 0 else None


def latency_ratios(ours: Json, floor: Json) -> Json:
    return {
        name: ratio(ours[f"{name}_ms"], floor[f"{name}_ms"])
        for name in ("p50", "p90", "p99", "max")
    }


def against_targets(clicks: Json) -> list[Json]:
    """Each target's ratio measured interleaved (whether it is met) and by round."""
    rows: list[Json] = []
    for store, figure, bound in TARGETS:
        for mode, _ in MODES:
            compared = clicks.get(store, {}).get(mode)
            if compared is None:
                continue
            found = {
                method: compared[method]["latency"]["ratio"]["p99"]
                if figure == "p99"
                else compared[method]["burst"]["ratio"]
                for method, _ in METHODS
            }
            value = found["interleaved"]
            met = value is not None and (value <= bound if figure == "p99" else value >= bound)
            rows.append(
                {
                    "store": store,
                    "mode": mode,
                    "figure": figure,
                    "target": bound,
                    **found,
                    "met": met,
                }
            )
    return rows


def machine() -> Json:
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    memory_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "memory_gib": round(memory_gib, 1),
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
    }


# ---- the table ------------------------------------------------------------------------------


def _ms(value: Any) -> str:
    return f"{value:8.2f}" if isinstance(value, int | float) else f"{'-':>8}"


def _times(value: Any) -> str:
    return f"{value:7.2f}×" if isinstance(value, int | float) else f"{'-':>8}"


def _busy(cores: Any) -> str:
    """The server's CPU during bursts, as a share of one core (a run from before it: `-`)."""
    return f"{100 * cores:5.0f} %" if isinstance(cores, int | float) else f"{'-':>7}"


def _rows(compared: Json, labels: list[str]) -> list[str]:
    """A side's line each and the ratio's, for one way of measuring; `labels` down the left."""
    lines: list[str] = []
    column = iter([*labels, *[""] * 3])
    for side in SIDES:
        latency = compared["latency"][side]
        burst = compared["burst"][side]["answers_per_s"]
        cells = " ".join(_ms(latency[f"{p}_ms"]) for p in ("p50", "p90", "p99", "max"))
        spent = compared["burst"][side].get("cpu_ms_per_click", 0.0)
        busy = _busy(compared["burst"][side].get("server_busy"))
        lines.append(f"{next(column):30}{side:>10}{cells} | {burst:9.0f} | {spent:12.2f} | {busy}")
    ratios = compared["latency"]["ratio"]
    cells = " ".join(_times(ratios[p]) for p in ("p50", "p90", "p99", "max"))
    burst_ratio = compared["burst"]["ratio"]
    spent = [compared["burst"][side].get("cpu_ms_per_click") for side in SIDES]
    cpu_ratio = _times(ratio(*spent)) if all(spent) else ""
    lines.append(
        f"{next(column):30}{'ratio':>10}{cells} | {_times(burst_ratio):>9} | {cpu_ratio:>12}"
    )
    return lines


def _beside(side: Json) -> list[str]:
    """What happened beside the way of the slowest 1% more than beside the way of all."""
    lines = []
    everywhere, slowest = side["gc_ms_per_click"], side["slowest_gc_ms_per_click"]
    for process, ms in slowest.items():
        if ms > everywhere.get(process, 0.0) + TAIL_MARGIN_MS:
            lines.append(f"gc in {process}: {everywhere.get(process, 0.0):.2f} → {ms:.2f} ms")
    everywhere, slowest = side["beside_per_click"], side["slowest_beside_per_click"]
    for label, rate in slowest.items():
        if rate >= everywhere.get(label, 0.0) + TAIL_MARGIN_RATE:
            lines.append(f"{label}: {everywhere.get(label, 0.0):.2f} → {rate:.2f} a click")
    return lines


def target_lines(rows: list[Json]) -> list[str]:
    if not rows:
        return []
    lines = ["", "against the targets (interleaved; by round in brackets):"]
    names = dict(STORES) | dict(MODES)
    for row in rows:
        sign = "≤" if row["figure"] == "p99" else "≥"
        lines.append(
            f"  {names[row['store']]}, Slack {names[row['mode']]}, {row['figure']}: "
            f"{_times(row['interleaved']).strip()} ({_times(row['by_round']).strip()}), target "
            f"{sign} {row['target']}×: {'met' if row['met'] else 'not met'}"
        )
    return lines


def stage_lines(document: Json) -> list[str]:
    """`--stages`: each stage's median over all interleaved clicks and its mean over the
    slowest 1%, a side each; then what the slowest 1% had beside them that the rest had less."""
    lines: list[str] = []
    for store, store_name in STORES:
        for mode, mode_name in MODES:
            found = document["clicks"].get(store, {}).get(mode, {}).get("stages")
            if found is None:
                continue
            if not lines:
                lines += [
                    "",
                    "where an interleaved click's time goes (--stages), ms: the median of all "
                    "clicks, the mean of the slowest 1%",
                ]
            title = f"{store_name}, Slack {mode_name}"
            heads = "".join(f"{side + ' all':>16}{'slowest 1%':>12}" for side in SIDES)
            lines.append(f"{title:34}{heads}")
            for stage in found["stages"]:
                cells = "".join(
                    f"{_ms(found[side]['median_ms'].get(stage)):>16}"
                    f"{_ms(found[side]['slowest_mean_ms'].get(stage)):>12}"
                    for side in SIDES
                )
                lines.append(f"  {stage:32}{cells}")
            steps = sorted({step for side in SIDES for step in found[side]["steps_median_ms"]})
            for step in steps:
                cells = "".join(
                    f"{_ms(found[side]['steps_median_ms'].get(step)):>16}"
                    f"{_ms(found[side]['steps_slowest_mean_ms'].get(step)):>12}"
                    for side in SIDES
                )
                lines.append(f"  step {step:27}{cells}")
            counts = ", ".join(
                f"{side} {found[side]['complete']}/{found[side]['clicks']}" for side in SIDES
            )
            lines.append(f"  clicks with every stage found: {counts}")
            for side in SIDES:
                beside = _beside(found[side])
                if beside:
                    lines.append(f"  beside {side}'s slowest 1%, more than beside all its clicks:")
                    lines += [f"    {line}" for line in beside]
    return lines


def table(document: Json) -> str:
    lines: list[str] = []
    found = document["machine"]
    options = document["options"]
    lines.append(
        f"askbridge benchmark: {found['cpus']} CPUs ({found['cpu_model'] or 'unknown CPU'}), "
        f"{found['memory_gib']} GiB, Python {found['python']}, {found['system']}"
    )
    lines.append(
        f"click→agent: {options['rounds']} rounds × {options['clicks']} clicks a side; "
        f"bursts: {options['burst_rounds']} × {options['burst']} clicks from "
        f"{options['senders']} senders; the floor is a bare slack-bolt app"
    )
    lines.append(
        "interleaved: both sides set up, then taking turns click by click (A F F A …) and "
        "burst by burst; by round: whole rounds of one side in turn (A F F A …)"
    )
    lines.append("")
    header = (
        f"{'':40}{'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8} | {'burst/s':>9}"
        f" | {'CPU ms/click':>12} | {'busy':>7}"
    )
    lines.append(header)
    lines.append("-" * len(header))
    for store, store_name in STORES:
        by_mode = document["clicks"].get(store, {})
        if "skipped" in by_mode:
            lines.append(f"{store_name}: skipped ({by_mode['skipped']})")
            continue
        for mode, mode_name in MODES:
            compared = by_mode.get(mode)
            if compared is None:
                continue
            labels = [f"{store_name}, Slack {mode_name}"]
            for method, method_name in METHODS:
                labels.append(f"  {method_name}")
                lines += _rows(compared[method], labels)
                labels = []
    lines += target_lines(document.get("targets", []))
    lines += stage_lines(document)
    lines.append("")
    creates = document["creates"]
    lines.append(
        f"creates/s (posted to Slack): {creates['one_agent_per_s']:.0f} from one agent, "
        f"{creates['concurrent_per_s']:.0f} from {creates['concurrent_agents']} agents"
    )
    for size, memory in document["memory_per_waiting"].items():
        if "skipped" in memory:
            lines.append(f"memory per waiting request at {size}: skipped ({memory['skipped']})")
        else:
            lines.append(
                f"memory per waiting request at {size} waiting: "
                f"{memory['bytes_per_request'] / 1024:.2f} KiB (RSS {memory['rss_mib']:.0f} MiB)"
            )
    startup = document["startup"]
    empty = startup["empty"]
    lines.append(
        f"start-up with {startup['waiting']} waiting: {startup['to_first_answer_s']:.2f} s to the "
        f"first click answered ({startup['to_listening_s']:.2f} s to listening); with none "
        f"waiting: {empty['to_first_answer_s']:.2f} s ({empty['to_listening_s']:.2f} s)"
    )
    polls = document["long_polls"]
    lines.append(
        f"{polls['count']} concurrent long-polls: server RSS {polls['rss_mib']:.0f} MiB "
        f"({polls['bytes_per_poll'] / 1024:.1f} KiB per long-poll over "
        f"{polls['rss_before_mib']:.0f} MiB)"
    )
    return "\n".join(lines)


def progress(started: float, now: float, message: str) -> None:
    sys.stderr.write(f"[bench {now - started:6.1f} s] {message}\n")
    sys.stderr.flush()
