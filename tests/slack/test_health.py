"""`/readyz` follows Slack's connection; `/metrics` counts a Slack flow and every Web API call."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.conftest import EXPECTED
from tests.scrape import scrape, until, value
from tests.slack.conftest import Bridge, answer_fully, ask_body


async def readyz(bridge: Bridge) -> tuple[int, dict[str, Any]]:
    async with bridge.http.get(f"{bridge.url}/readyz") as response:
        return response.status, await response.json()


async def test_readyz_fails_once_slack_is_gone(bridge: Bridge) -> None:
    status, ready = await readyz(bridge)
    assert status == 200, ready
    slack = ready["parts"]["slack"]
    assert slack["ready"] is True
    expected = "Socket Mode connected" if bridge.mode == "socket" else "HTTP mode"
    assert slack["detail"] == f"{expected}; the Web API accepts the bot token"

    await bridge.slack.stop()
    status, ready = await readyz(bridge)
    assert status == 503
    assert ready["ready"] is False
    assert ready["parts"]["store"]["ready"] is True
    slack = ready["parts"]["slack"]
    assert slack["ready"] is False
    assert "SLACK_API_URL" in slack["detail"] or "Socket Mode" in slack["detail"], slack


async def test_readyz_names_a_token_slack_stopped_accepting(bridge: Bridge) -> None:
    bridge.slack.fail_next("auth.test", 200, error="token_revoked")
    status, ready = await readyz(bridge)
    assert status == 503
    assert ready["parts"]["slack"] == {
        "ready": False,
        "detail": "Slack refused SLACK_BOT_TOKEN (token_revoked)",
    }


async def test_metrics_follow_a_slack_flow(bridge: Bridge) -> None:
    slack, http, url = bridge.slack, bridge.http, bridge.url
    before = await scrape(http, url)
    assert value(before, "askbridge_requests_created_total", surface="slack") == 0
    assert value(before, "askbridge_requests_answered_total", surface="slack") == 0

    message = await bridge.ask(ask_body("ask_metrics"))
    slack.fail_next("chat.update", 429, retry_after=0)
    polling = asyncio.create_task(bridge.status("ask_metrics", wait=30))
    await until(http, url, "askbridge_long_polls_open", 1)
    (await answer_fully(bridge, "U1", message)).assert_acked()
    assert (await polling)["answers"] == EXPECTED
    await bridge.final(message)

    after = await scrape(http, url)
    assert value(after, "askbridge_requests_created_total", surface="slack") == 1
    assert value(after, "askbridge_requests_answered_total", surface="slack") == 1
    assert value(after, "askbridge_time_to_answer_seconds_count", surface="slack") == 1
    assert value(after, "askbridge_click_to_agent_seconds_count", surface="slack") == 1
    assert value(after, "askbridge_long_polls_open") == 0
    created = {"method": "POST", "route": "/v1/questions", "status": "201"}
    assert value(after, "askbridge_http_requests_total", **created) == 1
    # Every Web API call that has had its answer is counted, by method, as Slack saw it.
    for method in ("auth.test", "chat.postMessage"):
        calls = value(after, "askbridge_platform_api_calls_total", platform="slack", method=method)
        assert calls == slack.call_count(method) > 0, method
    update = {"platform": "slack", "method": "chat.update"}
    assert value(after, "askbridge_platform_api_rate_limited_total", **update) == 1
    assert value(after, "askbridge_platform_api_calls_total", **update) >= 2
    assert value(after, "askbridge_platform_api_errors_total", **update) == 0
