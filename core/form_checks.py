"""A typed form's values checked: what an agent gives (a deadline's content, a field's default)
and what a person types or picks, each against its field, kept typed or refused in words for
whoever gave it (`FormRefused`, one `FieldProblem` per field)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from email.utils import parseaddr
from typing import Any
from urllib.parse import urlsplit

from askbridge.core.form_schema import MAX_SAFE_INTEGER, FieldKind, Form, FormField
from askbridge.core.form_values import high_words, low_words, number_text
from askbridge.core.problems import reordering_problem, shown, text_problem

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?([Zz]|[+-]\d{2}:\d{2})"
)
_EMAIL = re.compile(r"[^@\s<>()\[\],;:\"]+@[^@\s<>()\[\],;:\"]+\.[^@\s<>()\[\],;:\".]+")


@dataclass(frozen=True)
class FieldProblem:
    """Why a value given for field `name` was refused, in words for the person who gave it."""

    name: str
    message: str


class FormRefused(Exception):
    """What a person (or a deadline) gave does not fit the form; nothing was recorded."""

    def __init__(self, problems: Sequence[FieldProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(f"{p.name}: {p.message}" for p in self.problems))

    def by_field(self) -> dict[str, str]:
        return {p.name: p.message for p in self.problems}


def check_value(field: FormField, value: Any) -> Any:
    """`value` (JSON, as an agent or a deadline gives it) as the field keeps it, or FormRefused
    with one problem in words for a person."""

    def refuse(message: str) -> FormRefused:
        return FormRefused([FieldProblem(field.name, message)])

    kind = field.kind
    if kind.is_text:
        if not isinstance(value, str):
            raise refuse(f"must be a text, got {shown(value)}")
        return _checked_text(field, value, refuse)
    if kind.is_number:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise refuse(f"must be a number, got {shown(value)}")
        number = finite(value)
        if number is None:
            raise refuse("is too large" if isinstance(value, int) else "must be a finite number")
        if kind is FieldKind.INTEGER:
            if value != int(value):
                raise refuse(f"must be a whole number, got {number_text(value)}")
            value = int(value)
            # Beyond 2**53 a float no longer holds every whole number: some would change.
            if abs(value) > MAX_SAFE_INTEGER:
                raise refuse("is too large")
        elif abs(value) > MAX_SAFE_INTEGER:
            # A JSON number is a double (RFC 8785 keeps values so): 10**20 is 1e20.
            value = number
        return _checked_number(field, value, refuse)
    if kind is FieldKind.BOOLEAN:
        if not isinstance(value, bool):
            raise refuse(f"must be true or false, got {shown(value)}")
        return value
    if kind is FieldKind.CHOICE:
        if not isinstance(value, str) or not any(c.value == value for c in field.choices):
            raise refuse(f"must be one of {_choice_list(field)}, got {shown(value)}")
        return value
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise refuse(f"must be a list of {_choice_list(field)}, got {shown(value)}")
    return _checked_choices(field, list(value), refuse)


def _checked_text(field: FormField, text: str, refuse: Any) -> str:
    if (problem := text_problem(text, allow_nul=False) or reordering_problem(text)) is not None:
        raise refuse(problem)
    if field.required and not text.strip() and field.min_length != 0:
        raise refuse("is required")
    if field.min_length is not None and len(text) < field.min_length:
        raise refuse(f"must be at least {field.min_length} characters, got {len(text)}")
    if len(text) > field.max_length:
        raise refuse(f"must be at most {field.max_length} characters, got {len(text)}")
    kind = field.kind
    if kind is FieldKind.EMAIL and not (_EMAIL.fullmatch(text) and parseaddr(text)[1] == text):
        raise refuse(f"must be an email address such as name@example.com, got {shown(text)}")
    if kind is FieldKind.URI and not _is_uri(text):
        raise refuse(f"must be a URL such as https://example.com/, got {shown(text)}")
    if kind is FieldKind.DATE:
        try:
            if not _DATE.fullmatch(text):
                raise ValueError
            return date.fromisoformat(text).isoformat()
        except ValueError:
            raise refuse(f"must be a date as YYYY-MM-DD, got {shown(text)}") from None
    if kind is FieldKind.DATE_TIME:
        try:
            if not _DATE_TIME.fullmatch(text):
                raise ValueError
            return datetime.fromisoformat(text.replace("z", "Z")).isoformat()
        except ValueError:
            raise refuse(
                f"must be a date and time with its offset, such as 2026-12-07T09:30:00+01:00, "
                f"got {shown(text)}"
            ) from None
    return text


def _is_uri(text: str) -> bool:
    if any(c.isspace() for c in text):
        return False
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    return bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", parts.scheme)) and bool(
        parts.netloc or parts.path
    )


def finite(value: float) -> float | None:
    """`value` (a JSON number, an int of any size) as a finite float, or None."""
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _checked_number(field: FormField, value: float, refuse: Any) -> float:
    low, high = field.minimum, field.maximum
    if low is not None and (value <= low if field.above_minimum else value < low):
        raise refuse(f"must be {low_words(field, low)}, got {number_text(value)}")
    if high is not None and (value >= high if field.below_maximum else value > high):
        raise refuse(f"must be {high_words(field, high)}, got {number_text(value)}")
    return value


def _checked_choices(field: FormField, values: list[str], refuse: Any) -> list[str]:
    known = [c.value for c in field.choices]
    for value in values:
        if value not in known:
            raise refuse(f"may hold only {_choice_list(field)}, got {shown(value)}")
    if len(set(values)) != len(values):
        raise refuse("must not name a choice twice")
    if field.min_items is not None and len(values) < field.min_items:
        raise refuse(f"must hold at least {field.min_items} choices, got {len(values)}")
    if field.max_items is not None and len(values) > field.max_items:
        raise refuse(f"must hold at most {field.max_items} choices, got {len(values)}")
    # In the form's order, so that the same choices are the same answer however they were picked.
    return [value for value in known if value in values]


def _choice_list(field: FormField) -> str:
    return ", ".join(shown(c.value) for c in field.choices)


def check_content(form: Form, content: Mapping[str, Any]) -> dict[str, Any]:
    """Every value of `content` checked against its field, each required field present; the
    typed values, or FormRefused naming each refused field."""
    problems: list[FieldProblem] = []
    checked: dict[str, Any] = {}
    for name in content:
        if form.field(name) is None:
            problems.append(FieldProblem(name, "is not a field of this form"))
    for field in form.fields:
        value = content.get(field.name)
        if value is None or (field.kind.is_text and value == "" and not field.required):
            if field.required:
                problems.append(FieldProblem(field.name, "is required"))
            continue
        try:
            checked[field.name] = check_value(field, value)
        except FormRefused as refused:
            problems += refused.problems
    if problems:
        raise FormRefused(problems)
    return checked


def read_text(field: FormField, text: str) -> Any:
    """A value typed into a text input (a surface without a native input for the field's
    kind) as the field keeps it: "42" for an integer is 42, "yes" for a boolean is true, a
    choice's title or value is its value. FormRefused in words for the person who typed it."""

    def refuse(message: str) -> FormRefused:
        return FormRefused([FieldProblem(field.name, message)])

    stripped = text.strip()
    kind = field.kind
    if kind.is_text:
        return check_value(field, text if kind is FieldKind.TEXT else stripped)
    if kind.is_number:
        wanted = "a whole number" if kind is FieldKind.INTEGER else "a number"
        try:
            # Python reads "1_000" and "nan"; a person's number is digits, a sign and a point.
            if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", stripped):
                raise ValueError
            number = float(stripped)
        except ValueError:
            raise refuse(f"must be {wanted}, got {shown(text)}") from None
        if not math.isfinite(number):
            raise refuse(f"must be {wanted}, got {shown(text)}")
        if kind is FieldKind.INTEGER:
            # "4.0" is a whole number as people write it (a browser's number input sends it
            # as typed); digits alone are read exactly, however many.
            if re.fullmatch(r"[+-]?\d+", stripped):
                return check_value(field, int(stripped))
            if not number.is_integer():
                raise refuse(f"must be a whole number, got {shown(text)}")
            return check_value(field, int(number))
        return check_value(field, int(number) if number == int(number) else number)
    if kind is FieldKind.BOOLEAN:
        answer = _YES_NO.get(stripped.lower())
        if answer is None:
            raise refuse(f"must be yes or no, got {shown(text)}")
        return answer
    if kind is FieldKind.CHOICE:
        return check_value(field, _choice_value(field, text))
    parts = [p.strip() for p in stripped.split(",") if p.strip()]
    return check_value(field, [_choice_value(field, p) for p in parts])


