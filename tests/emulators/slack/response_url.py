"""`POST /response/<id>`: the `response_url` of each interaction (what bolt's `respond()` uses).

Like Slack: at most 5 uses within 30 minutes; replies are ephemeral unless
`response_type: "in_channel"`; `replace_original` / `delete_original` act on the clicked message.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .api_log import BlockGate
from .types import JSONDict
from .workspace import Ephemeral, Workspace

MAX_USES = 5
LIFETIME_SECONDS = 30 * 60


@dataclass
class ResponseTarget:
    id: str
    user: str
    channel: str
    message_ts: str
    created_at: float
    uses: int = 0


@dataclass(frozen=True)
class ResponseUrlCall:
    target: ResponseTarget
    body: JSONDict
    status: int
    answer: JSONDict


@dataclass
class ResponseUrls:
    workspace: Workspace
    gate: BlockGate
    clock: Callable[[], float]
    base_url: Callable[[], str]
    calls: list[ResponseUrlCall] = field(default_factory=list)
    _targets: dict[str, ResponseTarget] = field(default_factory=dict)

    def create(self, user: str, channel: str, message_ts: str) -> str:
        target_id = secrets.token_hex(8)
        self._targets[target_id] = ResponseTarget(
            target_id, user, channel, message_ts, created_at=self.clock()
        )
        return f"{self.base_url()}response/{target_id}"

    async def handle(self, request: web.Request) -> web.Response:
        target = self._targets.get(request.match_info["id"])
        if target is None:
            return web.json_response({"ok": False, "error": "invalid_url"}, status=404)
        try:
            body: Any = json.loads(await request.text())
        except json.JSONDecodeError:
            body = None
        if not isinstance(body, dict):
            return web.json_response({"ok": False, "error": "invalid_payload"}, status=400)
        status, answer = await self._answer(target, body)
        self.calls.append(ResponseUrlCall(target, body, status, answer))
        return web.json_response(answer, status=status)

    async def _answer(self, target: ResponseTarget, body: JSONDict) -> tuple[int, JSONDict]:
        if self.clock() - target.created_at > LIFETIME_SECONDS:
            return 404, {"ok": False, "error": "expired_url"}
        if target.uses >= MAX_USES:
            return 404, {"ok": False, "error": "used_url"}
        blocks = body.get("blocks")
        if blocks is not None:
            errors = self.gate.check("response_url", blocks)
            if errors:
                return 400, {"ok": False, "error": "invalid_blocks", "errors": errors}
            blocks = self.gate.normalize(blocks)
        text = str(body.get("text") or "")
        target.uses += 1
        if body.get("delete_original") in (True, "true"):
            await self.workspace.delete(target.channel, target.message_ts)
        elif body.get("replace_original") in (True, "true"):
            await self.workspace.update(target.channel, target.message_ts, text, blocks or [])
        elif body.get("response_type") == "in_channel":
            thread_ts = body.get("thread_ts") or None
            await self.workspace.post(target.channel, text, blocks or [], thread_ts)
        else:
            note = Ephemeral(
                user=target.user,
                channel=target.channel,
                text=text,
                blocks=blocks or [],
                message_ts=self.workspace.next_ts(),
                via="response_url",
                thread_ts=body.get("thread_ts") or None,
            )
            await self.workspace.add_ephemeral(note)
        return 200, {"ok": True}
