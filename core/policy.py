"""Who may answer a request, checked the same way for every surface."""

from __future__ import annotations

import re

from askbridge.core.models import Person, Policy

# `platform:id` names one person; `platform-kind:id` (slack-group:S…, discord-role:…) a group
# that the person's surface resolves into `Person.groups`. The broker knows no platform.
ANSWERER = re.compile(r"(?P<kind>[a-z]+(?:-[a-z]+)?):(?P<id>@?[A-Za-z0-9_.-]{1,64})")


def may_answer(policy: Policy, person: Person) -> bool:
    if not policy.answerers:
        return True
    for entry in policy.answerers:
        kind, _, value = entry.partition(":")
        if kind == person.platform and value.lstrip("@") == person.id:
            return True
        if entry in person.groups:
            return True
    return False
