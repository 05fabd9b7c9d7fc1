"""Typed forms: what a person is asked to fill in, in MCP elicitation's restricted JSON Schema.

A form is a `message` and a flat object schema (`requested_schema`, MCP's `requestedSchema`):
strings (with lengths and the formats email, uri, date, date-time), numbers and integers with
bounds, booleans, single-choice enums (`enum` + `enumNames`, or `oneOf` of `const`/`title`) and
multi-choice arrays of such an enum, plus `required`. `parse_form` reads one as strictly as
questions are read, in words an agent's model can act on; `check_content` and `read_text`
check what a person or a deadline gives, and keep its types.

The engine keeps a form's values the way it keeps answers, as text keyed by field name: each
value is its RFC 8785 canonical JSON (`encode`), so votes agree exactly when every value is
equal, and `decode` gives the typed values back losslessly.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from email.utils import parseaddr
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from askbridge.core.errors import FORM_ASK, InvalidQuestion, Problem
from askbridge.core.form_schema import (
    MAX_CHOICE_TITLE_CHARS as MAX_CHOICE_TITLE_CHARS,
)
from askbridge.core.form_schema import (
    MAX_CHOICE_VALUE_CHARS as MAX_CHOICE_VALUE_CHARS,
)
from askbridge.core.form_schema import MAX_CHOICES as MAX_CHOICES
from askbridge.core.form_schema import MAX_DESCRIPTION_CHARS as MAX_DESCRIPTION_CHARS
from askbridge.core.form_schema import MAX_FIELDS as MAX_FIELDS
from askbridge.core.form_schema import MAX_MESSAGE_CHARS as MAX_MESSAGE_CHARS
from askbridge.core.form_schema import MAX_NAME_CHARS as MAX_NAME_CHARS
from askbridge.core.form_schema import MAX_SAFE_INTEGER as MAX_SAFE_INTEGER
from askbridge.core.form_schema import MAX_TEXT_CHARS as MAX_TEXT_CHARS
from askbridge.core.form_schema import MAX_TITLE_CHARS as MAX_TITLE_CHARS
from askbridge.core.form_schema import Choice as Choice
from askbridge.core.form_schema import FieldKind as FieldKind
from askbridge.core.form_schema import Form as Form
from askbridge.core.form_schema import FormField as FormField
from askbridge.core.form_values import decode as decode
from askbridge.core.form_values import encode as encode
from askbridge.core.form_values import filled_in as filled_in
from askbridge.core.form_values import shown_value as shown_value
from askbridge.core.problems import shown, text_problem, web_url_problem

_NAME = re.compile(r"[^\x00-\x1f\x7f]{1,64}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?([Zz]|[+-]\d{2}:\d{2})"
)
_EMAIL = re.compile(r"[^@\s<>()\[\],;:\"]+@[^@\s<>()\[\],;:\"]+\.[^@\s<>()\[\],;:\".]+")

# Keywords that only annotate; a schema may carry them and they change nothing.
_ANNOTATIONS = frozenset({"$comment", "examples", "deprecated", "readOnly", "writeOnly", "$id"})

_FORMATS = {
    "email": FieldKind.EMAIL,
    "uri": FieldKind.URI,
    "date": FieldKind.DATE,
    "date-time": FieldKind.DATE_TIME,
}


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


# Reading a form -------------------------------------------------------------------------------


def parse_form(raw: Any, where: str = "form") -> Form:
    """The `form` of an ask, checked: InvalidQuestion names every problem, where and why."""
    problems: list[Problem] = []
    form = _read_form(raw, where, problems)
    if problems or form is None:
        raise InvalidQuestion(problems or [Problem(where, "must be a form")], FORM_ASK)
    return form


def _read_form(raw: Any, where: str, problems: list[Problem]) -> Form | None:
    if not isinstance(raw, Mapping):
        problems.append(
            Problem(
                where,
                'must be an object {"message": text, "requested_schema": {"type": "object", '
                f'"properties": {{...}}, "required": [...]}}}}, got {shown(raw)}',
            )
        )
        return None
    message = raw.get("message")
    if not isinstance(message, str) or not message.strip():
        problems.append(
            Problem(f"{where}.message", f"must be a non-empty text, got {shown(message)}")
        )
        message = ""
    else:
        problems += _text_problems(f"{where}.message", message, MAX_MESSAGE_CHARS)
    url = raw.get("url")
    schema = raw.get("requested_schema", raw.get("requestedSchema"))
    if url is not None:
        if (problem := web_url_problem(url)) is not None:
            problems.append(Problem(f"{where}.url", problem))
        if schema is not None:
            problems.append(
                Problem(where, "must have either a url (a link to open) or a requested_schema")
            )
        return Form(message=message, url=url if isinstance(url, str) else None)
    fields = _read_schema(schema, f"{where}.requested_schema", problems)
    if fields and (problem := _json_problem(schema)) is not None:
        # The schema is kept and given back as it came: annotations too must be plain JSON.
        problems.append(Problem(f"{where}.requested_schema", problem))
    return Form(message=message, fields=fields, schema_=dict(schema) if fields else None)


def _json_problem(value: Any) -> str | None:
    """Why `value` cannot be kept and sent as JSON text (a lone surrogate, NaN), or None."""
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            "must be valid Unicode text throughout, got a lone surrogate "
            f"{error.object[error.start]!r} (half of a UTF-16 pair; send the whole character)"
        )
    except (ValueError, TypeError) as error:
        return f"must be plain JSON throughout: {error}"
    return None


def _read_schema(raw: Any, where: str, problems: list[Problem]) -> tuple[FormField, ...]:
    if not isinstance(raw, Mapping) or raw.get("type") != "object":
        problems.append(
            Problem(
                where,
                'must be a flat object schema {"type": "object", "properties": {name: '
                f'property}}, "required": [names]}}, got {shown(raw)}',
            )
        )
        return ()
    properties = raw.get("properties")
    if not isinstance(properties, Mapping) or not 1 <= len(properties) <= MAX_FIELDS:
        count = len(properties) if isinstance(properties, Mapping) else shown(properties)
        problems.append(
            Problem(
                f"{where}.properties",
                f"must hold 1-{MAX_FIELDS} fields (a chat modal holds {MAX_FIELDS} inputs), "
                f"got {count}",
            )
        )
        return ()
    required = raw.get("required", [])
    if not isinstance(required, list) or not all(isinstance(n, str) for n in required):
        problems.append(
            Problem(f"{where}.required", f"must be a list of field names, got {shown(required)}")
        )
        required = []
    for name in required:
        if name not in properties:
            problems.append(
                Problem(f"{where}.required", f"names {shown(name)}, which is not a property")
            )
    unknown = set(raw) - {"type", "properties", "required", "title", "description", "$schema"}
    unknown -= _ANNOTATIONS
    if unknown:
        problems.append(
            Problem(where, f"has keywords outside MCP's elicitation schema: {sorted(unknown)}")
        )
    fields = []
    for name, prop in properties.items():
        at = f"{where}.properties.{name}"
        if not isinstance(name, str) or not _NAME.fullmatch(name) or text_problem(name):
            problems.append(
                Problem(at, f"a field name must be 1-{MAX_NAME_CHARS} printable characters")
            )
            continue
        field = _read_field(name, prop, name in required, at, problems)
        if field is not None:
            fields.append(field)
    return tuple(fields)


def _read_field(
    name: str, raw: Any, required: bool, where: str, problems: list[Problem]
) -> FormField | None:
    if not isinstance(raw, Mapping):
        problems.append(Problem(where, f"must be a property schema object, got {shown(raw)}"))
        return None
    found: list[Problem] = []
    title = _optional_text(raw, "title", where, MAX_TITLE_CHARS, found) or name
    description = _optional_text(raw, "description", where, MAX_DESCRIPTION_CHARS, found) or ""
    common = {"name": name, "title": title, "description": description, "required": required}
    kind = raw.get("type")
    allowed = {"type", "title", "description", "default"}
    field: FormField | None = None
    if kind == "string" and ("enum" in raw or "oneOf" in raw):
        allowed |= {"enum", "enumNames", "oneOf"}
        field = FormField(kind=FieldKind.CHOICE, choices=_read_choices(raw, where, found), **common)
    elif kind == "string":
        allowed |= {"minLength", "maxLength", "format"}
        fmt = raw.get("format")
        if fmt is not None and fmt not in _FORMATS:
            found.append(
                Problem(
                    f"{where}.format",
                    f"must be one of {', '.join(_FORMATS)}, got {shown(fmt)}",
                )
            )
        low = _count(raw, "minLength", where, found, 0, MAX_TEXT_CHARS)
        high = _count(raw, "maxLength", where, found, 1, MAX_TEXT_CHARS)
        if low is not None and high is not None and low > high:
            found.append(Problem(f"{where}.minLength", f"must not exceed maxLength ({high})"))
        field = FormField(
            kind=_FORMATS.get(fmt, FieldKind.TEXT) if isinstance(fmt, str) else FieldKind.TEXT,
            min_length=low,
            max_length=MAX_TEXT_CHARS if high is None else high,
            **common,
        )
    elif kind in ("number", "integer"):
        allowed |= {"minimum", "maximum"}
        integer = kind == "integer"
        low_n = _bound(raw, "minimum", where, found, integer)
        high_n = _bound(raw, "maximum", where, found, integer)
        if low_n is not None and high_n is not None and low_n > high_n:
            found.append(Problem(f"{where}.minimum", f"must not exceed maximum ({high_n:g})"))
        field = FormField(
            kind=FieldKind.INTEGER if integer else FieldKind.NUMBER,
            minimum=low_n,
            maximum=high_n,
            **common,
        )
    elif kind == "boolean":
        field = FormField(kind=FieldKind.BOOLEAN, **common)
    elif kind == "array":
        allowed |= {"items", "minItems", "maxItems", "uniqueItems"}
        items = raw.get("items")
        if not isinstance(items, Mapping):
            found.append(Problem(f"{where}.items", f"must be an enum of texts, got {shown(items)}"))
            choices: tuple[Choice, ...] = ()
        else:
            choices = _read_choices(items, f"{where}.items", found, multi=True)
        most = len(choices) or MAX_CHOICES
        low = _count(raw, "minItems", where, found, 0, most)
        high = _count(raw, "maxItems", where, found, 1, most)
        if low is not None and high is not None and low > high:
            found.append(Problem(f"{where}.minItems", f"must not exceed maxItems ({high})"))
        field = FormField(
            kind=FieldKind.CHOICES, choices=choices, min_items=low, max_items=high, **common
        )
    else:
        found.append(
            Problem(
                f"{where}.type",
                "must be string, number, integer, boolean, or array (of an enum); nested "
                f"objects are not part of MCP's elicitation schema, got {shown(kind)}",
            )
        )
    unknown = set(raw) - allowed - _ANNOTATIONS
    if unknown and field is not None:
        found.append(
            Problem(
                where,
                f"has keywords askbridge cannot enforce for a {kind} field: {sorted(unknown)} "
                "(MCP's elicitation schema does not have them)",
            )
        )
    if field is not None and "default" in raw and not found:
        try:
            field = field.model_copy(update={"default": check_value(field, raw["default"])})
        except FormRefused as refused:
            found.append(Problem(f"{where}.default", refused.problems[0].message))
    problems += found
    return None if found else field


def _read_choices(
    raw: Mapping[str, Any], where: str, problems: list[Problem], *, multi: bool = False
) -> tuple[Choice, ...]:
    titled = raw.get("oneOf", raw.get("anyOf"))
    pairs: list[tuple[Any, Any]]
    if titled is not None:
        key = "anyOf" if "anyOf" in raw else "oneOf"
        if not isinstance(titled, list) or not all(isinstance(o, Mapping) for o in titled):
            problems.append(
                Problem(
                    f"{where}.{key}", f'must be a list of {{"const", "title"}}, got {shown(titled)}'
                )
            )
            return ()
        pairs = [(o.get("const"), o.get("title", o.get("const"))) for o in titled]
        at = f"{where}.{key}"
    else:
        values = raw.get("enum")
        names = raw.get("enumNames")
        if not isinstance(values, list):
            problems.append(
                Problem(f"{where}.enum", f"must be a list of texts, got {shown(values)}")
            )
            return ()
        if names is not None and (not isinstance(names, list) or len(names) != len(values)):
            problems.append(
                Problem(
                    f"{where}.enumNames", f"must give one title per enum value, got {shown(names)}"
                )
            )
            names = None
        pairs = list(zip(values, names if names is not None else values, strict=True))
        at = f"{where}.enum"
    if multi and raw.get("type", "string") != "string":
        problems.append(Problem(f"{where}.type", "must be string (a multi-choice holds texts)"))
    if not 1 <= len(pairs) <= MAX_CHOICES:
        problems.append(Problem(at, f"must hold 1-{MAX_CHOICES} choices, got {len(pairs)}"))
    choices: list[Choice] = []
    for index, (value, title) in enumerate(pairs):
        if not isinstance(value, str) or not 1 <= len(value) <= MAX_CHOICE_VALUE_CHARS:
            problems.append(
                Problem(
                    f"{at}[{index}]",
                    f"a choice's value must be a text of 1-{MAX_CHOICE_VALUE_CHARS} characters, "
                    f"got {shown(value)}",
                )
            )
            continue
        if not isinstance(title, str) or not title.strip():
            problems.append(
                Problem(f"{at}[{index}]", f"a choice's title must be a text, got {shown(title)}")
            )
            continue
        problems += _text_problems(f"{at}[{index}]", value + title, None)
        if len(title) > MAX_CHOICE_TITLE_CHARS:
            problems.append(
                Problem(
                    f"{at}[{index}]",
                    f"a choice's title must be at most {MAX_CHOICE_TITLE_CHARS} characters, "
                    f"got {len(title)}",
                )
            )
        if any(c.value == value for c in choices):
            problems.append(Problem(f"{at}[{index}]", f"repeats the choice {shown(value)}"))
        choices.append(Choice(value=value, title=title))
    return tuple(choices)


def _optional_text(
    raw: Mapping[str, Any], key: str, where: str, most: int, problems: list[Problem]
) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        problems.append(Problem(f"{where}.{key}", f"must be a text, got {shown(value)}"))
        return None
    problems += _text_problems(f"{where}.{key}", value, most)
    return value


def _text_problems(where: str, text: str, most: int | None) -> list[Problem]:
    found = []
    if (problem := text_problem(text, allow_nul=False)) is not None:
        found.append(Problem(where, problem))
    if most is not None and len(text) > most:
        found.append(Problem(where, f"must be at most {most} characters, got {len(text)}"))
    return found


def _count(
    raw: Mapping[str, Any], key: str, where: str, problems: list[Problem], low: int, high: int
) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        problems.append(
            Problem(
                f"{where}.{key}", f"must be a whole number from {low} to {high}, got {shown(value)}"
            )
        )
        return None
    return value


def _bound(
    raw: Mapping[str, Any], key: str, where: str, problems: list[Problem], integer: bool
) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or abs(value) > MAX_SAFE_INTEGER
        or (integer and value != int(value))
    ):
        wanted = "a whole number" if integer else "a number"
        problems.append(
            Problem(
                f"{where}.{key}",
                f"must be {wanted} between -2**53 and 2**53, got {shown(value)}",
            )
        )
        return None
    return float(value)


def as_uri(url: str) -> str:
    """A URL-mode form's link (checked by `parse_form`) as a URI: each character a URI cannot
    hold (`<`, `|`, a letter past ASCII, a second `#`...) percent-encoded as a browser sends
    it, so that it opens the same page. A surface that links it where only a URI goes (a
    Teams button, a Discord `<link>`) would otherwise be refused, or link elsewhere."""
    parts = urlsplit(url)

    def encoded(part: str, safe: str) -> str:
        # A `%` that starts no escape is a character of its own.
        return quote(re.sub(r"%(?![0-9A-Fa-f]{2})", "%25", part), safe=safe + "%")

    return urlunsplit(
        (
            parts.scheme,
            encoded(parts.netloc, _SUB_DELIMS + ":@[]"),
            encoded(parts.path, _SUB_DELIMS + ":@/"),
            encoded(parts.query, _SUB_DELIMS + ":@/?"),
            encoded(parts.fragment, _SUB_DELIMS + ":@/?"),
        )
    )


_SUB_DELIMS = "!$&'()*+,;="


# Checking values ------------------------------------------------------------------------------


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
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise refuse(f"must be a number, got {shown(value)}")
        if kind is FieldKind.INTEGER:
            if value != int(value):
                raise refuse(f"must be a whole number, got {value:g}")
            value = int(value)
        if abs(value) > MAX_SAFE_INTEGER:
            raise refuse("is too large")
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
    if (problem := text_problem(text, allow_nul=False)) is not None:
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


def _checked_number(field: FormField, value: float, refuse: Any) -> float:
    if field.minimum is not None and value < field.minimum:
        raise refuse(f"must be at least {field.minimum:g}, got {value:g}")
    if field.maximum is not None and value > field.maximum:
        raise refuse(f"must be at most {field.maximum:g}, got {value:g}")
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
