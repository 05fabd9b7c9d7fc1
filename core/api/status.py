"""The status object: what an agent reads back about its request."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.models import Person, Request, Status, Target

ERRORS = {
    Status.CANCELLED: "Interrupted",
    Status.EXPIRED: "Timed out waiting for an answer",
    Status.WITHDRAWN: "Withdrawn by the agent",
}


def status_object(request: Request) -> dict[str, Any]:
    body: dict[str, Any] = {
        "request_id": request.request_id,
        "status": request.status.value,
        "questions": [q.model_dump(mode="json") for q in request.questions],
        "target": target_text(request.targets),
        "created_at": iso(request.created_at),
        "expires_at": iso(request.expires_at),
    }
    if request.context:
        body["context"] = request.context
    if request.ended_at is not None:
        body["ended_at"] = iso(request.ended_at)
    if request.answers is not None:
        body["answers"] = request.answers
    if request.answered_by is not None:
        body["answered_by"] = person_object(request.answered_by)
    if request.cancelled_by is not None:
        body["cancelled_by"] = person_object(request.cancelled_by)
    if request.status in ERRORS:
        body["error"] = ERRORS[request.status]
    body["messages"] = [
        {"platform": m.platform, "channel": m.channel, "message_id": m.message_id}
        for m in request.messages
    ]
    return body


def target_text(targets: tuple[Target, ...]) -> str | list[str]:
    texts = [str(t) for t in targets]
    return texts[0] if len(texts) == 1 else texts


def person_object(person: Person) -> dict[str, str]:
    return {"platform": person.platform, "id": person.id, "name": person.name}


def iso(when: datetime | None) -> str | None:
    if when is None:
        return None
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
