"""`askbridge mcp`: askbridge as a Model Context Protocol server on stdio.

Any MCP client (Claude Code, Claude Desktop, an agent framework) gets two tools:
`ask_user_question`, with AskUserQuestion's input, which returns the answers keyed by header,
and `ask_form`, with an MCP elicitation's message and schema, which returns the action and the
typed values. Each posts to a running askbridge server and waits for people to answer where
the target says, with progress notifications while it waits.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field, SkipValidation
from pydantic.json_schema import SkipJsonSchema

from askbridge.bots.client import AskbridgeClient, ClientError
from askbridge.bots.settings import with_where_to_set
from askbridge.bots.surfaces import surface_words
from askbridge.core.ask import Ask, TimeoutAnswers
from askbridge.core.errors import InvalidQuestion
from askbridge.core.models import UserQuestion
from askbridge.core.version import VERSION

PROGRESS_EVERY_S = 15.0
"""How often a waiting tool call tells the client it is still alive: clients that abort a
tool idle for 60 s (or five minutes) keep waiting for a person."""

WORDS = surface_words()
INSTRUCTIONS = (
    f"ask_user_question asks people (in {WORDS.titles()}) 1-4 multiple-choice questions and "
    "waits until they answer. Use it when a decision needs a human; the answers come back "
    "keyed by each question's header. ask_form asks them to fill in a typed form (text, "
    "numbers, dates, yes/no, choices) and returns the values typed, or that they declined."
)


class Answers(BaseModel):
    answers: dict[str, str] = Field(description="header -> chosen label(s), ', '-joined")
    answered_by: str = Field(description="who answered, or 'timeout' for a default decision")
    notes: dict[str, str] = Field(
        default_factory=dict, description="header -> a note the person added to that answer"
    )


class FormResult(BaseModel):
    action: Literal["accept", "decline", "cancel"] = Field(
        description="accept: filled in (see content); decline: a person said no; cancel: a "
        "person cancelled"
    )
    # MCP's ElicitResult holds content only for an accepted form: left out otherwise.
    content: dict[str, Any] | SkipJsonSchema[None] = Field(
        default=None,
        exclude_if=lambda content: content is None,
        description="accept of a form (not of a url): field name -> value, typed as the "
        "schema says (integers as integers, booleans as true/false, dates as ISO texts)",
    )
    by: str = Field(description="who answered, or 'timeout' for the on_timeout content")


FORM_DESCRIPTION = (
    "Ask people to fill in a typed form and wait: MCP elicitation's message and "
    "requested_schema, a flat object of at most 10 properties (fewer where a target shows "
    "fewer: the refusal says how many): string (title, description, "
    "minLength, maxLength, format: email|uri|date|date-time, default), number or integer "
    "(minimum, maximum, exclusiveMinimum, exclusiveMaximum, default), boolean (default), a "
    "single choice (enum + enumNames, or oneOf of {const, title}) or a multi-choice (type "
    "array, items an enum or anyOf of "
    "{const, title}, minItems, maxItems), and required. Or give url instead of "
    "requested_schema: people open the link and say Done or Decline. Returns action accept "
    "with content (the values, typed), decline, "
    f"or cancel. target: where to ask, e.g. {WORDS.targets()} (the server's default if "
    f"omitted). answerers/quorum: who may answer ({WORDS.answerer_entries()}) and how many "
    "must give the same values; on_timeout: 'expire', 'decline' or {content: {field: value}} "
    "given at the deadline; remind_after_s, callback_url, escalation, requested_by and "
    "no_self_approval as for ask_user_question."
)


def build_server(
    url: str, token: str | None, progress_every_s: float = PROGRESS_EVERY_S
) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(name="askbridge", version=VERSION, instructions=INSTRUCTIONS)

    async def ask_and_wait(fields: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """Create the request of a tool's arguments (those given) and wait for its end,
        reporting progress; bad arguments and server errors become the tool's error."""
        try:
            ask = Ask.parse(
                {key: value for key, value in fields.items() if value is not None}, WORDS
            )
        except InvalidQuestion as error:
            raise ToolError(str(error)) from error
        async with AskbridgeClient(url, token) as client:
            try:
                created = await client.create(ask)
                return await _wait_reporting(client, ask, created, ctx, progress_every_s)
            except ClientError as error:
                raise ToolError(with_where_to_set(error)) from error

    # Each argument is listed with its type but checked by `Ask.parse`, not by the MCP SDK
    # (SkipValidation): a bad one is then refused in the words the HTTP API uses for it.
    @server.tool(
        name="ask_user_question",
        description=(
            "Ask people 1-4 multiple-choice questions and wait for their answers. Each "
            "question: header (at most 12 characters, unique), question text, 2-4 options "
            "(label of 1-5 words, description), multiSelect. target: where to ask, e.g. "
            f"{WORDS.targets()} (the server's default if omitted). answerers/quorum: who may "
            f"answer ({WORDS.answerer_entries()}) and how many must agree; on_timeout: 'expire' or "
            "{answers: {header: label}} given at the deadline; remind_after_s: one reminder; "
            "allow_other: people may answer in their own words; allow_notes: people may add a "
            "note to their answer; callback_url: the server also POSTs the signed result there; "
            "escalation: steps [{after_s, answerers?, target?, mention?}] taken while nobody "
            "answers; subject: the JSON object to approve (the answer carries its "
            "subject_sha256); requested_by + no_self_approval: the requester may not answer."
        ),
    )
    async def ask_user_question(
        questions: SkipValidation[list[UserQuestion]],
        target: SkipValidation[str | list[str] | None] = None,
        context: SkipValidation[str | None] = None,
        timeout_s: SkipValidation[float | None] = None,
        answerers: SkipValidation[list[str] | None] = None,
        quorum: SkipValidation[int | None] = None,
        on_timeout: SkipValidation[Literal["expire"] | TimeoutAnswers | None] = None,
        remind_after_s: SkipValidation[float | None] = None,
        allow_other: SkipValidation[bool | None] = None,
        allow_notes: SkipValidation[bool | None] = None,
        callback_url: SkipValidation[str | None] = None,
        escalation: SkipValidation[list[dict[str, Any]] | dict[str, Any] | None] = None,
        subject: SkipValidation[dict[str, Any] | None] = None,
        requested_by: SkipValidation[str | None] = None,
        no_self_approval: SkipValidation[bool | None] = None,
        *,
        ctx: Context,
    ) -> Answers:
        fields = {
            "questions": questions,
            "target": target,
            "context": context,
            "timeout_s": timeout_s,
            "answerers": answerers,
            "quorum": quorum,
            "on_timeout": on_timeout,
            "remind_after_s": remind_after_s,
            "allow_other": allow_other,
            "allow_notes": allow_notes,
            "callback_url": callback_url,
            "escalation": escalation,
            "subject": subject,
            "requested_by": requested_by,
            "no_self_approval": no_self_approval,
        }
        final = await ask_and_wait(fields, ctx)
        if final["status"] != "answered":
            raise ToolError(final.get("error") or final["status"])
        voter = final.get("answered_by") or {}
        return Answers(
            answers=final["answers"],
            answered_by=voter.get("name") or voter.get("id") or final.get("decided_by", ""),
            notes=final.get("notes") or {},
        )

    @server.tool(name="ask_form", description=FORM_DESCRIPTION)
    async def ask_form(
        message: SkipValidation[str],
        requested_schema: SkipValidation[dict[str, Any] | None] = None,
        url: SkipValidation[str | None] = None,
        target: SkipValidation[str | list[str] | None] = None,
        context: SkipValidation[str | None] = None,
        timeout_s: SkipValidation[float | None] = None,
        answerers: SkipValidation[list[str] | None] = None,
        quorum: SkipValidation[int | None] = None,
        on_timeout: SkipValidation[str | dict[str, Any] | None] = None,
        remind_after_s: SkipValidation[float | None] = None,
        callback_url: SkipValidation[str | None] = None,
        escalation: SkipValidation[list[dict[str, Any]] | dict[str, Any] | None] = None,
        requested_by: SkipValidation[str | None] = None,
        no_self_approval: SkipValidation[bool | None] = None,
        *,
        ctx: Context,
    ) -> FormResult:
        form = {"message": message, "requested_schema": requested_schema, "url": url}
        fields = {
            "form": {key: value for key, value in form.items() if value is not None},
            "target": target,
            "context": context,
            "timeout_s": timeout_s,
            "answerers": answerers,
            "quorum": quorum,
            "on_timeout": on_timeout,
            "remind_after_s": remind_after_s,
            "callback_url": callback_url,
            "escalation": escalation,
            "requested_by": requested_by,
            "no_self_approval": no_self_approval,
        }
        final = await ask_and_wait(fields, ctx)
        action = {"answered": "accept", "declined": "decline", "cancelled": "cancel"}
        if final["status"] not in action:
            raise ToolError(final.get("error") or final["status"])
        person = final.get("answered_by") or final.get("declined_by") or final.get("cancelled_by")
        by = (person or {}).get("name") or (person or {}).get("id") or final.get("decided_by")
        accepted = final["status"] == "answered" and url is None
        return FormResult(
            action=action[final["status"]],
            content=(final.get("content") or {}) if accepted else None,
            by=by or "",
        )

    return server


async def _wait_reporting(
    client: AskbridgeClient, ask: Ask, status: dict[str, Any], ctx: Context, every_s: float
) -> dict[str, Any]:
    """Long-poll until the request ends, with a progress notification after each poll that
    did not end it (when the client asked for progress)."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    target = status.get("target")
    where = ", ".join(target) if isinstance(target, list) else target or "askbridge"
    while status["status"] == "waiting":
        try:
            status = await client.get(status["request_id"], every_s)
        except ClientError as error:
            # A server that lost the request (or a fresh one) gets it again, same id.
            if error.status != 404:
                raise
            status = await client.create(ask)
        if status["status"] == "waiting":
            waited = loop.time() - started
            await ctx.report_progress(
                waited, None, f"waiting for an answer in {where} ({waited:.0f} s)"
            )
    return status


__all__ = ["build_server"]
