"""Hostile text in every field and every name, in every state, with any tool call: the Teams
card Teams would render (`cards.check_card`), every text an agent or a person wrote shown as
written in plain runs, and no Markdown text on it but askbridge's own words. Texts far past
Teams' size limit are cut to fit it."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askbridge.adapters.teams.notes import note
from askbridge.adapters.teams.render import render
from askbridge.core.answers import NOTE_HINT
from askbridge.core.intents import Refusal, Refused
from askbridge.core.models import Request
from askbridge.core.view import CANCEL_HINT, CANCEL_QUESTION, CANCEL_WARNING, RequestView
from tests.emulators.teams.cards import check_card, markdown_texts, plain_texts
from tests.hostile import hostile_text, requests

DYNAMIC_OWN = re.compile(r"and \d+ more|\d+ more (line is|lines are) not shown here")


def own_words(view: RequestView) -> set[str]:
    """Every Markdown text askbridge itself may put on the card of `view`."""
    return {
        view.heading,
        view.votes_needed,
        f"{view.how_to_answer} {CANCEL_HINT}",
        NOTE_HINT,
        CANCEL_QUESTION,
        CANCEL_WARNING,
    }


def assert_inert(view: RequestView, card: dict[str, object]) -> None:
    check_card(card)
    own = own_words(view)
    for text in markdown_texts(card):
        assert text in own or DYNAMIC_OWN.fullmatch(text), text


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(requests(), hostile_text())
def test_every_card_is_inert_and_shows_texts_as_written(request: Request, said: str) -> None:
    view = RequestView.of(request)
    card = render(view)
    assert_inert(view, card)
    shown = "\n".join(plain_texts(card))
    for question in view.questions:
        assert question.header in shown
        if view.waiting:
            assert all(option.label in shown for option in question.options)
    refused = Refused(Refusal.MISSING_ANSWERS, view, missing=(said,))
    told = render(view, note(refused))
    assert_inert(view, told)
    assert said in "\n".join(plain_texts(told))


@settings(max_examples=10, deadline=None)
@given(requests(), st.integers(5_000, 40_000))
def test_a_card_past_teams_limit_is_cut_to_fit(request: Request, size: int) -> None:
    long = ("*x* 👩‍👩‍👧 " * size)[:size]
    questions = tuple(
        q.model_copy(
            update={
                "question": long,
                "options": tuple(o.model_copy(update={"description": long}) for o in q.options),
            }
        )
        for q in request.questions
    )
    view = RequestView.of(request.model_copy(update={"questions": questions, "context": long}))
    assert_inert(view, render(view))
