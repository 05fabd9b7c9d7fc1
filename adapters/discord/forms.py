"""Answers in a person's own words, and notes: the form (a modal), built from the request's view;
and a typed form's modal (`fill_form`), read back as `Fill.values` (`filled`).

Per question a field prefilled with the person's picks, read as the agent reads an answer, and a
note: at most 4 + 1 fields, within Discord's 5. Its submission is one `Submit`, read from the raw
interaction (`clicks.parse_submission`, `handlers.submitted`): discord.py routes one only to a
`ui.Modal` it still holds, which a restart forgets, so askbridge keeps none.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import discord
from discord import ui

from askbridge.adapters.discord.ids import BadCustomId, CustomId, unpack
from askbridge.adapters.discord.render import MAX_TEXT_INPUT, field_title, words_label
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
from askbridge.core.changes import CHANGE_HINT, CHANGE_TITLE, Changeable
from askbridge.core.forms import Choice, FieldKind, Form, FormField, number_range, number_text
from askbridge.core.intents import Action
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
        modal.add_item(note_field(request_id))
    return modal


def note_field(request_id: str) -> ui.Label[Modal]:
    """The optional note people may add to their answer, last in a request's modal."""
    note: TextInput = ui.TextInput(
        custom_id=CustomId.note(request_id).pack(),
        style=discord.TextStyle.paragraph,
        placeholder=NOTE_PLACEHOLDER,
        required=False,
        max_length=MAX_TYPED_CHARS,
    )
    return ui.Label(text=NOTE_LABEL, description=NOTE_HINT, component=note)


def change_form(view: RequestView, field: Changeable) -> Modal:
    """Edit and allow: the tool call's input as asked, to change, and a note."""
    request_id = view.request_id
    modal = Modal(title=CHANGE_TITLE, custom_id=CustomId.form(request_id).pack(), timeout=None)
    changed: TextInput = ui.TextInput(
        custom_id=CustomId.changed(request_id).pack(),
        style=discord.TextStyle.paragraph,
        default=field.text,
        required=True,
        min_length=1,
        max_length=MAX_TEXT_INPUT,
    )
    description = clip(CHANGE_HINT, MAX_DESCRIPTION)
    modal.add_item(
        ui.Label(text=clip(field.label, MAX_LABEL), description=description, component=changed)
    )
    if view.request.policy.allow_notes:
        modal.add_item(note_field(request_id))
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


# --- typed forms ------------------------------------------------------------------------------

MAX_TITLE = 45
MAX_OPTION_TEXT = 100
MAX_SELECT_PLACEHOLDER = 150
MAX_INPUT_TEXT = 4000
SHORT_TEXT = 150
"""The longest text a one-line input is shown for; a longer one gets a paragraph."""
YES, NO = "true", "false"
"""A boolean's options, as its select's values."""

Select = ui.Select[ui.Modal]


def fill_form(request_id: str, form: Form, values: Mapping[str, object] | None = None) -> Modal:
    """The modal for a typed form (`core.forms.Form`): per field a Label holding a text input
    (texts, emails, links, dates, numbers, with the expected shape as placeholder) or a string
    select (choices, and Yes/No for a boolean), prefilled with `values` (what the person gave
    before, as `clicks.filled` read it) or else the field's default."""
    title = clip(" ".join(form.message.split()), MAX_TITLE) or "Fill in"
    modal = Modal(title=title, custom_id=CustomId.fill(request_id).pack(), timeout=None)
    given = form.defaults() if values is None else dict(values)
    for index, field in enumerate(form.fields):
        custom_id = CustomId.field(request_id, index).pack()
        item = _input(field, custom_id, given.get(field.name))
        label, description = field_label(field)
        modal.add_item(ui.Label(text=label, description=description or None, component=item))
    return modal


def field_label(field: FormField) -> tuple[str, str]:
    """A field's label and description within a Label's 45 and 100 characters. A title cut
    short ends with an ellipsis, and the description starts with all of it, so that what the
    label could not say is there to read (the message shows both whole)."""
    title = field_title(field)
    description = " ".join(field.description.split())
    label = clip(title, MAX_LABEL)
    if label != title:
        description = f"{title}: {description}" if description else title
    return label, clip(description, MAX_DESCRIPTION)


def _input(field: FormField, custom_id: str, value: object) -> ui.Item[ui.Modal]:
    kind = field.kind
    if kind is FieldKind.BOOLEAN:
        yes_no = [Choice(value=YES, title="Yes"), Choice(value=NO, title="No")]
        chosen = [] if value is None else [YES if value else NO]
        return _select(field, custom_id, yes_no, chosen, 1)
    if kind is FieldKind.CHOICE:
        return _select(field, custom_id, field.choices, [] if value is None else [value], 1)
    if kind is FieldKind.CHOICES:
        chosen = list(value) if isinstance(value, list | tuple) else []
        return _select(field, custom_id, field.choices, chosen, field.max_items)
    text = "" if value is None else value_text(value)
    low, high = (field.min_length, field.max_length) if kind.is_text else (None, None)
    long = kind is FieldKind.TEXT and field.max_length > SHORT_TEXT
    # A default longer than the input holds (never, as core keeps texts within 3000) would be
    # refused by Discord; the field is then left empty.
    fits = len(text) <= (high or MAX_INPUT_TEXT)
    field_input: TextInput = ui.TextInput(
        custom_id=custom_id,
        style=discord.TextStyle.paragraph if long else discord.TextStyle.short,
        placeholder=clip(shape_hint(field), MAX_PLACEHOLDER) or None,
        default=text if text and fits else None,
        required=field.required,
        min_length=low if low else None,
        max_length=high,
    )
    return field_input


