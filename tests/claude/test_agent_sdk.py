"""The Claude Agent SDK's own client, with `bots.claude_agent.ask_people` as its can_use_tool,
runs the pinned CLI against the fake API; people answer on the web page."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResult,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
)

from askbridge.bots.claude_agent import ask_people
from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from askbridge.core.tool_view import Note
from tests.claude.cli import Sandbox
from tests.claude.fake_anthropic import ToolUse, Turn, in_order, result_text
from tests.claude.scenario import (
    ANSWERED,
    StartFake,
    ask_tool,
    bash_tool,
    next_waiting,
    result_of,
)
from tests.web_person import answer_on_web, change_on_web


async def run_session(options: ClaudeAgentOptions, prompt: str) -> ResultMessage:
    async with ClaudeSDKClient(options=options) as client:
        await client.query(prompt)
        async for message in client.receive_response():
            if isinstance(message, ResultMessage):
                return message
    raise AssertionError("the session ended without a result")


async def test_the_sdk_asks_people_and_a_deny_keeps_bash_from_running(
    service: Service,
    http: aiohttp.ClientSession,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude_binary: Path,
) -> None:
    ask, bash = ask_tool(), bash_tool(sandbox.project)
    fake = await start_fake(in_order(Turn(tools=(ask,)), Turn(tools=(bash,))))
    options = ClaudeAgentOptions(
        cli_path=claude_binary,
        cwd=sandbox.project,
        env=sandbox.env(fake.url),
        can_use_tool=ask_people(url=service.url, target="web"),
    )
    session = asyncio.create_task(run_session(options, "Set up the database."), name="sdk")

    seen: set[str] = set()
    question = await next_waiting(service.broker, seen)
    assert question.request_id == f"claude_{ask.id}"
    assert question.context == f"Claude Code in {Path.cwd()}"
    picks = {"Database": ["PostgreSQL"], "Features": ["Caching", "Metrics"]}
    await answer_on_web(http, service.url, question.request_id, picks, name="Ada")
    approval = await next_waiting(service.broker, seen)
    assert [o.label for o in approval.questions[0].options] == [
        "Allow once",
        "Always allow Bash",
        "Allow this directory",
        "Deny",
    ]
    await answer_on_web(http, service.url, approval.request_id, {"Permission": ["Deny"]})
    result = await asyncio.wait_for(session, 60)

    assert not result.is_error
    assert result_text(result_of(fake, ask)) == ANSWERED
    denied = result_of(fake, bash)
    assert denied["is_error"]
    assert result_text(denied) == "Denied by Ada"
    assert not (sandbox.project / "made.txt").exists()


async def test_without_an_answer_the_sdk_hosts_own_callback_decides(
    service: Service,
    clock: ManualClock,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude_binary: Path,
) -> None:
    ask = ask_tool()
    fake = await start_fake(in_order(Turn(tools=(ask,))))
    asked_host: list[str] = []

    async def host(
        tool_name: str, tool_input: dict[str, object], context: ToolPermissionContext
    ) -> PermissionResult:
        asked_host.append(tool_name)
        return PermissionResultDeny(message="the host said no")

    options = ClaudeAgentOptions(
        cli_path=claude_binary,
        cwd=sandbox.project,
        env=sandbox.env(fake.url),
        can_use_tool=ask_people(url=service.url, timeout_s=30, fallback=host),
    )
    session = asyncio.create_task(run_session(options, "Set up the database."), name="sdk")
    question = await next_waiting(service.broker, set())
    await clock.advance(30)
    await asyncio.wait_for(session, 60)

    assert asked_host == ["AskUserQuestion"]
    assert result_text(result_of(fake, ask)) == "the host said no"
    assert (await service.broker.get(question.request_id)).status == "expired"


async def test_a_plan_reaches_the_sdk_helper_without_its_text_and_the_page_says_so(
    service: Service,
    http: aiohttp.ClientSession,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude_binary: Path,
) -> None:
    plan = "# Plan\n\n1. Add the `billing` table\n2. Backfill it <!channel>"
    exit_plan = ToolUse("ExitPlanMode", {"plan": plan})
    fake = await start_fake(in_order(Turn(tools=(exit_plan,))))
    options = ClaudeAgentOptions(
        cli_path=claude_binary,
        cwd=sandbox.project,
        env=sandbox.env(fake.url),
        permission_mode="plan",
        can_use_tool=ask_people(url=service.url, target="web"),
    )
    session = asyncio.create_task(run_session(options, "Plan the billing table."), name="sdk")

    # Claude Code 2.1.332 gives can_use_tool an empty input for ExitPlanMode (the plan is in
    # the stream the host reads), so the approval says the plan is not there to show.
    approval = await next_waiting(service.broker, set())
    assert approval.tool is not None
    assert approval.tool.title == "Approve the plan"
    assert approval.tool.parts == (
        Note(text="Claude Code did not send the plan; it is in the session"),
    )
    await answer_on_web(http, service.url, approval.request_id, {"Permission": ["Allow once"]})
    result = await asyncio.wait_for(session, 60)

    assert not result.is_error
    assert not result_of(fake, exit_plan).get("is_error")


async def test_a_command_changed_before_it_is_allowed_is_the_one_the_sdk_runs(
    service: Service,
    http: aiohttp.ClientSession,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude_binary: Path,
) -> None:
    asked = sandbox.project / "asked.txt"
    bash = ToolUse("Bash", {"command": f"echo asked > {asked}", "description": "Write"})
    fake = await start_fake(in_order(Turn(tools=(bash,))))
    options = ClaudeAgentOptions(
        cli_path=claude_binary,
        cwd=sandbox.project,
        env=sandbox.env(fake.url),
        can_use_tool=ask_people(url=service.url, target="web"),
    )
    session = asyncio.create_task(run_session(options, "Write the file."), name="sdk")
    approval = await next_waiting(service.broker, set())
    status, _ = await change_on_web(http, service.url, approval.request_id, "echo changed-by-ada")
    assert status == 200
    result = await asyncio.wait_for(session, 60)

    assert not result.is_error
    assert result_text(result_of(fake, bash)).strip() == "changed-by-ada"
    assert not asked.exists()
