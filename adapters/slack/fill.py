"""A typed form (a request with a `form`) as a Slack modal, and what its submission gives.

"Fill in…" opens it: the form's message, then one input per field, of the kind Slack has for
the field's type (plain text, a number, a date, a date and time, an email address, a URL, a
checkbox for yes or no, menus for choices), prefilled with the field's default. Slack's client
enforces what its inputs can (required fields, text lengths, number bounds and decimals, the
shape of an address); the broker checks everything once more (`core.forms.read_input`), and
what it refuses comes back as errors under the inputs (`errors`), the modal as it was typed.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from askbridge.adapters.slack.blockkit import (
    MAX_LABEL,
    MAX_OPTION_TEXT,
    MAX_PLACEHOLDER,
    MAX_VIEW_TITLE,
    AddressInput,
    FormInput,
    InputBlock,
    ModalView,
    MultiStaticSelect,
    NumberInput,
    Option,
    PlainTextInput,
    RichTextBlock,
    StateEntry,
    StateValues,
    StaticSelect,
)
from askbridge.adapters.slack.controls import plain
from askbridge.adapters.slack.ids import (
    FIELD_ACTION,
    FILL_CALLBACK_ID,
    FormMetadata,
    field_block_id,
    field_of,
)
from askbridge.adapters.slack.text import block, prose, shorten
from askbridge.core.forms import MAX_SAFE_INTEGER, Choice, FieldKind, Form, FormField

FILL_TITLE = "Fill in the form"
SUBMIT = "Submit"
CLOSE = "Close"
YES = "Yes"
CHOOSE = "Choose…"
MESSAGE_BLOCK = "ab-form-message"
MESSAGE_BUDGET = 2500
MULTILINE_FROM = 200
"""Text inputs that take more characters than this get several lines."""
MAX_PICKER_TIMESTAMP = 9_999_999_999
"""A datetimepicker starts at a UNIX timestamp of ten digits at most: 1970 to 2286."""
DATE_TIME_SHAPE = "YYYY-MM-DDTHH:MM:SS+HH:MM"
ERROR_BUDGET = 1000
TITLE_IN_ERROR_BUDGET = 60


def title_of(field: FormField) -> str:
    """The field's title, or its name when the title holds nothing to read."""
    return field.title if field.title.strip() else field.name


def modal(form: Form, metadata: FormMetadata) -> ModalView:
    """The modal "Fill in…" opens for `form`, its inputs holding the fields' defaults."""
    message: RichTextBlock = block(MESSAGE_BLOCK, prose([], shorten(form.message, MESSAGE_BUDGET)))
    return {
        "type": "modal",
        "callback_id": FILL_CALLBACK_ID,
        "title": plain(FILL_TITLE, MAX_VIEW_TITLE),
        "submit": plain(SUBMIT, MAX_VIEW_TITLE),
        "close": plain(CLOSE, MAX_VIEW_TITLE),
        "private_metadata": metadata.pack(),
        "blocks": [message, *(field_input(f) for f in form.fields)],
    }


def field_input(field: FormField) -> InputBlock:
    made: InputBlock = {
        "type": "input",
        "block_id": field_block_id(field.name),
        "label": plain(title_of(field), MAX_LABEL),
        "element": _element(field),
    }
    if field.description.strip():
        made["hint"] = plain(field.description, MAX_LABEL)
    # An unticked box is an answer (no), so a yes-or-no field is never one Slack insists on;
    # nor is a multi-choice whose answer may be no choice.
    if not field.required or field.kind is FieldKind.BOOLEAN or field.takes_none:
        made["optional"] = True
    return made


def _element(field: FormField) -> FormInput:
    kind, default = field.kind, field.default
    if kind is FieldKind.EMAIL or kind is FieldKind.URI:
        typed: AddressInput = {
            "type": "email_text_input" if kind is FieldKind.EMAIL else "url_text_input",
            "action_id": FIELD_ACTION,
        }
        if isinstance(default, str):
            typed["initial_value"] = default
        return typed
    if kind is FieldKind.DATE:
        if isinstance(default, str):
            return {"type": "datepicker", "action_id": FIELD_ACTION, "initial_date": default}
        return {"type": "datepicker", "action_id": FIELD_ACTION}
    if kind is FieldKind.DATE_TIME:
        if isinstance(default, str):
            at = int(datetime.fromisoformat(default).timestamp())
            if not 0 <= at <= MAX_PICKER_TIMESTAMP:
                return _typed_date_time(default)
            return {"type": "datetimepicker", "action_id": FIELD_ACTION, "initial_date_time": at}
        return {"type": "datetimepicker", "action_id": FIELD_ACTION}
    if kind.is_number:
        return _number(field)
    if kind is FieldKind.BOOLEAN:
        yes: Option = {"text": plain(YES, MAX_OPTION_TEXT), "value": "yes"}
        if default is True:
            return {
                "type": "checkboxes",
                "action_id": FIELD_ACTION,
                "options": [yes],
                "initial_options": [yes],
            }
        return {"type": "checkboxes", "action_id": FIELD_ACTION, "options": [yes]}
    if kind is FieldKind.CHOICE or kind is FieldKind.CHOICES:
        return _menu(field)
    return _text(field)