def _select(
    field: FormField,
    custom_id: str,
    choices: Sequence[Choice],
    chosen: Sequence[object],
    most: int | None,
) -> Select:
    # An optional select may be left empty (required false); a required one needs min_values
    # of at least 1, so a required multi-choice that may hold none (minItems 0) is sent as
    # optional, and its empty answer read back as [] (`filled`).
    fewest = field.min_items if field.min_items is not None else 1
    options = [
        discord.SelectOption(
            label=clip(choice.title, MAX_OPTION_TEXT),
            value=choice.value,
            default=choice.value in chosen,
        )
        for choice in choices
    ]
    return ui.Select(
        custom_id=custom_id,
        placeholder=clip(shape_hint(field), MAX_SELECT_PLACEHOLDER) or None,
        min_values=fewest,
        max_values=most or len(options),
        required=field.required and fewest > 0,
        options=options,
    )


def value_text(value: object) -> str:
    """A value as a text input holds it: numbers as typed (42, 2.5), texts as they are."""
    if isinstance(value, float):
        return number_text(value)
    return str(value)


def shape_hint(field: FormField) -> str:
    """What a field's input expects, where its kind does not show it: the placeholder."""
    kind = field.kind
    if kind is FieldKind.EMAIL:
        return "An email address, such as name@example.com"
    if kind is FieldKind.URI:
        return "A link, such as https://example.com/"
    if kind is FieldKind.DATE:
        return "A date as YYYY-MM-DD, such as 2026-12-07"
    if kind is FieldKind.DATE_TIME:
        return "YYYY-MM-DDTHH:MM and its offset, such as 2026-12-07T09:30+01:00 (Z for UTC)"
    if kind.is_number:
        return _number_hint(field)
    if kind is FieldKind.CHOICES:
        low, high = field.min_items, field.max_items
        if low is not None and high is not None:
            return f"Choose {low} to {high}" if low != high else f"Choose {low}"
        if low is not None:
            return f"Choose at least {low}"
        return f"Choose up to {high}" if high is not None else "Choose any"
    if kind is FieldKind.TEXT and field.min_length:
        return f"{field.min_length} to {field.max_length} characters"
    return ""


def _number_hint(field: FormField) -> str:
    what = "A whole number" if field.kind is FieldKind.INTEGER else "A number"
    bounds = number_range(field)
    if not bounds:
        return what
    # "A number of at least 1", but "A number from 1 to 10" and "A number more than 0".
    return f"{what} {'of ' if bounds.startswith('at ') else ''}{bounds}"


def filled(form: Form, request_id: str, data: Mapping[str, Any]) -> dict[str, object]:
    """What a typed form's modal submission (`data`) gave, as `core.intents.Fill.values`: a
    text input's text (an empty one is a field left empty), a select's choice value, True or
    False for a boolean, a list for a multi-choice (left out when nothing was picked and the
    field is optional). BadCustomId when an input is not one of this form's."""
    given: dict[str, object] = {}
    for custom_id, value in inputs(data):
        field_id = unpack(custom_id)
        index = field_id.question
        if (
            field_id.request_id != request_id
            or field_id.action is not Action.FIELD
            or index is None
            or index >= len(form.fields)
        ):
            raise BadCustomId(f"{custom_id!r} is not an input of {request_id!r}'s form")
        field = form.fields[index]
        kind = field.kind
        if isinstance(value, str) != (kind.is_text or kind.is_number):
            raise BadCustomId(f"{custom_id!r} is not the input of a {kind} field")
        if isinstance(value, str):
            given[field.name] = value
        elif kind is FieldKind.CHOICES:
            if value or field.required:
                given[field.name] = list(value)
        elif len(value) > 1 or (kind is FieldKind.BOOLEAN and not set(value) <= {YES, NO}):
            raise BadCustomId(f"{custom_id!r} sent {value!r} for a {kind} field")
        elif value:
            given[field.name] = value[0] == YES if kind is FieldKind.BOOLEAN else value[0]
    return given


def inputs(data: Mapping[str, Any]) -> Iterator[tuple[str, str | list[str]]]:
    """(custom_id, text or chosen values) of every text input and string select in a modal
    submission's data."""
    yield from _inputs(data.get("components") or [])


def _inputs(components: Sequence[Any]) -> Iterator[tuple[str, str | list[str]]]:
    for component in components:
        if not isinstance(component, dict):
            continue
        nested = component.get("components")
        if isinstance(nested, list):
            yield from _inputs(nested)
        single = component.get("component")
        if isinstance(single, dict):
            yield from _inputs([single])
        kind = component.get("type")
        if kind == discord.ComponentType.text_input.value:
            yield str(component.get("custom_id")), str(component.get("value") or "")
        elif kind == discord.ComponentType.string_select.value:
            chosen = component.get("values")
            values = [str(v) for v in chosen] if isinstance(chosen, list) else []
            yield str(component.get("custom_id")), values
