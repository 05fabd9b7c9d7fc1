"""A typed form read from what an agent sends, as strictly as questions are read: `parse_form`
names every problem, where and why, in words an agent's model can act on; `as_uri` writes a
URL-mode form's link as a URI."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from askbridge.core.errors import FORM_ASK, InvalidQuestion, Problem
from askbridge.core.form_checks import FormRefused, check_value, finite
from askbridge.core.form_schema import (
    MAX_CHOICE_TITLE_CHARS,
    MAX_CHOICE_VALUE_CHARS,
    MAX_CHOICES,
    MAX_DESCRIPTION_CHARS,
    MAX_FIELDS,
    MAX_MESSAGE_CHARS,
    MAX_NAME_CHARS,
    MAX_SAFE_INTEGER,
    MAX_TEXT_CHARS,
    MAX_TITLE_CHARS,
    Choice,
    FieldKind,
    Form,
    FormField,
)
from askbridge.core.form_values import number_text
from askbridge.core.problems import reordering_problem, shown, text_problem, web_url_problem

_NAME = re.compile(r"[^\x00-\x1f\x7f]{1,64}")

# Keywords that only annotate; a schema may carry them and they change nothing.
_ANNOTATIONS = frozenset({"$comment", "examples", "deprecated", "readOnly", "writeOnly", "$id"})

# What a multi-choice's `items` holds: its choices, as an enum or a list of const and title.
_ITEMS_KEYWORDS = frozenset({"type", "enum", "enumNames", "oneOf", "anyOf"})

_FORMATS = {
    "email": FieldKind.EMAIL,
    "uri": FieldKind.URI,
    "date": FieldKind.DATE,
    "date-time": FieldKind.DATE_TIME,
}


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
                f"must hold 1-{MAX_FIELDS} fields, got {count}",
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
        if fmt is not None and (not isinstance(fmt, str) or fmt not in _FORMATS):
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
        allowed |= {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
        integer = kind == "integer"
        low_n, above = _bounds(raw, "minimum", where, found, integer, upper=False)
        high_n, below = _bounds(raw, "maximum", where, found, integer, upper=True)
        if low_n is not None and high_n is not None:
            strict = above or below
            if low_n > high_n or (strict and low_n == high_n):
                found.append(
                    Problem(
                        f"{where}.{'exclusiveMinimum' if above else 'minimum'}",
                        f"must {'be below' if strict else 'not exceed'} "
                        f"{'exclusiveMaximum' if below else 'maximum'} ({number_text(high_n)})",
                    )
                )
        field = FormField(
            kind=FieldKind.INTEGER if integer else FieldKind.NUMBER,
            minimum=low_n,
            maximum=high_n,
            above_minimum=above,
            below_maximum=below,
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
    # A default of null (JSON Schema allows it; SDKs write it for an optional field) is none.
    if field is not None and raw.get("default") is not None and not found:
        try:
            field = field.model_copy(update={"default": check_value(field, raw["default"])})
        except FormRefused as refused:
            found.append(Problem(f"{where}.default", refused.problems[0].message))
    problems += found
    return None if found else field


def _read_choices(
    raw: Mapping[str, Any], where: str, problems: list[Problem], *, multi: bool = False
) -> tuple[Choice, ...]:
    # Each list of choices would be read and the others dropped: a schema names one.
    lists = [key for key in ("enum", "oneOf", "anyOf") if key in raw]
    if len(lists) > 1:
        problems.append(
            Problem(where, f"must list its choices once, in {' or '.join(lists)}, got both")
        )
        return ()
    if multi and (unknown := set(raw) - _ITEMS_KEYWORDS - _ANNOTATIONS):
        problems.append(
            Problem(
                where,
                f"has keywords askbridge cannot enforce for a choice: {sorted(unknown)} "
                "(MCP's elicitation schema does not have them)",
            )
        )
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
        if "enumNames" in raw:
            problems.append(
                Problem(
                    f"{where}.enumNames",
                    f"titles an enum; each of {key}'s choices has its own title",
                )
            )
        for index, option in enumerate(titled):
            if extra := set(option) - {"const", "title"} - _ANNOTATIONS:
                problems.append(
                    Problem(
                        f"{where}.{key}[{index}]",
                        f"must hold only const and title, got also {sorted(extra)}",
                    )
                )
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
    """A form's message, a field's title and description, a choice: what people read."""
    found = []
    if (problem := text_problem(text, allow_nul=False) or reordering_problem(text)) is not None:
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


def _bounds(
    raw: Mapping[str, Any],
    key: str,
    where: str,
    problems: list[Problem],
    integer: bool,
    *,
    upper: bool,
) -> tuple[float | None, bool]:
    """A field's lower or upper bound (`key` is minimum or maximum) and whether values stay
    off it: the tighter of `key` and its exclusive form (JSON Schema 2020-12's number, which
    pydantic and the MCP SDK write for `Field(gt=0)`). An integer's exclusive bound is the
    whole number next to it, inclusive, which every surface's input can hold."""
    strict_key = "exclusive" + key.capitalize()
    # An integer's bounds are safe integers, and so is the whole number next to an exclusive
    # one (2**53 is one past the last). A number's may be any finite number.
    most = MAX_SAFE_INTEGER if integer else math.inf
    bound = _bound(raw, key, where, problems, integer, most)
    strict = _bound(raw, strict_key, where, problems, integer, most + 1)
    if strict is not None and integer:
        whole = strict - 1 if upper else strict + 1
        if abs(whole) > MAX_SAFE_INTEGER:
            problems.append(
                Problem(f"{where}.{strict_key}", "leaves no whole number within ±(2**53 - 1)")
            )
            return None, False
        return _tighter(bound, whole, upper), False
    if strict is None:
        return bound, False
    if bound is None or _tighter(bound, strict, upper) == strict:
        return strict, True
    return bound, False


def _tighter(bound: float | None, other: float, upper: bool) -> float:
    if bound is None:
        return other
    return min(bound, other) if upper else max(bound, other)


def _bound(
    raw: Mapping[str, Any],
    key: str,
    where: str,
    problems: list[Problem],
    integer: bool,
    most: float,
) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    number = None if isinstance(value, bool) or not isinstance(value, int | float) else value
    bound = None if number is None else finite(number)
    # The bound as sent, not its float, held to `most`: 2**53 + 1 is no float.
    if bound is None or abs(value) > most or (integer and bound != int(bound)):
        if not integer:
            wanted = "a finite number"
        else:
            limit = "2**53 - 1" if most == MAX_SAFE_INTEGER else "2**53"
            wanted = f"a whole number between -({limit}) and {limit}"
        problems.append(Problem(f"{where}.{key}", f"must be {wanted}, got {shown(value)}"))
        return None
    return bound


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
