"""What askbridge counts, for `/metrics` in the Prometheus text format.

One `Metrics` per service, each with its own registry (never prometheus_client's global one),
so several services in one process keep their numbers apart. Counters are recorded where the
thing happens; gauges of a state are read at each scrape. What each metric means:
docs/how-to/operating.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)

from askbridge.core.models import Request, Status

ENDINGS = (Status.ANSWERED, Status.CANCELLED, Status.DECLINED, Status.EXPIRED, Status.WITHDRAWN)
CONTENT_TYPE = CONTENT_TYPE_LATEST
TIME_TO_ANSWER_BUCKETS = (
    *(5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0),
    *(3600.0, 4 * 3600.0, 12 * 3600.0, 86400.0, 3 * 86400.0, 7 * 86400.0),
)
"""People answer in seconds to days."""
CLICK_TO_AGENT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""A store write and a wake-up: milliseconds, unless the database is struggling."""
BACKLOG_STATES = ("in_flight", "queued", "paced")


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        registry = self.registry
        ProcessCollector(registry=registry)
        self._http = Counter(
            "askbridge_http_requests",
            "HTTP requests answered, by method, route and status code.",
            ["method", "route", "status"],
            registry=registry,
        )
        self._created = Counter(
            "askbridge_requests_created",
            "Requests posted, by surface (each platform a request was posted to).",
            ["surface"],
            registry=registry,
        )
        self._ended = {
            status: Counter(
                f"askbridge_requests_{status.value}",
                f"Requests that ended {status.value}, by surface.",
                ["surface"],
                registry=registry,
            )
            for status in ENDINGS
        }
        self._time_to_answer = Histogram(
            "askbridge_time_to_answer_seconds",
            "From a request's creation to the answer that decided it, by the surface the "
            "deciding answer came from (answers decided by a deadline are not counted).",
            ["surface"],
            buckets=TIME_TO_ANSWER_BUCKETS,
            registry=registry,
        )
        self._click_to_agent = Histogram(
            "askbridge_click_to_agent_seconds",
            "From a click that ends a request reaching askbridge to the waiting agents being "
            "woken, by surface.",
            ["surface"],
            buckets=CLICK_TO_AGENT_BUCKETS,
            registry=registry,
        )
        self._api_calls = Counter(
            "askbridge_platform_api_calls",
            "HTTP calls to a platform's API (each retry counts), by platform and method.",
            ["platform", "method"],
            registry=registry,
        )
        self._api_errors = Counter(
            "askbridge_platform_api_errors",
            "Platform API calls that failed (no answer, an error status or an error body; "
            "429s are counted apart), by platform and method.",
            ["platform", "method"],
            registry=registry,
        )
        self._api_limited = Counter(
            "askbridge_platform_api_rate_limited",
            "Platform API calls answered 429 Too Many Requests, by platform and method.",
            ["platform", "method"],
            registry=registry,
        )
        self._backlog = Gauge(
            "askbridge_message_updates_backlog",
            "Posted messages not yet showing their request's newest state: in_flight (being "
            "updated or retried), queued (a newer state waits behind that update) and paced "
            "(waiting for a turn under the platform's rate limit).",
            ["state"],
            registry=registry,
        )
        self._waiting = Gauge(
            "askbridge_requests_waiting",
            "Requests waiting for an answer right now, by surface, counted in the database at "
            "each scrape (every replica's; absent when the database did not answer).",
            ["surface"],
            registry=registry,
        )
        self._surfaces: set[str] = set()
        self._long_polls = Gauge(
            "askbridge_long_polls_open",
            "Agents long-polling a request (GET /v1/questions/{id}?wait=…) right now.",
            registry=registry,
        )
        self._sockets = Gauge(
            "askbridge_agent_sockets_open",
            "Agent WebSocket connections (/v1/agent) open right now.",
            registry=registry,
        )

    # --- requests -----------------------------------------------------------------------

    def add_surface(self, platform: str) -> None:
        """Start the request counters of `platform` at zero, so they exist before they move."""
        self._surfaces.add(platform)
        self._created.labels(platform)
        for counter in self._ended.values():
            counter.labels(platform)

    def set_waiting(self, counts: Mapping[str, int] | None) -> None:
        """The waiting requests of each surface as the store counted them just now (None: it
        could not), each running surface shown even with none."""
        self._waiting.clear()
        if counts is None:
            return
        for surface in sorted(self._surfaces | set(counts)):
            self._waiting.labels(surface).set(counts.get(surface, 0))

    def record_created(self, request: Request) -> None:
        for surface in _surfaces(request):
            self._created.labels(surface).inc()

    def record_ended(self, request: Request) -> None:
        """Count an ending (once, by the replica that made it) and, for an answer someone
        gave, the time it took."""
        counter = self._ended.get(request.status)
        if counter is None:
            return
        for surface in _surfaces(request):
            counter.labels(surface).inc()
        by = request.answered_by
        if request.status is Status.ANSWERED and by is not None and request.ended_at is not None:
            waited = (request.ended_at - request.created_at).total_seconds()
            self._time_to_answer.labels(by.platform).observe(max(waited, 0.0))

    def observe_click_to_agent(self, surface: str, seconds: float) -> None:
        self._click_to_agent.labels(surface).observe(seconds)

    # --- the HTTP API -------------------------------------------------------------------

    def record_http(self, method: str, route: str, status: int) -> None:
        self._http.labels(method, route, str(status)).inc()

    def long_poll(self) -> AbstractContextManager[object]:
        """Count an agent's long-poll while it waits (the gauge's own tracker: no generator
        frame held by each of many waiting agents)."""
        return self._long_polls.track_inprogress()

    def watch_agent_sockets(self, count: Callable[[], int]) -> None:
        """Read the number of open agent WebSockets from `count` on every scrape."""
        self._sockets.set_function(count)

    # --- platforms ----------------------------------------------------------------------

    def record_api_call(
        self, platform: str, method: str, *, status: int | None, failed: bool = False
    ) -> None:
        """One HTTP call to a platform's API: `status` is the HTTP status (None when no answer
        came), `failed` whether the answer said it failed though its status did not."""
        self._api_calls.labels(platform, method).inc()
        if status == 429:
            self._api_limited.labels(platform, method).inc()
        elif failed or status is None or status >= 400:
            self._api_errors.labels(platform, method).inc()

    def watch_backlog(self, backlog: Callable[[], Mapping[str, int]]) -> None:
        """Read the message-update backlog (`BACKLOG_STATES` → count) on every scrape."""
        for state in BACKLOG_STATES:
            self._backlog.labels(state).set_function(_reading(backlog, state))

    # --- exposition ---------------------------------------------------------------------

    def exposition(self) -> bytes:
        """Everything, in the Prometheus text format (`CONTENT_TYPE`)."""
        return generate_latest(self.registry)


def _reading(backlog: Callable[[], Mapping[str, int]], state: str) -> Callable[[], float]:
    return lambda: backlog().get(state, 0)


def _surfaces(request: Request) -> list[str]:
    return sorted({target.platform for target in request.targets})