def read_input(form: Form, values: Mapping[str, object]) -> dict[str, Any]:
    """What a surface's inputs gave (`core.intents.Fill.values`: texts from text inputs, bools,
    choice values, lists) read and checked against the form once: the typed content, or
    FormRefused naming each refused field. An empty text is a field left empty."""
    problems: list[FieldProblem] = []
    content: dict[str, Any] = {}
    for name, value in values.items():
        field = form.field(name)
        if field is None:
            problems.append(FieldProblem(name, "is not a field of this form"))
        elif isinstance(value, str) and (
            value == ""
            or (not value.strip() and field.kind not in (FieldKind.TEXT, FieldKind.CHOICE))
        ):
            continue
        elif isinstance(value, str) and field.kind is not FieldKind.CHOICES:
            try:
                content[name] = read_text(field, value)
            except FormRefused as refused:
                problems += refused.problems
        else:
            content[name] = value
    for field in form.fields:
        # What a surface gives for an input nobody touched is decided here, once for all.
        if field.name not in content and (untouched := field.untouched) is not None:
            content[field.name] = untouched
    try:
        checked = check_content(form, content)
    except FormRefused as refused:
        known = {p.name for p in problems}
        problems += [p for p in refused.problems if p.name not in known]
    if problems:
        raise FormRefused(problems)
    return checked


_YES_NO = {"yes": True, "y": True, "true": True, "no": False, "n": False, "false": False}


def _choice_value(field: FormField, text: str) -> str:
    """The choice `text` names: its value or title as given, else as typed with the spaces
    around it left out (a value may begin or end with a space)."""
    for wanted in (text, text.strip()):
        for choice in field.choices:
            if wanted in (choice.value, choice.title):
                return choice.value
    return text.strip()
