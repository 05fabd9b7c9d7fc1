"""The agent framework's externally tagged JSON: `{"Variant": {...}}`, unit variants as strings."""

from __future__ import annotations

from typing import Any

from askbridge.core.models import AskUserQuestion, UserQuestionResponse

ASK = "AskUserQuestion"
RESPONSE = "UserQuestionResponse"
INTERRUPT = "Interrupt"
PERMISSION = "PermissionRequest"


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
