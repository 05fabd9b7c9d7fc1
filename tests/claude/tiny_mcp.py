"""A tiny stdio MCP server for the real-CLI tests: one tool, `create_ticket(title, body)`.

Newline-delimited JSON-RPC on stdin and stdout, as MCP's stdio transport is; written out here
so the test depends on nothing but the protocol. Run as a script: `python tiny_mcp.py`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOL = {
    "name": "create_ticket",
    "description": "Open a ticket in the team's tracker.",
    "inputSchema": {
        "type": "object",
        "properties": {"title": {"type": "string"}, "body": {"type": "string"}},
        "required": ["title", "body"],
    },
}


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message:
        return None  # a notification
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "tickets", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        title = params.get("arguments", {}).get("title", "")
        result = {"content": [{"type": "text", "text": f"Opened ticket T-1: {title}"}]}
    else:
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "?"}}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
