"""Counting the Discord API calls discord.py makes, by route, for the metrics."""

from __future__ import annotations

import re
from collections.abc import Callable

import aiohttp
import yarl

from askbridge.core.metrics import Metrics

WORD = re.compile(r"@?[a-z][a-z0-9_-]{0,31}")
"""A path segment kept in a route's name; ids and tokens become `{id}` and `{token}`."""


def api_calls(metrics: Metrics, api_base: Callable[[], str]) -> aiohttp.TraceConfig:
    """Counts every HTTP call discord.py makes (each retry after a 429 too), by route; the
    gateway's connection counts as `gateway`."""
    trace = aiohttp.TraceConfig()

    async def answered(
        _session: aiohttp.ClientSession, _context: object, params: aiohttp.TraceRequestEndParams
    ) -> None:
        name = route(params.method, params.url, api_base())
        metrics.record_api_call("discord", name, status=params.response.status)

    async def failed(
        _session: aiohttp.ClientSession,
        _context: object,
        params: aiohttp.TraceRequestExceptionParams,
    ) -> None:
        metrics.record_api_call(
            "discord", route(params.method, params.url, api_base()), status=None
        )

    trace.on_request_end.append(answered)
    trace.on_request_exception.append(failed)
    return trace


def route(method: str, url: yarl.URL, api_base: str) -> str:
    """`POST /channels/{id}/messages`: a call's route, without its ids and tokens."""
    base = yarl.URL(api_base).path.rstrip("/")
    if not url.path.startswith(base + "/"):
        return "gateway"
    parts: list[str] = []
    for part in (p for p in url.path[len(base) :].split("/") if p):
        if part.isdecimal():
            parts.append("{id}")
        elif parts[-2:] in (["interactions", "{id}"], ["webhooks", "{id}"]):
            parts.append("{token}")  # whatever it looks like
        else:
            parts.append(part if WORD.fullmatch(part) else "{token}")
    return f"{method} /{'/'.join(parts)}"
