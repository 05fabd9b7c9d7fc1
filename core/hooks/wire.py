"""Claude Code's hook payloads, typed apart from askbridge's own models: what a PreToolUse,
PermissionRequest or Elicitation hook receives, and what it answers (as observed with Claude
Code 2.1.332).

Field names are Claude Code's. Unknown input fields are ignored: Claude Code adds fields
(`effort`, `transcript_path`, …) that askbridge does not need.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema


def _none(value: object) -> bool:
    return value is None


def omitted(description: str | None = None) -> Any:
    """A field left out of the JSON while it is None, as Claude Code reads absent fields."""
    return Field(default=None, exclude_if=_none, description=description)


class Body(BaseModel):
    model_config = ConfigDict(frozen=True)


class HookInput(BaseModel):
    """What a PreToolUse or PermissionRequest hook receives, on stdin or as the POST body."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    hook_event_name: Literal["PreToolUse", "PermissionRequest"]
    tool_name: str = Field(min_length=1)
    tool_input: dict[str, Any]
    tool_use_id: str | None = Field(default=None, description="PreToolUse only")
    session_id: str = ""
    prompt_id: str = ""
    cwd: str = ""
    permission_suggestions: list[dict[str, Any]] = Field(
        default_factory=list, description="PermissionRequest only: rules Claude Code would add"
    )


class ElicitationInput(BaseModel):
    """What an Elicitation hook receives: an MCP server asks the user for input, a form
    (`requested_schema`) or, in URL mode, a link to open (`url`)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    hook_event_name: Literal["Elicitation"]
    mcp_server_name: str = Field(min_length=1)
    message: str
    mode: Literal["form", "url"] = "form"
    requested_schema: dict[str, Any] | None = Field(default=None, description="form mode")
    url: str | None = Field(default=None, description="URL mode")
    elicitation_id: str | None = Field(
        default=None, description="URL mode, before MCP 2026-07-28 (Claude Code 2.1.332 sends none)"
    )
    session_id: str = ""
    prompt_id: str = ""
    cwd: str = ""


class PreToolUseDecision(Body):
    hookEventName: Literal["PreToolUse"] = "PreToolUse"
    permissionDecision: Literal["allow", "deny"]
    permissionDecisionReason: str | SkipJsonSchema[None] = omitted(
        "deny: what the model reads; allow: what the person at the terminal sees"
    )
    updatedInput: dict[str, Any] | SkipJsonSchema[None] = omitted(
        "AskUserQuestion: the questions unchanged, with answers (and annotations)"
    )


class PermissionVerdict(Body):
    behavior: Literal["allow", "deny"]
    message: str | SkipJsonSchema[None] = omitted("deny: what the model reads")
    updatedInput: dict[str, Any] | SkipJsonSchema[None] = omitted()
    updatedPermissions: list[dict[str, Any]] | SkipJsonSchema[None] = omitted(
        "Always allow: the rules Claude Code suggested"
    )


class PermissionRequestDecision(Body):
    hookEventName: Literal["PermissionRequest"] = "PermissionRequest"
    decision: PermissionVerdict


class ElicitationDecision(Body):
    hookEventName: Literal["Elicitation"] = "Elicitation"
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | SkipJsonSchema[None] = omitted(
        "accept of a form: field name -> value, typed as the schema says"
    )


class HookOutput(Body):
    """What the hook answers. Without `hookSpecificOutput` it decides nothing, and Claude Code
    asks its own user; `systemMessage` tells that person why."""

    hookSpecificOutput: (
        PreToolUseDecision | PermissionRequestDecision | ElicitationDecision | SkipJsonSchema[None]
    ) = omitted("the decision")
    systemMessage: str | SkipJsonSchema[None] = omitted("shown to the person at the terminal")

    @classmethod
    def undecided(cls, why: str) -> HookOutput:
        """No decision: Claude Code asks its own user next, who is told `why` ("" tells
        nothing)."""
        return cls(systemMessage=f"{why}; answer here" if why else None)

    def json_object(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
