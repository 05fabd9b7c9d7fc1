"""`askbridge hook claude-code`: Claude Code's command hook, and the settings that install it.

The hook reads the hook input on stdin, asks a running askbridge server through the client,
waits, and prints the hook output. Whatever goes wrong, it prints a valid output that makes
no decision (Claude Code then asks in the terminal) and says why in one line on stderr: it
never hangs past the hook's timeout and never answers with empty answers.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from askbridge.bots.client import AskbridgeClient, ClientError, Unanswered
from askbridge.bots.host_process import ended, host_pid
from askbridge.bots.settings import with_where_to_set
from askbridge.core.ask import Ask
from askbridge.core.errors import AskbridgeError
from askbridge.core.hooks.claude_code import CLAUDE_CODE_PATH, HookOptions, ToolCall, changed_file
from askbridge.core.hooks.flow import MaybeAsked, Unavailable, output_for, read_hook
from askbridge.core.hooks.wire import HookOutput
from askbridge.core.tool_view import MAX_FILE_BYTES, FileText

POLL_S = 60.0
# A server that is not there is said at once: every tool call would wait for it otherwise.
CREATE_PATIENCE_S = 1.0
TOKEN_VARIABLE = "ASKBRIDGE_API_TOKEN"


class ClientAsking:
    """A running askbridge server, through the client, as a hook's `Asking`."""

    def __init__(self, client: AskbridgeClient) -> None:
        self.client = client

    async def ask(self, ask: Ask) -> dict[str, Any]:
        try:
            return await self.client.create(ask)
        except Unanswered as error:
            raise MaybeAsked(str(error)) from error
        except ClientError as error:
            raise Unavailable(with_where_to_set(error)) from error

    async def wait(self, request_id: str, seconds: float) -> dict[str, Any]:
        try:
            return await self.client.get(request_id, max(0.001, min(seconds, POLL_S)))
        except ClientError as error:
            raise Unavailable(with_where_to_set(error)) from error

    async def withdraw(self, request_id: str) -> None:
        try:
            await self.client.withdraw(request_id)
        except ClientError as error:
            if error.status != 409:
                raise Unavailable(with_where_to_set(error)) from error


async def answer_hook(
    text: str, options: HookOptions, url: str, token: str | None
) -> tuple[dict[str, Any], str]:
    """The hook output for the hook input `text`, and a line for stderr ("" when none)."""
    try:
        hooked = read_hook(json.loads(text))
    except (ValueError, AskbridgeError) as error:
        # No decision, and the person at the terminal is told why, without "answer here":
        # on an event askbridge does not answer, nothing may be waiting for an answer.
        line = f"askbridge: cannot read the hook input: {error}"
        return HookOutput(systemMessage=line).json_object(), line
    if isinstance(hooked, ToolCall):
        hooked = with_file(hooked)
    async with AskbridgeClient(
        url, token, reconnect_for_s=options.wait_s, create_patience_s=CREATE_PATIENCE_S
    ) as client:
        output, problem = await output_for(hooked, options, ClientAsking(client))
    return output.json_object(), problem


def undecided(reason: str) -> tuple[dict[str, Any], str]:
    """The output that decides nothing (Claude Code asks its own user) because of `reason`,
    and the line for stderr that says so."""
    line = f"askbridge: {reason}"
    return HookOutput.undecided(line).json_object(), line


def with_file(call: ToolCall) -> ToolCall:
    """`call` with the text of the file it changes, read here on the agent's machine, so the
    approval shows the change in place; a file that cannot be read, or that is too long (or
    the input is), is left out: the change is still shown, without line numbers."""
    path = changed_file(call)
    if path is None:
        return call
    file = Path(path) if Path(path).is_absolute() else Path(call.cwd or ".") / path
    try:
        if file.stat().st_size > MAX_FILE_BYTES:
            return call
        text: str | None = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError):
        return call
    if len(json.dumps(call.tool_input, ensure_ascii=False).encode()) > MAX_FILE_BYTES:
        return call
    return call.model_copy(update={"file": FileText(path=path, text=text)})


