"""Claude Code's questions and tool approvals as askbridge requests, and the answers back.

One mapping serves the command hook, the HTTP hook (`POST /v1/hooks/claude-code`) and the Agent
SDK's `can_use_tool`: `ToolCall` is what Claude Code asks about, `ask_for` makes its `Ask` (its
request id derives from the call, so an input delivered twice is asked once; an approval takes
a note, the reason the model reads), `decide` reads the status object back, and `hook_output`
words the decision; never an `allow` without answers.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from askbridge.core.ask import MAX_QUORUM, REQUEST_ID_PATTERN, Ask
from askbridge.core.errors import ASK_USER_QUESTION, AskbridgeError
from askbridge.core.hooks.suggestions import Remember, remember_options
from askbridge.core.hooks.wire import (
    HookInput,
    HookOutput,
    PermissionRequestDecision,
    PermissionVerdict,
    PreToolUseDecision,
)
from askbridge.core.permissions import ALLOW_ONCE, HEADER, permission_questions
from askbridge.core.problems import invalid
from askbridge.core.tool_view import FileText, ToolUse, tool_view

ASK_TOOL = "AskUserQuestion"
CLAUDE_CODE_PATH = "/v1/hooks/claude-code"
DEFAULT_HOOK_TIMEOUT_S = 600.0
MIN_HOOK_TIMEOUT_S = 2.0
MAX_HOOK_TIMEOUT_S = 24 * 3600.0
MAX_CONTEXT_CWD_CHARS = 300
FILE_TOOLS = frozenset({"Edit", "MultiEdit", "Write"})
"""The tools whose change the command hook shows against the file as it is."""

AGENT = "Claude Code"
"""Who asks, as people know it."""


class Source(enum.StrEnum):
    """What asked: a hook event, or the Agent SDK's permission callback."""

    PRE_TOOL_USE = "PreToolUse"
    PERMISSION_REQUEST = "PermissionRequest"
    CAN_USE_TOOL = "can_use_tool"


class BadHookInput(AskbridgeError):
    """The hook input is not what Claude Code sends; the text says what is wrong."""


class HookOptions(BaseModel):
    """Where and whom a hook asks, and how long Claude Code lets it wait."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    target: tuple[str, ...] = Field(default=(), description="where to ask; absent: the default")
    answerers: tuple[str, ...] = Field(default=(), description="who may answer; absent: anyone")
    quorum: int = Field(
        default=1, ge=1, le=MAX_QUORUM, description="how many must give the same answers"
    )
    timeout_s: float = Field(
        default=DEFAULT_HOOK_TIMEOUT_S,
        ge=MIN_HOOK_TIMEOUT_S,
        le=MAX_HOOK_TIMEOUT_S,
        description="the hook's `timeout` in Claude Code's settings; askbridge's deadline ends "
        "a little before it",
    )
    on_timeout: Literal["ask", "deny"] = Field(
        default="ask",
        description="nobody answered in time: ask: no decision, Claude Code asks its own user; "
        "deny: refuse",
    )

    def updated(self, given: Mapping[str, Any]) -> HookOptions:
        """These options with the `given` fields replaced; ValueError naming a bad one."""
        try:
            return HookOptions.model_validate({**self.model_dump(), **given})
        except ValidationError as error:
            detail = error.errors()[0]
            name = ".".join(map(str, detail["loc"]))
            raise ValueError(f"{name}: {detail['msg']}, got {detail.get('input')!r}") from None

    @property
    def deadline_s(self) -> float:
        """The question's deadline: early enough that the decision reaches Claude Code."""
        return self.timeout_s - _margin(self.timeout_s)

    @property
    def wait_s(self) -> float:
        """How long a hook waits for the outcome at most, the deadline's expiry included."""
        return self.timeout_s - _margin(self.timeout_s) / 2


def _margin(timeout_s: float) -> float:
    return min(10.0, max(1.0, timeout_s / 10))


