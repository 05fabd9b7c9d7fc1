"""Reading a request's body within a deadline: a client that trickles its body, or stops
sending it, is answered 408 and its connection closed, on every route that reads one."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

BODY_READ_S = 10.0
"""The most a body may take to arrive, whatever ASKBRIDGE_IDLE_TIMEOUT_S says."""
BODY_DEADLINE: web.AppKey[float] = web.AppKey("body_deadline_s", float)
"""Seconds a body may take to arrive on this server (BODY_READ_S unless set)."""


@asynccontextmanager
async def body_deadline(request: web.Request) -> AsyncIterator[None]:
    """Around a read of the body (`read`, `text`, `post`): 408 when it is not whole in time."""
    seconds = request.app.get(BODY_DEADLINE, BODY_READ_S)
    try:
        async with asyncio.timeout(seconds):
            yield
    except TimeoutError:
        message = (
            f"the request body did not arrive within {seconds:g} s "
            "(ASKBRIDGE_IDLE_TIMEOUT_S); send it whole"
        )
        raise BodyTimeout(
            text=json.dumps({"error": message}), content_type="application/json"
        ) from None


class BodyTimeout(web.HTTPRequestTimeout):
    """The 408, and then the connection closed at once: aiohttp would otherwise keep reading
    the rest of the body for up to its lingering time (10 s), which helps an honest client
    whose body is left unread, not one trickling it."""

    _connection: RequestHandler | None = None

    async def prepare(self, request: BaseRequest) -> AbstractStreamWriter | None:
        self.force_close()  # "Connection: close" tells the client why it ends
        self._connection = request.protocol
        return await super().prepare(request)

    async def write_eof(self, data: bytes = b"") -> None:
        await super().write_eof(data)
        if self._connection is not None:
            # The response is written; the transport sends it before it closes.
            self._connection.force_close()


async def read_body(request: web.Request) -> bytes:
    async with body_deadline(request):
        return await request.read()
