"""The REST API under /api/v10: the routes discord.py calls, logged and rate-limitable."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from .httpkit import (
    UNKNOWN_CHANNEL,
    UNKNOWN_MESSAGE,
    UNKNOWN_USER,
    ApiError,
    json_response,
    read_body,
    require_object,
    unknown,
)
from .messages import Messenger
from .payloads import channel_payload, user_payload
from .ratelimits import RateLimits
from .registry import Channel, Registry, UnknownEntity, User
from .responses import InteractionResponder
from .store import Message, MessageStore

API_PREFIX = "/api/v10"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class RecordedRequest:
    """One REST call as the emulator saw it; `route` is the template, `path` the real one."""

    method: str
    route: str
    path: str
    query: dict[str, str]
    body: Any
    status: int = 0

    def __str__(self) -> str:
        return f"{self.method} {self.path} -> {self.status}"


class RestApi:
    def __init__(
        self,
        *,
        registry: Registry,
        store: MessageStore,
        messenger: Messenger,
        responder: InteractionResponder,
        rate_limits: RateLimits,
        bot_token: str,
        application_id: int,
        app_owner: User,
        gateway_url: Callable[[], str],
        public_key: str,
        endpoint_urls: Callable[[], list[str]],
        on_thread_update: Callable[[Channel], None],
    ) -> None:
        self._registry = registry
        self._store = store
        self._messenger = messenger
        self._responder = responder
        self._rate_limits = rate_limits
        self._token = bot_token
        self._application_id = application_id
        self._owner = app_owner
        self._gateway_url = gateway_url
        self._public_key = public_key
        self._endpoint_urls = endpoint_urls
        self._on_thread_update = on_thread_update
        self.log: list[RecordedRequest] = []

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._middleware])
        bot_routes = [
            web.get("/users/@me", self._get_me),
            web.get("/oauth2/applications/@me", self._get_application),
            web.get("/gateway", self._get_gateway),
            web.get("/gateway/bot", self._get_gateway_bot),
            web.post("/users/@me/channels", self._create_dm),
            web.get("/channels/{channel_id}", self._get_channel),
            web.patch("/channels/{channel_id}", self._edit_channel),
            web.get("/channels/{channel_id}/messages", self._list_messages),
            web.post("/channels/{channel_id}/messages", self._post_message),
            web.get("/channels/{channel_id}/messages/{message_id}", self._get_message),
            web.patch("/channels/{channel_id}/messages/{message_id}", self._edit_message),
            web.delete("/channels/{channel_id}/messages/{message_id}", self._delete_message),
        ]
        webhook = "/webhooks/{application_id}/{token}"
        token_routes = [
            web.post("/interactions/{interaction_id}/{token}/callback", self._callback),
            web.post(webhook, self._followup),
            web.get(webhook + "/messages/@original", self._get_webhook_message),
            web.patch(webhook + "/messages/@original", self._edit_webhook_message),
            web.delete(webhook + "/messages/@original", self._delete_webhook_message),
            web.get(webhook + "/messages/{message_id}", self._get_webhook_message),
            web.patch(webhook + "/messages/{message_id}", self._edit_webhook_message),
            web.delete(webhook + "/messages/{message_id}", self._delete_webhook_message),
        ]
        app.add_routes(bot_routes + token_routes)
        return app

    # --- middleware: log, injected 429s, auth, Discord-shaped errors ----------------

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        path = request.path.removeprefix(API_PREFIX)
        resource = request.match_info.route.resource
        route = resource.canonical.removeprefix(API_PREFIX) if resource is not None else path
        record = RecordedRequest(request.method, route, path, dict(request.query), None)
        self.log.append(record)
        response: web.StreamResponse
        try:
            record.body = await read_body(request)
            limited = self._rate_limits.take(request.method, path)
            if limited is not None:
                response = limited
            else:
                if not _token_route(path) and not self._authorized(request):
                    raise ApiError(401, 0, "401: Unauthorized")
                response = await handler(request)
        except ApiError as exc:
            response = exc.response()
        except web.HTTPException as exc:
            response = json_response(
                {"message": f"{exc.status}: {exc.reason}", "code": 0}, status=exc.status
            )
        except UnknownEntity as exc:
            response = json_response({"message": str(exc), "code": 10000}, status=404)
        record.status = response.status
        return response

    def _authorized(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bot {self._token}"

    # --- login -------------------------------------------------------------------

    async def _get_me(self, request: web.Request) -> web.Response:
        bot = user_payload(self._registry.bot)
        return json_response(
            {**bot, "verified": True, "mfa_enabled": False, "flags": 0, "locale": "en-US"}
        )

    async def _get_application(self, request: web.Request) -> web.Response:
        return json_response(
            {
                "id": str(self._application_id),
                "name": self._registry.bot.username,
                "description": "",
                "icon": None,
                "bot_public": True,
                "bot_require_code_grant": False,
                "owner": user_payload(self._owner),
                "team": None,
                "verify_key": self._public_key,
                "flags": 0,
                "summary": "",
                "rpc_origins": [],
                "tags": [],
                "redirect_uris": [],
                "interactions_endpoint_url": next(iter(self._endpoint_urls()), None),
                "approximate_guild_count": len(self._registry.guilds),
                "bot": user_payload(self._registry.bot),
            }
        )

    async def _get_gateway(self, request: web.Request) -> web.Response:
        return json_response({"url": self._gateway_url()})

    async def _get_gateway_bot(self, request: web.Request) -> web.Response:
        limit = {"total": 1000, "remaining": 999, "reset_after": 14_400_000, "max_concurrency": 1}
        return json_response(
            {"url": self._gateway_url(), "shards": 1, "session_start_limit": limit}
        )

    # --- channels and messages ---------------------------------------------------------

    async def _create_dm(self, request: web.Request) -> web.Response:
        body = require_object(await read_body(request))
        try:
            user = self._registry.user(int(body.get("recipient_id") or 0))
        except (UnknownEntity, ValueError):
            raise unknown("User", UNKNOWN_USER) from None
        channel = self._registry.dm_channel(user.id)
        return json_response(channel_payload(self._registry, channel))

    async def _get_channel(self, request: web.Request) -> web.Response:
        return json_response(channel_payload(self._registry, self._channel(request)))

    async def _edit_channel(self, request: web.Request) -> web.Response:
        """Only what the bot's permissions allow: unarchiving a thread that is not locked,
        which needs no more than Send Messages; anything else needs Manage Channels or
        Manage Threads, which the bot is not given."""
        channel = self._channel(request)
        body = require_object(await read_body(request))
        if not channel.is_thread or body != {"archived": False} or channel.locked:
            raise ApiError(403, 50013, "Missing Permissions")
        channel.archived = False
        self._on_thread_update(channel)
        return json_response(channel_payload(self._registry, channel))

    async def _list_messages(self, request: web.Request) -> web.Response:
        """Newest first, as Discord lists them: the newest `limit` (before `before`), or with
        `after` the oldest `limit` after it."""
        channel = self._channel(request)
        limit = max(1, min(100, _int(request.query.get("limit", "50"))))
        found = self._store.in_channel(channel.id)
        if "before" in request.query:
            found = [m for m in found if m.id < _int(request.query["before"])]
        if "after" in request.query:
            found = [m for m in found if m.id > _int(request.query["after"])][:limit]
        newest_first = list(reversed(found))[:limit]
        return json_response([m.payload for m in newest_first])

    async def _post_message(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        body = require_object(await read_body(request))
        recipient = channel.recipient_id
        if channel.is_dm and recipient is not None and self._registry.user(recipient).dms_blocked:
            raise ApiError(403, 50007, "Cannot send messages to this user")
        if channel.is_thread and channel.archived:
            if channel.locked:
                raise ApiError(400, 50083, "Thread is archived")
            channel.archived = False
        message = self._messenger.post(channel, body, where="POST /channels/{channel_id}/messages")
        return json_response(message.payload)

    async def _get_message(self, request: web.Request) -> web.Response:
        return json_response(self._message(request).payload)

    async def _edit_message(self, request: web.Request) -> web.Response:
        message = self._message(request)
        channel = self._channel(request)
        if channel.is_thread and channel.archived:
            # Sending unarchives a thread; editing does not (error 50083's own example).
            raise ApiError(400, 50083, "Thread is archived")
        body = require_object(await read_body(request))
        where = "PATCH /channels/{channel_id}/messages/{message_id}"
        return json_response(self._messenger.edit(message, body, where=where).payload)

    async def _delete_message(self, request: web.Request) -> web.Response:
        self._messenger.delete(self._message(request))
        return web.Response(status=204)

    # --- interaction callback and webhooks --------------------------------------------

    async def _callback(self, request: web.Request) -> web.StreamResponse:
        body = require_object(await read_body(request))
        interaction_id = _int(request.match_info["interaction_id"])
        result = self._responder.callback(interaction_id, request.match_info["token"], body)
        if request.query.get("with_response") in ("1", "true", "True"):
            return json_response(result)
        return web.Response(status=204)

    async def _followup(self, request: web.Request) -> web.StreamResponse:
        body = require_object(await read_body(request))
        app_id, token = _webhook(request)
        message = self._responder.followup(app_id, token, body)
        if request.query.get("wait") in ("1", "true", "True"):
            return json_response(message.payload)
        return web.Response(status=204)

    async def _get_webhook_message(self, request: web.Request) -> web.Response:
        app_id, token = _webhook(request)
        message = self._responder.webhook_message(app_id, token, _webhook_message_id(request))
        return json_response(message.payload)

    async def _edit_webhook_message(self, request: web.Request) -> web.Response:
        body = require_object(await read_body(request))
        app_id, token = _webhook(request)
        message = self._responder.edit_webhook_message(
            app_id, token, _webhook_message_id(request), body
        )
        return json_response(message.payload)

    async def _delete_webhook_message(self, request: web.Request) -> web.Response:
        app_id, token = _webhook(request)
        self._responder.delete_webhook_message(app_id, token, _webhook_message_id(request))
        return web.Response(status=204)

    # --- lookups -------------------------------------------------------------------

    def _channel(self, request: web.Request) -> Channel:
        channel = self._registry.channels.get(_int(request.match_info["channel_id"]))
        if channel is None:
            raise unknown("Channel", UNKNOWN_CHANNEL)
        return channel

    def _message(self, request: web.Request) -> Message:
        channel = self._channel(request)
        message = self._store.get(_int(request.match_info["message_id"]))
        # Ephemeral messages exist only for the interaction token, never for the bot token.
        if message is None or message.channel_id != channel.id or message.is_ephemeral:
            raise unknown("Message", UNKNOWN_MESSAGE)
        return message


def _token_route(path: str) -> bool:
    return path.startswith(("/interactions/", "/webhooks/", "/gateway"))


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ApiError(
            400,
            50035,
            "Invalid Form Body",
            {
                "id": {
                    "_errors": [
                        {"code": "NUMBER_TYPE_COERCE", "message": f"{value!r} is not snowflake."}
                    ]
                }
            },
        ) from None


def _webhook(request: web.Request) -> tuple[int, str]:
    return _int(request.match_info["application_id"]), request.match_info["token"]


def _webhook_message_id(request: web.Request) -> str:
    return request.match_info.get("message_id", "@original")
