"""A form request (no questions) in every state renders on every surface without failing, and
the words for it come from the view once."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from askbridge.adapters.discord import render as discord_render
from askbridge.adapters.slack import render as slack_render
from askbridge.adapters.teams import render as teams_render
from askbridge.adapters.web import render as web_render
from askbridge.core.ask import Ask
from askbridge.core.forms import encode
from askbridge.core.models import Person, Request, Status, Target, Vote
from askbridge.core.view import RequestView, State, end_sentence
from tests.test_forms_engine import FORM

AT = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
ADA = Person(platform="slack", id="U1", name="Ada")
ASKED = Ask.parse(
    {
        "form": FORM,
        "quorum": 2,
        "timeout_s": 60,
        "on_timeout": {"content": {"version": "v0", "replicas": 1}},
    }
)
ANSWERS = encode({"version": "v1 <@U2> *x*", "replicas": 2, "canary": False})
BASE = Request(
    request_id="form_1",
    questions=(),
    targets=(Target(platform="slack", channel="C1"),),
    created_at=AT,
    expires_at=AT,
    policy=ASKED.policy,
    form=ASKED.form,
)
VOTE = Vote(person=ADA, answers=ANSWERS, at=AT)
ENDED = {"ended_at": AT}
STATES = {
    "waiting": BASE,
    "one vote": BASE.model_copy(update={"votes": (VOTE,)}),
    "answered": BASE.model_copy(
        update={"status": Status.ANSWERED, "answers": ANSWERS, "answered_by": ADA, **ENDED}
    ),
    "by timeout": BASE.model_copy(update={"status": Status.ANSWERED, "answers": ANSWERS, **ENDED}),
    "declined": BASE.model_copy(update={"status": Status.DECLINED, "declined_by": ADA, **ENDED}),
    "declined at the deadline": BASE.model_copy(update={"status": Status.DECLINED, **ENDED}),
    "cancelled": BASE.model_copy(update={"status": Status.CANCELLED, "cancelled_by": ADA, **ENDED}),
}


@pytest.mark.parametrize("name", STATES)
def test_every_surface_renders_a_form_request(name: str) -> None:
    view = RequestView.of(STATES[name])
    slack_render.render(view, "1")
    slack_render.fallback(view)
    discord_render.render(view)
    teams_render.render(view)
    page = web_render.outcome(view, version=1)
    web_render.form(view, token="t", version=1)
    listed = web_render.index([view], [view], version=1)
    assert "Release details" in listed
    if view.state in (State.ANSWERED, State.DECIDED_BY_TIMEOUT):
        # The values as people read them, hostile text escaped by the template.
        assert "Replicas" in page
        assert "v1 &lt;@U2&gt; *x*" in page


def test_the_view_words_a_form() -> None:
    waiting = RequestView.of(BASE)
    assert waiting.title == "Form"
    assert waiting.lead == "Release details"
    assert waiting.how_to_answer.startswith("Filling in the form casts your vote")
    assert waiting.deadline_line == "If nobody decides by {deadline}, the answer is {answers}"
    assert waiting.default_answers is not None
    assert waiting.summary(waiting.default_answers) == "Version: v0; Replicas: 1"
    declining = RequestView.of(
        BASE.model_copy(update={"policy": BASE.policy.model_copy(update={"timeout_decline": True})})
    )
    # Several must fill it in alike: one may have already.
    assert declining.deadline_line == "If nobody decides by {deadline}, it is declined"
    declined = RequestView.of(STATES["declined"])
    assert declined.heading == "Declined by {deciders} — the agent was told no"
    assert end_sentence(declined) == "This form was declined by Ada."
    at_deadline = RequestView.of(STATES["declined at the deadline"])
    assert at_deadline.heading == "Declined at the deadline — the agent was told no"
    assert end_sentence(at_deadline) == "This form was declined at its deadline."
    answered = RequestView.of(STATES["one vote"])
    receipt = answered.receipt(ADA)
    assert receipt is not None
    assert receipt.answers == {"Version": "v1 <@U2> *x*", "Replicas": "2", "Canary": "No"}
