"""What a chat platform brings to the service besides its Surface: connections to open and
close, and perhaps routes on the shared HTTP server."""

from __future__ import annotations

from typing import Protocol

from aiohttp import web

from core.surface import Surface


class StartupError(Exception):
    """The service cannot start as configured; the message names the setting to fix."""


class PlatformRuntime(Protocol):
    @property
    def surface(self) -> Surface: ...

    @property
    def signed_paths(self) -> tuple[str, ...]:
        """Routes this runtime mounts whose requests the platform signs (and it verifies)."""

    def mount(self, app: web.Application) -> None:
        """Add routes (e.g. Slack's HTTP events endpoint) before the server starts."""

    async def start(self) -> str:
        """Connect; return one line for the log saying what is connected and how to reach it.

        Raise StartupError naming the setting to fix when the platform refuses us.
        """

    async def stop(self) -> None: ...
