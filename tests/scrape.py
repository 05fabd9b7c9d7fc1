"""Reading `/metrics` the way Prometheus does."""

from __future__ import annotations

import asyncio

import aiohttp
from prometheus_client.parser import text_string_to_metric_families


def value(exposition: str, name: str, **labels: str) -> float:
    """The sum of the samples called `name` whose labels include `labels` (0 when none)."""
    return sum(
        sample.value
        for family in text_string_to_metric_families(exposition)
        for sample in family.samples
        if sample.name == name and labels.items() <= sample.labels.items()
    )


async def scrape(
    http: aiohttp.ClientSession, url: str, headers: dict[str, str] | None = None
) -> str:
    async with http.get(f"{url}/metrics", headers=headers) as response:
        assert response.status == 200, await response.text()
        assert response.content_type == "text/plain"
        return await response.text()


async def until(
    http: aiohttp.ClientSession, url: str, name: str, expected: float, **labels: str
) -> str:
    """Scrape until `name` reads `expected`: for a gauge that follows something the server
    does on its own time. Each scrape is a round trip through the server, which is what lets
    that something happen."""
    async with asyncio.timeout(10):
        while value(found := await scrape(http, url), name, **labels) != expected:
            pass
    return found
