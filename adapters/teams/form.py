"""A typed form on a Teams card: each field as the Adaptive Card input made for it, and what a
press on Fill in carries back, read as the broker's `Fill`.

Teams has a native input for every kind of field: `Input.Text` (styled email or url), an
`Input.Number` with its bounds, `Input.Date`, an `Input.Date` and an `Input.Time` for a date and
time (in UTC, which the label says: a card's inputs carry no time zone), `Input.Toggle`, and an
`Input.ChoiceSet` (several picks for a multi-choice). Choices carry their index, not their value:
a multi-select's picks come back joined with commas, which a value may hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from askbridge.adapters.teams.text import Element, clip, paragraph, plain, run
from askbridge.core.forms import FieldKind, Form, FormField

MAX_LABEL = 200
MAX_CHOICE_TITLE = 200
EXPANDED_UP_TO = 5
UTC_NOTE = " (UTC)"


def field_input(index: int, *, time: bool = False) -> str:
    """The id of field `index`'s input (its time input for a date and time)."""
    return f"f{index}t" if time else f"f{index}"


def form_elements(
    form: Form, given: Mapping[str, object] | None = None, problems: Mapping[str, str] | None = None
) -> list[Element]:
    """The form's inputs, each with its description and, after a refusal, why its value was
    refused; prefilled with what the person gave (`given`), or else with the defaults."""
    values: Mapping[str, object] = form.defaults() if given is None else given
    elements: list[Element] = []
    for index, field in enumerate(form.fields):
        # The input names the field; its description follows, as help under it.
        elements += _inputs(index, field, values.get(field.name))
        if field.description.strip():
            elements.append(plain(field.description.strip(), subtle=True))
        if problems and field.name in problems:
            elements.append(paragraph(run("⚠ "), run(problems[field.name], bold=True)))
    return elements


def _label(field: FormField) -> str:
    suffix = UTC_NOTE if field.kind is FieldKind.DATE_TIME else ""
    return clip(field.title, MAX_LABEL - len(suffix)) + suffix


def _inputs(index: int, field: FormField, value: object) -> list[Element]:
    element: Element = {
        "id": field_input(index),
        "label": _label(field),
        "isRequired": field.required and not field.takes_none,
    }
    kind = field.kind
    if kind is FieldKind.BOOLEAN:
        element |= {
            "type": "Input.Toggle",
            "title": clip(field.title, MAX_LABEL),
            "value": "true" if value is True or value == "true" else "false",
            "valueOn": "true",
            "valueOff": "false",
        }
        # The title is drawn beside the switch; a label would say it again above.
        element.pop("label")
        element.pop("isRequired")
    elif kind.is_number:
        element["type"] = "Input.Number"
        if field.minimum is not None:
            element["min"] = field.minimum
        if field.maximum is not None:
            element["max"] = field.maximum
        number = _number(value)
        if number is not None:
            element["value"] = number
    elif kind is FieldKind.DATE:
        element["type"] = "Input.Date"
        if isinstance(value, str) and value:
            element["value"] = value[:10]
    elif kind is FieldKind.DATE_TIME:
        day, clock = _date_and_time(value)
        element |= {"type": "Input.Date", **({"value": day} if day else {})}
        time: Element = {
            "type": "Input.Time",
            "id": field_input(index, time=True),
            "label": "Time" + UTC_NOTE,
            "isRequired": field.required,
            **({"value": clock} if clock else {}),
        }
        return [element, time]
    elif kind in (FieldKind.CHOICE, FieldKind.CHOICES):
        many = kind is FieldKind.CHOICES
        picked = _picked(field, value)
        element |= {
            "type": "Input.ChoiceSet",
            "isMultiSelect": many,
            "style": "expanded" if len(field.choices) <= EXPANDED_UP_TO else "compact",
            "choices": [
                {"title": clip(c.title, MAX_CHOICE_TITLE), "value": str(i)}
                for i, c in enumerate(field.choices)
            ],
        }
        if picked:
            element["value"] = ",".join(picked)
    else:
        element |= {
            "type": "Input.Text",
            "maxLength": field.max_length,
            "isMultiline": field.max_length > 200 and kind is FieldKind.TEXT,
        }
        if kind is FieldKind.EMAIL:
            element["style"] = "email"
        elif kind is FieldKind.URI:
            element["style"] = "url"
        if isinstance(value, str) and value:
            element["value"] = clip(value, field.max_length)
    return [element]


def _number(value: object) -> float | int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return int(number) if number.is_integer() else number
    return None


def _date_and_time(value: object) -> tuple[str, str]:
    """A date and time as the card's inputs hold it: in UTC, which their labels say, so that a
    default at another offset is shown, and sent back, as the same instant."""
    if not isinstance(value, str) or len(value) < 16:
        return "", ""
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        # Not one (what a person gave, refused): shown as it was typed.
        return value[:10], value[11:16]
    try:
        at = at if at.tzinfo is None else at.astimezone(UTC)
    except OverflowError:
        # An instant UTC cannot write (year 1 at a positive offset): no time to show for it.
        return "", ""
    return at.date().isoformat(), at.strftime("%H:%M")


def _picked(field: FormField, value: object) -> list[str]:
    chosen = value if isinstance(value, list | tuple) else [value]
    return [str(i) for i, c in enumerate(field.choices) if c.value in chosen]


def read_fill(form: Form, data: Mapping[str, Any]) -> dict[str, object]:
    """What a press on Fill in carries (the card's inputs, merged into the action's data) as
    `Fill.values`: texts as typed, a toggle as a bool, choices as their values. A field whose
    input is missing, or holds what no card of this form offers, is left out (the broker then
    says whether it was required)."""
    values: dict[str, object] = {}
    for index, field in enumerate(form.fields):
        raw = data.get(field_input(index))
        if not isinstance(raw, str):
            continue
        kind = field.kind
        if kind is FieldKind.BOOLEAN:
            values[field.name] = raw == "true"
        elif kind is FieldKind.DATE_TIME:
            clock = data.get(field_input(index, time=True))
            if raw and isinstance(clock, str) and clock:
                values[field.name] = f"{raw}T{clock}:00+00:00"
            elif raw or clock:
                # One half of a date and time: the broker words why it is refused.
                values[field.name] = f"{raw} {clock}".strip()
        elif kind in (FieldKind.CHOICE, FieldKind.CHOICES):
            picks = [p.strip() for p in raw.split(",") if p.strip()]
            chosen = [
                field.choices[int(p)].value
                for p in picks
                if p.isdigit() and int(p) < len(field.choices)
            ]
            if kind is FieldKind.CHOICES and chosen:
                values[field.name] = chosen
            elif chosen:
                values[field.name] = chosen[0]
        else:
            values[field.name] = raw
    return values
