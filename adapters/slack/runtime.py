"""Slack on askbridge's server and event loop: one bolt `AsyncApp`, over Socket Mode or HTTP."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.app.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from askbridge.adapters.slack.handlers import Handlers
from askbridge.adapters.slack.ids import ANY_ACTION, FILL_CALLBACK_ID, FORM_CALLBACK_ID
from askbridge.adapters.slack.incoming import bolt_request, header_problem, signature_problem
from askbridge.adapters.slack.socket_mode import SocketModeHandler
from askbridge.adapters.slack.surface import Install, SlackSurface
from askbridge.core.api.errors import error_response
from askbridge.core.api.reading import read_body
from askbridge.core.broker import Broker
from askbridge.core.errors import StartupError
from askbridge.core.metrics import Metrics
from askbridge.core.pace import Pace
from askbridge.core.surface import Readiness, Surface

log = logging.getLogger("askbridge.slack")

EVENTS_PATH = "/slack/events"
CONNECT_TIMEOUT_S = 30.0
PROBE_TIMEOUT_S = 5
RETRIES = 2
Mode = Literal["socket", "http"]


@dataclass(frozen=True)
class SlackConfig:
    bot_token: str
    app_token: str | None = None
    signing_secret: str | None = None
    api_url: str = "https://slack.com/api/"
    updates_per_minute: float | None = None
    """`chat.update` calls a minute at most (Slack's Tier 3 allows about 50); None: as fast
    as Slack takes them."""

    @property
    def mode(self) -> Mode:
        """Socket Mode whenever an app token is given: it needs no public URL."""
        return "socket" if self.app_token else "http"


class ApiCalls(AsyncRetryHandler):
    """Counts every HTTP call to Slack's Web API, retries included, by method. It never
    retries: slack_sdk shows each attempt's outcome to its retry handlers in turn, and this one
    comes first, then lets the next decide."""

    def __init__(self, metrics: Metrics) -> None:
        super().__init__(max_retry_count=0)
        self._metrics = metrics

    async def can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        method = request.url.split("?", 1)[0].rsplit("/", 1)[-1]
        body: Any = response.body if response is not None else None
        refused = isinstance(body, dict) and body.get("ok") is False
        status = response.status_code if response is not None and error is None else None
        self._metrics.record_api_call("slack", method, status=status, failed=refused)
        return False


def _web_api_log() -> logging.Logger:
    """slack_sdk's logger for Web API calls, with a level of its own: slack_sdk formats a debug
    line of every call, with its whole payload, whenever that logger's own level is unset
    (whatever the effective level says), and throws it away."""
    web_log = logging.getLogger("slack_sdk.web.async_client")
    if web_log.level == logging.NOTSET:
        web_log.setLevel(web_log.getEffectiveLevel())
    return web_log


class SlackRuntime:
    def __init__(self, broker: Broker, config: SlackConfig, metrics: Metrics | None = None) -> None:
        _check_tokens(config)
        self.config = config
        base_url = config.api_url if config.api_url.endswith("/") else config.api_url + "/"
        counting: list[AsyncRetryHandler] = [ApiCalls(metrics)] if metrics is not None else []
        web_log = _web_api_log()
        self.client = AsyncWebClient(
            token=config.bot_token,
            base_url=base_url,
            logger=web_log,
            # The handlers share one attempt count per call: two retries in all, for any mix of
            # 429 (after Retry-After), 500/503 and dropped connections.
            retry_handlers=[
                *counting,
                AsyncRateLimitErrorRetryHandler(max_retry_count=RETRIES),
                AsyncConnectionErrorRetryHandler(max_retry_count=RETRIES),
                AsyncServerErrorRetryHandler(max_retry_count=RETRIES),
            ],
        )
        # For /readyz: one try, so that a Slack that is down reads as not ready at once.
        self._probe = AsyncWebClient(
            token=config.bot_token,
            base_url=base_url,
            timeout=PROBE_TIMEOUT_S,
            retry_handlers=counting,
            logger=web_log,
        )
        self._probing: asyncio.Task[Readiness] | None = None
        pace = config.updates_per_minute
        self.slack = SlackSurface(self.client, None if pace is None else Pace(pace))
        self.surface: Surface = self.slack
        self.clicks = Handlers(broker, self.slack)
        self.app = AsyncApp(
            client=self.client,
            signing_secret=config.signing_secret or "",
            # `_events` checks the signature before the body is read; bolt's check logs the body
            # of a request whose signature is wrong.
            request_verification_enabled=False,
            process_before_response=False,
            # bolt sets the level of a logger with this name; it must not be one of ours.
            name="askbridge-slack-bolt",
        )
        # One listener for every action_id, ours or not, so that no click goes unacknowledged;
        # one for the answer form, which needs nothing from before a restart to be taken.
        self.app.action(ANY_ACTION)(self.clicks.on_action)
        self.app.view_submission(FORM_CALLBACK_ID)(self.clicks.on_submit)
        self.app.view_submission(FILL_CALLBACK_ID)(self.clicks.on_submit)
        self._socket: SocketModeHandler | None = None

    @property
    def signed_paths(self) -> tuple[str, ...]:
        return (EVENTS_PATH,) if self.config.mode == "http" else ()

    def mount(self, app: web.Application) -> None:
        secret = self.config.signing_secret
        if self.config.mode == "http" and secret:
            app.router.add_post(EVENTS_PATH, partial(self._events, SignatureVerifier(secret)))

    async def _events(self, signatures: SignatureVerifier, request: web.Request) -> web.Response:
        """Slack's HTTP deliveries: 401 unless Slack signed the body a moment ago, 400 unless
        it is an interaction askbridge takes."""
        problem = header_problem(request.headers)
        raw = b""
        if problem is None:
            raw = await read_body(request)
            problem = signature_problem(signatures, raw, request.headers)
        if problem is not None:
            log.warning("refused a request to %s: %s", EVENTS_PATH, problem)
            return error_response(401, f"{problem}; this endpoint takes only Slack's requests")
        try:
            incoming = bolt_request(request, raw)
        except ValueError as error:
            return error_response(400, f"not a Slack interaction askbridge takes: {error}")
        response = await self.app.async_dispatch(incoming)
        return await to_aiohttp_response(response)

    async def start(self) -> str:
        # One session, and so one pool of kept-alive connections, for every Web API call: by
        # default slack_sdk opens a session (and a connection) per call.
        self.client.session = aiohttp.ClientSession()
        install = await self._auth_test()
        self.slack.install = install
        where = f"workspace {install.team!r} ({install.team_id}) as @{install.bot_name}"
        where += f" ({install.bot_user_id})"
        if self.config.mode == "socket":
            await self._connect_socket()
            unused = "; SLACK_SIGNING_SECRET is not used" if self.config.signing_secret else ""
            return f"Slack: connected to {where} over Socket Mode{unused}"
        return (
            f"Slack: connected to {where} in HTTP mode; Slack must POST interactions to "
            f"https://<this server's public address>{EVENTS_PATH}"
        )

    async def _auth_test(self) -> Install:
        try:
            found = await self.client.auth_test()
        except SlackApiError as error:
            code = error.response.get("error")
            raise StartupError(
                f"SLACK_BOT_TOKEN was rejected by Slack ({code}); copy the Bot User OAuth Token "
                "(xoxb-…) from your Slack app's OAuth & Permissions page"
            ) from error
        except (aiohttp.ClientError, TimeoutError) as error:
            raise StartupError(
                f"could not reach the Slack API at SLACK_API_URL={self.client.base_url} "
                f"({type(error).__name__}: {error})"
            ) from error
        return Install(
            team_id=str(found.get("team_id") or ""),
            team=str(found.get("team") or ""),
            bot_user_id=str(found.get("user_id") or ""),
            bot_name=str(found.get("user") or ""),
            app_id=found.get("app_id"),
        )

    async def _connect_socket(self) -> None:
        # Opening the connection URL ourselves turns a bad app token into a startup error; left
        # to itself, the SDK would retry forever.
        token = self.config.app_token or ""
        try:
            opened = await self.client.apps_connections_open(app_token=token)
        except SlackApiError as error:
            code = error.response.get("error")
            raise StartupError(
                f"SLACK_APP_TOKEN was rejected by Slack ({code}); create an app-level token "
                "(xapp-…) with the connections:write scope under Basic Information → "
                "App-Level Tokens, and turn on Socket Mode"
            ) from error
        handler = SocketModeHandler(self.app, token)
        handler.client.wss_uri = opened["url"]
        self._socket = handler
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT_S):
                await handler.connect_async()  # type: ignore[no-untyped-call]
        except TimeoutError as error:
            raise StartupError(
                f"could not open the Socket Mode connection within {CONNECT_TIMEOUT_S:.0f} s; "
                "check the network and SLACK_API_URL"
            ) from error

    async def ready(self) -> Readiness:
        """Socket Mode: the socket is open. Both modes: the Web API accepts the bot token
        (one `auth.test`, shared by the checks that arrive while it runs)."""
        mode = "Socket Mode connected" if self.config.mode == "socket" else "HTTP mode"
        if self.config.mode == "socket":
            socket = self._socket
            if socket is None or not await socket.client.is_connected():
                return Readiness(False, "the Socket Mode connection is down; reconnecting")
        if self._probing is None or self._probing.done():
            self._probing = asyncio.create_task(self._verify(), name="askbridge-slack-ready")
        verified = await asyncio.shield(self._probing)
        if not verified.ready:
            return verified
        return Readiness(True, f"{mode}; {verified.detail}")

    async def _verify(self) -> Readiness:
        try:
            await self._probe.auth_test()
        except SlackApiError as error:
            code = error.response.get("error")
            return Readiness(False, f"Slack refused SLACK_BOT_TOKEN ({code})")
        except (aiohttp.ClientError, TimeoutError) as error:
            return Readiness(
                False,
                f"could not reach the Slack API at SLACK_API_URL={self._probe.base_url} "
                f"({type(error).__name__}: {error})",
            )
        return Readiness(True, "the Web API accepts the bot token")

    async def stop_listening(self) -> None:
        if self._probing is not None:
            self._probing.cancel()
            await asyncio.gather(self._probing, return_exceptions=True)
            self._probing = None
        if self._socket is not None:
            await self._socket.close_async()  # type: ignore[no-untyped-call]
            self._socket = None
        await self.clicks.close()

    async def stop(self) -> None:
        await self.stop_listening()
        if self.client.session is not None:
            await self.client.session.close()
            self.client.session = None


def _check_tokens(config: SlackConfig) -> None:
    if config.bot_token.startswith("xapp-"):
        raise StartupError(
            "SLACK_BOT_TOKEN holds an app-level token (xapp-…); it takes the Bot User OAuth "
            "Token (xoxb-…), and the xapp- token goes in SLACK_APP_TOKEN"
        )
    if config.app_token and not config.app_token.startswith("xapp-"):
        raise StartupError(
            "SLACK_APP_TOKEN must be an app-level token (xapp-…, Basic Information → "
            "App-Level Tokens, scope connections:write)"
        )
    if not config.app_token and not config.signing_secret:
        raise StartupError(
            "SLACK_BOT_TOKEN is set, but neither SLACK_APP_TOKEN (Socket Mode, no public URL "
            "needed) nor SLACK_SIGNING_SECRET (HTTP mode) is; set one of them"
        )
