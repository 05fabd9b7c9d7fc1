"""MCP elicitations from the real `claude` CLI, answered by people through askbridge.

The scripted model calls a tool of a stdio MCP server on the official `mcp` SDK
(`form_mcp.py`), which asks the user to fill in a form (or open a link) over MCP 2026-07-28.
askbridge's Elicitation hook, as `askbridge hook claude-code --print-settings` prints it, makes
it a form request; a person answers in Discord's or Slack's modal (the strict emulators,
askbridge's real discord.py and slack-bolt clients) or on the web page in Chromium; the
assertions read what the MCP server received.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage
from playwright.async_api import async_playwright, expect

from askbridge.bots.claude_agent import elicitation_settings
from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from askbridge.core.hooks.claude_code import CLAUDE_CODE_PATH
from askbridge.core.models import Status
from tests.claude import form_mcp
from tests.claude.cli import ClaudeRun, Sandbox
from tests.claude.discord_forms import FILLED, on_discord
from tests.claude.fake_anthropic import ToolUse, Turn, in_order
from tests.claude.scenario import (
    ELICITATION_HOOK,
    TYPED,
    StartFake,
    next_waiting,
    printed_settings,
)
from tests.conftest import StartService
from tests.emulators.slack import SlackEmulator
from tests.slack.conftest import CHANNEL, TARGET, start_bridge
from tests.test_browser import CHROMIUM_FLAGS, chromium_path

Claude = Callable[..., ClaudeRun]
HERE = Path(__file__).parent
FORM_TOOL = f"mcp__{form_mcp.SERVER}__file_expense"
URL_TOOL = f"mcp__{form_mcp.SERVER}__connect_account"


def form_server(sandbox: Sandbox) -> tuple[dict[str, Any], Path]:
    """The form server's stdio config, and the file it records each answer in."""
    log = sandbox.root / "mcp-answers.jsonl"
    config = {
        "type": "stdio",
        "command": sys.executable,
        "args": [str(HERE / "form_mcp.py")],
        "env": {form_mcp.LOG_ENV: str(log)},
    }
    return config, log


def mcp_config(sandbox: Sandbox) -> tuple[Path, Path]:
    server, log = form_server(sandbox)
    config = sandbox.root / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {form_mcp.SERVER: server}}))
    return config, log


def allowing_the_tools(settings: Path) -> Path:
    """The printed hooks, with the MCP server's tools allowed (no approval asked for them)."""
    text = json.loads(settings.read_text())
    text["permissions"] = {"allow": [f"mcp__{form_mcp.SERVER}"]}
    settings.write_text(json.dumps(text))
    return settings


async def start(run: ClaudeRun, prompt: str, settings: Path, config: Path) -> None:
    await run.start(prompt, allowing_the_tools(settings), ("--mcp-config", str(config)))


def received(log: Path) -> list[dict[str, Any]]:
    """What the MCP server got: action and content, in order."""
    if not log.exists():
        return []
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    return [{"action": a["action"], "content": a["content"]} for a in lines]


async def test_a_form_filled_in_discords_modal_reaches_the_mcp_server_typed(
    tmp_path: Path, clock: ManualClock, sandbox: Sandbox, start_fake: StartFake, claude: Claude
) -> None:
    config, log = mcp_config(sandbox)
    fake = await start_fake(in_order(Turn(tools=(ToolUse(FORM_TOOL, {}),))))
    async with on_discord(tmp_path, clock) as discord:
        broker = discord.service.broker
        settings = await printed_settings(sandbox, discord.service.url, "--no-approvals")
        run = claude(fake.url)
        await start(run, "File the expense.", settings, config)

        request = await next_waiting(broker, set())
        assert request.request_id.startswith("claude_elicit_")
        assert request.form is not None
        assert [f.name for f in request.form.fields] == list(form_mcp.SCHEMA["properties"])
        shown = discord.message(request).text
        assert form_mcp.MESSAGE in shown
        assert f"the MCP server {form_mcp.SERVER} asks" in shown

        # Out of bounds: refused privately, nothing recorded, the request still waits.
        refused = await discord.fill_in(request, {**FILLED, "Amount (EUR)": "900"})
        note = await refused.wait_for_ephemeral("Nothing was recorded")
        assert "**Amount (EUR)**: must be at most 500, got 900" in note.text
        still = await broker.get(request.request_id)
        assert still.status is Status.WAITING
        assert still.votes == ()
        assert received(log) == []

        await discord.fill_in(request, FILLED)
        await run.result()

    assert received(log) == [{"action": "accept", "content": TYPED}]
    # The hook decided: Claude Code never asked its SDK host.
    assert not any(m.get("request", {}).get("subtype") == "elicitation" for m in run.messages)


