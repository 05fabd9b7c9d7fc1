"""Tool-permission prompts (`PermissionRequest`) as ordinary single-question requests.

An approval is one single-select question, so every surface renders it, every policy
(answerers, quorum, deadline) applies, and the answer maps back to `PermissionResponse`.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from askbridge.core.models import Request, Status
from askbridge.core.tool_view import ToolUse

HEADER = "Permission"
ALLOW_ONCE, ALWAYS, DENY = "Allow once", "Always allow", "Deny"
MAX_INPUT_CHARS = 1500


def permission_questions(
    prompt: dict[str, Any],
    *,
    always: str | None = "",
    shown: bool = False,
    agent: str | None = None,
) -> list[dict[str, Any]]:
    """The approval as one question. `always` is what "Always allow" does, in words (empty:
    the tool runs without asking again); None leaves that option out, for hosts that cannot
    remember an approval. `shown`: the request shows the tool call itself (`tool_use`), so
    the question leaves its input out. `agent`: who asks, when the action names what the tool
    does ("Allow Claude Code to edit app.py?", not "Allow Edit to edit app.py?")."""
    tool = str(prompt.get("tool_name") or "a tool")
    action = str(prompt.get("action") or "run")
    text = f"Allow {agent or tool} to {action}?"
    details = prompt.get("details")
    if details:
        text += f"\n{details}"
    if prompt.get("input") is not None and not shown:
        text += f"\n```\n{_shorten(_show(prompt['input']))}\n```"
    options = [{"label": ALLOW_ONCE, "description": "Let this one call run"}]
    if always is not None:
        options.append(
            {"label": ALWAYS, "description": always or f"Let {tool} run without asking again"}
        )
    options.append({"label": DENY, "description": "Refuse; the agent is told no"})
    return [{"question": text, "header": HEADER, "multi_select": False, "options": options}]


def tool_use(prompt: dict[str, Any]) -> ToolUse | None:
    """The tool call a `PermissionRequest` asks about, to be shown as people know it; None
    when it names no tool. An input that is one text is shown as the tool's `input`."""
    name, given = prompt.get("tool_name"), prompt.get("input")
    if not isinstance(name, str) or not name.strip():
        return None
    if isinstance(given, str):
        given = {"command": given} if name == "Bash" else {"input": given}
    try:
        return ToolUse(name=name, input=given if isinstance(given, dict) else {})
    except ValidationError:
        return None


def permission_response(prompt: dict[str, Any], request: Request) -> dict[str, Any]:
    """Allowed only by an explicit Allow; a cancel, deadline or withdrawal denies."""
    choice = (request.answers or {}).get(HEADER) if request.status is Status.ANSWERED else None
    return {
        "PermissionResponse": {
            "tool_name": prompt.get("tool_name"),
            "allowed": choice in (ALLOW_ONCE, ALWAYS),
            "remember": choice == ALWAYS,
        }
    }


def _show(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def _shorten(text: str) -> str:
    # Keep the fence intact: a backtick run inside the input must not close the code block.
    text = text.replace("```", "`\u200b``")
    return text if len(text) <= MAX_INPUT_CHARS else text[: MAX_INPUT_CHARS - 1] + "…"
