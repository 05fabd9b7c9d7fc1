"""The scenario of the real-client tests: what the model calls, how the settings are made,
how a test finds the request askbridge made and the tool_result the model got back."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from askbridge.core.broker import Broker
from askbridge.core.models import Request, Status
from tests.claude import form_mcp
from tests.claude.cli import WAIT_S, Sandbox
from tests.claude.fake_anthropic import FakeAnthropic, Script, ToolUse, tool_results
from tests.conftest import DATABASE

StartFake = Callable[[Script], Awaitable[FakeAnthropic]]

QUESTIONS: Any = copy.deepcopy(DATABASE["questions"])
QUESTIONS[0]["options"][0]["preview"] = "CREATE TABLE …"  # Claude Code's own field, kept
SUGGESTIONS = [
    {
        "type": "addRules",
        "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}],
        "behavior": "allow",
        "destination": "localSettings",
    },
    {"type": "addDirectories", "directories": ["/work/app"], "destination": "session"},
]
SESSION = {
    "session_id": "2de254c5-cff7-41a5-8f5c-df9c71ddb6a5",
    "transcript_path": "/home/ada/.claude/projects/app/2de254c5.jsonl",
    "cwd": "/work/app",
    "prompt_id": "69718a6a-c017-40d3-a949-0e2a4736f259",
    "permission_mode": "default",
    "effort": {"level": "medium"},
}
QUESTION_HOOK = {
    **SESSION,
    "hook_event_name": "PreToolUse",
    "tool_name": "AskUserQuestion",
    "tool_input": {"questions": QUESTIONS},
    "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
}
"""A PreToolUse hook's input, as Claude Code 2.1.332 sends it."""
APPROVAL_HOOK = {
    **SESSION,
    "hook_event_name": "PermissionRequest",
    "tool_name": "Bash",
    "tool_input": {"command": "npm test -- --watch=false", "description": "Run the tests"},
    "permission_suggestions": SUGGESTIONS,
}
"""A PermissionRequest hook's input: no tool_use_id."""

ELICITATION_HOOK: dict[str, Any] = {
    **SESSION,
    "hook_event_name": "Elicitation",
    "mcp_server_name": form_mcp.SERVER,
    "message": form_mcp.MESSAGE,
    "mode": "form",
    "requested_schema": form_mcp.SCHEMA,
}
"""An Elicitation hook's input, as Claude Code 2.1.332 sends it: no tool_use_id."""
TYPED = {
    "email": "ada@example.com",
    "amount": 7,
    "urgent": True,
    "category": "meals",
    "tags": ["q3", "client"],
}
"""What the MCP server must receive when a person fills in its form as `discord_forms.FILLED`
says: each value typed as its schema says."""


ANSWERED = (
    'Your questions have been answered: "Which database should we use?"="PostgreSQL", '
    '"Which features do you want?"="Caching, Metrics". '
    "You can now continue with these answers in mind."
)
"""What the model reads when the spec's answers come back (Claude Code's own wording)."""


def ask_tool() -> ToolUse:
    """The model's AskUserQuestion: the spec's two questions, the second multi-select."""
    return ToolUse("AskUserQuestion", {"questions": copy.deepcopy(DATABASE["questions"])})


def bash_tool(project: Path) -> ToolUse:
    """A Bash call that needs approval: it writes a file."""
    made = project / "made.txt"
    return ToolUse("Bash", {"command": f"echo made > {made}", "description": "Write made.txt"})


async def printed_settings(
    sandbox: Sandbox, url: str, *flags: str, env: dict[str, str] | None = None
) -> Path:
    """The hooks block `askbridge hook claude-code --print-settings` prints, as a settings file."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith("ASKBRIDGE_")}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "askbridge.bots.cli",
        "hook",
        "claude-code",
        "--print-settings",
        "--url",
        url,
        *flags,
        env={**keep, **(env or {})},
        cwd=sandbox.root,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await process.communicate()
    assert process.returncode == 0
    settings = sandbox.root / "settings.json"
    settings.write_text(json.dumps(json.loads(out)))
    return settings


async def install_hooks(sandbox: Sandbox, url: str, file: Path, *flags: str) -> None:
    """`askbridge hook claude-code --install file`, as a person runs it in the project."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith("ASKBRIDGE_")}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "askbridge.bots.cli",
        "hook",
        "claude-code",
        "--url",
        url,
        *flags,
        "--install",
        str(file),
        env=keep,
        cwd=sandbox.project,
    )
    assert await process.wait() == 0


async def next_waiting(broker: Broker, seen: set[str]) -> Request:
    """The first posted, waiting request whose id is not in `seen` (which it joins)."""
    async with asyncio.timeout(WAIT_S):
        while True:
            version = broker.version
            for request in await broker.list_requests(Status.WAITING):
                if request.request_id not in seen and request.messages:
                    seen.add(request.request_id)
                    return request
            await broker.wait_for_change(version, WAIT_S)


def result_of(fake: FakeAnthropic, tool: ToolUse) -> dict[str, Any]:
    """The tool_result the CLI sent the model for `tool`."""
    for body in fake.requests:
        for block in tool_results(body):
            if block.get("tool_use_id") == tool.id:
                return block
    raise AssertionError(f"no tool_result for {tool.name} {tool.id}")
