"""`POST|GET /api/<method>`: the Web API methods askbridge uses, with Slack's errors and quirks."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from aiohttp import web

from .api_log import ApiCall, ApiLog, BlockGate
from .types import Block, JSONDict
from .views import Views
from .workspace import Channel, Ephemeral, Workspace

logger = logging.getLogger(__name__)

TokenKind = Literal["bot", "app"]
Handler = Callable[[JSONDict], Awaitable[JSONDict]]


class SlackError(Exception):
    """A Slack error answer: HTTP 200 with `{"ok": false, "error": ...}`."""

    def __init__(self, error: str, **extra: Any) -> None:
        super().__init__(error)
        self.body: JSONDict = {"ok": False, "error": error, **extra}


@dataclass(frozen=True)
class Method:
    handler: Handler
    token: TokenKind


JSON_ARGUMENTS = ("blocks", "attachments", "metadata", "view")


async def read_arguments(request: web.Request) -> JSONDict:
    """Query string, form body and JSON body merged, as Slack accepts all three."""
    arguments: JSONDict = dict(request.query)
    if request.can_read_body:
        if request.content_type == "application/json":
            body = await request.json()
            if isinstance(body, dict):
                arguments.update(body)
        else:
            form = await request.post()
            arguments.update({k: v for k, v in form.items() if isinstance(v, str)})
    return arguments


def bearer_token(request: web.Request, arguments: JSONDict) -> str | None:
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer "):
        return header.removeprefix("Bearer ").strip()
    token = arguments.pop("token", None)
    return token if isinstance(token, str) else None


class WebApi:
    def __init__(
        self,
        workspace: Workspace,
        log: ApiLog,
        gate: BlockGate,
        views: Views,
        socket_url: Callable[[], str],
    ) -> None:
        self.workspace = workspace
        self.log = log
        self.gate = gate
        self.views = views
        self.socket_url = socket_url
        self.methods: dict[str, Method] = {
            "auth.test": Method(self.auth_test, "bot"),
            "apps.connections.open": Method(self.apps_connections_open, "app"),
            "chat.postMessage": Method(self.chat_post_message, "bot"),
            "chat.update": Method(self.chat_update, "bot"),
            "chat.delete": Method(self.chat_delete, "bot"),
            "chat.postEphemeral": Method(self.chat_post_ephemeral, "bot"),
            "chat.getPermalink": Method(self.chat_get_permalink, "bot"),
            "conversations.open": Method(self.conversations_open, "bot"),
            "conversations.members": Method(self.conversations_members, "bot"),
            "conversations.replies": Method(self.conversations_replies, "bot"),
            "conversations.history": Method(self.conversations_history, "bot"),
            "users.info": Method(self.users_info, "bot"),
            "usergroups.users.list": Method(self.usergroups_users_list, "bot"),
            "views.open": Method(self.views_open, "bot"),
            "views.update": Method(self.views_update, "bot"),
        }

    # ---- transport ---------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.Response:
        name = request.match_info["method"]
        try:
            arguments = await read_arguments(request)
        except (ValueError, json.JSONDecodeError):
            return web.json_response({"ok": False, "error": "invalid_json"})
        token = bearer_token(request, arguments)
        status, body, headers = await self._answer(name, arguments, token)
        self.log.record(ApiCall(name, arguments, token, status, body))
        await self.workspace.notify()  # tests wait on calls, failed ones too
        if not body.get("ok"):
            logger.info("%s -> %s %s", name, status, body.get("error"))
        return web.json_response(body, status=status, headers=headers)

    async def _answer(
        self, name: str, arguments: JSONDict, token: str | None
    ) -> tuple[int, JSONDict, dict[str, str]]:
        fault = self.log.take_fault(name)
        if fault is not None:
            return fault.status, fault.body(), fault.headers()
        method = self.methods.get(name)
        if method is None:
            return 200, {"ok": False, "error": "unknown_method"}, {}
        try:
            self._authorize(method, token)
            _decode_json_arguments(arguments)
            return 200, await method.handler(arguments), {}
        except SlackError as error:
            return 200, error.body, {}

    def _authorize(self, method: Method, token: str | None) -> None:
        identity = self.workspace.identity
        if not token:
            raise SlackError("not_authed")
        kinds: dict[str, TokenKind] = {identity.bot_token: "bot", identity.app_token: "app"}
        kind = kinds.get(token)
        if kind is None:
            raise SlackError("invalid_auth")
        if kind != method.token:
            raise SlackError("not_allowed_token_type")

    # ---- helpers -----------------------------------------------------------------------------

    def _channel(self, arguments: JSONDict) -> Channel:
        ref = arguments.get("channel")
        channel = self.workspace.resolve_channel(ref) if isinstance(ref, str) else None
        if channel is None:
            raise SlackError("channel_not_found")
        return channel

    def _content(self, method: str, arguments: JSONDict) -> tuple[str | None, list[Block] | None]:
        text = arguments.get("text")
        blocks = arguments.get("blocks")
        if blocks is not None:
            errors = self.gate.check(method, blocks)
            if errors:
                raise SlackError(
                    "invalid_blocks",
                    errors=errors,
                    response_metadata={"messages": [f"[ERROR] {e}" for e in errors]},
                )
            blocks = self.gate.normalize(blocks)
        return (text if isinstance(text, str) else None), blocks

    # ---- methods -----------------------------------------------------------------------------

    async def auth_test(self, arguments: JSONDict) -> JSONDict:
        identity = self.workspace.identity
        return {
            "ok": True,
            "url": f"https://{identity.team_domain}.slack.com/",
            "team": identity.team_name,
            "user": identity.bot_name,
            "team_id": identity.team_id,
            "user_id": identity.bot_user_id,
            "bot_id": identity.bot_id,
            "is_enterprise_install": False,
        }

    async def apps_connections_open(self, arguments: JSONDict) -> JSONDict:
        return {"ok": True, "url": self.socket_url()}

    async def chat_post_message(self, arguments: JSONDict) -> JSONDict:
        channel = self._channel(arguments)
        text, blocks = self._content("chat.postMessage", arguments)
        if not text and not blocks:
            raise SlackError("no_text")
        thread_ts = arguments.get("thread_ts") or None
        message = await self.workspace.post(channel.id, text or "", blocks or [], thread_ts)
        return {"ok": True, "channel": channel.id, "ts": message.ts, "message": message.to_slack()}

    async def chat_update(self, arguments: JSONDict) -> JSONDict:
        channel = self._channel(arguments)
        ts = arguments.get("ts")
        if not isinstance(ts, str) or self.workspace.latest(channel.id, ts) is None:
            raise SlackError("message_not_found")
        text, blocks = self._content("chat.update", arguments)
        if not text and not blocks:
            # Slack replaces what it is given; a message of nothing is refused, as on posting.
            raise SlackError("no_text")
        message = await self.workspace.update(channel.id, ts, text, blocks)
        if message is None:
            raise SlackError("message_not_found")
        return {
            "ok": True,
            "channel": channel.id,
            "ts": ts,
            "text": message.text,
            "message": message.to_slack(),
        }

    async def chat_delete(self, arguments: JSONDict) -> JSONDict:
        channel = self._channel(arguments)
        ts = arguments.get("ts")
        if not isinstance(ts, str) or await self.workspace.delete(channel.id, ts) is None:
            raise SlackError("message_not_found")
        return {"ok": True, "channel": channel.id, "ts": ts}

    async def chat_post_ephemeral(self, arguments: JSONDict) -> JSONDict:
        channel = self._channel(arguments)
        user = arguments.get("user")
        if not isinstance(user, str) or user not in self.workspace.users:
            raise SlackError("user_not_found")
        if not channel.has_member(user):
            raise SlackError("user_not_in_channel")
        text, blocks = self._content("chat.postEphemeral", arguments)
        if not text and not blocks:
            raise SlackError("no_text")
        ts = self.workspace.next_ts()
        note = Ephemeral(
            user=user,
            channel=channel.id,
            text=text or "",
            blocks=blocks or [],
            message_ts=ts,
            via="chat.postEphemeral",
            thread_ts=arguments.get("thread_ts") or None,
        )
        await self.workspace.add_ephemeral(note)
        return {"ok": True, "message_ts": ts}

    async def chat_get_permalink(self, arguments: JSONDict) -> JSONDict:
        channel = self._channel(arguments)
        ts = arguments.get("message_ts")
        if not isinstance(ts, str) or self.workspace.latest(channel.id, ts) is None:
            raise SlackError("message_not_found")
        domain = self.workspace.identity.team_domain
        link = f"https://{domain}.slack.com/archives/{channel.id}/p{ts.replace('.', '')}"
        return {"ok": True, "channel": channel.id, "permalink": link}

    async def conversations_open(self, arguments: JSONDict) -> JSONDict:
        users = arguments.get("users")
        ids = users if isinstance(users, list) else str(users or "").split(",")
        ids = [str(u).strip() for u in ids if str(u).strip()]
        if not ids:
            raise SlackError("users_list_not_supplied")
        if len(ids) > 1:
            raise SlackError("not_supported", detail="the emulator opens one-person DMs only")
        if ids[0] not in self.workspace.users:
            raise SlackError("user_not_found")
        channel = self.workspace.open_dm(ids[0])
        return {"ok": True, "channel": {"id": channel.id}}

    async def conversations_members(self, arguments: JSONDict) -> JSONDict:
        channel = self._channel(arguments)
        members = sorted(channel.members if channel.members is not None else self.workspace.users)
        return {"ok": True, "members": members, "response_metadata": {"next_cursor": ""}}

    async def conversations_replies(self, arguments: JSONDict) -> JSONDict:
        channel = self._channel(arguments)
        ts = arguments.get("ts")
        thread = self.workspace.thread(channel.id, ts) if isinstance(ts, str) else []
        if not thread:
            raise SlackError("thread_not_found")
        return {
            "ok": True,
            "messages": [m.to_slack() for m in thread],
            "has_more": False,
            "response_metadata": {"next_cursor": ""},
        }

    async def conversations_history(self, arguments: JSONDict) -> JSONDict:
        """The channel's messages (not thread replies), newest first, between `oldest` and
        `latest` (exclusive unless `inclusive`), `limit` a page, paged with `cursor`."""
        channel = self._channel(arguments)
        inclusive = str(arguments.get("inclusive", "")).lower() in ("1", "true")
        oldest = _number(arguments.get("oldest"), 0.0)
        latest = _number(arguments.get("latest"), float("inf"))
        found = [
            m
            for m in reversed(self.workspace.messages(channel.id))
            if m.thread_ts in (None, m.ts)
            and (oldest <= float(m.ts) <= latest if inclusive else oldest < float(m.ts) < latest)
        ]
        limit = _number(arguments.get("limit"), 100)
        start = int(_number(arguments.get("cursor"), 0))
        end = start + max(1, min(999, int(limit)))
        more = end < len(found)
        return {
            "ok": True,
            "messages": [m.to_slack() for m in found[start:end]],
            "has_more": more,
            "response_metadata": {"next_cursor": str(end) if more else ""},
        }

    async def users_info(self, arguments: JSONDict) -> JSONDict:
        user = self.workspace.users.get(str(arguments.get("user")))
        if user is None:
            raise SlackError("user_not_found")
        return {"ok": True, "user": user.to_slack()}

    async def views_open(self, arguments: JSONDict) -> JSONDict:
        """Open a modal with the trigger id of an interaction: once, within 3 seconds."""
        trigger = self.views.trigger(arguments.get("trigger_id"))
        if trigger is None:
            raise SlackError(
                "invalid_arguments",
                response_metadata={"messages": ["[ERROR] invalid `trigger_id`"]},
            )
        if trigger.used:
            raise SlackError("exchanged_trigger_id")
        if self.views.expired(trigger):
            raise SlackError("expired_trigger_id")
        view = arguments.get("view")
        errors = self.gate.check_view("views.open", view)
        if errors or not isinstance(view, dict):
            raise SlackError(
                "invalid_arguments",
                errors=errors,
                response_metadata={"messages": [f"[ERROR] {e}" for e in errors]},
            )
        opened = await self.views.open(trigger, view)
        return {"ok": True, "view": self.views.to_slack(opened)}

    async def views_update(self, arguments: JSONDict) -> JSONDict:
        """Replace an open modal (by `view_id` or `external_id`); a `hash` that is not the
        view's latest is a conflict, as when two updates race."""
        opened = self.views.find(arguments.get("view_id"), arguments.get("external_id"))
        if opened is None or opened.closed:
            raise SlackError("not_found")
        given = arguments.get("hash")
        if given is not None and given != opened.hashes[-1]:
            raise SlackError("hash_conflict")
        view = arguments.get("view")
        errors = self.gate.check_view("views.update", view)
        if errors or not isinstance(view, dict):
            raise SlackError(
                "invalid_arguments",
                errors=errors,
                response_metadata={"messages": [f"[ERROR] {e}" for e in errors]},
            )
        await self.views.update(opened, view)
        return {"ok": True, "view": self.views.to_slack(opened)}

    async def usergroups_users_list(self, arguments: JSONDict) -> JSONDict:
        members = self.workspace.usergroups.get(str(arguments.get("usergroup")))
        if members is None:
            raise SlackError("no_such_subteam")
        return {"ok": True, "users": list(members)}


def _number(value: object, default: float) -> float:
    """A numeric argument (a `ts`, a limit, our cursor), as Slack reads them: text or number."""
    try:
        return float(str(value)) if value not in (None, "") else default
    except ValueError:
        raise SlackError("invalid_arguments") from None


def _decode_json_arguments(arguments: JSONDict) -> None:
    """Form bodies carry `blocks` as a JSON string; Slack decodes it before looking."""
    for key in JSON_ARGUMENTS:
        value = arguments.get(key)
        if isinstance(value, str):
            try:
                arguments[key] = json.loads(value)
            except json.JSONDecodeError:
                raise SlackError(f"invalid_{key}_format") from None
