"""`/healthz`, `/readyz` and `/metrics`: is askbridge alive, can it do its work right now, and
what has it done.

`/healthz` is 503 only when a background loop has died (a restart cures it); `/readyz` while the
store or a configured platform cannot be reached, or during shutdown. Neither needs the API
token, so probes need no secret; `/metrics` does when one is set. See docs/how-to/operating.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from askbridge.core.api.bodies import json_body
from askbridge.core.api.keys import SOCKETS
from askbridge.core.api.status import Health, HealthPart
from askbridge.core.broker import Broker
from askbridge.core.errors import NewerSchema
from askbridge.core.metrics import CONTENT_TYPE, Metrics
from askbridge.core.surface import PlatformRuntime, Readiness
from askbridge.core.version import VERSION

log = logging.getLogger("askbridge.health")

READY_TIMEOUT_S = 5.0
"""How long each part of `/readyz` may take to answer before it counts as not ready."""
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


@dataclass(frozen=True)
class Parts:
    broker: Broker
    runtimes: Sequence[PlatformRuntime]
    """The platforms' runtimes, read on every check (they may be added after the routes)."""


PARTS: web.AppKey[Parts] = web.AppKey("health_parts", Parts)


def add_health_routes(
    app: web.Application, broker: Broker, runtimes: Sequence[PlatformRuntime]
) -> None:
    """Serve the three routes; after `add_api_routes`, whose agent sockets `/metrics` counts."""
    app[PARTS] = Parts(broker, runtimes)
    sockets = app[SOCKETS]
    broker.metrics.watch_agent_sockets(lambda: len(sockets))
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)


async def healthz(request: web.Request) -> web.Response:
    broker = request.app[PARTS].broker
    loops = broker.alive()
    parts = {
        name: HealthPart(ok=running, detail="running" if running else "stopped; restart askbridge")
        for name, running in loops.items()
    }
    ok = all(loops.values())
    body = Health(ok=ok, version=VERSION, surfaces=broker.platforms, parts=parts)
    return json_body(body, status=200 if ok else 503)


async def readyz(request: web.Request) -> web.Response:
    found = request.app[PARTS]
    checks: dict[str, Awaitable[Readiness]] = {"store": _store_ready(found.broker)}
    for runtime in found.runtimes:
        checks[runtime.surface.platform] = runtime.ready()
    answers = await asyncio.gather(*(_within(name, check) for name, check in checks.items()))
    parts: dict[str, Readiness] = dict(zip(checks, answers, strict=True))
    if found.broker.closed:
        parts["server"] = Readiness(False, "shutting down")
    ready = all(part.ready for part in parts.values())
    body: dict[str, Any] = {
        "ready": ready,
        "version": VERSION,
        "parts": {name: {"ready": p.ready, "detail": p.detail} for name, p in parts.items()},
    }
    return web.json_response(body, status=200 if ready else 503)


async def metrics(request: web.Request) -> web.Response:
    broker = request.app[PARTS].broker
    counts: dict[str, int] | None = None
    try:
        async with asyncio.timeout(READY_TIMEOUT_S):
            counts = await broker.waiting_by_surface()
    except Exception:
        # The scrape still shows the rest; /readyz says what is wrong with the database.
        log.debug("counting the waiting requests for /metrics failed", exc_info=True)
    broker.metrics.set_waiting(counts)
    exposition = broker.metrics.exposition()
    return web.Response(body=exposition, headers={"Content-Type": CONTENT_TYPE})


def count_request(metrics: Metrics, request: web.Request, status: int) -> None:
    """Count an HTTP request by method, route (its pattern, not its path) and status."""
    method = request.method if request.method in METHODS else "other"
    resource = request.match_info.route.resource
    route = resource.canonical if resource is not None else "unmatched"
    metrics.record_http(method, route, status)


async def _store_ready(broker: Broker) -> Readiness:
    try:
        await broker.ping()
    except NewerSchema as error:
        return Readiness(False, str(error))
    except Exception as error:
        return Readiness(False, f"the database does not answer: {type(error).__name__}: {error}")
    return Readiness(True, "the database answers")


async def _within(name: str, check: Awaitable[Readiness]) -> Readiness:
    try:
        async with asyncio.timeout(READY_TIMEOUT_S):
            return await check
    except TimeoutError:
        return Readiness(False, f"no answer within {READY_TIMEOUT_S:g} s")
    except Exception as error:
        log.warning("checking whether %s is ready failed", name, exc_info=True)
        return Readiness(False, f"the check failed: {type(error).__name__}: {error}")
