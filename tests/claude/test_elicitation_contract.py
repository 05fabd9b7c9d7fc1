"""Claude Code's `Elicitation` hook as the pinned CLI runs it, observed with a hook that only
records: what the hook receives, what output the CLI accepts, and what the MCP server (the
official `mcp` SDK, speaking the protocol the CLI negotiates) then receives.

askbridge's own hook relies on each of these facts; docs/how-to/claude-code.md states them.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, HookMatcher, ResultMessage

from tests.claude import form_mcp
from tests.claude.cli import ClaudeRun, Sandbox
from tests.claude.fake_anthropic import ToolUse, Turn, in_order, result_text
from tests.claude.scenario import StartFake, result_of

Claude = Callable[..., ClaudeRun]
HERE = Path(__file__).parent


def mcp_config(sandbox: Sandbox) -> tuple[Path, Path]:
    """The --mcp-config naming the form server, and the file it records its answers in."""
    log = sandbox.root / "mcp-answers.jsonl"
    server = {
        "command": sys.executable,
        "args": [str(HERE / "form_mcp.py")],
        "env": {form_mcp.LOG_ENV: str(log)},
    }
    config = sandbox.root / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {form_mcp.SERVER: server}}))
    return config, log


def recording_settings(sandbox: Sandbox, matcher: str) -> tuple[Path, Path]:
    folder = sandbox.root / "hook"
    folder.mkdir()
    command = shlex.join([sys.executable, str(HERE / "recording_hook.py"), str(folder)])
    hook = {"type": "command", "command": command, "timeout": 30}
    settings = {
        "hooks": {"Elicitation": [{"matcher": matcher, "hooks": [hook]}]},
        # The MCP tool itself runs without a permission prompt.
        "permissions": {"allow": [f"mcp__{form_mcp.SERVER}"]},
    }
    path = sandbox.root / "settings.json"
    path.write_text(json.dumps(settings))
    return path, folder


def answers(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def hook_inputs(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("input-*.json"))]


async def test_the_hook_gets_the_form_and_its_content_reaches_the_server_unchecked(
    sandbox: Sandbox, start_fake: StartFake, claude: Claude
) -> None:
    config, log = mcp_config(sandbox)
    settings, folder = recording_settings(sandbox, form_mcp.SERVER)
    # Out of bounds and a string for an integer: the CLI passes both on as they are.
    content = {"email": "a@example.com", "amount": "7", "urgent": True, "category": "meals"}
    content["tags"] = ["q3", "client"]
    output = {"hookEventName": "Elicitation", "action": "accept", "content": content}
    (folder / "reply.json").write_text(json.dumps({"hookSpecificOutput": output}))
    call = ToolUse(f"mcp__{form_mcp.SERVER}__file_expense", {})
    fake = await start_fake(in_order(Turn(tools=(call,))))
    run = claude(fake.url)
    await run.start("File the expense.", settings, ("--mcp-config", str(config)))
    await run.result()

    [given] = hook_inputs(folder)
    assert given["hook_event_name"] == "Elicitation"
    assert given["mcp_server_name"] == form_mcp.SERVER
    assert given["message"] == form_mcp.MESSAGE
    assert given["mode"] == "form"
    assert given["requested_schema"] == form_mcp.SCHEMA
    assert {"session_id", "prompt_id", "cwd", "transcript_path"} <= set(given)
    assert "tool_use_id" not in given
    # The CLI speaks 2026-07-28: the tool asked with an input-required result and was called
    # again with the answer, which is the hook's content, exactly.
    assert answers(log) == [
        {"tool": "file_expense", "protocol": "2026-07-28", "action": "accept", "content": content}
    ]
    assert json.loads(result_text(result_of(fake, call)))["result"]
    # The hook decided: the SDK host was never asked.
    assert not any(m.get("request", {}).get("subtype") == "elicitation" for m in run.messages)


async def test_exit_status_2_declines_and_a_url_elicitation_has_no_schema(
    sandbox: Sandbox, start_fake: StartFake, claude: Claude
) -> None:
    config, log = mcp_config(sandbox)
    settings, folder = recording_settings(sandbox, "*")
    (folder / "exit").write_text("2")
    call = ToolUse(f"mcp__{form_mcp.SERVER}__connect_account", {})
    fake = await start_fake(in_order(Turn(tools=(call,))))
    run = claude(fake.url)
    await run.start("Connect the account.", settings, ("--mcp-config", str(config)))
    await run.result()

    [given] = hook_inputs(folder)
    assert given["mode"] == "url"
    assert given["url"] == form_mcp.URL
    assert given["message"] == form_mcp.URL_MESSAGE
    # Protocol 2026-07-28 dropped the elicitation id; the CLI sends none.
    assert "requested_schema" not in given
    assert "elicitation_id" not in given
    assert answers(log) == [
        {"tool": "connect_account", "protocol": "2026-07-28", "action": "decline", "content": None}
    ]


async def test_with_no_decision_the_cli_asks_its_sdk_host(
    sandbox: Sandbox, start_fake: StartFake, claude: Claude
) -> None:
    config, log = mcp_config(sandbox)
    settings, folder = recording_settings(sandbox, form_mcp.SERVER)
    (folder / "reply.json").write_text(json.dumps({"systemMessage": "no decision"}))
    call = ToolUse(f"mcp__{form_mcp.SERVER}__file_expense", {})
    fake = await start_fake(in_order(Turn(tools=(call,))))
    run = claude(fake.url)
    await run.start("File the expense.", settings, ("--mcp-config", str(config)))

    asked = await run.wait_for(lambda m: m.get("request", {}).get("subtype") == "elicitation")
    request = asked["request"]
    assert request["mcp_server_name"] == form_mcp.SERVER
    assert request["requested_schema"] == form_mcp.SCHEMA
    await run.reply(asked, {"action": "cancel"})
    await run.result()

    assert len(hook_inputs(folder)) == 1
    [answer] = answers(log)
    assert answer["action"] == "cancel"


async def test_an_sdk_hook_callback_cannot_answer_and_the_sdk_refuses_the_hosts_prompt(
    sandbox: Sandbox, start_fake: StartFake, claude_binary: Path
) -> None:
    # Why the Agent SDK helper installs a command hook: Claude Code reads an Elicitation
    # hook's answer from its output text, which an SDK callback has none of, then asks the
    # SDK host, which refuses the `elicitation` control request: the server is told cancel.
    _, log = mcp_config(sandbox)
    called: list[dict[str, Any]] = []

    async def accept(given: Any, tool_use_id: str | None, context: Any) -> Any:
        called.append(dict(given))
        output = {"hookEventName": "Elicitation", "action": "accept", "content": {"amount": 7}}
        return {"hookSpecificOutput": output}

    server = {
        "type": "stdio",
        "command": sys.executable,
        "args": [str(HERE / "form_mcp.py")],
        "env": {form_mcp.LOG_ENV: str(log)},
    }
    call = ToolUse(f"mcp__{form_mcp.SERVER}__file_expense", {})
    fake = await start_fake(in_order(Turn(tools=(call,))))
    options = ClaudeAgentOptions(
        cli_path=claude_binary,
        cwd=sandbox.project,
        env=sandbox.env(fake.url),
        mcp_servers={form_mcp.SERVER: server},  # type: ignore[dict-item]
        allowed_tools=[f"mcp__{form_mcp.SERVER}"],
        hooks={"Elicitation": [HookMatcher(matcher="*", hooks=[accept])]},  # type: ignore[dict-item]
    )
    async with ClaudeSDKClient(options=options) as client:
        await client.query("File the expense.")
        async for message in client.receive_response():
            if isinstance(message, ResultMessage):
                break

    assert [c["hook_event_name"] for c in called] == ["Elicitation"]
    assert answers(log) == [
        {"tool": "file_expense", "protocol": "2026-07-28", "action": "cancel", "content": None}
    ]
