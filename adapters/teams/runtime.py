"""Teams inside askbridge: `/teams/messages` on the shared HTTP server, where the Bot
Connector delivers activities (their tokens checked first, `tokens.py`), handed to the
Microsoft 365 Agents SDK's CloudAdapter; presses on cards go to the broker."""

from __future__ import annotations

import asyncio
import json
import logging
import warnings
from dataclasses import dataclass

import aiohttp
from aiohttp import web
from microsoft_agents.activity import Activity, ActivityTypes, InvokeResponse
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import TurnContext
from microsoft_agents.hosting.core.authorization import ClaimsIdentity

from askbridge.adapters.teams.clicks import ACTION_INVOKE, note, read_click
from askbridge.adapters.teams.credentials import AppCredentials, OneApp, TokenRefused
from askbridge.adapters.teams.ids import BadPress
from askbridge.adapters.teams.render import CONTENT_TYPE, render
from askbridge.adapters.teams.surface import TeamsSurface
from askbridge.adapters.teams.tokens import SigningKeys, TokenCheck, Unauthorized
from askbridge.core.broker import Broker
from askbridge.core.errors import StartupError
from askbridge.core.surface import Readiness, Surface
from askbridge.core.view import NO_LONGER_AVAILABLE

log = logging.getLogger("askbridge.teams")

PATH = "/teams/messages"


@dataclass(frozen=True)
class TeamsConfig:
    app_id: str
    password: str
    authority: str
    scope: str
    openid_metadata_url: str
    issuer: str
    service_url: str


class TeamsRuntime:
    def __init__(self, broker: Broker, config: TeamsConfig) -> None:
        self._broker = broker
        self._config = config
        self._credentials = AppCredentials(
            app_id=config.app_id,
            password=config.password,
            authority=config.authority,
            scope=config.scope,
        )
        self._adapter = CloudAdapter(connection_manager=OneApp(self._credentials))
        # The SDK's default tells the person the exception's text, and prints it.
        self._adapter.on_turn_error = self._turn_failed
        self._session: aiohttp.ClientSession | None = None
        self._check: TokenCheck | None = None
        self._surface = TeamsSurface(
            self._adapter, app_id=config.app_id, service_url=config.service_url
        )
        self._handling: set[asyncio.Task[web.StreamResponse]] = set()
        self._listening = True

    @property
    def surface(self) -> Surface:
        return self._surface

    @property
    def signed_paths(self) -> tuple[str, ...]:
        return (PATH,)

    def mount(self, app: web.Application) -> None:
        app.router.add_post(PATH, self._deliver)

    async def start(self) -> str:
        self._session = aiohttp.ClientSession()
        self._check = TokenCheck(
            SigningKeys(self._config.openid_metadata_url, self._session),
            app_id=self._config.app_id,
            issuer=self._config.issuer,
        )
        try:
            await self._credentials.token()
        except (TokenRefused, ValueError, OSError) as error:
            raise StartupError(
                f"Teams: could not get the bot's token with TEAMS_APP_ID and TEAMS_APP_PASSWORD "
                f"({error}); check them, TEAMS_TENANT_ID and TEAMS_TOKEN_AUTHORITY"
            ) from None
        return (
            f"teams: app {self._config.app_id}; set the bot's messaging endpoint to "
            f"https://<this server's public address>{PATH}"
        )

    async def ready(self) -> Readiness:
        try:
            await self._credentials.token()
        except Exception as error:  # readiness never raises
            return Readiness(False, f"no token for the Bot Connector: {error}")
        return Readiness(True, f"app {self._config.app_id} has its Bot Connector token")

    async def stop_listening(self) -> None:
        self._listening = False
        if self._handling:
            await asyncio.gather(*self._handling, return_exceptions=True)

    async def stop(self) -> None:
        await self.stop_listening()
        if self._session is not None:
            await self._session.close()
        await asyncio.to_thread(self._credentials.close)

    async def _deliver(self, request: web.Request) -> web.StreamResponse:
        if not self._listening or self._check is None:
            return web.json_response({"error": "askbridge is shutting down"}, status=503)
        task = asyncio.current_task()
        assert task is not None
        self._handling.add(task)
        try:
            return await self._verified(request)
        finally:
            self._handling.discard(task)

    async def _verified(self, request: web.Request) -> web.StreamResponse:
        assert self._check is not None
        try:
            body = json.loads(await request.read())
        except ValueError:
            return web.json_response({"error": "the body is not JSON"}, status=400)
        if not isinstance(body, dict):
            return web.json_response({"error": "the body is not an activity"}, status=400)
        try:
            claims = await self._check.claims(
                request.headers.get("Authorization"),
                str(body.get("channelId") or ""),
                str(body.get("serviceUrl") or ""),
            )
        except Unauthorized as why:
            log.warning("refused a request to %s: %s", PATH, why)
            return web.json_response({"error": "unauthorized"}, status=401)
        with warnings.catch_warnings():
            # The SDK reads the verified claims from the request under this string key.
            warnings.simplefilter("ignore", web.NotAppKeyWarning)
            request["claims_identity"] = ClaimsIdentity(claims, authentication_type="Bearer")
        response = await self._adapter.process(request, self)
        return response if response is not None else web.Response(status=202)

    async def on_turn(self, context: TurnContext) -> None:
        """The SDK's agent: a press on a card answers with the card as the person now sees
        it; every other activity (a message to the bot, its installation) needs nothing."""
        activity = context.activity
        if activity.type != ActivityTypes.invoke or activity.name != ACTION_INVOKE:
            return
        try:
            click = read_click(activity)
        except BadPress as error:
            log.warning("a press on a Teams card that askbridge cannot read: %s", error)
            await _answer(context, _message(NO_LONGER_AVAILABLE))
            return
        outcome = await self._broker.act(click.request_id, click.person, click.intent, click.origin)
        view = outcome.view
        said = note(outcome)
        if view is None:
            await _answer(context, _message(said or NO_LONGER_AVAILABLE))
        else:
            # Only the person who pressed sees this card; everyone else sees the message the
            # broker replaces through the connector.
            await _answer(context, _card(render(view, said)))

    async def _turn_failed(self, context: TurnContext, error: Exception) -> None:
        log.error("a Teams activity failed: %r", error, exc_info=error)


def _card(card: dict[str, object]) -> dict[str, object]:
    return {"statusCode": 200, "type": CONTENT_TYPE, "value": card}


def _message(text: str) -> dict[str, object]:
    return {"statusCode": 200, "type": "application/vnd.microsoft.activity.message", "value": text}


async def _answer(context: TurnContext, body: dict[str, object]) -> None:
    await context.send_activity(
        Activity(type=ActivityTypes.invoke_response, value=InvokeResponse(status=200, body=body))
    )
