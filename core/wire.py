"""The agent framework's externally tagged JSON: `{"Variant": {...}}`, unit variants as strings."""

from __future__ import annotations

from typing import Any

from askbridge.core.form_values import decode
from askbridge.core.models import AskUserQuestion, Request, UserQuestionResponse
from askbridge.core.view import FORM_ACTIONS

ASK = "AskUserQuestion"
RESPONSE = "UserQuestionResponse"
INTERRUPT = "Interrupt"
PERMISSION = "PermissionRequest"
FORM = "AskForm"
"""A typed form, in MCP elicitation's words: `{"AskForm": {"request_id", "message",
"requested_schema"}}` (or `"url"` instead of a schema)."""
FORM_RESPONSE = "FormResponse"
FORM_FIELDS = ("message", "requested_schema", "requestedSchema", "url")
"""What an AskForm frame carries of its form."""


def form_response(
    request_id: str | None, action: str, content: dict[str, Any] | None = None
) -> dict[str, Any]:
    """How a typed form ended, as MCP elicitation's result says it: `{"FormResponse":
    {"request_id", "action": "accept" | "decline" | "cancel", "content"}}`, `content` (the
    typed values) only with accept."""
    body: dict[str, Any] = {"request_id": request_id, "action": action}
    if action == "accept":
        body["content"] = content or {}
    return {FORM_RESPONSE: body}


def form_outcome(request: Request) -> dict[str, Any]:
    """The FormResponse for a form request that ended."""
    action = FORM_ACTIONS.get(request.status, "cancel")
    content = decode(request.answers) if request.answers is not None else None
    return form_response(request.request_id, action, content)


def question_response(request_id: str, answers: dict[str, str]) -> dict[str, Any]:
    response = UserQuestionResponse(request_id=request_id, answers=answers)
    return {RESPONSE: response.model_dump(mode="json")}


def interrupt(request_id: str | None = None) -> str | dict[str, Any]:
    """The bare `"Interrupt"` of the wire format; with a request id, `{"Interrupt":
    {"request_id": …}}`, so an agent waiting on several requests on one connection knows which
    one ended."""
    return INTERRUPT if request_id is None else {INTERRUPT: {"request_id": request_id}}


def ask_frame(ask: AskUserQuestion) -> dict[str, Any]:
    return {ASK: ask.model_dump(mode="json")}


def parse_frame(frame: Any) -> AskUserQuestion | UserQuestionResponse | str | None:
    """Read one frame of either direction; None for a variant askbridge does not handle."""
    if frame == INTERRUPT:
        return INTERRUPT
    if isinstance(frame, dict) and len(frame) == 1:
        ((tag, body),) = frame.items()
        if tag == ASK:
            return AskUserQuestion.model_validate(body)
        if tag == RESPONSE:
            return UserQuestionResponse.model_validate(body)
    return None
