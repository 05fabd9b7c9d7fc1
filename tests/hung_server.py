"""A server that takes connections and reads each request, but never answers: askbridge as it
is when stopped (`kill -STOP`), stuck or overloaded, where the kernel still accepts for it."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Held:
    """A request the hung server read and holds: its method, path and JSON body."""

    method: str
    path: str
    body: Any


class HungServer:
    def __init__(self) -> None:
        self.requests: asyncio.Queue[Held] = asyncio.Queue()
        self.url = ""
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []
        self._holding: list[asyncio.Task[Any]] = []

    async def __aenter__(self) -> HungServer:
        self._server = await asyncio.start_server(self._hold, "127.0.0.1", 0)
        host, port = self._server.sockets[0].getsockname()[:2]
        self.url = f"http://{host}:{port}"
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:
            writer.close()
        # Each held connection ends as its reader hears the close.
        await asyncio.gather(*self._holding)
        await self._server.wait_closed()

    async def next_request(self, within_s: float = 30) -> Held:
        return await asyncio.wait_for(self.requests.get(), within_s)

    async def _hold(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        task = asyncio.current_task()
        assert task is not None
        self._holding.append(task)
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        method, path, _ = head[0].split(" ", 2)
        fields = dict(line.split(": ", 1) for line in head[1:] if line)
        length = int({k.lower(): v for k, v in fields.items()}.get("content-length", "0"))
        raw = await reader.readexactly(length)
        await self.requests.put(Held(method, path, json.loads(raw) if raw else None))
        # Held: nothing is ever written back; the client closing ends the connection.
        await reader.read()
