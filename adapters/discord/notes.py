"""What the person who clicked in Discord is told privately: each note that `core.intents.note_for`
picks for an outcome, worded once in Discord's markdown, with every user text escaped
(`text.line`)."""

from __future__ import annotations

from askbridge.adapters.discord.lines import MAX_SUMMARY, answerers_text, name, names
from askbridge.adapters.discord.render import field_title
from askbridge.adapters.discord.text import line, shorten
from askbridge.core.intents import Counted, Decided, Drafted, Note, Outcome, Refused, note_for
from askbridge.core.view import (
    FOREIGN_CLICK,
    NO_LONGER_AVAILABLE,
    NOT_ANSWERER,
    NOT_RECORDED,
    SELF_APPROVAL,
    RequestView,
    counted_sentence,
    end_sentence,
    missing_sentence,
)

TYPED_NOT_RECORDED = "What you typed was not recorded."


def note(outcome: Outcome) -> str | None:
    """What the person who clicked is told privately (`note_for` decides which note); None
    when the message itself shows it."""
    match note_for(outcome), outcome:
        case None, _:
            return None
        case Note.COUNTED, Counted(receipt=receipt):
            return counted_sentence(receipt, lambda a: f"**{shorten(line(a), MAX_SUMMARY)}**")
        case Note.DRAFTED, Drafted() as drafted:
            return drafted_note(drafted)
        case Note.NOT_ANSWERER, Refused(view=RequestView() as view):
            return NOT_ANSWERER.format(answerers=answerers_text(view.answerers))
        case Note.ENDED, Refused(view=RequestView() as view):
            return end_sentence(view, name)
        case Note.MISSING_ANSWERS, Refused(missing=missing):
            return missing_sentence(missing, line)
        case Note.BAD_TEXT, Refused() as refused:
            return typed_problems(refused)
        case Note.BAD_VALUES, Refused() as refused:
            return refused_values(refused)
        case Note.FOREIGN, _:
            return FOREIGN_CLICK
        case Note.SELF_APPROVAL, _:
            return SELF_APPROVAL
    return NO_LONGER_AVAILABLE


def form_note(outcome: Outcome) -> str | None:
    """What the person who submitted the form is told privately: as for a click, and, when
    the request had ended or answers were missing, that what they typed was not recorded."""
    text = note(outcome)
    if note_for(outcome) in (Note.ENDED, Note.MISSING_ANSWERS):
        return f"{text} {TYPED_NOT_RECORDED}"
    return text


def drafted_note(drafted: Drafted) -> str:
    """What the person chose for the question, and what is still to answer before Submit."""
    asked = drafted.view.questions[drafted.question]
    picked = ", ".join(
        line(asked.options[o].label) for o in drafted.draft.get(drafted.question, ())
    )
    chosen = f"**{line(asked.header)}**: {picked}."
    if missing := drafted.unanswered:
        rest = ", ".join(f"**{line(h)}**" for h in missing)
        return f"{chosen} Still to answer: {rest}; then press **Submit**."
    return f"{chosen} Press **Submit** to send your answers."


def typed_problems(outcome: Refused) -> str:
    """Why what a person typed was not taken, field by field, and what is still unanswered."""
    lines = [NOT_RECORDED]
    lines += (f"- **{line(field)}**: {line(problem)}" for field, problem in outcome.fields())
    if outcome.missing:
        lines.append(missing_sentence(outcome.missing, line))
    return "\n".join(lines)


FILL_AGAIN = "**Fill in again** opens the form with what you gave."


def refused_values(outcome: Refused) -> str:
    """Why the values a person gave a typed form were not taken, field by field (named by
    their titles, as the form shows them); nothing was recorded."""
    form = outcome.view.form if outcome.view is not None else None
    titles = {f.name: field_title(f) for f in form.fields} if form is not None else {}
    lines = [NOT_RECORDED]
    lines += (
        f"- **{shorten(line(titles.get(name, name)), MAX_SUMMARY)}**: {line(problem)}"
        for name, problem in outcome.field_problems.items()
    )
    lines.append(FILL_AGAIN)
    return "\n".join(lines)


def cancel_note(outcome: Outcome) -> str:
    """What the private question about cancelling becomes once answered."""
    if isinstance(outcome, Decided):
        return f"{outcome.view.heading.format(deciders=names(outcome.view.deciders, bold=True))}."
    return note(outcome) or NO_LONGER_AVAILABLE
