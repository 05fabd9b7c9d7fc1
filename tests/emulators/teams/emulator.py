"""Microsoft Teams as askbridge meets it, on local ports: the Bot Connector (messages created
and replaced in conversations, a 429 on demand), the token authority MSAL asks for the app's
tokens (over HTTPS, as MSAL insists), and the OpenID metadata and keys that sign the
activities it delivers to the bot, as Teams signs them. A connector call without a token the
authority issued is refused; so is a card Teams would not render (`cards.py`)."""

from __future__ import annotations

import asyncio
import json
import secrets
import ssl
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import aiohttp
from aiohttp import web

from tests.emulators.teams.cards import (
    MAX_MESSAGE_BYTES,
    CardRefused,
    associated_inputs,
    check_card,
    client_refusal,
    mentioned,
    on_card,
    sent_values,
)
from tests.emulators.teams.keys import SigningKey, self_signed

ISSUER = "https://api.botframework.com"
TENANT = "emulated-tenant"
CHANNEL = "msteams"
CARD = "application/vnd.microsoft.card.adaptive"


class ClientRefused(Exception):
    """The Teams client would not send this press: an input on the card refuses its value."""


@dataclass
class Posted:
    """A message the bot posted, as it now stands."""

    conversation: str
    id: str
    card: dict[str, Any]
    versions: list[dict[str, Any]] = field(default_factory=list)
    reply_to: str | None = None
    """The message whose thread it was posted in, for a reply in a channel."""


@dataclass(frozen=True)
class Person:
    aad_id: str
    name: str


