"""Hostile text from agents and people is inert in every Slack message, note and answer form:
it pings nobody, links nowhere, restyles nothing, and the payload passes Slack's checks. That
includes answers in people's own words and their notes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from askbridge.adapters.slack.forms import form, notice
from askbridge.adapters.slack.ids import FormMetadata
from askbridge.adapters.slack.notes import note, reminder_line
from askbridge.adapters.slack.render import render
from askbridge.adapters.slack.text import Line, block, mrkdwn, section
from askbridge.core.intents import NOTE, Action, Counted, Refusal, Refused
from askbridge.core.models import Person, Request, Selections
from askbridge.core.view import Receipt, RequestView
from tests.emulators.slack import (
    Mentions,
    mentions,
    mrkdwn_markup,
    validate_blocks,
    validate_view,
)
from tests.hostile import hostile_text, people, requests

EXAMPLES = settings(max_examples=500, derandomize=True, deadline=None)


def own_mentions(request: Request) -> Mentions:
    """The mentions askbridge itself writes: Slack answerers, and Slack people by their id."""
    users, groups = set(), set()
    for entry in request.policy.answerers:
        kind, _, value = entry.partition(":")
        if kind == "slack":
            users.add(value)
        elif kind == "slack-group":
            groups.add(value)
    acted = [v.person for v in request.votes]
    acted += [p for p in (request.answered_by, request.cancelled_by, request.declined_by) if p]
    users.update(p.id for p in acted if p.platform == "slack")
    return Mentions(users=frozenset(users), usergroups=frozenset(groups))


def assert_inert(text: str, blocks: list[Any], request: Request) -> None:
    """Only askbridge's own mentions, no broadcast, channel or link, no mrkdwn styling."""
    assert validate_blocks(blocks) == []
    found = mentions(text, blocks)
    allowed = own_mentions(request)
    assert found.users <= allowed.users
    assert found.usergroups <= allowed.usergroups
    assert not found.broadcasts
    assert not found.channels
    assert not found.links
    assert not mrkdwn_markup(text).live, text


@EXAMPLES
@given(requests())
def test_every_message_is_inert(request: Request) -> None:
    view = RequestView.of(request)
    payload = render(view, "r1")
    assert_inert(payload["text"], json.loads(json.dumps(payload["blocks"])), request)
    if view.waiting:
        assert_note_inert(reminder_line(view), request)


@EXAMPLES
@given(requests(), people(), st.sampled_from(list(Refusal)))
def test_every_note_is_inert(request: Request, person: Person, reason: Refusal) -> None:
    view = RequestView.of(request)
    missing = (request.questions[0].header,)
    # BAD_TEXT names each refused field by its header (or the note's label).
    problems = {0: "Please remove the control characters.", NOTE: "This question takes no notes."}
    assert_note_inert(note(Refused(reason, view, missing, problems=problems)), request)
    receipt = Receipt(request.answers or {"h": person.name}, 1, 2)
    assert_note_inert(note(Counted(view, receipt)), request)


def assert_note_inert(line: Line | None, request: Request) -> None:
    if line is not None:
        blocks = json.loads(json.dumps([block("ab-note", [section(line)])]))
        assert_inert(mrkdwn(line), blocks, request)


@st.composite
def requests_in_own_words(draw: st.DrawFn) -> Request:
    """A request from `requests()` that takes answers in one's own words and notes: its votes
    agree in pairs on hostile typed answers, each with a hostile note, and an answered request
    has the first pair's answer."""
    request = draw(requests())
    headers = [q.header for q in request.questions]
    typed = [{h: draw(hostile_text()).strip() or "x" for h in headers} for _ in range(2)]
    votes = tuple(
        vote.model_copy(
            update={"answers": typed[i % 2], "notes": {headers[0]: draw(hostile_text())}}
        )
        for i, vote in enumerate(request.votes)
    )
    policy = request.policy.model_copy(update={"allow_other": True, "allow_notes": True})
    update: dict[str, object] = {"votes": votes, "policy": policy}
    if request.answers is not None:
        update["answers"] = typed[0]
    return request.model_copy(update=update)


@EXAMPLES
@given(requests_in_own_words(), st.sampled_from([Action.WORDS, Action.ADD_NOTE]))
def test_own_words_and_notes_are_inert_in_messages_and_forms(
    request: Request, kind: Action
) -> None:
    view = RequestView.of(request)
    payload = render(view, "r1")
    assert_inert(payload["text"], json.loads(json.dumps(payload["blocks"])), request)
    for vote in request.votes:
        assert_note_inert(note(Counted(view, Receipt(vote.answers, 1, 2))), request)
    picks: Selections = {i: (0,) for i in range(len(request.questions))}
    metadata = FormMetadata(request.request_id, "C1", "1700000000.000100", {"team_id": "T1"})
    modal = json.loads(json.dumps(form(view, picks, kind, metadata)))
    assert validate_view(modal) == []
    assert mentions(None, modal["blocks"]).none
    for reason in Refusal:
        line = note(Refused(reason, view, missing=(request.questions[0].header,)))
        if line is not None:
            ended = json.loads(json.dumps(notice(line)))
            assert validate_view(ended) == []
            assert_inert("", ended["blocks"], request)
