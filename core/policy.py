"""Who may answer a request, checked the same way for every surface."""

from __future__ import annotations

import re
from collections.abc import Sequence

from askbridge.core.models import EscalationStep, Person, Policy, Request

# `platform:id` names one person; `platform-kind:id` (slack-group:S…, discord-role:…) a group
# that the person's surface resolves into `Person.groups`. The broker knows no platform.
ANSWERER = re.compile(r"(?P<kind>[a-z]+(?:-[a-z]+)?):(?P<id>@?[A-Za-z0-9_.-]{1,64})")


def may_answer(answerers: Sequence[str], person: Person) -> bool:
    """Whether `person` is one of `answerers` (none: anyone may answer)."""
    if not answerers:
        return True
    for entry in answerers:
        kind, _, value = entry.partition(":")
        if kind == person.platform and value.lstrip("@") == person.id:
            return True
        if entry in person.groups:
            return True
    return False


def is_requester(policy: Policy, person: Person) -> bool:
    """`person` is who the request names as its requester (`requested_by`)."""
    if policy.requested_by is None:
        return False
    kind, _, value = policy.requested_by.partition(":")
    return kind == person.platform and value.lstrip("@") == person.id


def taken(request: Request) -> tuple[EscalationStep, ...]:
    """The steps of the request's escalation ladder taken so far, in order."""
    ladder = request.policy.escalation
    return () if ladder is None else ladder.steps[: request.escalation_step]


def answerers_now(request: Request) -> tuple[str, ...]:
    """Who may answer now: the answerers of the last escalation step taken that names any,
    else the request's own (none: anyone who sees it)."""
    for step in reversed(taken(request)):
        if step.answerers is not None:
            return step.answerers
    return request.policy.answerers
