"""The status object: what an agent reads back about its request, and its audit trail."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from askbridge.core.api.bodies import Body, Timestamp, built, omitted
from askbridge.core.ask import FormInput, TimeoutAnswers, TimeoutContent
from askbridge.core.form_schema import Form
from askbridge.core.form_values import decode
from askbridge.core.models import Person, Request, Status, Target, UserQuestion
from askbridge.core.policy import answerers_now
from askbridge.core.store.base import Event
from askbridge.core.view import AGENT_ERRORS, FORM_ACTIONS, FormAction, deciding_notes


class Actor(Body):
    """Someone who acted on a request, as the surface they acted on knows them."""

    platform: str
    id: str
    name: str

    @classmethod
    def of(cls, person: Person) -> Actor:
        return built(cls, platform=person.platform, id=person.id, name=person.name)


class Ballot(Body):
    voter: Actor
    answers: dict[str, str]
    at: Timestamp
    notes: dict[str, str] | SkipJsonSchema[None] = omitted("header -> the voter's note")
    content: dict[str, Any] | SkipJsonSchema[None] = omitted(
        "a form's values this voter gave, typed"
    )
    changed_input: dict[str, Any] | SkipJsonSchema[None] = omitted(
        "the tool input this vote allows instead of the one asked"
    )


class PostedMessage(Body):
    platform: str
    channel: str
    message_id: str


class Annotation(Body):
    notes: str


class StatusObject(Body):
    """Everything an agent may read about one of its requests."""

    model_config = ConfigDict(title="Status object")

    request_id: str
    status: Status
    questions: tuple[UserQuestion, ...] = Field(description="empty for a form")
    form: FormInput | SkipJsonSchema[None] = omitted("the form asked, as it was sent")
    action: FormAction | SkipJsonSchema[None] = omitted(
        "a form that ended: accept (filled in: see content), decline (a person said no), or "
        "cancel (cancelled, expired or withdrawn)"
    )
    content: dict[str, Any] | SkipJsonSchema[None] = omitted(
        "a form's values once filled in, field name -> value, typed as its schema says "
        "(integers as integers, booleans as true/false, dates as ISO texts)"
    )
    target: str | list[str] = Field(description="one target as text, or a list of them")
    created_at: Timestamp
    expires_at: Timestamp | None
    context: str | SkipJsonSchema[None] = omitted()
    ended_at: Timestamp | SkipJsonSchema[None] = omitted()
    answers: dict[str, str] | SkipJsonSchema[None] = omitted(
        "header -> label(s); for a form, field name -> the canonical JSON of its value (read "
        "content for the values)"
    )
    answers_by_question: dict[str, str] | SkipJsonSchema[None] = omitted(
        "the same answers keyed by question text"
    )
    notes: dict[str, str] | SkipJsonSchema[None] = omitted(
        "header -> the notes the deciding voters gave with the answer"
    )
    annotations: dict[str, Annotation] | SkipJsonSchema[None] = omitted(
        "the same notes keyed by question text, as Claude Code takes them"
    )
    approved_input: dict[str, Any] | SkipJsonSchema[None] = omitted(
        "allow_changes: the tool input a person allowed instead of the one asked; run this one"
    )
    answered_by: Actor | SkipJsonSchema[None] = omitted()
    cancelled_by: Actor | SkipJsonSchema[None] = omitted()
    declined_by: Actor | SkipJsonSchema[None] = omitted("who declined a form")
    decided_by: Literal["timeout"] | SkipJsonSchema[None] = omitted(
        "the deadline gave the on_timeout answers (or content), or declined the form"
    )
    error: str | SkipJsonSchema[None] = omitted(
        "why a request ended without answers", enum=list(AGENT_ERRORS.values())
    )
    answerers: list[str]
    quorum: int
    allow_other: Literal[True] | SkipJsonSchema[None] = omitted(
        "a person may answer in their own words"
    )
    allow_notes: Literal[True] | SkipJsonSchema[None] = omitted(
        "a person may attach a note to their answer"
    )
    allow_changes: Literal[True] | SkipJsonSchema[None] = omitted(
        "a person may change the tool input before allowing it"
    )
    on_timeout: TimeoutAnswers | TimeoutContent | Literal["decline"] | SkipJsonSchema[None] = (
        omitted()
    )
    remind_at: Timestamp | SkipJsonSchema[None] = omitted("when the answerers are reminded")
    reminded_at: Timestamp | SkipJsonSchema[None] = omitted("when the reminder went out")
    escalation_step: int | SkipJsonSchema[None] = omitted(
        "how many steps of the escalation ladder were taken"
    )
    escalated_at: Timestamp | SkipJsonSchema[None] = omitted("when the last step was taken")
    escalate_at: Timestamp | SkipJsonSchema[None] = omitted("when the next step is due")
    subject_sha256: str | SkipJsonSchema[None] = omitted(
        "SHA-256 of the canonical JSON of the ask's subject (what was to be approved)"
    )
    requested_by: str | SkipJsonSchema[None] = omitted("who asked")
    votes: list[Ballot]
    messages: list[PostedMessage]

    @classmethod
    def of(cls, request: Request) -> StatusObject:
        answers = request.answers
        policy = request.policy
        notes = deciding_notes(request)
        form = request.form
        # Built from a stored request, whose every value its own model already checked: an
        # agent's long-poll is on the click's path, and checking again would double its cost.
        return built(
            cls,
            request_id=request.request_id,
            status=request.status,
            questions=request.questions,
            form=None if form is None else _form(form),
            action=FORM_ACTIONS.get(request.status) if form is not None else None,
            content=decode(answers) if form is not None and answers is not None else None,
            target=target_text(request.targets),
            created_at=request.created_at,
            expires_at=request.expires_at,
            context=request.context or None,
            ended_at=request.ended_at,
            answers=answers,
            # Claude Code and the Claude Agent SDK key the same answers by question text.
            answers_by_question=None
            if answers is None or form is not None
            else {q.question: answers[q.header] for q in request.questions if q.header in answers},
            notes=notes or None,
            # The shape Claude Code takes its answers' notes in.
            annotations={
                q.question: built(Annotation, notes=notes[q.header])
                for q in request.questions
                if q.header in notes
            }
            or None,
            approved_input=request.approved_input,
            answered_by=Actor.of(request.answered_by) if request.answered_by else None,
            cancelled_by=Actor.of(request.cancelled_by) if request.cancelled_by else None,
            declined_by=Actor.of(request.declined_by) if request.declined_by else None,
            decided_by="timeout" if request.decided_by_timeout else None,
            error=AGENT_ERRORS.get(request.status),
            answerers=list(answerers_now(request)),
            quorum=policy.quorum,
            allow_other=True if policy.allow_other else None,
            allow_notes=True if policy.allow_notes else None,
            allow_changes=True if policy.allow_changes else None,
            on_timeout=_on_timeout(request),
            remind_at=request.remind_at,
            reminded_at=request.reminded_at,
            escalation_step=request.escalation_step or None,
            escalated_at=request.escalated_at,
            escalate_at=request.escalate_at if request.status is Status.WAITING else None,
            subject_sha256=policy.subject_sha256,
            requested_by=policy.requested_by,
            votes=[
                built(
                    Ballot,
                    voter=Actor.of(v.person),
                    answers=v.answers,
                    at=v.at,
                    notes=v.notes or None,
                    content=None if form is None else decode(v.answers),
                    changed_input=v.changed,
                )
                for v in request.votes
            ],
            messages=[
                built(
                    PostedMessage, platform=m.platform, channel=m.channel, message_id=m.message_id
                )
                for m in request.messages
            ],
        )


def _form(form: Form) -> FormInput:
    return built(FormInput, message=form.message, requested_schema=form.schema_, url=form.url)


def _on_timeout(request: Request) -> TimeoutAnswers | TimeoutContent | Literal["decline"] | None:
    policy = request.policy
    if policy.timeout_decline:
        return "decline"
    if policy.timeout_answers is None:
        return None
    if request.form is not None:
        return built(TimeoutContent, content=decode(policy.timeout_answers))
    return built(TimeoutAnswers, answers=policy.timeout_answers)


def status_json(request: Request) -> bytes:
    """The status object as the JSON `GET /v1/questions/{id}` sends (and webhooks carry)."""
    return json.dumps(StatusObject.of(request).model_dump(mode="json")).encode()


def target_text(targets: tuple[Target, ...]) -> str | list[str]:
    texts = [str(t) for t in targets]
    return texts[0] if len(texts) == 1 else texts


class AuditEvent(Body):
    """One line of a request's audit trail: created, posted, answered, cancelled, …"""

    seq: int
    request_id: str
    at: Timestamp
    kind: str
    actor: Actor | None
    data: dict[str, Any]
    prev_hash: str = Field(
        description="the hash of the request's previous event (64 zeros for its first)"
    )
    hash: str = Field(
        description="SHA-256 of the canonical JSON of request_id, at, kind, actor, data and "
        "prev_hash (see docs/how-to/audit.md)"
    )

    @classmethod
    def of(cls, event: Event) -> AuditEvent:
        return cls(
            seq=event.seq,
            request_id=event.request_id,
            at=event.at,
            kind=event.kind,
            actor=Actor.of(event.actor) if event.actor else None,
            data=event.data,
            prev_hash=event.prev_hash,
            hash=event.hash,
        )


class QuestionList(Body):
    questions: list[StatusObject] = Field(description="newest first")


class EventList(Body):
    events: list[AuditEvent] = Field(description="oldest first")


class HealthPart(Body):
    ok: bool
    detail: str


class Health(Body):
    ok: bool = Field(description="false (with a 503) when a background loop has stopped")
    version: str = Field(description="askbridge's version")
    surfaces: list[str] = Field(description="the platforms askbridge posts to")
    parts: dict[str, HealthPart] = Field(
        default_factory=dict, description="each background loop: running or stopped"
    )
