"""Click-to-agent latency through Slack Socket Mode: `python -m tests.bench_slack_click`.

askbridge runs in-process against the local Slack emulator; for each request an agent
long-polls while a simulated person clicks an option, and the time from the click's
delivery to the agent's answer is recorded.
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

from bots.service import Service
from bots.settings import Settings
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        latencies = asyncio.run(measure(args.requests, Path(folder)))
    ms = sorted(1000 * s for s in latencies)
    report = {
        "median_ms": statistics.median(ms),
        "p95_ms": ms[int(0.95 * (len(ms) - 1))],
        "max_ms": ms[-1],
    }
    for name, value in report.items():
        print(f"{name:10} {value:8.2f}")  # noqa: T201 - this is a command-line report


if __name__ == "__main__":
    main()
