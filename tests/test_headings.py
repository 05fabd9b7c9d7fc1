"""Every surface heads an ended request, tells a waiting one's policy and reminds its answerers
in the same words, the ones core/view.py has: only how a person is shown (a mention, bold,
plain), how a time is shown, and each surface's own marks differ."""

from __future__ import annotations

import html
from datetime import UTC, datetime
from typing import Any, cast

import pytest

from askbridge.adapters.discord.lines import reminder as discord_reminder
from askbridge.adapters.discord.notes import note as discord_note
from askbridge.adapters.discord.render import render as discord_render
from askbridge.adapters.slack.notes import note as slack_note
from askbridge.adapters.slack.notes import reminder_line
from askbridge.adapters.slack.render import render as slack_render
from askbridge.adapters.slack.text import SLOT, mrkdwn
from askbridge.adapters.web import render as web_render
from askbridge.adapters.web.notes import vote_note as web_vote_note
from askbridge.core.intents import NOTE, Counted, Refusal, Refused
from askbridge.core.models import Person, Request, Status, Target, Vote
from askbridge.core.questions import parse_questions
from askbridge.core.view import (
    CANCEL_HINT,
    HEADINGS,
    WHO_MAY_ANSWER,
    Receipt,
    RequestView,
    State,
)
from tests.conftest import DEPLOY
from tests.emulators.discord.components import visible_text as discord_text
from tests.emulators.slack.blocks import visible_text as slack_text

WHEN = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
PEOPLE = {
    "slack": (Person(platform="slack", id="U0ALICE"), Person(platform="slack", id="U0BOB")),
    "discord": (
        Person(platform="discord", id="4242", name="Alice"),
        Person(platform="discord", id="4343", name="Bob"),
    ),
    "web": (Person(platform="web", id="alice", name="Alice"), Person(platform="web", id="bob")),
}
SHOWN = {"slack": ("<@U0ALICE>", "<@U0BOB>"), "discord": ("**Alice**", "**Bob**")}
SHOWN["web"] = ("Alice", "bob")
ENDINGS: dict[str, tuple[Status, str]] = {
    "answered": (Status.ANSWERED, "Answered by {deciders}"),
    "agreed": (Status.ANSWERED, "Answered by {deciders} (2 matching votes)"),
    "timeout": (Status.ANSWERED, "Decided by timeout"),
    "cancelled": (Status.CANCELLED, "Cancelled by {deciders} — the agent was interrupted"),
    "expired": (Status.EXPIRED, "Expired without an answer"),
    "withdrawn": (Status.WITHDRAWN, "Withdrawn by the agent"),
}


def ended(surface: str, ending: str) -> RequestView:
    alice, bob = PEOPLE[surface]
    status, _ = ENDINGS[ending]
    answers = {"Deploy": "Approve"}
    fields: dict[str, Any] = {"status": status, "ended_at": WHEN}
    if ending == "answered":
        fields.update(answers=answers, answered_by=alice)
    if ending == "agreed":
        both = tuple(Vote(person=p, answers=answers, at=WHEN) for p in (alice, bob))
        fields.update(answers=answers, answered_by=bob, votes=both)
        fields["policy"] = {"quorum": 2}
    if ending == "timeout":
        fields.update(answers=answers)  # answered, by nobody: the deadline's answers
    if ending == "cancelled":
        fields.update(cancelled_by=alice)
    return view_of(surface, fields)


def view_of(surface: str, fields: dict[str, Any]) -> RequestView:
    """The view of a request posted on `surface`, asking DEPLOY, with these fields."""
    asked = {
        "request_id": "ask_heading",
        "questions": parse_questions([DEPLOY]),
        "targets": (Target(platform=surface, channel="C1"),),
        "created_at": WHEN,
    }
    return RequestView.of(Request.model_validate({**asked, **fields}))


def shown_on(surface: str, view: RequestView) -> str:
    if surface == "slack":
        payload = slack_render(view, "r1")
        return slack_text(payload["text"], cast("list[dict[str, Any]]", payload["blocks"]))
    if surface == "discord":
        components = discord_render(view).to_components()  # type: ignore[no-untyped-call]
        return discord_text("", [], components)
    return html.unescape(web_render.outcome(view, version=1))


@pytest.mark.parametrize("surface", ["slack", "discord", "web"])
@pytest.mark.parametrize("ending", list(ENDINGS))
def test_every_surface_heads_an_ending_in_the_same_words(surface: str, ending: str) -> None:
    view = ended(surface, ending)
    _, words = ENDINGS[ending]
    assert view.heading == words
    assert view.heading in HEADINGS.values() or view.state is State.ANSWERED
    alice, bob = SHOWN[surface]
    deciders = f"{alice}, {bob}" if ending == "agreed" else alice
    assert words.format(deciders=deciders) in shown_on(surface, view)


