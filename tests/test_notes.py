"""Which note follows which outcome is decided once (`core.intents.note_for`); each surface
only words it: Slack and Discord in a private note, the web page in the page it answers with."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from askbridge.adapters.discord.notes import note as discord_note
from askbridge.adapters.slack.notes import note as slack_note
from askbridge.adapters.web.clicks import Click
from askbridge.adapters.web.notes import respond
from askbridge.core.forms import parse_form
from askbridge.core.intents import (
    Counted,
    Decided,
    Drafted,
    Note,
    Outcome,
    Refusal,
    Refused,
    Submit,
    note_for,
)
from askbridge.core.models import QuestionOption, Request, Status, Target, UserQuestion
from askbridge.core.view import Receipt, RequestView

QUESTIONS = tuple(
    UserQuestion(
        question=f"Question {q}?",
        header=f"Q{q}",
        options=(QuestionOption(label="Yes"), QuestionOption(label="No")),
    )
    for q in range(2)
)


def view(status: Status = Status.WAITING) -> RequestView:
    return RequestView.of(
        Request(
            request_id="ask_1",
            questions=QUESTIONS,
            targets=(Target(platform="web"),),
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
            status=status,
        )
    )


WAITING, ENDED = view(), view(Status.CANCELLED)
FORM_WAITING = RequestView.of(
    WAITING.request.model_copy(
        update={
            "questions": (),
            "form": parse_form(
                {
                    "message": "Which ticket?",
                    "requested_schema": {
                        "type": "object",
                        "properties": {"ticket": {"type": "integer", "minimum": 1}},
                    },
                }
            ),
        }
    )
)
OUTCOMES: list[tuple[Outcome, Note | None]] = [
    (Decided(ENDED), None),
    (Refused(Refusal.REPLAYED, WAITING), None),
    (Counted(WAITING, Receipt({"Q0": "Yes"}, 1, 2)), Note.COUNTED),
    (Drafted(WAITING, 0, {0: (1,)}), Note.DRAFTED),
    (Refused(Refusal.UNKNOWN_REQUEST), Note.GONE),
    (Refused(Refusal.ALREADY_ENDED), Note.GONE),
    (Refused(Refusal.NOT_ANSWERER), Note.GONE),
    (Refused(Refusal.FOREIGN_MESSAGE, WAITING), Note.FOREIGN),
    (Refused(Refusal.SELF_APPROVAL, WAITING), Note.SELF_APPROVAL),
    (Refused(Refusal.NOT_ANSWERER, WAITING), Note.NOT_ANSWERER),
    (Refused(Refusal.ALREADY_ENDED, ENDED), Note.ENDED),
    (Refused(Refusal.MISSING_ANSWERS, WAITING, ("Q1",)), Note.MISSING_ANSWERS),
    (Refused(Refusal.BAD_TEXT, WAITING, problems={0: "Too long."}), Note.BAD_TEXT),
    (
        Refused(
            Refusal.BAD_VALUES,
            FORM_WAITING,
            field_problems={"ticket": "must be at least 1, got 0"},
            values={"ticket": "0"},
        ),
        Note.BAD_VALUES,
    ),
]


def test_every_refusal_has_a_note() -> None:
    noted = {outcome.reason for outcome, _ in OUTCOMES if isinstance(outcome, Refused)}
    assert noted == set(Refusal)
    assert {note for _, note in OUTCOMES} == {*Note, None}


@pytest.mark.parametrize(("outcome", "expected"), OUTCOMES)
def test_the_note_is_decided_once_and_every_surface_words_it(
    outcome: Outcome, expected: Note | None
) -> None:
    assert note_for(outcome) is expected
    # Slack keeps a choice in the person's client, so a click there is never drafted.
    assert (slack_note(outcome) is None) == (expected in (None, Note.DRAFTED))
    assert (discord_note(outcome) is None) == (expected is None)
    page = respond(outcome, Click("", Submit()), request_id="ask_1", token="t", version=1)
    statuses = {
        None: 303,
        Note.DRAFTED: 303,
        Note.COUNTED: 200,
        Note.GONE: 404,
        Note.FOREIGN: 400,
        Note.SELF_APPROVAL: 403,
        Note.NOT_ANSWERER: 403,
        Note.ENDED: 409,
        Note.MISSING_ANSWERS: 422,
        Note.BAD_TEXT: 422,
        Note.BAD_VALUES: 422,
    }
    assert page.status == statuses[expected]
