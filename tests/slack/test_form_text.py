"""A typed form's hostile text (its message, fields' titles and descriptions, choices' titles,
and the values people give) is inert in every Slack message, modal and note askbridge makes
of it, and every payload passes Slack's checks."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from askbridge.adapters.slack.fill import errors, modal
from askbridge.adapters.slack.forms import notice
from askbridge.adapters.slack.ids import FormMetadata, field_block_id
from askbridge.adapters.slack.notes import note, reminder_line
from askbridge.adapters.slack.render import render
from askbridge.adapters.slack.surface import SlackSurface
from askbridge.core.forms import Choice, FieldKind, Form, FormField, encode, parse_form
from askbridge.core.intents import Counted, Refusal, Refused
from askbridge.core.models import Request
from askbridge.core.view import Receipt, RequestView
from tests.emulators.slack import mentions, validate_blocks, validate_view
from tests.hostile import (
    FORM_EXAMPLES,
    FormCase,
    form_cases,
    form_request,
    hostile_text,
    largest_form,
    nodes,
    requests,
)
from tests.slack.test_hostile_text import assert_inert, assert_note_inert

EXAMPLES = settings(max_examples=60, derandomize=True, deadline=None)
KINDS = list(FieldKind)


@st.composite
def forms(draw: st.DrawFn) -> tuple[Form, dict[str, Any]]:
    """A form of every kind of field, each text hostile, and hostile values for it."""
    fields = []
    content: dict[str, Any] = {}
    for index in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(KINDS))
        choices = tuple(
            Choice(value=f"v{i}", title=draw(hostile_text()).strip()[:75] or "x")
            for i in range(draw(st.integers(1, 4)))
        )
        name = f"f{index}"
        fields.append(
            FormField(
                name=name,
                kind=kind,
                title=draw(hostile_text()),
                description=draw(hostile_text(min_size=0)),
                required=draw(st.booleans()),
                choices=choices if kind in (FieldKind.CHOICE, FieldKind.CHOICES) else (),
            )
        )
        typed = {
            FieldKind.NUMBER: 1.5,
            FieldKind.INTEGER: 7,
            FieldKind.BOOLEAN: True,
            FieldKind.CHOICE: "v0",
            FieldKind.CHOICES: ["v0"],
        }
        content[name] = typed[kind] if kind in typed else draw(hostile_text())
    message = draw(hostile_text())
    if draw(st.booleans()):
        # A URL-mode form: a link (core takes any http(s) URL without spaces) and no fields.
        url = "https://e.example/?q=" + "".join(draw(hostile_text()).split())
        return Form(message=message, url=url), {}
    return Form(message=message, fields=tuple(fields)), content


def as_form_request(request: Request, form: Form, content: dict[str, Any]) -> Request:
    """`request` (in any state, with hostile people) asking `form` instead of questions."""
    answers = encode(content)
    votes = tuple(v.model_copy(update={"answers": answers, "notes": {}}) for v in request.votes)
    # The deadline's default content too is kept as the form's values are.
    default = answers if request.policy.timeout_answers is not None else None
    policy = request.policy.model_copy(update={"timeout_answers": default})
    update: dict[str, Any] = {"questions": (), "form": form, "votes": votes, "policy": policy}
    if request.answers is not None:
        update["answers"] = answers
    return request.model_copy(update=update)


@EXAMPLES
@given(requests(), forms())
def test_every_form_message_modal_and_note_is_inert(
    request: Request, made: tuple[Form, dict[str, Any]]
) -> None:
    form, content = made
    request = as_form_request(request, form, content)
    view = RequestView.of(request)
    payload = render(view, "r1")
    blocks: list[Any] = json.loads(json.dumps(payload["blocks"]))
    assert_inert(payload["text"], blocks, request)

    metadata = FormMetadata(request.request_id, "C1", "1700000000.000100", {"team_id": "T1"})
    shown = json.loads(json.dumps(modal(form, metadata)))
    assert validate_view(shown) == []
    assert mentions(None, shown["blocks"]).none
    problems = {f.name: f"must not be {content[f.name]!r}" for f in form.fields}
    assert set(errors(form, problems)) == {b["block_id"] for b in shown["blocks"][1:]}
    if form.url is not None:
        buttons = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
        if view.waiting:
            assert [b["text"]["text"] for b in buttons] == [
                "Open link",
                "Done",
                "Decline",
                "Cancel",
            ]
            assert buttons[0]["url"] == form.url
    refused = Refused(Refusal.BAD_VALUES, view, field_problems=problems, values=content)
    assert_note_inert(note(refused), request)


@FORM_EXAMPLES
@given(form_cases(fields=SlackSurface.form_fields))
def test_a_hostile_form_is_inert_in_every_state_its_modal_errors_and_notes(case: FormCase) -> None:
    """Every kind of field, hostile names, titles, descriptions, choices, defaults and values,
    in every state (waiting with votes, answered, at the deadline, declined, cancelled, ...):
    the message, the modal with its defaults, the errors under its inputs for what a person
    typed and the private notes."""
    request, form = case.request, case.form
    view = RequestView.of(request)
    payload = render(view, "r1")
    assert_inert(payload["text"], json.loads(json.dumps(payload["blocks"])), request)
    if view.waiting:
        assert_note_inert(reminder_line(view), request)

    metadata = FormMetadata(request.request_id, "C1", "1700000000.000100", {"team_id": "T1"})
    shown = json.loads(json.dumps(modal(form, metadata)))
    assert validate_view(shown) == []
    assert mentions(None, shown["blocks"]).none
    assert not [n for n in nodes(shown) if n.get("type") == "mrkdwn"]
    inputs = {b["block_id"] for b in shown["blocks"] if b["type"] == "input"}
    under = errors(form, case.problems)
    assert set(under) == {field_block_id(name) for name in case.problems} <= inputs
    assert all(text.strip() for text in under.values())

    refused = Refused(
        Refusal.BAD_VALUES, view, field_problems=case.problems, values=dict(case.typed)
    )
    outcomes: list[Refused | Counted] = [refused]
    outcomes += [Refused(reason, view, missing=()) for reason in Refusal]
    outcomes += [Counted(view, Receipt(v.answers, 1, 2)) for v in request.votes]
    outcomes.append(Counted(view, Receipt(encode(case.content), 1, 2)))
    for outcome in outcomes:
        line = note(outcome)
        assert_note_inert(line, request)
        if line is not None:
            ended = json.loads(json.dumps(notice(line)))
            assert validate_view(ended) == []
            assert_inert("", ended["blocks"], request)


def test_the_largest_form_fits_in_slacks_message_and_modal() -> None:
    """As many fields as Slack shows, each as large as a form takes: the message and the modal
    keep within Slack's limits, one input per field."""
    form = parse_form(largest_form(SlackSurface.form_fields))
    payload = render(RequestView.of(form_request(form, "slack", "C1")), "r1")
    assert validate_blocks(json.loads(json.dumps(payload["blocks"]))) == []
    metadata = FormMetadata("r1", "C1", "1700000000.000100", {"team_id": "T1"})
    shown = json.loads(json.dumps(modal(form, metadata)))
    assert validate_view(shown) == []
    inputs = [b["block_id"] for b in shown["blocks"] if b["type"] == "input"]
    assert inputs == [field_block_id(f.name) for f in form.fields]
    assert len(inputs) == SlackSurface.form_fields
