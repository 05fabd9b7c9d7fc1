"""Verifying the token on every request Teams sends to `/teams/messages`.

The Bot Connector signs each activity with a JWT (RS256) whose key is listed behind the OpenID
metadata, whose issuer is Bot Framework's and whose audience is the bot's app id; its
`serviceurl` claim names the connector that sent it. The SDK's own validator looks its keys up
at a fixed address and checks no issuer, so askbridge checks the token here, from the
configured metadata, before the SDK sees the activity.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
import jwt
from jwt.algorithms import RSAAlgorithm

log = logging.getLogger("askbridge.teams")

LEEWAY_S = 60
"""How far the connector's clock may be from ours."""
KEYS_FRESH_S = 24 * 3600.0
"""How long the listed keys are trusted before they are fetched again (Microsoft rolls them
over days); an unknown key id fetches them sooner, at most every REFETCH_S."""
REFETCH_S = 300.0


class Unauthorized(Exception):
    """The request's token does not prove that Teams sent it; the message says why (logged,
    never sent back)."""


@dataclass(frozen=True)
class Key:
    public: Any
    endorsements: tuple[str, ...]


class SigningKeys:
    """The keys behind the OpenID metadata, fetched when first needed and kept a while."""

    def __init__(self, metadata_url: str, session: Callable[[], aiohttp.ClientSession]) -> None:
        self._metadata_url = metadata_url
        self._session = session
        self._keys: dict[str, Key] = {}
        self._fetched_at: float | None = None
        self._lock = asyncio.Lock()

    async def key(self, kid: str) -> Key:
        now = time.monotonic()
        if self._stale(now) or (kid not in self._keys and self._may_refetch(now)):
            async with self._lock:
                if self._stale(now) or (kid not in self._keys and self._may_refetch(now)):
                    await self._fetch(now)
        found = self._keys.get(kid)
        if found is None:
            raise Unauthorized(f"the token's key {kid!r} is not among the listed signing keys")
        return found

    def _stale(self, now: float) -> bool:
        return self._fetched_at is None or now - self._fetched_at > KEYS_FRESH_S

    def _may_refetch(self, now: float) -> bool:
        return self._fetched_at is None or now - self._fetched_at > REFETCH_S

    async def _fetch(self, now: float) -> None:
        try:
            metadata = await self._json(self._metadata_url)
            jwks = await self._json(str(metadata["jwks_uri"]))
            keys = {
                str(jwk["kid"]): Key(
                    RSAAlgorithm.from_jwk(json.dumps(jwk)),
                    tuple(str(e) for e in jwk.get("endorsements", ())),
                )
                for jwk in jwks["keys"]
                if jwk.get("kty") == "RSA" and "kid" in jwk
            }
        except (aiohttp.ClientError, TimeoutError, KeyError, TypeError, ValueError) as error:
            raise Unauthorized(
                f"could not fetch the signing keys from {self._metadata_url}: {error!r}"
            ) from error
        self._keys, self._fetched_at = keys, now

    async def _json(self, url: str) -> Mapping[str, Any]:
        async with self._session().get(url, timeout=aiohttp.ClientTimeout(total=10)) as response:
            response.raise_for_status()
            found: Mapping[str, Any] = await response.json(content_type=None)
            return found


@dataclass(frozen=True)
class Token:
    """A token the Bot Connector signed for this bot; what it may carry is checked against the
    activity (`claims_for`), once the body is read."""

    claims: dict[str, Any]
    endorsements: tuple[str, ...]
    """The channels its signing key speaks for; empty: any."""

    def claims_for(self, channel_id: str, service_url: str) -> dict[str, Any]:
        """The claims, when the activity comes from a channel the key is endorsed for and the
        connector that signed; else `Unauthorized`."""
        if self.endorsements and channel_id not in self.endorsements:
            raise Unauthorized(f"the signing key is not endorsed for channel {channel_id!r}")
        # The connector that signed may speak only for itself: replies go to `serviceUrl`.
        if self.claims.get("serviceurl") != service_url:
            raise Unauthorized("the token's serviceurl is not the activity's serviceUrl")
        return self.claims


class TokenCheck:
    """Whether a request's Authorization header proves that the Bot Connector sent it to this
    bot: the `Token`, or `Unauthorized`."""

    def __init__(self, keys: SigningKeys, *, app_id: str, issuer: str) -> None:
        self._keys = keys
        self._app_id = app_id
        self._issuer = issuer

    async def token(self, authorization: str | None) -> Token:
        """The verified token; its expiry is checked against the system clock (PyJWT's). It
        needs nothing from the body, so that nothing of a stranger's body is read."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("no bearer token")
        try:
            header = jwt.get_unverified_header(token.strip())
        except jwt.PyJWTError as error:
            raise Unauthorized(f"not a JWT: {error}") from None
        if header.get("alg") != "RS256" or not isinstance(header.get("kid"), str):
            raise Unauthorized("the token is not RS256 with a key id")
        key = await self._keys.key(header["kid"])
        try:
            claims: dict[str, Any] = jwt.decode(
                token.strip(),
                key.public,
                algorithms=["RS256"],
                audience=self._app_id,
                issuer=self._issuer,
                leeway=LEEWAY_S,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as error:
            raise Unauthorized(f"the token does not hold: {error}") from None
        return Token(claims, key.endorsements)
