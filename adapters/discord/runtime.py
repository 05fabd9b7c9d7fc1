"""Running the Discord client inside askbridge's own event loop, beside the HTTP server."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

import aiohttp
import discord
import discord.http
import yarl
from aiohttp import web

from askbridge.adapters.discord import clicks, endpoint, forms, pointing
from askbridge.adapters.discord.ids import DYNAMIC_ITEMS, Action, BadCustomId, CustomId, unpack
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
PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    send_messages_in_threads=True,
    read_message_history=True,
)
"""Exactly what the bot needs: see channels, post in them and in their threads, and find its
own messages again (editing its own messages needs nothing more)."""
WORD = re.compile(r"@?[a-z][a-z0-9_-]{0,31}")
"""A path segment kept in a route's name; ids and tokens become `{id}` and `{token}`."""


def invite_url(application_id: int) -> str:
    return discord.utils.oauth_url(application_id, permissions=PERMISSIONS, scopes=("bot",))


class BridgeBot(discord.Client):
    """A plain `discord.Client` with minimal intents; it hands every click and every submitted
    form to the broker."""

    def __init__(
        self,
        broker: Broker,
        http_trace: aiohttp.TraceConfig,
        *,
        api_url: str | None = None,
        gateway_url: str | None = None,
    ) -> None:
        # Read by _get_state(), which discord.py calls from its __init__.
        self._api_url, self._gateway_url = api_url, gateway_url
        intents = discord.Intents.none()
        # Clicks (INTERACTION_CREATE) need no intent at all; `guilds` keeps the guild and role
        # caches filled, for checking roles (a click's member carries its role ids in any case).
        intents.guilds = True
        # Nothing askbridge sends pings anyone unless it says so (only reminders do).
        super().__init__(
            intents=intents,
            max_messages=None,
            chunk_guilds_at_startup=False,
            allowed_mentions=discord.AllowedMentions.none(),
            http_trace=http_trace,
        )
        self.broker = broker
        self.connected = asyncio.Event()
        """Set while the gateway session is up (from READY or RESUMED to a disconnect): then
        clicks arrive."""

    def _get_state(self, **options: Any) -> Any:
        # discord.py's one hook between making its HTTP client and handing it to everything
        # else: this client's own URLs, if any, and its gateway sockets (see `pointing`).
        self.http = self.sockets = pointing.PointedHTTP(self.http, self._api_url, self._gateway_url)
        return super()._get_state(**options)

    async def setup_hook(self) -> None:
        # Runs once, inside login(), before the gateway connects: every message askbridge ever
        # posted is served from here on, with no view to re-register.
        self.add_dynamic_items(*DYNAMIC_ITEMS)

    def dispatch(self, event: str, /, *args: Any, **kwargs: Any) -> None:
        # Kept in step here, before any listener runs, so that readiness never lags.
        if event in ("connect", "resumed"):
            self.connected.set()
        elif event == "disconnect":
            self.connected.clear()
        super().dispatch(event, *args, **kwargs)

    @property
    def state(self) -> Any:
        """discord.py's connection state: what reads an interaction that came over HTTP."""
        return self._connection

    async def handle_click(
        self, interaction: discord.Interaction[Any], custom_id: CustomId, values: Sequence[str]
    ) -> None:
        """A click that came over the gateway (from the DynamicItems)."""
        await self.on_click(interaction, clicks.Callback(interaction), custom_id, values)

    async def on_click(
        self,
        interaction: discord.Interaction[Any],
        first: clicks.First,
        custom_id: CustomId,
        values: Sequence[str],
    ) -> None:
        if custom_id.action is Action.WORDS:
            await forms.open_form(self.broker, interaction, first, custom_id)
        else:
            await clicks.respond(self.broker, interaction, first, custom_id, values)

    async def on_form(
        self, interaction: discord.Interaction[Any], first: clicks.First, custom_id: CustomId
    ) -> None:
        await forms.submitted(self.broker, interaction, first, custom_id)

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        """Every interaction comes here as well; askbridge takes its forms' submissions, which
        discord.py would only route to a modal held in memory (see `forms`)."""
        if interaction.type is not discord.InteractionType.modal_submit:
            return
        data: dict[str, Any] = dict(interaction.data or {})
        try:
            custom_id = unpack(str(data.get("custom_id")))
        except BadCustomId:
            return  # not askbridge's
        if custom_id.action is Action.FORM:
            await self.on_form(interaction, clicks.Callback(interaction), custom_id)


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
    ) -> None:
        self._token = token
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
        return (
            f"discord: HTTP interactions mode (no gateway connection), logged in as {user.name} "
            f"(id {user.id}); set the application's Interactions Endpoint URL to "
            f"https://<this server's public address>{endpoint.PATH}; invite the bot to a server "
            f"with {invite_url(application.id)}"
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

    async def stop(self) -> None:
        if self._endpoint is not None:
            # Clicks already answered still reach the broker and get their notes.
            await self._endpoint.drain()
        # Resigns (closing the gateway) and lets another replica take over.
        await self._election.stop()
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
