"""A small fake of the Anthropic Messages API, as the `claude` CLI calls it: streaming SSE.

The model is a script: each turn is chosen by how many assistant messages the conversation
already holds, so a retried request gets the same turn again. Every request body is kept, so
a test can read the `tool_result` the CLI sent back. Requests the fake does not know are
recorded in `unknown` and answered 404, so a test can assert there were none.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

MODEL = "claude-sonnet-4-5"


@dataclass(frozen=True)
class ToolUse:
    name: str
    input: dict[str, Any]
    id: str = field(default_factory=lambda: f"toolu_{uuid.uuid4().hex[:24]}")


@dataclass(frozen=True)
class Turn:
    """One assistant message: some text, then tool calls (stop_reason tool_use) or none."""

    text: str = ""
    tools: tuple[ToolUse, ...] = ()


Script = Callable[[dict[str, Any]], Turn]


def in_order(*turns: Turn) -> Script:
    """Turn n answers the request whose conversation holds n assistant messages; after the
    last turn, the model says it is done."""

    def script(body: dict[str, Any]) -> Turn:
        said = sum(1 for m in body.get("messages", ()) if m.get("role") == "assistant")
        return turns[said] if said < len(turns) else Turn(text="Done.")

    return script


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every tool_result block in a request's conversation, oldest first."""
    found = []
    for message in body.get("messages", ()):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            found += [b for b in content if b.get("type") == "tool_result"]
    return found


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or () if isinstance(part, dict))


class FakeAnthropic:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.unknown: list[str] = []
        self.changed = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_post("/v1/messages/count_tokens", self._count_tokens)
        app.router.add_route("*", "/{tail:.*}", self._unknown)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def next_request(self, after: int) -> dict[str, Any]:
        """The first request recorded after the first `after` ones."""
        while len(self.requests) <= after:
            self.changed.clear()
            await self.changed.wait()
        return self.requests[after]

    async def _unknown(self, request: web.Request) -> web.Response:
        self.unknown.append(f"{request.method} {request.path_qs}")
        return web.json_response(_error("not_found_error", "not in the fake"), status=404)

    async def _count_tokens(self, request: web.Request) -> web.Response:
        return web.json_response({"input_tokens": 100})

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.changed.set()
        turn = self.script(body) if body.get("tools") else Turn(text="ok")
        if not body.get("stream"):
            return web.json_response(_message(body, turn, complete=True))
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for event in _events(body, turn):
            data = json.dumps(event)
            await response.write(f"event: {event['type']}\ndata: {data}\n\n".encode())
        await response.write_eof()
        return response


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _blocks(turn: Turn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    blocks += [
        {"type": "tool_use", "id": t.id, "name": t.name, "input": t.input} for t in turn.tools
    ]
    return blocks


def _message(body: dict[str, Any], turn: Turn, *, complete: bool) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", MODEL),
        "content": _blocks(turn) if complete else [],
        "stop_reason": ("tool_use" if turn.tools else "end_turn") if complete else None,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20 if complete else 1},
    }


def _events(body: dict[str, Any], turn: Turn) -> Sequence[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": _message(body, turn, complete=False)},
        {"type": "ping"},
    ]
    for index, block in enumerate(_blocks(turn)):
        if block["type"] == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": block["text"]}]
        else:
            start = {**block, "input": {}}
            raw = json.dumps(block["input"])
            cut = len(raw) // 2
            deltas = [
                {"type": "input_json_delta", "partial_json": part}
                for part in (raw[:cut], raw[cut:])
            ]
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": index})
    events += [
        {
            "type": "message_delta",
            "delta": {
                "stop_reason": "tool_use" if turn.tools else "end_turn",
                "stop_sequence": None,
            },
            "usage": {"output_tokens": 20},
        },
        {"type": "message_stop"},
    ]
    return events
