"""A typed form's values as the engine keeps them and people read them: no checking here (see
`core.form_checks`), so that the views every surface renders from can import it."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from askbridge.core.audit_log import canonical
from askbridge.core.form_schema import FieldKind, Form, FormField


def encode(content: Mapping[str, Any]) -> dict[str, str]:
    """Checked values as the engine keeps them: field name -> RFC 8785 canonical JSON."""
    return {name: canonical(value).decode() for name, value in content.items()}


def decode(answers: Mapping[str, str]) -> dict[str, Any]:
    """The typed values back from what the engine keeps (`encode`'s inverse)."""
    return {name: json.loads(text) for name, text in answers.items()}


def shown_value(field: FormField, value: Any) -> str:
    """A value as a person reads it in a message: Yes/No, a choice's title, a list joined."""
    if field.kind is FieldKind.BOOLEAN:
        return "Yes" if value else "No"
    if field.kind is FieldKind.CHOICE:
        return field.choice_title(str(value))
    if field.kind is FieldKind.CHOICES:
        return ", ".join(field.choice_title(str(v)) for v in value) or "(none)"
    if field.kind.is_number:
        return number_text(value)
    return str(value)


def number_text(value: float) -> str:
    """A number as people read and type it, whole: 3 rather than 3.0, 2.0000001 rather than
    2, 1e+20 rather than 21 digits (Python writes a float in the fewest digits that read back
    as it, and `core.form_checks.read_text` reads each of these back)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value)


def low_words(field: FormField, low: float) -> str:
    """A number field's lower bound as people read it: "at least 1", "more than 0"."""
    return f"{'more than' if field.above_minimum else 'at least'} {number_text(low)}"


def high_words(field: FormField, high: float) -> str:
    """A number field's upper bound as people read it: "at most 10", "less than 1"."""
    return f"{'less than' if field.below_maximum else 'at most'} {number_text(high)}"


def number_range(field: FormField) -> str:
    """A number field's bounds as people read them, the one wording every hint uses: "from 1
    to 10", "at least 1", "more than 0 and at most 10"; "" when it has none."""
    low, high = field.minimum, field.maximum
    if low is not None and high is not None:
        if not (field.above_minimum or field.below_maximum):
            return f"from {number_text(low)} to {number_text(high)}"
        return f"{low_words(field, low)} and {high_words(field, high)}"
    if low is not None:
        return low_words(field, low)
    return "" if high is None else high_words(field, high)


def filled_in(form: Form, content: Mapping[str, Any]) -> Iterator[tuple[FormField, str]]:
    """Each field a person filled in, with its value as people read it, in the form's order."""
    for field in form.fields:
        if field.name in content:
            yield field, shown_value(field, content[field.name])
