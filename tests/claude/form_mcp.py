"""A tiny stdio MCP server, on the official `mcp` SDK, whose tools ask the user for input.

`file_expense` elicits a form (an email, an integer with bounds, a boolean, a single choice
and a multi-choice); `connect_account` a URL-mode elicitation. Each follows the protocol the
client negotiated: from 2026-07-28 the tool returns an input-required result carrying the
elicitation and reads the answer when the client calls it again; before that it sends
`elicitation/create` mid-call. Every answer it receives is appended, as one JSON line, to the
file named by $FORM_MCP_LOG, so a test reads exactly what the server got.

Run as a script: `python form_mcp.py`.
"""

from __future__ import annotations

import json
import os
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
)
from mcp_types.version import is_version_at_least

LOG_ENV = "FORM_MCP_LOG"
SERVER = "expenses"
MESSAGE = "Details for the expense report"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email", "title": "Your email"},
        "amount": {
            "type": "integer",
            "title": "Amount (EUR)",
            "description": "Whole euros, 1 to 500",
            "minimum": 1,
            "maximum": 500,
        },
        "urgent": {"type": "boolean", "title": "Urgent", "default": False},
        "category": {
            "type": "string",
            "title": "Category",
            "enum": ["travel", "meals", "gear"],
            "enumNames": ["Travel", "Meals", "Gear"],
        },
        "tags": {
            "type": "array",
            "title": "Tags",
            "items": {"type": "string", "enum": ["q3", "client", "internal"]},
            "minItems": 1,
        },
    },
    "required": ["email", "amount", "category", "tags"],
}
URL_MESSAGE = "Sign in to the accounting system"
URL = "https://accounts.example.com/connect?state=abc"
ELICITATION_ID = "connect-1"
INPUT_REQUIRED = "2026-07-28"

server: MCPServer[Any] = MCPServer(name=SERVER, version="1.0.0")


def record(tool: str, ctx: Context, result: ElicitResult) -> str:
    line = {
        "tool": tool,
        "protocol": ctx.protocol_version,
        "action": result.action,
        "content": result.content,
    }
    path = os.environ.get(LOG_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps(line) + "\n")
    return json.dumps({"action": result.action, "content": result.content}, sort_keys=True)


async def elicited(ctx: Context, key: str, params: Any) -> ElicitResult | InputRequiredResult:
    """The answer to `params`: asked as the negotiated protocol asks."""
    version = ctx.protocol_version or ""
    if not is_version_at_least(version, INPUT_REQUIRED):
        session: Any = ctx.session
        if isinstance(params, ElicitRequestURLParams):
            return ElicitResult.model_validate(
                (await ctx.elicit_url(params.message, params.url, ELICITATION_ID)).model_dump()
            )
        found = await session.elicit_form(
            message=params.message,
            requested_schema=params.requested_schema,
            related_request_id=ctx.request_id,
        )
        return ElicitResult.model_validate(found.model_dump())
    responses = ctx.input_responses or {}
    answer = responses.get(key)
    if isinstance(answer, ElicitResult):
        return answer
    if isinstance(answer, dict):
        return ElicitResult.model_validate(answer)
    return InputRequiredResult(input_requests={key: ElicitRequest(params=params)})


@server.tool(description="File an expense report; asks the user for its details.")
async def file_expense(ctx: Context) -> str | InputRequiredResult:
    params = ElicitRequestFormParams(message=MESSAGE, requested_schema=SCHEMA)
    result = await elicited(ctx, "details", params)
    if isinstance(result, InputRequiredResult):
        return result
    return record("file_expense", ctx, result)


@server.tool(description="Connect the accounting account; the user signs in on a web page.")
async def connect_account(ctx: Context) -> str | InputRequiredResult:
    params = ElicitRequestURLParams(message=URL_MESSAGE, url=URL, elicitation_id=ELICITATION_ID)
    result = await elicited(ctx, "connect", params)
    if isinstance(result, InputRequiredResult):
        return result
    return record("connect_account", ctx, result)


if __name__ == "__main__":
    server.run("stdio")
