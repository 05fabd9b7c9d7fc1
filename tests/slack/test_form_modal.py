"""A typed form's Slack modal: one native input per field, prefilled with the defaults, within
Slack's rules; and what a submission's `state.values` give the broker."""

from __future__ import annotations

from typing import Any, cast

from askbridge.adapters.slack.blockkit import StateValues
from askbridge.adapters.slack.fill import errors, modal, number_text, read_fill
from askbridge.adapters.slack.ids import FILL_CALLBACK_ID, FormMetadata, field_block_id
from askbridge.core.forms import Form, parse_form, read_input
from tests.emulators.slack import validate_view

METADATA = FormMetadata("req-1", "C0GENERAL", "1700000000.000100", {"team_id": "T1"})
HOSTILE = "<!channel> <@U2> *bold* `code` <https://evil.example|click> &amp; _x_"

TEXTS = {
    "type": "object",
    "properties": {
        "ticket": {
            "type": "string",
            "title": "Ticket",
            "description": "The change ticket, e.g. CHG-1",
            "minLength": 3,
            "maxLength": 20,
            "default": "CHG-",
        },
        "contact": {"type": "string", "format": "email", "title": "Contact"},
        "runbook": {"type": "string", "format": "uri"},
        "day": {"type": "string", "format": "date", "default": "2026-12-24"},
        "at": {"type": "string", "format": "date-time", "default": "2026-12-24T18:00:00+01:00"},
    },
    "required": ["ticket", "day"],
}
OTHERS = {
    "type": "object",
    "properties": {
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
        "ratio": {"type": "number", "minimum": 0.25, "maximum": 1e6},
        "agree": {"type": "boolean", "title": "I have read the runbook", "default": True},
        "region": {
            "type": "string",
            "oneOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "Americas"}],
            "default": "eu",
        },
        "checks": {
            "type": "array",
            "items": {"type": "string", "enum": ["smoke", "load", "chaos"]},
            "minItems": 1,
            "maxItems": 2,
            "default": ["smoke"],
        },
    },
    "required": ["replicas", "region"],
}


def form(schema: dict[str, Any], message: str = "Please fill this in.") -> Form:
    return parse_form({"message": message, "requested_schema": schema})


def inputs(view: Any) -> dict[str, dict[str, Any]]:
    return {b["block_id"]: b for b in view["blocks"] if b["type"] == "input"}


def test_text_kinds_get_their_native_inputs_prefilled() -> None:
    view = modal(form(TEXTS), METADATA)
    assert validate_view(view) == []
    assert view["callback_id"] == FILL_CALLBACK_ID
    assert FormMetadata.unpack(view["private_metadata"]) == METADATA
    shown = inputs(view)
    ticket = shown[field_block_id("ticket")]
    assert ticket["label"]["text"] == "Ticket"
    assert ticket["hint"]["text"] == "The change ticket, e.g. CHG-1"
    assert "optional" not in ticket
    assert ticket["element"] == {
        "type": "plain_text_input",
        "action_id": "field",
        "max_length": 20,
        "multiline": False,
        "min_length": 3,
        "initial_value": "CHG-",
    }
    assert shown[field_block_id("contact")]["element"]["type"] == "email_text_input"
    assert shown[field_block_id("contact")]["optional"] is True
    # A field without a title is labelled by its name.
    assert shown[field_block_id("runbook")]["label"]["text"] == "runbook"
    assert shown[field_block_id("runbook")]["element"]["type"] == "url_text_input"
    assert shown[field_block_id("day")]["element"]["initial_date"] == "2026-12-24"
    at = shown[field_block_id("at")]["element"]
    assert (at["type"], at["initial_date_time"]) == ("datetimepicker", 1_798_131_600)


def test_numbers_yes_no_and_choices_get_their_native_inputs_prefilled() -> None:
    view = modal(form(OTHERS), METADATA)
    assert validate_view(view) == []
    shown = inputs(view)
    assert shown[field_block_id("replicas")]["element"] == {
        "type": "number_input",
        "action_id": "field",
        "is_decimal_allowed": False,
        "min_value": "1",
        "max_value": "10",
        "initial_value": "3",
    }
    ratio = shown[field_block_id("ratio")]["element"]
    assert (ratio["is_decimal_allowed"], ratio["min_value"], ratio["max_value"]) == (
        True,
        "0.25",
        "1000000",
    )
    agree = shown[field_block_id("agree")]
    # An unticked box says no; Slack must not insist on a tick.
    assert agree["optional"] is True
    assert agree["label"]["text"] == "I have read the runbook"
    assert agree["element"]["initial_options"] == agree["element"]["options"]
    region = shown[field_block_id("region")]["element"]
    assert region["type"] == "static_select"
    assert [o["text"]["text"] for o in region["options"]] == ["Europe", "Americas"]
    assert region["initial_option"]["value"] == "eu"
    checks = shown[field_block_id("checks")]["element"]
    assert (checks["type"], checks["max_selected_items"]) == ("multi_static_select", 2)
    assert [o["value"] for o in checks["initial_options"]] == ["smoke"]


