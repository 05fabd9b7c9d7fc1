"""A client that never finishes its request cannot hold a connection open for long."""

from __future__ import annotations

import asyncio

from yarl import URL

from tests.conftest import StartService


async def test_trickled_headers_and_silent_connections_are_closed(
    start_service: StartService,
) -> None:
    service = await start_service(idle_timeout_s=0.5)
    url = URL(service.url)
    assert url.host is not None
    assert url.port is not None
    silent = await asyncio.open_connection(url.host, url.port)
    trickling = await asyncio.open_connection(url.host, url.port)
    trickling[1].write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    await trickling[1].drain()
    for reader, writer in (silent, trickling):
        # The server hangs up: the read ends with EOF well before the test's own timeout.
        assert await asyncio.wait_for(reader.read(), timeout=10) == b""
        writer.close()
