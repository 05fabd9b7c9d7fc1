"""A number field's bounds and values as the MCP SDK writes them from a pydantic model:
`Field(gt=0)` is JSON Schema 2020-12's `exclusiveMinimum`, `lt` its `exclusiveMaximum`, and a
float may be far beyond 2**53. The schema comes from the SDK's own renderer, so these tests
follow what it really sends; each surface shows the bounds as it shows inclusive ones, and
every value as it reads back, and askbridge holds values to them."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest
from mcp.server.elicitation import render_elicitation_schema
from pydantic import BaseModel, Field

from askbridge.adapters.discord import forms as discord_forms
from askbridge.adapters.slack.fill import modal
from askbridge.adapters.slack.ids import FormMetadata, field_block_id
from askbridge.adapters.teams.form import form_elements
from askbridge.adapters.web import render
from askbridge.core.errors import InvalidQuestion
from askbridge.core.forms import (
    Form,
    FormRefused,
    check_content,
    decode,
    encode,
    parse_form,
    read_input,
    read_text,
    shown_value,
)
from askbridge.core.models import Request, Target
from askbridge.core.view import RequestView
from tests.emulators.discord import validate_modal
from tests.emulators.discord.modals import shown
from tests.emulators.slack import validate_view
from tests.web_person import typed_form


class Rating(BaseModel):
    score: float = Field(gt=0, lt=10, description="Above 0, below 10")
    stars: int = Field(gt=0, le=5)
    weight: float = Field(default=1.5, ge=0.5, lt=2)


SCHEMA = render_elicitation_schema(Rating)
FORM = parse_form({"message": "Rate the release", "requested_schema": SCHEMA})


def test_the_sdk_writes_gt_and_lt_as_exclusive_bounds() -> None:
    # What askbridge must read: if the SDK changes how it writes these, this says so.
    assert SCHEMA["properties"]["score"] | {"description": ""} == {
        "type": "number",
        "title": "Score",
        "description": "",
        "exclusiveMinimum": 0,
        "exclusiveMaximum": 10,
    }
    assert SCHEMA["properties"]["stars"]["exclusiveMinimum"] == 0


def test_values_are_held_to_exclusive_bounds() -> None:
    score, stars, weight = FORM.fields
    assert read_input(FORM, {"score": "0.01", "stars": "1"}) == {"score": 0.01, "stars": 1}
    refused = [
        ("score", "0", "must be more than 0, got 0"),
        ("score", "10", "must be less than 10, got 10"),
        ("stars", "0", "must be at least 1, got 0"),
        ("weight", "2", "must be less than 2, got 2"),
        ("weight", "0.4", "must be at least 0.5, got 0.4"),
    ]
    for name, typed, why in refused:
        field = FORM.field(name)
        assert field is not None
        with pytest.raises(FormRefused) as caught:
            read_text(field, typed)
        assert caught.value.by_field() == {name: why}
    # An integer's exclusive bound is the whole number next to it, as every input can hold.
    assert (stars.minimum, stars.above_minimum, stars.maximum) == (1, False, 5)
    assert (score.minimum, score.above_minimum, score.below_maximum) == (0, True, True)
    assert (weight.minimum, weight.above_minimum, weight.below_maximum) == (0.5, False, True)


def test_the_tighter_of_two_bounds_holds_and_a_range_left_empty_is_refused() -> None:
    def field(**bounds: Any) -> Any:
        prop = {"type": "number", **bounds}
        schema = {"type": "object", "properties": {"x": prop}}
        return parse_form({"message": "m", "requested_schema": schema}).fields[0]

    tight = field(minimum=1, exclusiveMinimum=0, maximum=5, exclusiveMaximum=5)
    assert (tight.minimum, tight.above_minimum, tight.maximum, tight.below_maximum) == (
        1,
        False,
        5,
        True,
    )
    empty: list[tuple[dict[str, Any], str]] = [
        ({"exclusiveMinimum": 3, "maximum": 3}, "exclusiveMinimum: must be below maximum (3)"),
        ({"minimum": 3, "exclusiveMaximum": 3}, "minimum: must be below exclusiveMaximum (3)"),
        ({"exclusiveMinimum": "0"}, "exclusiveMinimum: must be a finite number"),
        (
            {"minimum": 2e20, "maximum": 123456789.5},
            "minimum: must not exceed maximum (123456789.5)",
        ),
    ]
    for bounds, why in empty:
        with pytest.raises(InvalidQuestion) as refused:
            field(**bounds)
        assert why in str(refused.value)
    with pytest.raises(InvalidQuestion, match=r"exclusiveMinimum: leaves no whole number"):
        parse_form(
            {
                "message": "m",
                "requested_schema": {
                    "type": "object",
                    "properties": {"n": {"type": "integer", "exclusiveMinimum": 2**53}},
                },
            }
        )


def test_discord_states_each_bound_in_the_placeholder() -> None:
    data = discord_forms.fill_form("ask_t", FORM, None).to_dict()
    assert validate_modal(data) is None
    assert [f.placeholder for f in shown(data).fields] == [
        "A number more than 0 and less than 10",
        "A whole number from 1 to 5",
        "A number of at least 0.5 and less than 2",
    ]


def test_slack_teams_and_the_web_page_bound_their_number_inputs() -> None:
    metadata = FormMetadata("req-1", "C0GENERAL", "1700000000.000100", {"team_id": "T1"})
    view: Any = modal(FORM, metadata)
    assert validate_view(view) == []
    slack = {
        name: {k: v for k, v in block["element"].items() if k.endswith("_value")}
        for name in ("score", "stars", "weight")
        for block in view["blocks"]
        if block.get("block_id") == field_block_id(name)
    }
    assert slack == {
        "score": {"min_value": "0", "max_value": "10"},
        "stars": {"min_value": "1", "max_value": "5"},
        "weight": {"min_value": "0.5", "max_value": "2", "initial_value": "1.5"},
    }
    teams = [(e.get("min"), e.get("max")) for e in form_elements(FORM) if "id" in e]
    assert teams == [(0, 10), (1, 5), (0.5, 2)]
    page = typed_form(web_page(FORM)).inputs
    assert [
        (page[f"text.{n}"]["min"], page[f"text.{n}"]["max"]) for n in ("score", "stars", "weight")
    ] == [
        ("0", "10"),
        ("1", "5"),
        ("0.5", "2"),
    ]


def web_page(form: Form) -> str:
    request = Request(
        request_id="ask_form",
        questions=(),
        targets=(Target(platform="web"),),
        created_at=datetime(2030, 1, 1, tzinfo=UTC),
        form=form,
    )
    return render.typed_form(RequestView.of(request), form, token="0" * 64, version=1)


class Distance(BaseModel):
    metres: float = Field(default=1e20, le=1e30, ge=-1e300)
    steps: int = Field(default=3, le=2**53 - 1)


DISTANCE = parse_form(
    {"message": "How far?", "requested_schema": render_elicitation_schema(Distance)}
)


def test_a_number_may_be_any_finite_number_and_an_integer_stays_within_2_53() -> None:
    metres = DISTANCE.fields[0]
    assert (metres.minimum, metres.maximum, metres.default) == (-1e300, 1e30, 1e20)
    # JSON numbers are doubles: 10**20 as an int is 1e20, and is kept as RFC 8785 writes it.
    content = check_content(DISTANCE, {"metres": 10**20, "steps": 2**53 - 1})
    assert content == {"metres": 1e20, "steps": 2**53 - 1}
    assert encode(content)["metres"] == "100000000000000000000"
    assert decode(encode(content)) == content
    refused_values: list[tuple[dict[str, Any], dict[str, str]]] = [
        ({"metres": 1e31}, {"metres": "must be at most 1e+30, got 1e+31"}),
        ({"metres": 10**400}, {"metres": "is too large"}),
        ({"steps": 2**53 + 1}, {"steps": "is too large"}),
    ]
    for given, why in refused_values:
        with pytest.raises(FormRefused) as refused:
            check_content(DISTANCE, given)
        assert refused.value.by_field() == why
    refused_schemas: list[tuple[dict[str, Any], str]] = [
        ({"type": "integer", "maximum": 2**53 + 1}, "between -(2**53 - 1) and 2**53 - 1"),
        ({"type": "number", "maximum": 10**400}, "must be a finite number"),
        ({"type": "number", "default": 10**400}, "is too large"),
    ]
    for prop, words in refused_schemas:
        schema = {"type": "object", "properties": {"x": prop}}
        with pytest.raises(InvalidQuestion, match=re.escape(words)):
            parse_form({"message": "m", "requested_schema": schema})


def test_every_surface_shows_a_large_number_so_that_it_reads_back_the_same() -> None:
    metres = DISTANCE.fields[0]
    metadata = FormMetadata("req-1", "C0GENERAL", "1700000000.000100", {"team_id": "T1"})
    view: Any = modal(DISTANCE, metadata)
    assert validate_view(view) == []
    [slack] = [
        b["element"] for b in view["blocks"] if b.get("block_id") == field_block_id("metres")
    ]
    data = discord_forms.fill_form("ask_t", DISTANCE, None).to_dict()
    assert validate_modal(data) is None
    discord = shown(data).fields[0]
    teams = form_elements(DISTANCE)[0]
    web = typed_form(web_page(DISTANCE)).inputs["text.metres"]
    typed = [
        slack["initial_value"],
        slack["max_value"],
        discord.value,
        web["value"],
        web["max"],
        web["min"],
        str(teams["value"]),
        str(teams["max"]),
    ]
    # Slack's number input takes no exponent: 1e+30 is written out, digits as Python's float.
    assert slack["max_value"] == "1" + "0" * 30
    wanted = [1e20, 1e30, 1e20, 1e20, 1e30, -1e300, 1e20, 1e30]
    assert [read_text(metres, t) for t in typed] == wanted
    assert "1e+30" in str(discord.placeholder)
    # The values given, as every surface's final message shows them: whole, never rounded.
    assert [shown_value(metres, v) for v in (1e20, 123456789.5, 2.0)] == [
        "1e+20",
        "123456789.5",
        "2",
    ]


def test_an_integer_stays_where_a_json_number_holds_every_whole_number() -> None:
    """JavaScript's and RFC 8785's safe integers: ±(2**53 - 1). 2**53 itself is refused as a
    value or a bound (it would be kept as 2**53 + 1 is), and an exclusive bound of 2**53 is
    the safe integer next to it."""
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "m": {"type": "integer", "exclusiveMaximum": 2**53},
        },
    }
    details = parse_form({"message": "m", "requested_schema": schema})
    assert details.fields[1].maximum == 2**53 - 1
    content = check_content(details, {"n": -(2**53 - 1), "m": 2**53 - 1})
    assert decode(encode(content)) == content
    for given in ({"n": 2**53}, {"n": -(2**53)}, {"m": 2**53}):
        with pytest.raises(FormRefused):
            check_content(details, given)
    for prop in ({"maximum": 2**53}, {"default": 2**53}, {"exclusiveMinimum": -(2**53) - 1}):
        wrong = {"type": "object", "properties": {"n": {"type": "integer", **prop}}}
        with pytest.raises(InvalidQuestion):
            parse_form({"message": "m", "requested_schema": wrong})
