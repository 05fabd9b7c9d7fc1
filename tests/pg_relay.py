"""A TCP relay in front of PostgreSQL, for tests that watch or break the wire between a store
and the server: drop what some connections send while keeping them open (a network failure),
or count a store's round trips."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit, urlunsplit


class Relay:
    """Passes everything on until told otherwise; `passes` says what gets through."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.upstream = upstream
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 5432
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        """Listen; the upstream URL with this relay in the server's place."""
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        port: int = self._server.sockets[0].getsockname()[1]
        parts = urlsplit(self.upstream)
        user = parts.netloc.rpartition("@")[0]
        address = f"127.0.0.1:{port}"
        # No TLS to look through.
        query = f"{parts.query}&sslmode=disable" if parts.query else "sslmode=disable"
        netloc = f"{user}@{address}" if user else address
        return urlunsplit(parts._replace(netloc=netloc, query=query))

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def passes(self, data: bytes, client: asyncio.StreamWriter, upward: bool) -> bool:
        """Whether `data`, sent by the client (`upward`) or to it, goes on."""
        return True

    async def _relay(self, client_in: asyncio.StreamReader, client: asyncio.StreamWriter) -> None:
        server_in, server = await asyncio.open_connection(self.host, self.port)
        pipes = [
            asyncio.create_task(self._pipe(client_in, server, client, True), name="relay-up"),
            asyncio.create_task(self._pipe(server_in, client, client, False), name="relay-down"),
        ]
        self._tasks.update(pipes)
        try:
            # Either side closing closes both: the server then lets go of the session's locks.
            await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pipe in pipes:
                pipe.cancel()
            client.close()
            server.close()

    async def _pipe(
        self,
        source: asyncio.StreamReader,
        sink: asyncio.StreamWriter,
        client: asyncio.StreamWriter,
        upward: bool,
    ) -> None:
        try:
            while data := await source.read(65536):
                if self.passes(data, client, upward):
                    sink.write(data)
                    await sink.drain()
        except ConnectionError:
            pass
