"""A typed form (issue 38) as a Discord modal, without a network: which input each field gets,
within Discord's limits (the strict emulator's), prefilled with defaults, and a submission read
back as `Fill.values` that `core.forms.read_input` types."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from askbridge.adapters.discord import forms
from askbridge.adapters.discord.handlers import MAX_CONTENT
from askbridge.adapters.discord.ids import BadCustomId
from askbridge.adapters.discord.notes import form_note, note
from askbridge.adapters.discord.render import render
from askbridge.adapters.discord.text import shorten
from askbridge.core.errors import InvalidQuestion
from askbridge.core.forms import Form, FormRefused, encode, parse_form, read_input
from askbridge.core.intents import Counted, Outcome, Refusal, Refused
from askbridge.core.models import Person, Request, Status, Target
from askbridge.core.problems import text_problem
from askbridge.core.view import Receipt, RequestView
from tests.emulators.discord import validate_message, validate_modal
from tests.emulators.discord.components import TEXT_DISPLAY, walk
from tests.emulators.discord.mentions import pings
from tests.emulators.discord.modals import Given, Modal, shown, submission
from tests.hostile import FORM_EXAMPLES, FormCase, form_cases, hostile_text, people

from .test_hostile_text import SENT_WITH, assert_shown_as_written

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


def submitted(form: Any, shown_modal: Modal, values: dict[str, Given]) -> dict[str, object]:
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
    values = submitted(
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
    values = submitted(
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
                    "a" * 64: {"type": "number", "minimum": 0.5, "maximum": 2_000_000},
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
    assert number.placeholder == "A number from 0.5 to 2000000"


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


def test_a_required_multi_choice_that_may_hold_none_can_be_left_empty() -> None:
    schema = {
        "type": "object",
        "properties": {
            "teams": {"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 0},
            "more": {"type": "array", "items": {"enum": ["a", "b"]}},
        },
        "required": ["teams"],
    }
    form = parse_form({"message": "m", "requested_schema": schema})
    _, shown_modal = modal(form)
    teams, more = shown_modal.selects
    assert (teams.required, teams.min_values, teams.max_values) == (False, 0, 2)
    assert (more.required, more.min_values, more.max_values) == (False, 1, 2)
    values = submitted(form, shown_modal, {"teams": [], "more": []})
    assert values == {"teams": []}
    assert read_input(form, values) == {"teams": []}


# --- hostile text ------------------------------------------------------------------------------

AT = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


@st.composite
def hostile_forms(draw: st.DrawFn) -> Form:
    text = hostile_text()
    titles = draw(st.lists(text, min_size=2, max_size=3, unique=True))
    schema = {
        "type": "object",
        "properties": {
            "words": {"type": "string", "title": draw(text), "description": draw(text)},
            "pick": {
                "type": "string",
                "title": draw(text),
                "oneOf": [{"const": f"v{i}", "title": t[:75]} for i, t in enumerate(titles)],
            },
            "many": {
                "type": "array",
                "title": draw(text),
                "items": {"enum": [f"v{i}" for i in range(len(titles))], "enumNames": titles},
            },
        },
        "required": ["words"],
    }
    try:
        return parse_form({"message": draw(text), "requested_schema": schema})
    except InvalidQuestion:
        assume(False)
        raise


@given(
    hostile_forms(), hostile_text(), people(), st.sampled_from(["waiting", "answered", "declined"])
)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_hostile_text_in_a_form_is_shown_as_written(
    form: Form, words: str, person: Person, state: str
) -> None:
    request = Request(
        request_id="ask_h",
        questions=(),
        targets=(Target(platform="discord", channel="1"),),
        created_at=AT,
        form=form,
    )
    words = words.strip() or "x"
    assume(text_problem(words) is None and "\x00" not in words)
    content = {"words": words, "pick": "v1", "many": ["v0", "v1"]}
    if state == "answered":
        request = request.model_copy(
            update={
                "status": Status.ANSWERED,
                "answers": encode(content),
                "answered_by": person,
                "ended_at": AT,
            }
        )
    elif state == "declined":
        request = request.model_copy(
            update={"status": Status.DECLINED, "declined_by": person, "ended_at": AT}
        )
    view = RequestView.of(request)
    components: list[dict[str, Any]] = render(view).to_components()  # type: ignore[no-untyped-call]
    payload = {"flags": 1 << 15, "components": components}
    assert validate_message(payload) is None
    for placed in walk(components):
        if placed.component.get("type") == TEXT_DISPLAY:
            assert_shown_as_written(placed.component["content"], ())
    assert validate_modal(forms.fill_form("ask_h", form, content).to_dict()) is None
    refused = Refused(
        Refusal.BAD_VALUES,
        view=view,
        field_problems={"words": f"must be at most 3 characters, got {words!r}", "nope": words},
    )
    text = note(refused)
    assert text is not None
    assert_shown_as_written(text, ())


@given(form_cases())
@FORM_EXAMPLES
def test_a_hostile_form_is_shown_as_written_in_every_state_modal_and_note(case: FormCase) -> None:
    """Every kind of field, hostile names, titles, descriptions, choices, defaults and values,
    in every state: the message, the modal with its defaults and as it is reopened with what
    was typed, and every private note (a refusal quoting what was typed among them)."""
    view = RequestView.of(case.request)
    components: list[dict[str, Any]] = render(view).to_components()  # type: ignore[no-untyped-call]
    assert validate_message({"flags": 1 << 15, "components": components}) is None
    for placed in walk(components):
        if placed.component.get("type") == TEXT_DISPLAY:
            assert_shown_as_written(placed.component["content"], view.answerers)
    assert pings("", components, SENT_WITH).nobody
    # A URL-mode form has no modal: its Done is a button.
    for given_values in (None, case.typed, case.content) if case.form.fields else ():
        made = forms.fill_form(case.request.request_id, case.form, given_values).to_dict()
        assert validate_modal(made) is None, validate_modal(made)
    outcomes: list[Outcome] = [
        Refused(Refusal.BAD_VALUES, view, field_problems=case.problems, values=case.typed)
    ]
    outcomes += [Refused(reason, view) for reason in Refusal]
    outcomes += [Counted(view, Receipt(v.answers, 1, 2)) for v in case.request.votes]
    outcomes.append(Counted(view, Receipt(encode(case.content), 1, 2)))
    for outcome in outcomes:
        for text in (note(outcome), form_note(outcome)):
            if text is not None:
                sent = shorten(text, MAX_CONTENT)
                assert_shown_as_written(sent, view.answerers)
                assert validate_message({"content": sent}) is None
                assert pings(sent, [], SENT_WITH).nobody


def test_a_form_link_is_live_and_whole() -> None:
    """Found with the hostile form cases: a URL-mode form's link was written as a bare link,
    escaped, so Discord linked another page (a bare link ends at a `<` or a final `.`, and an
    escape's backslash is part of it). It is written in angle brackets as a URI now, opening
    the page the agent gave."""
    url = "https://e.example/<!channel>|a_b*c*~d~\\x.@here"
    form = parse_form({"message": "Sign in", "url": url})
    request = Request(
        request_id="form_link",
        questions=(),
        targets=(Target(platform="discord", channel="1"),),
        created_at=AT,
        form=form,
    )
    components: list[dict[str, Any]] = render(RequestView.of(request)).to_components()  # type: ignore[no-untyped-call]
    texts = [
        p.component["content"] for p in walk(components) if p.component["type"] == TEXT_DISPLAY
    ]
    shown = next(text for text in texts if "🔗" in text)
    written = "https://e.example/%3C!channel%3E%7Ca_b*c*~d~%5Cx.%40here"
    assert f"🔗 <{written}>" in shown
    assert unquote(written) == url
    assert_shown_as_written(shown, ())
