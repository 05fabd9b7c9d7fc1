"""The one eligibility check: may this person act on this request now?

`eligibility` decides it for every surface and every caller (a click, a form opening, the view).
It reads nothing and awaits nothing: the groups a person's platform must be asked about are
named by `groups_to_ask`, only when groups could change the answer. See ARCHITECTURE.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from askbridge.core.models import EscalationStep, Person, Policy, Request
from askbridge.core.refusals import Refusal
from askbridge.core.surface import Membership

# `platform:id` names one person; `platform-kind:id` (chat-team:T…, a SurfaceSpec's groups) a group
# that the person's surface resolves into `Person.groups`. The broker knows no platform.
ANSWERER = re.compile(r"(?P<kind>[a-z]+(?:-[a-z]+)?):(?P<id>@?[A-Za-z0-9_.-]{1,64})")


@dataclass(frozen=True)
class Ineligible:
    """Why the person may not act on the request now."""

    reason: Refusal
    """ALREADY_ENDED, SELF_APPROVAL or NOT_ANSWERER."""
    unchecked: tuple[str, ...] = ()
    """NOT_ANSWERER: group answerers whose membership could not be checked just now."""


def eligibility(
    request: Request,
    person: Person,
    *,
    cancelling: bool = False,
    found: Membership | None = None,
) -> Person | Ineligible:
    """`person`, with the groups that `found` adds (their platform's answer about the entries
    `groups_to_ask` named), when they may act on `request` now; else why not. `cancelling`:
    the requester may cancel their own request."""
    if request.status.is_terminal:
        return Ineligible(Refusal.ALREADY_ENDED)
    if not cancelling and _own_request(request.policy, person):
        return Ineligible(Refusal.SELF_APPROVAL)
    if found is not None and found.groups:
        groups = tuple(dict.fromkeys((*person.groups, *found.groups)))
        person = person.model_copy(update={"groups": groups})
    if not _named(answerers_now(request), person):
        return Ineligible(Refusal.NOT_ANSWERER, () if found is None else found.unchecked)
    return person


def groups_to_ask(request: Request, person: Person, *, cancelling: bool = False) -> tuple[str, ...]:
    """The group answerers of `person`'s platform whose membership could still make them an
    answerer of `request` now: none while the request has ended, the requester is refused
    anyway, or their own id or the groups they carry already decide."""
    if request.status.is_terminal or (not cancelling and _own_request(request.policy, person)):
        return ()
    answerers = answerers_now(request)
    if _named(answerers, person):
        return ()
    return tuple(a for a in answerers if a.startswith(f"{person.platform}-"))


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


def _named(answerers: Sequence[str], person: Person) -> bool:
    """`person` is one of `answerers` by id or by a group they carry (none: anyone is)."""
    if not answerers:
        return True
    for entry in answerers:
        kind, _, value = entry.partition(":")
        if kind == person.platform and value.lstrip("@") == person.id:
            return True
        if entry in person.groups:
            return True
    return False


def _own_request(policy: Policy, person: Person) -> bool:
    """`person` asked for the request, which they may not answer (no_self_approval)."""
    return policy.no_self_approval and is_requester(policy, person)
