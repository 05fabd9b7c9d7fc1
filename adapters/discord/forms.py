"""Answers in a person's own words, and notes: the form (a modal), built from the request's view.

Per question a field prefilled with the person's picks, read as the agent reads an answer, and a
note: at most 4 + 1 fields, within Discord's 5. Its submission is one `Submit`, read from the raw
interaction (`clicks.parse_submission`, `handlers.submitted`): discord.py routes one only to a
`ui.Modal` it still holds, which a restart forgets, so askbridge keeps none.
"""

from __future__ import annotations

import discord
from discord import ui

from askbridge.adapters.discord.ids import CustomId
from askbridge.adapters.discord.render import words_label
from askbridge.adapters.discord.text import clip, line
from askbridge.core.answers import (
    MAX_TYPED_CHARS,
    NOTE_HINT,
    NOTE_LABEL,
    NOTE_PLACEHOLDER,
    NOTE_TITLE,
    OWN_WORDS_TITLE,
    answer_text,
    typing_hint,
)
from askbridge.core.models import Selections
from askbridge.core.view import FOREIGN_CLICK, RequestView

MAX_LABEL = 45
MAX_DESCRIPTION = 100
MAX_PLACEHOLDER = 100

Modal = ui.Modal
TextInput = ui.TextInput[ui.Modal]


def form(view: RequestView, draft: Selections) -> Modal:
    """The modal for `view`, prefilled with what the person has picked so far (`draft`)."""
    request_id = view.request_id
    policy = view.request.policy
    title = OWN_WORDS_TITLE if policy.allow_other else NOTE_TITLE
    modal = Modal(title=title, custom_id=CustomId.form(request_id).pack(), timeout=None)
    for q in typed_questions(view):
        question = view.questions[q]
        picked = answer_text(question, draft[q], "") if draft.get(q) else ""
        field: TextInput = ui.TextInput(
            custom_id=CustomId.typed(request_id, q).pack(),
            style=discord.TextStyle.short,
            placeholder=clip(typing_hint(question, policy.allow_other), MAX_PLACEHOLDER),
            default=picked if len(picked) <= MAX_TYPED_CHARS else None,
            required=True,
            min_length=1,
            max_length=MAX_TYPED_CHARS,
        )
        description = clip(" ".join(question.question.split()), MAX_DESCRIPTION)
        modal.add_item(
            ui.Label(
                text=clip(question.header, MAX_LABEL),
                description=description or None,
                component=field,
            )
        )
    if policy.allow_notes:
        note: TextInput = ui.TextInput(
            custom_id=CustomId.note(request_id).pack(),
            style=discord.TextStyle.paragraph,
            placeholder=NOTE_PLACEHOLDER,
            required=False,
            max_length=MAX_TYPED_CHARS,
        )
        modal.add_item(ui.Label(text=NOTE_LABEL, description=NOTE_HINT, component=note))
    return modal


def typed_questions(view: RequestView) -> range:
    """The questions that get a field of their own: all of them when the request takes words
    of one's own; also when one click answers, as the form is then the only way to give an
    answer with a note. Otherwise the form submits the person's picks, with a note."""
    policy = view.request.policy
    if policy.allow_other or (policy.allow_notes and view.one_click):
        return range(len(view.questions))
    return range(0)


def why_no_form(view: RequestView, draft: Selections) -> str | None:
    """Why a person whom the broker lets answer (`Broker.answer_form`) still gets no form for
    `view`: its message has no such button, or the form holds a note but no picks and they
    have not picked every answer yet. None when they may fill it in."""
    if words_label(view) is None:
        return FOREIGN_CLICK
    missing = [] if typed_questions(view) else view.unanswered(draft)
    if missing:
        shown = ", ".join(f"**{line(h)}**" for h in missing)
        return f"Please answer {shown} first; then add your note."
    return None