async def run_hook(
    text: str, options: HookOptions, url: str, token: str | None
) -> tuple[dict[str, Any], str]:
    """`answer_hook` as a process Claude Code may stop: on SIGTERM or SIGINT (Claude Code is
    stopping), or when Claude Code itself ends (killed, its terminal gone), the question is
    withdrawn before the process ends."""
    task = asyncio.create_task(answer_hook(text, options, url, token), name="claude-hook")
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, task.cancel)
    host = host_pid()
    watch = None
    if host is not None:
        watch = asyncio.create_task(ended(host), name="claude-hook-host")
        watch.add_done_callback(lambda _: task.cancel())
    try:
        return await task
    except asyncio.CancelledError:
        if watch is not None and watch.done() and not watch.cancelled():
            return {}, "askbridge: Claude Code is gone; the question was withdrawn"
        return {}, "askbridge: stopped by Claude Code; the question was withdrawn"
    finally:
        if watch is not None:
            watch.cancel()


def print_settings(
    options: HookOptions,
    *,
    url: str,
    http: bool,
    with_token: bool,
    approvals: bool,
    pre_tool_use: str | None,
    elicitations: bool = True,
) -> str:
    """The `hooks` block of `.claude/settings.json` that sends Claude Code's questions (and,
    with `approvals`, its permission prompts; with `elicitations`, every MCP server's requests
    for input) to askbridge, as JSON."""
    block = hooks_block(
        options,
        url=url,
        http=http,
        with_token=with_token,
        approvals=approvals,
        pre_tool_use=pre_tool_use,
        elicitations=elicitations,
    )
    return json.dumps(block, indent=2, ensure_ascii=False)


def hooks_block(
    options: HookOptions,
    *,
    url: str,
    http: bool,
    with_token: bool,
    approvals: bool,
    pre_tool_use: str | None,
    elicitations: bool = True,
) -> dict[str, Any]:
    """The `hooks` block `print_settings` prints."""
    hook = _http_hook(options, url, with_token) if http else command_hook(options, url)
    matcher = f"AskUserQuestion|{pre_tool_use}" if pre_tool_use else "AskUserQuestion"
    hooks: dict[str, Any] = {"PreToolUse": [{"matcher": matcher, "hooks": [hook]}]}
    if approvals:
        hooks["PermissionRequest"] = [{"matcher": "*", "hooks": [hook]}]
    if elicitations:
        # An Elicitation hook's matcher is the MCP server's name: every server.
        hooks["Elicitation"] = [{"matcher": "*", "hooks": [hook]}]
    return {"hooks": hooks}


def command_hook(options: HookOptions, url: str) -> dict[str, Any]:
    """The command hook that runs `askbridge hook claude-code` with `options`."""
    args = [*_program(), "hook", "claude-code", "--url", url]
    for target in options.target:
        args += ["--target", target]
    for answerer in options.answerers:
        args += ["--answerer", answerer]
    if options.quorum != 1:
        args += ["--quorum", str(options.quorum)]
    args += ["--timeout", f"{options.timeout_s:g}"]
    if options.on_timeout != "ask":
        args += ["--on-timeout", options.on_timeout]
    return {"type": "command", "command": shlex.join(args), "timeout": _seconds(options)}


def _http_hook(options: HookOptions, url: str, with_token: bool) -> dict[str, Any]:
    query: list[tuple[str, str]] = [("target", t) for t in options.target]
    query += [("answerer", a) for a in options.answerers]
    if options.quorum != 1:
        query.append(("quorum", str(options.quorum)))
    query.append(("timeout", f"{options.timeout_s:g}"))
    if options.on_timeout != "ask":
        query.append(("on_timeout", options.on_timeout))
    hook: dict[str, Any] = {
        "type": "http",
        "url": f"{url.rstrip('/')}{CLAUDE_CODE_PATH}?{urlencode(query)}",
        "timeout": _seconds(options),
    }
    if with_token:
        hook["headers"] = {"Authorization": f"Bearer ${TOKEN_VARIABLE}"}
        hook["allowedEnvVars"] = [TOKEN_VARIABLE]
    return hook


def _seconds(options: HookOptions) -> int | float:
    whole = int(options.timeout_s)
    return whole if whole == options.timeout_s else options.timeout_s


def _program() -> Sequence[str]:
    """How to start this askbridge again from any directory: its console script, or this
    Python with the module."""
    script = Path(sys.argv[0])
    if script.name == "askbridge" and script.exists():
        return [str(script.resolve())]
    return [sys.executable, "-m", "askbridge.bots.cli"]


__all__ = [
    "ClientAsking",
    "answer_hook",
    "command_hook",
    "hooks_block",
    "print_settings",
    "run_hook",
    "undecided",
]