@pytest.mark.parametrize("button", ["Decline", "Cancel"])
async def test_decline_and_cancel_reach_the_mcp_server_through_the_http_hook(
    button: str,
    tmp_path: Path,
    clock: ManualClock,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude: Claude,
) -> None:
    config, log = mcp_config(sandbox)
    fake = await start_fake(in_order(Turn(tools=(ToolUse(FORM_TOOL, {}),))))
    async with on_discord(tmp_path, clock) as discord:
        url = discord.service.url
        settings = await printed_settings(sandbox, url, "--http", "--no-approvals")
        run = claude(fake.url)
        await start(run, "File the expense.", settings, config)

        request = await next_waiting(discord.service.broker, set())
        await discord.press(request, button)
        await run.result()
        ended = await discord.service.broker.get(request.request_id)

    [got] = received(log)
    assert got["action"] == button.lower()
    assert not got["content"]
    assert ended.status is (Status.DECLINED if button == "Decline" else Status.CANCELLED)


async def test_a_link_to_open_is_shown_and_done_is_accept_for_the_mcp_server(
    tmp_path: Path, clock: ManualClock, sandbox: Sandbox, start_fake: StartFake, claude: Claude
) -> None:
    config, log = mcp_config(sandbox)
    fake = await start_fake(in_order(Turn(tools=(ToolUse(URL_TOOL, {}),))))
    async with on_discord(tmp_path, clock) as discord:
        settings = await printed_settings(sandbox, discord.service.url, "--no-approvals")
        run = claude(fake.url)
        await start(run, "Connect it.", settings, config)

        request = await next_waiting(discord.service.broker, set())
        assert request.form is not None
        assert request.form.url == form_mcp.URL
        shown = discord.message(request).text
        assert form_mcp.URL_MESSAGE in shown
        assert form_mcp.URL in shown
        await discord.press(request, "Done")
        await run.result()

    assert received(log) == [{"action": "accept", "content": None}]


async def test_a_form_filled_in_on_the_web_page_in_chromium_reaches_the_mcp_server_typed(
    service: Service, sandbox: Sandbox, start_fake: StartFake, claude: Claude
) -> None:
    config, log = mcp_config(sandbox)
    fake = await start_fake(in_order(Turn(tools=(ToolUse(FORM_TOOL, {}),))))
    settings = await printed_settings(sandbox, service.url, "--no-approvals")
    run = claude(fake.url)
    await start(run, "File the expense.", settings, config)
    request = await next_waiting(service.broker, set())

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_FLAGS
        )
        try:
            page = await browser.new_page()
            await page.goto(f"{service.url}/q/{request.request_id}")
            await expect(page.get_by_role("heading")).to_have_text(form_mcp.MESSAGE)
            await expect(page.get_by_text(f"the MCP server {form_mcp.SERVER} asks")).to_be_visible()
            await page.get_by_label("Your email").fill("ada@example.com")
            amount = page.get_by_label("Amount (EUR)")
            await amount.fill("900")
            await page.get_by_label("Urgent").check()
            await page.get_by_label("Category").select_option(label="Meals")
            await page.get_by_label("q3").check()
            await page.get_by_label("client").check()
            await page.get_by_label("Your name").fill("Ada")
            # Past the browser's own check of the bounds, askbridge refuses it in place.
            await page.locator("form.typed").evaluate("form => { form.noValidate = true; }")
            await page.get_by_role("button", name="Submit").click()
            await expect(page.get_by_role("alert")).to_have_text(
                "Nothing was recorded: Amount (EUR) must be at most 500, got 900."
            )
            assert (await service.broker.get(request.request_id)).votes == ()
            await amount.fill("7")
            await page.get_by_role("button", name="Submit").click()
            await expect(page.locator("#outcome")).to_contain_text("Answered by Ada")
        finally:
            await browser.close()
    await run.result()

    assert received(log) == [{"action": "accept", "content": TYPED}]


