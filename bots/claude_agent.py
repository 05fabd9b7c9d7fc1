"""The Claude Agent SDK's `can_use_tool`, and its MCP servers' requests for input, answered by
people through askbridge:

    options = ClaudeAgentOptions(
        can_use_tool=ask_people(target="web"), settings=elicitation_settings(target="web")
    )

AskUserQuestion becomes the request the Claude Code hook makes; any other tool becomes Allow
once / Always allow / Deny. An MCP server's elicitation becomes the form the Elicitation hook
asks. The SDK (0.2.190) has no callback for elicitations: it refuses Claude Code's
`elicitation` control request as unsupported (the server is told cancel), and Claude Code
2.1.332 ignores what an SDK hook callback answers to an Elicitation (it reads only a command's
or HTTP hook's output), so the helper installs the command hook through the settings. Needs
the `claude` extra (`pip install -e '.[claude]'` in a clone).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from claude_agent_sdk import (
    CanUseTool,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ToolPermissionContext,
)

from askbridge.bots.claude_hook import CREATE_PATIENCE_S, ClientAsking, command_hook
from askbridge.bots.client import AskbridgeClient
from askbridge.bots.settings import Settings
from askbridge.core.hooks import elicitation
from askbridge.core.hooks.claude_code import DEFAULT_HOOK_TIMEOUT_S, HookOptions, Source, ToolCall
from askbridge.core.hooks.flow import decision_for


def ask_people(
    *,
    url: str | None = None,
    token: str | None = None,
    target: str | Sequence[str] = (),
    answerers: Sequence[str] = (),
    quorum: int = 1,
    timeout_s: float = DEFAULT_HOOK_TIMEOUT_S,
    on_timeout: Literal["ask", "deny"] = "ask",
    fallback: CanUseTool | None = None,
    cwd: str | Path | None = None,
) -> CanUseTool:
    """A `can_use_tool` callback that asks people through the askbridge server at `url`
    (default: ASKBRIDGE_URL, with ASKBRIDGE_API_TOKEN).

    `timeout_s` is how long they have; then `on_timeout` says what happens: "ask" makes no
    decision, as does an unreachable server: `fallback` decides then (your own
    `can_use_tool`), or, without one, the tool is denied with the reason. A Cancel denies with
    "Interrupted by <who>". `cwd` names the project in the question (default: the current
    directory).
    """
    settings = Settings()
    server = url or settings.server_url
    secret = token or (settings.api_token.get_secret_value() if settings.api_token else None)
    options = _hook_options(target, answerers, quorum, timeout_s, on_timeout)
    where = str(cwd or os.getcwd())

    async def can_use_tool(
        tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResult:
        call = ToolCall(
            source=Source.CAN_USE_TOOL,
            tool_name=tool_name,
            tool_input=tool_input,
            tool_use_id=context.tool_use_id,
            cwd=where,
            permission_suggestions=tuple(s.to_dict() for s in context.suggestions),
        )
        async with AskbridgeClient(
            server, secret, reconnect_for_s=options.wait_s, create_patience_s=CREATE_PATIENCE_S
        ) as client:
            decision = await decision_for(call, options, ClientAsking(client))
        if decision.behavior == "allow":
            updates = [PermissionUpdate.from_dict(p) for p in decision.updated_permissions]
            return PermissionResultAllow(
                updated_input=decision.updated_input, updated_permissions=updates or None
            )
        if decision.behavior == "deny":
            return PermissionResultDeny(message=decision.message)
        if fallback is not None:
            return await fallback(tool_name, tool_input, context)
        return PermissionResultDeny(message=decision.message or "askbridge: no decision")

    return can_use_tool


def elicitation_settings(
    *,
    url: str | None = None,
    target: str | Sequence[str] = (),
    answerers: Sequence[str] = (),
    quorum: int = 1,
    timeout_s: float = DEFAULT_HOOK_TIMEOUT_S,
    on_timeout: Literal["ask", "deny"] = "ask",
    servers: str = "*",
) -> str:
    """`ClaudeAgentOptions.settings` (inline JSON) that ask people to fill in the forms, or
    open the links, that the session's MCP servers ask for, through the askbridge server at
    `url` (default: ASKBRIDGE_URL); `servers` matches the MCP servers' names.

    The SDK offers no callback for elicitations, and Claude Code reads an Elicitation hook's
    answer only from a command's (or an HTTP hook's) output, so these settings install
    `askbridge hook claude-code` as the session's Elicitation command hook; it finds the
    token in ASKBRIDGE_API_TOKEN. The server gets accept with the values typed as its schema
    says, decline, or cancel; `on_timeout="deny"` declines when nobody answers in time.
    """
    options = _hook_options(target, answerers, quorum, timeout_s, on_timeout)
    hook = command_hook(options, url or Settings().server_url)
    return json.dumps({"hooks": {elicitation.EVENT: [{"matcher": servers, "hooks": [hook]}]}})


def _hook_options(
    target: str | Sequence[str],
    answerers: Sequence[str],
    quorum: int,
    timeout_s: float,
    on_timeout: Literal["ask", "deny"],
) -> HookOptions:
    """The hook's options of a helper's keyword arguments (one target may be given bare)."""
    return HookOptions(
        target=(target,) if isinstance(target, str) else tuple(target),
        answerers=tuple(answerers),
        quorum=quorum,
        timeout_s=timeout_s,
        on_timeout=on_timeout,
    )


__all__ = ["ask_people", "elicitation_settings"]
