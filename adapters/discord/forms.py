"""Answers in a person's own words, and notes: the form (a modal) and its submission.

The button "Answer in my words…" (or "Submit with a note…", when a request takes notes but no
words of one's own) opens a modal. That must be the click's first response, within Discord's
3 seconds, so nothing is deferred first: `open_form` reads the request and the person's draft
once (`Broker.answer_form`) and answers with the modal, or with a private note saying why
there is none. The modal holds, per question, a field prefilled with what the person has
picked (when the request takes words of their own, or when one click answers, so that a note
can come with an answer), and a note (when it takes notes): at most 4 + 1 fields, within
Discord's 5. What is typed in a question's field is that question's
whole answer, read as the agent reads one: option labels are those options, other words the
person's own.

The submission (MODAL_SUBMIT) is one `Submit` through `Broker.act`, from the message whose
button opened the form, like a click. discord.py routes a submission only to a `ui.Modal` it
still holds in memory, which a restart forgets; so askbridge keeps none: the runtime hands
every submission of an askbridge form to `submitted`, read from the raw interaction, before a
restart or after it alike. A modal cannot show errors inline on Discord: a refusal is a
private note naming each problem, and nothing is recorded.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import discord
from discord import ui

from askbridge.adapters.discord import clicks, notes
from askbridge.adapters.discord.clicks import Click
from askbridge.adapters.discord.ids import Action, BadCustomId, CustomId, unpack
from askbridge.adapters.discord.lines import name
from askbridge.adapters.discord.markdown import clip, line
from askbridge.adapters.discord.render import words_label
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
from askbridge.core.broker import Broker
from askbridge.core.intents import Outcome, Refusal, Refused, Submit
from askbridge.core.models import Selections
from askbridge.core.view import (
    FAILED,
    FOREIGN_CLICK,
    RequestView,
    end_sentence,
)

log = logging.getLogger("askbridge.discord")

MAX_LABEL = 45
MAX_DESCRIPTION = 100
MAX_PLACEHOLDER = 100
NOT_RECORDED = "What you typed was not recorded."

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


# --- the click that opens it ---------------------------------------------------------------


async def open_form(
    broker: Broker, interaction: discord.Interaction[Any], first: clicks.First, custom_id: CustomId
) -> None:
    """Answer a click on the form's button with the form, or with why there is none."""
    person = clicks.who(interaction)
    modal: Modal | None = None
    try:
        opening = await broker.answer_form(custom_id.request_id, person, clicks.where(interaction))
        if isinstance(opening, Refused):
            text = notes.note(opening)
        elif (text := why_no_form(opening.view, opening.draft)) is None:
            modal = form(opening.view, opening.draft)
            # Submissions are read from the raw interaction (see the module's docstring): a
            # stopped modal is not kept in discord.py's memory.
            modal.stop()
    except Exception:
        log.exception("opening the form of %s failed", custom_id.request_id)
        text = FAILED
    try:
        if modal is not None:
            await first.modal(modal)
        elif text:
            await first.note(text)
    except discord.HTTPException:
        log.warning("could not answer a click on %s in time", custom_id, exc_info=True)
    log.info(
        "discord: form of %s %s for user %s",
        custom_id.request_id,
        "opened" if modal is not None else "refused",
        interaction.user.id,
    )


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


# --- its submission ------------------------------------------------------------------------


async def submitted(
    broker: Broker, interaction: discord.Interaction[Any], first: clicks.First, custom_id: CustomId
) -> None:
    """Record a submitted form as the person's vote, or tell them privately why not."""
    await clicks.act_and_tell(
        broker, interaction, first, custom_id, lambda: parse(interaction, custom_id), note
    )


def parse(interaction: discord.Interaction[Any], custom_id: CustomId) -> Click:
    """Who submitted the form, from which message, with what typed; BadCustomId when a field
    is not one of this form's."""
    typed: dict[int, str] = {}
    note_text = ""
    for field_id, value in values(interaction.data or {}):
        field = unpack(field_id)
        if field.request_id != custom_id.request_id:
            raise BadCustomId(f"{field_id!r} is not a field of {custom_id.pack()!r}")
        if field.action is Action.TYPED and field.question is not None:
            typed[field.question] = value
        elif field.action is Action.NOTE:
            note_text = value
        else:
            raise BadCustomId(f"{field_id!r} is not a field of {custom_id.pack()!r}")
    # What is in a question's field is all of its answer: it was prefilled with the person's
    # picks, so a pick they deleted there is no longer chosen.
    cleared: Selections = dict.fromkeys(typed, ())
    intent = Submit(cleared, typed=typed, note=note_text)
    return Click(
        custom_id.request_id,
        clicks.who(interaction),
        clicks.where(interaction),
        intent,
        clicks.sent(interaction),
    )


def values(data: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(custom_id, value) of every text input in a modal submission's data."""
    yield from _values(data.get("components") or [])


def _values(components: Sequence[Any]) -> Iterator[tuple[str, str]]:
    for component in components:
        if not isinstance(component, dict):
            continue
        nested = component.get("components")
        if isinstance(nested, list):
            yield from _values(nested)
        single = component.get("component")
        if isinstance(single, dict):
            yield from _values([single])
        if component.get("type") == discord.ComponentType.text_input.value:
            yield str(component.get("custom_id")), str(component.get("value") or "")


def note(outcome: Outcome) -> str | None:
    """What the person who submitted the form is told privately."""
    match outcome:
        case Refused(reason=Refusal.ALREADY_ENDED, view=view) if view is not None:
            return f"{end_sentence(view, name)} {NOT_RECORDED}"
        case Refused(reason=Refusal.MISSING_ANSWERS):
            return f"{notes.note(outcome)} {NOT_RECORDED}"
    return notes.note(outcome)
