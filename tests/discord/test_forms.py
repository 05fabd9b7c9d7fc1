"""The form for answers in one's own words on its own: which fields it holds, Discord's limits
for any request, how a refusal is worded, and a final message full of long words and notes."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from askbridge.adapters.discord import forms
from askbridge.adapters.discord.notes import note
from askbridge.adapters.discord.render import render
from askbridge.core.intents import NOTE, Refusal, Refused
from askbridge.core.models import Person, Policy, Request, Status, Target, Vote
from askbridge.core.questions import parse_questions
from askbridge.core.view import FOREIGN_CLICK, RequestView
from tests.conftest import DATABASE, DEPLOY
from tests.emulators.discord import validate_message, validate_modal
from tests.emulators.discord.components import TEXT_DISPLAY, count_components, walk

WHEN = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
ALICE = Person(platform="discord", id="4242", name="Alice")
FOUR_BY_FOUR: list[dict[str, Any]] = [
    {
        "question": f"Question {q}? " + "Why " * 40,
        "header": f"Question {q}",
        "multiSelect": q % 2 == 1,
        "options": [{"label": f"Option {o} " + "x" * 900, "description": "d"} for o in range(4)],
    }
    for q in range(4)
]


def view(questions: Any = None, context: str | None = None, **policy: Any) -> RequestView:
    return RequestView.of(
        Request(
            request_id="ask_f",
            questions=parse_questions(copy.deepcopy(questions or DATABASE["questions"])),
            targets=(Target(platform="discord", channel="1"),),
            context=context,
            created_at=WHEN,
            policy=Policy(**policy),
        )
    )


def fields(modal: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["label"], c["component"]["custom_id"]) for c in modal["components"]]


def test_the_form_holds_a_field_per_question_and_the_note_within_discords_limits() -> None:
    asked = view(FOUR_BY_FOUR, allow_other=True, allow_notes=True)
    modal = forms.form(asked, {0: (3,), 1: (0, 1, 2, 3)}).to_dict()
    assert validate_modal(modal) is None
    assert fields(modal) == [
        *((f"Question {q}", f"ab:ask_f:t:{q}") for q in range(4)),
        ("A note for the agent", "ab:ask_f:n"),
    ]
    first, second = (c["component"] for c in modal["components"][:2])
    assert first["value"] == "Option 3 " + "x" * 900
    # Four long labels would not fit in the field: it is left empty rather than cut.
    assert "value" not in second
    assert all(len(c.get("description", "")) <= 100 for c in modal["components"])
    assert all(len(c["component"].get("placeholder", "")) <= 100 for c in modal["components"])


def test_which_questions_get_a_field() -> None:
    def shown(asked: RequestView) -> list[str]:
        return [label for label, _ in fields(forms.form(asked, {}).to_dict())]

    assert shown(view(allow_other=True)) == ["Database", "Features"]
    assert shown(view(allow_notes=True)) == ["A note for the agent"]  # the picks, with a note
    assert shown(view([DEPLOY], allow_notes=True)) == [
        "Deploy",
        "A note for the agent",
    ]  # one click answers
    assert shown(view([DEPLOY], allow_other=True)) == ["Deploy"]


def test_four_by_four_with_the_forms_button_uses_32_of_40_components() -> None:
    asked = [{**q, "options": q["options"][:4]} for q in copy.deepcopy(FOUR_BY_FOUR)]
    for q in asked:
        q["multiSelect"] = False
    layout = render(view(asked, context="context", allow_other=True, allow_notes=True))
    components: list[dict[str, Any]] = layout.to_components()  # type: ignore[no-untyped-call]
    assert count_components(components) == 32
    assert validate_message({"flags": 1 << 15, "components": components}) is None


def test_who_gets_no_form_and_why() -> None:
    # Whoever could not submit the form is refused by the broker (`Broker.answer_form`) and
    # told as for any click; what is left to Discord's form is its button and its picks.
    gated = view(allow_other=True, answerers=("discord:@1",))
    assert note(Refused(Refusal.NOT_ANSWERER, gated)) == (
        "Only these people may answer this question: <@1>. Your click was not counted."
    )
    ended = RequestView.of(
        view(allow_other=True).request.model_copy(
            update={"status": Status.CANCELLED, "ended_at": WHEN, "cancelled_by": ALICE}
        )
    )
    assert note(Refused(Refusal.ALREADY_ENDED, ended)) == "This question was cancelled by Alice."
    assert forms.why_no_form(view(), {}) == FOREIGN_CLICK
    assert forms.why_no_form(view(allow_notes=True), {0: (0,)}) == (
        "Please answer **Features** first; then add your note."
    )
    assert forms.why_no_form(view(allow_notes=True), {0: (0,), 1: (1,)}) is None


def test_a_refusal_names_each_field_in_the_forms_order() -> None:
    asked = view(allow_other=True, allow_notes=True)
    refused = Refused(
        Refusal.BAD_TEXT,
        asked,
        ("Features",),
        problems={NOTE: "Please keep it to 2000 characters (this is 2345).", 0: "Too *bold*"},
    )
    assert note(refused) == (
        "Nothing was recorded:\n"
        "- **Database**: Too \\*bold\\*\n"
        "- **A note for the agent**: Please keep it to 2000 characters (this is 2345).\n"
        'Please answer "Features" before submitting.'
    )


def test_long_words_and_many_notes_fit_the_final_message() -> None:
    asked = parse_questions(copy.deepcopy(FOUR_BY_FOUR))
    answers = {q.header: "w" * 2000 for q in asked}
    voters = [Person(platform="discord", id=str(i), name=f"p{i}" * 20) for i in range(50)]
    votes = tuple(
        Vote(person=p, answers=answers, at=WHEN, notes={asked[0].header: "n" * 2000})
        for p in voters
    )
    request = Request(
        request_id="ask_f",
        questions=asked,
        targets=(Target(platform="discord", channel="1"),),
        context="c" * 500,
        created_at=WHEN,
        status=Status.ANSWERED,
        ended_at=WHEN,
        answers=answers,
        answered_by=voters[-1],
        policy=Policy(quorum=50, allow_other=True, allow_notes=True),
        votes=votes,
    )
    layout = render(RequestView.of(request))
    components: list[dict[str, Any]] = layout.to_components()  # type: ignore[no-untyped-call]
    assert validate_message({"flags": 1 << 15, "components": components}) is None
    texts = [
        p.component["content"] for p in walk(components) if p.component["type"] == TEXT_DISPLAY
    ]
    assert "\n📝 p0p0" in texts[1]
