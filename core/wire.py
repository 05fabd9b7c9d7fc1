"""The agent framework's externally tagged JSON: `{"Variant": {...}}`, unit variants as strings."""

from __future__ import annotations

from typing import Any

from askbridge.core.form_values import decode
from askbridge.core.models import AskUserQuestion, Request, Status, UserQuestionResponse
from askbridge.core.permissions import DENY, HEADER, permission_response
from askbridge.core.view import AGENT_ERRORS, FORM_ACTIONS, deciding_notes, plain_name

ASK = "AskUserQuestion"
RESPONSE = "UserQuestionResponse"
INTERRUPT = "Interrupt"
PERMISSION = "PermissionRequest"
PERMISSION_RESPONSE = "PermissionResponse"
FORM = "AskForm"
"""A typed form, in MCP elicitation's words: `{"AskForm": {"request_id", "message",
"requested_schema"}}` (or `"url"` instead of a schema), and optionally what its deadline does
(`"on_timeout"`)."""
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


REASON = "reason"
"""The field a PermissionResponse carries its denial's reason in, on a connection that asks for
it (`?reasons=true`): the agent framework's PermissionResponse has no such field, and the wire
format names no extension field, so it is never sent unasked."""


def permission_answer(
    prompt: dict[str, Any], request: Request, *, reasons: bool = False
) -> dict[str, Any]:
    """The PermissionResponse for a prompt whose request ended; with `reasons` (the connection
    asked for them), a denial's reason as well."""
    response = permission_response(prompt, request)
    reason = denial_reason(request) if reasons else None
    if reason is not None:
        response[PERMISSION_RESPONSE][REASON] = reason
    return response


def denial_reason(request: Request) -> str | None:
    """Why a permission prompt was denied, as the model would read it ("Denied by alice: use
    the staging database", "Interrupted by bob", "Timed out waiting for an answer"); None when
    it was allowed."""
    if request.status is Status.ANSWERED:
        if (request.answers or {}).get(HEADER) != DENY:
            return None
        if request.answered_by is None:
            return AGENT_ERRORS[Status.EXPIRED]
        note = deciding_notes(request).get(HEADER)
        who = plain_name(request.answered_by)
        return f"Denied by {who}: {note}" if note else f"Denied by {who}"
    if request.status is Status.CANCELLED and request.cancelled_by is not None:
        return f"Interrupted by {plain_name(request.cancelled_by)}"
    return AGENT_ERRORS.get(request.status)
