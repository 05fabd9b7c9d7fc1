"""One discord.py client pointed at other URLs (a proxy, an emulator): `DISCORD_API_URL` and
`DISCORD_GATEWAY_URL`.

discord.py reads its REST base and gateway from class attributes every client in the process
shares; instead of setting them, askbridge's client rewrites its own calls (`PointedHTTP`), and
its interaction calls through `PointedWebhooks`, set in the `context` its work runs in.
"""

from __future__ import annotations

import contextvars
from typing import Any

import aiohttp
import discord.gateway
import discord.http
import discord.webhook.async_
import yarl


def repoint(route: discord.http.Route, api_url: str | None) -> discord.http.Route:
    """The route, at `api_url` instead of discord.py's REST base."""
    if api_url and route.url.startswith(discord.http.Route.BASE):
        route.url = api_url + route.url[len(discord.http.Route.BASE) :]
    return route


class PointedHTTP(discord.http.HTTPClient):
    """discord.py's REST client and gateway connector, at these URLs instead (or at
    discord.py's own, when both are None), keeping the gateway sockets it opens."""

    def __init__(
        self, original: discord.http.HTTPClient, api_url: str | None, gateway_url: str | None
    ) -> None:
        super().__init__(
            original.loop,
            original.connector or None,
            proxy=original.proxy,
            proxy_auth=original.proxy_auth,
            unsync_clock=not original.use_clock,
            http_trace=original.http_trace,
            max_ratelimit_timeout=original.max_ratelimit_timeout,
        )
        self.api_url = api_url
        self.gateway_url = yarl.URL(gateway_url) if gateway_url else None
        self._gateways: set[aiohttp.ClientWebSocketResponse] = set()

    async def request(self, route: discord.http.Route, **kwargs: Any) -> Any:
        return await super().request(repoint(route, self.api_url), **kwargs)

    async def ws_connect(self, url: str, *, compress: int = 0) -> aiohttp.ClientWebSocketResponse:
        wanted = yarl.URL(url)
        default = discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
        if self.gateway_url is not None and wanted.with_query(None) == default:
            # The first connection; a resumed session goes where READY said.
            url = str(self.gateway_url.with_query(wanted.query))
        socket = await super().ws_connect(url, compress=compress)
        self._gateways = {open_ for open_ in self._gateways if not open_.closed} | {socket}
        return socket

    async def close_gateways(self) -> None:
        """Close every gateway socket still open, including one whose handshake was cancelled
        before discord.py kept it (it would stay connected, receiving events)."""
        gateways, self._gateways = self._gateways, set()
        for socket in gateways:
            if not socket.closed:
                await socket.close(code=1000)


class PointedWebhooks(discord.webhook.async_.AsyncWebhookAdapter):
    """discord.py's adapter for interaction callbacks and webhooks, at `api_url` instead."""

    def __init__(self, api_url: str | None) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # discord.py leaves it untyped
        self.api_url = api_url

    async def request(
        self, route: discord.http.Route, session: aiohttp.ClientSession, **kwargs: Any
    ) -> Any:
        return await super().request(repoint(route, self.api_url), session, **kwargs)


def context(api_url: str | None) -> contextvars.Context:
    """A context in which discord.py's interaction calls go to `api_url`: the client's task
    runs in it, and so does every task discord.py starts from there."""
    found = contextvars.copy_context()
    if api_url:
        found.run(discord.webhook.async_.async_context.set, PointedWebhooks(api_url))
    return found
