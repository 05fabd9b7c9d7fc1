"""A typed form (issue 38) as a Discord modal, without a network: which input each field gets,
within Discord's limits (the strict emulator's), prefilled with defaults, and a submission read
back as `Fill.values` that `core.forms.read_input` types."""

from __future__ import annotations

from typing import Any

import pytest

from askbridge.adapters.discord import forms
from askbridge.adapters.discord.ids import BadCustomId
from askbridge.core.forms import FormRefused, parse_form, read_input
from tests.emulators.discord import validate_modal
from tests.emulators.discord.modals import Given, Modal, shown, submission

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email", "title": "Your email"},
        "count": {
            "type": "integer",
            "title": "How many",
            "minimum": 1,
            "maximum": 10,
            "default": 3,
        },
        "urgent": {"type": "boolean", "title": "Urgent", "default": False},
        "env": {
            "type": "string",
            "title": "Environment",
            "description": "Where to deploy",
            "oneOf": [{"const": "prod", "title": "Production"}, {"const": "dev", "title": "Dev"}],
        },
        "tags": {
            "type": "array",
            "title": "Tags",
            "items": {"type": "string", "enum": ["a", "b", "c"], "enumNames": ["A", "B", "C"]},
            "minItems": 1,
            "maxItems": 2,
        },
    },
    "required": ["email", "count", "env"],
}
FORM = parse_form({"message": "Tell us about the deploy", "requested_schema": SCHEMA})


def modal(form: Any = FORM, values: Any = None) -> tuple[dict[str, Any], Modal]:
    data = forms.fill_form("ask_t", form, values).to_dict()
    assert validate_modal(data) is None
    return data, shown(data)


def given(form: Any, shown_modal: Modal, values: dict[str, Given]) -> dict[str, object]:
    data = submission(shown_modal, values)
    return forms.filled(form, "ask_t", {"custom_id": data["custom_id"], **data})


def test_each_field_gets_its_input_within_discords_limits() -> None:
    data, form = modal()
    assert (data["custom_id"], form.title) == ("ab:ask_t:i", "Tell us about the deploy")
    assert form.labels == ["Your email", "How many", "Urgent", "Environment", "Tags"]
    email, count = form.fields
    assert (email.custom_id, email.style, email.required, email.value) == (
        "ab:ask_t:v:0",
        1,
        True,
        "",
    )
    assert email.placeholder == "An email address, such as name@example.com"
    assert (count.value, count.placeholder) == ("3", "A whole number from 1 to 10")
    urgent, env, tags = form.selects
    assert [(o.label, o.value) for o in urgent.options] == [("Yes", "true"), ("No", "false")]
    assert (urgent.chosen, urgent.required, urgent.min_values) == (["No"], False, 1)
    assert (env.description, env.chosen, env.required) == ("Where to deploy", [], True)
    assert [(o.label, o.value) for o in env.options] == [("Production", "prod"), ("Dev", "dev")]
    assert (tags.min_values, tags.max_values, tags.required) == (1, 2, False)
    assert tags.placeholder == "Choose 1 to 2"


def test_a_submission_reads_back_as_typed_values() -> None:
    _, form = modal()
    values = given(
        FORM,
        form,
        {"Your email": "ada@example.com", "Environment": ["Dev"], "Tags": ["C", "A"]},
    )
    assert values == {
        "email": "ada@example.com",
        "count": "3",
        "urgent": False,
        "env": "dev",
        "tags": ["c", "a"],
    }
    assert read_input(FORM, values) == {
        "email": "ada@example.com",
        "count": 3,
        "urgent": False,
        "env": "dev",
        "tags": ["a", "c"],
    }


def test_what_is_left_empty_is_left_out_and_a_bad_value_is_refused_by_field() -> None:
    _, form = modal()
    values = given(
        FORM,
        form,
        {"Your email": "nope", "How many": "11", "Urgent": [], "Environment": ["Production"]},
    )
    assert values == {"email": "nope", "count": "11", "env": "prod"}
    with pytest.raises(FormRefused) as refused:
        read_input(FORM, values)
    assert set(refused.value.by_field()) == {"email", "count"}


def test_what_the_person_gave_before_is_prefilled() -> None:
    before = {"email": "x@y", "count": "42", "urgent": True, "env": "prod", "tags": ["b"]}
    _, form = modal(values=before)
    assert [f.value for f in form.fields] == ["x@y", "42"]
    assert [s.chosen for s in form.selects] == [["Yes"], ["Production"], ["B"]]


def test_long_titles_are_cut_and_the_description_carries_them() -> None:
    title = "Which of the production databases should we migrate first, and why?"
    long_form = parse_form(
        {
            "message": "M" * 300,
            "requested_schema": {
                "type": "object",
                "properties": {
                    "why": {"type": "string", "title": title, "description": "D" * 500},
                    "a" * 64: {"type": "number", "minimum": 0.5},
                },
            },
        }
    )
    _data, form = modal(long_form)
    assert form.title == "M" * 44 + "…"
    why, number = form.fields
    assert why.label == "Which of the production databases should we…"
    assert why.description is not None
    assert why.description.startswith(title + ": DDD")
    assert len(why.description) == 100
    assert why.description.endswith("…")
    assert (why.style, why.max_length, why.required) == (2, 3000, False)
    assert number.label == "a" * 44 + "…"
    assert number.placeholder == "A number of at least 0.5"


def test_inputs_that_are_not_this_forms_are_refused() -> None:
    def data(*components: dict[str, Any]) -> dict[str, Any]:
        return {
            "custom_id": "ab:ask_t:i",
            "components": [{"type": 18, "component": c} for c in components],
        }

    text = {"type": 4, "custom_id": "ab:ask_t:v:0", "value": "x"}
    with pytest.raises(BadCustomId):
        forms.filled(FORM, "other", data(text))
    with pytest.raises(BadCustomId):
        forms.filled(FORM, "ask_t", data({**text, "custom_id": "ab:ask_t:v:9"}))
    with pytest.raises(BadCustomId):
        forms.filled(FORM, "ask_t", data({**text, "custom_id": "ab:ask_t:v:2"}))
    choose = {"type": 3, "custom_id": "ab:ask_t:v:2", "values": ["maybe"]}
    with pytest.raises(BadCustomId):
        forms.filled(FORM, "ask_t", data(choose))
    with pytest.raises(BadCustomId):
        forms.filled(
            FORM, "ask_t", data({**choose, "custom_id": "ab:ask_t:v:3", "values": ["prod", "dev"]})
        )
    assert forms.filled(
        FORM, "ask_t", data({**choose, "custom_id": "ab:ask_t:v:3", "values": ["zzz"]})
    ) == {"env": "zzz"}
