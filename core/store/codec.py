"""Row <-> model conversions shared by every SQL store."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import TypeAdapter

from askbridge.core import audit_log
from askbridge.core.clock import iso
from askbridge.core.form_schema import Form
from askbridge.core.models import (
    EscalationStep,
    MessageRef,
    Person,
    Policy,
    Request,
    Selections,
    Status,
    Target,
    UserQuestion,
    Vote,
)
from askbridge.core.store.base import Attempt, Delivery, Ending, Event
from askbridge.core.tool_view import ToolView

_questions = TypeAdapter(tuple[UserQuestion, ...])
_targets = TypeAdapter(tuple[Target, ...])
PARSED = 1024
"""How many parsed copies of columns that never change once written (questions, targets,
policy, people) are kept: a click reads back the request it just read or wrote, and parsing
those again cost more than its statements. The models are frozen, so one copy serves all."""


@functools.lru_cache(maxsize=PARSED)
def load_questions(text: str) -> tuple[UserQuestion, ...]:
    return _questions.validate_json(text)


@functools.lru_cache(maxsize=PARSED)
def load_targets(text: str) -> tuple[Target, ...]:
    return _targets.validate_json(text)


@functools.lru_cache(maxsize=PARSED)
def load_policy(text: str | None) -> Policy:
    return Policy.model_validate_json(text) if text else Policy()


def epoch(when: datetime | None) -> float | None:
    return None if when is None else when.timestamp()


def from_epoch(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, UTC)


def dump_questions(questions: Sequence[UserQuestion]) -> str:
    # sort_keys makes equal questions give equal text, which idempotency compares.
    return json.dumps(_questions.dump_python(tuple(questions), mode="json"), sort_keys=True)


def dump_targets(targets: Sequence[Target]) -> str:
    return json.dumps(_targets.dump_python(tuple(targets), mode="json"))


def dump_person(person: Person | None) -> str | None:
    return None if person is None else person.model_dump_json()


def load_person(text: str | None) -> Person | None:
    return None if text is None else _person(text)


@functools.lru_cache(maxsize=PARSED)
def _person(text: str) -> Person:
    return Person.model_validate_json(text)


def dump_selections(selections: Selections) -> str:
    return json.dumps({str(q): list(o) for q, o in sorted(selections.items())})


def load_selections(text: str | None) -> Selections:
    if not text:
        return {}
    raw: dict[str, list[int]] = json.loads(text)
    return {int(q): tuple(o) for q, o in raw.items()}


CHANGED_KEY = ""
"""Where a stored answer keeps the input it allows instead of the one asked (an allow with
changes, `core.changes`): under a key no question's header can be (headers are not empty),
as canonical JSON. So a vote's stored answer is exactly what votes must share to agree, and
counting votes (by text, in both dialects) needs no change."""


def dump_answers(
    answers: Mapping[str, str], changed: Mapping[str, Any] | None = None, *, sort: bool = True
) -> str:
    """A vote's answers as stored (sorted keys: equal answers give equal text, which counting
    votes compares); `sort` False: a request's, in the questions' order."""
    stored: dict[str, str] = dict(answers)
    if changed is not None:
        stored[CHANGED_KEY] = audit_log.canonical(dict(changed)).decode()
    return json.dumps(stored, sort_keys=sort)


def load_answers(text: str) -> tuple[dict[str, str], dict[str, Any] | None]:
    """The answers a stored answer holds, and the changed input it allows (None: none)."""
    answers: dict[str, str] = json.loads(text)
    changed = answers.pop(CHANGED_KEY, None)
    return answers, None if changed is None else json.loads(changed)


def load_vote(row: Sequence[Any]) -> Vote:
    voter, stored, at, notes = row
    answers, changed = load_answers(stored)
    return Vote(
        person=_person(voter),
        answers=answers,
        at=from_epoch(at),
        notes=json.loads(notes) if notes else {},
        changed=changed,
    )


VOTE_COLUMNS = "voter, answers, at, notes"


def load_request(
    row: Sequence[Any], messages: Sequence[MessageRef], votes: Sequence[Vote] = ()
) -> Request:
    (request_id, questions, targets, context, status, created, expires, ended, answers, by) = row[
        :10
    ]
    policy, remind_at, reminded_at, posted_at = row[10:14]
    step, escalate_at, escalated_at, tool, form = row[14:19]
    status = Status(status)
    person = load_person(by)
    answers, approved = load_answers(answers) if answers else (None, None)
    return Request(
        request_id=request_id,
        questions=load_questions(questions),
        targets=load_targets(targets),
        context=context,
        status=status,
        created_at=from_epoch(created),
        expires_at=from_epoch(expires),
        ended_at=from_epoch(ended),
        answers=answers,
        approved_input=approved,
        answered_by=person if status is Status.ANSWERED else None,
        cancelled_by=person if status is Status.CANCELLED else None,
        declined_by=person if status is Status.DECLINED else None,
        messages=tuple(messages),
        policy=load_policy(policy),
        votes=tuple(votes),
        remind_at=from_epoch(remind_at),
        reminded_at=from_epoch(reminded_at),
        posted_at=from_epoch(posted_at),
        escalation_step=step,
        escalate_at=from_epoch(escalate_at),
        escalated_at=from_epoch(escalated_at),
        tool=load_tool(tool),
        form=load_form(form),
    )


@functools.lru_cache(maxsize=PARSED)
def load_tool(text: str | None) -> ToolView | None:
    return ToolView.model_validate_json(text) if text else None


def dump_tool(tool: ToolView | None) -> str | None:
    return None if tool is None else tool.model_dump_json()


@functools.lru_cache(maxsize=PARSED)
def load_form(text: str | None) -> Form | None:
    return Form.model_validate_json(text) if text else None


def dump_form(form: Form | None) -> str | None:
    return None if form is None else form.model_dump_json()


def load_message(row: Sequence[Any]) -> MessageRef:
    platform, channel, message_id, data, target = row
    return MessageRef(
        platform=platform,
        channel=channel,
        message_id=message_id,
        data=json.loads(data),
        target=target,
    )


MESSAGE_COLUMNS = "platform, channel, message_id, data, target"
"""What `load_message` reads, in order."""


REQUEST_COLUMNS = (
    "request_id, questions, targets, context, status, created_at, expires_at, ended_at,"
    " answers, ended_by, policy, remind_at, reminded_at, posted_at,"
    " escalation_step, escalate_at, escalated_at, tool, form"
)
REQUEST_COLUMNS_POLICY = [name.strip() for name in REQUEST_COLUMNS.split(",")].index("policy")
"""Where `policy` stands in a row of REQUEST_COLUMNS."""


NEWER_CLICK = (
    "excluded.sent_at IS NULL OR votes.sent_at IS NULL OR excluded.sent_at > votes.sent_at"
)
"""When a vote may replace a person's recorded one: unless it comes from a click that is no
newer than the recorded vote's (a replayed or redelivered click). Shared by both dialects."""