def test_numbers_are_written_as_number_inputs_take_them() -> None:
    assert number_text(1e6, whole=False) == "1000000"
    assert number_text(0.1, whole=False) == "0.1"
    assert number_text(1e-7, whole=False) == "0.0000001"
    assert number_text(-3.0, whole=True) == "-3"


def test_hostile_text_stays_plain_text_in_the_modal() -> None:
    schema = {
        "type": "object",
        "properties": {
            "pick": {
                "type": "string",
                "title": HOSTILE[:200],
                "description": HOSTILE,
                "enum": ["a", "b"],
                "enumNames": [HOSTILE[:75], "<@U1>"],
            }
        },
    }
    view = modal(form(schema, message=HOSTILE), METADATA)
    assert validate_view(view) == []
    block = inputs(view)[field_block_id("pick")]
    for text in (block["label"], block["hint"], *(o["text"] for o in block["element"]["options"])):
        assert text["type"] == "plain_text"
    message = view["blocks"][0]
    assert message["type"] == "rich_text"
    assert message["elements"][0]["elements"] == [{"type": "text", "text": HOSTILE}]


def state(**entries: dict[str, Any]) -> StateValues:
    # Raw JSON as Slack sends it: the adapter reads it as the TypedDict it declares.
    return cast("StateValues", {field_block_id(n): {"field": e} for n, e in entries.items()})


def test_a_submission_gives_the_values_the_broker_reads() -> None:
    values = read_fill(
        state(
            ticket={"type": "plain_text_input", "value": "CHG-42"},
            contact={"type": "email_text_input", "value": None},
            runbook={"type": "url_text_input", "value": "https://runbooks.example/x"},
            day={"type": "datepicker", "selected_date": "2026-12-31"},
            at={"type": "datetimepicker", "selected_date_time": 1_798_131_600},
        )
    )
    assert values == {
        "ticket": "CHG-42",
        "contact": "",
        "runbook": "https://runbooks.example/x",
        "day": "2026-12-31",
        "at": "2026-12-24T17:00:00+00:00",
    }
    assert read_input(form(TEXTS), values) == {
        "ticket": "CHG-42",
        "runbook": "https://runbooks.example/x",
        "day": "2026-12-31",
        "at": "2026-12-24T17:00:00+00:00",
    }
    others = read_fill(
        state(
            replicas={"type": "number_input", "value": "7"},
            ratio={"type": "number_input", "value": "0.5"},
            agree={"type": "checkboxes", "selected_options": []},
            region={"type": "static_select", "selected_option": {"value": "us"}},
            checks={
                "type": "multi_static_select",
                "selected_options": [{"value": "load"}, {"value": "smoke"}],
            },
        )
        | {"ab-form-message": {}, "elsewhere": {"x": {"type": "plain_text_input", "value": "?"}}}
    )
    assert others == {
        "replicas": "7",
        "ratio": "0.5",
        "agree": False,
        "region": "us",
        "checks": ["load", "smoke"],
    }
    assert read_input(form(OTHERS), others) == {
        "replicas": 7,
        "ratio": 0.5,
        "agree": False,
        "region": "us",
        "checks": ["smoke", "load"],
    }
    # A multi-select left empty and a menu with nothing chosen give nothing, and an empty text.
    empty = read_fill(
        state(
            region={"type": "static_select", "selected_option": None},
            checks={"type": "multi_static_select", "selected_options": []},
        )
    )
    assert empty == {"region": ""}


def test_refused_values_become_errors_under_their_inputs() -> None:
    shown = errors(
        form(OTHERS),
        {"replicas": "must be at most 10, got 42", "nope": "is not a field of this form"},
    )
    assert shown == {field_block_id("replicas"): "replicas must be at most 10, got 42."}


def test_a_title_of_spaces_shows_the_fields_name() -> None:
    schema = {"type": "object", "properties": {"ticket": {"type": "string", "title": "   "}}}
    view = modal(form(schema), METADATA)
    assert validate_view(view) == []
    assert inputs(view)[field_block_id("ticket")]["label"]["text"] == "ticket"
    assert errors(form(schema), {"ticket": "is required"}) == {
        field_block_id("ticket"): "ticket is required."
    }
