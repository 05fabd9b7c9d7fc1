"""What the person who clicked is told, privately (each note that `core.intents.note_for` picks
for an outcome, worded once), and the reminder in a message's thread: lines of parts (`text`),
so user text in them stays inert."""

from __future__ import annotations

from askbridge.adapters.slack.fill import title_of
from askbridge.adapters.slack.render import answerers_line, deadline_slots
from askbridge.adapters.slack.text import Emoji, Line, Span, answerer, filled, joined, shorten
from askbridge.core.intents import Counted, Note, Outcome, Refused, note_for
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
    """What the person who clicked is told privately (`note_for` decides which note); None
    when the message says it all. A choice stays in the person's Slack client until they
    submit, so a click is never drafted here; the message would show the draft in any case."""
    match note_for(outcome), outcome:
        case None | Note.DRAFTED, _:
            return None
        case Note.COUNTED, Counted(receipt=receipt):
            return [Span(counted_sentence(receipt, lambda a: shorten(a, NOTE_ANSWER_BUDGET)))]
        case Note.FOREIGN, _:
            return [Span(FOREIGN_CLICK)]
        case Note.SELF_APPROVAL, _:
            return [Span(SELF_APPROVAL)]
        case Note.MISSING_ANSWERS, Refused(missing=missing):
            return [Span(missing_sentence(missing))]
        case Note.BAD_TEXT, Refused() as refused:
            fields = " ".join(f"{field}: {problem}" for field, problem in refused.fields())
            unanswered = f" {missing_sentence(refused.missing)}" if refused.missing else ""
            return [Span(f"{NOT_RECORDED} {fields}{unanswered}")]
        case Note.BAD_VALUES, Refused(view=view, field_problems=problems):
            form = view.form if view is not None else None
            named = [
                (form.field(name) if form is not None else None, name, problem)
                for name, problem in problems.items()
            ]
            fields = " ".join(
                f"{title_of(field) if field is not None else name} {problem}."
                for field, name, problem in named
            )
            return [Span(f"{NOT_RECORDED} {fields}")]
        case Note.ENDED, Refused(view=RequestView() as view):
            return [Span(end_sentence(view, lambda p: p.name or p.id))]
        case Note.NOT_ANSWERER, Refused() as refused:
            return not_answerer(refused)
    return [Span(NO_LONGER_AVAILABLE)]


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
