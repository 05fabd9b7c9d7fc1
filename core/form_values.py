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
        return f"{value:g}" if isinstance(value, float) else str(value)
    return str(value)


def filled_in(form: Form, content: Mapping[str, Any]) -> Iterator[tuple[FormField, str]]:
    """Each field a person filled in, with its value as people read it, in the form's order."""
    for field in form.fields:
        if field.name in content:
            yield field, shown_value(field, content[field.name])