class TeamsEmulator:
    def __init__(self, directory: Path, *, app_id: str = "emulated-app-id") -> None:
        self.app_id = app_id
        self.app_password = secrets.token_urlsafe(24)
        self.key = SigningKey("emulator-key-1")
        self.cert, self._cert_key = self_signed(directory)
        self.posted: dict[str, Posted] = {}
        self.refused: list[str] = []
        self.issued: set[str] = set()
        self.token_requests = 0
        self.conversations: set[str] = set()
        self.members: dict[str, dict[str, Person]] = {}
        self.member_lookups: list[tuple[str, str]] = []
        """Each member asked of a conversation (its id, the person's), in order."""
        self.installed: dict[str, Person] = {}
        """People who added the app for themselves: the bot may start a personal chat."""
        self.updates_to_refuse: list[float] = []
        """Retry-After of each 429 the next updates get."""
        self.updates_to_fail: list[tuple[int, str]] = []
        """The status and error code each of the next updates gets instead (after the 429s):
        503 ServiceUnavailable, 403 BotNotInConversationRoster..."""
        self.update_statuses: list[int] = []
        self._changed = asyncio.Condition()
        self._runners: list[web.AppRunner] = []
        self.url = ""
        self.authority_url = ""

    # --- lifecycle ------------------------------------------------------------------------

    async def __aenter__(self) -> TeamsEmulator:
        plain = web.Application()
        plain.router.add_get("/openid", self._metadata)
        plain.router.add_get("/keys", self._keys)
        plain.router.add_post("/v3/conversations/{cid}/activities", self._create)
        plain.router.add_put("/v3/conversations/{cid}/activities/{aid}", self._update)
        plain.router.add_get("/v3/conversations/{cid}/members/{mid}", self._member)
        plain.router.add_post("/v3/conversations", self._start_chat)
        self.url = await self._serve(plain, None)
        authority = web.Application()
        authority.router.add_get(
            "/{tenant}/v2.0/.well-known/openid-configuration", self._authority_metadata
        )
        authority.router.add_post("/{tenant}/oauth2/v2.0/token", self._token)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert, self._cert_key)
        self.authority_url = await self._serve(authority, context)
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for runner in self._runners:
            await runner.cleanup()

    async def _serve(self, app: web.Application, context: ssl.SSLContext | None) -> str:
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        self._runners.append(runner)
        port = runner.addresses[0][1]
        return f"{'https' if context else 'http'}://127.0.0.1:{port}"

    def settings(self) -> dict[str, str]:
        """The settings that point askbridge at this emulator."""
        return {
            "TEAMS_APP_ID": self.app_id,
            "TEAMS_APP_PASSWORD": self.app_password,
            "TEAMS_TENANT_ID": TENANT,
            "TEAMS_OPENID_METADATA_URL": f"{self.url}/openid",
            "TEAMS_TOKEN_ISSUER": ISSUER,
            "TEAMS_TOKEN_AUTHORITY": f"{self.authority_url}/{TENANT}",
            "TEAMS_SERVICE_URL": f"{self.url}/",
        }

    def add_conversation(self, *members: Person) -> str:
        """A team channel the bot is in, with `members`."""
        conversation = f"19:{uuid.uuid4().hex}@thread.tacv2"
        self.conversations.add(conversation)
        self.members[conversation] = {p.aad_id: p for p in members}
        return conversation

    # --- signing keys and tokens ------------------------------------------------------------

    async def _metadata(self, request: web.Request) -> web.Response:
        return web.json_response({"issuer": ISSUER, "jwks_uri": f"{self.url}/keys"})

    async def _keys(self, request: web.Request) -> web.Response:
        return web.json_response({"keys": [self.key.jwk((CHANNEL,))]})

    async def _authority_metadata(self, request: web.Request) -> web.Response:
        base = f"{self.authority_url}/{request.match_info['tenant']}"
        return web.json_response(
            {
                "issuer": f"{base}/v2.0",
                "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                "token_endpoint": f"{base}/oauth2/v2.0/token",
            }
        )

    async def _token(self, request: web.Request) -> web.Response:
        form = await request.post()
        self.token_requests += 1
        if (
            request.match_info["tenant"] != TENANT
            or form.get("grant_type") != "client_credentials"
            or form.get("client_id") != self.app_id
            or form.get("client_secret") != self.app_password
        ):
            return web.json_response(
                {"error": "invalid_client", "error_description": "AADSTS7000215"}, status=401
            )
        if form.get("scope") != "https://api.botframework.com/.default":
            return web.json_response({"error": "invalid_scope"}, status=400)
        # A JWT, as Entra's access tokens are.
        claims = {
            "aud": "https://api.botframework.com",
            "appid": self.app_id,
            "exp": int(time.time()) + 3600,
            "jti": secrets.token_urlsafe(16),
        }
        token = self.key.sign(claims)
        self.issued.add(token)
        return web.json_response(
            {"token_type": "Bearer", "expires_in": 3600, "access_token": token}
        )

    def signed(self, **overrides: Any) -> str:
        """A token as the Bot Connector signs a delivery to the bot; `overrides` change its
        claims (None drops one)."""
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": ISSUER,
            "aud": self.app_id,
            "serviceurl": f"{self.url}/",
            "nbf": now - 5,
            "iat": now - 5,
            "exp": now + 3600,
        }
        claims |= overrides
        return self.key.sign({k: v for k, v in claims.items() if v is not None})

    # --- the connector ----------------------------------------------------------------------

    def _authorized(self, request: web.Request) -> web.Response | None:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme != "Bearer" or token not in self.issued:
            return web.json_response({"error": {"code": "Unauthorized"}}, status=401)
        if "cid" not in request.match_info:
            return None
        if request.match_info["cid"].partition(";")[0] not in self.conversations:
            return web.json_response({"error": {"code": "ConversationNotFound"}}, status=404)
        return None

    def _card(self, sent: bytes) -> dict[str, Any]:
        """The card of a message as the connector received it; Teams refuses a message over
        its size limit as sent, the activity around the card and its mentions too."""
        if len(sent) > MAX_MESSAGE_BYTES:
            raise CardRefused(f"the message is over {MAX_MESSAGE_BYTES} bytes as sent")
        body = json.loads(sent)
        attachments = body.get("attachments") if isinstance(body, dict) else None
        if not isinstance(attachments, list) or len(attachments) != 1:
            raise CardRefused("a message with one card is expected")
        attachment = attachments[0]
        if attachment.get("contentType") != CARD:
            raise CardRefused(f"content type {attachment.get('contentType')!r}")
        check_card(attachment.get("content"))
        card: dict[str, Any] = attachment["content"]
        return card

    async def _create(self, request: web.Request) -> web.Response:
        if (refusal := self._authorized(request)) is not None:
            return refusal
        try:
            card = self._card(await request.read())
        except CardRefused as error:
            self.refused.append(str(error))
            return web.json_response(
                {"error": {"code": "BadSyntax", "message": str(error)}}, status=400
            )
        conversation, _, thread = request.match_info["cid"].partition(";messageid=")
        strangers = [m for m in mentioned(card) if m not in self.members[conversation]]
        if strangers:
            return web.json_response({"error": {"code": "BadArgument"}}, status=400)
        message = Posted(conversation, f"1{time.time_ns()}", card, [card], thread or None)
        async with self._changed:
            self.posted[message.id] = message
            self._changed.notify_all()
        return web.json_response({"id": message.id}, status=201)

    async def _update(self, request: web.Request) -> web.Response:
        if (refusal := self._authorized(request)) is not None:
            return refusal
        if self.updates_to_refuse:
            wait = self.updates_to_refuse.pop(0)
            self.update_statuses.append(429)
            return web.json_response(
                {"error": {"code": "Throttled"}}, status=429, headers={"Retry-After": f"{wait:g}"}
            )
        if self.updates_to_fail:
            status, code = self.updates_to_fail.pop(0)
            self.update_statuses.append(status)
            return web.json_response({"error": {"code": code, "message": code}}, status=status)
        message = self.posted.get(request.match_info["aid"])
        if message is None or message.conversation != request.match_info["cid"]:
            return web.json_response({"error": {"code": "ActivityNotFound"}}, status=404)
        try:
            card = self._card(await request.read())
        except CardRefused as error:
            self.refused.append(str(error))
            return web.json_response(
                {"error": {"code": "BadSyntax", "message": str(error)}}, status=400
            )
        self.update_statuses.append(200)
        async with self._changed:
            message.card = card
            message.versions.append(card)
            self._changed.notify_all()
        return web.json_response({"id": message.id})

    async def _start_chat(self, request: web.Request) -> web.Response:
        """Teams' createConversation for a personal chat: one person of the tenant who has
        the app; the same chat each time."""
        if (refusal := self._authorized(request)) is not None:
            return refusal
        body = await request.json()
        members = body.get("members") or []
        tenant = body.get("tenantId") or (body.get("channelData") or {}).get("tenant", {}).get("id")
        if body.get("isGroup") or len(members) != 1 or tenant != TENANT:
            return web.json_response({"error": {"code": "BadArgument"}}, status=400)
        person = self.installed.get(members[0].get("id"))
        if person is None:
            return web.json_response(
                {"error": {"code": "Forbidden", "message": "the bot is not installed"}}, status=403
            )
        chat = f"a:chat-{person.aad_id}"
        self.conversations.add(chat)
        self.members[chat] = {person.aad_id: person}
        return web.json_response({"id": chat}, status=201)

    async def _member(self, request: web.Request) -> web.Response:
        if (refusal := self._authorized(request)) is not None:
            return refusal
        self.member_lookups.append((request.match_info["cid"], request.match_info["mid"]))
        person = self.members[request.match_info["cid"]].get(request.match_info["mid"])
        if person is None:
            return web.json_response(
                {"error": {"code": "MemberNotFoundInConversation"}}, status=404
            )
        return web.json_response(
            {"id": f"29:{person.aad_id}", "name": person.name, "aadObjectId": person.aad_id}
        )

    async def wait_for_message(self, conversation: str, count: int = 1) -> Posted:
        """The `count`th message posted in `conversation`."""
        async with asyncio.timeout(10), self._changed:
            await self._changed.wait_for(
                lambda: (
                    len([m for m in self.posted.values() if m.conversation == conversation])
                    >= count
                )
            )
        return [m for m in self.posted.values() if m.conversation == conversation][count - 1]

    async def wait_for_card(self, message: Posted, holds: Any) -> dict[str, Any]:
        async with asyncio.timeout(10), self._changed:
            await self._changed.wait_for(lambda: holds(message.card))
        return message.card

    # --- people pressing ------------------------------------------------------------------

    async def press(
        self,
        bot_url: str,
        message: Posted,
        person: Person,
        action: dict[str, Any],
        inputs: dict[str, str] | None = None,
        token: str | None = None,
        activity_id: str | None = None,
    ) -> tuple[int, Any]:
        """A person presses an Action.Execute on `message` (as it is or was), having changed
        the `inputs` named (the rest hold what the card gave them): Teams merges the values of
        every input the action sends into its data (`cards.associated_inputs`) and delivers an
        `adaptiveCard/action` invoke, signed. The client checks those inputs first, as Teams
        does, and sends nothing they refuse (ClientRefused)."""
        # A person may still see a card since replaced, and press on it.
        seen = next((card for card in reversed(message.versions) if on_card(card, action)), None)
        if seen is None:
            raise ValueError(f"the action {action.get('title')!r} is on no card of the message")
        associated = associated_inputs(seen, action)
        sent = sent_values(associated, inputs or {})
        refusal = client_refusal(associated, sent)
        if refusal is not None:
            raise ClientRefused(refusal)
        data = {**action.get("data", {}), **sent}
        return await self.deliver(
            bot_url, message, person, action["verb"], data, token=token, activity_id=activity_id
        )

    async def deliver(
        self,
        bot_url: str,
        message: Posted,
        person: Person,
        verb: str,
        data: dict[str, Any],
        token: str | None = None,
        activity_id: str | None = None,
    ) -> tuple[int, Any]:
        """An `adaptiveCard/action` invoke on `message` with this `verb` and `data` as given,
        signed: what a tampered client may send, which no card's press does (`press`)."""
        activity = {
            "type": "invoke",
            "name": "adaptiveCard/action",
            # The same id again: the connector delivering the same press once more.
            "id": activity_id or uuid.uuid4().hex,
            "channelId": CHANNEL,
            "serviceUrl": f"{self.url}/",
            "from": {
                "id": f"29:{person.aad_id}",
                "aadObjectId": person.aad_id,
                "name": person.name,
            },
            "recipient": {"id": f"28:{self.app_id}", "name": "askbridge"},
            "conversation": {"id": message.conversation, "tenantId": TENANT},
            "replyToId": message.id,
            "value": {
                "action": {"type": "Action.Execute", "verb": verb, "data": data},
                "trigger": "manual",
            },
        }
        headers = {"Authorization": f"Bearer {token if token is not None else self.signed()}"}
        async with (
            aiohttp.ClientSession() as http,
            http.post(f"{bot_url}/teams/messages", json=activity, headers=headers) as response,
        ):
            body = await response.json(content_type=None) if response.content_length else None
            return response.status, body