def _text(field: FormField) -> FormInput:
    element: PlainTextInput = {
        "type": "plain_text_input",
        "action_id": FIELD_ACTION,
        "max_length": field.max_length,
        "multiline": field.max_length > MULTILINE_FROM,
    }
    if field.min_length:
        element["min_length"] = field.min_length
    if isinstance(field.default, str) and field.default:
        element["initial_value"] = field.default
    return element


def _typed_date_time(default: str) -> PlainTextInput:
    """A date and time whose default the picker cannot start at (before 1970, after 2286),
    typed as text instead, holding that default: it is read as typed (`core.forms.read_text`)."""
    return {
        "type": "plain_text_input",
        "action_id": FIELD_ACTION,
        "max_length": len(DATE_TIME_SHAPE) + len(".000000"),
        "multiline": False,
        "initial_value": default,
        "placeholder": plain(DATE_TIME_SHAPE, MAX_PLACEHOLDER),
    }


def _number(field: FormField) -> FormInput:
    whole = field.kind is FieldKind.INTEGER
    element: NumberInput = {
        "type": "number_input",
        "action_id": FIELD_ACTION,
        "is_decimal_allowed": not whole,
    }
    if field.minimum is not None:
        element["min_value"] = number_text(field.minimum, whole=whole)
    if field.maximum is not None:
        element["max_value"] = number_text(field.maximum, whole=whole)
    if isinstance(field.default, int | float) and not isinstance(field.default, bool):
        element["initial_value"] = number_text(field.default, whole=whole)
    return element


def number_text(value: float, *, whole: bool) -> str:
    """A number as a number_input takes it: digits and a point, never an exponent. A float's
    shortest digits, so that 1e20 is 1 and twenty zeros, not the binary value's 21 digits."""
    if whole or (value == int(value) and abs(value) <= MAX_SAFE_INTEGER):
        return str(int(value))
    return format(Decimal(repr(float(value))), "f")


def _menu(field: FormField) -> FormInput:
    options = [_option(c) for c in field.choices]
    default = field.default
    placeholder = plain(CHOOSE, MAX_PLACEHOLDER)
    if field.kind is FieldKind.CHOICE:
        single: StaticSelect = {
            "type": "static_select",
            "action_id": FIELD_ACTION,
            "options": options,
            "placeholder": placeholder,
        }
        chosen = [o for o in options if o["value"] == default]
        if chosen:
            single["initial_option"] = chosen[0]
        return single
    multi: MultiStaticSelect = {
        "type": "multi_static_select",
        "action_id": FIELD_ACTION,
        "options": options,
        "placeholder": placeholder,
    }
    if field.max_items is not None:
        multi["max_selected_items"] = field.max_items
    if isinstance(default, list) and default:
        multi["initial_options"] = [o for o in options if o["value"] in default]
    return multi


def _option(choice: Choice) -> Option:
    # A choice's value (at most 100 characters) fits an option's (150), and is never shown.
    return {"text": plain(choice.title, MAX_OPTION_TEXT), "value": choice.value}


# ---- the submission -----------------------------------------------------------------------------


def read_fill(values: StateValues) -> dict[str, object]:
    """What the modal's inputs gave, field name -> value as `core.intents.Fill` takes it: a
    text for a text, number, email or URL input (empty when left empty), a date as
    YYYY-MM-DD, a date and time as ISO 8601 with its offset, a bool for the yes-or-no box, a
    choice's value, a list of values (a multi-select left empty gives nothing)."""
    given: dict[str, object] = {}
    for block_id, elements in values.items():
        name = field_of(block_id)
        entry = elements.get(FIELD_ACTION) if isinstance(elements, dict) else None
        if name is None or not isinstance(entry, dict):
            continue
        value = _value(entry)
        if value is not None:
            given[name] = value
    return given


def _value(entry: StateEntry) -> object:
    kind = entry.get("type")
    if kind == "checkboxes":
        return bool(entry.get("selected_options"))
    if kind == "static_select":
        chosen: Any = entry.get("selected_option")
        return str(chosen.get("value", "")) if isinstance(chosen, dict) else ""
    if kind == "multi_static_select":
        many: list[Any] = entry.get("selected_options") or []
        picked = [str(o.get("value")) for o in many if isinstance(o, dict)]
        return picked or None
    if kind == "datepicker":
        day = entry.get("selected_date")
        return day if isinstance(day, str) else ""
    if kind == "datetimepicker":
        at = entry.get("selected_date_time")
        if isinstance(at, int) and not isinstance(at, bool):
            # Slack gives the instant, not the person's zone; UTC says it exactly.
            return datetime.fromtimestamp(at, UTC).isoformat()
        return ""
    typed = entry.get("value")
    return typed if isinstance(typed, str) else ""


def errors(form: Form, problems: Mapping[str, str]) -> dict[str, str]:
    """The errors under the modal's inputs for the fields the broker refused (BAD_VALUES),
    each saying what is wrong in a sentence that names its field."""
    shown: dict[str, str] = {}
    for name, problem in problems.items():
        field = form.field(name)
        if field is not None:
            title = shorten(" ".join(title_of(field).split()), TITLE_IN_ERROR_BUDGET)
            shown[field_block_id(name)] = shorten(f"{title} {problem}.", ERROR_BUDGET)
    return shown
