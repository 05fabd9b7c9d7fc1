"""The rules of a typed form read on their own (`core.forms`): what a schema may hold, and how a
value given by an agent, a deadline or a person's input is checked and kept typed."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server.elicitation import render_elicitation_schema
from pydantic import BaseModel, Field

from askbridge.core.errors import InvalidQuestion
from askbridge.core.forms import (
    FieldKind,
    Form,
    FormRefused,
    check_content,
    decode,
    encode,
    parse_form,
    read_input,
    read_text,
)


def form(properties: dict[str, Any], required: list[str] | None = None) -> Form:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required is not None:
        schema["required"] = required
    return parse_form({"message": "Details", "requestedSchema": schema})


def problems(raw: Any) -> list[str]:
    with pytest.raises(InvalidQuestion) as refused:
        parse_form(raw)
    return [str(p) for p in refused.value.problems]


def test_each_kind_of_field_is_read_with_its_rules() -> None:
    fields = form(
        {
            "ticket": {"type": "string", "title": "Ticket", "minLength": 3, "maxLength": 20},
            "mail": {"type": "string", "format": "email"},
            "count": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
            "ok": {"type": "boolean", "default": False},
            "env": {"type": "string", "enum": ["prod", "stg"], "enumNames": ["Prod", "Staging"]},
        },
        required=["ticket"],
    ).fields
    assert [f.kind for f in fields] == [
        FieldKind.TEXT,
        FieldKind.EMAIL,
        FieldKind.INTEGER,
        FieldKind.BOOLEAN,
        FieldKind.CHOICE,
    ]
    assert fields[0].title == "Ticket"
    assert fields[0].required
    assert fields[1].title == "mail"
    assert (fields[2].minimum, fields[2].maximum, fields[2].default) == (1, 10, 3)
    assert [c.title for c in fields[4].choices] == ["Prod", "Staging"]


def test_a_schema_outside_the_subset_is_refused_naming_each_problem() -> None:
    found = problems(
        {
            "message": "",
            "requested_schema": {
                "type": "object",
                "properties": {
                    "a": {"type": "object"},
                    "b": {"type": "string", "pattern": "x"},
                    "c": {"type": "integer", "minimum": 5, "maximum": 1},
                    "d": {"type": "array", "items": {"enum": ["a", "a"]}},
                    "e": {"type": "string", "default": 5},
                },
                "required": ["zz"],
            },
        }
    )
    assert any(p.startswith("form.message: must be a non-empty text") for p in found)
    assert any("required: names 'zz'" in p for p in found)
    assert any("properties.a.type" in p and "nested objects" in p for p in found)
    assert any("properties.b" in p and "'pattern'" in p for p in found)
    assert any("properties.c.minimum: must not exceed maximum" in p for p in found)
    assert any("properties.d.items.enum[1]: repeats the choice 'a'" in p for p in found)
    assert any("properties.e.default: must be a text" in p for p in found)


def test_nothing_a_choice_schema_says_is_left_unread() -> None:
    """A keyword inside a multi-choice's items, a second list of choices and a key beside a
    choice's const and title would each be dropped without a word: each is refused, named."""
    titled = [{"const": "x", "title": "X"}]
    found = problems(
        {
            "message": "Pick",
            "requested_schema": {
                "type": "object",
                "properties": {
                    "a": {"type": "array", "items": {"enum": ["x"], "pattern": "^x"}},
                    "b": {"type": "array", "items": {"enum": ["y"], "anyOf": titled}},
                    "c": {"type": "string", "enum": ["y"], "oneOf": titled},
                    "d": {"type": "string", "enumNames": ["Y"], "oneOf": titled},
                    "e": {"type": "string", "oneOf": [{**titled[0], "description": "x"}]},
                },
            },
        }
    )
    where = "form.requested_schema.properties"
    assert found == [
        f"{where}.a.items: has keywords askbridge cannot enforce for a choice: ['pattern'] "
        "(MCP's elicitation schema does not have them)",
        f"{where}.b.items: must list its choices once, in enum or anyOf, got both",
        f"{where}.c: must list its choices once, in enum or oneOf, got both",
        f"{where}.d.enumNames: titles an enum; each of oneOf's choices has its own title",
        f"{where}.e.oneOf[0]: must hold only const and title, got also ['description']",
    ]


def test_a_form_holds_at_most_ten_fields() -> None:
    ten = {f"f{i}": {"type": "string"} for i in range(10)}
    assert len(form(ten).fields) == 10
    eleven = {f"f{i}": {"type": "string"} for i in range(11)}
    found = problems({"message": "m", "requested_schema": {"type": "object", "properties": eleven}})
    where, why = found[0].split(": ", 1)
    assert len(found) == 1
    assert where == "form.requested_schema.properties"
    assert why == "must hold 1-10 fields, got 11"


def test_values_keep_their_types_and_come_back_equal() -> None:
    details = form(
        {
            "count": {"type": "integer", "minimum": 1, "maximum": 10},
            "ratio": {"type": "number"},
            "ok": {"type": "boolean"},
            "day": {"type": "string", "format": "date"},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
        }
    )
    content = check_content(
        details, {"count": 4, "ratio": 1.5, "ok": True, "day": "2026-12-24", "tags": ["c", "a"]}
    )
    # Choices in the form's order: the same picks are the same answer however they were made.
    assert content == {
        "count": 4,
        "ratio": 1.5,
        "ok": True,
        "day": "2026-12-24",
        "tags": ["a", "c"],
    }
    assert decode(encode(content)) == content
    assert encode({"x": 1.0}) == encode({"x": 1})


