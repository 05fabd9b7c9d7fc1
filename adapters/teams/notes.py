"""What the person who pressed is told, above the card only they see (the invoke's answer):
one sentence per outcome, shown as plain text (`text.plain`)."""

from __future__ import annotations

from collections.abc import Mapping

from askbridge.adapters.teams.members import named
from askbridge.core.intents import Counted, Decided, Outcome, Refusal, Refused
from askbridge.core.view import (
    FOREIGN_CLICK,
    NO_LONGER_AVAILABLE,
    NOT_ANSWERER,
    NOT_RECORDED,
    SELF_APPROVAL,
    counted_sentence,
    end_sentence,
    missing_sentence,
)


def note(outcome: Outcome, names: Mapping[str, str | None] | None = None) -> str | None:
    """What the person who pressed is told above their card; None when the card says it.
    `names`: the Teams answerers' names in the conversation (`members`)."""
    match outcome:
        case Decided() | Refused(reason=Refusal.REPLAYED):
            return None
        case Counted(receipt=receipt):
            return counted_sentence(receipt)
        case Refused(reason=Refusal.NOT_ANSWERER, view=view) if view is not None:
            return NOT_ANSWERER.format(answerers=", ".join(named(view.answerers, names or {})))
        case Refused(reason=Refusal.ALREADY_ENDED, view=view) if view is not None:
            return end_sentence(view)
        case Refused(reason=Refusal.MISSING_ANSWERS, missing=missing):
            return missing_sentence(missing)
        case Refused(reason=Refusal.BAD_TEXT):
            return typed_problems(outcome)
        case Refused(reason=Refusal.BAD_VALUES):
            return refused_values(outcome)
        case Refused(reason=Refusal.FOREIGN_MESSAGE):
            return FOREIGN_CLICK
        case Refused(reason=Refusal.SELF_APPROVAL):
            return SELF_APPROVAL
    return NO_LONGER_AVAILABLE


def typed_problems(outcome: Refused) -> str:
    """Why what a person typed was not taken, field by field, and what is still unanswered."""
    said = [f"{field}: {problem}" for field, problem in outcome.fields()]
    if outcome.missing:
        said.append(missing_sentence(outcome.missing))
    return " ".join([NOT_RECORDED, *said])


def refused_values(outcome: Refused) -> str:
    """Why the values given to a typed form were not taken, field by field (named by their
    titles); the card shows each reason under its field as well."""
    form = outcome.view.form if outcome.view is not None else None
    titles = {f.name: f.title for f in form.fields} if form is not None else {}
    said = [f"{titles.get(name, name)}: {why}" for name, why in outcome.field_problems.items()]
    return " ".join([NOT_RECORDED, "; ".join(said)])
