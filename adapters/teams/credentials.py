"""The bot's own tokens, for its calls to the Bot Connector: MSAL's client-credentials flow
against the configured authority, with instance discovery off (MSAL would otherwise ask
login.microsoftonline.com about any authority it does not know), handed to the SDK as its
token provider."""

from __future__ import annotations

import asyncio
from typing import Any

import msal
import requests
from azure.core.credentials_async import AsyncTokenCredential
from microsoft_agents.activity import Activity
from microsoft_agents.hosting.core.authorization import (
    AccessTokenProviderBase,
    AgentAuthConfiguration,
    ClaimsIdentity,
    Connections,
)


class TokenRefused(Exception):
    """The authority would not give the bot a token; the message names what it said."""


class AppCredentials(AccessTokenProviderBase):
    """Tokens for the app (TEAMS_APP_ID, TEAMS_APP_PASSWORD) from its authority; MSAL keeps
    them until they are about to expire."""

    def __init__(self, *, app_id: str, password: str, authority: str, scope: str) -> None:
        self._config = AgentAuthConfiguration(client_id=app_id, authority=authority)
        self._scope = scope
        self._app_id = app_id
        self._password = password
        self._authority = authority
        self._client: msal.ConfidentialClientApplication | None = None
        # MSAL's connections, closed with the runtime (MSAL would keep them open).
        self._http = requests.Session()
        self._lock = asyncio.Lock()

    @property
    def configuration(self) -> AgentAuthConfiguration:
        return self._config

    async def get_access_token(
        self, resource_url: str, scopes: list[str], force_refresh: bool = False
    ) -> str:
        return await self.token()

    async def token(self) -> str:
        """A token for the Bot Connector. MSAL is synchronous: it runs in a thread."""
        async with self._lock:
            result: dict[str, Any] = await asyncio.to_thread(self._acquire)
        token = result.get("access_token")
        if not isinstance(token, str):
            said = result.get("error_description") or result.get("error") or result
            raise TokenRefused(f"{self._authority} gave the app no token: {said}")
        return token

    def _acquire(self) -> dict[str, Any]:
        if self._client is None:
            # Building the client fetches the authority's OpenID configuration.
            self._client = msal.ConfidentialClientApplication(
                self._app_id,
                client_credential=self._password,
                authority=self._authority,
                instance_discovery=False,
                http_client=self._http,
            )
        found: dict[str, Any] = self._client.acquire_token_for_client(scopes=[self._scope])
        return found

    def close(self) -> None:
        self._http.close()

    def get_token_credential(self) -> AsyncTokenCredential:
        raise NotImplementedError("askbridge needs no Azure credential")

    # Flows for signing people in and for agentic identities, which askbridge does not use.

    async def acquire_token_on_behalf_of(self, scopes: list[str], user_assertion: str) -> str:
        raise NotImplementedError("askbridge signs nobody in")

    async def get_agentic_application_token(
        self, tenant_id: str, agent_app_instance_id: str
    ) -> str | None:
        raise NotImplementedError("askbridge is no agentic identity")

    async def get_agentic_instance_token(
        self, tenant_id: str, agent_app_instance_id: str
    ) -> tuple[str, str]:
        raise NotImplementedError("askbridge is no agentic identity")

    async def get_agentic_user_token(
        self, tenant_id: str, agent_app_instance_id: str, agentic_user_id: str, scopes: list[str]
    ) -> str | None:
        raise NotImplementedError("askbridge is no agentic identity")


class OneApp(Connections):
    """The SDK's connections: the one app, whatever the request."""

    def __init__(self, credentials: AppCredentials) -> None:
        self._credentials = credentials

    def get_connection(self, connection_name: str) -> AccessTokenProviderBase:
        return self._credentials

    def get_default_connection(self) -> AccessTokenProviderBase:
        return self._credentials

    def get_token_provider(
        self, claims_identity: ClaimsIdentity, service_url: str
    ) -> AccessTokenProviderBase:
        return self._credentials

    def get_token_provider_from_activity(
        self, claims_identity: ClaimsIdentity, activity: Activity
    ) -> AccessTokenProviderBase:
        return self._credentials

    def get_default_connection_configuration(self) -> AgentAuthConfiguration:
        return self._credentials.configuration
