"""Claude Code's MCP elicitations (the `Elicitation` hook) as form requests, and the answer back.

An MCP server asks the user for input mid-call: a form (a message and MCP's restricted schema)
or, in URL mode, a link to open. `Elicitation` is what Claude Code hands the hook; `ask_for`
makes its form `Ask` (the server named, its message shown; a link is answered Done or Decline);
`answer` reads the status object back into the action and typed content Claude Code passes to
the server, which checks nothing itself.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from askbridge.core.ask import Ask
from askbridge.core.hooks.claude_code import MAX_CONTEXT_CWD_CHARS, BadHookInput, HookOptions
from askbridge.core.hooks.wire import ElicitationDecision, ElicitationInput, HookOutput

EVENT = "Elicitation"
NOT_CLAUDE_CODES = "the Elicitation hook input is not Claude Code's"
MAX_SERVER_CHARS = 100
"""The most of a server's name the context shows, so that it stays within an ask's context."""


class Elicitation(BaseModel):
    """An MCP server's request for input, as Claude Code hands it to the hook."""

    model_config = ConfigDict(frozen=True)

    server: str
    message: str
    requested_schema: dict[str, Any] | None = None
    url: str | None = None
    session_id: str = ""
    prompt_id: str = ""
    cwd: str = ""

    @classmethod
    def from_hook(cls, raw: Mapping[str, Any]) -> Elicitation:
        """An Elicitation hook's input; BadHookInput when it is not Claude Code's."""
        try:
            given = ElicitationInput.model_validate(raw)
        except ValidationError as error:
            where = ", ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
            raise BadHookInput(f"{NOT_CLAUDE_CODES}: {where}") from None
        if given.mode == "url" and not given.url:
            raise BadHookInput(f"{NOT_CLAUDE_CODES}: url mode without a url")
        if given.mode == "form" and given.requested_schema is None:
            raise BadHookInput(f"{NOT_CLAUDE_CODES}: form mode without a requested_schema")
        return cls(
            server=given.mcp_server_name,
            message=given.message,
            requested_schema=given.requested_schema if given.mode == "form" else None,
            url=given.url if given.mode == "url" else None,
            session_id=given.session_id,
            prompt_id=given.prompt_id,
            cwd=given.cwd,
        )

    @property
    def request_id(self) -> str:
        """The askbridge request id. The input carries no id of its own, so the session, the
        prompt, the server and a digest of what it asks name it: a hook input delivered twice
        is asked once, and a different form in the same prompt is a request of its own."""
        asked = hashlib.sha256(
            json.dumps([self.message, self.requested_schema, self.url], sort_keys=True).encode()
        ).hexdigest()
        named = [self.session_id, self.prompt_id, self.server, asked]
        digest = hashlib.sha256(json.dumps(named).encode()).hexdigest()
        return f"claude_elicit_{digest[:40]}"

    @property
    def context(self) -> str:
        cwd, most = self.cwd, MAX_CONTEXT_CWD_CHARS
        where = cwd if len(cwd) <= most else "…" + cwd[1 - most :]
        text = f"Claude Code in {where}" if where else "Claude Code"
        if self.session_id:
            text = f"{text} (session {self.session_id[:8]})"
        server = self.server
        if len(server) > MAX_SERVER_CHARS:
            server = server[: MAX_SERVER_CHARS - 1] + "…"
        return f"{text}: the MCP server {server} asks"


def ask_for(elicitation: Elicitation, options: HookOptions) -> Ask:
    """The form request; InvalidQuestion when askbridge cannot show the form."""
    form: dict[str, Any] = {"message": elicitation.message}
    if elicitation.url is not None:
        form["url"] = elicitation.url
    else:
        form["requested_schema"] = elicitation.requested_schema
    fields: dict[str, Any] = {
        "request_id": elicitation.request_id,
        "context": elicitation.context,
        "timeout_s": options.deadline_s,
        "quorum": options.quorum,
        "form": form,
    }
    if options.target:
        fields["target"] = list(options.target)
    if options.answerers:
        fields["answerers"] = list(options.answerers)
    return Ask.parse(fields)


Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class Answer:
    """What the MCP server is told. `action` None: no decision, Claude Code asks its own user
    (its SDK host, or the terminal dialog), and `message` says why (`askbridge: …`)."""

    action: Action | None
    content: dict[str, Any] | None = None
    message: str = ""


def no_answer(reason: str = "") -> Answer:
    return Answer(None, None, f"askbridge: {reason}" if reason else "")


def answer(elicitation: Elicitation, status: Mapping[str, Any], options: HookOptions) -> Answer:
    """The answer a form request's status object stands for."""
    match status.get("status"):
        case "answered":
            who = _who(status.get("answered_by"))
            if elicitation.url is not None:
                return Answer("accept", None, f"Done, said {who}")
            content = status.get("content")
            if not isinstance(content, dict):
                return no_answer("the answer carried no values")
            return Answer("accept", content, f"Filled in by {who}")
        case "declined":
            return Answer("decline", None, f"Declined by {_who(status.get('declined_by'))}")
        case "cancelled":
            return Answer("cancel", None, f"Cancelled by {_who(status.get('cancelled_by'))}")
        case "expired" | "waiting":
            if options.on_timeout == "deny":
                return Answer("decline", None, "Timed out waiting for an answer")
            return no_answer("nobody answered in time")
        case "withdrawn":
            return no_answer("the question was withdrawn")
    return no_answer(f"unexpected status {status.get('status')!r}")


def _who(person: Any) -> str:
    if isinstance(person, Mapping):
        return str(person.get("name") or person.get("id") or "someone")
    return "someone"


def hook_output(given: Answer) -> HookOutput:
    """The Elicitation hook's output: the action and, for an accepted form, its content."""
    if given.action is None:
        return HookOutput.undecided(given.message)
    return HookOutput(
        hookSpecificOutput=ElicitationDecision(action=given.action, content=given.content)
    )
