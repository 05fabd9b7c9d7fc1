"""Click-to-agent latency through Slack Socket Mode: `python -m tests.bench_slack_click`.

askbridge runs in-process against the local Slack emulator; for each request an agent
long-polls while a simulated person clicks an option, and the time from the click's
delivery to the agent's answer is recorded. The baseline is a bare slack-bolt app on the
same emulator whose listener only acks and resolves a future: the difference is what
askbridge adds (store write, wake-up, HTTP long-poll).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from askbridge.bots.service import Service
from askbridge.bots.settings import Settings
from tests.conftest import DEPLOY
from tests.emulators.slack import SlackEmulator


async def measure(count: int, folder: Path) -> list[float]:
    latencies: list[float] = []
    async with SlackEmulator() as slack, aiohttp.ClientSession() as http:
        slack.add_user("U1", "alice")
        slack.add_channel("C0BENCH", "bench")
        settings = Settings(
            _env_file=None,
            host="127.0.0.1",
            port=0,
            database_url=f"sqlite:///{folder / 'bench.db'}",
            SLACK_BOT_TOKEN=slack.identity.bot_token,
            SLACK_APP_TOKEN=slack.identity.app_token,
            SLACK_API_URL=slack.api_url,
        )
        service = Service(settings)
        await service.start()
        await slack.wait_socket_connected()
        try:
            for index in range(count):
                body: dict[str, Any] = {
                    "request_id": f"bench_{index}",
                    "questions": [DEPLOY],
                    "target": "slack:C0BENCH",
                }
                async with http.post(f"{service.url}/v1/questions", json=body) as response:
                    created = await response.json()
                ref = created["messages"][0]
                message = slack.message(ref["channel"], ref["message_id"])
                poll = asyncio.create_task(
                    http.get(f"{service.url}/v1/questions/bench_{index}?wait=30")
                )
                await asyncio.sleep(0)
                started = time.perf_counter()
                await slack.person("U1").click_button(message, "Approve")
                async with await poll as response:
                    answered = await response.json()
                latencies.append(time.perf_counter() - started)
                assert answered["status"] == "answered"
        finally:
            await service.stop()
    return latencies


async def baseline(count: int) -> list[float]:
    """The same clicks into a bare slack-bolt app that acks and hands the value over."""
    from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
    from slack_bolt.app.async_app import AsyncApp
    from slack_sdk.web.async_client import AsyncWebClient

    latencies: list[float] = []
    async with SlackEmulator() as slack:
        slack.add_user("U1", "alice")
        slack.add_channel("C0BENCH", "bench")
        client = AsyncWebClient(token=slack.identity.bot_token, base_url=slack.api_url)
        app = AsyncApp(client=client, name="bench-bare-bolt")
        clicked: asyncio.Queue[str] = asyncio.Queue()

        @app.action("approve")
        async def on_click(ack: Any, body: dict[str, Any]) -> None:
            await ack()
            await clicked.put(body["actions"][0]["value"])

        handler = AsyncSocketModeHandler(app, app_token=slack.identity.app_token)
        await handler.connect_async()  # type: ignore[no-untyped-call]
        await slack.wait_socket_connected()
        try:
            for index in range(count):
                blocks = [
                    {
                        "type": "actions",
                        "block_id": f"b{index}",
                        "elements": [
                            {
                                "type": "button",
                                "action_id": "approve",
                                "value": str(index),
                                "text": {"type": "plain_text", "text": "Approve"},
                            }
                        ],
                    }
                ]
                posted = await client.chat_postMessage(
                    channel="C0BENCH", text="Deploy?", blocks=blocks
                )
                message = slack.message("C0BENCH", str(posted["ts"]))
                started = time.perf_counter()
                await slack.person("U1").click_button(message, "Approve")
                assert await clicked.get() == str(index)
                latencies.append(time.perf_counter() - started)
        finally:
            await handler.close_async()  # type: ignore[no-untyped-call]
    return latencies


def report(name: str, latencies: list[float]) -> None:
    ms = sorted(1000 * s for s in latencies)
    p95 = ms[int(0.95 * (len(ms) - 1))]
    line = f"{name:16} median {statistics.median(ms):7.2f} ms   p95 {p95:7.2f} ms"
    print(line)  # noqa: T201 - this is a command-line report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        bridged = asyncio.run(measure(args.requests, Path(folder)))
    bare = asyncio.run(baseline(args.requests))
    report("bare slack-bolt", bare)
    report("askbridge", bridged)


if __name__ == "__main__":
    main()