class ToolCall(BaseModel):
    """A tool call Claude Code wants a decision on."""

    model_config = ConfigDict(frozen=True)

    source: Source
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str | None = None
    session_id: str = ""
    prompt_id: str = ""
    cwd: str = ""
    permission_suggestions: tuple[dict[str, Any], ...] = ()
    file: FileText | None = None
    """The file the call changes, as the command hook read it on the agent's machine."""

    @classmethod
    def from_hook(cls, raw: Any) -> ToolCall:
        """A `PreToolUse` or `PermissionRequest` hook's input; BadHookInput otherwise."""
        if not isinstance(raw, Mapping):
            raise BadHookInput("the hook input must be a JSON object")
        event = raw.get("hook_event_name")
        if event not in (Source.PRE_TOOL_USE, Source.PERMISSION_REQUEST):
            raise BadHookInput(
                "askbridge answers PreToolUse, PermissionRequest and Elicitation hooks, "
                f"got {event!r}"
            )
        try:
            given = HookInput.model_validate(raw)
        except ValidationError as error:
            where = ", ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
            raise BadHookInput(f"the hook input is not Claude Code's: {where}") from None
        return cls(
            source=Source(given.hook_event_name),
            tool_name=given.tool_name,
            tool_input=given.tool_input,
            tool_use_id=given.tool_use_id,
            session_id=given.session_id,
            prompt_id=given.prompt_id,
            cwd=given.cwd,
            permission_suggestions=tuple(given.permission_suggestions),
        )

    @property
    def is_question(self) -> bool:
        return self.tool_name == ASK_TOOL

    @property
    def request_id(self) -> str:
        """The askbridge request id: the tool call's own id when it has one; a permission
        prompt has none, so its session, prompt and a digest of its input name it."""
        if self.tool_use_id and REQUEST_ID_PATTERN.fullmatch(f"claude_{self.tool_use_id}"):
            return f"claude_{self.tool_use_id}"
        named = [self.session_id, self.prompt_id, self.cwd, self.tool_name, self.tool_input]
        digest = hashlib.sha256(json.dumps(named, sort_keys=True).encode()).hexdigest()
        return f"claude_perm_{digest[:40]}"

    @property
    def context(self) -> str:
        cwd, most = self.cwd, MAX_CONTEXT_CWD_CHARS
        where = cwd if len(cwd) <= most else "…" + cwd[1 - most :]
        text = f"{AGENT} in {where}" if where else AGENT
        return f"{text} (session {self.session_id[:8]})" if self.session_id else text


@dataclass(frozen=True)
class Decision:
    """What Claude Code is told. `behavior` None: no decision, Claude Code asks its own user
    (the terminal dialog, or the SDK host), and `message` says why (`askbridge: …`)."""

    behavior: Literal["allow", "deny"] | None
    message: str = ""
    updated_input: dict[str, Any] | None = None
    updated_permissions: tuple[dict[str, Any], ...] = ()


def no_decision(reason: str = "") -> Decision:
    return Decision(None, f"askbridge: {reason}" if reason else "")


def ask_for(call: ToolCall, options: HookOptions) -> Ask | None:
    """The request for `call`; None when askbridge leaves it to Claude Code: a permission
    prompt for AskUserQuestion comes only after its PreToolUse hook gave no decision."""
    if call.is_question and call.source is Source.PERMISSION_REQUEST:
        return None
    fields: dict[str, Any] = {
        "request_id": call.request_id,
        "context": call.context,
        "timeout_s": options.deadline_s,
        "quorum": options.quorum,
    }
    if options.target:
        fields["target"] = list(options.target)
    if options.answerers:
        fields["answerers"] = list(options.answerers)
    if call.is_question:
        questions = call.tool_input.get("questions")
        return Ask.parse(
            {**fields, "questions": questions, "allow_other": True, "allow_notes": True}
        )
    # The approval is bound to the exact tool input it shows (subject_sha256).
    # The input is sent once, as the subject; the tool call shown takes it from there.
    try:
        use = ToolUse(name=call.tool_name, cwd=call.cwd, file=call.file)
        questions = _approval(call)
    except ValidationError as error:
        # A text the call carries that cannot be kept (a lone surrogate in its cwd).
        raise invalid(error, "tool").about(ASK_USER_QUESTION) from None
    fields.update(questions=questions, subject=dict(call.tool_input), tool=use)
    # A note given with the answer is the reason the model reads ("Denied by alice: …").
    fields["allow_notes"] = True
    # Claude Code runs the input it is given back (`updatedInput`), so people may change it.
    fields["allow_changes"] = call.tool_name != "ExitPlanMode"
    return Ask.parse(fields)


