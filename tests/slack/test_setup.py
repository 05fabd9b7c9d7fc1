"""Starting with Slack: what is logged, what a wrong setting says, and what a bad target says."""

from __future__ import annotations

import logging
from pathlib import Path

import aiohttp
import pytest

from askbridge.core.errors import StartupError
from tests.conftest import StartService
from tests.emulators.slack import SlackEmulator
from tests.emulators.slack.delivery import signed_headers
from tests.slack.conftest import Bridge, Mode, ask_body, slack_settings, start_bridge

MANIFEST = Path(__file__).parents[2] / "adapters" / "slack" / "manifest.yaml"


async def test_startup_logs_the_mode_workspace_and_bot_but_no_token(
    slack: SlackEmulator,
    mode: Mode,
    start_service: StartService,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    bridge = await start_bridge(slack, mode, start_service, http)
    line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("Slack:"))
    assert "workspace 'askbridge test' (T0TEST) as @askbridge (U0BOT)" in line
    assert ("Socket Mode" if mode == "socket" else "HTTP mode") in line
    if mode == "http":
        assert "/slack/events" in line
    for secret in slack_settings(slack, mode).values():
        if secret.startswith(("xoxb-", "xapp-", "test-signing")):
            assert secret not in caplog.text
    async with http.get(f"{bridge.url}/healthz") as response:
        assert "slack" in (await response.json())["surfaces"]


async def test_the_api_url_may_lack_its_trailing_slash(
    slack: SlackEmulator, start_service: StartService, http: aiohttp.ClientSession
) -> None:
    bridge = await start_bridge(
        slack, "http", start_service, http, SLACK_API_URL=slack.api_url.rstrip("/")
    )
    message = await bridge.ask(ask_body("ask_url"))
    assert message.has_interactive_elements


@pytest.mark.parametrize(
    ("settings", "fragment"),
    [
        ({"SLACK_BOT_TOKEN": "xoxb-wrong"}, "SLACK_BOT_TOKEN was rejected by Slack (invalid_auth)"),
        ({"SLACK_APP_TOKEN": "xapp-wrong"}, "SLACK_APP_TOKEN was rejected by Slack (invalid_auth)"),
        ({"SLACK_APP_TOKEN": "xoxb-test-bot"}, "SLACK_APP_TOKEN must be an app-level token"),
        ({"SLACK_BOT_TOKEN": "xapp-test-app"}, "SLACK_BOT_TOKEN holds an app-level token"),
        ({"SLACK_APP_TOKEN": None}, "neither SLACK_APP_TOKEN (Socket Mode"),
        (
            {"SLACK_API_URL": "http://127.0.0.1:9/api/"},
            "could not reach the Slack API at SLACK_API_URL",
        ),
    ],
)
async def test_a_wrong_setting_fails_startup_naming_it(
    slack: SlackEmulator,
    start_service: StartService,
    settings: dict[str, str | None],
    fragment: str,
) -> None:
    chosen = {**slack_settings(slack, "socket"), **settings}
    with pytest.raises(StartupError) as error:
        await start_service(**{k: v for k, v in chosen.items() if v is not None})
    assert fragment in str(error.value)
    assert "wrong" not in str(error.value)


@pytest.mark.parametrize(
    ("target", "fragment"),
    [
        ("slack", "names no Slack channel; use slack:C0123456789"),
        ("slack:#general", "use the channel's ID, not its name"),
        ("slack:general", "use the channel's ID, not its name"),
        ("slack:@alice", "use the member ID, not the name"),
        ("slack:X123", "'X123' is not a Slack channel ID"),
        ("slack:C0GENERAL/yesterday", "the thread must be the parent message's ts"),
        ("slack:C0GENERAL/p1700000000000100", "use 1700000000.000100"),
    ],
)
async def test_a_bad_slack_target_is_refused_with_how_to_fix_it(
    http_bridge: Bridge, target: str, fragment: str
) -> None:
    async with http_bridge.http.post(
        f"{http_bridge.url}/v1/questions", json=ask_body("ask_bad", target=target)
    ) as response:
        assert response.status == 422
        assert fragment in (await response.json())["error"]
    assert http_bridge.slack.call_count("chat.postMessage") == 0


async def test_a_channel_slack_refuses_is_reported_to_the_agent(http_bridge: Bridge) -> None:
    async with http_bridge.http.post(
        f"{http_bridge.url}/v1/questions", json=ask_body("ask_nowhere", target="slack:C0NOWHERE")
    ) as response:
        assert response.status == 502
        error = (await response.json())["error"]
    assert "channel_not_found" in error
    assert "/invite" in error
    async with http_bridge.http.get(f"{http_bridge.url}/v1/questions/ask_nowhere") as response:
        assert response.status == 404


def test_the_manifest_asks_for_what_askbridge_uses() -> None:
    manifest = MANIFEST.read_text()
    for scope in ("chat:write", "chat:write.public", "im:write", "usergroups:read", "users:read"):
        assert f"- {scope}\n" in manifest
    assert "socket_mode_enabled: true" in manifest
    assert "is_enabled: true" in manifest


async def test_slack_events_need_no_api_token_only_a_signature(
    slack: SlackEmulator, start_service: StartService
) -> None:
    token = "agent-api-token-1"
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as agent:
        bridge = await start_bridge(slack, "http", start_service, agent, api_token=token)
        body = ask_body("ask_token")
        body["questions"] = body["questions"][:1]
        message = await bridge.ask(body)
        click = await slack.person("U1").click_button(message, "SQLite")
        assert click.status == 200
        assert (await bridge.outcome("ask_token"))["answers"] == {"Database": "SQLite"}


async def test_a_tunnel_reaches_slack_events_but_not_the_agent_api(
    http_bridge: Bridge, http: aiohttp.ClientSession
) -> None:
    """A token-less loopback server refuses foreign Host headers, except on the signed path."""
    tunnel = {"Host": "askbridge.tunnel.example"}
    url = http_bridge.service.url
    async with http.post(f"{url}/v1/questions", headers=tunnel, json={}) as response:
        assert response.status == 403
    form = {**tunnel, "Content-Type": "application/x-www-form-urlencoded"}
    async with http.post(f"{url}/slack/events", headers=form, data=b"payload=%7B%7D") as r:
        # Past the Host check, the unsigned request is refused.
        assert r.status == 401
    slack = http_bridge.slack
    signed = signed_headers(
        slack.identity.signing_secret, b"payload=", "application/json", slack.clock(), "none"
    )
    async with http.post(
        f"{url}/slack/events", headers={**tunnel, **signed}, data=b"payload="
    ) as r:
        assert r.status == 400
        assert (await r.json())["error"].startswith("not a Slack interaction askbridge takes")
