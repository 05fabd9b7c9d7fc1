"""A typed form as the engine keeps it: its fields, read from MCP elicitation's restricted JSON
Schema by `core.form_parsing.parse_form`. Only models here, so that `core.models` can hold a form
without importing how one is read and checked."""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel, ConfigDict

MAX_FIELDS = 10
"""The most fields a form holds anywhere; each surface says how many it shows in one form
(`form_fields`, read by `core.surface.form_fields_of`)."""
FEW_FIELDS = 5
"""The most a surface shows in one form when it does not say."""
MAX_MESSAGE_CHARS = 2000
MAX_NAME_CHARS = 64
MAX_TITLE_CHARS = 200
MAX_DESCRIPTION_CHARS = 500
MAX_TEXT_CHARS = 3000
"""The longest text a person can type: Slack's plain-text input holds 3000 characters."""
MAX_CHOICES = 25
"""A Discord select holds 25 options (Slack's 100)."""
MAX_CHOICE_VALUE_CHARS = 100
MAX_CHOICE_TITLE_CHARS = 75
"""Slack's option text holds 75 characters."""
MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer a form holds: past it a JSON number (a double) skips whole numbers, and
RFC 8785, which keeps every value, refuses it."""


class FieldKind(enum.StrEnum):
    """What a field holds, which decides the input each surface shows for it."""

    TEXT = "text"
    EMAIL = "email"
    URI = "uri"
    DATE = "date"
    DATE_TIME = "date-time"
    NUMBER = "number"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    CHOICE = "choice"
    CHOICES = "choices"

    @property
    def is_text(self) -> bool:
        return self in _TEXT_KINDS

    @property
    def is_number(self) -> bool:
        return self in (FieldKind.NUMBER, FieldKind.INTEGER)


_TEXT_KINDS = frozenset(
    {FieldKind.TEXT, FieldKind.EMAIL, FieldKind.URI, FieldKind.DATE, FieldKind.DATE_TIME}
)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Choice(_Frozen):
    value: str
    title: str


class FormField(_Frozen):
    """One field of a form, read from its property schema."""

    name: str
    kind: FieldKind
    title: str
    """What a person sees as the field's label: the schema's title, or else its name."""
    description: str = ""
    required: bool = False
    min_length: int | None = None
    max_length: int = MAX_TEXT_CHARS
    """For text: the schema's maxLength, never more than a surface's input holds."""
    minimum: float | None = None
    maximum: float | None = None
    above_minimum: bool = False
    """For a number: every value lies above `minimum`, not at it (JSON Schema's
    exclusiveMinimum). An integer's is read as the whole number above it instead."""
    below_maximum: bool = False
    """For a number: every value lies below `maximum`, not at it (exclusiveMaximum)."""
    choices: tuple[Choice, ...] = ()
    min_items: int | None = None
    max_items: int | None = None
    default: Any = None
    """A value `check_value` accepts, or None."""

    @property
    def takes_none(self) -> bool:
        """A required multi-choice that may hold no choice (minItems 0): nothing picked is its
        answer, [], so no surface's input insists on a pick (`core.form_checks.read_input`)."""
        return self.kind is FieldKind.CHOICES and self.required and self.min_items == 0

    @property
    def untouched(self) -> Any:
        """The answer a surface's input gives when nobody touches it, or None for none. A
        yes/no is its default, else false: a checkbox or a toggle (Slack, Teams, the web
        page) cannot say "not answered", and Discord's select left empty reads the same. A
        multi-choice that takes none is []."""
        if self.kind is FieldKind.BOOLEAN:
            return False if self.default is None else self.default
        return [] if self.takes_none else None

    def choice_title(self, value: str) -> str:
        return next((c.title for c in self.choices if c.value == value), value)


class Form(_Frozen):
    """What a person is asked to fill in: a message and its fields, in the schema's order; or,
    for a URL-mode elicitation, a link to open and no fields."""

    message: str
    fields: tuple[FormField, ...] = ()
    url: str | None = None
    schema_: dict[str, Any] | None = None
    """The schema as the agent sent it, to give back as it came."""

    def field(self, name: str) -> FormField | None:
        return next((f for f in self.fields if f.name == name), None)

    def defaults(self) -> dict[str, Any]:
        """The values the inputs start with: each field's default."""
        return {f.name: f.default for f in self.fields if f.default is not None}

    def as_sent(self) -> dict[str, Any]:
        """The form as an agent sends it: `core.forms.parse_form` reads this back equal."""
        if self.url is not None:
            return {"message": self.message, "url": self.url}
        return {"message": self.message, "requested_schema": self.schema_ or {}}