def changed_file(call: ToolCall) -> str | None:
    """The file `call` changes, whose text shows the change in place (line numbers, context,
    whether the old text is there); None for a call that changes no file."""
    if call.tool_name not in FILE_TOOLS:
        return None
    path = call.tool_input.get("file_path")
    return path if isinstance(path, str) and path else None


def _approval(call: ToolCall) -> list[dict[str, Any]]:
    # The tool call itself is shown apart (`Ask.tool`), as people know it.
    shown = tool_view(ToolUse(name=call.tool_name, input=call.tool_input, cwd=call.cwd))
    prompt = {"tool_name": call.tool_name, "action": shown.action, "input": call.tool_input}
    questions = permission_questions(prompt, always=None, shown=True, agent=AGENT)
    remember = [{"label": r.label, "description": r.description} for r in _remember(call)]
    questions[0]["options"][1:1] = remember
    return questions


def _remember(call: ToolCall) -> list[Remember]:
    """The "always" options: Claude Code's suggestions, one each; none from a PreToolUse hook,
    which cannot add permissions."""
    if call.source is Source.PRE_TOOL_USE:
        return []
    return remember_options(call.permission_suggestions)


def decide(call: ToolCall, status: Mapping[str, Any], options: HookOptions) -> Decision:
    """The decision a request's status object stands for."""
    match status.get("status"):
        case "answered":
            return _answered(call, status)
        case "cancelled":
            return Decision("deny", f"Interrupted by {_who(status.get('cancelled_by'))}")
        case "expired" | "waiting":
            if options.on_timeout == "deny":
                return Decision("deny", "Timed out waiting for an answer")
            return no_decision("nobody answered in time")
        case "withdrawn":
            return no_decision("the question was withdrawn")
    return no_decision(f"unexpected status {status.get('status')!r}")


def _answered(call: ToolCall, status: Mapping[str, Any]) -> Decision:
    who = _who(status.get("answered_by"))
    if not call.is_question:
        choice = (status.get("answers") or {}).get(HEADER)
        reason = (status.get("notes") or {}).get(HEADER)
        because = f": {reason}" if isinstance(reason, str) and reason.strip() else ""
        changed = status.get("approved_input")
        if choice == ALLOW_ONCE and isinstance(changed, dict):
            return Decision("allow", f"Allowed with changes by {who}{because}", dict(changed))
        if choice == ALLOW_ONCE:
            return Decision("allow", f"Allowed by {who}{because}")
        for remember in _remember(call):
            if choice == remember.label:
                always = f"Always allowed by {who}{because}"
                return Decision("allow", always, None, remember.updates)
        return Decision("deny", f"Denied by {who}{because}")
    answers = status.get("answers_by_question") or {}
    asked = [
        q.get("question") for q in call.tool_input.get("questions") or () if isinstance(q, dict)
    ]
    if not asked or any(not isinstance(answers.get(q), str) or not answers[q] for q in asked):
        return no_decision("the answers did not fit the questions")
    updated = {**call.tool_input, "answers": {q: answers[q] for q in asked}}
    annotations = status.get("annotations")
    if annotations:
        updated["annotations"] = annotations
    return Decision("allow", f"Answered by {who}", updated)


def _who(person: Any) -> str:
    if isinstance(person, Mapping):
        return str(person.get("name") or person.get("id") or "someone")
    return "someone"


def hook_output(call: ToolCall, decision: Decision) -> HookOutput:
    """The hook's output: what Claude Code reads on stdout or in the HTTP response."""
    if decision.behavior is None:
        return HookOutput.undecided(decision.message)
    if call.source is Source.PRE_TOOL_USE:
        return HookOutput(
            hookSpecificOutput=PreToolUseDecision(
                permissionDecision=decision.behavior,
                permissionDecisionReason=decision.message or None,
                updatedInput=decision.updated_input,
            )
        )
    verdict = PermissionVerdict(
        behavior=decision.behavior,
        message=decision.message if decision.behavior == "deny" else None,
        updatedInput=decision.updated_input,
        updatedPermissions=list(decision.updated_permissions) or None,
    )
    return HookOutput(hookSpecificOutput=PermissionRequestDecision(decision=verdict))