ANSWERERS = {"slack": "slack:U0ALICE", "discord": "discord:@4242", "web": "web:alice"}
MENTIONED = {"slack": "<@U0ALICE>", "discord": "<@4242>", "web": "alice"}
"""Each surface names its own people its own way: the page, by the name they type."""


def waiting(surface: str, on_timeout: str) -> RequestView:
    alice, _ = PEOPLE[surface]
    policy: dict[str, Any] = {"answerers": (ANSWERERS[surface],), "quorum": 2}
    if on_timeout == "answers":
        policy["timeout_answers"] = {"Deploy": "Reject"}
    vote = Vote(person=alice, answers={"Deploy": "Approve"}, at=WHEN)
    return view_of(surface, {"expires_at": WHEN, "policy": policy, "votes": (vote,)})


def assert_worded(template: str, text: str) -> None:
    """Every word of `template` outside its slots is in `text`, in order, and every one of its
    slots was filled."""
    for slot in SLOT.findall(template):
        assert f"{{{slot}}}" not in text, f"{{{slot}}} of {template!r} is left in {text!r}"
    at = 0
    for words in SLOT.split(template)[::2]:
        found = text.find(words, at)
        assert found >= 0, f"{words!r} (of {template!r}) is not in {text[at:]!r}"
        at = found + len(words)


@pytest.mark.parametrize("surface", ["slack", "discord", "web"])
@pytest.mark.parametrize("on_timeout", ["answers", "expire"])
def test_every_surface_tells_the_policy_in_the_same_words(surface: str, on_timeout: str) -> None:
    view = waiting(surface, on_timeout)
    shown = (
        html.unescape(web_render.form(view, token="t", version=1))
        if surface == "web"
        else shown_on(surface, view)
    )
    assert WHO_MAY_ANSWER.format(answerers=MENTIONED[surface]) in shown
    assert view.votes_needed in shown
    if surface != "web":  # the page always has Submit, and says so per question
        assert f"{view.how_to_answer} {CANCEL_HINT}" in shown
    [row] = view.tally
    assert_worded(view.tally_line(row), shown)
    assert " — 1/2 (" in view.tally_line(row)
    assert view.deadline_line is not None
    assert_worded(view.deadline_line, shown)
    if on_timeout == "answers":
        assert "the answer is " in view.deadline_line
        assert "Reject" in shown.split("the answer is ", 1)[1]


@pytest.mark.parametrize("surface", ["slack", "discord"])
@pytest.mark.parametrize("on_timeout", ["answers", "expire"])
def test_every_surface_reminds_in_the_same_words(surface: str, on_timeout: str) -> None:
    view = waiting(surface, on_timeout)
    shown = mrkdwn(reminder_line(view)) if surface == "slack" else discord_reminder(view)
    assert view.reminder.startswith("Reminder for {answerers}: ")
    assert "It has 1 of 2 matching votes so far." in view.reminder
    assert_worded(view.reminder, shown)
    assert f"Reminder for {MENTIONED[surface]}: " in shown


def test_every_surface_tells_a_counted_vote_in_the_same_words() -> None:
    receipt = Receipt(answers={"Deploy": "Approve"}, matching=1, quorum=2)
    told = {
        "slack": mrkdwn(slack_note(Counted(view_of("slack", {}), receipt)) or []),
        "discord": (discord_note(Counted(view_of("discord", {}), receipt)) or "").replace("**", ""),
        "web": web_vote_note(receipt),
    }
    words = (
        "Your vote is counted: 1 of 2 matching votes so far, for Deploy: Approve. "
        "You can change it until the question is decided."
    )
    assert told == dict.fromkeys(told, words)


def test_slack_and_discord_name_what_was_not_taken_in_the_same_words() -> None:
    problems = {NOTE: "This question takes no notes.", 0: "Please remove the control characters."}
    words = (
        "Nothing was recorded: Deploy: Please remove the control characters. A note for the "
        "agent: This question takes no notes."
    )
    told = {}
    for surface in ("slack", "discord"):
        refused = Refused(Refusal.BAD_TEXT, view_of(surface, {}), problems=problems)
        if surface == "slack":
            told[surface] = mrkdwn(slack_note(refused) or [])
        else:
            shown = (discord_note(refused) or "").replace("**", "").replace("\n- ", " ")
            told[surface] = shown
    assert told == dict.fromkeys(told, words)
