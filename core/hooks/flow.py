"""One tool call or MCP elicitation, asked and waited for: the same steps for every kind of hook.

The HTTP hook asks the broker in the server's own process; the command hook and the Agent
SDK helper ask a server through the client. Both are an `Asking`; everything else is here:
ask, wait until the request ends or the hook's time is nearly up, take back a question
nobody needs any more, and decide.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any, Protocol

from askbridge.core.ask import Ask
from askbridge.core.errors import AskbridgeError, InvalidQuestion
from askbridge.core.hooks import elicitation
from askbridge.core.hooks.claude_code import (
    Decision,
    HookOptions,
    ToolCall,
    ask_for,
    decide,
    hook_output,
    no_decision,
)
from askbridge.core.hooks.elicitation import Answer, Elicitation, no_answer
from askbridge.core.hooks.wire import HookOutput

log = logging.getLogger("askbridge.hooks")

WITHDRAW_S = 2.0


class Unavailable(AskbridgeError):
    """askbridge could not take the question: the server is unreachable, the target is not
    set up, the platform refused the message."""


class MaybeAsked(Unavailable):
    """askbridge took the question but did not say it asked it (it did not answer in time): it
    may yet ask it once it runs again."""


class Asking(Protocol):
    """Where a hook's request goes. Each method returns the status object, as the agent API
    does; `ask` raises Unavailable when the question could not be asked, MaybeAsked when it
    may have been."""

    async def ask(self, ask: Ask) -> dict[str, Any]: ...

    async def wait(self, request_id: str, seconds: float) -> dict[str, Any]:
        """The status once the request ended, or as it is after `seconds`."""

    async def withdraw(self, request_id: str) -> None: ...


def read_hook(raw: Any) -> ToolCall | Elicitation:
    """A hook input askbridge answers: a tool call (PreToolUse, PermissionRequest) or an MCP
    elicitation; BadHookInput otherwise."""
    if isinstance(raw, Mapping) and raw.get("hook_event_name") == elicitation.EVENT:
        return Elicitation.from_hook(raw)
    return ToolCall.from_hook(raw)


async def output_for(
    hooked: ToolCall | Elicitation, options: HookOptions, asking: Asking
) -> tuple[HookOutput, str]:
    """The hook output for `hooked`, and why there is no decision ("" when there is one)."""
    if isinstance(hooked, Elicitation):
        given = await answer_for(hooked, options, asking)
        return elicitation.hook_output(given), given.message if given.action is None else ""
    decision = await decision_for(hooked, options, asking)
    return hook_output(hooked, decision), decision.message if decision.behavior is None else ""


async def decision_for(call: ToolCall, options: HookOptions, asking: Asking) -> Decision:
    """Ask about `call` and wait; the decision comes within `options.wait_s` seconds."""
    give_up = asyncio.get_running_loop().time() + options.wait_s
    try:
        ask = ask_for(call, options)
    except InvalidQuestion as error:
        problems = "; ".join(str(p) for p in error.problems)
        log.warning("cannot ask %s %s: %s", call.tool_name, call.request_id, problems)
        return no_decision(f"cannot show these questions ({problems})")
    if ask is None:
        return no_decision()
    status = await _outcome(ask, call.request_id, call.tool_name, give_up, asking)
    if isinstance(status, str):
        return no_decision(status)
    decision = decide(call, status, options)
    log.info("%s %s: %s", call.tool_name, call.request_id, decision.behavior or "no decision")
    return decision


async def answer_for(asked: Elicitation, options: HookOptions, asking: Asking) -> Answer:
    """Ask people to fill in an MCP server's form (or open its link) and wait; the answer
    comes within `options.wait_s` seconds."""
    give_up = asyncio.get_running_loop().time() + options.wait_s
    what = f"the elicitation of {asked.server}"
    try:
        ask = elicitation.ask_for(asked, options)
    except InvalidQuestion as error:
        problems = "; ".join(str(p) for p in error.problems)
        log.warning("cannot ask %s %s: %s", what, asked.request_id, problems)
        return no_answer(f"cannot show this form ({problems})")
    status = await _outcome(ask, asked.request_id, what, give_up, asking)
    if isinstance(status, str):
        return no_answer(status)
    given = elicitation.answer(asked, status, options)
    log.info("%s %s: %s", what, asked.request_id, given.action or "no decision")
    return given


async def _outcome(
    ask: Ask, request_id: str, what: str, give_up: float, asking: Asking
) -> dict[str, Any] | str:
    """The request's status once it ended, or as it was when the hook's time was nearly up
    (then withdrawn); a text saying why when it could not be asked or was lost."""
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout_at(give_up):
            status = await asking.ask(ask)
    except (Unavailable, TimeoutError) as error:
        reason = str(error) or "it did not answer in time"
        log.warning("could not ask %s %s: %s", what, request_id, reason)
        if isinstance(error, MaybeAsked | TimeoutError):
            # Nobody will wait for it: should the server ask it later, it is withdrawn, or
            # ends at its deadline if the withdrawal is not heard either.
            await _withdraw(asking, request_id)
        return f"could not ask: {reason}"
    try:
        async with asyncio.timeout_at(give_up):
            while status.get("status") == "waiting":
                status = await asking.wait(request_id, give_up - loop.time())
    except TimeoutError:
        pass
    except Unavailable as error:
        log.warning("lost %s while waiting: %s", request_id, error)
        return f"lost the question: {error}"
    except asyncio.CancelledError:
        # Claude Code stopped waiting (its user answered, or the hook was killed): take the
        # question back, so nobody answers into the void.
        await asyncio.shield(_withdraw(asking, request_id))
        raise
    if status.get("status") == "waiting":
        await _withdraw(asking, request_id)
    return status


async def _withdraw(asking: Asking, request_id: str) -> None:
    with contextlib.suppress(Unavailable, TimeoutError):
        async with asyncio.timeout(WITHDRAW_S):
            await asking.withdraw(request_id)