async def test_a_form_filled_in_slacks_modal_reaches_the_mcp_server_typed(
    start_service: StartService,
    http: aiohttp.ClientSession,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude: Claude,
) -> None:
    config, log = mcp_config(sandbox)
    fake = await start_fake(in_order(Turn(tools=(ToolUse(FORM_TOOL, {}),))))
    async with SlackEmulator() as slack:
        slack.add_user("U1", "alice")
        slack.add_channel(CHANNEL, "general")
        bridge = await start_bridge(slack, "socket", start_service, http)
        flags = ("--http", "--no-approvals", "--target", TARGET)
        settings = await printed_settings(sandbox, bridge.url, *flags)
        run = claude(fake.url)
        await start(run, "File the expense.", settings, config)

        request = await next_waiting(bridge.service.broker, set())
        message = slack.message(CHANNEL, request.messages[0].message_id)
        assert form_mcp.MESSAGE in message.visible_text
        alice = slack.person("U1")
        (await alice.click_button(message, "Fill in…")).assert_acked()
        modal = await slack.wait_for_view("U1", after=0)
        typed = {"Your email": "ada@example.com", "Amount (EUR)": "900"}
        chosen = {"Urgent": ["Yes"], "Category": ["Meals"], "Tags": ["q3", "client"]}
        refused = await alice.submit_view(modal, text=typed, choose=chosen, client_checks=False)
        refused.assert_sent()
        assert list(refused.errors.values()) == ["Amount (EUR) must be at most 500, got 900."]
        assert (await bridge.service.broker.get(request.request_id)).votes == ()
        (await alice.submit_view(modal, text={"Amount (EUR)": "7"})).assert_sent()
        await run.result()

    assert received(log) == [{"action": "accept", "content": TYPED}]


async def test_the_same_hook_input_twice_asks_once(
    tmp_path: Path, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    async with on_discord(tmp_path, clock) as discord:
        url = f"{discord.service.url}{CLAUDE_CODE_PATH}?timeout=60"

        async def post() -> dict[str, Any]:
            async with http.post(url, json=ELICITATION_HOOK) as response:
                assert response.status == 200
                found: dict[str, Any] = await response.json()
                return found

        broker = discord.service.broker
        first = asyncio.create_task(post())
        request = await next_waiting(broker, set())
        version = broker.version
        second = asyncio.create_task(post())
        # The second delivery finds the request the first made (and changes nothing).
        await broker.wait_for_change(version, 0.5)
        await discord.fill_in(request, FILLED)
        outputs = await asyncio.gather(first, second)
        asked = await broker.list_requests()

    expected = {"hookEventName": "Elicitation", "action": "accept", "content": TYPED}
    assert list(outputs) == [{"hookSpecificOutput": expected}] * 2
    assert [r.request_id for r in asked] == [request.request_id]


async def run_session(options: ClaudeAgentOptions, prompt: str) -> ResultMessage:
    async with ClaudeSDKClient(options=options) as client:
        await client.query(prompt)
        async for message in client.receive_response():
            if isinstance(message, ResultMessage):
                return message
    raise AssertionError("the session ended without a result")


async def test_the_agent_sdk_helper_has_people_fill_in_its_mcp_servers_forms(
    tmp_path: Path, clock: ManualClock, sandbox: Sandbox, start_fake: StartFake, claude_binary: Path
) -> None:
    server, log = form_server(sandbox)
    fake = await start_fake(in_order(Turn(tools=(ToolUse(FORM_TOOL, {}),))))
    async with on_discord(tmp_path, clock) as discord:
        options = ClaudeAgentOptions(
            cli_path=claude_binary,
            cwd=sandbox.project,
            env=sandbox.env(fake.url),
            mcp_servers={form_mcp.SERVER: server},  # type: ignore[dict-item]
            allowed_tools=[f"mcp__{form_mcp.SERVER}"],
            settings=elicitation_settings(url=discord.service.url, servers=form_mcp.SERVER),
        )
        session = asyncio.create_task(run_session(options, "File the expense."), name="sdk")
        request = await next_waiting(discord.service.broker, set())
        await discord.fill_in(request, FILLED)
        result = await asyncio.wait_for(session, 60)

    assert not result.is_error
    assert received(log) == [{"action": "accept", "content": TYPED}]


async def test_a_form_askbridge_cannot_show_is_left_to_claude_code_and_a_bad_input_is_a_400(
    service: Service, http: aiohttp.ClientSession
) -> None:
    url = f"{service.url}{CLAUDE_CODE_PATH}?timeout=60"
    schema = json.loads(json.dumps(form_mcp.SCHEMA))
    schema["properties"] |= {f"note{n}": {"type": "string"} for n in range(11)}
    async with http.post(url, json={**ELICITATION_HOOK, "requested_schema": schema}) as response:
        assert response.status == 200
        output = await response.json()
    assert set(output) == {"systemMessage"}
    assert output["systemMessage"].startswith("askbridge: cannot show this form (")
    assert "must hold 1-10 fields" in output["systemMessage"]
    assert await service.broker.list_requests() == []

    async with http.post(url, json={**ELICITATION_HOOK, "mode": "url"}) as response:
        assert response.status == 400
        error = await response.json()
    assert "url mode without a url" in error["error"]
