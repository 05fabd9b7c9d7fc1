"""What the person who clicked is told, privately, and the reminder in a message's thread:
lines of parts (`richtext`), so user text in them stays inert."""

from __future__ import annotations

from askbridge.adapters.slack.render import answerers_line, deadline_slots
from askbridge.adapters.slack.richtext import Emoji, Line, Span, answerer, filled, joined, shorten
from askbridge.core.intents import Counted, Drafted, Outcome, Refusal, Refused
from askbridge.core.view import (
    FOREIGN_CLICK,
    NO_LONGER_AVAILABLE,
    NOT_ANSWERER,
    NOT_RECORDED,
    SELF_APPROVAL,
    UNCHECKED,
    RequestView,
    counted_sentence,
    end_sentence,
    missing_sentence,
)

FORM_NOT_OPENED = "Slack did not open the form in time. Please click {label} again."
NOTE_ANSWER_BUDGET = 300


def note(outcome: Outcome) -> Line | None:
    """What the person who clicked is told privately; None when the message says it all."""
    if isinstance(outcome, Counted):
        return [Span(counted_sentence(outcome.receipt, lambda a: shorten(a, NOTE_ANSWER_BUDGET)))]
    if isinstance(outcome, Drafted) or (
        isinstance(outcome, Refused) and outcome.reason is Refusal.REPLAYED
    ):
        return None
    if not isinstance(outcome, Refused):
        return None
    match outcome.reason:
        case Refusal.UNKNOWN_REQUEST:
            return [Span(NO_LONGER_AVAILABLE)]
        case Refusal.FOREIGN_MESSAGE:
            return [Span(FOREIGN_CLICK)]
        case Refusal.SELF_APPROVAL:
            return [Span(SELF_APPROVAL)]
        case Refusal.MISSING_ANSWERS:
            return [Span(missing_sentence(outcome.missing))]
        case Refusal.BAD_TEXT:
            fields = " ".join(f"{field}: {problem}" for field, problem in outcome.fields())
            missing = f" {missing_sentence(outcome.missing)}" if outcome.missing else ""
            return [Span(f"{NOT_RECORDED} {fields}{missing}")]
        case Refusal.ALREADY_ENDED if outcome.view is not None:
            return [Span(end_sentence(outcome.view, lambda p: p.name or p.id))]
    return not_answerer(outcome)


def not_answerer(outcome: Refused) -> Line:
    """The note for someone who may not answer; names the groups Slack could not tell about."""
    entries = outcome.view.answerers if outcome.view is not None else ()
    line = filled(NOT_ANSWERER, answerers=joined((answerer(e) for e in entries), 1500))
    if outcome.unchecked:
        groups = joined((answerer(e) for e in outcome.unchecked), 500)
        line += filled(UNCHECKED, groups=groups)
    return line


def reminder_line(view: RequestView) -> Line:
    """A nudge to the people who may answer (everyone when anyone may)."""
    who = answerers_line(view.answerers)
    return [Emoji("bell"), Span(" "), *filled(view.reminder, answerers=who, **deadline_slots(view))]