def vote_data(
    answers: Mapping[str, str],
    notes: Mapping[str, str] | None,
    changed: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What the audit trail records of a vote: its answers, its notes when it has any, and
    the digest of the input it allows instead of the one asked (`changed_sha256`)."""
    data: dict[str, Any] = {"answers": dict(answers)}
    if notes:
        data["notes"] = dict(notes)
    if changed is not None:
        data["changed_sha256"] = hashlib.sha256(audit_log.canonical(dict(changed))).hexdigest()
    return data


EVENT_COLUMNS = "seq, request_id, at, kind, actor, data, prev_hash, hash"
"""What `load_event` reads, in order."""


def event_row(event: Event, prev_hash: str) -> tuple[float, str | None, str, str]:
    """The stored `at`, actor and data of `event`, and its hash chained from `prev_hash`:
    made from the values as they read back, so that the export verifies."""
    at, actor, data, head, tail = event_parts(event)
    return at, actor, data, audit_log.chained(head, prev_hash, tail)


def event_parts(event: Event) -> tuple[float, str | None, str, bytes, bytes]:
    """As `event_row`, for a hash finished where the previous one is found: the stored `at`,
    actor and data, and the head and tail that `audit_log.link_parts` cuts around it."""
    at = event.at.timestamp()
    actor = event.actor
    shown = None if actor is None else audit_log.actor_fields(actor.platform, actor.id, actor.name)
    at_read = from_epoch(at)
    assert at_read is not None
    data = json.dumps(event.data)
    # Hashed as it reads back: the stored JSON, parsed; which, for what JSON holds without a
    # float, is the data as it is.
    read = event.data if audit_log.plain(event.data) else json.loads(data)
    head, tail = audit_log.link_parts(event.request_id, at_read, event.kind, shown, read)
    return at, dump_person(actor), data, head, tail


def load_event(row: Sequence[Any]) -> Event:
    seq, request_id, at, kind, actor, data, prev_hash, digest = row
    when = from_epoch(at)
    assert when is not None
    return Event(
        request_id=request_id,
        at=when,
        kind=kind,
        actor=load_person(actor),
        data=json.loads(data),
        seq=seq,
        prev_hash=prev_hash or "",
        hash=digest or "",
    )


def callback_url(policy: str | None) -> str | None:
    """The webhook URL of a stored policy, if it has one."""
    return load_policy(policy).callback_url


def ending_data(ending: Ending, policy: str | None) -> dict[str, Any]:
    """What the audit trail records of an ending: its answers, and the digest of what was to
    be approved (so the record names exactly what the decision was about)."""
    data = dict(ending.event_data)
    if ending.answers is not None:
        data["answers"] = ending.answers
    digest = load_policy(policy).subject_sha256
    if digest is not None:
        data["subject_sha256"] = digest
    return data


def escalation_data(step: int, taken: EscalationStep) -> dict[str, Any]:
    """What the audit trail records of an escalation step (numbered from 1)."""
    data: dict[str, Any] = {"step": step + 1, "after_s": taken.after_s}
    if taken.answerers is not None:
        data["answerers"] = list(taken.answerers)
    if taken.target is not None:
        data["target"] = str(taken.target)
    return data


DELIVERY_COLUMNS = "delivery_id, request_id, url, created_at, attempts"


def load_delivery(row: Sequence[Any]) -> Delivery:
    delivery_id, request_id, url, created_at, attempts = row
    created = from_epoch(created_at)
    assert created is not None
    return Delivery(delivery_id, request_id, url, created, int(attempts))


def attempt_data(delivery: Delivery, attempt: Attempt) -> dict[str, Any]:
    """What the audit trail records of a webhook attempt (never the URL, which may carry a
    credential)."""
    data: dict[str, Any] = {
        "delivery_id": delivery.delivery_id,
        "attempt": delivery.attempts + 1,
        "result": attempt.result,
    }
    if attempt.status is not None:
        data["status"] = attempt.status
    if attempt.error is not None:
        data["error"] = attempt.error
    if attempt.next_at is not None:
        data["next_attempt_at"] = iso(attempt.next_at)
    return data


def escalated(
    policy: str | None, targets: str, step: int
) -> tuple[EscalationStep, str | None] | None:
    """Step `step` of a stored policy's ladder, and the request's targets (JSON) with the
    step's target added when it has one the request lacks (None: unchanged); None when the
    ladder has no such step."""
    ladder = load_policy(policy).escalation
    if ladder is None or not 0 <= step < len(ladder.steps):
        return None
    taken = ladder.steps[step]
    known = load_targets(targets)
    if taken.target is None or taken.target in known:
        return taken, None
    return taken, dump_targets((*known, taken.target))
