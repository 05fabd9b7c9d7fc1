"""Teams inside askbridge: the SDK's CloudAdapter with the app's credentials, its deliveries
at `/teams/messages` on the shared HTTP server (`handlers`), and the surface that posts."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import aiohttp
from aiohttp import web
from microsoft_agents.hosting.aiohttp import CloudAdapter

from askbridge.adapters.teams.credentials import AppCredentials, OneApp, TokenRefused
from askbridge.adapters.teams.handlers import PATH, Deliveries, turn_failed
from askbridge.adapters.teams.members import Members
from askbridge.adapters.teams.surface import TeamsSurface
from askbridge.adapters.teams.tokens import SigningKeys, TokenCheck
from askbridge.core.broker import Broker
from askbridge.core.errors import StartupError
from askbridge.core.surface import Readiness, Surface

log = logging.getLogger("askbridge.teams")


@dataclass(frozen=True)
class TeamsConfig:
    app_id: str
    password: str
    authority: str
    scope: str
    openid_metadata_url: str
    issuer: str
    service_url: str
    tenant_id: str | None = None


class TeamsRuntime:
    def __init__(self, broker: Broker, config: TeamsConfig) -> None:
        self._config = config
        self._credentials = AppCredentials(
            app_id=config.app_id,
            password=config.password,
            authority=config.authority,
            scope=config.scope,
        )
        self._adapter = CloudAdapter(connection_manager=OneApp(self._credentials))
        self._adapter.on_turn_error = turn_failed
        # Opened in `start`: a session belongs to the running loop.
        self._session: aiohttp.ClientSession | None = None
        self._keys = SigningKeys(config.openid_metadata_url, self._http)
        check = TokenCheck(self._keys, app_id=config.app_id, issuer=config.issuer)
        # The answerers' names, looked up by the surface and read by a press's note.
        members = Members()
        self._deliveries = Deliveries(broker, self._adapter, check, members)
        self._surface = TeamsSurface(
            self._adapter,
            self._credentials,
            app_id=config.app_id,
            service_url=config.service_url,
            tenant_id=config.tenant_id,
            members=members,
        )

    @property
    def surface(self) -> Surface:
        return self._surface

    @property
    def signed_paths(self) -> tuple[str, ...]:
        return (PATH,)

    def mount(self, app: web.Application) -> None:
        app.router.add_post(PATH, self._deliveries.handle)

    async def start(self) -> str:
        self._session = aiohttp.ClientSession()
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
        await self._deliveries.drain()

    async def stop(self) -> None:
        await self.stop_listening()
        if self._session is not None:
            await self._session.close()
        await asyncio.to_thread(self._credentials.close)

    def _http(self) -> aiohttp.ClientSession:
        assert self._session is not None, "the runtime has not started"
        return self._session
