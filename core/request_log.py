"""One INFO line for each step of a request's life: created, posted, answered, cancelled,
expired, withdrawn, escalated, naming the request, the surface and the person both in its text
and as fields (`extra`). Ids only: a person as `platform:id`, never a display name, a question,
an answer or a note (the audit trail holds those for whoever may read them).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from askbridge.core.models import Person, Request

log = logging.getLogger("askbridge.requests")


def surfaces_of(request: Request) -> list[str]:
    return sorted({target.platform for target in request.targets})


def step(
    request_id: str,
    what: str,
    surfaces: Iterable[str],
    person: Person | None = None,
    detail: str = "",
) -> None:
    """Log that request `request_id` went through `what` (on `surfaces`, by `person`)."""
    surface = ",".join(sorted(set(surfaces))) or "-"
    fields = {"request_id": request_id, "surface": surface}
    if person is None:
        log.info("request %s %s%s on %s", request_id, what, detail, surface, extra=fields)
        return
    fields["person"] = person.key
    log.info(
        "request %s %s%s on %s by %s", request_id, what, detail, surface, person.key, extra=fields
    )
