"""A crash right after a request ends still sends its webhook: the delivery was written with
the ending, and the restarted `askbridge serve` sends it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
from standardwebhooks import Webhook

from tests.conftest import DEPLOY
from tests.faults.conftest import MakeCrashable, ask
from tests.test_webhooks import HIT_S, SAME_MACHINE, SECRET, receiver


async def webhook_events(
    http: aiohttp.ClientSession, url: str, request_id: str
) -> list[dict[str, Any]]:
    """The request's webhook attempts once one is recorded, woken by the change feed."""
    version = -1
    async with asyncio.timeout(HIT_S):
        while True:
            async with http.get(f"{url}/web/changes?since={version}") as response:
                version = (await response.json())["version"]
            async with http.get(f"{url}/v1/questions/{request_id}/events") as response:
                events = (await response.json())["events"]
            found = [e for e in events if e["kind"] == "webhook"]
            if found:
                return found


async def test_a_crash_after_the_ending_loses_no_webhook(
    crashable: MakeCrashable, http: aiohttp.ClientSession
) -> None:
    server = crashable()
    server.server.env["ASKBRIDGE_WEBHOOK_SECRET"] = SECRET
    server.server.env["ASKBRIDGE_WEBHOOK_ALLOW"] = SAME_MACHINE
    async with receiver([200]) as hook:
        url = await server.start(crash_at="finish.recorded")
        body = {"request_id": "ask_crash", "questions": [DEPLOY], "callback_url": hook.url}
        await ask(http, url, body)
        try:
            async with http.delete(f"{url}/v1/questions/ask_crash") as response:
                await response.read()
        except aiohttp.ClientError:
            pass  # the server died while answering
        await server.crashed("finish.recorded")
        assert hook.seen == []

        url = await server.start()
        hit = await hook.next()
        (attempt,) = await webhook_events(http, url, "ask_crash")
    sent = json.loads(hit.body)
    assert (sent["request_id"], sent["status"]) == ("ask_crash", "withdrawn")
    # The server runs on the system clock: the library's one call checks it all.
    assert Webhook(SECRET).verify(hit.body, hit.headers) == sent
    assert (attempt["data"]["result"], attempt["data"]["status"]) == ("delivered", 200)
