"""The floor: a bare slack-bolt app that does the least a click→agent path can do.

    SLACK_BOT_TOKEN=… SLACK_API_URL=… SLACK_SIGNING_SECRET=… python -m tests.bench.floor
    (or SLACK_APP_TOKEN=… for Socket Mode)

It is built like askbridge's Slack runtime (one `AsyncApp`, `process_before_response=False`,
one listener for every action_id, the same aiohttp adapter in HTTP mode and the same
`AsyncSocketModeHandler` in Socket Mode, one shared Web API session) and its agents wait the
way askbridge's do, with an HTTP long-poll on the same kind of aiohttp server:

    POST /ask {"key"}       post askbridge's message for the same question → {"channel", "ts"}
    GET  /wait/{key}?wait=s the agent's long-poll: returns the answer once the button is clicked
    GET  /waiting           {"waiting": n}: long-polls now held

The message is askbridge's own for `DEPLOY` (`deploy_message.json`, which `tests/test_bench.py`
keeps equal to what askbridge renders), so a click on Approve sends both sides the same signed
`block_actions`, of the same size. What it leaves out is everything askbridge adds: storing the
answer durably, checking who may answer, updating the message, the audit trail. A click is
acked, then wakes the long-poll of the key its action_id names, as askbridge's does.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.app.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from tests.bench.children import serve_until_told_to_stop

ANY_ACTION = re.compile(".*")
MAX_WAIT_S = 300.0
MESSAGE = (Path(__file__).parent / "deploy_message.json").read_text()
MESSAGE_KEY = "bench-key"
"""The request id in `MESSAGE`'s action_ids, where each message has its own key."""


def message(key: str) -> dict[str, Any]:
    """askbridge's message for `DEPLOY`, its action_ids naming `key`."""
    found: dict[str, Any] = json.loads(MESSAGE.replace(MESSAGE_KEY, key))
    return found


class Waiters:
    """Answers by key: a long-poll waits on a future; a click that came first is kept."""

    def __init__(self) -> None:
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.answered: dict[str, dict[str, Any]] = {}

    def wake(self, key: str, answer: dict[str, Any]) -> None:
        waiter = self.pending.pop(key, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(answer)
        else:
            self.answered[key] = answer

    async def wait(self, key: str, timeout_s: float) -> dict[str, Any] | None:
        if key in self.answered:
            return self.answered.pop(key)
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[key] = waiter
        try:
            async with asyncio.timeout(timeout_s):
                return await waiter
        except TimeoutError:
            return None
        finally:
            if self.pending.get(key) is waiter:
                del self.pending[key]


class Floor:
    def __init__(self, environ: dict[str, str]) -> None:
        self.app_token = environ.get("SLACK_APP_TOKEN")
        self.client = AsyncWebClient(
            token=environ["SLACK_BOT_TOKEN"], base_url=environ["SLACK_API_URL"]
        )
        self.app = AsyncApp(
            client=self.client,
            signing_secret=environ.get("SLACK_SIGNING_SECRET", ""),
            process_before_response=False,
            name="bench-floor-slack-bolt",
        )
        self.app.action(ANY_ACTION)(self.on_action)
        self.waiters = Waiters()
        self.socket: AsyncSocketModeHandler | None = None

    async def on_action(self, ack: Any, body: dict[str, Any]) -> None:
        await ack()
        action = body["actions"][0]
        key = action["action_id"].split("|")[1]
        answer = {"key": key, "answer": action["value"], "by": body["user"]["id"]}
        self.waiters.wake(key, answer)

    async def events(self, request: web.Request) -> web.Response:
        incoming = await to_bolt_request(request)
        response = await self.app.async_dispatch(incoming)
        return await to_aiohttp_response(response)

    async def ask(self, request: web.Request) -> web.Response:
        body: dict[str, Any] = await request.json()
        key = str(body["key"])
        payload = message(key)
        posted = await self.client.chat_postMessage(
            channel=str(body["channel"]), text=payload["text"], blocks=payload["blocks"]
        )
        return web.json_response({"channel": posted["channel"], "ts": posted["ts"]}, status=201)

    async def wait(self, request: web.Request) -> web.Response:
        seconds = min(float(request.query.get("wait", "0")), MAX_WAIT_S)
        key = request.match_info["key"]
        answer = await self.waiters.wait(key, seconds)
        if answer is None:
            return web.json_response({"key": key, "status": "waiting"})
        return web.json_response({**answer, "status": "answered"})

    async def waiting(self, request: web.Request) -> web.Response:
        return web.json_response({"waiting": len(self.waiters.pending)})

    async def start(self, app: web.Application) -> None:
        self.client.session = aiohttp.ClientSession()
        if self.app_token:
            self.socket = AsyncSocketModeHandler(self.app, app_token=self.app_token)
            await self.socket.connect_async()  # type: ignore[no-untyped-call]
        else:
            app.router.add_post("/slack/events", self.events)

    async def stop(self) -> None:
        if self.socket is not None:
            await self.socket.close_async()  # type: ignore[no-untyped-call]
        if self.client.session is not None:
            await self.client.session.close()


async def serve() -> None:
    floor = Floor(dict(os.environ))
    app = web.Application()
    app.router.add_post("/ask", floor.ask)
    app.router.add_get("/wait/{key}", floor.wait)
    app.router.add_get("/waiting", floor.waiting)
    await floor.start(app)
    try:
        await serve_until_told_to_stop(app, "floor")
    finally:
        await floor.stop()


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(serve())


if __name__ == "__main__":
    main()
