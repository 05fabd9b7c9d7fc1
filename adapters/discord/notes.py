"""What the person who clicked in Discord is told privately: one sentence per outcome, in
Discord's markdown, with every user text escaped (`markdown.line`)."""

from __future__ import annotations

from askbridge.adapters.discord.lines import MAX_SUMMARY, answerers_text, name, names
from askbridge.adapters.discord.markdown import line, shorten
from askbridge.core.intents import (
    Counted,
    Decided,
    Drafted,
    Outcome,
    Refusal,
    Refused,
)
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


def note(outcome: Outcome) -> str | None:
    """What the person who clicked is told privately; None when the message itself shows it."""
    match outcome:
        case Decided() | Refused(reason=Refusal.REPLAYED):
            return None
        case Counted(receipt=receipt):
            return counted_sentence(receipt, lambda a: f"**{shorten(line(a), MAX_SUMMARY)}**")
        case Drafted(view=view, question=q, draft=draft):
            asked = view.questions[q]
            picked = ", ".join(line(asked.options[o].label) for o in draft.get(q, ()))
            chosen = f"**{line(asked.header)}**: {picked}."
            if missing := outcome.unanswered:
                rest = ", ".join(f"**{line(h)}**" for h in missing)
                return f"{chosen} Still to answer: {rest}; then press **Submit**."
            return f"{chosen} Press **Submit** to send your answers."
        case Refused(reason=Refusal.NOT_ANSWERER, view=view) if view is not None:
            return NOT_ANSWERER.format(answerers=answerers_text(view.answerers))
        case Refused(reason=Refusal.ALREADY_ENDED, view=view) if view is not None:
            return end_sentence(view, name)
        case Refused(reason=Refusal.MISSING_ANSWERS, missing=missing):
            return missing_sentence(missing, line)
        case Refused(reason=Refusal.BAD_TEXT):
            return typed_problems(outcome)
        case Refused(reason=Refusal.FOREIGN_MESSAGE):
            return FOREIGN_CLICK
        case Refused(reason=Refusal.SELF_APPROVAL):
            return SELF_APPROVAL
    return NO_LONGER_AVAILABLE


def typed_problems(outcome: Refused) -> str:
    """Why what a person typed was not taken, field by field, and what is still unanswered."""
    lines = [NOT_RECORDED]
    lines += (f"- **{line(field)}**: {line(problem)}" for field, problem in outcome.fields())
    if outcome.missing:
        lines.append(missing_sentence(outcome.missing, line))
    return "\n".join(lines)


def cancel_note(outcome: Outcome) -> str:
    """What the private question about cancelling becomes once answered."""
    if isinstance(outcome, Decided):
        return f"{outcome.view.heading.format(deciders=names(outcome.view.deciders, bold=True))}."
    return note(outcome) or NO_LONGER_AVAILABLE
