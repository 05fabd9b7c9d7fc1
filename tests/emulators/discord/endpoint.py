"""The Interactions Endpoint URL flow: Discord POSTs interactions to the bot, signed.

As Discord does (`interactions/overview.mdx`, "Setting Up an Endpoint"):
- every request carries `X-Signature-Ed25519`, the Ed25519 signature by the application's key
  of `X-Signature-Timestamp` (Unix seconds) followed by the raw body;
- registering the URL first sends a PING, which must get 200 `{"type": 1}`, and a request with
  a bad signature, which must get 401, or the URL is not accepted;
- the reply to an interaction's POST is its initial response (200 with a JSON callback body,
  types 4/5/6/7/9, checked like the callback route's), within 3 seconds; a bot that answered
  through the callback route instead may reply 202 with no body.
"""

from __future__ import annotations

import asyncio
import enum
import json
import secrets
import time
from collections.abc import Mapping
from typing import Any

import aiohttp
from nacl.signing import SigningKey

from .httpkit import ApiError
from .interactions import EndpointReply, InteractionState
from .responses import InteractionResponder
from .waiting import Pulse

PING = 1
PONG = 1
STALE_S = 600.0
"""How old a forged stale delivery's timestamp is: twice what a careful endpoint accepts."""


class Forgery(enum.StrEnum):
    """How a delivery can be made to fail verification, to prove the endpoint refuses it."""

    SIGNATURE = "signature"
    """Signed, but by another key."""
    UNSIGNED = "unsigned"
    """No signature headers at all."""
    STALE = "stale"
    """Signed by the application's key, ten minutes ago (a replay)."""


class EndpointRejected(AssertionError):
    """What the Developer Portal says when the URL fails its checks."""


class InteractionsEndpoint:
    def __init__(
        self,
        *,
        application_id: int,
        responder: InteractionResponder,
        pulse: Pulse,
        response_window: float,
    ) -> None:
        self._application_id = application_id
        self._responder = responder
        self._pulse = pulse
        self._window = response_window
        self.key = SigningKey.generate()
        self.urls: list[str] = []
        self._turn = 0
        self._session: aiohttp.ClientSession | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._forgeries: list[Forgery] = []
        self.replies: list[EndpointReply] = []

    @property
    def public_key(self) -> str:
        return bytes(self.key.verify_key).hex()

    async def register(self, url: str, *more: str) -> None:
        """Set the Interactions Endpoint URL, after Discord's two checks. `more` URLs stand for
        replicas behind a load balancer without sticky routing: each is checked, and
        deliveries go to them in turn."""
        for each in (url, *more):
            await self._check(each)
        self.urls = [url, *more]
        self._turn = 0

    async def _check(self, url: str) -> None:
        pong = await self.post(url, self._ping())
        if pong.status != 200 or not _is_json(pong) or pong.body != {"type": PONG}:
            raise EndpointRejected(
                f"The specified interactions endpoint url could not be verified: a PING to "
                f"{url} got {pong.status} {pong.body!r}, not 200 {{'type': 1}}"
            )
        forged = await self.post(url, self._ping(), forgery=Forgery.SIGNATURE)
        if forged.status != 401:
            raise EndpointRejected(
                f"The specified interactions endpoint url could not be verified: a badly signed "
                f"PING to {url} got {forged.status} {forged.body!r}, not 401"
            )

    @property
    def active(self) -> bool:
        return bool(self.urls)

    async def post_signed(
        self, payload: object, headers: Mapping[str, str] | None = None
    ) -> EndpointReply:
        """POST any body (JSON of `payload`, or `payload` itself if bytes), signed."""
        return await self.post(self._require_url(), payload, headers=headers)

    async def ping(self, forgery: Forgery | None = None) -> EndpointReply:
        return await self.post(self._require_url(), self._ping(), forgery=forgery)

    async def redeliver(self, state: InteractionState) -> EndpointReply:
        """POST an interaction again, freshly signed, as a replay by someone who saw it; the
        reply is returned, not applied (Discord has had its one response)."""
        return await self.post(self._require_url(), dict(state.payload))

    def forge_next(self, forgery: Forgery, times: int = 1) -> None:
        self._forgeries.extend([forgery] * times)

    def deliver(self, state: InteractionState) -> None:
        """POST the interaction in the background; its handle shows what came of it."""
        url = self._require_url()
        forgery = self._forgeries.pop(0) if self._forgeries else None
        state.forged = forgery
        task = asyncio.create_task(
            self._deliver(url, state, forgery), name=f"discord-emulator-deliver-{state.id}"
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, url: str, state: InteractionState, forgery: Forgery | None) -> None:
        try:
            async with asyncio.timeout(self._window):
                reply = await self.post(url, dict(state.payload), forgery=forgery)
        except TimeoutError:
            self._fail(state, f"the endpoint sent no reply within the {self._window:g} s window")
            return
        except aiohttp.ClientError as error:
            self._fail(state, f"the endpoint could not be reached: {error!r}")
            return
        state.endpoint_reply = reply
        if reply.status == 202 and state.callback is not None:
            return  # answered through the callback route
        if reply.status != 200 or not _is_json(reply) or not isinstance(reply.body, dict):
            self._fail(state, f"the endpoint answered {reply.status} {reply.body!r}")
            return
        if reply.body.get("type") == PONG:
            self._fail(state, "the endpoint answered an interaction with a PONG")
            return
        try:
            self._responder.respond(state, reply.body)
        except ApiError as error:
            if not state.refused:
                self._responder.refuse(state, f"reply refused: {error.code} {error.message}")
            self._fail(state, None)

    def _fail(self, state: InteractionState, why: str | None) -> None:
        if why is not None:
            self._responder.refuse(state, why)
        state.failed = True
        self._pulse.notify()

    async def post(
        self,
        url: str,
        payload: object,
        *,
        forgery: Forgery | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> EndpointReply:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        now = time.time()
        timestamp = str(int(now - STALE_S if forgery is Forgery.STALE else now))
        key = SigningKey.generate() if forgery is Forgery.SIGNATURE else self.key
        signature = key.sign(timestamp.encode() + body).signature.hex()
        sent = {"Content-Type": "application/json", "User-Agent": "Discord-Interactions/1.0"}
        if forgery is not Forgery.UNSIGNED:
            sent |= {"X-Signature-Ed25519": signature, "X-Signature-Timestamp": timestamp}
        sent |= dict(headers or {})
        if self._session is None:
            self._session = aiohttp.ClientSession()
        async with self._session.post(url, data=body, headers=sent) as response:
            text = await response.text()
            content_type = response.content_type
        parsed: Any = text
        if content_type == "application/json":
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = text
        reply = EndpointReply(response.status, content_type, parsed)
        self.replies.append(reply)
        return reply

    def _ping(self) -> dict[str, Any]:
        return {
            "id": str(secrets.randbits(62)),
            "application_id": str(self._application_id),
            "type": PING,
            "token": "emulated." + secrets.token_urlsafe(48),
            "version": 1,
        }

    def _require_url(self) -> str:
        """The URL of the next delivery: each in turn, when there are several."""
        if not self.urls:
            raise RuntimeError("no Interactions Endpoint URL: call use_interactions_endpoint()")
        url = self.urls[self._turn % len(self.urls)]
        self._turn += 1
        return url

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
            self._session = None


def _is_json(reply: EndpointReply) -> bool:
    return reply.content_type == "application/json"