def test_what_a_person_typed_is_read_as_the_field_keeps_it() -> None:
    details = form(
        {
            "count": {"type": "integer", "minimum": 1, "maximum": 10},
            "ok": {"type": "boolean"},
            "env": {"type": "string", "oneOf": [{"const": "prod", "title": "Production"}]},
            "when": {"type": "string", "format": "date-time"},
        }
    )
    count, ok, env, when = details.fields
    assert read_text(count, " 7 ") == 7
    assert read_text(count, "4.0") == 4
    assert read_text(ok, "Yes") is True
    assert read_text(env, "Production") == "prod"
    assert read_text(when, "2026-12-07T09:30:00Z") == "2026-12-07T09:30:00+00:00"
    for typed in ("7.5", "1_0", "nan", "1e400", "seven"):
        with pytest.raises(FormRefused, match="whole number"):
            read_text(count, typed)
    with pytest.raises(FormRefused, match="at most 10"):
        read_text(count, "42")
    with pytest.raises(FormRefused, match="offset"):
        read_text(when, "2026-12-07T09:30")


def test_a_choice_whose_value_has_spaces_around_it_is_that_choice() -> None:
    details = form({"pick": {"type": "string", "enum": [" padded ", "plain"]}})
    assert read_input(details, {"pick": " padded "}) == {"pick": " padded "}
    assert read_input(details, {"pick": " plain "}) == {"pick": "plain"}


def test_every_refused_field_is_named_and_nothing_is_taken() -> None:
    details = form(
        {
            "ticket": {"type": "string", "minLength": 3},
            "mail": {"type": "string", "format": "email"},
            "count": {"type": "integer", "maximum": 10},
        },
        required=["ticket", "count"],
    )
    with pytest.raises(FormRefused) as refused:
        read_input(details, {"ticket": "A", "mail": "x", "zzz": "1"})
    assert refused.value.by_field() == {
        "zzz": "is not a field of this form",
        "ticket": "must be at least 3 characters, got 1",
        "mail": "must be an email address such as name@example.com, got 'x'",
        "count": "is required",
    }


def test_a_nul_is_refused_in_a_forms_texts_and_values_where_it_is() -> None:
    field = {"type": "string", "title": "Ti\x00tle"}
    assert problems(
        {"message": "a\x00b", "requestedSchema": {"type": "object", "properties": {"x": field}}}
    ) == [
        "form.message: must not contain NUL characters, got one at character 1",
        "form.requested_schema.properties.x.title: must not contain NUL characters, got one at "
        "character 2",
    ]
    with pytest.raises(FormRefused) as refused:
        read_input(form({"note": {"type": "string"}}), {"note": "ok\x00"})
    assert refused.value.by_field() == {
        "note": "must not contain NUL characters, got one at character 2"
    }


def test_a_forms_texts_must_read_as_the_agent_wrote_them() -> None:
    fields = {
        "x": {"type": "string", "title": "Ap\u202edevorp", "description": "\u2067n\u2069"},
        "y": {"type": "string", "oneOf": [{"const": "a", "title": "No \u202eseY"}]},
    }
    reorders = "it reorders what people read; write the text in the order it is read"
    assert problems(
        {"message": "Ship \u202d?", "requestedSchema": {"type": "object", "properties": fields}}
    ) == [
        f"form.message: must not contain LEFT-TO-RIGHT OVERRIDE (U+202D, at character 5): "
        f"{reorders}",
        "form.requested_schema.properties.x.title: must not contain RIGHT-TO-LEFT OVERRIDE "
        f"(U+202E, at character 2): {reorders}",
        "form.requested_schema.properties.x.description: must not contain RIGHT-TO-LEFT ISOLATE "
        f"(U+2067, at character 0): {reorders}",
        "form.requested_schema.properties.y.oneOf[0]: must not contain RIGHT-TO-LEFT OVERRIDE "
        f"(U+202E, at character 4): {reorders}",
    ]

    with pytest.raises(FormRefused) as refused:
        read_input(form({"note": {"type": "string"}}), {"note": "ok \u202eon"})
    assert refused.value.by_field() == {
        "note": "must not contain RIGHT-TO-LEFT OVERRIDE (U+202E, at character 3): it reorders "
        "what people read; write the text in the order it is read"
    }


def test_a_default_of_null_is_no_default() -> None:
    """JSON Schema lets `default` be null, and SDKs write it for an optional field: no default."""
    details = form(
        {
            "note": {"type": "string", "default": None},
            "count": {"type": "integer", "default": None},
            "ok": {"type": "boolean", "default": None},
            "env": {"type": "string", "enum": ["prod"], "default": None},
        }
    )
    assert [f.default for f in details.fields] == [None] * 4
    assert details.defaults() == {}


def test_what_the_mcp_sdk_sends_for_optional_fields_is_a_form() -> None:
    class Details(BaseModel):
        note: str | None = None
        count: int | None = None
        ok: bool | None = None
        reason: str | None = Field(default=None, description="Why")

    schema = render_elicitation_schema(Details)
    fields = parse_form({"message": "Details", "requested_schema": schema}).fields
    assert [(f.name, f.required, f.default) for f in fields] == [
        ("note", False, None),
        ("count", False, None),
        ("ok", False, None),
        ("reason", False, None),
    ]
