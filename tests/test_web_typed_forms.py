"""A typed form on the answer page: each field's input of the matching type and limits, its
default, its label and description; what the inputs send read back into the field's types; a
refused value marked at its field with everything typed kept; a URL-mode form's link."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from html import unescape
from typing import Any

import aiohttp
import pytest
from multidict import MultiDict, MultiDictProxy

from askbridge.adapters.web import clicks, render
from askbridge.bots.service import Service
from askbridge.core.forms import FormRefused, parse_form, read_input
from askbridge.core.intents import Cancel, Decline, Fill
from askbridge.core.models import QuestionOption, Request, Target, UserQuestion
from askbridge.core.view import RequestView
from tests.conftest import DEPLOY, audit_events
from tests.web_person import RELEASE_FORM, fill_on_web, read_form, typed_form

T0 = datetime(2030, 1, 1, tzinfo=UTC)
TOKEN = "0" * 64
KINDS: dict[str, Any] = {
    "message": "Schedule the migration",
    "requested_schema": {
        "type": "object",
        "properties": {
            "reason": {"type": "string", "title": "Reason", "minLength": 5},
            "ticket": {"type": "string", "title": "Ticket", "maxLength": 20, "default": "OPS-1"},
            "docs": {"type": "string", "format": "uri", "title": "Runbook"},
            "day": {"type": "string", "format": "date", "title": "Day", "default": "2026-12-24"},
            "at": {
                "type": "string",
                "format": "date-time",
                "title": "Start",
                "default": "2026-12-07T09:30:00+01:00",
            },
        },
        "required": ["reason"],
    },
}
SHARE: dict[str, Any] = {
    "message": "Budget",
    "requested_schema": {
        "type": "object",
        "properties": {"share": {"type": "number", "title": "Share", "maximum": 0.5}},
    },
}


def waiting(form: dict[str, Any]) -> tuple[RequestView, Any]:
    # The page of a form is the request's: its id, context, policy and votes come from the view.
    question = UserQuestion(
        question="q", header="h", options=(QuestionOption(label="a"), QuestionOption(label="b"))
    )
    request = Request(
        request_id="ask_form",
        questions=(question,),
        targets=(Target(platform="web"),),
        context="billing-bot is releasing",
        created_at=T0,
    )
    return RequestView.of(request), parse_form(form)


def page(form: dict[str, Any], **given: Any) -> str:
    view, parsed = waiting(form)
    return render.typed_form(view, parsed, token=TOKEN, version=1, **given)


def posted(pairs: list[tuple[str, str]]) -> clicks.Form:
    return MultiDictProxy(MultiDict[str | bytes | bytearray | Any](pairs))


def test_each_field_gets_the_input_of_its_kind_with_its_limits_and_default() -> None:
    release = typed_form(page(RELEASE_FORM)).inputs
    contact = release["text.contact"]
    assert (contact["type"], "required" in contact, contact["maxlength"]) == ("email", True, "3000")
    assert contact["aria-describedby"] == "f0-desc"
    replicas = release["text.replicas"]
    assert {k: replicas[k] for k in ("type", "step", "min", "max", "value")} == {
        "type": "number",
        "step": "1",
        "min": "1",
        "max": "10",
        "value": "3",
    }
    assert release["flag.canary"] == {"type": "hidden", "name": "flag.canary", "value": "false"}
    assert "required" in release["choice.region"]
    assert release["choices.checks"]["type"] == "checkbox"

    kinds = typed_form(page(KINDS)).inputs
    assert kinds["text.reason"]["minlength"] == "5"
    assert "required" in kinds["text.reason"]
    assert kinds["text.ticket"]["value"] == "OPS-1"
    assert kinds["text.ticket"]["maxlength"] == "20"
    assert kinds["text.docs"]["type"] == "url"
    assert (kinds["text.day"]["type"], kinds["text.day"]["value"]) == ("date", "2026-12-24")
    start = kinds["text.at"]
    assert (start["type"], start["value"], start["data-zone"]) == (
        "datetime-local",
        "2026-12-07T09:30",
        "f4-zone",
    )
    assert kinds["zone.at"]["value"] == "+01:00"
    assert typed_form(page(SHARE)).inputs["text.share"]["step"] == "any"


def test_long_text_is_a_textarea_and_labels_descriptions_and_choices_show() -> None:
    html = page(KINDS)
    assert "<textarea id='f0' name='text.reason'" in html
    assert "<input id='f1' type='text' name='text.ticket'" in html
    assert "<label class='title' for='f0'>Reason <span class='hint'>(required)</span></label>" in (
        html
    )
    assert "Time in UTC+01:00." in html
    release = page(RELEASE_FORM)
    assert "<p class='desc' id='f0-desc'>Who answers questions about the release</p>" in release
    assert "<option value='eu-west-1'>Europe (Ireland)</option>" in release
    assert "> Security scan</label>" in release
    assert (
        "<p class='hint' id='f4-hint'>Optional: leave it empty, or choose at least 1.</p>"
        in release
    )
    assert "<button name='action' value='decline' formnovalidate>Decline</button>" in release
    assert "data-confirm='Cancel this question? The agent will be interrupted" in release


def test_what_the_inputs_send_reads_back_typed() -> None:
    """The defaults, as a browser sends them, are the defaults again, in their types."""
    # Besides the defaults, what the form requires.
    required = {
        "contact": [("text.contact", "ops@example.com")],
        "region": [("choice.region", "us-east-1")],
        "reason": [("text.reason", "quarterly")],
    }
    for schema in (RELEASE_FORM, KINDS):
        form = parse_form(schema)
        data = typed_form(page(schema)).data
        for field in form.fields:
            data += required.get(field.name, [])
        click = clicks.parse(posted([*data, ("action", "submit")]))
        assert isinstance(click.intent, Fill)
        content = read_input(form, click.intent.values)
        for field in form.fields:
            if field.default is not None:
                assert content[field.name] == field.default, field.name
    release = read_input(
        parse_form(RELEASE_FORM),
        clicks.fill(
            posted(
                [
                    ("text.contact", "ops@example.com"),
                    ("text.replicas", "4"),
                    ("flag.canary", "false"),
                    ("choice.region", "us-east-1"),
                    ("choices.checks", "load"),
                    ("choices.checks", "smoke"),
                ]
            )
        ).values,
    )
    assert release == {
        "contact": "ops@example.com",
        "replicas": 4,
        "canary": False,
        "region": "us-east-1",
        "checks": ["smoke", "load"],
    }


def test_a_date_and_time_goes_with_the_offset_the_page_gives_it() -> None:
    form = parse_form(KINDS)
    values = clicks.fill(
        posted(
            [("text.reason", "quarterly"), ("text.at", "2026-07-01T18:05"), ("zone.at", "+02:00")]
        )
    ).values
    assert values["at"] == "2026-07-01T18:05+02:00"
    # A text area's line breaks, which a browser sends as CRLF, are LF as on other surfaces.
    typed = clicks.fill(posted([("text.reason", "a\r\nb\r\n")])).values
    assert typed == {"reason": "a\nb\n"}
    assert read_input(form, values)["at"] == "2026-07-01T18:05:00+02:00"
    # An offset that is none is not appended: the broker says what the time lacks.
    forged = clicks.fill(posted([("text.at", "2026-07-01T18:05"), ("zone.at", "x")])).values
    with pytest.raises(FormRefused, match="with its offset"):
        read_input(form, {**forged, "reason": "quarterly"})


@pytest.mark.parametrize(
    ("action", "intent"), [("decline", Decline()), ("cancel", Cancel())], ids=str
)
def test_decline_and_cancel_ignore_the_values(action: str, intent: object) -> None:
    data = [("shape", "form"), ("text.replicas", "99"), ("action", action), ("name", " Lin ")]
    click = clicks.parse(posted(data))
    assert (click.intent, click.name) == (intent, "Lin")


def test_unchecked_boxes_are_false_and_none_checked_is_left_empty() -> None:
    data = [("shape", "form"), ("flag.canary", "false"), ("action", "submit")]
    assert clicks.parse(posted(data)).intent == Fill({"canary": False})
    checked = [*data, ("flag.canary", "true"), ("choices.checks", "a"), ("choices.checks", "a")]
    assert clicks.parse(posted(checked)).intent == Fill({"canary": True, "checks": ["a"]})
    # The question page's form, with no shape, stays a Submit.
    assert not isinstance(clicks.parse(posted([("q0", "1")])).intent, Fill)


def test_a_refused_value_is_marked_at_its_field_and_everything_typed_is_kept() -> None:
    given = {
        "contact": "ops@example.com",
        "replicas": "42",
        "canary": False,
        "region": "us-east-1",
        "checks": ["load", "security"],
    }
    problems = {"replicas": "must be at most 10, got 42"}
    html = page(RELEASE_FORM, values=given, problems=problems, name="Lin")
    form = typed_form(html)
    sent = form.data
    assert ("text.contact", "ops@example.com") in sent
    assert ("text.replicas", "42") in sent
    assert ("flag.canary", "true") not in sent
    assert ("choice.region", "us-east-1") in sent
    assert [v for k, v in sent if k == "choices.checks"] == ["load", "security"]
    assert ("name", "Lin") in sent
    replicas = form.inputs["text.replicas"]
    assert replicas["aria-invalid"] == "true"
    assert replicas["aria-describedby"] == "f1-error"
    assert "aria-invalid" not in form.inputs["text.contact"]
    assert "<p class='error' id='f1-error'>Replicas must be at most 10, got 42.</p>" in html
    assert (
        "<p class='error' role='alert'>Nothing was recorded: Replicas must be at most 10, "
        "got 42.</p>"
    ) in html
    # A field left empty when refused stays empty: the default does not come back.
    assert ("text.replicas", "3") not in typed_form(page(RELEASE_FORM, values={})).data


def test_a_url_form_shows_its_link_as_it_is_with_done_and_decline() -> None:
    html = page({"message": "Sign in to the billing console", "url": "https://example.com/a?b=1&c"})
    assert (
        "<a id='link' href='https://example.com/a?b=1&amp;c' rel='noopener noreferrer' "
        "target='_blank'>https://example.com/a?b=1&amp;c</a>"
    ) in html
    assert "value='submit'>Done</button>" in html
    assert ">Decline</button>" in html
    assert typed_form(html).inputs.keys() == {"csrf", "shape", "name"}
    assert render.web_link("javascript:alert(1)") is None
    assert render.web_link("https://example.com/ x") is None
    assert clicks.parse(posted([("shape", "form"), ("action", "submit")])).intent == Fill({})


# --- over HTTP, as a browser without scripts posts the form --------------------------------


async def ask(http: aiohttp.ClientSession, url: str, request_id: str, **body: Any) -> None:
    async with http.post(f"{url}/v1/questions", json={"request_id": request_id, **body}) as reply:
        assert reply.status == 201, await reply.text()


async def votes(http: aiohttp.ClientSession, url: str, request_id: str) -> int:
    return [e["kind"] for e in await audit_events(http, url, request_id)].count("vote")


FILLED: dict[str, str | list[str]] = {
    "text.contact": "ops@example.com",
    "text.replicas": "7",
    "choice.region": "eu-west-1",
    "choices.checks": ["security", "smoke"],
}


async def test_a_form_posted_twice_is_one_vote_and_the_agent_gets_typed_values(
    service: Service, http: aiohttp.ClientSession
) -> None:
    await ask(http, service.url, "ask_release", form=RELEASE_FORM, quorum=2)
    async with http.get(f"{service.url}/q/ask_release") as response:
        form = typed_form(await response.text())
    data = [(k, v) for k, v in form.data if not k.startswith(("text.", "choice"))]
    data += [(k, v) for k, vs in FILLED.items() for v in ([vs] if isinstance(vs, str) else vs)]
    data += [("name", "Ada"), ("action", "submit")]
    for _ in range(2):
        async with http.post(f"{service.url}/q/ask_release", data=data) as response:
            assert response.status == 200
    assert await votes(http, service.url, "ask_release") == 1
    status, _ = await fill_on_web(http, service.url, "ask_release", FILLED, name="Lin")
    assert status == 200
    async with http.get(f"{service.url}/v1/questions/ask_release") as response:
        found = await response.json()
    assert (found["status"], found["action"]) == ("answered", "accept")
    assert found["content"] == {
        "contact": "ops@example.com",
        "replicas": 7,
        "canary": True,
        "region": "eu-west-1",
        "checks": ["smoke", "security"],
    }


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ({"text.replicas": "42"}, "Replicas must be at most 10, got 42."),
        ({"text.replicas": "4.5"}, "Replicas must be a whole number, got '4.5'."),
        ({"text.contact": "ops"}, "Contact must be an email address such as"),
        ({"choice.region": "mars-1"}, "Region must be one of"),
        ({"text.stray": "<b>x</b>"}, "stray is not a field of this form."),
    ],
    ids=["out of bounds", "not whole", "no email", "no such choice", "no such field"],
)
async def test_a_value_refused_over_http_is_marked_and_nothing_is_recorded(
    service: Service,
    http: aiohttp.ClientSession,
    values: dict[str, str | list[str]],
    problem: str,
) -> None:
    await ask(http, service.url, "ask_release", form=RELEASE_FORM)
    status, html = await fill_on_web(http, service.url, "ask_release", FILLED | values)
    assert status == 422
    assert problem in unescape(html)
    assert "<b>" not in html
    assert await votes(http, service.url, "ask_release") == 0
    # What was typed is kept (a select holds only its own choices).
    kept = typed_form(html).data
    for key, value in (FILLED | values).items():
        if key.startswith("text.") and key != "text.stray":
            assert (key, value) in kept


async def test_a_form_posted_to_the_other_kind_of_request_counts_for_nothing(
    service: Service, http: aiohttp.ClientSession
) -> None:
    await ask(http, service.url, "ask_release", form=RELEASE_FORM)
    await ask(http, service.url, "ask_deploy", questions=[DEPLOY])
    form = await read_form(http, service.url, "ask_deploy")
    # The question's form, with a typed form's shape: a Fill for a request of questions.
    data = {"csrf": form.csrf, "shape": "form", "text.replicas": "3", "action": "submit"}
    async with http.post(f"{service.url}/q/ask_deploy", data=data) as response:
        assert response.status == 400
    # A question's answer posted to a form.
    async with http.get(f"{service.url}/q/ask_release") as response:
        csrf = dict(typed_form(await response.text()).data)["csrf"]
    data = {"csrf": csrf, "q0": "0", "action": "submit"}
    async with http.post(f"{service.url}/q/ask_release", data=data) as response:
        assert response.status == 400
    for request_id in ("ask_release", "ask_deploy"):
        assert await votes(http, service.url, request_id) == 0


async def test_a_form_of_ten_fields_is_shown_whole_and_filled_in(
    service: Service, http: aiohttp.ClientSession
) -> None:
    form = copy.deepcopy(RELEASE_FORM)
    properties = form["requested_schema"]["properties"]
    for number in range(1, 6):
        properties[f"step{number}"] = {"type": "string", "title": f"Step {number}"}
    await ask(http, service.url, "ask_ten", form=form)
    async with http.get(f"{service.url}/q/ask_ten") as response:
        shown = typed_form(await response.text())
    names = [f"text.step{n}" for n in range(1, 6)]
    assert set(names) <= {name for name, _ in shown.data}
    steps: dict[str, str | list[str]] = {name: f"do {name[-1]}" for name in names}
    status, _ = await fill_on_web(http, service.url, "ask_ten", FILLED | steps)
    assert status == 200
    async with http.get(f"{service.url}/v1/questions/ask_ten") as response:
        found = await response.json()
    assert found["content"] == {
        "contact": "ops@example.com",
        "replicas": 7,
        "canary": True,
        "region": "eu-west-1",
        "checks": ["smoke", "security"],
        **{f"step{n}": f"do {n}" for n in range(1, 6)},
    }


async def test_a_required_multi_choice_that_may_hold_none_is_answered_with_none(
    service: Service, http: aiohttp.ClientSession
) -> None:
    """Required with minItems 0: no box checked is the answer [], not a field left empty."""
    tags = {"type": "array", "title": "Tags", "items": {"enum": ["a", "b"]}, "minItems": 0}
    schema = {"type": "object", "properties": {"tags": tags}, "required": ["tags"]}
    await ask(http, service.url, "ask_none", form={"message": "Tags?", "requested_schema": schema})
    status, page = await fill_on_web(http, service.url, "ask_none", {})
    assert status == 200, page
    async with http.get(f"{service.url}/v1/questions/ask_none") as response:
        found = await response.json()
    assert (found["status"], found["content"]) == ("answered", {"tags": []})
