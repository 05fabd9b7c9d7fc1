"""Running the Discord client inside askbridge's own event loop, beside the HTTP server."""

from __future__ import annotations

import asyncio
import logging

import aiohttp
import discord
import discord.http
from aiohttp import web

from askbridge.adapters.discord import endpoint, pointing
from askbridge.adapters.discord.api_calls import api_calls
from askbridge.adapters.discord.bot import BridgeBot
from askbridge.adapters.discord.invite import invite_url
from askbridge.adapters.discord.surface import DiscordSurface
from askbridge.core.broker import Broker
from askbridge.core.election import CHECK_S, Election, Seat, SoleSeat
from askbridge.core.errors import StartupError
from askbridge.core.metrics import Metrics
from askbridge.core.surface import Readiness, Surface

log = logging.getLogger("askbridge.discord")

READY_TIMEOUT_S = 30.0
GATEWAY = "the Discord gateway"
CLOSE_TIMEOUT_S = 1.0
"""How long a resigning replica waits for Discord to acknowledge closing the gateway, before
cutting the connection: the election counts on resigning quickly."""


class DiscordRuntime:
    def __init__(
        self,
        broker: Broker,
        *,
        token: str,
        api_url: str | None = None,
        gateway_url: str | None = None,
        public_key: str | None = None,
        ready_timeout_s: float = READY_TIMEOUT_S,
        metrics: Metrics | None = None,
        seat: Seat | None = None,
        election_check_s: float = CHECK_S,
        application_id: int | None = None,
    ) -> None:
        """`application_id` is DISCORD_APPLICATION_ID, which only the invite link reads: it is
        checked against the token's application, so that link adds this bot."""
        self._token = token
        self._application_id = application_id
        self._public_key = public_key
        self._api_url = api_url.rstrip("/") if api_url else None
        self._gateway_url = gateway_url
        self._ready_timeout_s = ready_timeout_s
        self.client = BridgeBot(
            broker,
            api_calls(metrics or Metrics(), self._api_base),
            api_url=self._api_url,
            gateway_url=gateway_url,
        )
        # Where the client's work runs: its interaction calls go to DISCORD_API_URL too.
        self._context = pointing.context(self._api_url)
        self.surface: Surface = DiscordSurface(self.client)
        self._task: asyncio.Task[None] | None = None
        # Over the gateway, one replica at a time holds it; every one posts and edits over REST.
        self._election = Election(
            seat or SoleSeat(),
            GATEWAY,
            lead=self._open_gateway,
            resign=self._close_gateway,
            check_s=election_check_s,
        )
        self._endpoint: endpoint.Endpoint | None = None
        if public_key is not None:
            try:
                key = endpoint.verify_key(public_key)
            except ValueError as error:
                raise StartupError(str(error)) from None
            self._endpoint = endpoint.Endpoint(self.client, endpoint.Signatures(key), self._context)

    @property
    def mode(self) -> str:
        return "gateway" if self._endpoint is None else "http"

    @property
    def signed_paths(self) -> tuple[str, ...]:
        return () if self._endpoint is None else (endpoint.PATH,)

    def mount(self, app: web.Application) -> None:
        """In HTTP interactions mode, Discord's deliveries come to `endpoint.PATH`; over the
        gateway, no route is needed."""
        if self._endpoint is not None:
            app.router.add_post(endpoint.PATH, self._endpoint.handle)

    async def start(self) -> str:
        if self._endpoint is not None:
            return await self._log_in()
        await self._log_in_over_rest()
        user = self.client.user
        assert user is not None
        if not await self._election.start():
            return (
                f"discord: standing by for {GATEWAY} (another replica holds it); posting over "
                f"REST as {user.name} (id {user.id})"
            )
        await self._until_connected()
        application = self.client.application
        assert application is not None
        if application.interactions_endpoint_url:
            log.warning(
                "the application has an Interactions Endpoint URL (%s): Discord sends clicks "
                "there, not over the gateway. Set DISCORD_PUBLIC_KEY to take them there, or "
                "clear the URL in the Developer Portal (General Information)",
                application.interactions_endpoint_url,
            )
        self._check_application_id(application.id)
        holding = f"holding {GATEWAY}, " if self._election.shared else ""
        return (
            f"discord: {holding}connected as {user.name} (id {user.id}); invite the bot to a "
            f"server with {invite_url(application.id)}"
        )

    async def _open_gateway(self) -> None:
        """Elected: open the gateway session (discord.py keeps it up from here on)."""
        self._task = asyncio.create_task(
            self.client.connect(), name="askbridge-discord-gateway", context=self._context
        )

    async def _close_gateway(self) -> None:
        """Resigning, or stopping: close the gateway session, and with code 1000, which ends it
        (Discord keeps no events for it); clicks already received are still answered."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT_S):
                ws = self.client.ws
                if ws is not None and ws.open:
                    await ws.close(code=1000)
                # And any socket a cancelled handshake had opened.
                await self.client.sockets.close_gateways()
        except TimeoutError:
            log.warning("Discord did not acknowledge closing the gateway; the connection was cut")
        self.client.connected.clear()

    async def _until_connected(self) -> None:
        """Wait for the first gateway session, or say why it failed."""
        assert self._task is not None
        connected = asyncio.create_task(
            self.client.connected.wait(), name="askbridge-discord-connected"
        )
        try:
            done, _ = await asyncio.wait(
                {self._task, connected},
                timeout=self._ready_timeout_s,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            connected.cancel()
        if self._task in done:
            raise StartupError(self._why_not(self._task.exception()))
        if connected not in done:
            raise StartupError(
                self._gateway_trouble(f"did not answer within {self._ready_timeout_s:g} s")
            )

    async def _log_in_over_rest(self) -> None:
        """Check the token over REST; from here on messages can be posted and edited."""
        login = asyncio.create_task(
            self.client.login(self._token), name="askbridge-discord-login", context=self._context
        )
        try:
            await login
        except Exception as error:
            raise StartupError(self._why_not(error)) from error

    async def _log_in(self) -> str:
        """HTTP interactions mode: check the token over REST (and the public key against the
        application's), and open no gateway connection."""
        await self._log_in_over_rest()
        user, application = self.client.user, self.client.application
        assert user is not None
        assert application is not None
        if application.verify_key.lower() != (self._public_key or "").strip().lower():
            raise StartupError(
                f"DISCORD_PUBLIC_KEY is not the public key of the application that "
                f"DISCORD_BOT_TOKEN belongs to (id {application.id}); {endpoint.KEY_HELP}"
            )
        self._check_application_id(application.id)
        return (
            f"discord: HTTP interactions mode (no gateway connection), logged in as {user.name} "
            f"(id {user.id}); set the application's Interactions Endpoint URL to "
            f"https://<this server's public address>{endpoint.PATH}; invite the bot to a server "
            f"with {invite_url(application.id)}"
        )

    def _check_application_id(self, actual: int) -> None:
        if self._application_id is not None and self._application_id != actual:
            log.warning(
                "DISCORD_APPLICATION_ID is %s, but DISCORD_BOT_TOKEN belongs to application %s: "
                "askbridge discord invite-url prints a link that adds another application's bot. "
                "Set DISCORD_APPLICATION_ID=%s",
                self._application_id,
                actual,
                actual,
            )

    async def ready(self) -> Readiness:
        user = self.client.user
        if self._endpoint is not None:
            if user is not None and not self.client.is_closed():
                return Readiness(True, f"HTTP interactions as {user.name} (id {user.id})")
            return Readiness(False, "not logged in to Discord's REST API")
        if not self._election.holding:
            if user is not None and not self.client.is_closed():
                return Readiness(True, f"standing by for {GATEWAY}; REST as {user.name}")
            return Readiness(False, "not logged in to Discord's REST API")
        if self.client.connected.is_set() and not self.client.is_closed() and user is not None:
            return Readiness(True, f"gateway connected as {user.name} (id {user.id})")
        return Readiness(False, "the gateway connection is down; reconnecting")

    async def stop_listening(self) -> None:
        if self._endpoint is not None:
            # Clicks already answered still reach the broker and get their notes.
            await self._endpoint.drain()
        # Resigns (closing the gateway) and lets another replica take over; REST stays.
        await self._election.stop()

    async def stop(self) -> None:
        await self.stop_listening()
        await self.client.close()

    def _api_base(self) -> str:
        return self._api_url or discord.http.Route.BASE

    def _gateway_trouble(self, what: str) -> str:
        check = "check the network" + (", and DISCORD_GATEWAY_URL" if self._gateway_url else "")
        return f"Discord accepted DISCORD_BOT_TOKEN but its gateway {what}; {check}"

    def _why_not(self, error: BaseException | None) -> str:
        """Why the client stopped before it connected, naming the setting to fix."""
        api = self._api_url or discord.http.Route.BASE
        if self.client.user is not None and not isinstance(error, discord.ConnectionClosed):
            # Logged in over REST, then failed on the gateway (discord.py gives up on a
            # gateway it never reached with an AttributeError of its own).
            return self._gateway_trouble(f"could not be reached ({error!r})")
        if isinstance(error, discord.LoginFailure) or (
            isinstance(error, discord.ConnectionClosed) and error.code == 4004
        ):
            return (
                "Discord refused DISCORD_BOT_TOKEN (401 Unauthorized). Copy the token from the "
                "Developer Portal (your application → Bot → Reset Token) into DISCORD_BOT_TOKEN."
            )
        if isinstance(error, discord.HTTPException):
            return (
                f"Discord answered {error.status} {error.text!r} while logging in with "
                "DISCORD_BOT_TOKEN; check the token, or try again later"
            )
        if isinstance(error, aiohttp.ClientError | OSError):
            where = "DISCORD_API_URL" if self._api_url else "the network"
            return f"could not reach Discord at {api} ({error}); check {where}"
        return f"the Discord client stopped while connecting: {error!r}"
