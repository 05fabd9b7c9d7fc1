"""Hostile text in every field and every name, in every state, with any tool call: the Teams
card Teams would render (`cards.check_card`), every text an agent or a person wrote shown as
written in plain runs, and no Markdown text on it but askbridge's own words. Texts far past
Teams' size limit are cut to fit it."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askbridge.adapters.teams.notes import note
from askbridge.adapters.teams.render import MAX_CARD_BYTES, render
from askbridge.adapters.teams.surface import TeamsSurface
from askbridge.core.answers import NOTE_HINT
from askbridge.core.forms import parse_form
from askbridge.core.intents import Counted, Refusal, Refused
from askbridge.core.models import Request, Target
from askbridge.core.surface import form_fields_of
from askbridge.core.view import (
    CANCEL_HINT,
    CANCEL_QUESTION,
    CANCEL_WARNING,
    Receipt,
    RequestView,
)
from tests.emulators.teams.cards import (
    card_inputs,
    check_card,
    markdown_texts,
    mentioned,
    plain_texts,
)
from tests.hostile import (
    FORM_EXAMPLES,
    FormCase,
    form_cases,
    form_request,
    hostile_text,
    largest_form,
    requests,
)

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


@FORM_EXAMPLES
@given(form_cases())
def test_a_hostile_form_stays_plain_on_every_card(case: FormCase) -> None:
    """Every kind of field, hostile names, titles, descriptions, choices, defaults and values,
    in every state: the card with its inputs and defaults, the card after a refusal (what was
    typed kept, each reason under its field, the note above), and the ended card with the
    values given or who declined, each one Teams takes, with no mention and no Markdown of an
    agent's or a person's text."""
    view = RequestView.of(case.request)
    cards = [render(view)]
    refused = Refused(Refusal.BAD_VALUES, view, field_problems=case.problems, values=case.typed)
    told = note(refused)
    assert told is not None
    if view.waiting:
        cards.append(render(view, told, given=case.typed, problems=case.problems))
        votes = case.request.votes
        cards += [render(view, note(Counted(view, Receipt(v.answers, 1, 2)))) for v in votes]
    else:
        cards.append(render(view, note(Refused(Refusal.ALREADY_ENDED, view))))
    for card in cards:
        assert_inert(view, card)
        assert mentioned(card) == []
    shown = "\n".join(plain_texts(cards[0]))
    if len(json.dumps(cards[0])) < MAX_CARD_BYTES // 2:
        # Not cut to fit: every text of the form is there to read as written.
        assert case.form.message.strip() in shown
        for field, value in view.filled_in():
            assert value in shown, (field.title, value)
        if view.waiting and len(json.dumps(cards[1])) < MAX_CARD_BYTES // 2:
            assert told in plain_texts(cards[1])


def test_a_form_link_holding_what_a_uri_cannot_is_sent_percent_encoded() -> None:
    """Found by the property above: Teams refused the whole card of a URL-mode form whose
    link held `<` (an Action.OpenUrl takes a URI only). The button opens the same page, its
    address encoded as a browser sends it; the card shows the link as the agent gave it."""
    url = "https://e.example/<!channel>|%zz é#a#b"
    form = parse_form({"message": "Sign in", "url": url.replace(" ", "")})
    request = Request(
        request_id="form_link",
        questions=(),
        form=form,
        targets=(Target(platform="teams", channel="19:c"),),
        created_at=datetime(2030, 1, 1, tzinfo=UTC),
    )
    card = render(RequestView.of(request))
    check_card(card)
    opened = [a for a in card["actions"] if a["type"] == "Action.OpenUrl"]
    assert [a["url"] for a in opened] == ["https://e.example/%3C!channel%3E%7C%25zz%C3%A9#a%23b"]
    assert url.replace(" ", "") in "\n".join(plain_texts(card))


def test_the_largest_form_teams_shows_fits_in_a_card() -> None:
    """As many fields as a Teams card is given, each as large as a form takes: the card keeps
    within Teams' size limit with every choice on it (a choice's title is not cut to fit)."""
    form = parse_form(largest_form(form_fields_of(TeamsSurface)))
    card = render(RequestView.of(form_request(form, "teams")))
    check_card(card)
    inputs = card_inputs(card).values()
    choices = [c["title"] for i in inputs if i["type"] == "Input.ChoiceSet" for c in i["choices"]]
    assert choices == [c.title for f in form.fields for c in f.choices]
