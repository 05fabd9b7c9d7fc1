"""The status object: what an agent reads back about its request."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.models import Person, Request, Target
from core.store.base import Event
from core.view import AGENT_ERRORS, RequestView


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
        # Claude Code and the Claude Agent SDK key the same answers by question text.
        body["answers_by_question"] = {
            q.question: request.answers[q.header]
            for q in request.questions
            if q.header in request.answers
        }
        notes = RequestView.of(request).notes
        if notes:
            body["notes"] = notes
            # The shape Claude Code takes its answers' notes in.
            body["annotations"] = {
                q.question: {"notes": notes[q.header]}
                for q in request.questions
                if q.header in notes
            }
    if request.answered_by is not None:
        body["answered_by"] = person_object(request.answered_by)
    if request.cancelled_by is not None:
        body["cancelled_by"] = person_object(request.cancelled_by)
    if request.decided_by_timeout:
        body["decided_by"] = "timeout"
    error = AGENT_ERRORS.get(request.status)
    if error is not None:
        body["error"] = error
    policy = request.policy
    body["answerers"] = list(policy.answerers)
    body["quorum"] = policy.quorum
    if policy.allow_other:
        body["allow_other"] = True
    if policy.allow_notes:
        body["allow_notes"] = True
    if policy.timeout_answers is not None:
        body["on_timeout"] = {"answers": policy.timeout_answers}
    if request.remind_at is not None:
        body["remind_at"] = iso(request.remind_at)
        body["reminded_at"] = iso(request.reminded_at)
    body["votes"] = [
        {
            "voter": person_object(v.person),
            "answers": v.answers,
            "at": iso(v.at),
            **({"notes": v.notes} if v.notes else {}),
        }
        for v in request.votes
    ]
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


def event_object(event: Event) -> dict[str, Any]:
    return {
        "seq": event.seq,
        "request_id": event.request_id,
        "at": iso(event.at),
        "kind": event.kind,
        "actor": person_object(event.actor) if event.actor else None,
        "data": event.data,
    }
